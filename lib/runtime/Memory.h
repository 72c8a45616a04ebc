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
#include "ir/Type.h"

namespace tl {

struct Buffer {
  std::string name;            // the pointer parameter
  DType dtype = DType::F32;
  Shape shape;
  bool output = false;
  uint64_t base = 0;           // virtual address of element 0
  std::vector<uint8_t> bytes;  // numel * dtypeBytes(dtype)

  int64_t numel() const;
  uint64_t end() const { return base + bytes.size(); }
  // Element i as a double / int64 (f16 and bf16 decoded). No bounds check: callers check.
  double getF(int64_t i) const;
  int64_t getI(int64_t i) const;
  void setF(int64_t i, double v);  // rounds to the buffer's dtype
  void setI(int64_t i, int64_t v);
};

class Memory {
 public:
  static constexpr uint64_t kBaseAddress = 0x10000000;  // first buffer's address
  static constexpr uint64_t kAlignment = 256;

  // Allocates and fills one buffer per BufferSpec (deterministic: same seed, same data, on every
  // stage and machine). Throws std::runtime_error for unreadable .npy files or bad shapes.
  static Memory fromLaunch(const LaunchConfig& launch);

  Buffer& add(std::string name, DType dtype, Shape shape, bool output);
  std::vector<Buffer>& buffers() { return buffers_; }
  const std::vector<Buffer>& buffers() const { return buffers_; }
  Buffer* find(const std::string& name);
  const Buffer* find(const std::string& name) const;

  // The buffer containing [addr, addr + size), or nullptr.
  Buffer* resolve(uint64_t addr, uint64_t size);
  // The buffer whose range is nearest to addr (for error messages), or nullptr when empty.
  const Buffer* nearest(uint64_t addr) const;

 private:
  std::vector<Buffer> buffers_;
  uint64_t next_ = kBaseAddress;
};

// Conversions between f32 and the 16-bit float formats (round to nearest even).
uint16_t floatToHalf(float f);
float halfToFloat(uint16_t h);
uint16_t floatToBf16(float f);
float bf16ToFloat(uint16_t h);
// Rounds v to what `dtype` can hold (f16/bf16/f32 rounding; ints truncate toward zero).
double roundToDType(double v, DType dtype);

// .npy files (version 1.0, little-endian, C order): f32, f16, i32, i64, bool; bf16 is stored
// as '<u2' raw bits with a note in the header comment, since numpy has no bf16.
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
Comparison compareBuffers(const Buffer& reference, const Buffer& got);

}  // namespace tl
