// device_print and device_assert through tl-ptx (issue 12, "Debugging"): the kernels of
// tests/debug/kernels/ compile to PTX that calls vprintf (declared with the CUDA ABI:
// i32 vprintf(i8* format, i8* args)) with Triton's line format, and __assertfail after a
// located vprintf line; ptxas -arch=sm_90 accepts it at num_warps 1 and 4. (What the GPU prints:
// run `tl-ptx tests/debug/kernels/<name>.tl` on the H200.)
#include <sstream>

#include "codegen_util.h"

namespace tl::ptxtest {
namespace {

PtxResult debugPTX(const std::string& stem, int numWarps, const std::vector<LaunchOverride>& overrides = {}) {
  return fileToPTX("tests/debug/kernels/" + stem + ".tl", numWarps, overrides);
}

TEST(DebugPtx, DevicePrintCallsVprintfWithTritonsFormat) {
  for (int nw : {1, 4}) {
    PtxResult r = debugPTX("print_tile", nw);
    EXPECT_TRUE(contains(r.ptx, ".extern .func  (.param .b32 func_retval0) vprintf")) << r.ptx;
    EXPECT_EQ(count(r.ptx, "\tvprintf, \n"), 2u) << r.ptx;  // the tile's print and the scalar's
    EXPECT_TRUE(contains(r.ptx, "cvt.f64.f32")) << r.ptx;  // floats go to vprintf as doubles
    EXPECT_TRUE(contains(r.llvmIR, "declare i32 @vprintf(ptr, ptr)")) << r.llvmIR;
    EXPECT_TRUE(contains(r.llvmIR, "pid (%u, %u, %u) idx (%1i) x: %f\\0A\\00")) << r.llvmIR;
    EXPECT_TRUE(contains(r.llvmIR, "pid (%u, %u, %u) idx () pid: %i\\0A\\00")) << r.llvmIR;
    TL_REQUIRE_PTXAS();
    expectAssembles(r, "print_tile");
  }
}

TEST(DebugPtx, TwoDimensionsHexAndThePrefixLine) {
  PtxResult r = debugPTX("print_2d", 4);
  EXPECT_TRUE(contains(r.llvmIR, "pid (%u, %u, %u) idx (%1i, %2i) v: %i\\0A\\00")) << r.llvmIR;
  EXPECT_TRUE(contains(r.llvmIR, "pid (%u, %u, %u) idx (%i, %2i) bits: 0x%08x\\0A\\00")) << r.llvmIR;
  EXPECT_TRUE(contains(r.llvmIR, "(operand 1) %f")) << r.llvmIR;
  EXPECT_TRUE(contains(r.llvmIR, "pid (%u, %u, %u) done\\0A\\00")) << r.llvmIR;
  TL_REQUIRE_PTXAS();
  expectAssembles(r, "print_2d");
}

TEST(DebugPtx, DeviceAssertCallsAssertfailAfterALocatedLine) {
  for (int nw : {1, 4}) {
    PtxResult r = debugPTX("assert_limit", nw, {{"MASKED", "0"}});
    EXPECT_TRUE(contains(r.ptx, "__assertfail")) << r.ptx;
    EXPECT_TRUE(contains(r.llvmIR, "declare void @__assertfail(ptr, ptr, i32, ptr, i64)")) << r.llvmIR;
    EXPECT_TRUE(contains(r.llvmIR, "assert_limit.tl:14:5: error: device assertion failed: x must stay below LIMIT "
                                   "(pid (%u, %u, %u) idx (%i))\\0A\\00"))
        << r.llvmIR;
    EXPECT_TRUE(contains(r.llvmIR, "c\"odd element\\00\"")) << r.llvmIR;  // __assertfail's message
    TL_REQUIRE_PTXAS();
    expectAssembles(r, "assert_limit");
  }
}

}  // namespace
}  // namespace tl::ptxtest
