// pipeline-loads: which loops and loads it moves, and the shape of what it builds (the values
// computed are checked on every kernel in tests/e2e/PipelineTests.cpp and on tensor cores in
// tests/thread/mma_test.cpp).
#include <memory>

#include "PassTestUtil.h"
#include "ir/Pass.h"

namespace tl {
namespace {

using passtest::countOps;
using passtest::Kernel;

// for i in range(0, n, step): acc += sum(load(p + i + arange(64))), optionally with a store to q
// in the body; the loop's result is stored so that it stays live.
struct SumLoop {
  Kernel k;
  Op* loop = nullptr;
  SumLoop(int64_t stages, int64_t step = 64, bool storeInBody = false, bool constantStep = true) {
    Value* p = k.ptrParam("p");
    Value* q = k.ptrParam("q");
    Value* n = k.scalarParam("n");
    Value* st = constantStep ? k.i32(step) : k.scalarParam("step");
    loop = k.b.forOp(k.i32(0), n, st, {k.f32(0)});
    if (stages > 0) loop->setAttr("num_stages", Attr(stages));
    Region& body = loop->region(0);
    Builder b(&body);
    Value* offs = b.binary(OpKind::Add, b.splat(body.arg(0), {64}), b.arange(0, 64));
    Value* ptrs = b.addptr(b.splat(p, {64}), offs);
    Value* x = b.load(ptrs, b.cmp("lt", offs, b.splat(n, {64})), b.constFloat(Type::tile(DType::F32, {64}), 0));
    if (storeInBody) b.store(b.addptr(b.splat(q, {64}), offs), x);
    b.yield({b.binary(OpKind::Add, body.arg(1), b.reduce("sum", x, 0))});
    k.b.store(q, loop->result(0));
    k.finish();
  }
};

TEST(PipelineLoads, CarriesTheNextIterationsLoad) {
  SumLoop s(3);
  ASSERT_TRUE(pipelineLoads(s.k.fn));
  EXPECT_VERIFIES(s.k.fn);
  EXPECT_EQ(s.loop->intAttr("pipelined_loads"), 1);
  // One more carried value, init and result; one load before the loop, one in the body.
  EXPECT_EQ(s.loop->numResults(), 2u);
  EXPECT_EQ(s.loop->region(0).args.size(), 3u);
  EXPECT_EQ(countOps(s.k.fn, OpKind::Load), 2u);
  Value* init = s.loop->operand(4);
  ASSERT_NE(init->def, nullptr);
  EXPECT_EQ(init->def->kind, OpKind::Load);
  EXPECT_EQ(init->def->parent, &s.k.fn.body);
  // The body's reduce reads the carried value; its load is yielded for the next iteration and is
  // issued before the reduce.
  Region& body = s.loop->region(0);
  size_t loadAt = 0, reduceAt = 0;
  for (size_t i = 0; i < body.ops.size(); ++i) {
    if (body.ops[i]->kind == OpKind::Load) loadAt = i;
    if (body.ops[i]->kind == OpKind::Reduce) {
      reduceAt = i;
      EXPECT_EQ(body.ops[i]->operand(0), body.arg(2));
    }
  }
  EXPECT_LT(loadAt, reduceAt);
  EXPECT_EQ(body.terminator()->operand(1), body.ops[loadAt]->result());
  // Masked by "the next iteration exists": iv + step < n.
  const Value* mask = body.ops[loadAt]->operand(1);
  ASSERT_EQ(mask->def->kind, OpKind::And);
  const Value* guard = mask->def->operand(1);
  ASSERT_EQ(guard->def->kind, OpKind::Splat);
  const Op* cond = guard->def->operand(0)->def;
  ASSERT_EQ(cond->kind, OpKind::Cmp);
  EXPECT_EQ(cond->strAttr("pred"), "lt");
  EXPECT_EQ(cond->operand(0)->def->kind, OpKind::Add);
  EXPECT_EQ(cond->operand(0)->def->operand(0), body.arg(0));
  // Run once: a second run leaves it alone.
  EXPECT_FALSE(pipelineLoads(s.k.fn));
}

TEST(PipelineLoads, ANegativeStepGuardsWithGreaterThan) {
  SumLoop s(2, -64);
  ASSERT_TRUE(pipelineLoads(s.k.fn));
  EXPECT_VERIFIES(s.k.fn);
  bool sawGt = false;
  walk(s.loop->region(0), [&](Op& op) { sawGt |= op.kind == OpKind::Cmp && op.strAttr("pred") == "gt"; });
  EXPECT_TRUE(sawGt);
}

TEST(PipelineLoads, LeavesLoopsItMustNotTouch) {
  // No num_stages, num_stages = 1, a store in the body, a step that is not a constant.
  std::vector<std::unique_ptr<SumLoop>> loops;
  loops.push_back(std::make_unique<SumLoop>(0));
  loops.push_back(std::make_unique<SumLoop>(1));
  loops.push_back(std::make_unique<SumLoop>(3, 64, true));
  loops.push_back(std::make_unique<SumLoop>(3, 64, false, false));
  for (auto& s : loops) {
    EXPECT_FALSE(pipelineLoads(s->k.fn));
    EXPECT_EQ(s->loop->numResults(), 1u);
    EXPECT_FALSE(s->loop->hasAttr("pipelined_loads"));
  }
}

// A carried pointer (p += 64 each iteration, as Triton's matmul advances a_ptrs): the next
// pointer is computed at the top of the body and the load reads it; a gather whose address comes
// from a load of the same iteration stays where it was.
TEST(PipelineLoads, CarriedPointersMoveUpGathersStay) {
  Kernel k;
  Value* p = k.ptrParam("p", DType::I32);
  Value* g = k.ptrParam("g");
  Value* q = k.ptrParam("q");
  Value* n = k.scalarParam("n");
  Value* ptrs0 = k.b.addptr(k.b.splat(p, {64}), k.b.arange(0, 64));
  Op* loop = k.b.forOp(k.i32(0), n, k.i32(64), {k.f32(0), ptrs0});
  loop->setAttr("num_stages", Attr(int64_t(2)));
  Region& body = loop->region(0);
  Builder b(&body);
  Value* idx = b.load(body.arg(2));
  Value* x = b.load(b.addptr(b.splat(g, {64}), idx));
  Value* sum = b.binary(OpKind::Add, body.arg(1), b.reduce("sum", x, 0));
  Value* step = b.constInt(Type::scalar(DType::I32), 64);
  Value* next = b.addptr(body.arg(2), b.splat(step, {64}));
  b.yield({sum, next});
  k.b.store(q, loop->result(0));
  k.finish();
  ASSERT_TRUE(pipelineLoads(k.fn));
  EXPECT_VERIFIES(k.fn);
  EXPECT_EQ(loop->intAttr("pipelined_loads"), 1);
  // The index load moved; the gather now reads the carried index.
  const Op* gather = nullptr;
  for (const auto& op : body.ops)
    if (op->kind == OpKind::Load && op->operand(0)->def && op->operand(0)->def->operand(1) == body.arg(3)) gather = op.get();
  EXPECT_NE(gather, nullptr);
  // The pointer increment is the body's first ops, before the next index load.
  EXPECT_EQ(body.ops[0]->kind, OpKind::Constant);
  EXPECT_EQ(countOps(k.fn, OpKind::Load), 3u);
}

// An address built as a deep DAG (each value used twice by the next): the pass's walks are
// memoized, so this takes microseconds, not 2^60 steps.
TEST(PipelineLoads, DeepSharedAddressChainsAreLinear) {
  Kernel k;
  Value* p = k.ptrParam("p");
  Value* q = k.ptrParam("q");
  Value* n = k.scalarParam("n");
  Op* loop = k.b.forOp(k.i32(0), n, k.i32(1), {k.f32(0)});
  loop->setAttr("num_stages", Attr(int64_t(2)));
  Region& body = loop->region(0);
  Builder b(&body);
  Value* x = body.arg(0);
  for (int i = 0; i < 60; ++i) x = b.binary(OpKind::And, b.binary(OpKind::Add, x, x), b.constInt(Type::scalar(DType::I32), 1023));
  Value* v = b.load(b.addptr(p, x));
  b.yield({b.binary(OpKind::Add, body.arg(1), v)});
  k.b.store(q, loop->result(0));
  k.finish();
  ASSERT_TRUE(pipelineLoads(k.fn));
  EXPECT_VERIFIES(k.fn);
  EXPECT_EQ(loop->intAttr("pipelined_loads"), 1);
}

}  // namespace
}  // namespace tl
