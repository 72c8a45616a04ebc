// The tensor-core fragment tables (ir/MmaLayout.h) against the PTX ISA (9.7.14.5, "Matrix
// Fragments for mma.m16n8k*"): the ISA's row/col formulas written out again here per shape, the
// figures' corner entries, and the coverage every table must have (each matrix element held by
// exactly one lane's one register); and the accumulator layout tilelab gives tensor-core dots.
#include <gtest/gtest.h>

#include <set>

#include "ir/MmaLayout.h"

namespace tl {
namespace {

using P = std::pair<int, int>;

const MmaInstr kF16{16, 8, 16, DType::F16}, kBF16{16, 8, 16, DType::BF16}, kTf32{16, 8, 8, DType::F32},
    kE4M3{16, 8, 32, DType::F8E4M3}, kE5M2{16, 8, 32, DType::F8E5M2};

TEST(MmaLayout, InstructionChoiceAndNames) {
  EXPECT_EQ(*mmaInstrFor(DType::F16, false), kF16);
  EXPECT_EQ(*mmaInstrFor(DType::BF16, true), kBF16);
  EXPECT_EQ(*mmaInstrFor(DType::F8E4M3, false), kE4M3);
  EXPECT_EQ(*mmaInstrFor(DType::F32, true), kTf32);
  EXPECT_FALSE(mmaInstrFor(DType::F32, false));  // ieee: FMAs
  EXPECT_FALSE(mmaInstrFor(DType::I32, true));
  EXPECT_EQ(kBF16.ptx(), "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32");
  EXPECT_EQ(kTf32.ptx(), "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32");
  EXPECT_EQ(kE5M2.ptx(), "mma.sync.aligned.m16n8k32.row.col.f32.e5m2.e5m2.f32");
  EXPECT_EQ(kE4M3.minArch(), 89);
  EXPECT_EQ(kF16.minArch(), 80);
  for (const MmaInstr& i : {kF16, kTf32, kE4M3}) {
    EXPECT_EQ(i.regs(MmaOperand::C), 4);
    EXPECT_EQ(*mmaInstrOf(i.in, i.regs(MmaOperand::A)), i);
  }
  EXPECT_EQ(kF16.regs(MmaOperand::A), 8);
  EXPECT_EQ(kF16.regs(MmaOperand::B), 4);
  EXPECT_EQ(kTf32.regs(MmaOperand::A), 4);
  EXPECT_EQ(kTf32.regs(MmaOperand::B), 2);
  EXPECT_EQ(kE4M3.regs(MmaOperand::A), 16);
  EXPECT_EQ(kE4M3.regs(MmaOperand::B), 8);
  EXPECT_FALSE(mmaInstrOf(DType::F16, 4));
}

// The ISA's formulas, spelled as the ISA spells them (groupID = lane >> 2, threadID_in_group = lane % 4).
P isaF16A(int lane, int i) {
  int g = lane >> 2, t = lane % 4;
  int row = (i < 2 || (i >= 4 && i < 6)) ? g : g + 8;
  int col = i < 4 ? t * 2 + (i & 1) : t * 2 + (i & 1) + 8;
  return {row, col};
}
P isaF16B(int lane, int i) {
  int g = lane >> 2, t = lane % 4;
  return {i < 2 ? t * 2 + (i & 1) : t * 2 + (i & 1) + 8, g};
}
P isaTf32A(int lane, int i) {
  int g = lane >> 2, t = lane % 4;
  return {(i == 0 || i == 2) ? g : g + 8, i < 2 ? t : t + 4};
}
P isaTf32B(int lane, int i) {
  int g = lane >> 2, t = lane % 4;
  return {i == 0 ? t : t + 4, g};
}
P isaFp8A(int lane, int i) {
  int g = lane >> 2, t = lane % 4;
  int row = (i < 4 || (i >= 8 && i < 12)) ? g : g + 8;
  int col = i < 8 ? t * 4 + (i & 3) : t * 4 + (i & 3) + 16;
  return {row, col};
}
P isaFp8B(int lane, int i) {
  int g = lane >> 2, t = lane % 4;
  return {i < 4 ? t * 4 + (i & 3) : t * 4 + (i & 3) + 16, g};
}
P isaC(int lane, int i) {
  int g = lane >> 2, t = lane % 4;
  return {i < 2 ? g : g + 8, t * 2 + (i & 1)};
}

TEST(MmaLayout, FragmentsFollowTheIsaFormulas) {
  for (int l = 0; l < 32; ++l) {
    for (int e = 0; e < 8; ++e) {
      EXPECT_EQ(mmaFragmentCoord(kF16, MmaOperand::A, l, e), isaF16A(l, e)) << "lane " << l << " a" << e;
      EXPECT_EQ(mmaFragmentCoord(kBF16, MmaOperand::A, l, e), isaF16A(l, e)) << "lane " << l << " a" << e;
    }
    for (int e = 0; e < 4; ++e) {
      EXPECT_EQ(mmaFragmentCoord(kF16, MmaOperand::B, l, e), isaF16B(l, e)) << "lane " << l << " b" << e;
      EXPECT_EQ(mmaFragmentCoord(kTf32, MmaOperand::A, l, e), isaTf32A(l, e)) << "lane " << l << " a" << e;
      for (const MmaInstr& i : {kF16, kTf32, kE4M3})
        EXPECT_EQ(mmaFragmentCoord(i, MmaOperand::C, l, e), isaC(l, e)) << i.shapeName() << " lane " << l << " c" << e;
    }
    for (int e = 0; e < 2; ++e) EXPECT_EQ(mmaFragmentCoord(kTf32, MmaOperand::B, l, e), isaTf32B(l, e));
    for (int e = 0; e < 16; ++e) EXPECT_EQ(mmaFragmentCoord(kE4M3, MmaOperand::A, l, e), isaFp8A(l, e));
    for (int e = 0; e < 8; ++e) EXPECT_EQ(mmaFragmentCoord(kE5M2, MmaOperand::B, l, e), isaFp8B(l, e));
  }
}

// Corner entries read off the ISA's fragment figures for these shapes.
TEST(MmaLayout, FigureCorners) {
  EXPECT_EQ(mmaFragmentCoord(kF16, MmaOperand::A, 0, 0), P(0, 0));     // T0 a0 at (0, 0)
  EXPECT_EQ(mmaFragmentCoord(kF16, MmaOperand::A, 31, 7), P(15, 15));  // T31 a7 at (15, 15)
  EXPECT_EQ(mmaFragmentCoord(kF16, MmaOperand::A, 3, 5), P(0, 15));    // T3 a5 at row 0, col 15
  EXPECT_EQ(mmaFragmentCoord(kF16, MmaOperand::B, 31, 3), P(15, 7));   // T31 b3 at (15, 7)
  EXPECT_EQ(mmaFragmentCoord(kF16, MmaOperand::B, 4, 0), P(0, 1));     // T4 b0 at k 0, n 1
  EXPECT_EQ(mmaFragmentCoord(kTf32, MmaOperand::A, 1, 1), P(8, 1));    // T1 a1 at (8, 1)
  EXPECT_EQ(mmaFragmentCoord(kTf32, MmaOperand::B, 30, 1), P(6, 7));   // T30 b1 at k 6, n 7
  EXPECT_EQ(mmaFragmentCoord(kE4M3, MmaOperand::A, 31, 15), P(15, 31));
  EXPECT_EQ(mmaFragmentCoord(kE4M3, MmaOperand::B, 1, 4), P(20, 0));   // T1 b4 at k 4 + 16
  EXPECT_EQ(mmaFragmentCoord(kF16, MmaOperand::C, 31, 3), P(15, 7));
}

TEST(MmaLayout, EveryElementHeldOnce) {
  for (const MmaInstr& i : {kF16, kBF16, kTf32, kE4M3, kE5M2}) {
    for (MmaOperand op : {MmaOperand::A, MmaOperand::B, MmaOperand::C}) {
      const int rows = op == MmaOperand::B ? i.k : i.m, cols = op == MmaOperand::A ? i.k : i.n;
      std::set<P> seen;
      for (int l = 0; l < 32; ++l)
        for (int e = 0; e < i.regs(op); ++e) {
          P p = mmaFragmentCoord(i, op, l, e);
          EXPECT_TRUE(p.first >= 0 && p.first < rows && p.second >= 0 && p.second < cols) << i.shapeName();
          EXPECT_TRUE(seen.insert(p).second) << i.shapeName() << " element held twice";
        }
      EXPECT_EQ(static_cast<int>(seen.size()), rows * cols) << i.shapeName();
    }
  }
}

TEST(MmaLayout, AccumulatorLayout) {
  // Triton's warpsPerTile: 128 x 128 with 4 warps -> 2 x 2; a wide tile puts warps along N.
  LayoutPtr l = mmaAccumulatorLayout(128, 128, 4);
  ASSERT_TRUE(l);
  EXPECT_EQ(l->str(), "#blocked<spt=[1,2], tpw=[8,4], wpc=[2,2], order=[1,0]>");
  EXPECT_EQ(mmaAccumulatorLayout(16, 64, 4)->warpsPerCTA(), (std::vector<int>{1, 4}));
  EXPECT_EQ(mmaAccumulatorLayout(64, 64, 8)->warpsPerCTA(), (std::vector<int>{4, 2}));
  EXPECT_EQ(mmaAccumulatorLayout(16, 8, 1)->warpsPerCTA(), (std::vector<int>{1, 1}));
  std::string why;
  EXPECT_FALSE(mmaAccumulatorLayout(16, 8, 4, &why));
  EXPECT_NE(why.find("16 x 8 pieces"), std::string::npos) << why;
  EXPECT_FALSE(mmaAccumulatorLayout(8, 64, 1));  // M below 16
  // Chained dots (rowsOnly): every warp along M when M has 16 rows per warp, else the usual rule.
  EXPECT_EQ(mmaAccumulatorLayout(128, 64, 8, nullptr, true)->warpsPerCTA(), (std::vector<int>{8, 1}));
  EXPECT_EQ(mmaAccumulatorLayout(64, 128, 4, nullptr, true)->warpsPerCTA(), (std::vector<int>{4, 1}));
  EXPECT_EQ(mmaAccumulatorLayout(64, 64, 8, nullptr, true)->warpsPerCTA(), (std::vector<int>{4, 2}));
  // With one warp and a 16 x 8 tile, lane l's registers are exactly its C fragment (rows g and
  // g + 8 are the two row-repeats of the 8 x 8 layout tile).
  LayoutPtr one = mmaAccumulatorLayout(16, 8, 1);
  ASSERT_EQ(one->elemsPerThread({16, 8}), 4);
  for (int lane = 0; lane < 32; ++lane) {
    std::set<P> regs, frag;
    for (int r = 0; r < 4; ++r) {
      auto c = one->coords({16, 8}, lane, r);
      regs.insert({int(c[0]), int(c[1])});
      frag.insert(mmaFragmentCoord(kF16, MmaOperand::C, lane, r));
    }
    EXPECT_EQ(regs, frag) << "lane " << lane;
  }
}

}  // namespace
}  // namespace tl
