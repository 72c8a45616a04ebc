// Line links (viz/model/LineLinks.h): every stage's text mapped back to source lines, for each
// format the stages print — tilelab IR's loc(L:C), LLVM's !dbg/!DILocation, PTX's .loc — and
// malformed input that must give "no link" rather than a crash.
#include <gtest/gtest.h>

#include "viz/model/LineLinks.h"

namespace tl::viz {
namespace {

TEST(LineLinks, SplitLinesDropsOnlyTheFinalNewline) {
  EXPECT_TRUE(splitLines("").empty());
  EXPECT_EQ(splitLines("a\nb\n").size(), 2u);
  EXPECT_EQ(splitLines("a\n\nb").size(), 3u);
  EXPECT_EQ(splitLines("a\r\nb")[0], "a");
}

TEST(LineLinks, SourceLinksToItself) {
  EXPECT_EQ(lineLinks("x\ny\nz\n", LinkFormat::Source), (std::vector<int>{1, 2, 3}));
}

TEST(LineLinks, IRUsesTheLastLocOnEachLine) {
  const char* ir =
      "func @k(%x_ptr: ptr<f32>) loc(10:5) {\n"
      "  %row = program_id {axis = 0} : i32 loc(11:11)\n"
      "  %s = constant {value = \"loc(99:1)\"} : i32 loc(12:3)\n"
      "  return\n"
      "}\n";
  EXPECT_EQ(lineLinks(ir, LinkFormat::IR), (std::vector<int>{10, 11, 12, 0, 0}));
}

TEST(LineLinks, IRToleratesBrokenLocs) {
  EXPECT_EQ(lineLinks("a loc(\nb loc(x:1)\nc loc(99999999999999999999:1)\nloc(", LinkFormat::IR),
            (std::vector<int>{0, 0, 0, 0}));
}

TEST(LineLinks, LLVMResolvesDbgThroughDILocation) {
  const char* ll =
      "define ptx_kernel void @k(ptr addrspace(1) %0) !dbg !5 {\n"
      "  %2 = load float, ptr addrspace(1) %0, align 4, !dbg !12\n"
      "  %3 = fmul float %2, %2, !dbg !13\n"
      "  ret void, !dbg !99\n"
      "}\n"
      "!5 = distinct !DISubprogram(name: \"k\", scope: !1, file: !1, line: 10, type: !6)\n"
      "!12 = !DILocation(line: 14, column: 9, scope: !5)\n"
      "!13 = !DILocation(line: 15, column: 13, scope: !5)\n";
  std::vector<int> links = lineLinks(ll, LinkFormat::LLVM);
  ASSERT_EQ(links.size(), 8u);
  EXPECT_EQ(links[0], 10);  // the define, through its DISubprogram
  EXPECT_EQ(links[1], 14);
  EXPECT_EQ(links[2], 15);
  EXPECT_EQ(links[3], 0);   // !99 is not defined
  EXPECT_EQ(links[5], 0);   // metadata lines themselves are not linked
  EXPECT_EQ(links[6], 0);
}

TEST(LineLinks, LLVMWithoutDebugInfoHasNoLinks) {
  std::vector<int> links = lineLinks("define void @k() {\n  ret void\n}\n", LinkFormat::LLVM);
  EXPECT_EQ(links, (std::vector<int>{0, 0, 0}));
}

TEST(LineLinks, PTXLocAppliesToTheFollowingInstructions) {
  const char* ptx =
      ".file 1 \"kernels/softmax.tl\"\n"
      ".visible .entry softmax_kernel(\n"
      "  .param .u64 p0\n"
      ")\n"
      "{\n"
      "  .reg .b32 %r<4>;\n"
      "  .loc 1 14 9\n"
      "  ld.global.f32 %f1, [%rd1];\n"
      "$L__BB0_1:\n"
      "  @%p1 bra $L__BB0_2;\n"
      "  .loc\t1 15 13, function_name $L__info_string0\n"
      "  max.f32 %f2, %f1, %f1;\n"
      "  ret;\n"
      "}\n"
      "  mov.u32 %r1, 0;\n";
  std::vector<int> links = lineLinks(ptx, LinkFormat::PTX);
  ASSERT_EQ(links.size(), 15u);
  EXPECT_EQ(links[5], 0);    // a directive
  EXPECT_EQ(links[6], 14);   // the .loc itself
  EXPECT_EQ(links[7], 14);
  EXPECT_EQ(links[8], 0);    // a label
  EXPECT_EQ(links[9], 14);   // a predicated branch
  EXPECT_EQ(links[10], 15);
  EXPECT_EQ(links[11], 15);
  EXPECT_EQ(links[12], 15);
  EXPECT_EQ(links[14], 0);   // after the function's end
}

TEST(LineLinks, LinesForSourceLine) {
  StageText s;
  s.sourceLine = {0, 3, 4, 3, 0};
  EXPECT_EQ(linesForSourceLine(s, 3), (std::vector<int>{1, 3}));
  EXPECT_TRUE(linesForSourceLine(s, 0).empty());
  EXPECT_TRUE(linesForSourceLine(s, 7).empty());
  EXPECT_TRUE(hasLineLinks(s));
  s.sourceLine = {0, 0};
  EXPECT_FALSE(hasLineLinks(s));
}

}  // namespace
}  // namespace tl::viz
