// @launch's pointers(...) and values([...], dtype=) buffers (issue 12, tutorial 08): what they
// describe, which buffers a launch then has (the parameters', then those only a pointers()
// names), overrides of a named buffer, and the located errors for bad uses. The front end's
// tl.pointer_type and pointer casts are checked here too (the IR they make; their errors are in
// tests/bad/dtype_pointer_cast.tl).
#include <gtest/gtest.h>

#include "FrontendTestUtil.h"
#include "ir/PassUtils.h"

namespace tl {
namespace {

using test::runFrontend;

using test::ov;

const char* kTable =
    "@launch(N=8, A0=randn((N,), seed=1), A1=zeros((2, N), dtype=f16, output=True),\n"
    "        tbl=pointers(A0, A1, A0), sizes=values([3, -1, 2147483647]), big=values([1, 2], dtype=i64),\n"
    "        fl=values([0.5, 2, -1.25], dtype=f16))\n"
    "@jit\n"
    "def k(tbl, sizes, big, fl, N):\n"
    "    pass\n";

TEST(LaunchPointers, PointersAndValuesDescribeBuffers) {
  auto r = runFrontend(kTable);
  ASSERT_EQ(r->phase, "") << r->errors();
  const LaunchConfig& l = r->launch;
  // The parameters' buffers in parameter order, then A0 and A1 (first named first).
  ASSERT_EQ(l.buffers.size(), 6u);
  const char* order[] = {"tbl", "sizes", "big", "fl", "A0", "A1"};
  for (size_t k = 0; k < 6; ++k) EXPECT_EQ(l.buffers[k].param, order[k]);
  const BufferSpec* t = l.buffer("tbl");
  EXPECT_EQ(t->fill, Fill::Pointers);
  EXPECT_EQ(t->dtype, DType::I64);
  EXPECT_EQ(t->shape, (Shape{3}));
  EXPECT_EQ(t->pointees, (std::vector<std::string>{"A0", "A1", "A0"}));
  EXPECT_FALSE(t->output);
  const BufferSpec* s = l.buffer("sizes");
  EXPECT_EQ(s->fill, Fill::Values);
  EXPECT_EQ(s->dtype, DType::I32);  // all ints: i32 by default
  ASSERT_EQ(s->values.size(), 3u);
  EXPECT_EQ(s->values[1].i, -1);
  EXPECT_EQ(s->values[2].i, 2147483647);
  EXPECT_EQ(l.buffer("big")->dtype, DType::I64);
  EXPECT_EQ(l.buffer("fl")->dtype, DType::F16);
  EXPECT_EQ(l.buffer("fl")->values[2].f, -1.25);
  // The named buffers keep what their keywords said.
  EXPECT_EQ(l.buffer("A0")->fill, Fill::Randn);
  EXPECT_EQ(l.buffer("A1")->shape, (Shape{2, 8}));
  EXPECT_TRUE(l.buffer("A1")->output);
  // The kernel is specialized for the tables' dtypes (unannotated pointers take them).
  EXPECT_EQ(r->spec.key(), "N:i32,big:ptr<i64>,fl:ptr<f16>,sizes:ptr<i32>,tbl:ptr<i64>;");
  bool shown = false;
  for (const auto& [name, text] : l.names) shown |= name == "tbl" && text == "pointers(A0, A1, A0)";
  EXPECT_TRUE(shown);
}

TEST(LaunchPointers, OverridesOfANamedBufferAreFollowed) {
  auto r = runFrontend(kTable, {ov("N=5"), ov("A0=arange((7,), dtype=f32)")});
  ASSERT_EQ(r->phase, "") << r->errors();
  EXPECT_EQ(r->launch.buffer("A0")->fill, Fill::Arange);
  EXPECT_EQ(r->launch.buffer("A0")->shape, (Shape{7}));
  EXPECT_EQ(r->launch.buffer("A1")->shape, (Shape{2, 5}));
  // A table can be replaced from the command line too.
  auto r2 = runFrontend(kTable, {ov("tbl=pointers(A1)")});
  ASSERT_EQ(r2->phase, "") << r2->errors();
  EXPECT_EQ(r2->launch.buffer("tbl")->pointees, (std::vector<std::string>{"A1"}));
  EXPECT_EQ(r2->launch.buffer("A0"), nullptr);  // named by nothing in use: not a buffer of the launch
}

TEST(LaunchPointers, ABufferNothingNamesIsStillAnError) {
  auto r = runFrontend("@launch(A0=zeros(4), B0=zeros(4), tbl=pointers(A0))\n@jit\ndef k(tbl):\n    pass\n");
  EXPECT_EQ(r->phase, "launch");
  EXPECT_NE(r->errors().find("'B0' is a buffer but 'k' has no parameter 'B0'"), std::string::npos) << r->errors();
}

TEST(LaunchPointers, TablesOfTablesAndParameterBuffers) {
  // A table may name a parameter's buffer (the same buffer) and another table.
  auto r = runFrontend("@launch(x=zeros(4), t1=pointers(x), t2=pointers(t1, x))\n@jit\ndef k(x, t2):\n    pass\n");
  ASSERT_EQ(r->phase, "") << r->errors();
  ASSERT_EQ(r->launch.buffers.size(), 3u);  // x, t2, t1: x is not added twice
  EXPECT_EQ(r->launch.buffers[2].param, "t1");
  EXPECT_EQ(r->launch.buffer("t1")->pointees, (std::vector<std::string>{"x"}));
}

TEST(LaunchPointers, ErrorsAreLocated) {
  struct Case {
    const char* launch;
    const char* at;  // the error's column is where this text first starts in `launch`
    const char* want;
  };
  const Case cases[] = {
      {"A0=zeros(4), tbl=pointers(A9)", "A9", "unknown name 'A9' in @launch"},
      {"A0=zeros(4), tbl=pointers(A0 + 1)", "+ 1", "pointers() takes the names of buffer keywords"},
      {"A0=4, tbl=pointers(A0)", "A0)", "'A0' is an int (4), not a buffer"},
      {"tbl=pointers(tbl)", "tbl)", "pointers() cannot hold its own address"},
      {"tbl=pointers(u), u=pointers(tbl)", "u)", "'u' is used before it is given a value"},  // no cycles
      {"tbl=pointers()", "pointers", "pointers() needs at least one buffer name"},
      {"A0=zeros(4), tbl=pointers(A0, output=True)", "output", "pointers() takes buffer names only"},
      {"tbl=values([1, 2.5], dtype=i32)", "2.5", "values() element 1 is 2.5, not an integer, but the dtype is i32"},
      {"tbl=values([1, 3000000000])", "3000000000", "values() element 1 (3000000000) does not fit in i32: pass dtype=i64"},
      {"tbl=values([0, 2], dtype=i1)", "2]", "values() element 1 (2) does not fit in i1"},
      {"tbl=values([1, f16])", "f16", "values() element 1 must be a number, got f16"},
      {"tbl=values([])", "[", "values() needs a non-empty list of numbers"},
      {"tbl=values(3)", "3", "values() needs a non-empty list of numbers"},
      {"tbl=values([1], dtype=3)", "3", "dtype must be a dtype name"},
      {"tbl=pointerz(A0)", "pointerz", "unknown function 'pointerz' in @launch"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.launch);
    const std::string launch = c.launch;
    const std::string src = "@launch(" + launch + ")\n@jit\ndef k(tbl):\n    pass\n";
    auto r = runFrontend(src);
    EXPECT_EQ(r->phase, "launch");
    const std::string where = "1:" + std::to_string(9 + launch.find(c.at)) + ": error: ";
    EXPECT_NE(r->errors().find(where + c.want), std::string::npos) << where << "\n" << r->errors();
  }
  // Floats in the list make an f32 buffer by default.
  auto r = runFrontend("@launch(tbl=values([1, 2.5]))\n@jit\ndef k(tbl):\n    pass\n");
  ASSERT_EQ(r->phase, "") << r->errors();
  EXPECT_EQ(r->launch.buffer("tbl")->dtype, DType::F32);
}

TEST(LaunchPointers, ATableNeedsAnInt64Parameter) {
  auto r = runFrontend("@launch(x=zeros(4), tbl=pointers(x))\n@jit\ndef k(x, tbl: *f32):\n    pass\n");
  EXPECT_EQ(r->phase, "launch");
  EXPECT_NE(r->errors().find("1:21: error: 'tbl' is *f32 but pointers() makes a table of int64 addresses"), std::string::npos)
      << r->errors();
  auto ok = runFrontend("@launch(x=zeros(4), tbl=pointers(x))\n@jit\ndef k(x, tbl: *i64):\n    pass\n");
  EXPECT_EQ(ok->phase, "") << ok->errors();
  auto v = runFrontend("@launch(v=values([1, 2]))\n@jit\ndef k(v: *f32):\n    pass\n");
  EXPECT_NE(v->errors().find("buffer for 'v' has dtype i32 but the parameter is *f32: pass dtype=f32"), std::string::npos)
      << v->errors();
}

// tl.pointer_type and the casts make ptrcast ops of the right types.
TEST(LaunchPointers, PointerCastsInTheIR) {
  auto r = runFrontend(
      "import triton\n"
      "import triton.language as tl\n"
      "@launch(x=zeros(4), tbl=pointers(x), out=zeros(4, dtype=i64, output=True))\n"
      "@triton.jit\n"
      "def k(x, tbl, out):\n"
      "    p = tl.load(tbl).to(tl.pointer_type(tl.float32))\n"
      "    q = p.to(tl.pointer_type(tl.float16))\n"
      "    r = tl.cast(q, x.dtype)\n"
      "    tl.static_assert(r.dtype == x.dtype)\n"
      "    tl.static_assert(q.dtype.element_ty == tl.float16)\n"
      "    tl.static_assert(tl.pointer_type(tl.int32).is_ptr())\n"
      "    tl.store(out + tl.arange(0, 4), tl.multiple_of(r + tl.arange(0, 4), 4).to(tl.int64))\n");
  ASSERT_EQ(r->phase, "") << r->errors();
  std::vector<std::string> casts;
  walk(r->fn->body, [&](Op& op) {
    if (op.kind == OpKind::PtrCast) casts.push_back(op.operand(0)->type.str() + " -> " + op.result()->type.str());
  });
  EXPECT_EQ(casts, (std::vector<std::string>{"i64 -> ptr<f32>", "ptr<f32> -> ptr<f16>", "ptr<f16> -> ptr<f32>",
                                             "<4xptr<f32>> -> <4xi64>"}));
  // tl.multiple_of on a pointer tile: a hint (bytes) on the addptr that made it.
  int hinted = 0;
  walk(r->fn->body, [&](Op& op) { hinted += op.kind == OpKind::AddPtr && op.attr("multiple_of"); });
  EXPECT_EQ(hinted, 1);
  auto bad = runFrontend("import triton\nimport triton.language as tl\n@launch(x=zeros(4))\n@triton.jit\ndef k(x):\n"
                         "    y = tl.multiple_of(tl.load(x + tl.arange(0, 4)), 4)\n");
  EXPECT_NE(bad->errors().find("6:27: error: multiple_of() needs an integer or pointer tensor, got"), std::string::npos)
      << bad->errors();
}

}  // namespace
}  // namespace tl
