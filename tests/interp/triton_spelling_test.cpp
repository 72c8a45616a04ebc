// Issue 12, sections 1 and 2: a kernel in Triton's own spelling (imports, @triton.jit, tl.
// prefixes, tl.constexpr, list shapes, float("inf"), docstrings, module-level constants, @jit
// helpers with return values and tuples, early return, tuple assignment, `a if c else b`,
// and/or/not, static_assert, static_range, tl.range hints, annotated constexpr locals, min/max of
// scalars, shifts, while) compiles, and tl-scalar and tl-block compute what a C++ reference says.
// The errors for what Triton has and tilelab does not name the construct at its line.
#include <gtest/gtest.h>

#include <cmath>
#include <array>
#include <functional>

#include "../frontend/FrontendTestUtil.h"
#include "block/BlockInterpreter.h"
#include "runtime/FloatOps.h"
#include "scalar/ScalarInterpreter.h"

namespace tl {
namespace {

using test::countOps;
using test::runFrontend;

const char* const kHeader = "import triton\nimport triton.language as tl\n";

// Runs `src` on tl-scalar and tl-block and returns the output buffer `out` (both must agree
// exactly: these kernels add in one order).
std::vector<double> runBoth(const std::string& src, const std::vector<LaunchOverride>& sets = {}) {
  auto r = runFrontend(src, sets);
  EXPECT_EQ(r->phase, "") << r->errors();
  if (!r->fn) return {};
  Memory a = Memory::fromLaunch(r->launch), b = Memory::fromLaunch(r->launch);
  runScalar(*r->fn, r->launch, a);
  runBlock(*r->fn, r->launch, b);
  const Buffer* out = a.find("out");
  const Buffer* outB = b.find("out");
  EXPECT_NE(out, nullptr);
  if (!out || !outB) return {};
  std::vector<double> v;
  for (int64_t i = 0; i < out->numel(); ++i) {
    v.push_back(out->getF(i));
    EXPECT_EQ(outB->getF(i), out->getF(i)) << "tl-block differs from tl-scalar at " << i;
  }
  return v;
}

// The input buffer `x` as the launch fills it.
std::vector<double> input(const std::string& src, const std::string& name = "x") {
  auto r = runFrontend(src);
  Memory m = Memory::fromLaunch(r->launch);
  std::vector<double> v;
  if (const Buffer* b = m.find(name))
    for (int64_t i = 0; i < b->numel(); ++i) v.push_back(b->getF(i));
  return v;
}

TEST(TritonSpelling, TutorialStyleVectorAddWithHelpersAndEarlyReturn) {
  const std::string src = std::string(kHeader) + R"(
"""A module docstring."""
SCALE: tl.constexpr = 3
OFFSET = 0.5

@triton.jit
def scale_and_shift(x, s: tl.constexpr):
    """Returns x * s and x + OFFSET (a tuple)."""
    return x * s, x + OFFSET

@triton.jit
def pick(a, b, flag):
    if flag > 0:
        return a
    return b

@launch(n=1000, BLOCK=256, grid=(cdiv(n, BLOCK) + 1,), x=randn((n,), seed=3), out=zeros((n,), output=True))
@triton.jit
def kernel(x, out, n, BLOCK: tl.constexpr):
    pid = tl.program_id(axis=0)
    if pid * BLOCK >= n:        # the extra program leaves at once
        return
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    v = tl.load(x + offs, mask=mask, other=float("-inf"))
    a, b = scale_and_shift(v, SCALE)
    tl.static_assert(BLOCK % 2 == 0, "even blocks")
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for i in tl.static_range(2):
        acc += a
    chosen = pick(acc, b, pid % 2)          # odd programs: 2 * 3x; even programs: x + 0.5
    tl.store(out + offs, chosen.to(out.dtype.element_ty), mask=mask)
)";
  std::vector<double> got = runBoth(src), x = input(src);
  ASSERT_EQ(got.size(), 1000u);
  for (int i = 0; i < 1000; ++i) {
    const bool odd = (i / 256) % 2 == 1;
    const double want = odd ? float(float(float(x[i]) * 3.0f) + float(float(x[i]) * 3.0f)) : float(float(x[i]) + 0.5f);
    ASSERT_EQ(got[i], want) << i;
  }
}

TEST(TritonSpelling, WhileTernaryBoolOpsShiftsAndScalarMinMax) {
  // out[i] = the number of halvings that take (i + 1) << 2 below 3, plus min/max and ternaries.
  const std::string src = std::string(kHeader) + R"(
@launch(n=40, out=zeros((64,), output=True), grid=(1,))
@triton.jit
def kernel(out, n):
    offs = tl.arange(0, 64)
    for i in range(0, n):
        v = (i + 1) << 2
        steps = 0
        while v >= 3:
            v = v >> 1
            steps += 1
        big = 1 if (i > 10 and not (i > 30)) or i == 0 else 0
        r = steps * 100 + big * 10 + min(i, 5) - max(i, 38) + (7 if steps > 3 else -7)
        tl.store(out + i + offs * 0, r.to(tl.float32), mask=offs == 0)
)";
  std::vector<double> got = runBoth(src);
  ASSERT_EQ(got.size(), 64u);
  for (int i = 0; i < 40; ++i) {
    int v = (i + 1) << 2, steps = 0;
    while (v >= 3) {
      v >>= 1;
      ++steps;
    }
    const int big = ((i > 10 && !(i > 30)) || i == 0) ? 1 : 0;
    const int want = steps * 100 + big * 10 + std::min(i, 5) - std::max(i, 38) + (steps > 3 ? 7 : -7);
    ASSERT_EQ(got[i], want) << i;
  }
  for (int i = 40; i < 64; ++i) EXPECT_EQ(got[i], 0) << i;
}

TEST(TritonSpelling, FloatAndStringConstexprsAndRuntimeArgumentsToConstexprHelperParams) {
  const std::string src = std::string(kHeader) + R"(
@triton.jit
def act(x, offs: tl.constexpr, KIND: tl.constexpr):
    if KIND == "relu":
        return tl.maximum(x, 0.0) + offs * 0
    return x

@launch(x=randn((32,), seed=2), out=zeros((32,), output=True), eps=1e-3, KIND="relu")
@triton.jit
def kernel(x, out, eps: tl.constexpr, KIND: tl.constexpr):
    offs = tl.arange(0, 32)
    tl.store(out + offs, act(tl.load(x + offs), offs, KIND) + eps)
)";
  std::vector<double> got = runBoth(src), x = input(src);
  ASSERT_EQ(got.size(), 32u);
  for (int i = 0; i < 32; ++i) EXPECT_EQ(got[i], float(std::max(float(x[i]), 0.0f) + float(1e-3))) << i;
  std::vector<double> plain = runBoth(src, {{"KIND", "\"none\""}});
  for (int i = 0; i < 32; ++i) EXPECT_EQ(plain[i], float(float(x[i]) + float(1e-3))) << i;
}

TEST(TritonSpelling, RangeHintsAreRecordedOnTheLoop) {
  auto r = runFrontend(std::string(kHeader) + R"(
@launch(n=8, out=zeros((16,), output=True))
@triton.jit
def kernel(out, n):
    acc = tl.zeros((16,), dtype=tl.float32)
    for k in tl.range(0, n, 2, num_stages=3, loop_unroll_factor=2):
        acc += 1.0
    tl.store(out + tl.arange(0, 16), acc)
)");
  ASSERT_EQ(r->phase, "") << r->errors();
  Op* loop = test::findOp(*r->fn, OpKind::For);
  ASSERT_NE(loop, nullptr);
  EXPECT_EQ(loop->intAttr("num_stages"), 3);
  EXPECT_EQ(loop->intAttr("loop_unroll_factor"), 2);
}

TEST(TritonSpelling, HelperOpsKeepTheHelpersSourceLines) {
  auto r = runFrontend(std::string(kHeader) + R"(
@triton.jit
def leaky_relu(x):
    return tl.where(x >= 0, x, 0.01 * x)

@launch(out=zeros((16,), output=True), x=randn((16,)))
@triton.jit
def kernel(x, out):
    offs = tl.arange(0, 16)
    tl.store(out + offs, leaky_relu(tl.load(x + offs)))
)");
  ASSERT_EQ(r->phase, "") << r->errors();
  Op* sel = test::findOp(*r->fn, OpKind::Select);
  ASSERT_NE(sel, nullptr);
  EXPECT_EQ(sel->loc.line, 6);  // the `return tl.where(...)` line of the helper
}

TEST(TritonSpelling, PrefixFreeDialectStillReduces) {
  // Without `import triton`, max(x, 0) is the reduction along axis 0, as before; with it, it
  // is Python's max (elementwise maximum), as in Triton.
  const std::string body = R"(
@launch(x=randn((16,), seed=5), out=zeros((16,), output=True))
@jit
def kernel(x, out):
    offs = arange(0, 16)
    v = load(x + offs)
    store(out + offs, v * 0 + max(v, 0))
)";
  std::vector<double> plain = runBoth(body), x = input(body);
  double mx = -INFINITY;
  for (double v : x) mx = std::max(mx, v);
  for (double v : plain) EXPECT_EQ(v, float(mx));
  std::vector<double> tri = runBoth(std::string(kHeader) + body);
  for (int i = 0; i < 16; ++i) EXPECT_EQ(tri[i], float(std::max(x[i], 0.0))) << i;
}

TEST(TritonSpelling, EntryIsTheLaunchFunctionOrTheNamedOne) {
  const std::string src = std::string(kHeader) + R"(
@triton.jit
def first(out):
    tl.store(out + tl.arange(0, 4), 1.0)

@launch(out=zeros((4,), output=True))
@triton.jit
def second(out):
    tl.store(out + tl.arange(0, 4), 2.0)
)";
  auto r = runFrontend(src);
  ASSERT_EQ(r->phase, "") << r->errors();
  EXPECT_EQ(r->fn->name, "second");
  DiagEngine diag;
  auto file = std::make_shared<SourceFile>("t.tl", src);
  auto pk = parseKernelFile(file, diag, "first");
  ASSERT_TRUE(pk) << diag.renderAll();
  EXPECT_EQ(pk->kernelName(), "first");
  DiagEngine bad;
  EXPECT_EQ(parseKernelFile(file, bad, "frist"), nullptr);
  EXPECT_NE(bad.renderAll().find("--kernel frist: the file has no function of that name (it has first, second); did you mean 'first'?"),
            std::string::npos)
      << bad.renderAll();
}

// Each construct tilelab refuses gets a located message naming it.
TEST(TritonSpelling, UnsupportedConstructsAreNamedAtTheirLine) {
  struct Case {
    const char* line;
    const char* message;
    int at = 13;  // the line the message must point at
  };
  const Case cases[] = {
      {"    y = tl.xor_sum(v, 0)", "unknown function 'xor_sum'"},
      {"    y = v.to(tl.int8)", "tl.int8 is not supported"},
      {"    y = v.to(tl.float32, bitcast=True)", "with bitcast=True is not supported"},
      {"    for i in range(4):\n        return", "'return' inside a loop is not supported", 14},
      {"    return v", "a kernel returns nothing"},
      {"    tl.static_assert(1 == 2, \"no\")", "static_assert failed: no"},
      {"    y = torch.zeros(4)", "is host-side Python"},
      {"    y = triton.next_power_of_2(4)", "triton.next_power_of_2 is host-side Python"},
      {"    y = helper(v)", "recursive call of 'helper'", 7},  // the call inside helper
  };
  for (const Case& c : cases) {
    const std::string src = std::string(kHeader) + "import torch\n" + R"(
@triton.jit
def helper(v):
    return helper(v)

@launch(x=zeros((4,)))
@triton.jit
def kernel(x):
    v = tl.load(x + tl.arange(0, 4))
)" + c.line + "\n";
    auto r = runFrontend(src);
    EXPECT_NE(r->phase, "") << c.line;
    EXPECT_NE(r->errors().find(c.message), std::string::npos) << c.line << "\n" << r->errors();
    EXPECT_NE(r->errors().find("test.tl:" + std::to_string(c.at) + ":"), std::string::npos) << c.line << "\n" << r->errors();
  }
}

TEST(TritonSpelling, ReturnValuesOfDifferentKindsAreAnError) {
  auto r = runFrontend(std::string(kHeader) + R"(
@triton.jit
def f(a, flag):
    if flag > 0:
        return a, a
    return a

@launch(x=zeros((4,)), n=1)
@triton.jit
def kernel(x, n):
    v = f(tl.load(x + tl.arange(0, 4)), n)
)");
  EXPECT_EQ(r->phase, "compile");
  EXPECT_NE(r->errors().find("test.tl:6:5: error: the branches of this if return different things (a tuple of 2 and one value)"),
            std::string::npos)
      << r->errors();
}

}  // namespace
}  // namespace tl

namespace tl {
namespace {

TEST(TritonSpelling, NestedUnpackingAndShapeIndexing) {
  const std::string src = std::string(kHeader) + R"(
@triton.jit
def pair_and_one(x):
    return (x, x + 1), x + 2

@launch(x=randn((32,), seed=9), out=zeros((32,), output=True))
@triton.jit
def kernel(x, out):
    offs = tl.arange(0, 32)
    v = tl.load(x + offs)
    (a, b), c = pair_and_one(v)
    n = v.shape[0] + v.shape[-1]          # 64
    tl.store(out + offs, a * b - c + n)
)";
  std::vector<double> got = runBoth(src), x = input(src);
  ASSERT_EQ(got.size(), 32u);
  for (int i = 0; i < 32; ++i) {
    const float v = float(x[i]);
    EXPECT_EQ(got[i], float(float(float(v * float(v + 1.0f)) - float(v + 2.0f)) + 64.0f)) << i;
  }
}

TEST(TritonSpelling, HelperArgumentMistakesAreNamed) {
  auto r = runFrontend(std::string(kHeader) + R"(
@triton.jit
def scale(x):
    return x * 2

@launch(x=zeros((4,)))
@triton.jit
def kernel(x):
    v = scale(x, x)
    w = scale(y=x)
)");
  EXPECT_NE(r->errors().find("test.tl:11:18: error: 'scale' takes 1 argument (x), got 2"), std::string::npos) << r->errors();
  EXPECT_NE(r->errors().find("'scale' has no parameter 'y'"), std::string::npos) << r->errors();
}

}  // namespace
}  // namespace tl

namespace tl {
namespace {

// Philox-4x32 as triton/language/random.py defines it, written out in C++ for the oracle.
std::array<uint32_t, 4> philox(uint64_t seed, uint32_t c0, int rounds = 10) {
  uint32_t c[4] = {c0, 0, 0, 0}, k0 = uint32_t(seed), k1 = uint32_t(seed >> 32);
  for (int r = 0; r < rounds; ++r) {
    const uint64_t p0 = uint64_t(0xD2511F53u) * c[0], p2 = uint64_t(0xCD9E8D57u) * c[2];
    const uint32_t n0 = uint32_t(p2 >> 32) ^ c[1] ^ k0, n2 = uint32_t(p0 >> 32) ^ c[3] ^ k1;
    c[1] = uint32_t(p2);
    c[3] = uint32_t(p0);
    c[0] = n0;
    c[2] = n2;
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
  return {c[0], c[1], c[2], c[3]};
}

float uniformOf(uint32_t bits) {
  int32_t x = int32_t(bits);
  if (x < 0) x = -(x + 1);  // Triton's -x - 1, without C++'s overflow at INT_MIN
  return float(x) * 4.6566127342e-10f;
}

TEST(TritonSpelling, PhiloxMatchesRandom123AndTritonsUniforms) {
  // Random123's known answer for philox4x32_10 with a zero key and counter.
  std::array<uint32_t, 4> kat = philox(0, 0);
  EXPECT_EQ(kat, (std::array<uint32_t, 4>{0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u}));
  const std::string src = std::string(kHeader) + R"(
@launch(seed=0, out=zeros((256,), output=True), ints=zeros((64,), dtype=i32, output=True), grid=(1,))
@triton.jit
def kernel(out, ints, seed):
    offs = tl.arange(0, 64)
    a, b, c, d = tl.randint4x(seed, offs)
    tl.store(ints + offs, a)
    tl.store(out + offs, tl.rand(seed, offs))
    tl.store(out + 64 + offs, tl.rand(seed, offs + 1000, n_rounds=7))
    tl.store(out + 128 + offs, tl.randn(seed, offs))
    tl.store(out + 192 + offs, d.to(tl.float32))
)";
  for (int64_t seed : {int64_t(0), int64_t(12345), int64_t(-7)}) {
    auto r = runFrontend(src, {{"seed", std::to_string(seed)}});
    ASSERT_EQ(r->phase, "") << r->errors();
    Memory m = Memory::fromLaunch(r->launch), mb = Memory::fromLaunch(r->launch);
    runScalar(*r->fn, r->launch, m);
    runBlock(*r->fn, r->launch, mb);
    const Buffer& out = *m.find("out");
    const Buffer& ints = *m.find("ints");
    const uint64_t s = uint64_t(seed);  // an i32 seed, sign-extended as Triton's .to(tl.uint64)
    for (int i = 0; i < 64; ++i) {
      std::array<uint32_t, 4> p = philox(s, uint32_t(i));
      EXPECT_EQ(uint32_t(ints.getI(i)), p[0]) << seed << " " << i;
      EXPECT_EQ(out.getF(i), uniformOf(p[0])) << seed << " " << i;
      EXPECT_EQ(out.getF(64 + i), uniformOf(philox(s, uint32_t(i + 1000), 7)[0])) << seed << " " << i;
      const double u1 = std::max(1e-7f, uniformOf(p[0])), u2 = uniformOf(p[1]);
      EXPECT_NEAR(out.getF(128 + i), std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2), 2e-5) << i;
      EXPECT_EQ(out.getF(192 + i), float(int32_t(p[3]))) << i;
      EXPECT_EQ(mb.find("out")->getF(128 + i), out.getF(128 + i)) << "tl-block " << i;
    }
  }
}

TEST(TritonSpelling, ShapeAndMathCompositions) {
  const std::string src = std::string(kHeader) + R"(
@launch(x=randn((16,), seed=4), out=zeros((64,), output=True), grid=(1,))
@triton.jit
def kernel(x, out):
    offs = tl.arange(0, 16)
    v = tl.load(x + tl.multiple_of(offs, 16))
    tl.assume(offs.shape[0] == 16)
    row = tl.reshape(tl.expand_dims(v, 0), (16,))          # (1, 16) -> (16,)
    s = tl.softmax(row)
    tl.store(out + offs, s)
    tl.store(out + 16 + offs, tl.zeros_like(v) + tl.argmin(v, 0).to(tl.float32))
    m = tl.broadcast_to(v[None, :], (4, 16))
    tl.store(out + 32 + offs, tl.sum(m, axis=0) + tl.fdiv(v, 2.0))
    tl.store(out + 48 + offs, tl.where(offs % 2, v, -v))
)";
  std::vector<double> got = runBoth(src), x = input(src);
  ASSERT_EQ(got.size(), 64u);
  double mx = -INFINITY, den = 0;
  int argmin = 0;
  for (int i = 0; i < 16; ++i) {
    mx = std::max(mx, x[i]);
    if (x[i] < x[argmin]) argmin = i;
  }
  for (int i = 0; i < 16; ++i) den += std::exp(x[i] - mx);
  for (int i = 0; i < 16; ++i) {
    EXPECT_NEAR(got[i], std::exp(x[i] - mx) / den, 1e-6) << i;
    EXPECT_EQ(got[16 + i], argmin) << i;
    EXPECT_NEAR(got[32 + i], 4 * x[i] + x[i] / 2, 1e-5) << i;
    EXPECT_EQ(got[48 + i], i % 2 ? float(x[i]) : -float(x[i])) << i;
  }
  auto r = runFrontend(src);
  Op* hinted = nullptr;
  walk(r->fn->body, [&](Op& op) {
    if (op.hasAttr("multiple_of")) hinted = &op;
  });
  ASSERT_NE(hinted, nullptr);
  EXPECT_EQ(hinted->kind, OpKind::Arange);
  EXPECT_EQ(hinted->intsAttr("multiple_of"), (std::vector<int64_t>{16}));
}

}  // namespace
}  // namespace tl

namespace tl {
namespace {

// C = A @ B through block pointers advanced along K (as Triton's block-pointer tutorial does)
// and through tensor descriptors; sizes not multiples of the blocks, so the bounds checks and
// the zero padding matter.
TEST(TritonSpelling, BlockPointersAndTensorDescriptorsMatmul) {
  const std::string src = std::string(kHeader) + R"(
@launch(M=40, N=24, K=37, BM=16, BN=16, BK=8, grid=(cdiv(M, BM), cdiv(N, BN)),
        a=randn((M, K), seed=1), b=randn((K, N), seed=2), out=zeros((M, N), output=True),
        out2=zeros((M, N), output=True), USE_DESC=0)
@triton.jit
def kernel(a, b, out, out2, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, USE_DESC: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    a_blk = tl.make_block_ptr(base=a, shape=(M, K), strides=(K, 1), offsets=(pid_m * BM, 0),
                              block_shape=(BM, BK), order=(1, 0))
    b_blk = tl.make_block_ptr(b, (K, N), (N, 1), (0, pid_n * BN), (BK, BN), (1, 0))
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    pair = (0.0, 0)                          # a tuple carried by the loop
    for k in range(0, K, BK):
        x = tl.load(a_blk, boundary_check=(0, 1), padding_option="zero")
        y = tl.load(b_blk, boundary_check=(0, 1))
        acc += tl.dot(x, y)
        a_blk = tl.advance(a_blk, (0, BK))
        b_blk = tl.advance(b_blk, [BK, 0])
        pair = (pair[0] + 1.0, pair[1] + 1)
    c_blk = tl.make_block_ptr(out, (M, N), (N, 1), (pid_m * BM, pid_n * BN), (BM, BN), (1, 0))
    tl.store(c_blk, acc + pair[0] * 0 + pair[1] * 0, boundary_check=(0, 1))
    a_desc = tl.make_tensor_descriptor(a, shape=[M, K], strides=[K, 1], block_shape=[BM, BK])
    b_desc = tl.make_tensor_descriptor(b, [K, N], [N, 1], [BK, BN])
    c_desc = tl.make_tensor_descriptor(out2, [M, N], [N, 1], [BM, BN])
    acc2 = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        acc2 = tl.dot(a_desc.load([pid_m * BM, k]), b_desc.load([k, pid_n * BN]), acc2)
    c_desc.store([pid_m * BM, pid_n * BN], acc2)
)";
  auto r = runFrontend(src);
  ASSERT_EQ(r->phase, "") << r->errors();
  Memory m = Memory::fromLaunch(r->launch), mb = Memory::fromLaunch(r->launch);
  runScalar(*r->fn, r->launch, m);
  runBlock(*r->fn, r->launch, mb);
  const Buffer &A = *m.find("a"), &B = *m.find("b");
  for (const char* name : {"out", "out2"}) {
    const Buffer& C = *m.find(name);
    for (int i = 0; i < 40; ++i)
      for (int j = 0; j < 24; ++j) {
        double want = 0;
        for (int k = 0; k < 37; ++k)  // f32 tl.dot: Triton's default input_precision, tf32
          want += double(truncToTf32(float(A.getF(i * 37 + k)))) * double(truncToTf32(float(B.getF(k * 24 + j))));
        ASSERT_NEAR(C.getF(i * 24 + j), want, 1e-4) << name << " " << i << "," << j;
        ASSERT_EQ(mb.find(name)->getF(i * 24 + j), C.getF(i * 24 + j)) << "tl-block " << name;
      }
  }
}

TEST(TritonSpelling, BlockPointerMistakesAreNamed) {
  auto r = runFrontend(std::string(kHeader) + R"(
@launch(a=zeros((8, 8)), n=1)
@triton.jit
def kernel(a, n):
    p = tl.make_block_ptr(a, (8, 8), (8, 1), (0, 0), (4, 4), (1, 0))
    for k in range(0, n):
        p = tl.make_block_ptr(a + k, (8, 8), (8, 1), (0, 0), (4, 4), (1, 0))
    x = tl.load(p, mask=True)
    q = tl.make_block_ptr(a, (8, 8), (8, 1), (0, 0), (3, 4), (1, 0))
)");
  EXPECT_NE(r->errors().find("test.tl:9:9: error: 'p' is carried across loop iterations as a block pointer, but is a block "
                             "pointer at the end of the body: only its offsets may change (tl.advance)"),
            std::string::npos)
      << r->errors();
  EXPECT_NE(r->errors().find("a block pointer's load takes boundary_check= and padding_option=, not mask= or other="),
            std::string::npos)
      << r->errors();
  EXPECT_NE(r->errors().find("block_shape sizes must be powers of two, got 3"), std::string::npos) << r->errors();
}

// The entry kernel's parameter defaults are used when @launch does not give the parameter
// (a constexpr and a runtime scalar), and @launch's value wins when it does; Python's type
// hints (n: int, scale: float) are accepted and say nothing, as in Triton.
TEST(TritonSpelling, EntryKernelParameterDefaultsAndPythonTypeHints) {
  const std::string src = std::string(kHeader) + R"(
@launch(x=arange(16), out=zeros((16,), output=True), grid=(1,), n=16)
@triton.jit
def kernel(x, out, n: int, scale: float = 2.0, BLOCK: tl.constexpr = 16, SHIFT: tl.constexpr = 3):
    offs = tl.arange(0, BLOCK)
    tl.store(out + offs, tl.load(x + offs) * scale + SHIFT, mask=offs < n)
)";
  std::vector<double> got = runBoth(src), x = input(src);
  ASSERT_EQ(got.size(), 16u);
  for (size_t i = 0; i < 16; ++i) EXPECT_EQ(got[i], x[i] * 2.0 + 3) << i;
  got = runBoth(src, {{"SHIFT", "5"}, {"scale", "0.5"}});
  for (size_t i = 0; i < 16; ++i) EXPECT_EQ(got[i], x[i] * 0.5 + 5) << i;
}

// A block-pointer load past the buffer on a dimension boundary_check leaves out: the error names
// that dimension (the load's mask is boundary_check's, not one the kernel wrote).
TEST(TritonSpelling, BlockPointerUncheckedDimensionIsNamedAtRunTime) {
  auto r = runFrontend(std::string(kHeader) + R"(
@launch(M=50, N=37, BM=16, BN=16, grid=(cdiv(M, BM), cdiv(N, BN)), x=randn((M, N), seed=1), z=zeros((M, N), output=True))
@triton.jit
def copy_tiles(x, z, M, N, BM: tl.constexpr, BN: tl.constexpr):
    src = tl.make_block_ptr(x, (M, N), (N, 1), (tl.program_id(0) * BM, tl.program_id(1) * BN), (BM, BN), (1, 0))
    t = tl.load(src, boundary_check=(0,))
    dst = tl.make_block_ptr(z, (M, N), (N, 1), (tl.program_id(0) * BM, tl.program_id(1) * BN), (BM, BN), (1, 0))
    tl.store(dst, t, boundary_check=(0, 1))
)");
  ASSERT_EQ(r->phase, "") << r->errors();
  for (const char* engine : {"tl-scalar", "tl-block"}) {
    Memory m = Memory::fromLaunch(r->launch);
    try {
      if (std::string(engine) == "tl-scalar") runScalar(*r->fn, r->launch, m);
      else runBlock(*r->fn, r->launch, m);
      ADD_FAILURE() << engine << ": the load past the buffer ran";
    } catch (const RuntimeError& e) {
      const std::string what = e.what();
      EXPECT_EQ(e.loc.line, 8u) << engine;
      EXPECT_NE(what.find("through a block pointer whose boundary_check=(0,) does not check dimension 1"), std::string::npos)
          << engine << ": " << what;
      EXPECT_EQ(what.find("mask"), std::string::npos) << engine << ": " << what;
    }
  }
}

}  // namespace
}  // namespace tl

namespace tl {
namespace {

TEST(TritonSpelling, ReductionOptions) {
  const std::string src = std::string(kHeader) + R"(
@launch(x=randn((8, 16), seed=11), out=zeros((64,), output=True), grid=(1,))
@triton.jit
def kernel(x, out):
    r = tl.arange(0, 8)
    c = tl.arange(0, 16)
    v = tl.load(x + r[:, None] * 16 + c[None, :])
    m, i = tl.max(v, axis=1, return_indices=True)
    lo, j = tl.min(v, 1, True)
    kept = tl.sum(v, axis=1, keep_dims=True)          # <8x1>
    tl.store(out + r, m)
    tl.store(out + 8 + r, i.to(tl.float32))
    tl.store(out + 16 + r, lo)
    tl.store(out + 24 + r, j.to(tl.float32))
    tl.store(out + 32 + r[:, None] + c[None, :] * 0, kept, mask=c[None, :] == 0)
    tl.store(out + 40 + r, tl.sum(v > 0, axis=1, dtype=tl.float32))
)";
  std::vector<double> got = runBoth(src), x = input(src);
  ASSERT_EQ(got.size(), 64u);
  for (int i = 0; i < 8; ++i) {
    int im = 0, jm = 0, pos = 0;
    double sum = 0;
    for (int j = 0; j < 16; ++j) {
      const double v = x[i * 16 + j];
      if (v > x[i * 16 + im]) im = j;
      if (v < x[i * 16 + jm]) jm = j;
      pos += v > 0;
      sum += v;
    }
    EXPECT_EQ(got[i], float(x[i * 16 + im])) << i;
    EXPECT_EQ(got[8 + i], im) << i;
    EXPECT_EQ(got[16 + i], float(x[i * 16 + jm])) << i;
    EXPECT_EQ(got[24 + i], jm) << i;
    EXPECT_NEAR(got[32 + i], sum, 1e-5) << i;
    EXPECT_EQ(got[40 + i], pos) << i;
  }
}

}  // namespace
}  // namespace tl

namespace tl {
namespace {

// What real kernels of libraries built on Triton have around them: a library's wrapper decorator
// above @triton.jit (skipped, with a warning), host-side imports, a dtype tilelab lacks that is
// only compared, a 0-d full, compile-time powers.
TEST(TritonSpelling, LibraryKernelSurroundings) {
  const std::string src = std::string(kHeader) + R"(
from triton import next_power_of_2

@launch(x=randn((16,), seed=3), out=zeros((16,), output=True), eps=1e-5)
@libentry()
@triton.autotune(configs=[triton.Config({}, num_warps=2**i) for i in range(3)], key=["n"])
@triton.jit
def kernel(x, out, eps: tl.constexpr):
    offs = tl.arange(0, 2 ** 4)
    wide = x.dtype.element_ty == tl.float64      # False: never equal to a dtype tilelab has
    e = tl.full((), eps, tl.float32)
    v = tl.load(x + offs)
    tl.store(out + offs, v + e + (1.0 if wide else 2.0))
)";
  auto r = runFrontend(src);
  ASSERT_EQ(r->phase, "") << r->errors();
  EXPECT_NE(r->errors().find("test.tl:7:2: warning: unknown decorator '@libentry': skipped"), std::string::npos) << r->errors();
  std::vector<double> got = runBoth(src), x = input(src);
  for (int i = 0; i < 16; ++i) EXPECT_EQ(got[i], float(float(float(x[i]) + float(1e-5)) + 2.0f)) << i;
  auto bad = runFrontend(std::string(kHeader) + R"(
from triton import next_power_of_2
@launch(x=zeros((16,)))
@triton.jit
def kernel(x):
    v = tl.load(x + tl.arange(0, 16)).to(tl.float64)
    n = next_power_of_2(5)
)");
  EXPECT_NE(bad->errors().find("tl.float64 is not supported"), std::string::npos) << bad->errors();
  EXPECT_NE(bad->errors().find("triton.next_power_of_2 is host-side Python: a kernel cannot call it"), std::string::npos)
      << bad->errors();
}

}  // namespace
}  // namespace tl
