// Load rings in PTX (stages/ptx/CodegenMemory.cpp emitCpAsync; stages/thread/LowerRing.cpp):
// tests/thread/kernels/ring_dot.tl at num_stages 3 becomes cp.async.cg copies of 16 bytes with
// their source size, commit and wait groups, and on sm_90a a wgmma wait that leaves one group in
// flight; ptxas accepts both (skipped where ptxas is not installed).
#include "codegen_util.h"

namespace tl::ptxtest {
namespace {

PtxResult ringPtx(bool wgmma, const std::string& arch) {
  std::ostringstream err;
  auto k = compileKernelFile(std::string(TL_SOURCE_DIR) + "/tests/thread/kernels/ring_dot.tl", {{"num_stages", "3"}}, err);
  if (!k) throw std::runtime_error(err.str());
  ThreadCompileOptions o;
  o.numWarps = 4;
  o.wgmma = wgmma;
  ThreadCompilation tc = compileToThreadIR(*k->ir, k->launch, o);
  PtxOptions opts;
  opts.arch = arch;
  return compileToPTX(*tc.threadIR, opts);
}

TEST(RingPtx, CpAsyncGroupsOnMmaSyncAndWgmma) {
  for (bool wgmma : {false, true}) {
    const std::string arch = wgmma ? "sm_90a" : "sm_90";
    PtxResult r = ringPtx(wgmma, arch);
    EXPECT_TRUE(contains(r.ptx, "cp.async.cg.shared.global [")) << r.ptx;
    EXPECT_TRUE(contains(r.ptx, "cp.async.commit_group;")) << r.ptx;
    EXPECT_TRUE(contains(r.ptx, "cp.async.wait_group 2;")) << r.ptx;  // L - 1 = 1 iteration of 2 rings
    EXPECT_TRUE(contains(r.ptx, "cp.async.wait_group 0;")) << r.ptx;  // after the loop
    EXPECT_EQ(contains(r.ptx, "wgmma.wait_group.sync.aligned 1;"), wgmma) << r.ptx;
    TL_REQUIRE_PTXAS();
    PtxasInfo info = runPtxas(r.ptx, arch);
    ASSERT_TRUE(info.ran) << info.skipped;
    EXPECT_TRUE(info.ok) << info.log;
  }
}

}  // namespace
}  // namespace tl::ptxtest
