// The register-tile accumulator of dots on FMAs (fmaAccumulatorLayout, ir/Layout.h): every
// element owned exactly once at every tile and warp count a kernel can ask for, the classic
// 8 x 8 patch of 4 x 4 chunks at 128 x 128 on 8 warps, chunks halved (rows first) for small
// tiles, and nullptr where threads would be idle.
#include <gtest/gtest.h>

#include <map>

#include "ir/Layout.h"

namespace tl {
namespace {

// Per-thread extent of `l` along dim d for a tile of `shape`.
int64_t perThread(const Layout& l, const Shape& shape, size_t d) {
  return shape[d] / (int64_t(l.threadsPerWarp()[d]) * l.warpsPerCTA()[d]);
}

TEST(FmaLayout, TheClassicRegisterTile) {
  LayoutPtr l = fmaAccumulatorLayout(128, 128, 8);
  ASSERT_TRUE(l);
  EXPECT_EQ(l->str(), "#blocked<spt=[4,4], tpw=[4,8], wpc=[4,2], order=[1,0]>");
  EXPECT_EQ(l->elemsPerThread({128, 128}), 64);
  // Thread 0 holds rows 0-3 and 64-67, columns 0-3 and 64-67: two 16-byte runs each way.
  std::map<int64_t, int> rows, cols;
  for (int64_t r = 0; r < 64; ++r) {
    auto c = l->coords({128, 128}, 0, r);
    ++rows[c[0]];
    ++cols[c[1]];
  }
  EXPECT_EQ(rows, (std::map<int64_t, int>{{0, 8}, {1, 8}, {2, 8}, {3, 8}, {64, 8}, {65, 8}, {66, 8}, {67, 8}}));
  EXPECT_EQ(cols, (std::map<int64_t, int>{{0, 8}, {1, 8}, {2, 8}, {3, 8}, {64, 8}, {65, 8}, {66, 8}, {67, 8}}));
  // Lanes go along N first: 8 lanes of 4 columns are a warp's 128 contiguous bytes of a row.
  EXPECT_EQ(fmaAccumulatorLayout(128, 64, 4)->str(), "#blocked<spt=[4,4], tpw=[8,4], wpc=[2,2], order=[1,0]>");
  EXPECT_EQ(fmaAccumulatorLayout(64, 64, 4)->str(), "#blocked<spt=[4,4], tpw=[4,8], wpc=[4,1], order=[1,0]>");
}

TEST(FmaLayout, SmallTilesHalveTheChunksRowsFirst) {
  // 32 x 32 on 8 warps: 4 elements a thread, as one row of 4 (the stores' vector), not 2 x 2.
  LayoutPtr l = fmaAccumulatorLayout(32, 32, 8);
  ASSERT_TRUE(l);
  EXPECT_EQ(l->sizePerThread(), (std::vector<int>{1, 4}));
  EXPECT_EQ(fmaAccumulatorLayout(16, 4, 1)->sizePerThread(), (std::vector<int>{1, 2}));
  EXPECT_EQ(fmaAccumulatorLayout(1, 128, 4)->sizePerThread(), (std::vector<int>{1, 1}));
  // Fewer elements than threads: no register tile (the dot keeps the layout it is given).
  EXPECT_FALSE(fmaAccumulatorLayout(8, 8, 4));
  EXPECT_FALSE(fmaAccumulatorLayout(16, 4, 4));
}

TEST(FmaLayout, EveryElementOwnedOnceAtEveryShape) {
  for (int64_t m = 1; m <= 256; m *= 2)
    for (int64_t n = 1; n <= 256; n *= 2)
      for (int warps = 1; warps <= 16; warps *= 2) {
        LayoutPtr l = fmaAccumulatorLayout(m, n, warps);
        const Shape shape{m, n};
        if (m * n < 32 * warps) {
          EXPECT_FALSE(l) << m << "x" << n << " at " << warps << " warps";
          continue;
        }
        ASSERT_TRUE(l) << m << "x" << n << " at " << warps << " warps";
        SCOPED_TRACE(std::to_string(m) + "x" + std::to_string(n) + " at " + std::to_string(warps) + " warps: " + l->str());
        EXPECT_EQ(l->replication(shape), 1);
        EXPECT_EQ(l->elemsPerThread(shape) * 32 * warps, m * n);
        std::vector<int> owners(size_t(m * n), 0);
        for (int t = 0; t < 32 * warps; ++t)
          for (int64_t r = 0; r < l->elemsPerThread(shape); ++r) {
            auto c = l->coords(shape, t, r);
            ++owners[size_t(c[0] * n + c[1])];
          }
        for (int o : owners) ASSERT_EQ(o, 1);
        // Chunks of at most 4 x 4, and the per-thread patch at least one chunk each way.
        EXPECT_LE(l->sizePerThread()[0], 4);
        EXPECT_LE(l->sizePerThread()[1], 4);
        EXPECT_GE(perThread(*l, shape, 0), l->sizePerThread()[0]);
        EXPECT_GE(perThread(*l, shape, 1), l->sizePerThread()[1]);
      }
}

}  // namespace
}  // namespace tl
