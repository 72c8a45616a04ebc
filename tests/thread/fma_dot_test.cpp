// The FMA form of dot (stages/thread/LowerDot.cpp, form B) with its register-tile accumulator
// (fmaAccumulatorLayout): kernels/matmul.tl at 128 x 128 x 16 on 8 warps is the classic
// register-tiled SIMT matmul — 8 x 8 accumulators a thread, a staged transposed, 2 + 2 vector
// loads of 16 bytes for 64 FMAs per k, the k loop marked for full unrolling, and C stored from
// the accumulator's own layout (no conversion through shared memory). The executor's results
// are checked against tl-scalar at every warp count by tests/thread/mma_test.cpp (mma_dot.tl's
// ieee mode) and tests/thread/executor_kernels_test.cpp.
#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include "ir/IR.h"
#include "ir/Printer.h"
#include "rank3_util.h"
#include "runtime/Driver.h"
#include "thread/Layouts.h"
#include "thread/Pipeline.h"

namespace tl {
namespace {

ThreadCompilation matmul(int bm, int bn, int bk, int warps, int stages = 1) {
  std::ostringstream err;
  auto k = compileKernelFile(std::string(TL_SOURCE_DIR) + "/kernels/matmul.tl",
                             {{"BLOCK_M", std::to_string(bm)}, {"BLOCK_N", std::to_string(bn)},
                              {"BLOCK_K", std::to_string(bk)}, {"M", "512"}, {"N", "512"}, {"K", "512"},
                              {"num_stages", std::to_string(stages)}},
                             err);
  if (!k) throw std::runtime_error(err.str());
  return compileToThreadIR(*k->ir, k->launch, warps);
}

// The thread-level for that carries the dot's accumulator (the one with an fma in its body).
const Op* fmaLoop(const Function& f) {
  const Op* found = nullptr;
  walk(f.body, [&](Op& op) {
    if (op.kind != OpKind::For) return;
    for (const auto& inner : op.region(0).ops)
      if (inner->kind == OpKind::Fma) found = &op;
  });
  return found;
}

TEST(FmaDot, RegisterTilesOf8x8WithVectorLoads) {
  ThreadCompilation tc = matmul(128, 128, 16, 8);
  // The decision, as tl-thread --explain-layouts prints it.
  const Op* dot = nullptr;
  walk(tc.withLayouts->body, [&](Op& op) {
    if (op.kind == OpKind::Dot) dot = &op;
  });
  ASSERT_TRUE(dot);
  DotPlan plan = planDot(*dot, 8);
  EXPECT_FALSE(plan.instr);
  EXPECT_NE(plan.why.find("register tiles of 8 x 8 per thread"), std::string::npos) << plan.why;
  EXPECT_EQ(dot->result()->type.layout->str(), "#blocked<spt=[4,4], tpw=[4,8], wpc=[4,2], order=[1,0]>");
  // C is stored from the accumulator's layout: no convert_layout anywhere.
  int conversions = 0;
  walk(tc.withLayouts->body, [&](Op& op) { conversions += op.kind == OpKind::ConvertLayout; });
  EXPECT_EQ(conversions, 0);

  const Op* loop = fmaLoop(*tc.threadIR);
  ASSERT_TRUE(loop);
  ASSERT_TRUE(loop->attr("unroll"));
  EXPECT_EQ(loop->intAttr("unroll"), 1);
  int loads = 0;
  for (const auto& op : loop->region(0).ops)
    if (op->kind == OpKind::LdShared) {
      ++loads;
      EXPECT_EQ(op->intAttr("vec"), 4);
      EXPECT_EQ(op->result()->type.shape, (Shape{8}));  // 8 rows of A^T, or 8 columns of B
    }
  EXPECT_EQ(loads, 2);  // one op for A's 8 values (2 vectors), one for B's
  // The staging buffers: a transposed with 16 bytes of pad a row, and b.
  int64_t aBytes = 0, bBytes = 0;
  for (const auto& b : tc.shared.buffers) {
    if (b.purpose == "dot operand a, transposed [K][M + pad]") aBytes = b.bytes;
    if (b.purpose == "dot operand b [K][N]") bBytes = b.bytes;
  }
  EXPECT_EQ(aBytes, 16 * (128 + 4) * 4);
  EXPECT_EQ(bBytes, 16 * 128 * 4);
}

TEST(FmaDot, LongKLoopsAreNotUnrolled) {
  ThreadCompilation tc = matmul(32, 32, 64, 4);
  const Op* loop = fmaLoop(*tc.threadIR);
  ASSERT_TRUE(loop);
  EXPECT_FALSE(loop->attr("unroll"));
}

int64_t count(const Region& r, OpKind kind) {
  int64_t n = 0;
  walk(r, [&](Op& op) { n += op.kind == kind; });
  return n;
}

// num_stages >= 2: the K loop's loads of a and b go by cp_async into rings of num_stages slots
// (LowerRing.cpp): b's 16-byte vectors whole, a (staged transposed) one 4-byte element a copy;
// nothing staged through registers, and one barrier an iteration (after the wait), none after the
// FMAs.
TEST(FmaDot, PipelinedLoadsGoThroughRings) {
  for (int stages : {2, 3}) {
    SCOPED_TRACE("num_stages " + std::to_string(stages));
    ThreadCompilation tc = matmul(128, 128, 16, 8, stages);
    const Function& fn = *tc.threadIR;
    int rings = 0;
    for (const SharedBuffer& b : tc.shared.buffers) {
      EXPECT_NE(b.purpose.rfind("dot operand", 0), 0u) << tc.shared.str();
      if (b.purpose.rfind("ring of " + std::to_string(stages) + " slots", 0) == 0) ++rings;
    }
    EXPECT_EQ(rings, 2) << tc.shared.str();
    EXPECT_EQ(count(fn.body, OpKind::StShared), 0) << printFunction(fn);
    const Op* k = nullptr;  // the block's K loop: the for whose body holds the FMA loop
    walk(fn.body, [&](Op& op) {
      if (op.kind == OpKind::For && count(op.region(0), OpKind::Fma) > 0 && fmaLoop(fn) != &op) k = &op;
    });
    ASSERT_TRUE(k) << printFunction(fn);
    EXPECT_EQ(count(k->region(0), OpKind::Barrier), 1) << printFunction(fn);
    EXPECT_EQ(count(k->region(0), OpKind::CpAsyncWait), 1);
    std::vector<int64_t> vecs;
    walk(k->region(0), [&](Op& op) {
      if (op.kind == OpKind::CpAsync) vecs.push_back(op.intAttr("vec"));
    });
    std::sort(vecs.begin(), vecs.end());
    EXPECT_EQ(vecs, (std::vector<int64_t>{1, 4})) << printFunction(fn);  // a element-wise, b in 16-byte vectors
  }
}

// The rings on the thread executor (races and early reads are errors there) against a C++
// reference, ragged in M, N and K, at two depths and warp counts.
TEST(FmaDot, RingsComputeTheProduct) {
  struct Case {
    int bm, bn, bk, warps, stages;
    const char *m, *n, *k;
  };
  for (const Case& c : {Case{64, 64, 16, 4, 2, "100", "70", "90"}, Case{128, 128, 16, 8, 3, "130", "140", "40"},
                        Case{32, 32, 8, 1, 3, "40", "33", "8"}}) {
    rank3::runOn(rank3::Engine::Thread, "kernels/matmul.tl",
                 {{"BLOCK_M", std::to_string(c.bm)}, {"BLOCK_N", std::to_string(c.bn)}, {"BLOCK_K", std::to_string(c.bk)},
                  {"M", c.m}, {"N", c.n}, {"K", c.k}, {"num_stages", std::to_string(c.stages)}},
                 c.warps, false,
                 [](const Memory& in, const LaunchConfig& l) {
                   const int64_t M = rank3::launchInt(l, "M"), N = rank3::launchInt(l, "N"), K = rank3::launchInt(l, "K");
                   const Buffer *a = in.find("a_ptr"), *b = in.find("b_ptr");
                   std::vector<double> c(size_t(M * N));
                   for (int64_t i = 0; i < M; ++i)
                     for (int64_t j = 0; j < N; ++j)
                       for (int64_t kk = 0; kk < K; ++kk) c[size_t(i * N + j)] += a->getF(i * K + kk) * b->getF(kk * N + j);
                   return rank3::Outputs{{"c_ptr", c}};
                 },
                 1e-4, 1e-4);
  }
}

}  // namespace
}  // namespace tl
