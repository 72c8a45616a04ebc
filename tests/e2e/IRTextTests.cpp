// End-to-end tests of the IR's text form, for every kernel in kernels/*.tl at its default launch:
//   RoundTrip  printFunction -> parseFunction -> printFunction gives the same text, both for the
//              front end's IR and for the IR after tl::blockPipeline();
//   Golden     the IR after the pipeline equals tests/golden/<kernel>.ir (a change to the front
//              end or a pass shows up as a diff to review);
//   GoldenLayoutsAndThreadIR  the layout snapshot and the thread IR equal
//              tests/golden/<kernel>.layouts.ir and <kernel>.thread.ir, and both round-trip.
// Regenerate every golden file after an intended change with one command:
//   scripts/update-golden.sh            (= TL_UPDATE_GOLDEN=1 test_e2e --gtest_filter='*Golden*')
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "Harness.h"
#include "thread/Pipeline.h"
#include "ir/Parser.h"
#include "ir/Printer.h"

namespace tl::e2e {
namespace {

class KernelIR : public testing::TestWithParam<KernelCase> {};

std::string paramName(const testing::TestParamInfo<KernelCase>& info) { return info.param.stem; }

// Print, parse the text back, print again: the two texts must match.
void expectRoundTrip(const Function& fn, const std::string& what) {
  const std::string text = printFunction(fn);
  auto file = std::make_shared<SourceFile>("<" + what + ">", text);
  DiagEngine diag(file);
  std::unique_ptr<Function> parsed;
  try {
    parsed = parseFunction(text, diag);
  } catch (const std::exception& e) {
    FAIL() << what << ": parseFunction threw (it must report errors instead): " << e.what();
  }
  ASSERT_TRUE(parsed && !diag.hasErrors())
      << what << ": the printed IR does not parse back:\n" << diag.renderAll() << "\n" << text;
  const std::string again = printFunction(*parsed);
  EXPECT_EQ(text, again) << what << ": print(parse(print(f))) != print(f):\n"
                         << unifiedDiff(text, again, "printed", "reprinted");
}

TEST_P(KernelIR, RoundTrip) {
  const KernelCase& kernel = GetParam();
  Compiled c;
  std::string error;
  ASSERT_TRUE(compileCase(kernel, Size::Default, c, error)) << error;
  expectRoundTrip(*c.fn, kernel.stem + " (front end)");
  std::unique_ptr<Function> opt = optimizedCopy(*c.fn, error);
  ASSERT_NE(opt, nullptr) << error;
  expectRoundTrip(*opt, kernel.stem + " (after the block pipeline)");
}

// Compares `actual` with tests/golden/<file>, or writes it there when TL_UPDATE_GOLDEN=1.
void checkGolden(const std::string& file, const std::string& actual, const std::string& what) {
  const std::filesystem::path golden = std::filesystem::path(TL_SOURCE_DIR) / "tests" / "golden" / file;
  const char* update = std::getenv("TL_UPDATE_GOLDEN");
  if (update && std::string(update) == "1") {
    std::ofstream out(golden, std::ios::binary);
    out << actual;
    out.close();
    ASSERT_TRUE(out.good()) << "cannot write " << golden;
    std::printf("updated %s\n", golden.string().c_str());
    return;
  }

  const char* regenerate =
      "if the change is intended, regenerate every golden file with: scripts/update-golden.sh";
  std::ifstream in(golden, std::ios::binary);
  ASSERT_TRUE(in.good()) << "missing golden file " << golden << "\n" << regenerate;
  std::stringstream expected;
  expected << in.rdbuf();
  EXPECT_TRUE(expected.str() == actual)
      << what << " differs from " << golden << ":\n"
      << unifiedDiff(expected.str(), actual, "tests/golden/" + file, "actual") << regenerate;
}

// The block IR after the block pipeline (what tl-block runs).
TEST_P(KernelIR, Golden) {
  const KernelCase& kernel = GetParam();
  Compiled c;
  std::string error;
  ASSERT_TRUE(compileCase(kernel, Size::Default, c, error)) << error;
  std::unique_ptr<Function> opt = optimizedCopy(*c.fn, error);
  ASSERT_NE(opt, nullptr) << error;
  checkGolden(kernel.stem + ".ir", printFunction(*opt), "block IR of " + kernel.path + " after the pipeline");
}

// The layout snapshot (what was decided) and the thread IR (how it is done), at the default
// launch; both also round-trip through the parser.
TEST_P(KernelIR, GoldenLayoutsAndThreadIR) {
  const KernelCase& kernel = GetParam();
  Compiled c;
  std::string error;
  ASSERT_TRUE(compileCase(kernel, Size::Default, c, error)) << error;
  ThreadCompilation tc = compileToThreadIR(*c.fn, c.launch);
  expectRoundTrip(*tc.withLayouts, kernel.stem + " (with layouts)");
  expectRoundTrip(*tc.threadIR, kernel.stem + " (thread IR)");
  checkGolden(kernel.stem + ".layouts.ir", printFunction(*tc.withLayouts), "layout snapshot of " + kernel.path);
  checkGolden(kernel.stem + ".thread.ir", printFunction(*tc.threadIR), "thread IR of " + kernel.path);
}

INSTANTIATE_TEST_SUITE_P(Kernels, KernelIR, testing::ValuesIn(discoverKernels()), paramName);

// The diff helper itself: a golden failure is only useful if its diff is right.
TEST(UnifiedDiff, EqualTextsGiveNothing) { EXPECT_EQ(unifiedDiff("a\nb\n", "a\nb\n", "x", "y"), ""); }

TEST(UnifiedDiff, ShowsChangedLineWithContext) {
  const std::string a = "1\n2\n3\n4\n5\n6\n7\n8\n9\n";
  const std::string b = "1\n2\n3\n4\nfive\n6\n7\n8\n9\n";
  EXPECT_EQ(unifiedDiff(a, b, "a", "b", 2), "--- a\n+++ b\n@@ -3,5 +3,5 @@\n 3\n 4\n-5\n+five\n 6\n 7\n");
}

TEST(UnifiedDiff, SeparatesDistantChangesIntoHunks) {
  const std::string a = "a\n1\n2\n3\n4\n5\n6\nb\n";
  const std::string b = "A\n1\n2\n3\n4\n5\n6\nB\n";
  EXPECT_EQ(unifiedDiff(a, b, "x", "y", 1),
            "--- x\n+++ y\n@@ -1,2 +1,2 @@\n-a\n+A\n 1\n@@ -7,2 +7,2 @@\n 6\n-b\n+B\n");
}

TEST(UnifiedDiff, InsertionsAndDeletions) {
  EXPECT_EQ(unifiedDiff("a\nb\n", "a\nx\nb\n", "p", "q", 1), "--- p\n+++ q\n@@ -1,2 +1,3 @@\n a\n+x\n b\n");
  EXPECT_EQ(unifiedDiff("a\nb\nc\n", "a\nc\n", "p", "q", 0), "--- p\n+++ q\n@@ -2,1 +2,0 @@\n-b\n");
}

}  // namespace
}  // namespace tl::e2e
