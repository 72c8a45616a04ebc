// ThreadGrid (viz/model/ThreadGrid.h): the Threads panel's owners per element, checked against
// Layout::coords() and against hand-worked small layouts.
#include "viz/model/ThreadGrid.h"

#include <gtest/gtest.h>

#include <set>

namespace tl::viz {
namespace {

// Every (thread, register) of the layout appears exactly once among the owners, at the element
// Layout::coords() gives.
void expectMatchesCoords(const Layout& layout, const Shape& shape, const ThreadGrid& g) {
  ASSERT_TRUE(g.ok) << g.error;
  std::set<std::pair<int, int64_t>> seen;
  for (int64_t e = 0; e < g.numel; ++e) {
    auto c = g.elementCoords(e);
    for (const ElementOwner& o : g.ownersOf(e)) {
      EXPECT_EQ(layout.coords(shape, o.thread(), o.reg), c) << "thread " << o.thread() << " reg " << o.reg;
      EXPECT_TRUE(seen.insert({o.thread(), o.reg}).second);
    }
  }
  EXPECT_EQ(static_cast<int64_t>(seen.size()), layout.numThreads() * layout.elemsPerThread(shape));
}

TEST(ThreadGrid, Blocked2DOwnersMatchLayoutCoords) {
  // 16x16 tile, 2 elements per thread along columns, 4x8 lanes, 4x1 warps: the layout tile is
  // exactly 16x16, so every element has one owner and warp w owns rows 4w..4w+3.
  auto l = Layout::blocked({1, 2}, {4, 8}, {4, 1}, {1, 0});
  Shape shape{16, 16};
  ThreadGrid g = buildThreadGrid(*l, shape);
  expectMatchesCoords(*l, shape, g);
  EXPECT_EQ(g.rows, 16);
  EXPECT_EQ(g.cols, 16);
  EXPECT_EQ(g.numWarps, 4);
  EXPECT_EQ(g.regsPerThread, 2);
  EXPECT_EQ(g.replication, 1);
  // (0, 0) and (0, 1): thread 0, registers 0 and 1; (0, 2): lane 1; (1, 0): lane 8.
  EXPECT_EQ(g.firstOwner(g.cellIndex(0, 1)).reg, 1);
  EXPECT_EQ(g.firstOwner(g.cellIndex(0, 2)).lane, 1);
  EXPECT_EQ(g.firstOwner(g.cellIndex(1, 0)).lane, 8);
  for (int w = 0; w < 4; ++w) {
    const WarpBox& b = g.warps[static_cast<size_t>(w)];
    EXPECT_EQ(b.rowMin, 4 * w);
    EXPECT_EQ(b.rowMax, 4 * w + 3);
    EXPECT_EQ(b.colMin, 0);
    EXPECT_EQ(b.colMax, 15);
    EXPECT_EQ(b.cells, 64);
  }
  EXPECT_TRUE(g.edges(3, 5) & ThreadGrid::kEdgeBottom);   // row 4 is warp 1
  EXPECT_FALSE(g.edges(2, 5) & ThreadGrid::kEdgeBottom);
  EXPECT_FALSE(g.edges(3, 5) & ThreadGrid::kEdgeRight);
  EXPECT_EQ(g.edges(15, 15), 0);                          // the grid's own border is not an edge
}

TEST(ThreadGrid, EveryElementOwnedReplicationTimes) {
  // 4 warps x 32 lanes over an 8x8 tile: 128 threads, 64 elements, one register each -> 2 each.
  auto l = Layout::blocked({1, 1}, {4, 8}, {4, 1}, {1, 0});
  Shape shape{8, 8};
  ThreadGrid g = buildThreadGrid(*l, shape);
  expectMatchesCoords(*l, shape, g);
  EXPECT_EQ(g.replication, 2);
  for (int64_t e = 0; e < g.numel; ++e) EXPECT_EQ(static_cast<int64_t>(g.ownersOf(e).size()), g.replication);
  std::string d = describeElement(g, 0);
  EXPECT_NE(d.find("element (0, 0): warp 0, lane 0, register 0 (thread 0)"), std::string::npos) << d;
  EXPECT_NE(d.find("also held by w2 lane 0 r0"), std::string::npos) << d;
}

TEST(ThreadGrid, SliceLayoutIsReplicatedAcrossTheReducedDimension) {
  auto parent = Layout::blocked({1, 4}, {1, 32}, {4, 1}, {1, 0});
  auto s = Layout::slice(1, parent);  // the result of a reduction over columns: one per row
  Shape shape{4};
  ThreadGrid g = buildThreadGrid(*s, shape);
  expectMatchesCoords(*s, shape, g);
  EXPECT_TRUE(g.oneD);
  EXPECT_EQ(g.replication, 32);  // the 32 lanes along the reduced dimension hold the same row
  // Row i is held by warp i's 32 lanes.
  for (int64_t e = 0; e < 4; ++e)
    for (const ElementOwner& o : g.ownersOf(e)) EXPECT_EQ(o.warp, e);
}

TEST(ThreadGrid, OneDFoldsIntoRowsAndOutlinesWarps) {
  // 1024 elements, 4 per thread, 4 warps: warp w owns [128w, 128w + 128) then repeats at 512.
  auto l = Layout::blocked({4}, {32}, {4}, {0});
  Shape shape{1024};
  ThreadGrid g = buildThreadGrid(*l, shape, 64);
  expectMatchesCoords(*l, shape, g);
  EXPECT_EQ(g.cols, 64);
  EXPECT_EQ(g.rows, 16);
  EXPECT_EQ(g.firstOwner(g.cellIndex(0, 5)).lane, 1);      // element 5: lane 1, register 1
  EXPECT_EQ(g.firstOwner(g.cellIndex(0, 5)).reg, 1);
  EXPECT_EQ(g.firstOwner(g.cellIndex(2, 0)).warp, 1);      // element 128
  EXPECT_EQ(g.firstOwner(g.cellIndex(8, 0)).reg, 4);       // element 512: warp 0 again, register 4
  // Row 1 (elements 64..127, warp 0) sits above row 2 (warp 1): a bottom edge; inside a row none.
  EXPECT_TRUE(g.edges(1, 10) & ThreadGrid::kEdgeBottom);
  EXPECT_FALSE(g.edges(0, 10) & ThreadGrid::kEdgeBottom);
  EXPECT_FALSE(g.edges(1, 10) & ThreadGrid::kEdgeRight);
  EXPECT_EQ(g.warps[1].rowMin, 2);
  EXPECT_EQ(g.warps[1].rowMax, 11);
}

TEST(ThreadGrid, RaggedOneDHasEmptyCellsPastTheEnd) {
  auto l = Layout::blocked({1}, {32}, {1}, {0});
  ThreadGrid g = buildThreadGrid(*l, Shape{40}, 32);
  ASSERT_TRUE(g.ok) << g.error;
  EXPECT_EQ(g.rows, 2);
  EXPECT_EQ(g.cellIndex(1, 7), 39);
  EXPECT_EQ(g.cellIndex(1, 8), -1);
  // Elements 32..39 wrap onto lanes 0..7 (replication is fractional: 32 threads, 40 elements;
  // each element has at least one owner).
  EXPECT_EQ(g.firstOwner(39).lane, 7);
}

TEST(ThreadGrid, RejectsWhatItCannotDraw) {
  auto l3 = Layout::blocked({1, 1, 1}, {1, 4, 8}, {1, 1, 1}, {2, 1, 0});
  ThreadGrid g = buildThreadGrid(*l3, Shape{2, 4, 8});
  EXPECT_FALSE(g.ok);
  EXPECT_NE(g.error.find("only 1-D and 2-D"), std::string::npos) << g.error;

  auto l2 = Layout::blocked({1, 1}, {4, 8}, {1, 1}, {1, 0});
  g = buildThreadGrid(*l2, Shape{64});
  EXPECT_FALSE(g.ok);
  EXPECT_NE(g.error.find("rank"), std::string::npos) << g.error;

  g = buildThreadGrid(*l2, Shape{4096, 4096});
  EXPECT_FALSE(g.ok);
  EXPECT_NE(g.error.find("too many to draw"), std::string::npos) << g.error;

  g = buildThreadGrid(*l2, Shape{0, 4});
  EXPECT_FALSE(g.ok);
  EXPECT_EQ(describeElement(g, 0), "");
}

// ----- the legend's words for where a warp's elements are -----------------------------------

TEST(ThreadGrid, DescribeIndexSetSaysThePatternTruthfully) {
  EXPECT_EQ(describeIndexSet({}, "row", "rows"), "no rows");
  EXPECT_EQ(describeIndexSet({3}, "row", "rows"), "row 3");
  EXPECT_EQ(describeIndexSet({0, 1, 2, 3}, "row", "rows"), "rows 0-3");
  EXPECT_EQ(describeIndexSet({0, 4, 8, 12, 16, 20, 24, 28}, "row", "rows"), "rows 0, 4, 8, ..., 28 (every 4th)");
  EXPECT_EQ(describeIndexSet({0, 32, 64}, "row", "rows"), "rows 0, 32, 64 (every 32nd)");
  EXPECT_EQ(describeIndexSet({0, 1, 8, 9, 16, 17, 24, 25, 32, 33}, "row", "rows"), "rows 0-1, 8-9, 16-17, ..., 32-33 (2 of every 8)");
  EXPECT_EQ(describeIndexSet({0, 5}, "row", "rows"), "rows 0, 5");
  EXPECT_EQ(describeIndexSet({0, 1, 5, 9, 10, 20, 40}, "column", "columns"), "columns 0-1, 5, 9-10, 20, ..., 40 (7 columns)");
}

// The case: a warp that owns every fourth row must not read "rows 0-28".
TEST(ThreadGrid, LegendOfStridedRowOwnership) {
  // 32x32 tile; each warp's layout tile is 1 row of 32 columns (32 lanes x 1), 4 warps stacked:
  // the 4-row layout tile repeats 8 times down, so warp w owns rows w, w+4, ..., w+28.
  auto l = Layout::blocked({1, 1}, {1, 32}, {4, 1}, {1, 0});
  ThreadGrid g = buildThreadGrid(*l, Shape{32, 32});
  ASSERT_TRUE(g.ok) << g.error;
  EXPECT_EQ(g.warps[0].rowMin, 0);
  EXPECT_EQ(g.warps[0].rowMax, 28);  // the bounding box spans 0-28 ...
  EXPECT_EQ(g.warps[0].where, "rows 0, 4, 8, ..., 28 (every 4th); columns 0-31");  // ... the legend does not
  EXPECT_EQ(g.warps[3].where, "rows 3, 7, 11, ..., 31 (every 4th); columns 0-31");
  // 1-D: elements, in runs.
  auto l1 = Layout::blocked({4}, {32}, {4}, {0});
  ThreadGrid g1 = buildThreadGrid(*l1, Shape{1024});
  ASSERT_TRUE(g1.ok) << g1.error;
  EXPECT_EQ(g1.warps[1].where, "elements 128-255, 640-767");
}

// The Threads panel's fragment view: every element of each operand held by exactly the lane
// and fragment element the PTX ISA's table says (ir/MmaLayout.h), one warp, no replicas.
TEST(ThreadGrid, FragmentGridsFollowTheMmaTables) {
  for (DType d : {DType::F16, DType::F32, DType::F8E4M3}) {
    const MmaInstr instr = *mmaInstrFor(d, true);
    for (MmaOperand op : {MmaOperand::A, MmaOperand::B, MmaOperand::C}) {
      ThreadGrid g = buildFragmentGrid(instr, op);
      ASSERT_TRUE(g.ok) << g.error;
      EXPECT_EQ(g.numWarps, 1);
      EXPECT_EQ(g.regsPerThread, instr.regs(op));
      EXPECT_EQ(g.rows, op == MmaOperand::B ? instr.k : instr.m);
      EXPECT_EQ(g.cols, op == MmaOperand::A ? instr.k : instr.n);
      EXPECT_NE(g.layoutText.find(instr.ptx()), std::string::npos);
      for (int lane = 0; lane < 32; ++lane)
        for (int e = 0; e < instr.regs(op); ++e) {
          auto [r, c] = mmaFragmentCoord(instr, op, lane, e);
          auto owners = g.ownersOf(g.cellIndex(r, c));
          ASSERT_EQ(owners.size(), 1u);
          EXPECT_EQ(owners[0].lane, lane);
          EXPECT_EQ(owners[0].reg, e);
        }
    }
  }
  // C of m16n8k16: lane 5 (g = 1, t = 1) holds (1, 2), (1, 3), (9, 2), (9, 3) as c0..c3.
  ThreadGrid c = buildFragmentGrid(*mmaInstrFor(DType::BF16, true), MmaOperand::C);
  EXPECT_EQ(c.firstOwner(c.cellIndex(9, 3)).lane, 5);
  EXPECT_EQ(c.firstOwner(c.cellIndex(9, 3)).reg, 3);
}

}  // namespace
}  // namespace tl::viz
