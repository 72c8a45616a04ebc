// Every kernel of kernels/ through the whole compiler to PTX, and ptxas on the result.
//
//   - each kernel at its launch's sizes, num_warps 4 (and 1 and 8 for a few), sm_90 (and sm_80
//     for a couple): the PTX has the kernel's .entry, its .maxntid and its shared array, and
//     ptxas accepts it; registers and spills are printed (spills fail the test);
//   - the softmax at N = 1024: vector loads (ld.global.v4.f32), butterfly shuffles, barriers,
//     shared memory; vector_add's ld.global.v4; the codegen time is printed.
// The ptxas checks skip (GTEST_SKIP, with the reason) where ptxas is not installed.
#include <algorithm>
#include <chrono>
#include <cstdio>

#include "codegen_util.h"

namespace tl::ptxtest {
namespace {

struct KernelParam {
  std::string stem;
  int numWarps;
  std::string arch;
};

std::string paramName(const testing::TestParamInfo<KernelParam>& p) {
  return p.param.stem + "_w" + std::to_string(p.param.numWarps) + "_" + p.param.arch;
}

std::vector<KernelParam> allCases() {
  std::vector<KernelParam> cases;
  for (const std::string& stem : kernelStems()) cases.push_back({stem, 4, "sm_90"});
  for (const char* stem : {"softmax", "layernorm", "matmul", "vector_add"}) {
    cases.push_back({stem, 1, "sm_90"});
    cases.push_back({stem, 8, "sm_90"});
  }
  cases.push_back({"softmax", 4, "sm_80"});
  cases.push_back({"matmul", 4, "sm_80"});
  cases.push_back({"bias_gelu", 4, "sm_86"});
  cases.push_back({"rmsnorm", 4, "sm_89"});
  return cases;
}

class KernelToPtx : public testing::TestWithParam<KernelParam> {};

TEST_P(KernelToPtx, GeneratesPtxThatPtxasAccepts) {
  const KernelParam& p = GetParam();
  ThreadCompilation tc = kernelToThreadIR(p.stem, p.numWarps);
  PtxOptions opts;
  opts.arch = p.arch;
  PtxResult r = compileToPTX(*tc.threadIR, opts);
  const std::string name = tc.threadIR->name;

  EXPECT_EQ(r.kernelName, name);
  EXPECT_TRUE(contains(r.ptx, ".target " + p.arch)) << r.ptx;
  EXPECT_TRUE(contains(r.ptx, ".visible .entry " + name + "(")) << r.ptx;
  EXPECT_TRUE(contains(r.ptx, ".maxntid " + std::to_string(32 * p.numWarps) + ", 1, 1")) << r.ptx;
  EXPECT_TRUE(contains(r.llvmIR, "target triple = \"nvptx64-nvidia-cuda\"")) << r.llvmIR;
  if (tc.threadIR->sharedBytes > 0) {
    EXPECT_TRUE(contains(r.ptx, ".shared .align 16 .b8 tl_shared[" + std::to_string(tc.threadIR->sharedBytes) + "]")) << r.ptx;
  } else {
    EXPECT_FALSE(contains(r.ptx, ".shared")) << r.ptx;
  }
  EXPECT_GT(r.codegenMs, 0.0);

  TL_REQUIRE_PTXAS();
  PtxasInfo info = runPtxas(r.ptx, p.arch);
  ASSERT_TRUE(info.ran) << info.skipped;
  ASSERT_TRUE(info.ok) << info.log << "\n" << r.ptx;
  EXPECT_GT(info.registers, 0) << info.log;
  EXPECT_EQ(info.sharedBytes, tc.threadIR->sharedBytes) << info.log;
  EXPECT_EQ(info.spillStoreBytes, 0) << info.log;
  EXPECT_EQ(info.spillLoadBytes, 0) << info.log;
  std::printf("  %-16s w%d %s: %3d registers, %5d B smem, spills %d/%d B, stack %d B, codegen %.1f ms (opt %.1f, emit %.1f)\n",
              p.stem.c_str(), p.numWarps, p.arch.c_str(), info.registers, info.sharedBytes, info.spillStoreBytes,
              info.spillLoadBytes, info.stackFrameBytes, r.codegenMs, r.optimizeMs, r.emitMs);
}

INSTANTIATE_TEST_SUITE_P(Kernels, KernelToPtx, testing::ValuesIn(allCases()), paramName);

// The softmax at N = 1024 (every row full): the layout pass proves 16-byte alignment, so each
// thread loads 4 consecutive floats at once; the max and the sum are butterflies over the warp
// and a combine across the 4 warps through shared memory.
TEST(SoftmaxPtx, VectorLoadsShufflesBarriersShared) {
  const std::vector<LaunchOverride> n1024 = {{"N", "1024"}};
  ThreadCompilation tc = kernelToThreadIR("softmax", 4, n1024);
  PtxResult r = compileToPTX(*tc.threadIR);
  EXPECT_TRUE(contains(r.ptx, "ld.global.v4.f32")) << r.ptx;
  EXPECT_TRUE(contains(r.ptx, "st.global.v4.f32")) << r.ptx;
  // 5 + 2 for the max, 5 + 2 for the sum: the lanes, then the 4 warps' partials
  EXPECT_EQ(count(r.ptx, "shfl.sync.bfly.b32"), 14u) << r.ptx;
  EXPECT_EQ(count(r.ptx, "bar.sync"), 2u) << r.ptx;  // one a reduction: none after the reads
  EXPECT_TRUE(contains(r.ptx, ".shared .align 16 .b8 tl_shared[")) << r.ptx;
  EXPECT_EQ(count(r.ptx, "ld.shared.f32"), 2u) << r.ptx;  // a lane reads one of the 4 partials
  EXPECT_TRUE(contains(r.ptx, "max.NaN.f32")) << r.ptx;       // NaN-propagating maximum
  EXPECT_TRUE(contains(r.ptx, "ex2.approx.ftz.f32")) << r.ptx;  // fast exp
  EXPECT_EQ(count(r.ptx, "div.full.f32"), 8u) << r.ptx;       // Triton's `/`, one per element
  EXPECT_FALSE(contains(r.ptx, "div.rn.f32")) << r.ptx;
  EXPECT_TRUE(contains(r.llvmIR, "llvm.nvvm.barrier0")) << r.llvmIR;
  EXPECT_TRUE(contains(r.llvmIR, "addrspace(3)")) << r.llvmIR;

  // Source -> PTX time (front end, thread pipeline, codegen), best of a few runs.
  double best = 1e9, codegen = 1e9, opt = 0, emit = 0;
  for (int i = 0; i < 5; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    PtxResult again = kernelToPTX("softmax", 4, n1024);
    best = std::min(best, std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    if (again.codegenMs < codegen) {
      codegen = again.codegenMs;
      opt = again.optimizeMs;
      emit = again.emitMs;
    }
    EXPECT_EQ(again.ptx, r.ptx);  // deterministic
  }
  std::printf("  softmax N=1024: source -> PTX %.2f ms (codegen %.2f ms: optimize %.2f, emit %.2f)\n", best, codegen, opt, emit);

  TL_REQUIRE_PTXAS();
  PtxasInfo info = runPtxas(r.ptx, "sm_90");
  ASSERT_TRUE(info.ok) << info.log;
  EXPECT_EQ(info.sharedBytes, tc.threadIR->sharedBytes);
}

// At the launch's ragged N = 781 the row is masked: predicated loads keep -inf where masked off.
TEST(SoftmaxPtx, RaggedRowUsesPredicatedLoadsWithOther) {
  PtxResult r = kernelToPTX("softmax", 4);
  EXPECT_TRUE(contains(r.ptx, "@%p")) << r.ptx;
  EXPECT_TRUE(contains(r.ptx, "ld.global")) << r.ptx;
  EXPECT_TRUE(contains(r.ptx, "0fFF800000")) << r.ptx;  // other = -inf
}

TEST(VectorAddPtx, VectorLoadsAndStores) {
  PtxResult r = kernelToPTX("vector_add", 4);
  EXPECT_TRUE(contains(r.ptx, "ld.global.v4.f32")) << r.ptx;
  EXPECT_TRUE(contains(r.ptx, "st.global.v4.f32")) << r.ptx;
  EXPECT_TRUE(contains(r.ptx, "mov.u32 %r") || contains(r.ptx, "%tid.x")) << r.ptx;
  EXPECT_TRUE(contains(r.ptx, "%ctaid.x")) << r.ptx;
}

// The matmul's k loop stays a loop (phi nodes for the iv and the accumulator registers).
TEST(MatmulPtx, LoopsAndSharedMemory) {
  ThreadCompilation tc = kernelToThreadIR("matmul", 4);
  PtxResult r = compileToPTX(*tc.threadIR);
  EXPECT_TRUE(contains(r.llvmIR, "phi ")) << r.llvmIR;
  EXPECT_TRUE(contains(r.ptx, "bra")) << r.ptx;
  EXPECT_TRUE(contains(r.ptx, "fma.rn.f32")) << r.ptx;
  EXPECT_TRUE(contains(r.ptx, "st.shared")) << r.ptx;
  EXPECT_TRUE(contains(r.ptx, "ld.shared")) << r.ptx;
}

}  // namespace
}  // namespace tl::ptxtest
