// Ownership maps (stages/thread/OwnershipMap.h): exact text for small layouts, truncation of
// large tiles, the per-thread listing, and finding values by their printed names.
#include <gtest/gtest.h>

#include "ir/Printer.h"
#include "layout_test_util.h"
#include "thread/OwnershipMap.h"

using namespace tl;
using namespace tl::layout_test;

TEST(OwnershipMap, Small1DTileWithReplication) {
  auto l = defaultBlockedLayout({8}, 1, 2);
  OwnershipMapOptions o;
  o.threads = {0, 3, 4};
  EXPECT_EQ(renderOwnershipMap(*l, {8}, o),
            "layout #blocked<spt=[2], tpw=[32], wpc=[1], order=[0]> on a 8 tile: 32 threads (1 warp x 32 lanes), "
            "2 registers per thread, each element held by 8 threads\n"
            "cell = w<warp>:t<lane>/r<register index in that thread>; * = also held by other threads (the lowest "
            "thread is shown)\n"
            "  [0..7] w0:t0/r0* w0:t0/r1* w0:t1/r0* w0:t1/r1* w0:t2/r0* w0:t2/r1* w0:t3/r0* w0:t3/r1*\n"
            "thread 0 (warp 0, lane 0) owns [0..1] (r0-r1)\n"
            "thread 3 (warp 0, lane 3) owns [6..7] (r0-r1)\n"
            "thread 4 (warp 0, lane 4) owns [0..1] (r0-r1)\n");
}

TEST(OwnershipMap, Softmax1DRowIsCutInTheMiddle) {
  auto l = defaultBlockedLayout({1024}, 4, 4);
  std::string s = renderOwnershipMap(*l, {1024});
  // Cells are padded to the widest one ("w0:t10/r0"), so columns line up.
  EXPECT_NE(s.find("  [   0..   7] w0:t0/r0  w0:t0/r1  w0:t0/r2  w0:t0/r3  w0:t1/r0  w0:t1/r1  w0:t1/r2  w0:t1/r3\n"), std::string::npos) << s;
  EXPECT_NE(s.find("  ...\n"), std::string::npos);
  EXPECT_NE(s.find("  [1016..1023] w3:t30/r4 w3:t30/r5 w3:t30/r6 w3:t30/r7 w3:t31/r4 w3:t31/r5 w3:t31/r6 w3:t31/r7\n"), std::string::npos) << s;
  EXPECT_NE(s.find("thread 1 (warp 0, lane 1) owns [4..7] (r0-r3), [516..519] (r4-r7)\n"), std::string::npos);
  EXPECT_NE(s.find("thread 96 (warp 3, lane 0) owns [384..387] (r0-r3), [896..899] (r4-r7)\n"), std::string::npos);
  // 16 element lines plus the cut.
  size_t lines = 0;
  for (size_t at = 0; (at = s.find("\n  [", at)) != std::string::npos; ++at) ++lines;
  EXPECT_EQ(lines, 16u);
}

TEST(OwnershipMap, TwoDimensionalGrid) {
  auto l = defaultBlockedLayout({4, 8}, 1, 2);  // spt [1,2], tpw [8,4]: 4 lanes per row, rows wrap
  OwnershipMapOptions o;
  o.listing = false;
  std::string s = renderOwnershipMap(*l, {4, 8}, o);
  EXPECT_EQ(s,
            "layout #blocked<spt=[1,2], tpw=[8,4], wpc=[1,1], order=[1,0]> on a 4x8 tile: 32 threads (1 warp x 32 "
            "lanes), 2 registers per thread, each element held by 2 threads\n"
            "cell = w<warp>:t<lane>/r<register index in that thread>; * = also held by other threads (the lowest "
            "thread is shown)\n"
            "    0          1          2          3          4          5          6          7\n"
            "  0 w0:t0/r0*  w0:t0/r1*  w0:t1/r0*  w0:t1/r1*  w0:t2/r0*  w0:t2/r1*  w0:t3/r0*  w0:t3/r1*\n"
            "  1 w0:t4/r0*  w0:t4/r1*  w0:t5/r0*  w0:t5/r1*  w0:t6/r0*  w0:t6/r1*  w0:t7/r0*  w0:t7/r1*\n"
            "  2 w0:t8/r0*  w0:t8/r1*  w0:t9/r0*  w0:t9/r1*  w0:t10/r0* w0:t10/r1* w0:t11/r0* w0:t11/r1*\n"
            "  3 w0:t12/r0* w0:t12/r1* w0:t13/r0* w0:t13/r1* w0:t14/r0* w0:t14/r1* w0:t15/r0* w0:t15/r1*\n");
}

TEST(OwnershipMap, LargeGridsAreCut) {
  auto l = defaultBlockedLayout({128, 128}, 8, 4);
  std::string s = renderOwnershipMap(*l, {128, 128});
  // Header: columns 0..7, the cut, 120..127; rows likewise.
  std::string header = s.substr(s.find("\n", s.find("cell =")) + 1);
  header = header.substr(0, header.find("\n"));
  EXPECT_NE(header.find(" 7 "), std::string::npos) << header;
  EXPECT_NE(header.find("..."), std::string::npos);
  EXPECT_NE(header.find(" 120 "), std::string::npos);
  EXPECT_EQ(header.find(" 64 "), std::string::npos);
  EXPECT_NE(s.find("\n  ... "), std::string::npos);
  EXPECT_EQ(s.find("\n   64 "), std::string::npos);
  // The last row and column: thread coordinates agree with coords().
  auto c = l->coords({128, 128}, 255, l->elemsPerThread({128, 128}) - 1);
  EXPECT_EQ(c, (std::vector<int64_t>{127, 127}));
  EXPECT_NE(s.find("w7:t31/r" + std::to_string(l->elemsPerThread({128, 128}) - 1) + "\n"), std::string::npos) << s;
}

TEST(OwnershipMap, ThreadListing2DAndSlices) {
  auto l = defaultBlockedLayout({32, 32}, 4, 4);
  EXPECT_EQ(describeThread(*l, {32, 32}, 37), "thread 37 (warp 1, lane 5) owns (4, 20..23) (r0-r3), (20, 20..23) (r4-r7)");
  auto s = Layout::slice(1, l);
  EXPECT_EQ(describeThread(*s, {32}, 37), "thread 37 (warp 1, lane 5) owns [4] (r0), [20] (r1)");
  auto col = defaultBlockedLayout({32, 32}, 4, 4, {0, 1});
  EXPECT_EQ(describeThread(*col, {32, 32}, 1), "thread 1 (warp 0, lane 1) owns (4..7, 0) (r0-r3), (4..7, 16) (r4-r7)");
  EXPECT_EQ(defaultListedThreads(4), (std::vector<int>{0, 1, 31, 32, 64, 96}));
}

TEST(OwnershipMap, ValuesByPrintedName) {
  auto k = compileWithLayouts("softmax", 4);
  ASSERT_TRUE(k);
  const Function& fn = *k->ir;
  std::string ir = printFunction(fn);
  const Value* x = findValueByName(fn, "x");
  const Value* x1 = findValueByName(fn, "%x.1");
  ASSERT_TRUE(x && x1);
  EXPECT_NE(x, x1);
  EXPECT_EQ(x->def->kind, OpKind::Load);
  EXPECT_EQ(x1->def->kind, OpKind::Sub);
  EXPECT_NE(ir.find("%x.1 = sub"), std::string::npos);
  EXPECT_EQ(findValueByName(fn, "row")->def->kind, OpKind::ProgramId);
  EXPECT_EQ(findValueByName(fn, "x_ptr"), fn.param(0));
  EXPECT_EQ(findValueByName(fn, "nope"), nullptr);
  std::string m = renderOwnershipMap(*x, "%x");
  EXPECT_EQ(m.rfind("%x : <1024xf32, #blocked<spt=[1], tpw=[32], wpc=[4], order=[0]>>\nlayout ", 0), 0u) << m;
  EXPECT_EQ(renderOwnershipMap(*findValueByName(fn, "row"), "%row"),
            "%row : i32\na scalar: every thread of the block holds the same value (no layout)\n");
  auto b = compileBlock("softmax");
  ASSERT_TRUE(b);
  EXPECT_NE(renderOwnershipMap(*findValueByName(*b->ir, "x"), "%x").find("no layout yet"), std::string::npos);
}

TEST(OwnershipMap, RankMismatchIsExplained) {
  auto l = defaultBlockedLayout({32, 32}, 4, 4);
  EXPECT_EQ(renderOwnershipMap(*l, {32}), "cannot draw " + l->str() + " on a tile of rank 1\n");
}
