// The executor's tensor-core addition (sim/TensorCoreSum.h) against the H200's own bits: a
// slice of what bench/gpu/accum_probe_h200.sh recorded (tests/thread/data/accum_h200/: rows
// 0-63 of A, rows 0-31 of B and C[0:64, 0:32] of the K = 256, seed 2 probe, which the model was
// not fitted on), run through tests/thread/kernels/ring_dot.tl (BT = 1) on the executor, with
// wgmma (the sm_90a outputs: HGMMA, QGMMA) and with mma.sync (the sm_90 outputs), for f16,
// bf16, e4m3, e5m2 and f32 (tf32 dots: the file imports triton). Every output must equal the GPU's bit for bit; and the exact sum rounded
// once (the executor's old rule) must not, so the test sees the model. Also tensorCoreStep's
// rules on hand-made cases, and max_num_imprecise_acc.
#include <gtest/gtest.h>

#include <cstring>

#include "rank3_util.h"
#include "runtime/FloatOps.h"
#include "sim/TensorCoreSum.h"

namespace tl {
namespace {

std::string dataFile(const std::string& name) { return std::string(TL_SOURCE_DIR) + "/tests/thread/data/accum_h200/" + name; }

// Element i of an input as the tensor core reads it (f32: as tf32).
float truncToTf32Like(const Buffer& x, int64_t i) {
  const float v = static_cast<float>(x.getF(i));
  return x.dtype == DType::F32 ? truncToTf32(v) : v;
}

// Elements of `got` whose bits differ from `want`'s.
int64_t bitDifferences(const Buffer& got, const Buffer& want) {
  EXPECT_EQ(got.bytes.size(), want.bytes.size());
  int64_t n = 0;
  for (size_t i = 0; i + 4 <= std::min(got.bytes.size(), want.bytes.size()); i += 4)
    n += std::memcmp(&got.bytes[i], &want.bytes[i], 4) != 0;
  return n;
}

TEST(TensorCoreSum, ExecutorGivesTheH200sBits) {
  for (const char* d : {"f16", "bf16", "f8e4m3", "f8e5m2", "f32"}) {
    for (bool wgmma : {true, false}) {
      SCOPED_TRACE(std::string(d) + (wgmma ? " wgmma" : " mma.sync"));
      std::ostringstream err;
      auto k = compileKernelFile(
          rank3::kernelFile("ring_dot"),
          {{"BT", "1"}, {"M", "64"}, {"N", "32"}, {"K", "256"}, {"BK", "32"}, {"num_stages", "1"},
           {"a_ptr", "file(\"" + dataFile(std::string(d) + ".a.npy") + "\")"},
           {"b_ptr", "file(\"" + dataFile(std::string(d) + ".b.npy") + "\")"}},
          err);
      ASSERT_TRUE(k) << err.str();
      ThreadCompileOptions o;
      o.numWarps = 4;
      o.wgmma = wgmma;
      ThreadCompilation tc = compileToThreadIR(*k->ir, k->launch, o);
      int64_t mmas = 0;
      walk(tc.threadIR->body, [&](Op& op) { mmas += op.kind == (wgmma ? OpKind::Wgmma : OpKind::Mma); });
      EXPECT_GT(mmas, 0);
      Memory m = Memory::fromLaunch(k->launch);
      const Buffer a = *m.find("a_ptr"), b = *m.find("b_ptr");
      runThreadIR(*tc.threadIR, k->launch, m);
      const Buffer gpu = readNpy(dataFile(std::string(d) + ".c." + (wgmma ? "sm_90a" : "sm_90") + ".npy"));
      const Buffer& c = *m.find("c_ptr");
      EXPECT_EQ(bitDifferences(c, gpu), 0) << "of " << c.numel();
      // The exact sum rounded once differs from the GPU somewhere: the model is what matches.
      Buffer exact = c;
      for (int64_t i = 0; i < 64; ++i)
        for (int64_t j = 0; j < 32; ++j) {
          double s = 0;
          for (int64_t kk = 0; kk < 256; ++kk)
            s += double(truncToTf32Like(a, i * 256 + kk)) * double(truncToTf32Like(b, j * 256 + kk));
          exact.setF(i * 32 + j, static_cast<float>(s));
        }
      EXPECT_GT(bitDifferences(exact, gpu), 0);
    }
  }
}

TEST(TensorCoreSum, AlignsToTheLargestTermAndCutsTowardZero) {
  using sim::tensorCoreStep;
  const double one[4] = {1, 1, 1, 1};
  // QGMMA (F = 13): 48 with -0.021484375 keeps multiples of 2^(5-13): -5.5 units cut to -5.
  const double a1[2] = {-48.0, -0.021484375};
  EXPECT_EQ(tensorCoreStep(sim::kQgmmaAdder, 0.0f, a1, 1, one, 1, 2), -48.01953125f);
  // A product's exponent is e(a) + e(b), unnormalized: 1.875 * 1.875 = 3.515625 and
  // -1.75 * 1.75 = -3.0625 align at 2^0, so 3 * 2^-14 keeps one unit of 2^-13 (aligned at 2^1,
  // their normalized exponent, it would keep none).
  const double a2[3] = {1.875, -1.75, 3 * 0x1p-14}, b2[3] = {1.875, 1.75, 1.0};
  EXPECT_EQ(tensorCoreStep(sim::kQgmmaAdder, 0.0f, a2, 1, b2, 1, 3), 0.453125f + 0x1p-13f);
  // The accumulator takes part: c = 1024 cuts a 2^-4 term away entirely, and the result keeps
  // 13 bits after its leading one, toward zero.
  const double a3[1] = {0x1p-4};
  EXPECT_EQ(tensorCoreStep(sim::kQgmmaAdder, 1024.0f, a3, 1, one, 1, 1), 1024.0f);
  const double a4[2] = {1.0, 0x1p-13};
  EXPECT_EQ(tensorCoreStep(sim::kQgmmaAdder, 8191.0f, a4, 1, one, 1, 2), 8192.0f);   // 8192 + 2^-13: 13 bits
  EXPECT_EQ(tensorCoreStep(sim::kQgmmaAdder, -8191.5f, a4, 1, one, 1, 1), -8190.5f);  // -8190.5 is exact in 13 bits
  // HMMA (F = 25, R = 23): f32's width, cut toward zero instead of rounded.
  const double a5[2] = {1.0, -0x1p-30};
  EXPECT_EQ(tensorCoreStep(sim::kHmmaAdder, 0.0f, a5, 1, one, 1, 2), 1.0f);
  const double a6[2] = {-1.0, -0x1p-24};
  EXPECT_EQ(tensorCoreStep(sim::kHmmaAdder, 0.0f, a6, 1, one, 1, 2), -1.0f);
  // Zeros, NaN and infinity.
  const double z[2] = {0.0, 0.0}, nan[2] = {1.0, std::nan("")}, inf[2] = {INFINITY, 1.0};
  EXPECT_EQ(tensorCoreStep(sim::kQgmmaAdder, 0.0f, z, 1, one, 1, 2), 0.0f);
  EXPECT_TRUE(std::isnan(tensorCoreStep(sim::kQgmmaAdder, 0.0f, nan, 1, one, 1, 2)));
  EXPECT_EQ(tensorCoreStep(sim::kHmmaAdder, 2.0f, inf, 1, one, 1, 2), INFINITY);
}

// An f16 accumulator (mma ...f16.f16.f16.f16): the aligned terms summed as for f32, the sum
// rounded once to f16, to nearest even, subnormals kept, overflow to infinity.
TEST(TensorCoreSum, F16AccumulatorRoundsTheSumToNearestEven) {
  using sim::tensorCoreStepToF16;
  const double one[4] = {1, 1, 1, 1};
  const double tie[2] = {1.0, 0x1p-11}, above[2] = {1.0, 0x1p-11 + 0x1p-20}, odd[2] = {1.0 + 0x1p-10, 0x1p-11};
  EXPECT_EQ(tensorCoreStepToF16(sim::kHmmaAdder, 0.0f, tie, 1, one, 1, 2), 1.0f);                 // a tie: to even
  EXPECT_EQ(tensorCoreStepToF16(sim::kHmmaAdder, 0.0f, above, 1, one, 1, 2), 1.0f + 0x1p-10f);    // past it: up
  EXPECT_EQ(tensorCoreStepToF16(sim::kHmmaAdder, 0.0f, odd, 1, one, 1, 2), 1.0f + 0x1p-9f);       // a tie from odd: up
  // The accumulator is a term of the same sum (one rounding, not two): c = 2048 and 1.5 give
  // 2049.5, whose nearest f16 (spacing 2) is 2050; 2048 + 1 would round back to 2048.
  const double x[1] = {1.5};
  EXPECT_EQ(tensorCoreStepToF16(sim::kHmmaAdder, 2048.0f, x, 1, one, 1, 1), 2050.0f);
  // Subnormals (spacing 2^-24) and overflow (65520 and above round to infinity).
  const double tiny[2] = {0x1p-24, 0x1p-26}, big[2] = {65504.0, 15.0}, bigger[2] = {65504.0, 16.0};
  EXPECT_EQ(tensorCoreStepToF16(sim::kHmmaAdder, 0.0f, tiny, 1, one, 1, 2), 0x1p-24f);
  EXPECT_EQ(tensorCoreStepToF16(sim::kHmmaAdder, 0.0f, big, 1, one, 1, 2), 65504.0f);
  EXPECT_EQ(tensorCoreStepToF16(sim::kHmmaAdder, 0.0f, bigger, 1, one, 1, 2), INFINITY);
  EXPECT_EQ(tensorCoreStepToF16(sim::kHmmaAdder, -65504.0f, bigger, 1, one, 1, 1), 0.0f);  // exact cancellation: +0
}

// Triton's max_num_imprecise_acc on an fp8 wgmma dot (LowerWgmma.cpp): groups of v / 32 k steps
// from zero, each added to the accumulator in f32, so a smaller v is closer to the exact sum; one
// wgmma_wait per group and none left in flight. A v above K is an error, as in Triton.
TEST(TensorCoreSum, MaxNumImpreciseAccAddsInF32) {
  double last = INFINITY;
  for (int v : {0, 128, 32}) {
    SCOPED_TRACE("max_num_imprecise_acc " + std::to_string(v));
    std::ostringstream err;
    auto k = compileKernelFile(rank3::kernelFile("fp8_imprecise_dot"), {{"IMPRECISE", std::to_string(v)}}, err);
    ASSERT_TRUE(k) << err.str();
    ThreadCompileOptions o;
    o.numWarps = 4;
    o.wgmma = true;
    ThreadCompilation tc = compileToThreadIR(*k->ir, k->launch, o);
    int64_t waits = 0, pending = 0;
    walk(tc.threadIR->body, [&](Op& op) {
      if (op.kind != OpKind::WgmmaWait) return;
      ++waits;
      pending += op.intAttr("pending");
    });
    EXPECT_EQ(waits, v == 0 ? 2 : 128 / v) << "BK = 128: one group per dot, or 128 / v";  // v = 0: the loop's and the one after it
    EXPECT_EQ(pending, v == 0 ? 1 : 0);
    Memory m = Memory::fromLaunch(k->launch);
    const Buffer a = *m.find("a_ptr"), b = *m.find("b_ptr");
    runThreadIR(*tc.threadIR, k->launch, m);
    const Buffer& c = *m.find("c_ptr");
    double worst = 0;
    for (int64_t i = 0; i < 64; ++i)
      for (int64_t j = 0; j < 64; ++j) {
        double s = 0;
        for (int64_t kk = 0; kk < 512; ++kk) s += a.getF(i * 512 + kk) * b.getF(j * 512 + kk);
        worst = std::max(worst, std::fabs(c.getF(i * 64 + j) - s));
      }
    EXPECT_LT(worst, last / 2);
    last = worst;
  }
  std::ostringstream err;
  EXPECT_FALSE(compileKernelFile(rank3::kernelFile("fp8_imprecise_dot"), {{"IMPRECISE", "256"}}, err));
  EXPECT_NE(err.str().find("max_num_imprecise_acc (256) must be at most K (128)"), std::string::npos) << err.str();
}

}  // namespace
}  // namespace tl
