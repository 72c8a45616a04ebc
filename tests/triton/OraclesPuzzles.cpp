// Oracles for the Triton-Puzzles solutions, kernels/triton/p*.tl (TritonOracles.h). Each one is
// the puzzle's spec: the torch one-liner it states, computed element by element in double.
#include <algorithm>
#include <cmath>
#include <limits>

#include "TritonOracles.h"

#include "runtime/FloatOps.h"

namespace tl::triton_tests {
namespace {

// Puzzles 1 and 2: z = x + 10.
OracleResult constantAdd(const Memory& mem, const Launch& l) {
  In x(mem, "x_ptr");
  Out z(mem, "z_ptr");
  for (int64_t i = 0; i < l.i("N0"); ++i) z[i] = x[i] + 10.0;
  OracleResult r;
  z.into(r);
  return r;
}

// Puzzles 3, 4, 5: z[j, i] = f(x[i], y[j]) on [N1, N0].
template <typename F>
OracleResult outer(const Memory& mem, const Launch& l, F f) {
  In x(mem, "x_ptr"), y(mem, "y_ptr");
  Out z(mem, "z_ptr");
  const int64_t n0 = l.i("N0"), n1 = l.i("N1");
  for (int64_t j = 0; j < n1; ++j)
    for (int64_t i = 0; i < n0; ++i) z[j * n0 + i] = f(x[i], y[j]);
  OracleResult r;
  z.into(r);
  return r;
}
OracleResult outerAdd(const Memory& mem, const Launch& l) {
  return outer(mem, l, [](double a, double b) { return a + b; });
}
OracleResult outerMulRelu(const Memory& mem, const Launch& l) {
  return outer(mem, l, [](double a, double b) { return std::max(a * b, 0.0); });
}

// Puzzle 6: z = relu(x * y[:, None]); dx = dL/dx for upstream dz. relu'(a) is 1 for a > 0 and
// 0 otherwise (torch's choice at 0), so dx = dz * y where x * y > 0.
OracleResult outerMulReluBackward(const Memory& mem, const Launch& l) {
  In x(mem, "x_ptr"), y(mem, "y_ptr"), dz(mem, "dz_ptr");
  Out dx(mem, "dx_ptr");
  const int64_t n0 = l.i("N0"), n1 = l.i("N1");
  for (int64_t j = 0; j < n1; ++j)
    for (int64_t i = 0; i < n0; ++i) {
      const int64_t k = j * n0 + i;
      dx[k] = x[k] * y[j] > 0 ? dz[k] * y[j] : 0.0;
    }
  OracleResult r;
  dx.into(r);
  return r;
}

// Puzzle 7: z[r] = sum_t x[r, t].
OracleResult longSum(const Memory& mem, const Launch& l) {
  In x(mem, "x_ptr");
  Out z(mem, "z_ptr");
  const int64_t n0 = l.i("N0"), t = l.i("T");
  for (int64_t r = 0; r < n0; ++r) {
    double s = 0;
    for (int64_t c = 0; c < t; ++c) s += x[r * t + c];
    z[r] = s;
  }
  OracleResult res;
  z.into(res);
  return res;
}

// Puzzle 8: z = softmax(x, dim=1) on [N0, T].
OracleResult longSoftmax(const Memory& mem, const Launch& l) {
  In x(mem, "x_ptr");
  Out z(mem, "z_ptr");
  const int64_t n0 = l.i("N0"), t = l.i("T");
  for (int64_t r = 0; r < n0; ++r) {
    std::vector<double> v(static_cast<size_t>(t));
    for (int64_t c = 0; c < t; ++c) v[static_cast<size_t>(c)] = x[r * t + c];
    softmaxInPlace(v);
    for (int64_t c = 0; c < t; ++c) z[r * t + c] = v[static_cast<size_t>(c)];
  }
  OracleResult res;
  z.into(res);
  return res;
}

// Puzzle 9: z[i] = sum_j softmax_j(q[i] * k[j]) * v[j], j < T.
OracleResult flashAttention(const Memory& mem, const Launch& l) {
  In q(mem, "q_ptr"), k(mem, "k_ptr"), v(mem, "v_ptr");
  Out z(mem, "z_ptr");
  const int64_t n0 = l.i("N0"), t = l.i("T");
  for (int64_t i = 0; i < n0; ++i) {
    std::vector<double> s(static_cast<size_t>(t));
    for (int64_t j = 0; j < t; ++j) s[static_cast<size_t>(j)] = q[i] * k[j];
    softmaxInPlace(s);
    double acc = 0;
    for (int64_t j = 0; j < t; ++j) acc += s[static_cast<size_t>(j)] * v[j];
    z[i] = acc;
  }
  OracleResult res;
  z.into(res);
  return res;
}

// Puzzle 10: z[b, i, j] = sum_{a < KH, c < KW} k[a, c] * x[b, i + a, j + c], x zero-padded on
// the bottom and right.
OracleResult conv2d(const Memory& mem, const Launch& l) {
  In x(mem, "x_ptr"), k(mem, "k_ptr");
  Out z(mem, "z_ptr");
  const int64_t n0 = l.i("N0"), h = l.i("H"), w = l.i("W"), kh = l.i("KH"), kw = l.i("KW");
  for (int64_t b = 0; b < n0; ++b)
    for (int64_t i = 0; i < h; ++i)
      for (int64_t j = 0; j < w; ++j) {
        double s = 0;
        for (int64_t a = 0; a < kh; ++a)
          for (int64_t c = 0; c < kw; ++c)
            if (i + a < h && j + c < w) s += k[a * kw + c] * x[(b * h + i + a) * w + j + c];
        z[(b * h + i) * w + j] = s;
      }
  OracleResult res;
  z.into(res);
  return res;
}

// Puzzle 11: z[n] = x[n] @ y[n] for each of N2 batches.
OracleResult batchedMatmul(const Memory& mem, const Launch& l) {
  In x(mem, "x_ptr"), y(mem, "y_ptr");
  Out z(mem, "z_ptr");
  const int64_t n0 = l.i("N0"), n1 = l.i("N1"), n2 = l.i("N2"), mid = l.i("MID");
  for (int64_t b = 0; b < n2; ++b)
    matmulInto(x, mid, y, n1, z, n1, n0, n1, mid, b * n0 * mid, b * mid * n1, b * n0 * n1);
  OracleResult res;
  z.into(res);
  return res;
}

// The `index`-th 4-bit field of a 32-bit word, counting from the least significant bits.
int64_t nibbleOf(int64_t word, int64_t index) {
  return static_cast<int64_t>((static_cast<uint32_t>(word) >> (4 * index)) & 0xFu);
}

// Puzzle 12: W[r, c] = scale[r, c / 8] * (nibble(weight[r, c / 8], c % 8) -
// nibble(offset[r], c / 8)) for c < MID (8 values per int32, groups of 8 columns), z = W @ act.
OracleResult quantMatmul(const Memory& mem, const Launch& l) {
  constexpr int64_t kPerWord = 8, kGroup = 8;
  In scale(mem, "scale_ptr"), offset(mem, "offset_ptr"), weight(mem, "weight_ptr");
  In act(mem, "activation_ptr");
  Out z(mem, "z_ptr");
  const int64_t n0 = l.i("N0"), n1 = l.i("N1"), mid = l.i("MID");
  const int64_t words = mid / kPerWord, groups = mid / kGroup;
  for (int64_t r = 0; r < n0; ++r) {
    std::vector<double> wrow(static_cast<size_t>(mid));
    for (int64_t c = 0; c < mid; ++c) {
      const int64_t q = nibbleOf(weight.integer(r * words + c / kPerWord), c % kPerWord);
      const int64_t zero = nibbleOf(offset.integer(r), c / kGroup);
      wrow[static_cast<size_t>(c)] = scale[r * groups + c / kGroup] * static_cast<double>(q - zero);
    }
    // The kernel's tl.dot of f32 tiles takes Triton's default precision, tf32: both operands
    // read as tf32 (the low 13 mantissa bits dropped), the products exact.
    auto tf32 = [](double v) { return double(truncToTf32(static_cast<float>(v))); };
    for (int64_t n = 0; n < n1; ++n) {
      double s = 0;
      for (int64_t c = 0; c < mid; ++c) s += tf32(wrow[static_cast<size_t>(c)]) * tf32(act[c * n1 + n]);
      z[r * n1 + n] = s;
    }
  }
  OracleResult res;
  z.into(res);
  return res;
}

}  // namespace

void softmaxInPlace(std::vector<double>& v, double* lse) {
  double mx = -std::numeric_limits<double>::infinity();
  for (double e : v) mx = std::max(mx, e);
  double total = 0;
  for (double& e : v) total += (e = std::exp(e - mx));
  for (double& e : v) e /= total;
  if (lse) *lse = mx + std::log(total);
}

void matmulInto(const In& a, int64_t lda, const In& b, int64_t ldb, Out& c, int64_t ldc,
                int64_t m, int64_t n, int64_t k, int64_t aOff, int64_t bOff, int64_t cOff) {
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double s = 0;
      for (int64_t p = 0; p < k; ++p) s += a[aOff + i * lda + p] * b[bOff + p * ldb + j];
      c[cOff + i * ldc + j] = s;
    }
}

const std::vector<TritonOracle>& puzzleOracles() {
  static const std::vector<TritonOracle> table = {
      {"p01_constant_add", "z = x + 10", constantAdd},
      {"p02_constant_add_block", "z = x + 10, N0 > B0", constantAdd},
      {"p03_outer_vector_add", "z[j, i] = x[i] + y[j]", outerAdd},
      {"p04_outer_vector_add_block", "z[j, i] = x[i] + y[j], 2-D grid", outerAdd},
      {"p05_fused_outer_mul", "z[j, i] = relu(x[i] * y[j])", outerMulRelu},
      {"p06_fused_outer_mul_backward", "dx = dz * y where x * y > 0", outerMulReluBackward},
      {"p07_long_sum", "z[r] = sum_t x[r, t]", longSum},
      {"p08_long_softmax", "z = softmax(x, dim=1)", longSoftmax},
      {"p09_flash_attention", "z[i] = sum_j softmax_j(q_i k_j) v_j", flashAttention},
      {"p10_conv2d", "z[b,i,j] = sum_{a,c} k[a,c] x[b,i+a,j+c], zero padded", conv2d},
      {"p11_matmul", "z[n] = x[n] @ y[n]", batchedMatmul},
      {"p12_quant_matmul", "z = (scale * (nibbles(weight) - nibbles(offset))) @ activation",
       quantMatmul},
  };
  return table;
}

const TritonOracle* findTritonOracle(const std::string& stem) {
  for (const auto* table : {&puzzleOracles(), &tutorialOracles()})
    for (const TritonOracle& o : *table)
      if (o.kernel == stem) return &o;
  return nullptr;
}

}  // namespace tl::triton_tests
