// Scans (tl.cumsum, tl.cumprod, tl.associative_scan) through tl-ptx: the scan test kernels of
// tests/thread/kernels/ (scan_1d: every form on a 1-D tile; scan_2d: along either axis) compile
// to PTX that ptxas accepts at num_warps 1, 4 and 8, with the instructions the lowering
// (stages/thread/LowerScan.cpp) is built from: shfl.sync.idx for the lane step, shared memory
// and bar.sync across warps. (Their results on the GPU: `tl-ptx tests/thread/kernels/scan_1d.tl`
// on the H200.)
#include <sstream>

#include "codegen_util.h"

namespace tl::ptxtest {
namespace {

PtxResult scanPTX(const std::string& stem, int numWarps, const std::vector<LaunchOverride>& overrides = {}) {
  return fileToPTX("tests/thread/kernels/" + stem + ".tl", numWarps, overrides);
}

TEST(ScanPtx, OneDimEveryForm) {
  TL_REQUIRE_PTXAS();
  for (int nw : {1, 4, 8}) {
    PtxResult r = scanPTX("scan_1d", nw, {{"N", "1024"}, {"REV", nw == 8 ? "1" : "0"}});
    expectAssembles(r, "scan_1d, num_warps " + std::to_string(nw));
    EXPECT_TRUE(contains(r.ptx, "shfl.sync.idx")) << r.ptx;
    EXPECT_EQ(contains(r.ptx, "bar.sync"), nw > 1) << r.ptx;
    EXPECT_EQ(contains(r.ptx, "st.shared"), nw > 1) << r.ptx;
  }
}

TEST(ScanPtx, TwoDimEitherAxis) {
  TL_REQUIRE_PTXAS();
  for (const char* axis : {"0", "1"})
    for (int nw : {1, 4}) {
      PtxResult r = scanPTX("scan_2d", nw, {{"AXIS", axis}});
      expectAssembles(r, std::string("scan_2d AXIS=") + axis);
      EXPECT_TRUE(contains(r.ptx, "shfl.sync.idx")) << r.ptx;
    }
}

}  // namespace
}  // namespace tl::ptxtest
