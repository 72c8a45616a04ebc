// The ops of issue 12 in the IR library: the verifier's rules for log2 ... erf, fma, shl, shr,
// umulhi, while / condition, the atomics and debug_barrier; while's text form (printed, parsed
// back, its errors); and fold-constants on the new elementwise ops (bit-for-bit what the
// engines compute: runtime/FloatOps.h).
#include <gtest/gtest.h>

#include <cmath>

#include "IrTestUtil.h"
#include "ir/Pass.h"
#include "ir/PassUtils.h"
#include "ir/Verifier.h"
#include "runtime/FloatOps.h"

namespace tl {
namespace {

struct Ctx {
  Function fn;
  Builder b{&fn.body};
  Value *p, *lp, *n, *f, *c, *l;  // ptr<f32>, ptr<i64>, i32, f32, i1, i64
  Ctx() {
    auto param = [&](const char* name, Type t) {
      fn.params.push_back({name, t.isPtr ? Param::Kind::Pointer : Param::Kind::Scalar, {1, 1}});
      return fn.body.addArg(t, name);
    };
    p = param("p", Type::ptr(DType::F32));
    lp = param("lp", Type::ptr(DType::I64));
    n = param("n", Type::scalar(DType::I32));
    f = param("f", Type::scalar(DType::F32));
    c = param("c", Type::scalar(DType::I1));
    l = param("l", Type::scalar(DType::I64));
    b.setLoc({2, 3});
  }
};

std::string errorOf(const std::function<void(Ctx&)>& build) {
  Ctx x;
  try {
    build(x);
  } catch (const IRError& e) {
    return e.what();
  }
  return "";
}

TEST(NewOpsVerifier, ElementwiseDtypes) {
  for (OpKind k : {OpKind::Log2, OpKind::Cos, OpKind::Sin, OpKind::Floor, OpKind::Ceil, OpKind::Erf}) {
    EXPECT_EQ(errorOf([&](Ctx& x) { x.b.unary(k, x.f); }), "") << mnemonic(k);
    EXPECT_NE(errorOf([&](Ctx& x) { x.b.unary(k, x.n); }).find("needs a float operand"), std::string::npos) << mnemonic(k);
  }
  for (OpKind k : {OpKind::Shl, OpKind::Shr, OpKind::Umulhi}) {
    EXPECT_EQ(errorOf([&](Ctx& x) { x.b.binary(k, x.n, x.n); }), "") << mnemonic(k);
    EXPECT_EQ(errorOf([&](Ctx& x) { x.b.binary(k, x.l, x.l); }), "") << mnemonic(k);
    EXPECT_NE(errorOf([&](Ctx& x) { x.b.binary(k, x.f, x.f); }).find("needs i32 or i64"), std::string::npos);
    EXPECT_NE(errorOf([&](Ctx& x) { x.b.binary(k, x.c, x.c); }).find("needs i32 or i64"), std::string::npos);
    EXPECT_NE(errorOf([&](Ctx& x) { x.b.binary(k, x.n, x.l); }).find("types differ"), std::string::npos);
  }
  EXPECT_EQ(errorOf([](Ctx& x) { x.b.fma(x.f, x.f, x.f); }), "");
  EXPECT_NE(errorOf([](Ctx& x) { x.b.fma(x.n, x.n, x.n); }).find("needs float operands"), std::string::npos);
  EXPECT_NE(errorOf([](Ctx& x) { x.b.create(OpKind::Fma, {x.f, x.f}, {x.f->type}); }).find("expected 3"), std::string::npos);
}

TEST(NewOpsVerifier, Atomics) {
  EXPECT_EQ(errorOf([](Ctx& x) { x.b.atomicRMW("add", x.p, x.f); }), "");
  EXPECT_EQ(errorOf([](Ctx& x) { x.b.atomicRMW("xor", x.lp, x.l, x.c, "relaxed", "sys"); }), "");
  EXPECT_EQ(errorOf([](Ctx& x) { x.b.atomicCAS(x.lp, x.l, x.l, nullptr, "acquire", "cta"); }), "");
  EXPECT_NE(errorOf([](Ctx& x) { x.b.atomicRMW("max", x.p, x.f); }).find("atomic max needs i32 or i64"), std::string::npos);
  EXPECT_NE(errorOf([](Ctx& x) { x.b.atomicRMW("mul", x.lp, x.l); }).find("unknown value 'mul'"), std::string::npos);
  EXPECT_NE(errorOf([](Ctx& x) { x.b.atomicRMW("add", x.p, x.f, nullptr, "seq_cst"); }).find("'sem'"), std::string::npos);
  EXPECT_NE(errorOf([](Ctx& x) { x.b.atomicRMW("add", x.p, x.f, nullptr, "relaxed", "warp"); }).find("'scope'"),
            std::string::npos);
  EXPECT_NE(errorOf([](Ctx& x) { x.b.atomicCAS(x.p, x.f, x.f); }).find("compare-and-swap needs i32 or i64"),
            std::string::npos);
  EXPECT_NE(errorOf([](Ctx& x) { x.b.atomicRMW("add", x.p, x.n); }).find("types differ"), std::string::npos);
  EXPECT_NE(errorOf([](Ctx& x) { x.b.atomicRMW("add", x.n, x.n); }).find("must be a pointer"), std::string::npos);
  EXPECT_NE(errorOf([](Ctx& x) { x.b.atomicRMW("add", x.p, x.f, x.n); }).find("mask must have dtype i1"),
            std::string::npos);
  // Tiles: mask and pointer shapes agree.
  EXPECT_EQ(errorOf([](Ctx& x) {
              Value* ptrs = x.b.addptr(x.b.splat(x.lp, {8}), x.b.arange(0, 8));
              x.b.atomicRMW("min", ptrs, x.b.splat(x.l, {8}), x.b.splat(x.c, {8}));
            }),
            "");
  EXPECT_NE(errorOf([](Ctx& x) {
              Value* ptrs = x.b.addptr(x.b.splat(x.lp, {8}), x.b.arange(0, 8));
              x.b.atomicRMW("min", ptrs, x.b.splat(x.l, {8}), x.b.splat(x.c, {4}));
            }).find("mask/result shapes differ"),
            std::string::npos);
}

// i = 0; while i < n: i = i + 1 — built, verified, printed, parsed back.
std::unique_ptr<Function> countingLoop() {
  auto fn = std::make_unique<Function>();
  fn->name = "count";
  fn->params.push_back({"out", Param::Kind::Pointer, {1, 1}});
  fn->params.push_back({"n", Param::Kind::Scalar, {1, 1}});
  Value* out = fn->body.addArg(Type::ptr(DType::I32), "out");
  Value* n = fn->body.addArg(Type::scalar(DType::I32), "n");
  Builder b(&fn->body);
  Value* zero = b.constInt(Type::scalar(DType::I32), 0);
  zero->name = "i";
  Value* one = b.constInt(Type::scalar(DType::I32), 1);
  Op* w = b.whileOp({zero});
  Builder cb(&w->region(0));
  cb.condition(cb.cmp("lt", w->region(0).arg(0), n));
  Builder wb(&w->region(1));
  wb.yield({wb.binary(OpKind::Add, w->region(1).arg(0), one)});
  b.store(out, w->result());
  b.ret();
  return fn;
}

TEST(NewOpsWhile, VerifiesPrintsAndParsesBack) {
  auto fn = countingLoop();
  ASSERT_EQ(verifyFunction(*fn), "");
  std::string text = printFunction(*fn, {.locs = false});
  EXPECT_NE(text.find("= while iter_args(%i.1 = %i) : i32 {"), std::string::npos) << text;
  EXPECT_NE(text.find("condition %"), std::string::npos) << text;
  EXPECT_NE(text.find("} do (%i.2) {"), std::string::npos) << text;
  DiagEngine diag;
  auto back = test::parseText(text, diag);
  ASSERT_NE(back, nullptr) << diag.renderAll() << text;
  EXPECT_EQ(printFunction(*back, {.locs = false}), text);
  EXPECT_EQ(test::structuralDiff(*fn, *back), "");
  EXPECT_EQ(verifyFunction(*back), "");
}

TEST(NewOpsWhile, VerifierRules) {
  auto fn = countingLoop();
  Op* w = fn->body.ops[2].get();
  ASSERT_EQ(w->kind, OpKind::While);
  // The cond region must end in `condition`, not yield.
  w->region(0).ops.back()->kind = OpKind::Yield;
  EXPECT_NE(verifyFunction(*fn).find("region must end with 'condition'"), std::string::npos) << verifyFunction(*fn);
  w->region(0).ops.back()->kind = OpKind::Condition;
  EXPECT_EQ(verifyFunction(*fn), "");
  // condition takes an i1 scalar.
  Op* cond = w->region(0).ops.back().get();
  Value* saved = cond->operands[0];
  cond->operands[0] = w->region(0).arg(0);
  EXPECT_NE(verifyFunction(*fn).find("condition must be an i1 scalar"), std::string::npos);
  cond->operands[0] = saved;
  // The body yields the carried types.
  w->region(1).args[0]->type = Type::scalar(DType::I64);
  EXPECT_NE(verifyFunction(*fn).find("region argument/result types differ"), std::string::npos) << verifyFunction(*fn);
  w->region(1).args[0]->type = Type::scalar(DType::I32);
  // A while is never removed as dead code (it may not end), even with unused results.
  EXPECT_TRUE(hasSideEffects(*w));
}

TEST(NewOpsWhile, ParseErrors) {
  const char* bad[] = {
      // the body's argument list is missing
      "func @k(%n: i32) {\n  %c = constant {value = 0} : i32\n  %r = while iter_args(%a = %c) : i32 {\n"
      "    %t = cmp %a, %n {pred = \"lt\"} : i1\n    condition %t\n  } do {\n    yield %a\n  }\n  return\n}\n",
      // the cond region ends in yield
      "func @k(%n: i32) {\n  %c = constant {value = 0} : i32\n  %r = while iter_args(%a = %c) : i32 {\n"
      "    yield %a\n  } do (%b) {\n    yield %b\n  }\n  return\n}\n",
  };
  const char* expect[] = {"the body needs 1 argument(s), got 0", "'yield' cannot end this region; expected 'condition'"};
  for (int i = 0; i < 2; ++i) {
    DiagEngine diag;
    auto fn = test::parseText(bad[i], diag);
    EXPECT_EQ(fn, nullptr);
    EXPECT_NE(diag.renderAll().find(expect[i]), std::string::npos) << diag.renderAll();
  }
}

// One op on constant operands, folded: the value fold-constants leaves, or nullopt.
std::optional<ConstValue> foldOne(OpKind k, DType d, std::vector<double> fs, std::vector<int64_t> is) {
  Ctx x;
  std::vector<Value*> ins;
  Type t = Type::scalar(d);
  for (double v : fs) ins.push_back(x.b.constFloat(t, v));
  for (int64_t v : is) ins.push_back(x.b.constInt(t, v));
  Value* r = x.b.create(k, ins, {t})->result();
  x.b.store(d == DType::F32 ? x.p : x.lp, d == DType::I32 ? x.b.convert(r, DType::I64) : r);
  x.b.ret();
  foldConstants(x.fn);
  return constantOf(r);
}

TEST(NewOpsFold, MatchesTheEngines) {
  for (OpKind k : {OpKind::Log2, OpKind::Cos, OpKind::Sin, OpKind::Floor, OpKind::Ceil, OpKind::Erf})
    for (double v : {-2.5, -0.3, 0.7, 3.0, 100.25}) {
      auto c = foldOne(k, DType::F32, {v}, {});
      if (k == OpKind::Log2 && v < 0) {
        EXPECT_FALSE(c.has_value());  // NaN is not folded
        continue;
      }
      ASSERT_TRUE(c.has_value()) << mnemonic(k) << " " << v;
      EXPECT_EQ(float(c->f), floatUnary(k, float(v))) << mnemonic(k) << " " << v;
    }
  auto fm = foldOne(OpKind::Fma, DType::F32, {1.0 + 0x1p-23, 1.0 - 0x1p-23, -1.0}, {});
  ASSERT_TRUE(fm.has_value());
  EXPECT_EQ(float(fm->f), -0x1p-46f);  // one rounding: the exact a*b + c (two roundings give 0)
  for (DType d : {DType::I32, DType::I64})
    for (int64_t a : {int64_t(-7), int64_t(1), int64_t(0x7fffffff), int64_t(-2147483647 - 1)})
      for (int64_t sh : {0, 1, 31, 32, 63, 64, -1}) {
        for (OpKind k : {OpKind::Shl, OpKind::Shr, OpKind::Umulhi}) {
          int64_t bb = k == OpKind::Umulhi ? a * 3 + sh : sh;
          if (d == DType::I32) bb = static_cast<int32_t>(static_cast<uint32_t>(bb));
          auto c = foldOne(k, d, {}, {a, bb});
          ASSERT_TRUE(c.has_value());
          int64_t want = k == OpKind::Shl ? intShl(d, a, bb) : k == OpKind::Shr ? intShr(d, a, bb) : intUmulhi(d, a, bb);
          EXPECT_EQ(c->i, want) << mnemonic(k) << " " << dtypeName(d) << " " << a << ", " << bb;
        }
      }
  // Spot checks of the definitions themselves.
  EXPECT_EQ(intShr(DType::I32, -8, 1), -4);
  EXPECT_EQ(intShr(DType::I32, -8, 31), -1);
  EXPECT_EQ(intShr(DType::I32, -8, 32), -1);
  EXPECT_EQ(intShl(DType::I32, 1, 31), -2147483647 - 1);
  EXPECT_EQ(intShl(DType::I32, 1, 32), 0);
  EXPECT_EQ(intUmulhi(DType::I32, -1, -1), -2);               // 0xffffffff^2 = 0xfffffffe_00000001
  EXPECT_EQ(intUmulhi(DType::I32, -2, 3), 2);                 // 0xfffffffe * 3 = 0x2_fffffffa
  EXPECT_EQ(intUmulhi(DType::I64, -1, 2), 1);
}

}  // namespace
}  // namespace tl
