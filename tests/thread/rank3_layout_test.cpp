// Blocked layouts of rank 3 and the layouts of the rank-3 shape ops (ir/Layout.h):
// defaultBlockedLayout of a 3-D tile, in every dim order, and its slices along each dim cover
// each element exactly replication() times; permutedLayout(l, order) gives register r of
// thread t the permuted coordinates of the element it held under l (a transpose that moves no
// data); joinedLayout puts the new dim of 2 in registers (register 2r + k holds element
// (coords of r under l, k)) and splitLayout undoes it, refusing a last dim that is not in
// registers.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <vector>

#include "ir/Layout.h"
#include "layout_test_util.h"

using namespace tl;

namespace {

using layout_test::flat;
using layout_test::numel;

// Every element held by exactly replication() threads (counting one thread once).
void expectCoverage(const Layout& l, const Shape& shape) {
  const int64_t regs = l.elemsPerThread(shape), rep = l.replication(shape);
  ASSERT_GE(rep, 1) << l.str();
  std::vector<int64_t> count(static_cast<size_t>(numel(shape)), 0);
  for (int t = 0; t < l.numThreads(); ++t) {
    std::vector<bool> mine(count.size(), false);
    for (int64_t r = 0; r < regs; ++r) {
      auto c = l.coords(shape, t, r);
      ASSERT_EQ(c.size(), shape.size());
      for (size_t d = 0; d < c.size(); ++d) ASSERT_TRUE(c[d] >= 0 && c[d] < shape[d]) << l.str();
      mine[static_cast<size_t>(flat(shape, c))] = true;
    }
    for (size_t i = 0; i < mine.size(); ++i) count[i] += mine[i];
  }
  for (size_t i = 0; i < count.size(); ++i) ASSERT_EQ(count[i], rep) << l.str() << " element " << i;
}

const std::vector<Shape> kShapes = {{2, 4, 8}, {4, 8, 16}, {1, 2, 64}, {32, 2, 16}, {8, 1, 4}, {2, 2, 2}};

std::vector<std::vector<int>> allOrders() {
  std::vector<int> o = {0, 1, 2};
  std::vector<std::vector<int>> out;
  do out.push_back(o);
  while (std::next_permutation(o.begin(), o.end()));
  return out;
}

TEST(Rank3Layout, DefaultLayoutsAndSlicesCoverEveryElement) {
  for (const Shape& s : kShapes)
    for (int nw : {1, 2, 4, 8})
      for (int vec : {1, 2, 4})
        for (const auto& order : allOrders()) {
          LayoutPtr l = defaultBlockedLayout(s, nw, vec, order);
          ASSERT_EQ(l->rank(), 3);
          expectCoverage(*l, s);
          for (int d = 0; d < 3; ++d) {
            Shape r = s;
            r.erase(r.begin() + d);
            expectCoverage(*Layout::slice(d, l), r);
          }
        }
}

TEST(Rank3Layout, PermutedLayoutMovesNoData) {
  for (const Shape& s : kShapes)
    for (int nw : {1, 4})
      for (const auto& lorder : allOrders())
        for (const auto& perm : allOrders()) {
          LayoutPtr l = defaultBlockedLayout(s, nw, 2, lorder);
          LayoutPtr p = permutedLayout(*l, perm);
          Shape ps = {s[perm[0]], s[perm[1]], s[perm[2]]};
          ASSERT_EQ(p->elemsPerThread(ps), l->elemsPerThread(s));
          for (int t = 0; t < l->numThreads(); ++t)
            for (int64_t r = 0; r < l->elemsPerThread(s); ++r) {
              auto c = l->coords(s, t, r), pc = p->coords(ps, t, r);
              for (int j = 0; j < 3; ++j) ASSERT_EQ(pc[j], c[perm[j]]) << l->str() << " -> " << p->str();
            }
        }
  EXPECT_EQ(*permutedLayout(*defaultBlockedLayout({4, 8}, 4, 2), {1, 0}), *transposedLayout(*defaultBlockedLayout({4, 8}, 4, 2)));
  EXPECT_THROW(permutedLayout(*defaultBlockedLayout({4, 8, 2}, 4, 1), {0, 0, 1}), std::invalid_argument);
}

TEST(Rank3Layout, JoinedAndSplitLayoutsKeepTheNewDimInRegisters) {
  for (const Shape& s : std::vector<Shape>{{4, 16}, {32, 16}, {2, 4, 8}, {64}})
    for (int nw : {1, 2, 8}) {
      LayoutPtr l = defaultBlockedLayout(s, nw, 2);
      LayoutPtr j = joinedLayout(*l);
      Shape js = s;
      js.push_back(2);
      ASSERT_EQ(j->elemsPerThread(js), 2 * l->elemsPerThread(s));
      expectCoverage(*j, js);
      for (int t = 0; t < l->numThreads(); ++t)
        for (int64_t r = 0; r < l->elemsPerThread(s); ++r)
          for (int k = 0; k < 2; ++k) {
            auto c = l->coords(s, t, r);
            c.push_back(k);
            ASSERT_EQ(j->coords(js, t, 2 * r + k), c) << j->str();
          }
      LayoutPtr back = splitLayout(*j);
      ASSERT_TRUE(back);
      EXPECT_EQ(*back, *l);
    }
  // A last dim of 2 spread over lanes is not in registers: split must move data.
  EXPECT_EQ(splitLayout(*Layout::blocked({1, 1}, {16, 2}, {4, 1}, {1, 0})), nullptr);
  EXPECT_EQ(splitLayout(*Layout::blocked({1, 2}, {32, 1}, {1, 4}, {1, 0})), nullptr);  // warps along it
}

}  // namespace
