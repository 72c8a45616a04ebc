// tl-ptx on fp8 (issue 12): conversions are the sm_89+ PTX cvt instructions Triton emits,
// loads and stores move bytes (16 per vector access), the PTX assembles with ptxas for sm_90,
// and a target below sm_89 is a located error naming the requirement.
#include <gtest/gtest.h>

#include <sstream>

#include "codegen_util.h"

namespace tl::ptxtest {
namespace {

ThreadCompilation threadIRFor(const std::string& path, int numWarps, const std::vector<LaunchOverride>& overrides = {}) {
  std::ostringstream err;
  auto k = compileKernelFile(path, overrides, err);
  if (!k) throw std::runtime_error(path + ": " + err.str());
  return compileToThreadIR(*k->ir, k->launch, numWarps);
}

const std::string kCast = std::string(TL_SOURCE_DIR) + "/tests/thread/kernels/fp8_cast.tl";

TEST(Fp8Ptx, CastKernelUsesTheCvtInstructionsAndAssembles) {
  ThreadCompilation tc = threadIRFor(kCast, 4, {{"N", "4096"}, {"BLOCK", "2048"}});
  PtxResult r = compileToPTX(*tc.threadIR);
  EXPECT_TRUE(contains(r.ptx, "cvt.rn.satfinite.e4m3x2.f32")) << r.ptx;
  EXPECT_TRUE(contains(r.ptx, "cvt.rn.satfinite.e5m2x2.f32")) << r.ptx;
  EXPECT_TRUE(contains(r.ptx, "cvt.rn.f16x2.e4m3x2")) << r.ptx;   // q.to(f16), q.to(e5m2) decode e4m3
  EXPECT_TRUE(contains(r.ptx, "cvt.rn.f16x2.e5m2x2")) << r.ptx;   // e5.to(f32)
  EXPECT_TRUE(contains(r.ptx, "ld.global.v4.u32") || contains(r.ptx, "ld.global.v4.b32") ||
              contains(r.ptx, "ld.global.nc.v4.u32") || contains(r.ptx, "ld.global.nc.v4.b32")) << r.ptx;  // 16 fp8 bytes
  TL_REQUIRE_PTXAS();
  PtxasInfo info = runPtxas(r.ptx, "sm_90");
  ASSERT_TRUE(info.ran);
  EXPECT_TRUE(info.ok) << info.log;
}

TEST(Fp8Ptx, Fp8MatmulAssemblesForSm90) {
  ThreadCompilation tc = threadIRFor(std::string(TL_SOURCE_DIR) + "/kernels/triton/t09_matmul_fp8.tl", 4);
  PtxResult r = compileToPTX(*tc.threadIR);
  EXPECT_TRUE(contains(r.ptx, "cvt.rn.satfinite.e4m3x2.f32")) << r.ptx;
  // The fp8 dot runs on tensor cores: the fp8 bytes go to the mma as they are (no decode).
  EXPECT_TRUE(contains(r.ptx, "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32")) << r.ptx;
  EXPECT_FALSE(contains(r.ptx, "cvt.rn.f16x2.e4m3x2")) << r.ptx;
  TL_REQUIRE_PTXAS();
  PtxasInfo info = runPtxas(r.ptx, "sm_90");
  ASSERT_TRUE(info.ran);
  EXPECT_TRUE(info.ok) << info.log;
}

TEST(Fp8Ptx, TargetsBelowSm89AreRefusedAtTheConversion) {
  ThreadCompilation tc = threadIRFor(kCast, 4);
  for (const char* arch : {"sm_80", "sm_86"}) {
    PtxOptions opts;
    opts.arch = arch;
    try {
      compileToPTX(*tc.threadIR, opts);
      ADD_FAILURE() << arch << ": expected a RuntimeError";
    } catch (const RuntimeError& e) {
      EXPECT_NE(std::string(e.what()).find("needs sm_89 or newer"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(arch), std::string::npos) << e.what();
      EXPECT_EQ(e.loc.line, 16) << e.what();  // e4 = x.to(f8e4m3), the first conversion
    }
  }
  PtxOptions ada;
  ada.arch = "sm_89";
  EXPECT_NO_THROW(compileToPTX(*tc.threadIR, ada));
}

}  // namespace
}  // namespace tl::ptxtest
