// cse: identical pure ops merge; scoping follows dominance; memory ops never merge.
#include "PassTestUtil.h"
#include "ir/Pass.h"

namespace tl {
namespace {

using passtest::countOps;
using passtest::Kernel;

TEST(CSE, MergesIdenticalOpsAndTheirUsers) {
  Kernel k;
  Value* out = k.ptrParam("out", DType::I32);
  Value* n = k.scalarParam("n");
  Value* a1 = k.b.binary(OpKind::Add, n, k.i32(1));
  Value* a2 = k.b.binary(OpKind::Add, n, k.i32(1));  // a second constant 1 too
  Value* m1 = k.b.binary(OpKind::Mul, a1, a1);
  Value* m2 = k.b.binary(OpKind::Mul, a2, a2);       // same once a2 is a1
  k.keep(out, m1);
  k.keep(out, m2);
  k.finish();
  EXPECT_TRUE(cse(k.fn));
  EXPECT_VERIFIES(k.fn);
  EXPECT_EQ(countOps(k.fn, OpKind::Constant), 1u);
  EXPECT_EQ(countOps(k.fn, OpKind::Add), 1u);
  EXPECT_EQ(countOps(k.fn, OpKind::Mul), 1u);
  walk(k.fn.body, [&](Op& op) {
    if (op.kind == OpKind::Store) {
      EXPECT_EQ(op.operand(1), m1);
    }
  });
  EXPECT_FALSE(cse(k.fn));
}

TEST(CSE, DifferentAttributesOrTypesDoNotMerge) {
  Kernel k;
  Value* n = k.scalarParam("n");
  Value* m = k.scalarParam("m");
  k.b.cmp("lt", n, m);
  k.b.cmp("le", n, m);
  k.b.constFloat(Type::scalar(DType::F32), 0.0);
  k.b.constFloat(Type::scalar(DType::F32), -0.0);  // equal as doubles, different values
  k.b.constInt(Type::scalar(DType::I32), 0);
  k.b.constInt(Type::scalar(DType::I64), 0);
  k.b.programId(0);
  k.b.programId(1);
  k.finish();
  EXPECT_FALSE(cse(k.fn));
  EXPECT_EQ(countOps(k.fn, OpKind::Constant), 4u);
}

TEST(CSE, LoopBodyReusesAnOpFromOutside) {
  Kernel k;
  Value* out = k.ptrParam("out", DType::I32);
  Value* n = k.scalarParam("n");
  Value* outer = k.b.binary(OpKind::Mul, n, n);
  Op* loop = k.b.forOp(k.i32(0), n, k.i32(1), {});
  Builder body(&loop->region(0));
  Value* inner = body.binary(OpKind::Mul, n, n);
  body.store(out, inner);
  body.yield({});
  Value* after = k.b.binary(OpKind::Mul, n, n);
  k.keep(out, after);
  k.finish();
  EXPECT_TRUE(cse(k.fn));
  EXPECT_VERIFIES(k.fn);
  EXPECT_EQ(countOps(k.fn, OpKind::Mul), 1u);
  EXPECT_EQ(loop->region(0).ops[0]->kind, OpKind::Store);
  EXPECT_EQ(loop->region(0).ops[0]->operand(1), outer);
}

TEST(CSE, AnOpInsideALoopIsNotReusedAfterIt) {
  Kernel k;
  Value* out = k.ptrParam("out", DType::I32);
  Value* n = k.scalarParam("n");
  Op* loop = k.b.forOp(k.i32(0), n, k.i32(1), {});
  Builder body(&loop->region(0));
  body.store(out, body.binary(OpKind::Mul, n, n));
  body.yield({});
  Value* after = k.b.binary(OpKind::Mul, n, n);
  k.keep(out, after);
  k.finish();
  cse(k.fn);  // may merge the loop's constant operands, not the mul
  EXPECT_VERIFIES(k.fn);
  EXPECT_EQ(countOps(k.fn, OpKind::Mul), 2u);
}

TEST(CSE, SiblingIfBranchesAreNotMerged) {
  Kernel k;
  Value* out = k.ptrParam("out", DType::I32);
  Value* n = k.scalarParam("n");
  Value* cond = k.b.cmp("gt", n, k.i32(0));
  Op* ifop = k.b.ifOp(cond, {Type::scalar(DType::I32)});
  for (size_t i = 0; i < 2; ++i) {
    Builder br(&ifop->region(i));
    br.yield({br.binary(OpKind::Add, n, n)});
  }
  k.keep(out, ifop->result(0));
  k.finish();
  EXPECT_FALSE(cse(k.fn));
  EXPECT_VERIFIES(k.fn);
  EXPECT_EQ(countOps(k.fn, OpKind::Add), 2u);
}

TEST(CSE, LoadsAndStoresAreNeverMerged) {
  Kernel k;
  Value* p = k.ptrParam("p");
  Value* l1 = k.b.load(p);
  k.b.store(p, k.b.binary(OpKind::Add, l1, l1));
  Value* l2 = k.b.load(p);  // reads what the store wrote
  k.b.store(p, l2);
  k.b.store(p, l2);
  k.finish();
  EXPECT_FALSE(cse(k.fn));
  EXPECT_EQ(countOps(k.fn, OpKind::Load), 2u);
  EXPECT_EQ(countOps(k.fn, OpKind::Store), 3u);
}

TEST(CSE, CommutedOpsMergeAfterCanonicalize) {
  Kernel k;
  Value* out = k.ptrParam("out", DType::I32);
  Value* n = k.scalarParam("n");
  Value* a = k.b.binary(OpKind::Add, n, k.i32(1));
  Value* b = k.b.binary(OpKind::Add, k.i32(1), n);
  k.keep(out, a);
  k.keep(out, b);
  k.finish();
  canonicalize(k.fn);
  EXPECT_TRUE(cse(k.fn));
  EXPECT_VERIFIES(k.fn);
  EXPECT_EQ(countOps(k.fn, OpKind::Add), 1u);
}

}  // namespace
}  // namespace tl
