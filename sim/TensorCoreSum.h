// How the H200's tensor cores add up a dot's products: the executor's mma and wgmma call these,
// so that tl-thread computes the GPU's bits, not an exact sum rounded once.
//
// Measured, not assumed: bench/gpu/accum_probe_h200.sh ran tilelab's own ring_dot kernel on the
// H200 over inputs designed to expose an accumulator (bench/gpu/accum_probe.py: wide exponent
// spreads, one large term among small ones, cancellation, sparse rows, terms one ulp apart), and
// this model reproduces every bit of every output (bench/results/gpu/accum_probe_h200.txt;
// tests/thread/tensor_core_sum_test.cpp replays a slice of those outputs). It is the structure
// Fasi et al. found for earlier tensor cores ("Numerical behavior of NVIDIA tensor cores", 2021),
// with Hopper's widths:
//
//   one step adds n products a_k b_k to an accumulator c. Each product's exponent is taken
//   unnormalized, e(a) + e(b) (e(x) = floor(log2 |x|), so a product's significand lies in
//   [1, 4)); c's is e(c). With E the largest exponent among the nonzero terms, every term is
//   cut toward zero to a multiple of 2^(E - F), the cut terms are summed exactly, and the sum
//   is cut toward zero to R bits after its leading one.
//
//   | instruction (H200 SASS)                                  | n  | F  | R  |
//   |----------------------------------------------------------|----|----|----|
//   | f16 / bf16 mma.sync m16n8k16, wgmma k16 (HMMA / HGMMA)    | 16 | 25 | 23 |
//   | tf32 mma.sync m16n8k8, wgmma k8 (HMMA / HGMMA .TF32)       |  8 | 25 | 23 |
//   | fp8 wgmma k32 (QGMMA)                                     | 32 | 13 | 13 |
//   | fp8 mma.sync m16n8k32 on sm_90: ptxas makes it two f16    |    |    |    |
//   |   HMMAs on a zero accumulator, over k % 4 in {0, 1} and    |    |    |    |
//   |   then {2, 3}, and adds that to c with an f32 add (RN)     | 16 | 25 | 23 |
//
// So an fp8 wgmma keeps only 13 bits of its f32 accumulator (the "about 14 bits" of DeepSeek-V3's
// report): an fp8 matmul's error grows with K, which is why Triton has max_num_imprecise_acc and
// DeepSeek promote partial sums to f32 every 128 k. A NaN or infinity among the terms, or a sum past f32's range,
// falls back to the plain double sum rounded to f32 (the probe never produced one).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>

namespace tl::sim {

struct TensorCoreAdder {
  int fracBits;    // F: the bits kept below the largest exponent when the terms are aligned
  int resultBits;  // R: the bits kept after the sum's leading one
};

constexpr TensorCoreAdder kHmmaAdder{25, 23};  // f16 / bf16 / tf32, mma.sync and wgmma
constexpr TensorCoreAdder kQgmmaAdder{13, 13};  // fp8 wgmma

// floor(log2 |x|) of a nonzero double that is normal, as every f32 and every product of two
// operands is; and 2^e for e in [-1022, 1023]. By the bits: libm's ilogb and ldexp cost the
// executor more than the rest of an mma.
inline int exponentOf(double x) {
  uint64_t bits;
  std::memcpy(&bits, &x, sizeof bits);
  return static_cast<int>((bits >> 52) & 0x7ff) - 1023;
}
inline double pow2(int e) {
  const uint64_t bits = static_cast<uint64_t>(e + 1023) << 52;
  double x;
  std::memcpy(&x, &bits, sizeof x);
  return x;
}

// One tensor-core step's aligned sum: c + sum over k < n of a[k * aStride] * b[k * bStride],
// every term cut toward zero to a multiple of 2^-shift (shift = F - E), summed exactly in `sum`;
// `plain` where the step falls back to the plain sum (a NaN or infinity among the terms, more than
// 32 terms), `empty` where there is no nonzero term.
struct AlignedSum {
  int64_t sum = 0;
  int shift = 0;
  bool plain = false;  // NaN / infinity / too many terms: the plain double sum applies
  bool empty = false;  // no nonzero term
};
inline AlignedSum alignedSum(const TensorCoreAdder& adder, float c, const double* a, int aStride, const double* b, int bStride,
                             int n) {
  constexpr int kMaxTerms = 32;  // the widest step: fp8's k32
  AlignedSum r;
  double prod[kMaxTerms];
  int expo[kMaxTerms];
  int emax = c != 0 && std::isfinite(c) ? exponentOf(c) : INT32_MIN;
  r.plain = !std::isfinite(c) || n > kMaxTerms;
  for (int k = 0; k < n && !r.plain; ++k) {
    const double x = a[k * aStride], y = b[k * bStride];
    prod[k] = x * y;
    if (!std::isfinite(x) || !std::isfinite(y)) r.plain = true;
    expo[k] = prod[k] != 0 && !r.plain ? exponentOf(x) + exponentOf(y) : INT32_MIN;
    emax = std::max(emax, expo[k]);
  }
  if (r.plain) return r;
  if (emax == INT32_MIN) {
    r.empty = true;
    return r;
  }
  // Terms in units of 2^(emax - F): each below 2^(F + 2) in magnitude, so the sum of n + 1 of
  // them fits an int64 exactly. The conversion to int64 cuts toward zero.
  r.shift = adder.fracBits - emax;
  const double unitsPer = pow2(r.shift);  // emax is within f32's products' range, so is shift
  r.sum = static_cast<int64_t>(double(c) * unitsPer);
  for (int k = 0; k < n; ++k)
    if (expo[k] != INT32_MIN) r.sum += static_cast<int64_t>(prod[k] * unitsPer);
  return r;
}

inline double plainSum(double c, const double* a, int aStride, const double* b, int bStride, int n) {
  double s = c;  // NaN and infinities as IEEE has them
  for (int k = 0; k < n; ++k) s += a[k * aStride] * b[k * bStride];
  return s;
}

// c + sum over k < n of a[k * aStride] * b[k * bStride], as one tensor-core step adds them. The
// inputs are the operands' values (products exact in double: f16, bf16, tf32, fp8).
inline float tensorCoreStep(const TensorCoreAdder& adder, float c, const double* a, int aStride, const double* b,
                            int bStride, int n) {
  const AlignedSum r = alignedSum(adder, c, a, aStride, b, bStride, n);
  if (r.plain) return static_cast<float>(plainSum(c, a, aStride, b, bStride, n));
  if (r.empty) return c + 0.0f;  // no nonzero term: +0 unless c is -0 and every product -0
  if (r.sum == 0) return 0.0f;
  // Cut to R bits after the leading one (toward zero), then scale back.
  const uint64_t mag = static_cast<uint64_t>(std::llabs(r.sum));
  const int lead = 63 - __builtin_clzll(mag);
  const uint64_t kept = lead > adder.resultBits ? mag >> (lead - adder.resultBits) << (lead - adder.resultBits) : mag;
  const double value = double(kept) * pow2(-r.shift) * (r.sum < 0 ? -1.0 : 1.0);
  if (!(std::fabs(value) <= double(3.4028234663852886e38))) return static_cast<float>(plainSum(c, a, aStride, b, bStride, n));
  return static_cast<float>(value);  // exact (R + 1 <= 24 bits) unless below f32's normal range, where it rounds
}

// The same step with an f16 accumulator (mma.sync ...f16.f16.f16.f16, wgmma ...f16.f16.f16): the terms aligned and
// summed as above, and the sum rounded once to f16, to nearest even (subnormals kept; past
// 65504 it overflows to infinity). The rounding follows Khattak and Mikaitis' model of H100
// tensor cores with f16 outputs (arXiv:2512.07004: round to nearest for f16, toward zero for f32
// outputs); the alignment width is the one measured for f32 outputs (kHmmaAdder). Checked bit
// for bit on the H200 by bench/gpu/f16acc_h200.sh.
inline float tensorCoreStepToF16(const TensorCoreAdder& adder, float c, const double* a, int aStride, const double* b,
                                 int bStride, int n) {
  const AlignedSum r = alignedSum(adder, c, a, aStride, b, bStride, n);
  auto toHalf = [](double v) {  // v's nearest f16 (ties to even), as a float
    const double av = std::fabs(v);
    if (!(av < 65520.0)) return std::isnan(v) ? static_cast<float>(v) : std::copysign(INFINITY, static_cast<float>(v));
    const int e = av == 0 ? -25 : std::max(exponentOf(av), -14);
    const double q = pow2(e - 10);  // the f16 spacing at v (2^-24 below the normal range)
    return static_cast<float>(std::nearbyint(v / q) * q);
  };
  if (r.plain) return toHalf(plainSum(c, a, aStride, b, bStride, n));
  if (r.empty) return c + 0.0f;
  if (r.sum == 0) return 0.0f;
  // The exact aligned sum as a double: at most F + 2 + log2(n + 1) <= 33 bits, exact.
  return toHalf(double(r.sum) * pow2(-r.shift));
}

}  // namespace tl::sim
