// Launch descriptions: what a kernel runs with when nobody gives it anything.
//
// A kernel file declares its default launch with a `@launch(...)` decorator above `@jit`
// (docs/language.md). Its keywords are evaluated in order; each defines a name later keywords
// may use; keywords naming a kernel parameter bind it; `grid` and `num_warps` are special:
//
//   @launch(M=1823, N=781, stride=N, BLOCK_N=next_pow2(N), grid=(M,), num_warps=4,
//           x_ptr=randn((M, N), seed=1), out_ptr=zeros((M, N), output=True))
//
// A keyword holding a buffer that binds no parameter is a buffer of the launch too when a
// `pointers(NAME, ...)` buffer names it (its address is what the kernel sees), and an error
// otherwise (it would do nothing).
//
// Overrides (`--set N=4096`) replace a keyword's expression before evaluation, so everything
// that depends on it is recomputed; `--set NAME=EXPR` may also add new names.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "ir/Diagnostics.h"
#include "ir/Type.h"

namespace tl {

// A runtime scalar argument's value.
struct ScalarValue {
  DType dtype = DType::I32;  // i32 for Python-style ints (i64 if they do not fit), f32 for floats
  int64_t i = 0;             // when isInt(dtype)
  double f = 0;              // when isFloat(dtype)
};

enum class Fill {
  Randn,    // seeded standard normal: mean a (default 0), std b (default 1)
  Uniform,  // seeded uniform in [a, b) (default [0, 1))
  Arange,   // element i holds a + i * b (defaults 0, 1)
  Full,     // every element holds a
  Zeros,    // every element 0
  File,     // read from a .npy file (`file`)
  Empty,    // allocated, not initialized (`empty`): poison bytes (0xFF); tl-thread's initcheck
            //   reports a read of an element no program wrote first (docs/executor.md)
  Pointers, // `pointers(A0, A1, ...)`: an i64 buffer whose element k is the address of the launch
            //   buffer `pointees[k]` (a Memory address on the CPU stages, the device address on the GPU)
  Values,   // `values([3, 1, 2], dtype=i32)`: element k is `values[k]`, converted to the dtype
};

struct BufferSpec {
  std::string param;   // the pointer parameter it binds
  DType dtype = DType::F32;
  Shape shape;         // any rank >= 1, any sizes (not only powers of two)
  Fill fill = Fill::Zeros;
  double a = 0, b = 1;
  uint64_t seed = 0;
  bool output = false; // an output the stages compare
  std::string file;    // for Fill::File
  std::vector<std::string> pointees;  // for Fill::Pointers: the buffers whose addresses it holds
  std::vector<ScalarValue> values;    // for Fill::Values: the elements as written (ints exact)
  Loc loc;             // where it was declared (or <command line>)
};

struct LaunchConfig {
  std::vector<std::pair<std::string, std::string>> names;  // every evaluated keyword, printable (for summaries)
  std::map<std::string, ScalarValue> scalars;   // runtime scalar parameters
  std::map<std::string, int64_t> constexprs;    // constexpr parameters
  std::map<std::string, std::string> stringConstexprs;  // constexpr parameters given a string
  std::map<std::string, double> floatConstexprs;        // constexpr parameters given a float
  std::array<int64_t, 3> grid{1, 1, 1};
  int numWarps = 4;
  int numStages = 0;                            // num_stages (0: not given): loops with a dot are
                                                // pipelined when >= 2 (ir/PipelineLoads.cpp)
  int maxRegisters = 0;                         // maxnreg (0: not given): Function::maxRegisters
  std::vector<BufferSpec> buffers;              // one per pointer parameter, then those only a pointers() names

  const BufferSpec* buffer(const std::string& param) const {
    for (const auto& b : buffers)
      if (b.param == param) return &b;
    return nullptr;
  }
};

// One `--set NAME=EXPR` from the command line; EXPR uses the launch expression language.
struct LaunchOverride {
  std::string name;
  std::string expr;
};

// Parses "NAME=EXPR"; false when there is no '=' or NAME is not an identifier.
bool parseOverride(const std::string& text, LaunchOverride& out);

}  // namespace tl
