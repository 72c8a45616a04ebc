// The verifier, rule by rule: each case builds a valid op with tl::Builder (which would throw if
// it were not valid), breaks one thing, and expects verifyOp() to name the problem. Then the
// function-level rules: parameters, parents, terminators and dominance.
#include <gtest/gtest.h>

#include <functional>

#include "IrTestUtil.h"
#include "ir/Verifier.h"

namespace tl {
namespace {

// A function with parameters of several types and a few tiles to build ops from.
struct Ctx {
  Function fn;
  Builder b{&fn.body};
  Value *p, *n, *f, *c, *l;  // ptr<f32>, i32, f32, i1, i64
  Value *ti, *tf, *tm, *t2;  // <8xi32>, <8xf32>, <8xi1>, <4x8xf32>
  Value* tp;                 // <8xptr<f32>>

  Ctx() {
    auto param = [&](const char* name, Type t) {
      fn.params.push_back({name, t.isPtr ? Param::Kind::Pointer : Param::Kind::Scalar, {1, 1}});
      return fn.body.addArg(t, name);
    };
    p = param("p", Type::ptr(DType::F32));
    n = param("n", Type::scalar(DType::I32));
    f = param("f", Type::scalar(DType::F32));
    c = param("c", Type::scalar(DType::I1));
    l = param("l", Type::scalar(DType::I64));
    b.setLoc({2, 3});
    ti = b.arange(0, 8);
    tf = b.splat(f, {8});
    tm = b.splat(c, {8});
    t2 = b.splat(f, {4, 8});
    tp = b.splat(p, {8});
  }
  Type T(DType d, Shape s = {}) { return Type::tile(d, std::move(s)); }
};

struct RuleCase {
  const char* name;
  std::function<Op*(Ctx&)> make;  // builds a valid op, then breaks it
  const char* message;            // substring of the expected verifyOp message
};

Op* def(Value* v) { return v->def; }
Op* withResultType(Op* op, Type t) {
  op->result()->type = std::move(t);
  return op;
}
Op* withAttr(Op* op, const char* name, Attr value) {
  op->setAttr(name, std::move(value));
  return op;
}
Op* withoutAttrs(Op* op) {
  op->attrs.clear();
  return op;
}
Op* withOperand(Op* op, size_t i, Value* v) {
  op->operands.at(i) = v;
  return op;
}
Op* withOperands(Op* op, std::vector<Value*> v) {
  op->operands = std::move(v);
  return op;
}

std::vector<RuleCase> ruleCases() {
  using D = DType;
  return {
      // shapes of every result
      {"ResultNotPowerOfTwo", [](Ctx& x) { return withResultType(def(x.tf), x.T(D::F32, {3})); }, "must have rank <= 3 and power-of-two dims"},
      {"ResultRank4", [](Ctx& x) { return withResultType(def(x.tf), x.T(D::F32, {2, 2, 2, 2})); }, "must have rank <= 3"},
      // program_id / num_programs
      {"ProgramIdAxisRange", [](Ctx& x) { return withAttr(def(x.b.programId(0)), "axis", int64_t(3)); }, "attribute 'axis' = 3 out of range"},
      {"ProgramIdNoAxis", [](Ctx& x) { return withoutAttrs(def(x.b.numPrograms(1))); }, "missing integer attribute 'axis'"},
      {"ProgramIdResultType", [](Ctx& x) { return withResultType(def(x.b.programId(0)), x.T(D::I64)); }, "result types differ: i64 vs i32"},
      {"ProgramIdOperand", [](Ctx& x) { return withOperands(def(x.b.programId(0)), {x.n}); }, "expected 0 operands, got 1"},
      // constant
      {"ConstantPointer", [](Ctx& x) { return withResultType(def(x.b.constFloat(x.T(D::F32), 1)), Type::ptr(D::F32)); }, "constants cannot be pointers"},
      {"ConstantNoValue", [](Ctx& x) { return withoutAttrs(def(x.b.constInt(x.T(D::I32), 1))); }, "missing attribute 'value'"},
      {"ConstantIntWithFloat", [](Ctx& x) { return withAttr(def(x.b.constInt(x.T(D::I32), 1)), "value", 1.5); }, "integer constant needs an integer value"},
      {"ConstantString", [](Ctx& x) { return withAttr(def(x.b.constFloat(x.T(D::F32), 1)), "value", std::string("one")); }, "value must be a number"},
      // arange
      {"ArangeNotPowerOfTwo", [](Ctx& x) { return withAttr(def(x.b.arange(0, 8)), "end", int64_t(7)); }, "end - start must be a power of two"},
      {"ArangeResultType", [](Ctx& x) { return withResultType(def(x.b.arange(0, 8)), x.T(D::I32, {16})); }, "result types differ"},
      {"ArangeNoStart", [](Ctx& x) { Op* op = def(x.b.arange(0, 8)); op->attrs.erase(op->attrs.begin()); return op; }, "missing integer attribute 'start'"},
      {"ArangeStringStart", [](Ctx& x) { return withAttr(def(x.b.arange(0, 8)), "start", std::string("0")); }, "missing integer attribute 'start'"},
      {"ArangeHugeBounds", [](Ctx& x) { return withAttr(def(x.b.arange(0, 8)), "start", std::numeric_limits<int64_t>::min()); }, "out of range"},
      // splat / broadcast / expand_dims
      {"SplatOfTile", [](Ctx& x) { return withOperand(def(x.b.splat(x.f, {8})), 0, x.tf); }, "operand must be a scalar"},
      {"SplatToScalar", [](Ctx& x) { return withResultType(def(x.b.splat(x.f, {8})), x.T(D::F32)); }, "result must be a tile"},
      {"SplatElement", [](Ctx& x) { return withResultType(def(x.b.splat(x.f, {8})), x.T(D::I32, {8})); }, "element types differ"},
      {"BroadcastRank", [](Ctx& x) { return withResultType(def(x.b.broadcast(x.b.expandDims(x.tf, 0), {4, 8})), x.T(D::F32, {8})); }, "tiles of equal rank"},
      {"BroadcastElement", [](Ctx& x) { return withResultType(def(x.b.broadcast(x.b.expandDims(x.tf, 0), {4, 8})), x.T(D::I32, {4, 8})); }, "element types differ"},
      {"BroadcastNonUnitDim", [](Ctx& x) { return withResultType(def(x.b.broadcast(x.b.expandDims(x.tf, 0), {4, 8})), x.T(D::F32, {4, 16})); }, "cannot broadcast <1x8xf32> to <4x16xf32>"},
      {"ExpandDimsAxis", [](Ctx& x) { return withAttr(def(x.b.expandDims(x.tf, 0)), "axis", int64_t(5)); }, "attribute 'axis' = 5 out of range"},
      {"ExpandDimsResult", [](Ctx& x) { return withResultType(def(x.b.expandDims(x.tf, 0)), x.T(D::F32, {8, 1})); }, "result types differ"},
      // convert
      {"ConvertShape", [](Ctx& x) { return withResultType(def(x.b.convert(x.tf, D::F16)), x.T(D::F16, {16})); }, "operand/result shapes differ"},
      {"ConvertPointer", [](Ctx& x) { return withOperand(def(x.b.convert(x.tf, D::F16)), 0, x.tp); }, "cannot convert pointers"},
      // unary
      {"NegOfMask", [](Ctx& x) { Op* op = def(x.b.unary(OpKind::Neg, x.ti)); op->operands[0] = x.tm; op->result()->type = x.tm->type; return op; }, "needs an int or float operand"},
      {"AbsResultType", [](Ctx& x) { return withResultType(def(x.b.unary(OpKind::Abs, x.tf)), x.T(D::F16, {8})); }, "operand/result types differ"},
      {"NotOfFloat", [](Ctx& x) { Op* op = def(x.b.unary(OpKind::Not, x.ti)); op->operands[0] = x.tf; op->result()->type = x.tf->type; return op; }, "needs an integer or i1 operand"},
      {"ExpOfInt", [](Ctx& x) { Op* op = def(x.b.unary(OpKind::Exp, x.tf)); op->operands[0] = x.ti; op->result()->type = x.ti->type; return op; }, "needs a float operand"},
      // binary
      {"AddOperandTypes", [](Ctx& x) { return withOperand(def(x.b.binary(OpKind::Add, x.tf, x.tf)), 1, x.ti); }, "operand types differ: <8xf32> vs <8xi32>"},
      {"AddResultType", [](Ctx& x) { return withResultType(def(x.b.binary(OpKind::Mul, x.tf, x.tf)), x.T(D::F16, {8})); }, "operand/result types differ"},
      {"AddOfMasks", [](Ctx& x) { Op* op = def(x.b.binary(OpKind::Sub, x.tf, x.tf)); op->operands = {x.tm, x.tm}; op->result()->type = x.tm->type; return op; }, "needs int or float operands"},
      {"AddOneOperand", [](Ctx& x) { return withOperands(def(x.b.binary(OpKind::Add, x.tf, x.tf)), {x.tf}); }, "expected 2 operands, got 1"},
      {"AddNullOperand", [](Ctx& x) { return withOperand(def(x.b.binary(OpKind::Add, x.tf, x.tf)), 0, nullptr); }, "null operand"},
      {"AndOfFloats", [](Ctx& x) { Op* op = def(x.b.binary(OpKind::And, x.ti, x.ti)); op->operands = {x.tf, x.tf}; op->result()->type = x.tf->type; return op; }, "needs integer or i1 operands"},
      // cmp / select
      {"CmpResultNotMask", [](Ctx& x) { return withResultType(def(x.b.cmp("lt", x.tf, x.tf)), x.T(D::F32, {8})); }, "result types differ"},
      {"CmpBadPred", [](Ctx& x) { return withAttr(def(x.b.cmp("lt", x.tf, x.tf)), "pred", std::string("lq")); }, "attribute 'pred' has unknown value 'lq'"},
      {"CmpNoPred", [](Ctx& x) { return withoutAttrs(def(x.b.cmp("lt", x.tf, x.tf))); }, "missing string attribute 'pred'"},
      {"CmpPointers", [](Ctx& x) { Op* op = def(x.b.cmp("eq", x.tf, x.tf)); op->operands = {x.tp, x.tp}; op->result()->type = x.tm->type; return op; }, "cannot compare pointers"},
      {"SelectCondNotMask", [](Ctx& x) { return withOperand(def(x.b.select(x.tm, x.tf, x.tf)), 0, x.tf); }, "mask must have dtype i1"},
      {"SelectShapes", [](Ctx& x) { return withOperand(def(x.b.select(x.tm, x.tf, x.tf)), 0, x.b.splat(x.c, {16})); }, "condition/value shapes differ"},
      {"SelectValueTypes", [](Ctx& x) { return withOperand(def(x.b.select(x.tm, x.tf, x.tf)), 2, x.ti); }, "value types differ"},
      // addptr
      {"AddPtrNotPointer", [](Ctx& x) { return withOperand(def(x.b.addptr(x.tp, x.ti)), 0, x.ti); }, "first operand must be a pointer"},
      {"AddPtrFloatOffset", [](Ctx& x) { return withOperand(def(x.b.addptr(x.tp, x.ti)), 1, x.tf); }, "offset must be i32 or i64"},
      {"AddPtrShapes", [](Ctx& x) { return withOperand(def(x.b.addptr(x.tp, x.ti)), 1, x.n); }, "pointer/offset shapes differ"},
      {"AddPtrResult", [](Ctx& x) { return withResultType(def(x.b.addptr(x.tp, x.ti)), x.T(D::F32, {8})); }, "result types differ"},
      // load / store
      {"LoadNotPointer", [](Ctx& x) { return withOperand(def(x.b.load(x.tp)), 0, x.tf); }, "operand must be a pointer"},
      {"LoadResult", [](Ctx& x) { return withResultType(def(x.b.load(x.tp)), x.T(D::F16, {8})); }, "result types differ"},
      {"LoadMaskDType", [](Ctx& x) { return withOperand(def(x.b.load(x.tp, x.tm)), 1, x.ti); }, "mask must have dtype i1"},
      {"LoadMaskShape", [](Ctx& x) { return withOperand(def(x.b.load(x.tp, x.tm)), 1, x.c); }, "mask/result shapes differ"},
      {"LoadOtherType", [](Ctx& x) { return withOperand(def(x.b.load(x.tp, x.tm, x.tf)), 2, x.ti); }, "other/result types differ"},
      {"LoadTooMany", [](Ctx& x) { Op* op = def(x.b.load(x.tp, x.tm, x.tf)); op->operands.push_back(x.tf); return op; }, "expected 1..3 operands, got 4"},
      {"StoreNotPointer", [](Ctx& x) { x.b.store(x.tp, x.tf); Op* op = x.fn.body.ops.back().get(); return withOperand(op, 0, x.tf); }, "operand must be a pointer"},
      {"StoreValueType", [](Ctx& x) { x.b.store(x.tp, x.tf); Op* op = x.fn.body.ops.back().get(); return withOperand(op, 1, x.ti); }, "value/pointee types differ"},
      {"StoreMaskShape", [](Ctx& x) { x.b.store(x.tp, x.tf, x.tm); Op* op = x.fn.body.ops.back().get(); return withOperand(op, 2, x.c); }, "mask/value shapes differ"},
      {"StoreWithResult", [](Ctx& x) { x.b.store(x.tp, x.tf); Op* op = x.fn.body.ops.back().get(); op->addResult(x.T(D::F32)); return op; }, "expected 0 results, got 1"},
      // reductions
      {"ReduceScalar", [](Ctx& x) { return withOperand(def(x.b.reduce("sum", x.tf, 0)), 0, x.f); }, "operand must be an int or float tile"},
      {"ReduceAxis", [](Ctx& x) { return withAttr(def(x.b.reduce("sum", x.tf, 0)), "axis", int64_t(1)); }, "attribute 'axis' = 1 out of range"},
      {"ReduceKind", [](Ctx& x) { return withAttr(def(x.b.reduce("sum", x.tf, 0)), "kind", std::string("prod")); }, "attribute 'kind' has unknown value 'prod'"},
      {"ReduceResult", [](Ctx& x) { return withResultType(def(x.b.reduce("max", x.t2, 0)), x.T(D::F32, {4})); }, "result types differ: <4xf32> vs <8xf32>"},
      {"ArgmaxResult", [](Ctx& x) { return withResultType(def(x.b.argmax(x.t2, 1)), x.T(D::F32, {4})); }, "result types differ"},
      {"DotNot2D", [](Ctx& x) { Value* a = x.b.convert(x.t2, D::F16); Value* bb = x.b.splat(x.b.convert(x.f, D::F16), {8, 4}); return withOperand(def(x.b.dot(a, bb, x.b.splat(x.f, {4, 4}))), 0, x.tf); }, "operands must be 2-D tiles"},
      {"DotIntOperands", [](Ctx& x) { Value* bb = x.b.splat(x.f, {8, 4}); Op* op = def(x.b.dot(x.t2, bb, x.b.splat(x.f, {4, 4}))); op->operands[0] = x.b.splat(x.n, {4, 8}); return op; }, "a and b must be float tiles of one dtype"},
      {"DotInnerDims", [](Ctx& x) { Value* bb = x.b.splat(x.f, {8, 4}); return withOperand(def(x.b.dot(x.t2, bb, x.b.splat(x.f, {4, 4}))), 1, x.b.splat(x.f, {4, 4})); }, "inner dimensions differ"},
      {"DotAccumulator", [](Ctx& x) { Value* bb = x.b.splat(x.f, {8, 4}); Op* op = def(x.b.dot(x.t2, bb, x.b.splat(x.f, {4, 4}))); op->operands[2] = x.b.convert(op->operand(2), D::F16); return op; }, "accumulator types differ"},
      // for
      {"ForTwoOperands", [](Ctx& x) { Op* op = x.b.forOp(x.n, x.n, x.n, {}); op->operands.pop_back(); return op; }, "needs lo, hi and step operands"},
      {"ForFloatBounds", [](Ctx& x) { Op* op = x.b.forOp(x.n, x.n, x.n, {}); op->operands = {x.f, x.f, x.f}; return op; }, "bounds must be i32 or i64 scalars"},
      {"ForStepType", [](Ctx& x) { return withOperand(x.b.forOp(x.n, x.n, x.n, {}), 2, x.l); }, "step types differ: i64 vs i32"},
      {"ForExtraResult", [](Ctx& x) { Op* op = x.b.forOp(x.n, x.n, x.n, {x.tf}); op->addResult(x.T(D::F32)); return op; }, "needs one result per carried value"},
      {"ForResultType", [](Ctx& x) { return withResultType(x.b.forOp(x.n, x.n, x.n, {x.tf}), x.T(D::F16, {8})); }, "carried value/result types differ"},
      {"ForNoRegion", [](Ctx& x) { Op* op = x.b.forOp(x.n, x.n, x.n, {}); op->regions.clear(); return op; }, "needs exactly one region"},
      {"ForBodyArgs", [](Ctx& x) { Op* op = x.b.forOp(x.n, x.n, x.n, {x.tf}); op->region(0).args.pop_back(); return op; }, "body needs the iv and one argument per carried value"},
      {"ForIvType", [](Ctx& x) { Op* op = x.b.forOp(x.n, x.n, x.n, {}); op->region(0).arg(0)->type = x.T(D::I64); return op; }, "iv types differ"},
      {"ForBodyArgType", [](Ctx& x) { Op* op = x.b.forOp(x.n, x.n, x.n, {x.tf}); op->region(0).arg(1)->type = x.T(D::F32); return op; }, "body argument/result types differ"},
      // if, yield, return
      {"IfCondition", [](Ctx& x) { return withOperand(x.b.ifOp(x.c, {}), 0, x.n); }, "condition must be an i1 scalar, got i32"},
      {"IfOneRegion", [](Ctx& x) { Op* op = x.b.ifOp(x.c, {}); op->regions.pop_back(); return op; }, "needs a then and an else region"},
      {"IfBranchArgs", [](Ctx& x) { Op* op = x.b.ifOp(x.c, {}); op->region(1).addArg(x.T(D::I32)); return op; }, "branches take no arguments"},
      {"YieldResult", [](Ctx& x) { x.b.yield({x.f}); Op* op = x.fn.body.ops.back().get(); op->addResult(x.T(D::F32)); return op; }, "expected 0 results, got 1"},
      {"ReturnOperand", [](Ctx& x) { x.b.ret(); Op* op = x.fn.body.ops.back().get(); op->operands.push_back(x.n); return op; }, "expected 0 operands, got 1"},
  };
}

class VerifierRules : public ::testing::TestWithParam<RuleCase> {};

TEST_P(VerifierRules, RejectsBrokenOp) {
  Ctx ctx;
  Op* op = GetParam().make(ctx);
  ASSERT_NE(op, nullptr);
  auto err = verifyOp(*op);
  ASSERT_TRUE(err.has_value()) << "accepted a broken " << mnemonic(op->kind);
  EXPECT_NE(err->find(GetParam().message), std::string::npos) << "got: " << *err;
  EXPECT_EQ(err->rfind(mnemonic(op->kind), 0), 0u) << "message should start with the op name: " << *err;
}

INSTANTIATE_TEST_SUITE_P(All, VerifierRules, ::testing::ValuesIn(ruleCases()),
                         [](const auto& info) { return std::string(info.param.name); });

TEST(Verifier, BuilderRejectsAMalformedOpWhereItIsBuilt) {
  Ctx x;
  x.b.setLoc({9, 7});
  try {
    x.b.binary(OpKind::Add, x.tf, x.ti);
    FAIL() << "Builder accepted add of <8xf32> and <8xi32>";
  } catch (const IRError& e) {
    EXPECT_EQ(e.loc, (Loc{9, 7}));
    EXPECT_NE(std::string(e.what()).find("add: operand types differ"), std::string::npos) << e.what();
  }
}

// --- function-level rules --------------------------------------------------------------------

// A valid little function: %s = add %n, %n ; if %c { %t = neg %s; yield %t } else { yield %s } ;
// for ... { yield } ; return. Each test breaks one thing.
struct SmallFn {
  Ctx x;
  Value* s;
  Op* ifOp;
  Op* forOp;
  SmallFn() {
    x.b.setLoc({3, 5});
    s = x.b.binary(OpKind::Add, x.n, x.n);
    ifOp = x.b.ifOp(x.c, {x.T(DType::I32)});
    Builder tb(&ifOp->region(0));
    tb.setLoc({4, 7});
    tb.yield({tb.unary(OpKind::Neg, s)});
    Builder eb(&ifOp->region(1));
    eb.setLoc({5, 7});
    eb.yield({s});
    x.b.setLoc({6, 5});
    forOp = x.b.forOp(x.n, x.n, x.n, {s});
    Builder fb(&forOp->region(0));
    fb.setLoc({7, 7});
    fb.yield({forOp->region(0).arg(1)});
    x.b.setLoc({8, 5});
    x.b.ret();
  }
  std::string verify() { return verifyFunction(x.fn); }
};

void expectProblem(const std::string& out, const char* what) {
  EXPECT_NE(out.find(what), std::string::npos) << "got: " << out;
}

TEST(VerifierFunction, ValidFunctionPasses) { EXPECT_EQ(SmallFn().verify(), ""); }

TEST(VerifierFunction, ParamCountMismatch) {
  SmallFn f;
  f.x.fn.params.pop_back();
  expectProblem(f.verify(), "function has 4 params but 5 body arguments");
}

TEST(VerifierFunction, ParamKindMismatch) {
  SmallFn f;
  f.x.fn.params[1].kind = Param::Kind::Pointer;
  expectProblem(f.verify(), "parameter 'n' has type i32");
}

TEST(VerifierFunction, TileParameter) {
  SmallFn f;
  f.x.fn.body.arg(2)->type = f.x.T(DType::F32, {8});
  expectProblem(f.verify(), "parameter 'f' has type <8xf32>");
}

TEST(VerifierFunction, WrongParent) {
  SmallFn f;
  f.s->def->parent = nullptr;
  expectProblem(f.verify(), "add: wrong parent region");
}

TEST(VerifierFunction, UseBeforeDefinition) {
  SmallFn f;
  auto& ops = f.x.fn.body.ops;
  // Move the add (which the if and the for use) to just before the return.
  size_t i = 0;
  while (ops[i].get() != f.s->def) ++i;
  auto add = std::move(ops[i]);
  ops.erase(ops.begin() + static_cast<std::ptrdiff_t>(i));
  ops.insert(ops.end() - 1, std::move(add));
  expectProblem(f.verify(), "operand used before it is defined");
}

TEST(VerifierFunction, UseFromSiblingRegion) {
  SmallFn f;
  Value* t = f.ifOp->region(0).ops[0]->result();  // %t, defined in the then-branch
  f.ifOp->region(1).ops.back()->operands[0] = t;   // used in the else-branch
  expectProblem(f.verify(), "IR verifier: yield: operand used before it is defined (or out of scope)");
}

TEST(VerifierFunction, UseOfLoopBodyValueAfterLoop) {
  SmallFn f;
  Value* arg = f.forOp->region(0).arg(1);
  Builder b;
  b.setInsertionPoint(&f.x.fn.body, f.x.fn.body.ops.size() - 1);
  b.unary(OpKind::Neg, arg);
  expectProblem(f.verify(), "neg: operand used before it is defined (or out of scope)");
}

TEST(VerifierFunction, MissingReturn) {
  SmallFn f;
  f.x.fn.body.ops.pop_back();
  expectProblem(f.verify(), "region must end with 'return'");
}

TEST(VerifierFunction, TerminatorNotLast) {
  SmallFn f;
  Builder b;
  b.setInsertionPoint(&f.x.fn.body, 0);
  b.ret();
  expectProblem(f.verify(), "return must be the last op of its region");
}

TEST(VerifierFunction, ForBodyEndingWithReturn) {
  SmallFn f;
  Region& body = f.forOp->region(0);
  body.ops.pop_back();
  Builder(&body).ret();
  expectProblem(f.verify(), "region must end with 'yield'");
}

TEST(VerifierFunction, YieldCountAndType) {
  SmallFn a;
  a.ifOp->region(1).ops.back()->operands.clear();
  expectProblem(a.verify(), "yield: expected 1 values, got 0");
  SmallFn b;
  b.ifOp->region(1).ops.back()->operands[0] = b.x.l;
  expectProblem(b.verify(), "yield: value 0 has type i64, expected i32");
}

TEST(VerifierFunction, RegionOnPlainOp) {
  SmallFn f;
  f.s->def->addRegion();
  expectProblem(f.verify(), "add cannot have regions");
}

TEST(VerifierFunction, ReportsLocatedProblems) {
  SmallFn f;
  f.x.fn.source = std::make_shared<SourceFile>("k.tl", "l1\nl2\n    s = n + n\n");
  f.s->def->operands[1] = f.x.f;  // add i32 + f32
  EXPECT_EQ(f.verify().rfind("k.tl:3:5: error: IR verifier: add: operand types differ: i32 vs f32\n", 0), 0u)
      << f.verify();
}

}  // namespace
}  // namespace tl
