// dce: effects and what they need stay; dead chains, unused loads and dead carried values go.
#include "PassTestUtil.h"
#include "ir/Pass.h"

namespace tl {
namespace {

using passtest::countAllOps;
using passtest::countOps;
using passtest::Kernel;

TEST(DCE, KeepsStoresAndWhatTheyNeedRemovesDeadChains) {
  Kernel k;
  Value* p = k.ptrParam("p");
  Value* x = k.b.load(p);
  Value* y = k.b.unary(OpKind::Exp, x);
  k.b.store(p, y);
  Value* dead = k.b.unary(OpKind::Log, x);  // a chain nobody uses
  dead = k.b.binary(OpKind::Mul, dead, dead);
  k.b.unary(OpKind::Sqrt, dead);
  k.finish();
  EXPECT_TRUE(dce(k.fn));
  EXPECT_VERIFIES(k.fn);
  EXPECT_EQ(countAllOps(k.fn), 4u);  // load, exp, store, return
  EXPECT_EQ(countOps(k.fn, OpKind::Exp), 1u);
  EXPECT_FALSE(dce(k.fn));
}

TEST(DCE, RemovesUnusedLoads) {
  Kernel k;
  Value* p = k.ptrParam("p");
  Value* ptrs = k.b.addptr(k.b.splat(p, {64}), k.b.arange(0, 64));
  k.b.load(ptrs);
  k.finish();
  EXPECT_TRUE(dce(k.fn));
  EXPECT_VERIFIES(k.fn);
  EXPECT_EQ(countAllOps(k.fn), 1u);  // only return
}

TEST(DCE, KeepsLoopsWithStoresRemovesPureUnusedLoops) {
  Kernel k;
  Value* p = k.ptrParam("p", DType::I32);
  Value* n = k.scalarParam("n");
  Op* withStore = k.b.forOp(k.i32(0), n, k.i32(1), {});
  {
    Builder body(&withStore->region(0));
    Op* inner = body.ifOp(body.cmp("gt", withStore->region(0).arg(0), n), {});
    Builder then(&inner->region(0));
    then.store(p, withStore->region(0).arg(0));
    then.yield({});
    Builder els(&inner->region(1));
    els.yield({});
    body.yield({});
  }
  Op* pure = k.b.forOp(k.i32(0), n, k.i32(1), {n});
  {
    Builder body(&pure->region(0));
    body.yield({body.binary(OpKind::Add, pure->region(0).arg(1), n)});
  }
  k.finish();
  EXPECT_TRUE(dce(k.fn));
  EXPECT_VERIFIES(k.fn);
  EXPECT_EQ(countOps(k.fn, OpKind::For), 1u);
  EXPECT_EQ(countOps(k.fn, OpKind::Store), 1u);
  EXPECT_EQ(k.fn.body.ops[k.fn.body.ops.size() - 2].get(), withStore);
}

// for i in range(n): live = live + i; dead = dead * 2 (dead unused after the loop)
TEST(DCE, RemovesDeadCarriedValues) {
  Kernel k;
  Value* p = k.ptrParam("p", DType::I32);
  Value* n = k.scalarParam("n");
  Value* deadInit = k.b.binary(OpKind::Mul, n, n);  // only feeds the dead carried value
  Op* loop = k.b.forOp(k.i32(0), n, k.i32(1), {n, deadInit});
  Region& body = loop->region(0);
  Builder b(&body);
  Value* live = b.binary(OpKind::Add, body.arg(1), body.arg(0));
  Value* dead = b.binary(OpKind::Mul, body.arg(2), body.arg(2));
  b.yield({live, dead});
  k.keep(p, loop->result(0));
  k.finish();
  EXPECT_TRUE(dce(k.fn));
  EXPECT_VERIFIES(k.fn);
  ASSERT_EQ(loop->numResults(), 1u);
  EXPECT_EQ(loop->numOperands(), 4u);
  EXPECT_EQ(body.args.size(), 2u);
  EXPECT_EQ(body.terminator()->operand(0), live);
  EXPECT_EQ(countOps(k.fn, OpKind::Mul), 0u);  // the body's and the init's
  EXPECT_EQ(loop->result(0)->index, 0u);
}

// A carried value that feeds a store (or another live one) stays even if unused after the loop.
TEST(DCE, KeepsCarriedValuesThatFeedEffectsOrLiveValues) {
  Kernel k;
  Value* p = k.ptrParam("p", DType::I32);
  Value* n = k.scalarParam("n");
  Op* loop = k.b.forOp(k.i32(0), n, k.i32(1), {n, n, n});
  Region& body = loop->region(0);
  Builder b(&body);
  b.store(p, body.arg(1));                                     // carried 0: feeds a store
  Value* c1 = b.binary(OpKind::Add, body.arg(2), body.arg(3));  // carried 1: feeds carried 1
  Value* c2 = body.arg(3);                                     // carried 2: feeds carried 1
  b.yield({body.arg(1), c1, c2});
  k.keep(p, loop->result(1));
  k.finish();
  EXPECT_FALSE(dce(k.fn));
  EXPECT_VERIFIES(k.fn);
  EXPECT_EQ(loop->numResults(), 3u);
}

TEST(DCE, RemovesDeadCarriedValueSwappedBetweenTwoArgs) {
  // a, b = b, a + 1: both dead when neither result is used.
  Kernel k;
  Value* p = k.ptrParam("p", DType::I32);
  Value* n = k.scalarParam("n");
  Op* loop = k.b.forOp(k.i32(0), n, k.i32(1), {n, n, n});
  Region& body = loop->region(0);
  Builder b(&body);
  Value* inc = b.binary(OpKind::Add, body.arg(1), body.arg(0));
  b.yield({body.arg(2), inc, body.arg(3)});
  k.keep(p, loop->result(2));
  k.finish();
  EXPECT_TRUE(dce(k.fn));
  EXPECT_VERIFIES(k.fn);
  ASSERT_EQ(loop->numResults(), 1u);
  EXPECT_EQ(body.args.size(), 2u);
  EXPECT_EQ(body.terminator()->operand(0), body.arg(1));
  EXPECT_EQ(body.arg(1)->index, 1u);
}

}  // namespace
}  // namespace tl
