// The FMA form of dot in PTX (LowerDot.cpp, form B; the thread IR side is
// tests/thread/fma_dot_test.cpp): kernels/matmul.tl at 128 x 128 x 16 on 8 warps has its k loop
// unrolled by LLVM (the loop's `unroll` attribute becomes llvm.loop.unroll.full), so the PTX
// holds 16 x 64 fma.rn.f32 fed by 16 x 4 ld.shared.v4.f32 and no loop around them; at
// maxnreg=128 ptxas fits it in 128 registers without spills (two blocks of 256 threads an SM).
#include "codegen_util.h"

namespace tl::ptxtest {
namespace {

PtxResult matmul(int bk, int maxnreg) {
  std::ostringstream err;
  std::vector<LaunchOverride> sets{{"BLOCK_M", "128"}, {"BLOCK_N", "128"}, {"BLOCK_K", std::to_string(bk)},
                                   {"M", "512"},       {"N", "512"},       {"K", "512"}};
  if (maxnreg) sets.push_back({"maxnreg", std::to_string(maxnreg)});
  auto k = compileKernelFile(std::string(TL_SOURCE_DIR) + "/kernels/matmul.tl", sets, err);
  if (!k) throw std::runtime_error(err.str());
  ThreadCompilation tc = compileToThreadIR(*k->ir, k->launch, 8);
  return compileToPTX(*tc.threadIR, PtxOptions{});
}

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(FmaDotPtx, TheKLoopIsUnrolledIntoVectorLoadsAndFmas) {
  PtxResult r = matmul(16, 128);
  EXPECT_EQ(count(r.ptx, "fma.rn.f32"), 16u * 64u);
  EXPECT_EQ(count(r.ptx, "ld.shared.v4.f32"), 16u * 4u);
  EXPECT_EQ(count(r.ptx, "ld.shared.f32"), 0u);
  EXPECT_EQ(count(r.llvmIR, "llvm.loop.unroll.full"), 0u) << "the unroller consumes the hint";
  TL_REQUIRE_PTXAS();
  PtxasInfo info = runPtxas(r.ptx, "sm_90");
  EXPECT_TRUE(info.ok) << info.log;
  EXPECT_LE(info.registers, 128) << info.log;
  EXPECT_EQ(info.spillStoreBytes, 0) << info.log;
}

}  // namespace
}  // namespace tl::ptxtest
