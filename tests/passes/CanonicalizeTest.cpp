// canonicalize: each rewrite fires where it is exact and only there.
#include "PassTestUtil.h"
#include "ir/Pass.h"

namespace tl {
namespace {

using passtest::countOps;
using passtest::Kernel;

// A kernel that stores `make(k, x)` where x is a runtime value of type `t` (a loaded tile or
// scalar), and reports what the store stores after canonicalize.
struct Case {
  Kernel k;
  Value* x = nullptr;   // the runtime input
  Value* p = nullptr;   // pointer (tile) it was loaded from
  Op* store = nullptr;
  bool changed = false;

  explicit Case(Type t) {
    Value* base = k.ptrParam("x", t.dtype);
    p = t.isTile() ? k.b.splat(base, t.shape) : base;
    x = k.b.load(p);
  }
  // Stores `v` to the input pointer, then canonicalizes.
  Value* run(Value* v) {
    k.b.store(p, v);
    store = k.fn.body.ops.back().get();
    k.finish();
    changed = canonicalize(k.fn);
    EXPECT_VERIFIES(k.fn);
    return store->operand(1);
  }
};

const Type kI32 = Type::tile(DType::I32, {64});
const Type kF32 = Type::tile(DType::F32, {64});
const Type kI1 = Type::tile(DType::I1, {64});

Value* splatI(Case& c, int64_t v) { return c.k.b.splat(c.k.b.constInt(Type::scalar(c.x->type.dtype), v), c.x->type.shape); }
Value* constF(Case& c, double v) { return c.k.b.constFloat(c.x->type, v); }

TEST(Canonicalize, AddZeroInts) {
  Case c(kI32);
  EXPECT_EQ(c.run(c.k.b.binary(OpKind::Add, c.x, splatI(c, 0))), c.x);
  EXPECT_TRUE(c.changed);
  EXPECT_EQ(countOps(c.k.fn, OpKind::Add), 0u);
}

TEST(Canonicalize, AddZeroFloatOnlyForNegativeZero) {
  Case plus(kF32);
  Value* add = plus.k.b.binary(OpKind::Add, plus.x, constF(plus, 0.0));
  EXPECT_EQ(plus.run(add), add);  // x + 0.0 is not x when x = -0.0
  EXPECT_FALSE(plus.changed);

  Case minus(kF32);
  EXPECT_EQ(minus.run(minus.k.b.binary(OpKind::Add, minus.x, constF(minus, -0.0))), minus.x);
}

TEST(Canonicalize, SubZero) {
  Case i(kI32);
  EXPECT_EQ(i.run(i.k.b.binary(OpKind::Sub, i.x, splatI(i, 0))), i.x);
  Case f(kF32);
  EXPECT_EQ(f.run(f.k.b.binary(OpKind::Sub, f.x, constF(f, 0.0))), f.x);
  Case g(kF32);  // x - (-0.0) is x + 0.0: not the identity
  Value* sub = g.k.b.binary(OpKind::Sub, g.x, constF(g, -0.0));
  EXPECT_EQ(g.run(sub), sub);
}

TEST(Canonicalize, MulOneIntsAndFloats) {
  Case i(kI32);
  EXPECT_EQ(i.run(i.k.b.binary(OpKind::Mul, i.x, splatI(i, 1))), i.x);
  Case f(kF32);
  EXPECT_EQ(f.run(f.k.b.binary(OpKind::Mul, constF(f, 1.0), f.x)), f.x);  // after commuting
}

TEST(Canonicalize, MulZeroOnlyForInts) {
  Case i(kI32);
  Value* zero = splatI(i, 0);
  EXPECT_EQ(i.run(i.k.b.binary(OpKind::Mul, i.x, zero)), zero);
  Case f(kF32);
  Value* mul = f.k.b.binary(OpKind::Mul, f.x, constF(f, 0.0));
  EXPECT_EQ(f.run(mul), mul);  // NaN * 0 is NaN
}

TEST(Canonicalize, IntDivByOne) {
  Case i(kI32);
  EXPECT_EQ(i.run(i.k.b.binary(OpKind::Div, i.x, splatI(i, 1))), i.x);
  Case j(kI32);
  Value* div = j.k.b.binary(OpKind::Div, splatI(j, 1), j.x);  // 1 / x: not commutative
  EXPECT_EQ(j.run(div), div);
  EXPECT_EQ(div->def->operand(1), j.x);
}

TEST(Canonicalize, BitwiseWithAllOnesAndZeros) {
  Case a(kI1);
  EXPECT_EQ(a.run(a.k.b.binary(OpKind::And, a.x, splatI(a, 1))), a.x);
  Case b(kI1);
  Value* f = splatI(b, 0);
  EXPECT_EQ(b.run(b.k.b.binary(OpKind::And, f, b.x)), f);
  Case c(kI1);
  EXPECT_EQ(c.run(c.k.b.binary(OpKind::Or, c.x, splatI(c, 0))), c.x);
  Case d(kI1);
  Value* t = splatI(d, 1);
  EXPECT_EQ(d.run(d.k.b.binary(OpKind::Or, d.x, t)), t);
  Case e(kI32);  // ints: all ones is -1; 1 is not all ones
  EXPECT_EQ(e.run(e.k.b.binary(OpKind::And, e.x, splatI(e, -1))), e.x);
  Case g(kI32);
  Value* and1 = g.k.b.binary(OpKind::And, g.x, splatI(g, 1));
  EXPECT_EQ(g.run(and1), and1);
}

TEST(Canonicalize, ConvertAndBroadcastToSameType) {
  Case a(kF32);
  EXPECT_EQ(a.run(a.k.b.convert(a.x, DType::F32)), a.x);
  Case b(kF32);
  EXPECT_EQ(b.run(b.k.b.broadcast(b.x, {64})), b.x);
}

TEST(Canonicalize, BroadcastAndExpandDimsOfSplatBecomeSplat) {
  Kernel k;
  Value* p = k.ptrParam("p");
  Value* s = k.b.load(p);
  Value* row = k.b.expandDims(k.b.splat(s, {64}), 0);  // <1x64>
  Value* full = k.b.broadcast(row, {32, 64});
  k.b.store(k.b.splat(p, {32, 64}), full);
  k.finish();
  EXPECT_TRUE(canonicalize(k.fn));
  EXPECT_VERIFIES(k.fn);
  ASSERT_EQ(full->def->kind, OpKind::Splat);
  EXPECT_EQ(full->def->operand(0), s);
  EXPECT_EQ(full->type, Type::tile(DType::F32, {32, 64}));
  EXPECT_EQ(row->def->kind, OpKind::Splat);
  EXPECT_TRUE(row->def->attrs.empty());
}

TEST(Canonicalize, DoubleNegAndNot) {
  Case a(kF32);
  EXPECT_EQ(a.run(a.k.b.unary(OpKind::Neg, a.k.b.unary(OpKind::Neg, a.x))), a.x);
  Case b(kI32);
  Value* n4 = b.x;
  for (int i = 0; i < 4; ++i) n4 = b.k.b.unary(OpKind::Neg, n4);
  EXPECT_EQ(b.run(n4), b.x);
  Case c(kI1);
  EXPECT_EQ(c.run(c.k.b.unary(OpKind::Not, c.k.b.unary(OpKind::Not, c.x))), c.x);
  Case d(kI32);
  Value* n3 = d.k.b.unary(OpKind::Neg, d.k.b.unary(OpKind::Neg, d.k.b.unary(OpKind::Neg, d.x)));
  Value* r = d.run(n3);
  ASSERT_EQ(r->def->kind, OpKind::Neg);
  EXPECT_EQ(r->def->operand(0), d.x);
}

TEST(Canonicalize, SelectOfSameValue) {
  Case a(kF32);
  Value* cond = a.k.b.cmp("lt", a.x, constF(a, 0.0));
  EXPECT_EQ(a.run(a.k.b.select(cond, a.x, a.x)), a.x);
}

TEST(Canonicalize, AddptrZero) {
  Kernel k;
  Value* p = k.ptrParam("p");
  Value* ptrs = k.b.splat(p, {16});
  Value* moved = k.b.addptr(ptrs, k.b.constInt(Type::tile(DType::I32, {16}), 0));
  k.b.store(moved, k.b.load(moved));
  k.finish();
  EXPECT_TRUE(canonicalize(k.fn));
  EXPECT_VERIFIES(k.fn);
  EXPECT_EQ(countOps(k.fn, OpKind::AddPtr), 0u);
  walk(k.fn.body, [&](Op& op) {
    if (op.kind == OpKind::Load || op.kind == OpKind::Store) {
      EXPECT_EQ(op.operand(0), ptrs);
    }
  });
}

TEST(Canonicalize, ConstantsMoveRightOfCommutativeOps) {
  Kernel k;
  Value* n = k.scalarParam("n");
  Value* one = k.i32(1);
  Value* a = k.b.binary(OpKind::Add, one, n);
  Value* sub = k.b.binary(OpKind::Sub, one, n);  // not commutative: stays
  Value* lt = k.b.cmp("lt", one, n);              // 1 < n  ->  n > 1
  k.finish();
  EXPECT_TRUE(canonicalize(k.fn));
  EXPECT_VERIFIES(k.fn);
  EXPECT_EQ(a->def->operand(0), n);
  EXPECT_EQ(a->def->operand(1), one);
  EXPECT_EQ(sub->def->operand(0), one);
  EXPECT_EQ(lt->def->operand(0), n);
  EXPECT_EQ(lt->def->strAttr("pred"), "gt");
}

TEST(Canonicalize, FloatMaximumIsNotCommuted) {
  Kernel k;
  Value* x = k.scalarParam("x", DType::F32);
  Value* m = k.b.binary(OpKind::Maximum, k.f32(0.0), x);
  k.finish();
  EXPECT_FALSE(canonicalize(k.fn));
  EXPECT_EQ(m->def->operand(1), x);
}

TEST(Canonicalize, RewritesInsideRegionsAndStopsAtAFixedPoint) {
  Kernel k;
  Value* out = k.ptrParam("out", DType::I32);
  Value* n = k.scalarParam("n");
  Op* loop = k.b.forOp(k.i32(0), n, k.i32(1), {n});
  Builder body(&loop->region(0));
  Value* acc = loop->region(0).arg(1);
  Value* zero = body.constInt(Type::scalar(DType::I32), 0);
  Value* next = body.binary(OpKind::Add, zero, acc);  // 0 + acc -> acc + 0 -> acc
  body.yield({next});
  k.keep(out, loop->result(0));
  k.finish();
  EXPECT_TRUE(canonicalize(k.fn));
  EXPECT_VERIFIES(k.fn);
  EXPECT_EQ(loop->region(0).terminator()->operand(0), acc);
  EXPECT_FALSE(canonicalize(k.fn));
}

}  // namespace
}  // namespace tl
