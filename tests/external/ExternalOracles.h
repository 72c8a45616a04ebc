// Independent double-precision oracles for the kernels of tests/external.
//
// Each oracle is written from what the kernel is documented to compute (the tutorial's or the
// library's math: "softmax is exp(x - max) over its sum", "RMSNorm is x / sqrt(mean(x^2) + eps)
// * w"), never from tilelab's output, and reads every size, stride and scalar from the launch,
// so it follows `--set` overrides. Where the kernel rounds an intermediate to a narrower dtype
// (p.to(tl.float16) in attention, f_row.to(g.dtype) in GEGLU) the oracle rounds there too.
// compute() gets a Memory freshly filled from the launch and returns the full expected contents
// of every output buffer; it throws std::runtime_error naming a missing parameter or buffer.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "frontend/Launch.h"
#include "runtime/Memory.h"

namespace tl::external {

using OracleResult = std::map<std::string, std::vector<double>>;

struct ExternalOracle {
  std::string stem;     // the .tl file's stem
  std::string summary;  // the math in one line
  std::function<OracleResult(const Memory& inputs, const LaunchConfig& launch)> compute;
};

// Every oracle; findOracle(stem) is nullptr when a kernel has none.
const std::vector<ExternalOracle>& oracles();
const ExternalOracle* findOracle(const std::string& stem);

// Philox-4x32-10 (Salmon et al., SC'11) and Triton's tl.rand(seed, offset) built on it (key =
// the seed's two 32-bit halves, counter = (offset, 0, 0, 0), the first word as int32 mapped to
// [0, 1) in f32 as triton/language/random.py's uint_to_uniform_float does).
std::array<uint32_t, 4> philox4x32x10(std::array<uint32_t, 4> counter, std::array<uint32_t, 2> key);
float tritonRand(uint64_t seed, uint32_t offset);

}  // namespace tl::external
