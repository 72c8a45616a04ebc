// device_assert and Python's assert in a kernel (issue 12, "Debugging"): passing in every CPU
// stage; failing with a located RuntimeError naming the program and the element (tl-thread: also
// the warp and lane) in tl-scalar, tl-block and the thread executor; mask= skipping elements;
// the tools' exit status 1 with the source line and a caret.
#include <regex>

#include "DebugTestUtil.h"

namespace tl::debugtest {
namespace {

TEST(DeviceAssert, PassesInEveryStage) {
  auto k = compile("assert_limit");
  ASSERT_TRUE(k);
  for (Stage s : {Stage::Scalar, Stage::Block}) EXPECT_EQ(runPrinting(*k, s), "");
  for (int nw : {1, 2, 4}) EXPECT_EQ(runPrinting(*k, Stage::Thread, nw), "");
}

// The RuntimeError of a run, or "" when it passed.
std::string failure(const CompiledKernel& k, Stage s, int nw, Loc* loc) {
  try {
    runPrinting(k, s, nw);
  } catch (const RuntimeError& e) {
    *loc = e.loc;
    return e.what();
  }
  return "";
}

TEST(DeviceAssert, AFailingElementStopsEveryStageAtTheAssert) {
  auto k = compile("assert_limit", {{"LIMIT", "6"}});
  ASSERT_TRUE(k);
  for (Stage s : {Stage::Scalar, Stage::Block}) {
    Loc loc;
    EXPECT_EQ(failure(*k, s, 1, &loc), "device assertion failed: x must stay below LIMIT (pid (1, 0, 0) idx (2))");
    EXPECT_EQ(loc, (Loc{14, 5}));
  }
  for (int nw : {1, 4}) {
    Loc loc;
    std::string msg = failure(*k, Stage::Thread, nw, &loc);
    static const std::regex re(R"(device assertion failed: x must stay below LIMIT \(pid \(1, 0, 0\) warp \d lane \d+ idx \(2\)\))");
    EXPECT_TRUE(std::regex_match(msg, re)) << msg;
    EXPECT_EQ(loc, (Loc{14, 5}));
  }
}

TEST(DeviceAssert, MaskSkipsElementsAndWithoutItTheFirstOddOneFails) {
  auto masked = compile("assert_limit");  // MASKED=1: odd elements are not checked
  ASSERT_TRUE(masked);
  Loc loc;
  EXPECT_EQ(failure(*masked, Stage::Scalar, 1, &loc), "");
  auto k = compile("assert_limit", {{"MASKED", "0"}});
  ASSERT_TRUE(k);
  EXPECT_EQ(failure(*k, Stage::Scalar, 1, &loc), "device assertion failed: odd element (pid (0, 0, 0) idx (1))");
  EXPECT_EQ(loc, (Loc{19, 12}));
  EXPECT_EQ(failure(*k, Stage::Block, 1, &loc), "device assertion failed: odd element (pid (0, 0, 0) idx (1))");
  EXPECT_NE(failure(*k, Stage::Thread, 2, &loc).find("device assertion failed: odd element (pid (0, 0, 0) warp"),
            std::string::npos);
}

TEST(DeviceAssertCli, ExitCodeOneWithTheSourceLineAndACaret) {
  const std::string want =
      "tests/debug/kernels/assert_limit.tl:14:5: error: device assertion failed: x must stay below LIMIT (pid (1, 0, 0)";
  for (const char* tool : {"scalar/tl-scalar", "block/tl-block", "thread/tl-thread"}) {
    ToolRun pass = runTool(tool, "tests/debug/kernels/assert_limit.tl");
    EXPECT_EQ(pass.status, 0) << tool << "\n" << pass.out << pass.err;
    ToolRun r = runTool(tool, "tests/debug/kernels/assert_limit.tl --set LIMIT=6");
    EXPECT_EQ(r.status, 1) << tool << "\n" << r.out << r.err;
    EXPECT_NE(r.err.find(want), std::string::npos) << tool << "\n" << r.err;
    EXPECT_NE(r.err.find("\n        assert x < LIMIT, \"x must stay below LIMIT\"\n        ^"), std::string::npos)
        << tool << "\n" << r.err;
    EXPECT_EQ(r.out.find("device assertion"), std::string::npos) << "the error goes to stderr: " << r.out;
  }
}

}  // namespace
}  // namespace tl::debugtest
