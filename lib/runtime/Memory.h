// Device memory as the CPU stages see it: one Buffer per pointer parameter, each placed at a
// 256-byte-aligned virtual address (as cudaMalloc aligns), so pointer values in the IR are plain
// 64-bit addresses — the same numbers the simulator later turns into sectors and cache lines.
//
// A load or store resolves an address to its buffer; an address outside every buffer is an
// out-of-bounds access and the interpreters stop with a located RuntimeError. Nothing is ever
// read or written outside a buffer's storage.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "frontend/Launch.h"
#include "ir/IR.h"
#include "ir/Type.h"
#include "runtime/Fp8.h"  // the fp8 conversions (floatToE4M3, ...)

namespace tl {

struct Buffer {
  std::string name;            // the pointer parameter
  DType dtype = DType::F32;
  Shape shape;
  bool output = false;
  uint64_t base = 0;           // virtual address of element 0
  std::vector<uint8_t> bytes;  // numel * dtypeBytes(dtype)
  // Outputs only (empty for inputs): stored[i] != 0 once a store wrote element i. A shadow like
  // compute-sanitizer's initcheck: every engine calls markStored() for every element it stores,
  // so an output element no program wrote is reported instead of passing as its initial value.
  std::vector<uint8_t> stored;
  // A pointer table (`pointers(A0, A1)` in @launch, an i64 buffer): element k holds the address
  // of the buffer named pointees[k]. The CPU stages see Memory's addresses; the GPU runtime
  // writes the device addresses instead (stages/ptx/CudaRuntime.h). Empty for other buffers.
  std::vector<std::string> pointees;

  int64_t numel() const;
  uint64_t end() const { return base + bytes.size(); }
  // Element i as a double / int64 (f16, bf16 and fp8 decoded). No bounds check: callers check.
  double getF(int64_t i) const;
  int64_t getI(int64_t i) const;
  void setF(int64_t i, double v);  // rounds to the buffer's dtype
  void setI(int64_t i, int64_t v);
  // Records a store to the element at `byteOffset` from base (no-op for inputs).
  void markStored(uint64_t byteOffset) {
    if (!stored.empty()) stored[byteOffset / static_cast<uint64_t>(dtypeBytes(dtype))] = 1;
  }
  // "256 x 781 x f32", for messages.
  std::string describe() const;
};

class Memory {
 public:
  static constexpr uint64_t kBaseAddress = 0x10000000;  // first buffer's address
  static constexpr uint64_t kAlignment = 256;
  // Unmapped bytes left after every buffer (like a guard page), so that an access a few
  // elements past one buffer lands in no buffer instead of silently in the next one.
  static constexpr uint64_t kGuardBytes = 4096;
  // Largest buffer add() accepts (a CPU interpreter's memory is the host's).
  static constexpr uint64_t kMaxBufferBytes = uint64_t(1) << 30;

  // Allocates and fills one buffer per BufferSpec, in order (deterministic: same seed, same data,
  // on every stage and machine; the fill algorithms are written down in Memory.cpp); pointer
  // tables are filled last, with the addresses of the buffers they name. Throws
  // std::runtime_error for unreadable .npy files, a file whose dtype differs from the spec's
  // (or whose shape differs from a non-empty spec shape), bad shapes, or a pointer table naming
  // a buffer the launch does not have.
  static Memory fromLaunch(const LaunchConfig& launch);

  // Allocates a zeroed buffer after the previous one. Throws std::runtime_error for a negative
  // dimension or a buffer over kMaxBufferBytes. The reference is valid until the next add().
  Buffer& add(std::string name, DType dtype, Shape shape, bool output);
  std::vector<Buffer>& buffers() { return buffers_; }
  const std::vector<Buffer>& buffers() const { return buffers_; }
  Buffer* find(const std::string& name);
  const Buffer* find(const std::string& name) const;

  // The buffer containing [addr, addr + size), or nullptr.
  Buffer* resolve(uint64_t addr, uint64_t size);
  // The buffer whose range is nearest to addr (for error messages), or nullptr when empty.
  const Buffer* nearest(uint64_t addr) const;
  // Where a `size`-byte access at `addr` falls, for out-of-bounds messages: "address 0x10000f40
  // is 16 bytes past the end of buffer 'x_ptr' (781 x f32)" (or before the start, or straddling
  // the end). Every engine reports out-of-bounds accesses with this text.
  std::string describeAddress(uint64_t addr, uint64_t size) const;

 private:
  std::vector<Buffer> buffers_;
  uint64_t next_ = kBaseAddress;
};

// What to try after an out-of-bounds load or store, appended to every engine's message: an
// unmasked access is told to add a mask, a masked one that its mask lets the element through,
// one through a block pointer (`unchecked`: its op's "unchecked" attribute, SemaBlockPtr.cpp)
// which dimensions its boundary_check leaves out.
std::string outOfBoundsHint(bool store, bool masked, const std::string* unchecked = nullptr);

// The output elements of `b` no store wrote (count 0 for inputs).
struct Unwritten {
  int64_t count = 0;
  int64_t first = -1;  // flat index of the first one
};
Unwritten unwrittenElements(const Buffer& b);
// "[3, 17]": a flat element index as the buffer's multi-dimensional index.
std::string formatIndex(const Shape& shape, int64_t flat);

// Conversions between f32 and the 16-bit float formats (round to nearest even).
uint16_t floatToHalf(float f);
float halfToFloat(uint16_t h);
uint16_t floatToBf16(float f);
float bf16ToFloat(uint16_t h);
// Rounds v to what `dtype` can hold: floats round to nearest even (f16/bf16/fp8 via f32; fp8
// saturates finite overflow and inf to its largest finite value, runtime/Fp8.h); i32/i64
// truncate toward zero and saturate (NaN -> 0); i1 is `v != 0`.
double roundToDType(double v, DType dtype);
// Float -> integer dtype as an int64: truncates toward zero and saturates at the dtype's range
// (NaN -> 0); i1 is `v != 0`. (Unlike roundToDType, exact at the i64 limits.)
int64_t floatToInt(double v, DType dtype);

// .npy files (version 1.0, little-endian, C order): f32, f16, i32, i64, bool; bf16 is stored
// as '<u2' raw bits with a `# tilelab: bfloat16` comment after the header dict, since numpy has
// no bf16 (numpy itself reads such a file as uint16); the fp8 dtypes likewise as '|u1' bit
// patterns with `# tilelab: float8e4nv` / `# tilelab: float8e5` (numpy reads them as uint8;
// `arr.view(ml_dtypes.float8_e4m3fn)` / `float8_e5m2` gives the values). A 0-d array reads as
// shape (1,).
void writeNpy(const std::string& path, const Buffer& buf);
Buffer readNpy(const std::string& path);  // throws std::runtime_error with the reason

// Comparison of an output against the reference, with the tolerance used for its dtype.
struct Comparison {
  std::string name;
  bool pass = false;
  double maxAbsErr = 0, maxRelErr = 0;
  double atol = 0, rtol = 0;
  int64_t worstIndex = -1;   // element with the largest error beyond tolerance (or largest error)
  int64_t mismatches = 0;    // elements outside |got-ref| <= atol + rtol*|ref|
  std::string reason;        // set when shapes/dtypes differ
};
void toleranceFor(DType dtype, double& atol, double& rtol);
// A tolerance given on the command line (--atol / --rtol); a negative field keeps the dtype's.
// Long float reductions (a 4096-long dot) legitimately differ by more than the defaults where
// the result is near zero: the user says how much more they accept.
struct ToleranceOverride {
  double atol = -1, rtol = -1;
  // The kernel has a dot in tf32 precision (usesTf32Dots): its f32 results are made from inputs
  // with 10-bit mantissas truncated (an input one f32 ulp off in another stage may fall to the
  // next tf32 value), so f32 outputs are compared at atol = rtol = 2e-2 (Compare.cpp).
  bool tf32Dots = false;
  // The kernel has tensor-core dots of 16-bit or fp8 inputs: the tensor core cuts its terms
  // toward zero (sim/TensorCoreSum.h; an fp8 wgmma keeps 13 bits), an error that grows with K,
  // so f32 outputs also pass within dotScale times the output's largest magnitude: 2^-16 for
  // f16 / bf16 inputs, 2^-14 for tf32x3 dots, 2^-7 for fp8 (Compare.cpp).
  double dotScale = 0;
};
// Sets tol.tf32Dots when `fn` has a dot with precision "tf32", and tol.dotScale to the largest
// of its dots' inputs' scales (in any region).
void markDotPrecisions(const Function& fn, ToleranceOverride& tol);
// For an engine whose dots use FMAs (tl-cpu): dotScale of at least 2^-16 when `fn` has a dot.
void markFmaDots(const Function& fn, ToleranceOverride& tol);
// For an engine that adds a float sum in another order than tl-scalar (tl-cpu: in partial sums
// as wide as the host's vectors, so its bits depend on the ISA; the GPU: a tree over lanes and
// warps): dotScale of at least 2^-16 when `fn` has a float `reduce` sum. A sum that cancels has
// an error of its terms' size, not of its own: rtol alone fails such an output.
void markReorderedSums(const Function& fn, ToleranceOverride& tol);
Comparison compareBuffers(const Buffer& reference, const Buffer& got, const ToleranceOverride& tol = {});

}  // namespace tl
