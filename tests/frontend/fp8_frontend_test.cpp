// The front end's fp8 rules (issue 12): tl.float8e4nv / tl.float8e5 as storage dtypes, the
// conversions and dot they allow, the located errors for what Triton rejects (arithmetic,
// comparisons, math and reductions on fp8, fp8 with integers, the AMD / legacy fp8 formats), and
// the IR text of fp8 types (printer/parser round trip).
#include <gtest/gtest.h>

#include <string>

#include "FrontendTestUtil.h"
#include "ir/Parser.h"
#include "ir/Printer.h"
#include "ir/Verifier.h"

namespace tl {
namespace {

using test::countOps;
using test::runFrontend;

// A Triton-spelled kernel with `body` (4-space indented lines) after loading x (f32) and q (fp8).
std::string kernel(const std::string& body) {
  return "import triton\nimport triton.language as tl\n"
         "@launch(N=64, grid=(1,), x_ptr=randn(N), q_ptr=zeros(N, dtype=f8e4m3), i_ptr=zeros(N, dtype=i32),\n"
         "        out_ptr=zeros(N, output=True), o8_ptr=zeros(N, dtype=f8e5m2, output=True))\n"
         "@triton.jit\n"
         "def k(x_ptr, q_ptr, i_ptr, out_ptr, o8_ptr, N: tl.constexpr):\n"
         "    offs = tl.arange(0, N)\n"
         "    x = tl.load(x_ptr + offs)\n"
         "    q = tl.load(q_ptr + offs)\n"
         "    i = tl.load(i_ptr + offs)\n" +
         body;
}

TEST(Fp8Frontend, ConversionsLoadsStoresAndDotCompile) {
  auto r = runFrontend(kernel("    a = x.to(tl.float8e4nv)\n"
                              "    b = q.to(tl.float8e5)\n"
                              "    tl.store(o8_ptr + offs, b)\n"
                              "    y = a.to(tl.float32) + q.to(tl.float16) + x\n"
                              "    z = tl.where(y > 0, q, 0.0)\n"
                              "    t = tl.full((16, 16), 1.5, tl.float8e4nv)\n"
                              "    d = tl.dot(t, t)\n"
                              "    tl.store(out_ptr + offs, y + z.to(tl.float32) + tl.sum(tl.sum(d, 1), 0))\n"));
  ASSERT_EQ(r->phase, "") << r->errors();
  EXPECT_EQ(verifyFunction(*r->fn), "");
  const std::string text = printFunction(*r->fn);
  EXPECT_NE(text.find("ptr<f8e4m3>"), std::string::npos) << text;
  EXPECT_NE(text.find("<64xf8e5m2>"), std::string::npos) << text;
  Op* dot = test::findOp(*r->fn, OpKind::Dot);
  ASSERT_TRUE(dot);
  EXPECT_EQ(dot->operand(0)->type.dtype, DType::F8E4M3);  // dot takes fp8 itself (widened to f32 inside)
  // The IR text round-trips.
  DiagEngine diag;
  auto parsed = parseFunction(text, diag);
  ASSERT_TRUE(parsed) << diag.renderAll();
  EXPECT_EQ(printFunction(*parsed), text);
}

TEST(Fp8Frontend, PromotionFollowsTriton) {
  // fp8 with f16 -> f16, with f32 -> f32, with bf16 -> f32, two fp8 formats -> f16 (dot too).
  auto r = runFrontend(kernel("    h = x.to(tl.float16)\n"
                              "    e5 = x.to(tl.float8e5)\n"
                              "    a = q * h\n"
                              "    b = q * x\n"
                              "    c = q * x.to(tl.bfloat16)\n"
                              "    t = tl.full((16, 16), 1.5, tl.float8e4nv)\n"
                              "    u = tl.full((16, 16), 2.0, tl.float8e5)\n"
                              "    d = tl.dot(t, u)\n"
                              "    tl.store(out_ptr + offs, (a + b + c).to(tl.float32) + tl.sum(tl.sum(d, 1), 0))\n"));
  ASSERT_EQ(r->phase, "") << r->errors();
  std::vector<DType> muls;
  walk(r->fn->body, [&](Op& op) {
    if (op.kind == OpKind::Mul) muls.push_back(op.result()->type.dtype);
  });
  EXPECT_EQ(muls, (std::vector<DType>{DType::F16, DType::F32, DType::F32}));
  Op* dot = test::findOp(*r->fn, OpKind::Dot);
  ASSERT_TRUE(dot);
  EXPECT_EQ(dot->operand(0)->type.dtype, DType::F16);
  EXPECT_EQ(dot->operand(1)->type.dtype, DType::F16);
}

struct Refused {
  const char* body;
  const char* message;
  int line, col;
};

TEST(Fp8Frontend, WhatTritonRejectsIsALocatedError) {
  const int L = 11;  // the first body line
  const Refused cases[] = {
      {"    y = q + q\n", "'+' on <64xf8e4m3> is not supported: fp8 is a storage type", L, 11},
      {"    y = q * 2.0\n", "'*' on <64xf8e4m3> is not supported", L, 11},
      {"    y = q < q\n", "'<' on <64xf8e4m3> is not supported", L, 11},
      {"    y = -q\n", "unary '-' on <64xf8e4m3> is not supported", L, 9},
      {"    y = q + i\n", "'+' cannot combine <64xf8e4m3> with an integer tile", L, 11},
      {"    y = tl.exp(q)\n", "exp() on <64xf8e4m3> is not supported", L, 16},
      {"    y = tl.sum(q, 0)\n", "sum() on <64xf8e4m3> is not supported", L, 16},
      {"    y = tl.maximum(q, q)\n", "maximum() on <64xf8e4m3> is not supported", L, 12},
      {"    y = i.to(tl.float8e4nv)\n", "cannot convert i32 to f8e4m3: Triton converts fp8 only to and from float dtypes", L, 11},
      {"    y = q.to(tl.int32)\n", "cannot convert f8e4m3 to i32", L, 11},
      {"    y = x.to(tl.float8e4b8)\n", "tl.float8e4b8 is not supported: it is an AMD (fnuz, MI300) fp8 format", L, 17},
      {"    y = x.to(tl.float8e5b16)\n", "tl.float8e5b16 is not supported: it is an AMD", L, 17},
      {"    y = x.to(tl.float8e4b15)\n", "tl.float8e4b15 is not supported: it is Triton's legacy pre-sm_89 fp8 format", L, 17},
      {"    y = tl.dot(tl.full((16, 16), 1.0, tl.float8e4nv), tl.full((16, 16), 1.0, tl.float16))\n",
       "an fp8 operand needs an fp8 partner", L, 12},
  };
  for (const Refused& c : cases) {
    auto r = runFrontend(kernel(c.body));
    EXPECT_EQ(r->phase, "compile") << c.body;
    const std::string errs = r->errors();
    EXPECT_NE(errs.find(c.message), std::string::npos) << c.body << errs;
    EXPECT_NE(errs.find("test.tl:" + std::to_string(c.line) + ":" + std::to_string(c.col) + ": error:"), std::string::npos)
        << c.body << errs;
  }
}

TEST(Fp8Frontend, DtypePredicates) {
  auto r = runFrontend(kernel("    tl.static_assert(q.dtype.is_fp8() and q.dtype.is_fp8e4nv() and not q.dtype.is_fp8e5())\n"
                              "    tl.static_assert(q.dtype.is_floating() and q.dtype == tl.float8e4nv)\n"
                              "    tl.store(out_ptr + offs, x)\n"));
  EXPECT_EQ(r->phase, "") << r->errors();
}

// The verifier keeps fp8 out of arithmetic even when IR is written by hand.
TEST(Fp8Frontend, VerifierRefusesFp8Arithmetic) {
  const char* text = R"(func @k(%p: ptr<f8e4m3>) {
  %s = splat %p : <4xptr<f8e4m3>>
  %x = load %s : <4xf8e4m3>
  %y = add %x, %x : <4xf8e4m3>
  return
}
)";
  DiagEngine diag;
  auto fn = parseFunction(text, diag);
  if (!fn) {
    EXPECT_NE(diag.renderAll().find("needs int or float operands"), std::string::npos) << diag.renderAll();
    return;
  }
  EXPECT_NE(verifyFunction(*fn).find("needs int or float operands"), std::string::npos);
}

}  // namespace
}  // namespace tl
