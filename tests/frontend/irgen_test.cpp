// IR generation tests: the softmax compiles to the expected verified block IR; promotion,
// weak literals, broadcasting, loops with carried values, if merging and constexpr folding.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

#include "FrontendTestUtil.h"
#include "ir/Verifier.h"

namespace tl {
namespace {

using test::countOps;
using test::findOp;
using test::kernelWith;
using test::runFrontend;

// Compiles a kernel with two f32 buffers x, y, an i32 n and constexpr B = 64.
std::unique_ptr<test::FrontendRun> body(const std::string& b, const std::string& extraParams = "") {
  return runFrontend(kernelWith("x=zeros(64), y=zeros(64), n=10, h=zeros(64, dtype=f16), l=3000000000, B=64",
                                "x, y, n, h, l, B: constexpr" + extraParams, b));
}

// The type of the value last stored (the `value` operand of the last store).
Type storedType(const Function& fn) {
  Op* last = nullptr;
  walk(fn.body, [&](Op& op) {
    if (op.kind == OpKind::Store) last = &op;
  });
  return last ? last->operand(1)->type : Type{};
}

TEST(IRGen, SoftmaxCompilesToVerifiedBlockIR) {
  auto r = runFrontend(test::kSoftmax);
  ASSERT_EQ(r->phase, "") << r->errors();
  const Function& fn = *r->fn;
  EXPECT_EQ(verifyFunction(fn), "");
  EXPECT_EQ(fn.name, "softmax_kernel");
  ASSERT_EQ(fn.params.size(), 4u);
  EXPECT_EQ(fn.params[0].name, "x_ptr");
  EXPECT_EQ(fn.params[0].kind, Param::Kind::Pointer);
  EXPECT_EQ(fn.params[2].kind, Param::Kind::Scalar);
  EXPECT_EQ(fn.param(2)->type, Type::scalar(DType::I32));
  EXPECT_EQ(fn.constexprs, (std::vector<std::pair<std::string, int64_t>>{{"BLOCK_N", 1024}}));
  EXPECT_EQ(fn.source, r->file);
  EXPECT_EQ(countOps(fn, OpKind::ProgramId), 1);
  EXPECT_EQ(countOps(fn, OpKind::Arange), 1);
  EXPECT_EQ(countOps(fn, OpKind::Load), 1);
  EXPECT_EQ(countOps(fn, OpKind::Store), 1);
  EXPECT_EQ(countOps(fn, OpKind::Reduce), 2);
  EXPECT_EQ(countOps(fn, OpKind::Exp), 1);
  EXPECT_EQ(countOps(fn, OpKind::Div), 1);
  EXPECT_EQ(countOps(fn, OpKind::AddPtr), 4);
  EXPECT_EQ(fn.body.terminator()->kind, OpKind::Return);
  // Locations and names: the load is at `load` on line 8, named after `x`.
  Op* load = findOp(fn, OpKind::Load);
  EXPECT_EQ(load->loc, (Loc{8, 9}));
  EXPECT_EQ(load->result()->name, "x");
  EXPECT_EQ(load->result()->type, Type::tile(DType::F32, {1024}));
  EXPECT_EQ(load->numOperands(), 3u);  // ptr, mask, other = -inf
  Op* other = load->operand(2)->def;
  EXPECT_EQ(other->kind, OpKind::Constant);
  EXPECT_TRUE(std::isinf(other->floatAttr("value")) && other->floatAttr("value") < 0);
  Op* red = findOp(fn, OpKind::Reduce);
  EXPECT_EQ(red->strAttr("kind"), "max");
  EXPECT_EQ(red->result()->type, Type::scalar(DType::F32));
  EXPECT_EQ(red->loc, (Loc{9, 13}));
}

TEST(IRGen, EveryKernelInKernelsDirCompiles) {
  namespace fs = std::filesystem;
  fs::path dir = fs::path(TL_SOURCE_DIR) / "kernels";
  if (!fs::exists(dir)) GTEST_SKIP() << "no kernels/ directory";
  int n = 0;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.path().extension() != ".tl") continue;
    auto file = SourceFile::load(entry.path().string());
    auto r = runFrontend(file->text(), {}, entry.path().string());
    EXPECT_EQ(r->phase, "") << entry.path() << "\n" << r->errors();
    if (r->fn) {
      EXPECT_EQ(verifyFunction(*r->fn), "");
    }
    ++n;
  }
  EXPECT_GT(n, 0);
}

TEST(IRGen, PromotionRules) {
  // f16 * float literal stays f16; f16 + f32 -> f32; i32 + i64 -> i64; int / int -> f32.
  auto r = body("    a = load(h + arange(0, B))\n    store(h + arange(0, B), a * 2.0)\n");
  ASSERT_EQ(r->phase, "") << r->errors();
  EXPECT_EQ(storedType(*r->fn), Type::tile(DType::F16, {64}));
  EXPECT_EQ(countOps(*r->fn, OpKind::Convert), 0);

  r = body("    a = load(h + arange(0, B))\n    b = load(x + arange(0, B))\n    store(y + arange(0, B), a + b)\n");
  ASSERT_EQ(r->phase, "") << r->errors();
  Op* add = findOp(*r->fn, OpKind::Add);
  EXPECT_EQ(add->result()->type, Type::tile(DType::F32, {64}));
  EXPECT_EQ(countOps(*r->fn, OpKind::Convert), 1);

  r = body("    s = n + l\n    store(x, s)\n");
  ASSERT_EQ(r->phase, "") << r->errors();
  EXPECT_EQ(findOp(*r->fn, OpKind::Add)->result()->type, Type::scalar(DType::I64));

  r = body("    s = n + 1\n    t = l + 1\n    store(x, s / 2)\n    store(y, t)\n");
  ASSERT_EQ(r->phase, "") << r->errors();
  EXPECT_EQ(findOp(*r->fn, OpKind::Add)->result()->type, Type::scalar(DType::I32));  // weak literal
  EXPECT_EQ(findOp(*r->fn, OpKind::Div)->result()->type, Type::scalar(DType::F32));  // int / int
  int adds64 = 0;
  walk(r->fn->body, [&](Op& op) { adds64 += op.kind == OpKind::Add && op.result()->type.dtype == DType::I64; });
  EXPECT_EQ(adds64, 1);  // i64 + literal stays i64

  r = body("    c = arange(0, B) < n\n    s = c + c\n    store(x + arange(0, B), s)\n");
  ASSERT_EQ(r->phase, "") << r->errors();
  EXPECT_EQ(findOp(*r->fn, OpKind::Add)->result()->type, Type::tile(DType::I32, {64}));  // i1 arithmetic in i32
}

TEST(IRGen, BroadcastingIsExplicit) {
  auto r = body("    r = arange(0, 16)\n    c = arange(0, B)\n    off = r[:, None] * 64 + c[None, :]\n"
                "    store(x + off, 1.0)\n");
  ASSERT_EQ(r->phase, "") << r->errors();
  EXPECT_EQ(countOps(*r->fn, OpKind::ExpandDims), 2);
  EXPECT_EQ(countOps(*r->fn, OpKind::Broadcast), 2);
  Op* add = findOp(*r->fn, OpKind::Add);
  EXPECT_EQ(add->result()->type, Type::tile(DType::I32, {16, 64}));
  EXPECT_EQ(storedType(*r->fn), Type::tile(DType::F32, {16, 64}));

  auto bad = body("    a = arange(0, 16)\n    b = arange(0, 64)\n    c = a + b\n");
  ASSERT_EQ(bad->phase, "compile");
  EXPECT_NE(bad->errors().find("cannot broadcast <16xi32> and <64xi32>"), std::string::npos) << bad->errors();
  EXPECT_EQ(bad->diag.diagnostics()[0].loc, (Loc{6, 11}));
}

// x.T is trans(x): one trans op, <16x64> -> <64x16>, and the same error for a 1-D tile.
TEST(IRGen, DotTIsTrans) {
  auto r = body("    r = arange(0, 16)\n    c = arange(0, B)\n    off = r[:, None] * 64 + c[None, :]\n"
                "    t = off.T\n    store(x + t, 1.0)\n");
  ASSERT_EQ(r->phase, "") << r->errors();
  ASSERT_EQ(countOps(*r->fn, OpKind::Trans), 1);
  EXPECT_EQ(findOp(*r->fn, OpKind::Trans)->result()->type, Type::tile(DType::I32, {64, 16}));
  auto bad = body("    a = arange(0, 16)\n    t = a.T\n");
  ASSERT_EQ(bad->phase, "compile");
  EXPECT_NE(bad->errors().find("x.T needs a 2-D tile"), std::string::npos) << bad->errors();
}

TEST(IRGen, ConstexprFolding) {
  auto r = body("    H = B // 2 + cdiv(B, 3) - max(B, 8) % 5\n    c = arange(0, H)\n    store(x + c, 0.0)\n");
  // 32 + 22 - 4 = 50: folded at compile time, and not a power of two.
  EXPECT_NE(r->errors().find("arange(0, 50) has 50 elements"), std::string::npos) << r->errors();
  auto ok = body("    H = B // 2 + (B - B)\n    c = arange(H, H + 32)\n    store(x + c, 0.0)\n");
  ASSERT_EQ(ok->phase, "") << ok->errors();
  Op* ar = findOp(*ok->fn, OpKind::Arange);
  EXPECT_EQ(ar->intAttr("start"), 32);
  EXPECT_EQ(ar->intAttr("end"), 64);
  EXPECT_EQ(countOps(*ok->fn, OpKind::Sub), 0);  // folded, no ops
}

TEST(IRGen, RuntimeValueWhereConstexprNeeded) {
  auto r = body("    c = arange(0, n)\n");
  ASSERT_EQ(r->phase, "compile");
  EXPECT_NE(r->errors().find("'n' must be a compile-time constant (arange() end): declare it `n: constexpr`"),
            std::string::npos)
      << r->errors();
  EXPECT_EQ(r->diag.diagnostics()[0].loc, (Loc{4, 19}));
}

TEST(IRGen, ForLoopCarriesValues) {
  auto r = body("    acc = zeros((B,), dtype=f32)\n    p = x\n    for i in range(0, n, 2):\n"
                "        v = load(p + arange(0, B))\n        acc += v\n        p += B\n"
                "    store(y + arange(0, B), acc)\n");
  ASSERT_EQ(r->phase, "") << r->errors();
  Op* f = findOp(*r->fn, OpKind::For);
  ASSERT_NE(f, nullptr);
  ASSERT_EQ(f->numResults(), 2u);
  EXPECT_EQ(f->result(0)->name, "acc");
  EXPECT_EQ(f->result(0)->type, Type::tile(DType::F32, {64}));
  EXPECT_EQ(f->result(1)->type, Type::ptr(DType::F32));
  EXPECT_EQ(f->region(0).args.size(), 3u);
  EXPECT_EQ(f->region(0).arg(0)->name, "i");
  EXPECT_EQ(f->region(0).terminator()->kind, OpKind::Yield);
  // The store after the loop uses the loop's result.
  Op* st = nullptr;
  walk(r->fn->body, [&](Op& op) {
    if (op.kind == OpKind::Store) st = &op;
  });
  EXPECT_EQ(st->operand(1), f->result(0));
}

TEST(IRGen, ForLoopTypeChangeIsAnError) {
  auto r = body("    acc = 0.0\n    for i in range(4):\n        acc = acc + load(x + arange(0, B))\n");
  ASSERT_EQ(r->phase, "compile");
  EXPECT_NE(r->errors().find("'acc' is carried across loop iterations: it is f32 before the loop but <64xf32>"),
            std::string::npos)
      << r->errors();
  auto r2 = body("    acc = zeros((B,), dtype=f16)\n    for i in range(4):\n        acc += load(x + arange(0, B))\n");
  EXPECT_NE(r2->errors().find("convert with .to(f16)"), std::string::npos) << r2->errors();
  auto r3 = body("    for i in range(4):\n        t = i\n    store(x, t)\n");
  EXPECT_NE(r3->errors().find("'t' is only defined inside the for loop at line 4"), std::string::npos) << r3->errors();
}

TEST(IRGen, IfMergesAssignedValues) {
  auto r = body("    v = 1.0\n    if n > 3:\n        v = 2.0\n    elif n > 1:\n        w = 1\n    else:\n"
                "        v = load(x)\n    store(y, v)\n");
  ASSERT_EQ(r->phase, "") << r->errors();
  Op* outer = findOp(*r->fn, OpKind::If);
  ASSERT_NE(outer, nullptr);
  ASSERT_EQ(outer->numResults(), 1u);
  EXPECT_EQ(outer->result()->name, "v");
  EXPECT_EQ(outer->result()->type, Type::scalar(DType::F32));
  EXPECT_EQ(countOps(*r->fn, OpKind::If), 2);  // elif nests
  EXPECT_EQ(storedType(*r->fn), Type::scalar(DType::F32));

  auto bad = body("    if n > 3:\n        v = 2.0\n    else:\n        v = arange(0, B)\n");
  ASSERT_EQ(bad->phase, "compile");
  EXPECT_NE(bad->errors().find("in one branch of the if"), std::string::npos) << bad->errors();
  auto local = body("    if n > 3:\n        q = 2.0\n    store(x, q)\n");
  EXPECT_NE(local->errors().find("'q' is only assigned in one branch"), std::string::npos) << local->errors();
}

TEST(IRGen, ConstexprIfCompilesOneBranch) {
  auto r = body("    if B > 32:\n        v = load(x)\n    else:\n        v = load(h)\n    store(y, v)\n");
  ASSERT_EQ(r->phase, "") << r->errors();
  EXPECT_EQ(countOps(*r->fn, OpKind::If), 0);
  EXPECT_EQ(countOps(*r->fn, OpKind::Load), 1);
  EXPECT_EQ(findOp(*r->fn, OpKind::Load)->operand(0), r->fn->param(0));
}

TEST(IRGen, ReductionsAndBuiltins) {
  auto r = body(
      "    o = arange(0, 16)[:, None] * 4 + arange(0, 4)[None, :]\n    t = load(x + o)\n"
      "    a = sum(t)\n    b = max(t, axis=-1)\n    c = argmax(t, 0)\n    d = where(t > 0, t, 0)\n"
      "    e = sigmoid(abs(d)) + rsqrt(exp2(log(sqrt(t + 1))))\n    f = minimum(maximum(e, 0.5), 2)\n"
      "    g = dot(f.to(f16), zeros((4, 8), dtype=f16))\n    k = full((16, 8), n, dtype=f32)\n"
      "    store(y + arange(0, 16), b)\n    store(y + o, f)\n    store(x, a)\n    store(h + arange(0, 4), c)\n"
      "    store(y + arange(0, 16)[:, None] * 8 + arange(0, 8)[None, :], g + k)\n");
  ASSERT_EQ(r->phase, "") << r->errors();
  EXPECT_EQ(countOps(*r->fn, OpKind::Reduce), 3);  // sum over both axes + max
  EXPECT_EQ(countOps(*r->fn, OpKind::Argmax), 1);
  EXPECT_EQ(countOps(*r->fn, OpKind::Select), 1);
  EXPECT_EQ(countOps(*r->fn, OpKind::Dot), 1);
  Op* dot = findOp(*r->fn, OpKind::Dot);
  EXPECT_EQ(dot->result()->type, Type::tile(DType::F32, {16, 8}));
}

TEST(IRGen, SeveralErrorsInOneRun) {
  auto r = body("    a = load(y + nope)\n    b = arange(0, 3)\n    c = x * 2\n    d = exp(a)\n    e = 1.0 // 2.0\n");
  ASSERT_EQ(r->phase, "compile");
  const auto& d = r->diag.diagnostics();
  ASSERT_EQ(d.size(), 4u) << r->errors();
  EXPECT_NE(d[0].message.find("unknown name 'nope'"), std::string::npos);
  EXPECT_NE(d[1].message.find("power of two"), std::string::npos);
  EXPECT_NE(d[2].message.find("pointers only support"), std::string::npos);
  EXPECT_NE(d[3].message.find("'//' needs integer operands"), std::string::npos);
}

TEST(IRGen, DotAccumulator) {
  auto r = body("    a = zeros((16, 16), dtype=f16)\n    acc = zeros((16, 16), dtype=f32)\n"
                "    for k in range(0, 4):\n        acc = dot(a, a, acc)\n    store(y + arange(0, 16), sum(acc, axis=1))\n");
  ASSERT_EQ(r->phase, "") << r->errors();
  auto bad = body("    a = zeros((16, 8))\n    b = zeros((16, 8))\n    c = dot(a, b)\n");
  EXPECT_NE(bad->errors().find("dot() inner dimensions differ: <16x8xf32> @ <16x8xf32>"), std::string::npos)
      << bad->errors();
}

}  // namespace
}  // namespace tl
