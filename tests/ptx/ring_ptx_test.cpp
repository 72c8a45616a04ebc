// Load rings in PTX (stages/ptx/CodegenMemory.cpp emitCpAsync; stages/thread/LowerRing.cpp):
// tests/thread/kernels/ring_dot.tl at num_stages 3 becomes cp.async.cg copies of 16 bytes with
// their source size, commit and wait groups, and on sm_90a a wgmma wait that leaves one group in
// flight; ptxas accepts both (skipped where ptxas is not installed), and serializes no wgmma.
// Also matmul_tc's tf32 and fp8 wgmmas fed by rings.
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

// kernels/matmul_tc.tl at M = 256, N = K = 512, 128 x 256 tiles and 3 stages, plus `sets`, in
// thread IR for 8 warps with wgmmas.
ThreadCompilation matmulTcWgmma(std::vector<LaunchOverride> sets) {
  std::vector<LaunchOverride> all = {{"M", "256"}, {"N", "512"}, {"K", "512"}, {"BLOCK_M", "128"}, {"BLOCK_N", "256"}, {"num_stages", "3"}};
  all.insert(all.end(), sets.begin(), sets.end());
  std::ostringstream err;
  auto k = compileKernelFile(std::string(TL_SOURCE_DIR) + "/kernels/matmul_tc.tl", all, err);
  if (!k) throw std::runtime_error(err.str());
  ThreadCompileOptions o;
  o.numWarps = 8;
  o.wgmma = true;
  return compileToThreadIR(*k->ir, k->launch, o);
}

// A wgmma's accumulator registers are read by nothing but another wgmma until the wgmma_wait
// that covers it (whose results they become): in the thread IR, and so for ptxas, which
// otherwise serializes every wgmma of the kernel (C7514). Checked on kernels/matmul_tc.tl at the
// tiles compare.py times (128 x 256 x 64, 8 warps, 3 stages: one group left in flight) with a
// 16-bit C, whose conversion after the loop read the registers, and an f32 C.
TEST(RingPtx, WgmmaAccumulatorsAreReadOnlyAfterTheirWait) {
  for (const char* out : {"bf16", "f16", "f32"}) {
    const std::string in = std::string(out) == "f32" ? "bf16" : out;
    ThreadCompilation tc = matmulTcWgmma({{"BLOCK_K", "64"}, {"a_ptr", "randn((M, K), dtype=" + in + ", seed=1)"},
                                          {"b_ptr", "randn((K, N), dtype=" + in + ", seed=2)"},
                                          {"c_ptr", "zeros((M, N), dtype=" + std::string(out) + ", output=True)"}});
    int64_t wgmmas = 0, waits = 0;
    walk(tc.threadIR->body, [&](Op& op) {
      wgmmas += op.kind == OpKind::Wgmma;
      waits += op.kind == OpKind::WgmmaWait && op.numOperands() > 0;
      for (const Value* v : op.operands)
        if (!v->isRegionArg() && v->def->kind == OpKind::Wgmma) {
          EXPECT_TRUE(op.kind == OpKind::Wgmma || op.kind == OpKind::WgmmaWait)
              << out << ": " << mnemonic(op.kind) << " reads a wgmma's registers before its wait";
        }
    });
    EXPECT_EQ(wgmmas, 4) << out;  // BLOCK_K / 16 k steps of one m64n256k16 per warpgroup
    EXPECT_EQ(waits, 2) << out;   // wait 1 in the loop, wait 0 after it
    PtxOptions opts;
    opts.arch = "sm_90a";
    PtxResult r = compileToPTX(*tc.threadIR, opts);
    if (std::string(out) != "f32") {
      EXPECT_TRUE(contains(r.ptx, std::string("cvt.rn.") + out + "x2.f32")) << out;
    }
    TL_REQUIRE_PTXAS();
    PtxasInfo info = runPtxas(r.ptx, "sm_90a");
    ASSERT_TRUE(info.ok) << info.log;
    EXPECT_TRUE(ptxasPerformanceNotes(info.log).empty()) << out << ":\n" << info.log;
  }
}

// tf32 and fp8 wgmmas (m64n256k8.tf32, m64n256k32.e4m3) read both operands K-major, so with B
// stored [N][K] (matmul_tc's B_T = 1) both come by cp.async rings; ptxas assembles them for
// sm_90a without spills or performance notes, at the tiles compare.py times (128 x 256 x one
// 128-byte row of k, 8 warps, 3 stages).
TEST(RingPtx, Tf32AndFp8WgmmasFromRings) {
  for (const char* in : {"f32", "f8e4m3"}) {
    const bool tf32 = std::string(in) == "f32";
    ThreadCompilation tc = matmulTcWgmma({{"BLOCK_K", tf32 ? "32" : "128"}, {"B_T", "1"},
                                          {"a_ptr", std::string("randn((M, K), dtype=") + in + ", seed=1)"},
                                          {"b_ptr", std::string("randn((N, K), dtype=") + in + ", seed=2)"}});
    int64_t wgmmas = 0, copies = 0;
    walk(tc.threadIR->body, [&](Op& op) {
      wgmmas += op.kind == OpKind::Wgmma;
      copies += op.kind == OpKind::CpAsync;
    });
    EXPECT_EQ(wgmmas, 4) << in;  // 128 bytes of k / 32 bytes per wgmma, per warpgroup
    EXPECT_GT(copies, 0) << in;
    PtxOptions opts;
    opts.arch = "sm_90a";
    PtxResult r = compileToPTX(*tc.threadIR, opts);
    EXPECT_TRUE(contains(r.ptx, tf32 ? "wgmma.mma_async.sync.aligned.m64n256k8.f32.tf32.tf32" : "wgmma.mma_async.sync.aligned.m64n256k32.f32.e4m3.e4m3"))
        << in;
    EXPECT_TRUE(contains(r.ptx, "wgmma.wait_group.sync.aligned 1;")) << in;
    TL_REQUIRE_PTXAS();
    PtxasInfo info = runPtxas(r.ptx, "sm_90a");
    ASSERT_TRUE(info.ok) << info.log;
    EXPECT_EQ(info.spillStoreBytes, 0) << in << ":\n" << info.log;
    EXPECT_TRUE(ptxasPerformanceNotes(info.log).empty()) << in << ":\n" << info.log;
  }
}

}  // namespace
}  // namespace tl::ptxtest
