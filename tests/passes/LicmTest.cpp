// licm: which ops leave a loop body (pure, operands from outside) and which stay (they read the
// loop variable or a carried value, touch memory, or divide by something that may be zero).
#include "PassTestUtil.h"
#include "ir/Pass.h"

namespace tl {
namespace {

using passtest::Kernel;

TEST(Licm, HoistsPureInvariantOpsKeepsTheRest) {
  Kernel k;
  Value* p = k.ptrParam("p", DType::I32);
  Value* n = k.scalarParam("n");
  Op* loop = k.b.forOp(k.i32(0), n, k.i32(1), {k.i32(0)});
  Region& body = loop->region(0);
  Builder b(&body);
  Value* inv = b.binary(OpKind::Mul, n, b.constInt(Type::scalar(DType::I32), 3));  // invariant: moves
  Value* byFour = b.binary(OpKind::Div, inv, b.constInt(Type::scalar(DType::I32), 4));  // by a constant: moves
  Value* byN = b.binary(OpKind::Div, inv, n);  // n may be 0 and the loop may not run: stays
  Value* varying = b.binary(OpKind::Add, body.arg(0), byFour);  // reads the loop variable: stays
  Value* loaded = b.load(b.addptr(p, inv));  // memory: stays
  Value* sum = b.binary(OpKind::Add, body.arg(1), b.binary(OpKind::Add, varying, b.binary(OpKind::Add, byN, loaded)));
  b.yield({sum});
  k.b.store(p, loop->result(0));
  k.finish();
  ASSERT_TRUE(hoistLoopInvariants(k.fn));
  EXPECT_VERIFIES(k.fn);
  auto inLoop = [&](const Value* v) { return v->def->parent == &body; };
  EXPECT_FALSE(inLoop(inv));
  EXPECT_FALSE(inLoop(byFour));
  EXPECT_TRUE(inLoop(byN));
  EXPECT_TRUE(inLoop(varying));
  EXPECT_TRUE(inLoop(loaded));
  // The moved ops sit before the loop, in their order (the load's address moved too).
  auto index = [&](const Op* op) {
    size_t i = 0;
    while (k.fn.body.ops[i].get() != op) ++i;
    return i;
  };
  EXPECT_LT(index(inv->def), index(byFour->def));
  EXPECT_LT(index(byFour->def), index(loop));
  EXPECT_FALSE(inLoop(loaded->def->operand(0)));
  EXPECT_FALSE(hoistLoopInvariants(k.fn));
}

// An op invariant in two nested loops leaves both (inner loops first).
TEST(Licm, LeavesNestedLoops) {
  Kernel k;
  Value* p = k.ptrParam("p", DType::I32);
  Value* n = k.scalarParam("n");
  Op* outer = k.b.forOp(k.i32(0), n, k.i32(1), {k.i32(0)});
  Builder ob(&outer->region(0));
  Op* inner = ob.forOp(ob.constInt(Type::scalar(DType::I32), 0), n, ob.constInt(Type::scalar(DType::I32), 1), {outer->region(0).arg(1)});
  Builder ib(&inner->region(0));
  Value* inv = ib.binary(OpKind::Mul, n, n);
  ib.yield({ib.binary(OpKind::Add, inner->region(0).arg(1), inv)});
  ob.yield({inner->result(0)});
  k.b.store(p, outer->result(0));
  k.finish();
  ASSERT_TRUE(hoistLoopInvariants(k.fn));
  EXPECT_VERIFIES(k.fn);
  EXPECT_EQ(inv->def->parent, &k.fn.body);
}

}  // namespace
}  // namespace tl
