// Layout ownership properties, over many shapes, warp counts and vector widths: every blocked
// layout defaultBlockedLayout() makes (and every slice of one) covers each element of the tile
// exactly replication() times, every thread holds elemsPerThread() elements, and the register
// -> coordinate pattern is the same for every thread (base(thread) + offset(register), modulo
// the shape), which is what lets the lowering permute registers statically.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "ir/Layout.h"
#include "layout_test_util.h"

using namespace tl;

namespace {

using layout_test::flat;
using layout_test::numel;

// Checks coverage and per-thread counts; returns "" or a description of the first problem.
std::string checkCoverage(const Layout& l, const Shape& shape) {
  int64_t regs = l.elemsPerThread(shape), rep = l.replication(shape);
  if (rep < 1) return "replication < 1";
  if (int64_t(l.numThreads()) * regs != numel(shape) * rep) return "threads x registers != elements x replication";
  std::vector<int64_t> count(static_cast<size_t>(numel(shape)), 0);
  for (int t = 0; t < l.numThreads(); ++t) {
    std::vector<bool> mine(count.size(), false);
    for (int64_t r = 0; r < regs; ++r) {
      auto c = l.coords(shape, t, r);
      if (c.size() != shape.size()) return "coords has the wrong rank";
      for (size_t d = 0; d < c.size(); ++d)
        if (c[d] < 0 || c[d] >= shape[d]) return "coordinate out of the tile";
      int64_t i = flat(shape, c);
      // A thread never holds one element twice (its registers are distinct elements)...
      // unless the layout tile is wider than the tensor along a dimension where a thread's own
      // registers wrap; defaultBlockedLayout clamps sizePerThread so that cannot happen.
      if (mine[static_cast<size_t>(i)]) return "thread " + std::to_string(t) + " holds element " + std::to_string(i) + " twice";
      mine[static_cast<size_t>(i)] = true;
      ++count[static_cast<size_t>(i)];
    }
  }
  for (size_t i = 0; i < count.size(); ++i)
    if (count[i] != rep)
      return "element " + std::to_string(i) + " held " + std::to_string(count[i]) + " times, expected " + std::to_string(rep);
  return "";
}

// coords(t, r) == (base(t) + offset(r)) mod shape, with base = coords(t, 0) - coords(0, 0)
// computed without the wrap: checked as coords(t, r) - coords(0, r) being the same for all r
// (mod shape).
std::string checkThreadIndependence(const Layout& l, const Shape& shape) {
  int64_t regs = l.elemsPerThread(shape);
  for (int t = 0; t < l.numThreads(); ++t) {
    auto b0 = l.coords(shape, t, 0), z0 = l.coords(shape, 0, 0);
    for (int64_t r = 1; r < regs; ++r) {
      auto c = l.coords(shape, t, r), z = l.coords(shape, 0, r);
      for (size_t d = 0; d < shape.size(); ++d) {
        int64_t lhs = ((c[d] - z[d]) % shape[d] + shape[d]) % shape[d];
        int64_t rhs = ((b0[d] - z0[d]) % shape[d] + shape[d]) % shape[d];
        if (lhs != rhs) return "thread " + std::to_string(t) + " register " + std::to_string(r) + " breaks the pattern";
      }
    }
  }
  return "";
}

std::string shapeStr(const Shape& s) {
  std::string r;
  for (size_t i = 0; i < s.size(); ++i) r += (i ? "x" : "") + std::to_string(s[i]);
  return r;
}

}  // namespace

TEST(LayoutCoverage, Blocked1D) {
  for (int64_t n = 1; n <= 4096; n *= 2)
    for (int warps : {1, 2, 4, 8})
      for (int vec : {1, 2, 4, 8}) {
        auto l = defaultBlockedLayout({n}, warps, vec);
        SCOPED_TRACE(l->str() + " on " + std::to_string(n));
        EXPECT_EQ(checkCoverage(*l, {n}), "");
        EXPECT_EQ(checkThreadIndependence(*l, {n}), "");
        EXPECT_EQ(l->numWarps(), warps);
        EXPECT_EQ(l->sizePerThread()[0], std::min<int64_t>(vec, n));
      }
}

TEST(LayoutCoverage, Blocked2DBothOrders) {
  std::vector<int64_t> sizes = {1, 2, 4, 8, 16, 32, 64, 128};
  for (int64_t m : sizes)
    for (int64_t n : sizes)
      for (int warps : {1, 2, 4, 8})
        for (int vec : {1, 4, 8})
          for (std::vector<int> order : {std::vector<int>{1, 0}, std::vector<int>{0, 1}}) {
            Shape s = {m, n};
            auto l = defaultBlockedLayout(s, warps, vec, order);
            SCOPED_TRACE(l->str() + " on " + shapeStr(s));
            ASSERT_EQ(checkCoverage(*l, s), "");
            if (m * n <= 1024) {
              ASSERT_EQ(checkThreadIndependence(*l, s), "");
            }
          }
}

TEST(LayoutCoverage, SlicesOfBlocked) {
  std::vector<int64_t> sizes = {1, 4, 16, 32, 128};
  for (int64_t m : sizes)
    for (int64_t n : sizes)
      for (int warps : {1, 2, 4, 8})
        for (int vec : {1, 4}) {
          auto parent = defaultBlockedLayout({m, n}, warps, vec);
          for (int dim : {0, 1}) {
            auto l = Layout::slice(dim, parent);
            Shape s = {dim == 0 ? n : m};
            SCOPED_TRACE(l->str() + " on " + shapeStr(s));
            ASSERT_EQ(checkCoverage(*l, s), "");
            ASSERT_EQ(checkThreadIndependence(*l, s), "");
            // A slice is replicated at least as often as the threads along the removed dim.
            int64_t along = int64_t(parent->threadsPerWarp()[dim]) * parent->warpsPerCTA()[dim];
            EXPECT_EQ(l->replication(s) % along, 0);
          }
        }
}

// The thread that holds an element in a slice layout holds, in the parent, an element of the
// same row (slice dim 1) or column (slice dim 0): what a reduction needs.
TEST(LayoutCoverage, SliceOwnersAgreeWithParent) {
  auto parent = defaultBlockedLayout({32, 64}, 4, 4);
  for (int dim : {0, 1}) {
    auto l = Layout::slice(dim, parent);
    Shape s = {dim == 0 ? 64 : 32};
    for (int t = 0; t < l->numThreads(); ++t) {
      std::map<int64_t, bool> kept;
      for (int64_t r = 0; r < parent->elemsPerThread({32, 64}); ++r) kept[parent->coords({32, 64}, t, r)[1 - dim]] = true;
      for (int64_t r = 0; r < l->elemsPerThread(s); ++r) EXPECT_TRUE(kept.count(l->coords(s, t, r)[0])) << t;
    }
  }
}

// The shapes the kernels use, spelled out, so a change in defaultBlockedLayout shows here.
TEST(LayoutCoverage, KnownLayouts) {
  EXPECT_EQ(defaultBlockedLayout({1024}, 4, 4)->str(), "#blocked<spt=[4], tpw=[32], wpc=[4], order=[0]>");
  EXPECT_EQ(defaultBlockedLayout({32, 32}, 4, 4)->str(), "#blocked<spt=[1,4], tpw=[4,8], wpc=[4,1], order=[1,0]>");
  EXPECT_EQ(defaultBlockedLayout({32, 32}, 4, 4, {0, 1})->str(), "#blocked<spt=[4,1], tpw=[8,4], wpc=[1,4], order=[0,1]>");
  EXPECT_EQ(defaultBlockedLayout({64}, 4, 1)->replication({64}), 2);
}
