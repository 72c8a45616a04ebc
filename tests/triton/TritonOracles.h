// Oracles for kernels/triton/*.tl: an independent double-precision reference per kernel.
//
// Each oracle is written from the problem statement (the puzzle's spec, the tutorial's math:
// "softmax is exp(x - max) over its sum", "dX of LayerNorm is ..."), never from the kernel, so a
// wrong kernel or a wrong stage shows up as a mismatch. It reads sizes from the launch, so it
// follows `--set` overrides. Expects a Memory freshly filled from the launch; returns the full
// expected contents of every buffer the kernel writes (OracleResult, tests/e2e/Oracles.h).
// Every oracle is here, for blocked kernels too: when the front end accepts one, its test has
// its reference already.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "../e2e/OracleSupport.h"

namespace tl::triton_tests {

using e2e::bufferNamed;
using e2e::In;
using e2e::Launch;
using e2e::OracleResult;
using e2e::Out;

struct TritonOracle {
  std::string kernel;   // the file's stem: "p01_constant_add" for kernels/triton/p01_constant_add.tl
  std::string summary;  // the math in one line
  OracleResult (*compute)(const Memory& inputs, const Launch& launch);
};

// The puzzles' oracles (OraclesPuzzles.cpp) and the tutorials' (OraclesTutorials.cpp).
const std::vector<TritonOracle>& puzzleOracles();
const std::vector<TritonOracle>& tutorialOracles();
// The oracle for kernels/triton/<stem>.tl, or nullptr.
const TritonOracle* findTritonOracle(const std::string& stem);

// Shared math.
// softmax of v in place (max-subtracted); log-sum-exp returned through `lse` when not null.
void softmaxInPlace(std::vector<double>& v, double* lse = nullptr);
// C[m, n] = sum_k A(m, k) * B(k, n) for row-major buffers with the given leading dimensions.
void matmulInto(const In& a, int64_t lda, const In& b, int64_t ldb, Out& c, int64_t ldc,
                int64_t m, int64_t n, int64_t k, int64_t aOff = 0, int64_t bOff = 0,
                int64_t cOff = 0);

// Philox-4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3", SC'11): ten
// rounds of two 32x32->64 multiplies (0xD2511F53, 0xCD9E8D57) with the key bumped by
// (0x9E3779B9, 0xBB67AE85) after each round.
std::array<uint32_t, 4> philox4x32x10(std::array<uint32_t, 4> counter, std::array<uint32_t, 2> key);
// Triton's tl.rand(seed, offset): Philox with key (seed's low, high 32 bits) and counter
// (offset, 0, 0, 0); the first word x, read as int32, maps to [0, 1) as
// (x < 0 ? -x - 1 : x) * 4.6566127342e-10 in f32 (uint_to_uniform_float).
double tritonRand(uint64_t seed, uint32_t offset);
// The nearest float8e4nv (OCP FP8 E4M3: bias 7, 3 mantissa bits, subnormals of 2^-9, no
// infinities, largest finite 448) to v, ties to even, saturating at +-448 (a "satfinite"
// round-to-nearest conversion: an infinity also becomes +-448).
double roundToE4M3(double v);

}  // namespace tl::triton_tests
