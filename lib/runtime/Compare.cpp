// Comparing a stage's output buffer against the reference (tl-scalar's) output.
//
// Tolerances per dtype (an element passes when |got - ref| <= atol + rtol * |ref|):
//   f32   atol 1e-5, rtol 1e-4   stages may reduce in another order (a tree instead of a loop);
//                                sums of thousands of elements then differ in the last bits
//   f16   atol 1e-2, rtol 1e-2   about 10 mantissa bits
//   bf16  atol 2e-2, rtol 2e-2   about 7 mantissa bits
//   fp8   e4m3 atol 2^-9, rtol 1/8 (one step of 3 mantissa bits); e5m2 atol 2^-16, rtol 1/4
//         (the smallest subnormal, and one step of 2 mantissa bits)
//   i1, i32, i64: exact
//   f32 of a kernel with a tf32 dot (ToleranceOverride::tf32Dots): atol 2e-2, rtol 2e-2: tf32 keeps
//         10 mantissa bits as f16 does, but by truncation (truncToTf32: up to one ulp, twice f16's
//         half-ulp rounding), so twice f16's tolerance
//   f32 (and f16) outputs of a kernel with a dot of f16 / bf16 or fp8 inputs (ToleranceOverride::dotScale): atol
//         at least 2^-16 (16-bit) or 2^-7 (fp8) times the reference's largest magnitude. The
//         tensor core cuts every term toward zero (sim/TensorCoreSum.h, measured on the H200;
//         an fp8 wgmma keeps 13 bits of its sum), so the error grows about linearly with K while
//         the outputs grow as sqrt(K): at K = 640 randn inputs err by up to 1.37e-4 (bf16:
//         bench/results/gpu/accum_probe_h200.txt, its last lines) and 1.2e-3 of the largest
//         output (fp8: max_abs_err against atol / 2^-7 in bench/results/gpu/wgmma_tf32_fp8_h200.txt); both margins
//         hold to K of about 16k. tl-thread computes the H200's bits exactly. A tf32x3 dot
//         (three tf32 mma per 8 k, each sum cut to 23 bits: six times the cuts per k of a
//         16-bit dot) gets 2^-14: randn inputs err by 5.4e-4 against 6.2e-3 at K = 512 and by 7.6e-3
//         against 1.5e-2 at K = 4096 (tl-thread, tests/thread/kernels/mma_dot.tl MODE=6), a
//         margin that holds to K of about 16k
//   f32 or f16 outputs of a kernel with an f16 accumulator (out_dtype=tl.float16): atol at least
//         2^-5 of the reference's largest magnitude (kF16AccumulatorScale below)
//   f32 outputs of a kernel with f32 dots or float sums, against an engine that adds them in
//         another order (markFmaDots, markReorderedSums): atol at least 2^-16 of the largest
// Special values: NaN matches only NaN; an infinity matches only the same infinity (such a
// mismatch counts as an infinite error). maxRelErr skips elements whose reference is 0.
#include <algorithm>
#include <cmath>
#include <limits>

#include "runtime/Memory.h"

namespace tl {

void toleranceFor(DType dtype, double& atol, double& rtol) {
  switch (dtype) {
    case DType::F32: atol = 1e-5; rtol = 1e-4; return;
    case DType::F16: atol = 1e-2; rtol = 1e-2; return;
    case DType::BF16: atol = 2e-2; rtol = 2e-2; return;
    case DType::F8E4M3: atol = 0x1p-9; rtol = 0.125; return;
    case DType::F8E5M2: atol = 0x1p-16; rtol = 0.25; return;
    case DType::I1:
    case DType::I32:
    case DType::I64: atol = 0; rtol = 0; return;
  }
}

// An f16 accumulator (out_dtype=tl.float16) keeps 11 bits and is rounded to f16 every 16 k on
// tensor cores, where tl-scalar rounds once per dot; the errors add up as a random walk of half
// ulps of the running sum, so relative to the largest output they grow as sqrt(K): tl-thread
// against tl-scalar (tests/thread/kernels/mma_dot.tl MODE=7, randn, 128 x 128) erred by 0.031
// at K = 64, 0.094 at 256, 0.44 at 1024 and 1.62 at 4096 (largest outputs ~33 to ~250: 9e-4 to
// 6.5e-3 of it). 2^-5 of the largest output leaves a margin of 5 at K = 4096 and holds to K of
// about 64k.
constexpr double kF16AccumulatorScale = 0x1p-5;

void markDotPrecisions(const Function& fn, ToleranceOverride& tol) {
  walk(fn.body, [&](Op& op) {
    if (op.kind != OpKind::Dot) return;
    const std::string* p = op.strAttrIf("precision");
    if (p && *p == "tf32") tol.tf32Dots = true;
    const DType in = op.operands[0]->type.dtype;
    if (in == DType::F8E4M3 || in == DType::F8E5M2) tol.dotScale = std::max(tol.dotScale, 0x1p-7);
    if (in == DType::F16 || in == DType::BF16) tol.dotScale = std::max(tol.dotScale, 0x1p-16);
    if (p && *p == "tf32x3") tol.dotScale = std::max(tol.dotScale, 0x1p-14);
    if (op.operands[2]->type.dtype == DType::F16) tol.dotScale = std::max(tol.dotScale, kF16AccumulatorScale);
  });
}

// An engine whose f32 dots add each product with an FMA (tl-cpu's micro-kernel) rounds every
// partial sum differently from tl-scalar's separately rounded products; the differences walk
// like sqrt(K) half-ulps of the running sum. Measured (tl-cpu against tl-block, randn, 1024^3):
// 6.1e-5 at outputs up to ~150, 4e-7 of the largest; 2^-16 of it covers K to ~64k with margin.
constexpr double kFmaDotScale = 0x1p-16;

void markFmaDots(const Function& fn, ToleranceOverride& tol) {
  walk(fn.body, [&](Op& op) {
    if (op.kind == OpKind::Dot) tol.dotScale = std::max(tol.dotScale, kFmaDotScale);
  });
}

// Two orders of a float sum of n terms of magnitude up to L differ by about sqrt(n) ulps of L
// (a random walk of roundings): at n = 3787 randn terms (labs/04-reduction/wrong/floor_chunks.tl,
// tl-cpu on AVX2 against tl-block) 5.3e-5 at outputs up to ~180, 3e-7 of the largest. 2^-16 of
// the largest output leaves a margin of 50 there and holds to n of about 65k terms a sum.
constexpr double kReorderedSumScale = 0x1p-16;

void markReorderedSums(const Function& fn, ToleranceOverride& tol) {
  walk(fn.body, [&](Op& op) {
    if (op.kind == OpKind::Reduce && isFloat(op.operand(0)->type.dtype) && op.strAttr("kind") == "sum")
      tol.dotScale = std::max(tol.dotScale, kReorderedSumScale);
  });
}

Comparison compareBuffers(const Buffer& reference, const Buffer& got, const ToleranceOverride& tol) {
  Comparison c;
  c.name = reference.name;
  toleranceFor(reference.dtype, c.atol, c.rtol);
  if (reference.dtype == DType::F32 && tol.tf32Dots) c.atol = c.rtol = 2e-2;  // truncated tf32 (above)
  if ((reference.dtype == DType::F32 || reference.dtype == DType::F16) && tol.dotScale > 0) {  // tensor-core accumulation (above)
    double largest = 0;
    for (int64_t i = 0; i < reference.numel(); ++i)
      if (std::isfinite(reference.getF(i))) largest = std::max(largest, std::fabs(reference.getF(i)));
    c.atol = std::max(c.atol, tol.dotScale * largest);
  }
  if (tol.atol >= 0) c.atol = tol.atol;
  if (tol.rtol >= 0) c.rtol = tol.rtol;
  if (reference.dtype != got.dtype) {
    c.reason = std::string("dtype differs: reference is ") + dtypeName(reference.dtype) + ", got " + dtypeName(got.dtype);
    return c;
  }
  if (reference.shape != got.shape || reference.bytes.size() != got.bytes.size()) {
    c.reason = "shape differs: reference is (" + reference.describe() + "), got (" + got.describe() + ")";
    return c;
  }

  const int64_t n = reference.numel();
  const bool exact = isInt(reference.dtype);
  double worstExcess = -1;  // how far the worst mismatch is beyond its tolerance
  double worstErr = -1;     // the largest error (used for worstIndex when all pass)
  int64_t worstErrIndex = -1;
  for (int64_t i = 0; i < n; ++i) {
    double err, ref;
    bool ok;
    if (exact) {
      int64_t r = reference.getI(i), g = got.getI(i);
      ref = static_cast<double>(r);
      err = std::fabs(static_cast<double>(g) - static_cast<double>(r));
      ok = r == g;
    } else {
      ref = reference.getF(i);
      double g = got.getF(i);
      if (std::isnan(ref) || std::isnan(g)) {
        ok = std::isnan(ref) && std::isnan(g);
        err = ok ? 0 : std::numeric_limits<double>::infinity();
      } else if (std::isinf(ref) || std::isinf(g)) {
        ok = ref == g;
        err = ok ? 0 : std::numeric_limits<double>::infinity();
      } else {
        err = std::fabs(g - ref);
        ok = err <= c.atol + c.rtol * std::fabs(ref);
      }
    }
    c.maxAbsErr = std::max(c.maxAbsErr, err);
    if (ref != 0 && std::isfinite(ref)) c.maxRelErr = std::max(c.maxRelErr, err / std::fabs(ref));
    else if (std::isinf(err)) c.maxRelErr = err;  // a NaN or infinity mismatch
    if (err > worstErr) {
      worstErr = err;
      worstErrIndex = i;
    }
    if (!ok) {
      ++c.mismatches;
      double excess = err - (c.atol + c.rtol * std::fabs(ref));
      if (std::isnan(excess)) excess = std::numeric_limits<double>::infinity();
      if (excess > worstExcess) {
        worstExcess = excess;
        c.worstIndex = i;
      }
    }
  }
  if (c.mismatches == 0) c.worstIndex = worstErrIndex;
  c.pass = c.mismatches == 0;
  return c;
}

}  // namespace tl
