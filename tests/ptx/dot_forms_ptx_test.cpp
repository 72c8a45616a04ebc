// Two dot forms on tensor cores (LowerDot.cpp), on tests/thread/kernels/mma_dot.tl:
//   - input_precision="tf32x3": the PTX has three tf32 mma.sync per tile where "tf32" has one,
//     each operand's low part made by clearing its low 13 mantissa bits (and.b32 0xffffe000) and
//     subtracting; on sm_90a too (wgmma takes tf32, not tf32x3);
//   - out_dtype=tl.float16: mma.sync...f16.f16.f16.f16 where an f32 accumulator has the .f32
//     form, one for one; on sm_90a wgmma...f16.f16.f16 with its accumulator as .b32 words of two
//     halves, in the wgmma and in its wait;
// both assemble without spills (the ptxas part is skipped where ptxas is not installed).
#include <regex>

#include "codegen_util.h"

namespace tl::ptxtest {
namespace {

PtxResult mmaDot(int mode, bool sm90a) {
  std::ostringstream err;
  auto k = compileKernelFile(std::string(TL_SOURCE_DIR) + "/tests/thread/kernels/mma_dot.tl",
                             {{"MODE", std::to_string(mode)}, {"M", "256"}, {"N", "256"}, {"K", "256"}, {"BM", "64"},
                              {"BN", "64"}, {"num_stages", "3"}},
                             err);
  if (!k) throw std::runtime_error(err.str());
  ThreadCompileOptions o;
  o.numWarps = 4;
  o.wgmma = sm90a;
  ThreadCompilation tc = compileToThreadIR(*k->ir, k->launch, o);
  PtxOptions opts;
  opts.arch = sm90a ? "sm_90a" : "sm_90";
  return compileToPTX(*tc.threadIR, opts);
}

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(DotFormsPtx, Tf32x3IsThreeTf32MmaPerTile) {
  const std::string mma = "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32";
  for (bool sm90a : {false, true}) {
    const PtxResult tf32 = mmaDot(4, false), x3 = mmaDot(6, sm90a);
    ASSERT_GT(count(tf32.ptx, mma), 0u) << tf32.ptx;
    EXPECT_EQ(count(x3.ptx, mma), 3 * count(tf32.ptx, mma)) << x3.ptx;
    EXPECT_FALSE(contains(x3.ptx, "wgmma.mma_async")) << x3.ptx;
    EXPECT_TRUE(std::regex_search(x3.ptx, std::regex("and\\.b32\\s+%r\\d+, %r\\d+, -8192;"))) << x3.ptx;
    TL_REQUIRE_PTXAS();
    const PtxasInfo info = runPtxas(x3.ptx, sm90a ? "sm_90a" : "sm_90");
    ASSERT_TRUE(info.ok) << info.log;
    EXPECT_EQ(info.spillStoreBytes, 0) << info.log;
  }
}

TEST(DotFormsPtx, F16AccumulatorIsTheF16MmaForm) {
  for (bool sm90a : {false, true}) {
    const std::string f16 = sm90a ? "wgmma.mma_async.sync.aligned.m64n64k16.f16.f16.f16" : "mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16";
    const std::string f32 = sm90a ? "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16" : "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32";
    const PtxResult wide = mmaDot(0, sm90a), narrow = mmaDot(7, sm90a);
    ASSERT_GT(count(wide.ptx, f32), 0u) << wide.ptx;
    EXPECT_EQ(count(narrow.ptx, f16), count(wide.ptx, f32)) << narrow.ptx;
    EXPECT_EQ(count(narrow.ptx, f32), 0u);
    TL_REQUIRE_PTXAS();
    const PtxasInfo info = runPtxas(narrow.ptx, sm90a ? "sm_90a" : "sm_90");
    ASSERT_TRUE(info.ok) << info.log;
    EXPECT_EQ(info.spillStoreBytes, 0) << info.log;
    EXPECT_EQ(info.log.find("Potential Performance Loss"), std::string::npos) << info.log;  // no serialized wgmmas
  }
}

}  // namespace
}  // namespace tl::ptxtest
