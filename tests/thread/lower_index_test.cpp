// The numbers behind the lowering's index math (LayoutGeom) agree with Layout::coords, and the
// shared-memory allocator reuses space only between buffers whose lifetimes do not overlap.
#include <gtest/gtest.h>

#include "thread/LowerCommon.h"

namespace tl::lower {
namespace {

// LayoutGeom's formula, evaluated on the CPU, for register r of thread t.
std::vector<int64_t> geomCoords(const LayoutGeom& g, int t, int64_t r) {
  int lane = t % kWarpSize, warp = t / kWarpSize;
  auto dig = g.digits(r);
  std::vector<int64_t> c;
  for (int d : g.kept) {
    int64_t ld = (lane / g.laneStride[d]) % g.tpw[d], wd = (warp / g.warpStride[d]) % g.wpc[d];
    int64_t u = (wd * g.tpw[d] + ld) * g.spt[d] + (dig[d] / g.spt[d]) * g.tile[d] + dig[d] % g.spt[d];
    c.push_back(u % g.full[d]);
  }
  return c;
}

void expectSameAsLayout(const LayoutPtr& l, const Shape& s) {
  LayoutGeom g = LayoutGeom::of(*l, s);
  ASSERT_EQ(g.numRegs, l->elemsPerThread(s)) << l->str();
  for (int t = 0; t < l->numThreads(); ++t)
    for (int64_t r = 0; r < g.numRegs; ++r) {
      ASSERT_EQ(geomCoords(g, t, r), l->coords(s, t, r)) << l->str() << " thread " << t << " reg " << r;
      ASSERT_EQ(g.regOf(g.digits(r)), r);
    }
}

TEST(LowerIndex, GeometryMatchesLayoutCoords) {
  for (int nw : {1, 2, 4, 8}) {
    for (Shape s : {Shape{1024}, Shape{64}, Shape{8}, Shape{32, 32}, Shape{32, 16}, Shape{16, 64}, Shape{4, 8}, Shape{128, 2}}) {
      for (int vec : {1, 4}) {
        LayoutPtr l = defaultBlockedLayout(s, nw, vec);
        expectSameAsLayout(l, s);
        for (int d = 0; d < static_cast<int>(s.size()); ++d) {
          Shape sliced = s;
          sliced.erase(sliced.begin() + d);
          expectSameAsLayout(Layout::slice(d, l), sliced);
        }
      }
    }
  }
  // A column-major 2-D layout, and a slice of a slice (a full reduction of a 2-D tile).
  LayoutPtr cm = Layout::blocked({2, 1}, {8, 4}, {2, 2}, {0, 1});
  expectSameAsLayout(cm, {32, 16});
  expectSameAsLayout(Layout::slice(0, Layout::slice(1, cm)), {});
  expectSameAsLayout(Layout::slice(0, cm), {16});
}

TEST(LowerIndex, StaticRegisterMapForBroadcast) {
  // <32x1> -> <32x32> in one layout: every thread already holds its row's element.
  LayoutPtr l = defaultBlockedLayout({32, 32}, 4, 1);
  Type src = Type::tile(DType::F32, {32, 1}).withLayout(l), dst = Type::tile(DType::F32, {32, 32}).withLayout(l);
  auto map = staticRegisterMap(src, dst, [](const std::vector<int64_t>& c) { return std::vector<int64_t>{c[0], 0}; });
  ASSERT_TRUE(map);
  EXPECT_EQ(static_cast<int64_t>(map->size()), l->elemsPerThread({32, 32}));
  // A transpose-like change of layout is not a per-thread permutation.
  LayoutPtr other = Layout::blocked({1, 1}, {32, 1}, {1, 4}, {0, 1});
  Type moved = Type::tile(DType::F32, {32, 32}).withLayout(other);
  EXPECT_FALSE(staticRegisterMap(dst, moved, [](const std::vector<int64_t>& c) { return c; }));
}

SharedBuffer buf(int64_t bytes, int64_t first, int64_t last) {
  SharedBuffer b;
  b.bytes = bytes;
  b.firstOp = first;
  b.lastOp = last;
  return b;
}

TEST(SharedAllocator, ReusesSpaceOfDeadBuffers) {
  std::vector<SharedBuffer> bufs{buf(64, 0, 0), buf(100, 3, 3), buf(32, 7, 7)};
  EXPECT_EQ(allocateSharedMemory(bufs), 100);
  for (const auto& b : bufs) EXPECT_EQ(b.offset, 0);
}

TEST(SharedAllocator, OverlappingLifetimesGetDisjointAlignedSpace) {
  std::vector<SharedBuffer> bufs{buf(2048, 5, 5), buf(20, 5, 5), buf(64, 2, 9), buf(16, 10, 10)};
  int64_t peak = allocateSharedMemory(bufs);
  // 2..9 is live with both 5..5 buffers: three disjoint ranges; 10..10 reuses offset 0.
  for (size_t i = 0; i < bufs.size(); ++i) {
    EXPECT_EQ(bufs[i].offset % 16, 0);
    for (size_t j = i + 1; j < bufs.size(); ++j) {
      bool liveTogether = bufs[i].firstOp <= bufs[j].lastOp && bufs[j].firstOp <= bufs[i].lastOp;
      bool disjoint = bufs[i].offset + bufs[i].bytes <= bufs[j].offset || bufs[j].offset + bufs[j].bytes <= bufs[i].offset;
      if (liveTogether) {
        EXPECT_TRUE(disjoint) << i << " and " << j;
      }
    }
  }
  EXPECT_EQ(bufs[2].offset, 0);  // first to start
  EXPECT_EQ(bufs[3].offset, 0);  // after everything else died
  EXPECT_EQ(peak, 2112 + 20);  // 64 at 0, then 2048 at 64, then 20 at 2112 (aligned)
}

TEST(SharedAllocator, FillsAGapBetweenLiveBuffers) {
  // A (0..4) and B (0..9) are placed; A dies; C (5..9) fits into A's old space below B.
  std::vector<SharedBuffer> bufs{buf(256, 0, 4), buf(128, 0, 9), buf(200, 5, 9)};
  EXPECT_EQ(allocateSharedMemory(bufs), 384);
  EXPECT_EQ(bufs[0].offset, 0);
  EXPECT_EQ(bufs[1].offset, 256);
  EXPECT_EQ(bufs[2].offset, 0);
}

}  // namespace
}  // namespace tl::lower
