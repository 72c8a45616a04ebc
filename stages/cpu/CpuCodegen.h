// tl-cpu's code generator: block IR -> an LLVM module for the host CPU (CpuCodegen.cpp), and
// the host target it is compiled for.
//
// Expects: block IR that passes the verifier (tl-cpu runs it after blockPipeline()).
// Guarantees: one function tl_cpu_program with CpuAbi.h's signature, computing one program of
// the grid with tl-block's element semantics (stages/block/BlockInterpreter.cpp), except:
//   - float sums along a row are added in vector-width partial sums (like tl-block's, another
//     order than tl-scalar's: equal within rounding);
//   - with CpuTarget::vectorMath, exp / log / sin / cos / pow and their kin on whole vectors
//     call glibc's libmvec (at most 4 ulp from libm's float functions, which tl-scalar calls);
//   - dot adds each product with an FMA (one rounding per term, as the GPU's FMA path): within
//     markFmaDots' tolerance (runtime/Memory.h) of tl-scalar;
//   - two elements of one store that write one address are not reported (tl-block does):
//     the last one in row-major order wins, as on most GPUs.
// Every tile is an array in the caller's scratch memory at a fixed offset; every op on a tile
// is a loop over LLVM vectors of the target's width (CpuTarget::vectorBytes / 4 lanes; fewer for
// a smaller tile); scalars are SSA values. Ops it cannot compile throw RuntimeError at the op.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ir/IR.h"

namespace llvm {
class LLVMContext;
class Module;
}  // namespace llvm

namespace tl::cpu {

// The CPU the code is for: the host, or a narrower ISA of it (--isa).
struct CpuTarget {
  std::string cpu;          // LLVM's name for it ("skylake-avx512", "znver3", ...)
  std::string features;     // LLVM's feature string for it ("+avx2,+fma,...")
  std::string isa;          // the widest vector ISA used: "avx512", "avx2" or "sse4.2"
  int vectorBytes = 16;     // bytes per vector register of that ISA: 64, 32 or 16
  bool vectorMath = false;  // libmvec was found: math on vectors calls it
  std::string str() const;  // "avx2 (znver3), 8 x f32 per vector, libmvec"
};

// The host CPU, or with `isa` ("avx512", "avx2", "sse4.2") a narrower ISA it supports. Throws
// std::invalid_argument for an unknown ISA or one the host lacks.
CpuTarget hostTarget(const std::string& isa = "");

struct CodegenOptions {
  // Stores also set a byte per element in the shadow memory (CpuContext::shadowDelta), so an
  // output element no program wrote is reported; off for timing runs.
  bool trackStores = true;
};

struct CpuModule {
  std::unique_ptr<llvm::LLVMContext> context;
  std::unique_ptr<llvm::Module> module;
  int64_t scratchBytes = 0;     // per thread: every tile of one program
  std::vector<const Op*> ops;   // the ops helpers report on (CpuAbi.h's `op` index)
  bool prints = false;          // has device_print
};

// The scratch memory one program may use (a resource limit: more is a RuntimeError at the
// kernel naming the largest tiles).
inline constexpr int64_t kMaxScratchBytes = int64_t(1) << 30;

CpuModule generateModule(const Function& fn, const CpuTarget& target, const CodegenOptions& opts = {});

}  // namespace tl::cpu
