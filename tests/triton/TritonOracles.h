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

#include <string>
#include <vector>

#include "OracleSupport.h"

namespace tl::triton_tests {

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

}  // namespace tl::triton_tests
