// The libdevice / tl.math float functions through tl-ptx (tests/thread/kernels/libdevice_ops.tl):
// ptxas accepts the PTX at num_warps 1 and 4; every function is inlined (CodegenOps.cpp's
// formulas: no call to a math library, which tilelab does not link), and so do the predicates
// isnan ... signbit (comparisons); the roundings are the
// cvt instructions they are meant to be, pow works in f64, the rest use ex2/lg2.approx. (Their
// accuracy on the GPU: `tl-ptx tests/thread/kernels/libdevice_ops.tl` compares every output with
// tl-scalar's libm results.)
#include <sstream>

#include "codegen_util.h"

namespace tl::ptxtest {
namespace {

PtxResult libdevicePTX(int numWarps, const std::string& stem = "libdevice_ops") {
  return fileToPTX("tests/thread/kernels/" + stem + ".tl", numWarps);
}

TEST(LibdevicePtx, AssemblesInlineWithTheExpectedInstructions) {
  TL_REQUIRE_PTXAS();
  for (int nw : {1, 4}) {
    PtxResult r = libdevicePTX(nw);
    PtxasInfo info = runPtxas(r.ptx, "sm_90");
    ASSERT_TRUE(info.ran) << info.skipped;
    EXPECT_TRUE(info.ok) << info.log << "\n" << r.ptx;
    EXPECT_FALSE(contains(r.ptx, "call")) << r.ptx;           // no library calls
    EXPECT_TRUE(contains(r.ptx, "cvt.rzi.f32.f32")) << r.ptx;  // trunc
    EXPECT_TRUE(contains(r.ptx, "cvt.rni.f32.f32")) << r.ptx;  // rint, nearbyint
    EXPECT_TRUE(contains(r.ptx, "ex2.approx")) << r.ptx;
    EXPECT_TRUE(contains(r.ptx, "lg2.approx")) << r.ptx;
    EXPECT_TRUE(contains(r.ptx, "div.rn.f32")) << r.ptx;       // rcp, atan's reductions
    EXPECT_TRUE(contains(r.ptx, "sqrt.rn.f32")) << r.ptx;      // asin, acos, hypot
    EXPECT_TRUE(contains(r.ptx, "div.rn.f64")) << r.ptx;       // pow's log2 in f64
    EXPECT_TRUE(contains(r.ptx, "fma.rn.f64")) << r.ptx;
  }
}

// isnan, isinf, isfinite, signbit are comparisons (libdevice_predicates.tl).
TEST(LibdevicePtx, PredicatesAssemble) {
  TL_REQUIRE_PTXAS();
  for (int nw : {1, 4}) {
    PtxResult r = libdevicePTX(nw, "libdevice_predicates");
    PtxasInfo info = runPtxas(r.ptx, "sm_90");
    ASSERT_TRUE(info.ran) << info.skipped;
    EXPECT_TRUE(info.ok) << info.log << "\n" << r.ptx;
    EXPECT_TRUE(contains(r.ptx, "setp.")) << r.ptx;
  }
}

}  // namespace
}  // namespace tl::ptxtest
