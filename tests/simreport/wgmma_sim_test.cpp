// The simulator's warpgroup MMAs (sim/Timing.cpp: a wgmma keeps its warp's sub-partition's tensor
// core busy N/8 x wgmmaCyclesF16 cycles, chained ones in order without waiting for each other's
// results; wgmma_wait waits for every wgmma before it): a bf16
// matmul with --wgmma keeps the tensor cores busy and is predicted faster than with mma.sync (the
// H200's 457 against 272 TFLOP/s, bench/results/gpu/), and the report says it was compiled so.
#include <gtest/gtest.h>

#include <sstream>

#include "runtime/Driver.h"
#include "sim/Gpu.h"
#include "sim/SimReport.h"
#include "sim/ThreadExecutor.h"
#include "sim/Timing.h"
#include "thread/Pipeline.h"

namespace tl {
namespace {

// kernels/matmul_tc.tl at 512^3, 128 x 128 tiles, 8 warps; `sets` give the dtypes and BLOCK_K.
SimReport simulateMatmul(bool wgmma, std::vector<LaunchOverride> sets) {
  std::vector<LaunchOverride> all = {{"M", "512"}, {"N", "512"}, {"K", "512"}, {"BLOCK_M", "128"}, {"BLOCK_N", "128"}};
  all.insert(all.end(), sets.begin(), sets.end());
  std::ostringstream err;
  auto k = compileKernelFile(std::string(TL_SOURCE_DIR) + "/kernels/matmul_tc.tl", all, err);
  EXPECT_TRUE(k) << err.str();
  SimOptions o;
  o.unfused = false;
  o.numWarps = 8;
  o.wgmma = wgmma;
  return simulateKernel(*k->ir, k->launch, o);
}

SimReport simulateMatmul(bool wgmma) {
  return simulateMatmul(wgmma, {{"BLOCK_K", "64"}, {"a_ptr", "randn((M, K), dtype=bf16, seed=1)"},
                                {"b_ptr", "randn((K, N), dtype=bf16, seed=2)"}, {"c_ptr", "zeros((M, N), dtype=bf16, output=True)"}});
}

TEST(WgmmaSim, TensorCoresBusyAndFasterThanMmaSync) {
  SimReport w = simulateMatmul(true), m = simulateMatmul(false);
  EXPECT_EQ(w.json["compile"]["wgmma"], true);
  EXPECT_EQ(m.json["compile"]["wgmma"], false);
  const double tw = w.json["timing"]["tensor_utilization"].get<double>(), tm = m.json["timing"]["tensor_utilization"].get<double>();
  EXPECT_GT(tw, 0.05);
  EXPECT_GT(tm, 0.05);
  EXPECT_LT(w.json["timing"]["time_us"].get<double>(), m.json["timing"]["time_us"].get<double>());
}

// The tensor core's rate per dtype (wgmmaCyclesTf32 / F16 / Fp8 per 16 x 8 x 32-byte piece): the
// same 512^3 matmul, B stored [N][K] so that tf32 and fp8 run as wgmma too, keeps the tensor
// cores busy twice as long in tf32 and half as long in fp8 as in bf16 (the whitepaper's and the
// probe's 1 : 2 : 4 rates). Busy cycles = utilization x cycles (x the schedulers, equal here).
TEST(WgmmaSim, TensorCoreCyclesPerDtype) {
  auto busy = [](const char* d, const char* bk) {
    SimReport r = simulateMatmul(true, {{"BLOCK_K", bk}, {"B_T", "1"}, {"a_ptr", std::string("randn((M, K), dtype=") + d + ", seed=1)"},
                                        {"b_ptr", std::string("randn((N, K), dtype=") + d + ", seed=2)"}});
    return r.json["timing"]["tensor_utilization"].get<double>() * r.json["timing"]["cycles"].get<double>();
  };
  const double bf16 = busy("bf16", "64"), tf32 = busy("f32", "32"), fp8 = busy("f8e4m3", "128");
  ASSERT_GT(bf16, 0);
  EXPECT_NEAR(tf32 / bf16, 2.0, 0.05);
  EXPECT_NEAR(fp8 / bf16, 0.5, 0.02);
}

// A wgmma accumulating onto another's registers waits for the tensor pipe, not for that
// result (the ISA applies a warp's wgmmas in order): in the timed stream no wgmma depends on
// an earlier wgmma; the wgmma_wait depends on all of its group, and what reads the
// accumulator after it depends on the wait. 8 k steps of one m64n32k16 per warp.
TEST(WgmmaSim, ChainedWgmmasWaitForThePipeNotTheResult) {
  std::ostringstream err;
  auto k = compileKernelFile(std::string(TL_SOURCE_DIR) + "/tests/thread/kernels/mma_dot.tl",
                             {{"MODE", "1"}, {"BM", "64"}, {"K", "128"}, {"BK", "128"}}, err);
  ASSERT_TRUE(k) << err.str();
  ThreadCompileOptions o;
  o.numWarps = 4;
  o.wgmma = true;
  ThreadCompilation tc = compileToThreadIR(*k->ir, k->launch, o);
  Memory m = Memory::fromLaunch(k->launch);
  ExecOptions eo;
  eo.traceWarps = true;
  ExecResult r = runThreadIR(*tc.threadIR, k->launch, m, eo);
  TimingInput in = buildTimingInput(*tc.threadIR, r, loadGpu("h200"));
  ASSERT_FALSE(in.sample.empty());
  const std::vector<TimedInstr>& s = in.sample[0].warps[0];
  const std::vector<const Op*> table = instructionTable(*tc.threadIR);
  auto kindOf = [&](const TimedInstr& t) { return t.instr >= 0 ? table[size_t(t.instr)]->kind : OpKind::Return; };
  std::vector<int32_t> wgmmas;
  int32_t wait = -1;
  for (size_t i = 0; i < s.size(); ++i) {
    if (kindOf(s[i]) == OpKind::Wgmma) {
      for (int32_t d : s[i].deps) EXPECT_NE(kindOf(s[size_t(d)]), OpKind::Wgmma) << "wgmma " << i << " waits for wgmma " << d;
      wgmmas.push_back(int32_t(i));
    }
    if (kindOf(s[i]) == OpKind::WgmmaWait && wait < 0) wait = int32_t(i);
  }
  ASSERT_GE(wgmmas.size(), 2u);
  ASSERT_GE(wait, 0);
  for (int32_t w : wgmmas)
    if (w < wait) {
      EXPECT_NE(std::find(s[size_t(wait)].deps.begin(), s[size_t(wait)].deps.end(), w), s[size_t(wait)].deps.end());
    }
}

}  // namespace
}  // namespace tl
