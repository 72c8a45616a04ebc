// Launch evaluation tests: the @launch decorator, overrides with dependent recomputation,
// parameter binding and located errors.
#include <gtest/gtest.h>

#include "FrontendTestUtil.h"

namespace tl {
namespace {

using test::runFrontend;

using test::ov;

TEST(Launch, SoftmaxDefaults) {
  auto r = runFrontend(test::kSoftmax);
  ASSERT_EQ(r->phase, "") << r->errors();
  const LaunchConfig& l = r->launch;
  EXPECT_EQ(l.grid, (std::array<int64_t, 3>{256, 1, 1}));
  EXPECT_EQ(l.numWarps, 4);
  EXPECT_EQ(l.constexprs.at("BLOCK_N"), 1024);
  EXPECT_EQ(l.scalars.at("N").i, 781);
  EXPECT_EQ(l.scalars.at("N").dtype, DType::I32);
  EXPECT_EQ(l.scalars.at("stride").i, 781);
  ASSERT_EQ(l.buffers.size(), 2u);
  const BufferSpec* x = l.buffer("x_ptr");
  ASSERT_NE(x, nullptr);
  EXPECT_EQ(x->fill, Fill::Randn);
  EXPECT_EQ(x->shape, (Shape{256, 781}));
  EXPECT_EQ(x->seed, 1u);
  EXPECT_FALSE(x->output);
  EXPECT_TRUE(l.buffer("out_ptr")->output);
  EXPECT_EQ(l.buffer("out_ptr")->fill, Fill::Zeros);
  EXPECT_EQ(r->spec.key(), "N:i32,out_ptr:ptr<f32>,stride:i32,x_ptr:ptr<f32>;BLOCK_N=1024");
}

TEST(Launch, OverrideRecomputesDependents) {
  auto r = runFrontend(test::kSoftmax, {ov("N=4096")});
  ASSERT_EQ(r->phase, "") << r->errors();
  EXPECT_EQ(r->launch.scalars.at("stride").i, 4096);
  EXPECT_EQ(r->launch.constexprs.at("BLOCK_N"), 4096);
  EXPECT_EQ(r->launch.buffer("x_ptr")->shape, (Shape{256, 4096}));
  EXPECT_EQ(r->fn->constexprs, (std::vector<std::pair<std::string, int64_t>>{{"BLOCK_N", 4096}}));
}

TEST(Launch, OverrideBufferGridAndNewName) {
  auto r = runFrontend(test::kSoftmax, {ov("x_ptr=uniform((M,N), lo=-1, hi=1)"), ov("grid=(8,)"), ov("M=16")});
  ASSERT_EQ(r->phase, "") << r->errors();
  const BufferSpec* x = r->launch.buffer("x_ptr");
  EXPECT_EQ(x->fill, Fill::Uniform);
  EXPECT_DOUBLE_EQ(x->a, -1);
  EXPECT_DOUBLE_EQ(x->b, 1);
  EXPECT_EQ(x->shape, (Shape{16, 781}));
  EXPECT_EQ(r->launch.grid[0], 8);
}

TEST(Launch, OverrideAddsNameAtTheFront) {
  const char* src = "@launch(N=W * 2, grid=1, p=zeros(N))\n@jit\ndef k(p, N):\n    pass\n";
  auto bad = runFrontend(src);
  EXPECT_EQ(bad->phase, "launch");
  EXPECT_NE(bad->errors().find("unknown name 'W'"), std::string::npos) << bad->errors();
  auto r = runFrontend(src, {ov("W=8")});
  ASSERT_EQ(r->phase, "") << r->errors();
  EXPECT_EQ(r->launch.scalars.at("N").i, 16);
  EXPECT_EQ(r->launch.buffer("p")->shape, (Shape{16}));
}

TEST(Launch, OverrideErrorsAreLocatedInTheCommandLine) {
  auto r = runFrontend(test::kSoftmax, {ov("N=10 // 0")});
  ASSERT_EQ(r->phase, "launch");
  std::string e = r->errors();
  EXPECT_NE(e.find("<command line>:1:6: integer division by zero"), std::string::npos) << e;
  EXPECT_NE(e.find("N=10 // 0"), std::string::npos) << e;
  auto r2 = runFrontend(test::kSoftmax, {ov("N=(4")});
  EXPECT_NE(r2->errors().find("<command line>:1:"), std::string::npos) << r2->errors();
}

TEST(Launch, ParseOverride) {
  LaunchOverride o;
  EXPECT_TRUE(parseOverride("N=4096", o));
  EXPECT_EQ(o.name, "N");
  EXPECT_EQ(o.expr, "4096");
  EXPECT_TRUE(parseOverride("x_ptr=uniform((M,N), lo=-1)", o));
  EXPECT_EQ(o.expr, "uniform((M,N), lo=-1)");
  EXPECT_FALSE(parseOverride("N", o));
  EXPECT_FALSE(parseOverride("=3", o));
  EXPECT_FALSE(parseOverride("4N=3", o));
  EXPECT_FALSE(parseOverride("a-b=3", o));
}

TEST(Launch, ExpressionLanguage) {
  auto r = runFrontend(
      "@launch(A=7, B=cdiv(A, 2), C=next_pow2(A), D=min(A, 3), E=max(2, A) * 2 - 1, F=-A // 2, G=-A % 2,\n"
      "        H=A / 2, I=3000000000, J=1.5, K=True, grid=(B, C, 1), num_warps=8)\n"
      "@jit\ndef k(A, B, C, D, E, F, G, H, I, J, K):\n    pass\n");
  ASSERT_EQ(r->phase, "") << r->errors();
  const auto& s = r->launch.scalars;
  EXPECT_EQ(s.at("B").i, 4);
  EXPECT_EQ(s.at("C").i, 8);
  EXPECT_EQ(s.at("D").i, 3);
  EXPECT_EQ(s.at("E").i, 13);
  EXPECT_EQ(s.at("F").i, -3);  // truncating, as C and Triton
  EXPECT_EQ(s.at("G").i, -1);
  EXPECT_EQ(s.at("H").dtype, DType::F32);
  EXPECT_DOUBLE_EQ(s.at("H").f, 3.5);
  EXPECT_EQ(s.at("I").dtype, DType::I64);
  EXPECT_EQ(s.at("J").dtype, DType::F32);
  EXPECT_EQ(s.at("K").dtype, DType::I1);
  EXPECT_EQ(r->launch.grid, (std::array<int64_t, 3>{4, 8, 1}));
  EXPECT_EQ(r->launch.numWarps, 8);
}

TEST(Launch, AnnotatedParameters) {
  auto r = runFrontend("@launch(x=zeros(4, dtype=f16), n=2.7, f=3)\n@jit\ndef k(x: *f16, n: i32, f: f32):\n    pass\n");
  ASSERT_EQ(r->phase, "") << r->errors();
  EXPECT_EQ(r->launch.scalars.at("n").i, 2);
  EXPECT_EQ(r->launch.scalars.at("f").dtype, DType::F32);
  EXPECT_DOUBLE_EQ(r->launch.scalars.at("f").f, 3.0);
  EXPECT_EQ(r->spec.paramTypes.at("x"), Type::ptr(DType::F16));
  auto bad = runFrontend("@launch(x=zeros(4), n=zeros(2))\n@jit\ndef k(x: *f16, n: i32):\n    pass\n");
  ASSERT_EQ(bad->phase, "launch");
  EXPECT_EQ(bad->diag.numErrors(), 2) << bad->errors();
  EXPECT_NE(bad->errors().find("dtype f32 but the parameter is *f16"), std::string::npos);
  EXPECT_NE(bad->errors().find("'n' is a scalar parameter"), std::string::npos);
}

TEST(Launch, ErrorsAreLocated) {
  auto r = runFrontend("@launch(N=8, grid=(0,), num_warps=3, B=foo(2), C=zeros((N, -1)))\n@jit\ndef k(p, N, B: constexpr):\n    pass\n");
  ASSERT_EQ(r->phase, "launch");
  const auto& d = r->diag.diagnostics();
  ASSERT_EQ(d.size(), 5u) << r->errors();
  EXPECT_NE(d[0].message.find("grid must be"), std::string::npos);
  EXPECT_EQ(d[0].loc, (Loc{1, 14}));  // at the keyword
  EXPECT_NE(d[1].message.find("num_warps"), std::string::npos);
  EXPECT_NE(d[2].message.find("unknown function 'foo'"), std::string::npos);
  EXPECT_EQ(d[2].loc, (Loc{1, 40}));
  EXPECT_NE(d[3].message.find("positive"), std::string::npos);
  EXPECT_NE(d[4].message.find("parameter 'p' has no value: add it to @launch or pass --set p=..."), std::string::npos);
  EXPECT_EQ(d[4].loc, (Loc{3, 7}));
}

TEST(Launch, BufferFunctions) {
  auto r = runFrontend(
      "@launch(a=arange(8, start=2, step=3, dtype=i32), b=full((2, 4), 7.5, output=True), c=randn(5, mean=1, std=2, seed=9),\n"
      "        d=file(\"in.npy\"))\n@jit\ndef k(a, b, c, d):\n    pass\n");
  ASSERT_EQ(r->phase, "") << r->errors();
  const BufferSpec* a = r->launch.buffer("a");
  EXPECT_EQ(a->fill, Fill::Arange);
  EXPECT_EQ(a->dtype, DType::I32);
  EXPECT_DOUBLE_EQ(a->a, 2);
  EXPECT_DOUBLE_EQ(a->b, 3);
  const BufferSpec* b = r->launch.buffer("b");
  EXPECT_EQ(b->fill, Fill::Full);
  EXPECT_DOUBLE_EQ(b->a, 7.5);
  EXPECT_TRUE(b->output);
  EXPECT_EQ(b->shape, (Shape{2, 4}));
  const BufferSpec* c = r->launch.buffer("c");
  EXPECT_DOUBLE_EQ(c->a, 1);
  EXPECT_DOUBLE_EQ(c->b, 2);
  EXPECT_EQ(c->seed, 9u);
  EXPECT_EQ(r->launch.buffer("d")->fill, Fill::File);
  EXPECT_EQ(r->launch.buffer("d")->file, "in.npy");
}

TEST(Launch, OverflowIsAnErrorNotUB) {
  auto r = runFrontend("@launch(A=9223372036854775807 + 1, B=4611686018427387904 * 4, C=next_pow2(9223372036854775807))\n@jit\ndef k():\n    pass\n");
  ASSERT_EQ(r->phase, "launch");
  EXPECT_EQ(r->diag.numErrors(), 3) << r->errors();
}

}  // namespace
}  // namespace tl
