// The while loop in every CPU engine (issue 12): trip counts that come from loaded data
// (tests/thread/kernels/while_data.tl: a carried tile summed over counts[p] rows, a tile halved
// until a reduction of it says stop) against a C++ reference, at num_warps 1-8; a loop that
// never ends stopped by the work budget (--max-steps) in tl-scalar, tl-block and the executor
// with the budget's located error; the thread IR keeps a `while` (not unrolled or dropped).
#include <cmath>

#include "new_ops_util.h"

namespace tl::newops {
namespace {

TEST(NewWhile, TripCountsFromData) {
  int checked = 0;
  forEachEngine("while_data", {}, nullptr, [&](const Memory& m, const std::string& engine) {
    const Buffer &counts = *m.find("counts_ptr"), &x = *m.find("x_ptr"), &y = *m.find("y_ptr");
    const int64_t P = counts.numel(), B = 32, R = 64;
    for (int64_t p = 0; p < P; ++p) {
      const int64_t n = counts.getI(p);  // 0, 11, 22, ..., 55
      EXPECT_EQ(m.find("trips_ptr")->getI(p), n) << engine << " program " << p;
      for (int64_t c = 0; c < B; ++c) {
        float acc = 0;
        for (int64_t i = 0; i < n; ++i) acc += float(x.getF((i % R) * B + c));
        EXPECT_EQ(float(m.find("sum_ptr")->getF(p * B + c)), acc) << engine << " sum[" << p << ", " << c << "]";
      }
      // halve the row until its max is <= 1
      std::vector<float> row(B);
      for (int64_t c = 0; c < B; ++c) row[size_t(c)] = float(y.getF(p * B + c));
      int k = 0;
      while (*std::max_element(row.begin(), row.end()) > 1.0f) {
        for (float& v : row) v *= 0.5f;
        ++k;
      }
      EXPECT_EQ(m.find("halvings_ptr")->getI(p), k) << engine << " program " << p;
      EXPECT_GT(k, 0) << "the data must make the loop run";
      for (int64_t c = 0; c < B; ++c)
        EXPECT_EQ(float(m.find("halved_ptr")->getF(p * B + c)), row[size_t(c)]) << engine;
    }
    ++checked;
  });
  EXPECT_EQ(checked, 6);
}

TEST(NewWhile, ThreadIRKeepsTheLoop) {
  auto k = compileNewOpsKernel("while_data");
  ASSERT_TRUE(k);
  ThreadCompilation tc = compileToThreadIR(*k->ir, k->launch, 4);
  int whiles = 0, conditions = 0;
  walk(tc.threadIR->body, [&](Op& op) {
    whiles += op.kind == OpKind::While;
    conditions += op.kind == OpKind::Condition;
  });
  EXPECT_EQ(whiles, 2);
  EXPECT_EQ(conditions, 2);
}

// An endless loop ends at the budget, with the budget's error located in the loop.
TEST(NewWhile, EndlessLoopStopsAtTheBudget) {
  auto k = compileNewOpsKernel("while_forever");
  ASSERT_TRUE(k);
  const int64_t saved = workLimits().maxSteps;
  const bool savedProgress = workLimits().progress;
  workLimits().maxSteps = 20000;
  workLimits().progress = false;
  auto expectBudgetStop = [&](const std::string& engine, const std::function<void(Memory&)>& run) {
    Memory m = Memory::fromLaunch(k->launch);
    try {
      run(m);
      ADD_FAILURE() << engine << ": the endless loop finished";
    } catch (const RuntimeError& e) {
      const std::string msg = e.what();
      EXPECT_NE(msg.find("work budget"), std::string::npos) << engine << ": " << msg;
      EXPECT_GE(e.loc.line, 8u) << engine << ": " << msg;  // the loop: its condition (line 8) or body (9)
      EXPECT_LE(e.loc.line, 9u) << engine << ": " << msg;
    }
  };
  expectBudgetStop("tl-scalar", [&](Memory& m) { runScalar(*k->ir, k->launch, m); });
  auto opt = cloneFunction(*k->ir);
  blockPipeline().run(*opt);
  expectBudgetStop("tl-block", [&](Memory& m) { runBlock(*opt, k->launch, m); });
  for (int nw : {1, 4}) {
    ThreadCompilation tc = compileToThreadIR(*k->ir, k->launch, nw);
    expectBudgetStop("executor", [&](Memory& m) { runThreadIR(*tc.threadIR, k->launch, m); });
  }
  workLimits().maxSteps = saved;
  workLimits().progress = savedProgress;
}

}  // namespace
}  // namespace tl::newops
