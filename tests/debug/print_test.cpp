// device_print / print and static_print (issue 12, "Debugging") in every CPU stage: the exact
// lines of tests/debug/kernels/print_tile.tl and print_2d.tl on tl-scalar and tl-block, the
// thread executor's lines (every element once, by the thread holding it, with warp and lane),
// the line cap, static_print's compile-time line, and the tools' stdout.
#include <algorithm>
#include <iomanip>
#include <regex>

#include "DebugTestUtil.h"

namespace tl::debugtest {
namespace {

const char* kPrintTile =
    "pid (0, 0, 0) idx (0) x: 0.500000\n"
    "pid (0, 0, 0) idx (1) x: 1.500000\n"
    "pid (0, 0, 0) idx (2) x: 2.500000\n"
    "pid (0, 0, 0) idx (3) x: 3.500000\n"
    "pid (0, 0, 0) idx () pid: 0\n"
    "pid (1, 0, 0) idx (0) x: 4.500000\n"
    "pid (1, 0, 0) idx (1) x: 5.500000\n"
    "pid (1, 0, 0) idx (2) x: 6.500000\n"
    "pid (1, 0, 0) idx (3) x: 7.500000\n"
    "pid (1, 0, 0) idx () pid: 1\n";

TEST(DevicePrint, TileAndScalarInTlScalarAndTlBlock) {
  auto k = compile("print_tile");
  ASSERT_TRUE(k);
  EXPECT_EQ(runPrinting(*k, Stage::Scalar), kPrintTile);
  EXPECT_EQ(runPrinting(*k, Stage::Block), kPrintTile);
}

TEST(DevicePrint, ASecondLaunchSizePrintsItsOwnElements) {
  auto k = compile("print_tile", {{"N", "6"}, {"grid", "(3,)"}, {"BLOCK", "2"}});
  ASSERT_TRUE(k);
  const std::string s = runPrinting(*k, Stage::Scalar);
  EXPECT_EQ(lines(s).size(), 9u) << s;  // 3 programs x (2 elements + the pid)
  EXPECT_NE(s.find("pid (2, 0, 0) idx (1) x: 5.500000\n"), std::string::npos) << s;
  EXPECT_EQ(runPrinting(*k, Stage::Block), s);
}

// The padding of Triton's format: ceil(log10(dim)) characters per index.
std::string idx2(int64_t i, int wi, int64_t j, int wj) {
  std::ostringstream os;
  os << "idx (" << std::setw(wi) << i << ", " << std::setw(wj) << j << ")";
  return os.str();
}

TEST(DevicePrint, TwoDimensionsOperandsHexAndNoOperands) {
  auto k = compile("print_2d");
  ASSERT_TRUE(k);
  const std::string s = runPrinting(*k, Stage::Scalar);
  std::string want;
  for (int r = 0; r < 2; ++r)
    for (int c = 0; c < 16; ++c) want += "pid (0, 0, 0) " + idx2(r, 1, c, 2) + " v: " + std::to_string(r * 16 + c) + "\n";
  for (int r = 0; r < 2; ++r) want += "pid (0, 0, 0) " + idx2(r, 1, 0, 0) + " pair: (operand 0) " + std::to_string(r) + "\n";
  for (int c = 0; c < 16; ++c) {
    char v[32];
    std::snprintf(v, sizeof v, "%f", c * 1.5);
    want += "pid (0, 0, 0) " + idx2(0, 0, c, 2) + " pair: (operand 1) " + v + "\n";
  }
  const char* bits[] = {"0xbf800000", "0x00000000", "0x3f800000", "0x40000000"};
  for (int c = 0; c < 4; ++c) want += "pid (0, 0, 0) " + idx2(0, 0, c, 2) + " bits: " + bits[c] + "\n";
  ASSERT_GE(s.size(), want.size()) << s;
  EXPECT_EQ(s.substr(0, want.size()), want);
  EXPECT_NE(s.find("pid (0, 0, 0) idx (0, 15) bits: 0x41600000\n"), std::string::npos) << s;  // 14.0f
  EXPECT_TRUE(s.size() >= 19 && s.substr(s.size() - 19) == "pid (0, 0, 0) done\n") << s;
  EXPECT_EQ(lines(s).size(), 32u + 2 + 16 + 16 + 1);
  EXPECT_EQ(runPrinting(*k, Stage::Block), s);
}

TEST(DevicePrint, TheLineCapSaysHowManyLinesItDropped) {
  auto k = compile("print_2d");
  ASSERT_TRUE(k);
  const std::vector<std::string> l = lines(runPrinting(*k, Stage::Scalar, 1, 5));
  ASSERT_EQ(l.size(), 6u);
  EXPECT_EQ(l[4], "pid (0, 0, 0) idx (0,  4) v: 4");
  EXPECT_EQ(l[5], "device_print: 62 more lines not shown (--max-print-lines 5)");
  EXPECT_EQ(lines(runPrinting(*k, Stage::Thread, 4, 5)).back(),
            "device_print: 62 more lines not shown (--max-print-lines 5)");
}

// tl-thread's line without " warp W lane L": what tl-scalar prints for the same element.
std::string withoutThread(const std::string& line) {
  static const std::regex re(R"( warp \d+ lane \d+)");
  return std::regex_replace(line, re, "");
}

TEST(DevicePrint, ThreadExecutorPrintsEveryElementOnceWithItsThread) {
  for (const char* stem : {"print_tile", "print_2d"}) {
    auto k = compile(stem);
    ASSERT_TRUE(k);
    std::vector<std::string> want = lines(runPrinting(*k, Stage::Scalar));
    std::sort(want.begin(), want.end());
    for (int nw : {1, 2, 4, 8}) {
      std::vector<std::string> got = lines(runPrinting(*k, Stage::Thread, nw));
      static const std::regex thread(R"(^pid \(\d+, 0, 0\) warp \d+ lane \d+ .*)");
      for (const auto& l : got) EXPECT_TRUE(std::regex_match(l, thread)) << stem << " w" << nw << ": " << l;
      for (auto& l : got) l = withoutThread(l);
      std::sort(got.begin(), got.end());
      EXPECT_EQ(got, want) << stem << " at num_warps " << nw;
    }
  }
}

TEST(DevicePrint, ThreadExecutorExactLinesOfOneWarp) {
  // BLOCK = 4 on one warp: lanes 0-3 hold elements 0-3, lanes 4-31 wrap around (replicas,
  // masked off); the scalar is printed by thread 0. Programs run in grid order.
  auto k = compile("print_tile");
  ASSERT_TRUE(k);
  const std::string got = runPrinting(*k, Stage::Thread, 1);
  std::string want;
  for (int p = 0; p < 2; ++p) {
    for (int e = 0; e < 4; ++e) {
      char v[32];
      std::snprintf(v, sizeof v, "%f", p * 4 + e + 0.5);
      want += "pid (" + std::to_string(p) + ", 0, 0) warp 0 lane " + std::to_string(e) + " idx (" + std::to_string(e) +
              ") x: " + v + "\n";
    }
    want += "pid (" + std::to_string(p) + ", 0, 0) warp 0 lane 0 idx () pid: " + std::to_string(p) + "\n";
  }
  EXPECT_EQ(got, want) << "the layout the thread pipeline chose:\n"
                       << printFunction(*compileToThreadIR(*k->ir, k->launch, 1).withLayouts);
}

TEST(StaticPrint, PrintsAtCompileTimeAsPythonAndTritonWould) {
  auto k = compile("print_tile");
  ASSERT_TRUE(k);
  ASSERT_EQ(k->staticPrints.size(), 1u);
  EXPECT_EQ(k->staticPrints[0], "BLOCK 4 fp32[4] 0.5");
  auto k8 = compile("print_tile", {{"BLOCK", "8"}, {"grid", "(1,)"}});
  ASSERT_TRUE(k8);
  ASSERT_EQ(k8->staticPrints.size(), 1u);
  EXPECT_EQ(k8->staticPrints[0], "BLOCK 8 fp32[8] 0.5");
}

TEST(DevicePrintCli, EveryCpuStagePrintsToStdoutAndStillChecks) {
  for (const char* tool : {"scalar/tl-scalar", "block/tl-block", "thread/tl-thread"}) {
    ToolRun r = runTool(tool, "tests/debug/kernels/print_tile.tl");
    EXPECT_EQ(r.status, 0) << tool << "\n" << r.out << r.err;
    EXPECT_NE(r.out.find("BLOCK 4 fp32[4] 0.5\n"), std::string::npos) << tool << r.out;
    EXPECT_NE(r.out.find("idx (3) x: 7.500000\n"), std::string::npos) << tool << r.out;
    EXPECT_EQ(r.err.find("error"), std::string::npos) << tool << r.err;
  }
  ToolRun capped = runTool("block/tl-block", "--max-print-lines 3 tests/debug/kernels/print_tile.tl");
  EXPECT_EQ(capped.status, 0);
  EXPECT_NE(capped.out.find("pid (0, 0, 0) idx (2) x: 2.500000\ndevice_print: 7 more lines not shown "
                            "(--max-print-lines 3)\n"),
            std::string::npos)
      << capped.out;
  EXPECT_EQ(capped.out.find("idx (3) x: 3.500000"), std::string::npos) << capped.out;
}

}  // namespace
}  // namespace tl::debugtest
