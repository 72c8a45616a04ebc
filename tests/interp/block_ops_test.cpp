// tl-block: each op family on small tiles with exact expected values (elementwise per dtype,
// f16/bf16 rounding, conversions, broadcast/expand_dims, reductions, argmax, dot).
#include <cmath>
#include <limits>

#include "block/BlockInterpreter.h"
#include "block_helpers.h"

namespace tl {
namespace {

using blocktest::addF;
using blocktest::addI;
using blocktest::KernelBuilder;
using blocktest::readF;
using blocktest::readI;
using blocktest::sameFloat;

const double kNaN = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();

// out = op(a, b) on 8-element tiles of dtype d (a, b loaded from buffers "a", "b").
std::vector<double> runBinaryF(OpKind kind, DType d, const std::vector<double>& a, const std::vector<double>& b) {
  KernelBuilder k;
  Value* pa = k.ptrParam("a", d);
  Value* pb = k.ptrParam("b", d);
  Value* po = k.ptrParam("out", d);
  k.store1D(po, k.b.binary(kind, k.load1D(pa, 8), k.load1D(pb, 8)));
  Memory m;
  addF(m, "a", d, {8}, a);
  addF(m, "b", d, {8}, b);
  m.add("out", d, {8}, true);
  runBlock(k.finish(), LaunchConfig{}, m);
  return readF(m, "out");
}

std::vector<int64_t> runBinaryI(OpKind kind, DType d, const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
  KernelBuilder k;
  Value* pa = k.ptrParam("a", d);
  Value* pb = k.ptrParam("b", d);
  Value* po = k.ptrParam("out", d);
  k.store1D(po, k.b.binary(kind, k.load1D(pa, 8), k.load1D(pb, 8)));
  Memory m;
  addI(m, "a", d, {8}, a);
  addI(m, "b", d, {8}, b);
  m.add("out", d, {8}, true);
  runBlock(k.finish(), LaunchConfig{}, m);
  return readI(m, "out");
}

std::vector<double> runUnaryF(OpKind kind, DType d, const std::vector<double>& a) {
  KernelBuilder k;
  Value* pa = k.ptrParam("a", d);
  Value* po = k.ptrParam("out", d);
  k.store1D(po, k.b.unary(kind, k.load1D(pa, 8)));
  Memory m;
  addF(m, "a", d, {8}, a);
  m.add("out", d, {8}, true);
  runBlock(k.finish(), LaunchConfig{}, m);
  return readF(m, "out");
}

void expectSame(const std::vector<double>& got, const std::vector<double>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i)
    EXPECT_TRUE(sameFloat(static_cast<float>(got[i]), static_cast<float>(want[i])))
        << "element " << i << ": got " << got[i] << ", want " << want[i];
}

TEST(BlockElementwise, F32Arithmetic) {
  std::vector<double> a{1.5, -2, 7, 0.1, 1e30, -0.0, 3, kNaN};
  std::vector<double> b{2.5, 4, -2, 0.2, 1e30, 0.0, 0, 1};
  expectSame(runBinaryF(OpKind::Add, DType::F32, a, b), {4, 2, 5, 0.1f + 0.2f, 2e30f, 0, 3, kNaN});
  expectSame(runBinaryF(OpKind::Sub, DType::F32, a, b), {-1, -6, 9, 0.1f - 0.2f, 0, -0.0, 3, kNaN});
  expectSame(runBinaryF(OpKind::Mul, DType::F32, a, b), {3.75, -8, -14, 0.1f * 0.2f, kInf, -0.0, 0, kNaN});
  expectSame(runBinaryF(OpKind::Div, DType::F32, a, b), {0.6, -0.5, -3.5, 0.1f / 0.2f, 1, kNaN, kInf, kNaN});
  expectSame(runBinaryF(OpKind::Rem, DType::F32, a, b), {1.5, -2, 1, std::fmod(0.1f, 0.2f), 0, kNaN, kNaN, kNaN});
}

TEST(BlockElementwise, MaximumMinimumPropagateNaNAndOrderZeros) {
  std::vector<double> a{1, 5, kNaN, 2, 0.0, -0.0, -kInf, 3};
  std::vector<double> b{2, 4, 1, kNaN, -0.0, 0.0, -1, 3};
  expectSame(runBinaryF(OpKind::Maximum, DType::F32, a, b), {2, 5, kNaN, kNaN, 0.0, 0.0, -1, 3});
  expectSame(runBinaryF(OpKind::Minimum, DType::F32, a, b), {1, 4, kNaN, kNaN, -0.0, -0.0, -kInf, 3});
  // Signs of the zeros, explicitly (sameFloat compares bits).
  std::vector<double> mx = runBinaryF(OpKind::Maximum, DType::F32, a, b);
  EXPECT_FALSE(std::signbit(mx[4]));
  EXPECT_FALSE(std::signbit(mx[5]));
  std::vector<double> mn = runBinaryF(OpKind::Minimum, DType::F32, a, b);
  EXPECT_TRUE(std::signbit(mn[4]));
  EXPECT_TRUE(std::signbit(mn[5]));
}

TEST(BlockElementwise, F32Math) {
  std::vector<double> a{0, 1, -1, 0.5, 2, 100, -100, 1e-3};
  std::vector<double> exp, exp2, sig;
  for (double v : a) {
    float f = static_cast<float>(v);
    exp.push_back(expf(f));
    exp2.push_back(exp2f(f));
    sig.push_back(1.0f / (1.0f + expf(-f)));
  }
  expectSame(runUnaryF(OpKind::Exp, DType::F32, a), exp);
  expectSame(runUnaryF(OpKind::Exp2, DType::F32, a), exp2);
  expectSame(runUnaryF(OpKind::Sigmoid, DType::F32, a), sig);
  std::vector<double> p{4, 1, 0, 0.25, 2, 100, -1, 1e-3};
  std::vector<double> lg, sq, rs;
  for (double v : p) {
    float f = static_cast<float>(v);
    lg.push_back(logf(f));
    sq.push_back(sqrtf(f));
    rs.push_back(1.0f / sqrtf(f));
  }
  expectSame(runUnaryF(OpKind::Log, DType::F32, p), lg);
  expectSame(runUnaryF(OpKind::Sqrt, DType::F32, p), sq);
  expectSame(runUnaryF(OpKind::Rsqrt, DType::F32, p), rs);
  expectSame(runUnaryF(OpKind::Neg, DType::F32, p), {-4, -1, -0.0, -0.25, -2, -100, 1, -1e-3f});
  expectSame(runUnaryF(OpKind::Abs, DType::F32, {-4, 1, -0.0, kNaN, -kInf, 2, -3, 5}), {4, 1, 0, kNaN, kInf, 2, 3, 5});
}

TEST(BlockElementwise, F16RoundsAfterEveryOp) {
  // f16(0.1) = 0.0999755859375; times 3 is 0.2999267578125 exactly in float, a tie between the
  // f16 neighbours 0.2998046875 and 0.300048828125: nearest even gives 0.2998046875.
  std::vector<double> a(8, 0.1), b(8, 3.0);
  std::vector<double> got = runBinaryF(OpKind::Mul, DType::F16, a, b);
  for (double g : got) EXPECT_EQ(g, 0.2998046875);
  // 1 + 2^-12 is below half an f16 ulp at 1 (2^-11): the sum rounds back to 1.
  got = runBinaryF(OpKind::Add, DType::F16, std::vector<double>(8, 1.0), std::vector<double>(8, 1.0 / 4096));
  for (double g : got) EXPECT_EQ(g, 1.0);
  // bf16 keeps 8 significant bits: 1 + 1/256 is a tie and rounds to even (1.0); 1 + 3/256 -> 1 + 4/256.
  got = runBinaryF(OpKind::Add, DType::BF16, {1, 1, 1, 1, 1, 1, 1, 1},
                   {1.0 / 256, 3.0 / 256, 0, 0, 0, 0, 0, 0});
  EXPECT_EQ(got[0], 1.0);
  EXPECT_EQ(got[1], 1.0 + 4.0 / 256);
  // exp in f16: expf then rounded.
  got = runUnaryF(OpKind::Exp, DType::F16, {1, 0, 0, 0, 0, 0, 0, 0});
  EXPECT_EQ(got[0], 2.71875);  // e = 2.71828..., f16 spacing at 2 is 2^-9
}

TEST(BlockElementwise, IntegersWrapAndDivideLikeC) {
  const int64_t mn = std::numeric_limits<int32_t>::min(), mx = std::numeric_limits<int32_t>::max();
  std::vector<int64_t> a{mx, -7, 7, -7, mn, mn, 6, 100};
  std::vector<int64_t> b{1, 2, -2, -2, -1, 1, 3, 7};
  EXPECT_EQ(runBinaryI(OpKind::Add, DType::I32, a, b), (std::vector<int64_t>{mn, -5, 5, -9, mx, mn + 1, 9, 107}));
  EXPECT_EQ(runBinaryI(OpKind::Div, DType::I32, a, b), (std::vector<int64_t>{mx, -3, -3, 3, mn, mn, 2, 14}));
  EXPECT_EQ(runBinaryI(OpKind::Rem, DType::I32, a, b), (std::vector<int64_t>{0, -1, 1, -1, 0, 0, 0, 2}));
  EXPECT_EQ(runBinaryI(OpKind::Mul, DType::I32, a, b), (std::vector<int64_t>{mx, -14, -14, 14, mn, mn, 18, 700}));
  EXPECT_EQ(runBinaryI(OpKind::Maximum, DType::I32, a, b), (std::vector<int64_t>{mx, 2, 7, -2, -1, 1, 6, 100}));
  EXPECT_EQ(runBinaryI(OpKind::Xor, DType::I32, a, b), (std::vector<int64_t>{mx ^ 1, -7 ^ 2, 7 ^ -2, -7 ^ -2, mn ^ -1, mn ^ 1, 5, 99}));
  const int64_t lmax = std::numeric_limits<int64_t>::max(), lmin = std::numeric_limits<int64_t>::min();
  EXPECT_EQ(runBinaryI(OpKind::Add, DType::I64, {lmax, 1, 2, 3, 4, 5, 6, 7}, {1, 1, 1, 1, 1, 1, 1, 1}),
            (std::vector<int64_t>{lmin, 2, 3, 4, 5, 6, 7, 8}));
  EXPECT_EQ(runBinaryI(OpKind::Div, DType::I64, {lmin, -9, 0, 0, 0, 0, 0, 0}, {-1, 4, 1, 1, 1, 1, 1, 1}),
            (std::vector<int64_t>{lmin, -2, 0, 0, 0, 0, 0, 0}));
}

TEST(BlockElementwise, IntegerDivisionByZeroIsALocatedError) {
  KernelBuilder k;
  Value* pa = k.ptrParam("a", DType::I32);
  Value* pb = k.ptrParam("b", DType::I32);
  k.b.setLoc(Loc{7, 9});
  Value* q = k.b.binary(OpKind::Div, k.load1D(pa, 4), k.load1D(pb, 4));
  k.b.setLoc(Loc{8, 1});
  k.store1D(pa, q);
  Memory m;
  addI(m, "a", DType::I32, {4}, {1, 2, 3, 4});
  addI(m, "b", DType::I32, {4}, {1, 1, 0, 0});
  try {
    runBlock(k.finish(), LaunchConfig{}, m);
    FAIL() << "expected a RuntimeError";
  } catch (const RuntimeError& e) {
    EXPECT_EQ(std::string(e.what()), "integer division by zero in program (0, 0, 0), element [2]");
    EXPECT_EQ(e.loc, (Loc{7, 9}));
  }
  EXPECT_EQ(readI(m, "a"), (std::vector<int64_t>{1, 2, 3, 4}));  // nothing stored
}

TEST(BlockElementwise, CompareSelectAndBitwiseOnI1) {
  KernelBuilder k;
  Value* pa = k.ptrParam("a", DType::F32);
  Value* pb = k.ptrParam("b", DType::F32);
  Value* po = k.ptrParam("out", DType::I32);
  Value* a = k.load1D(pa, 8);
  Value* b = k.load1D(pb, 8);
  Value* lt = k.b.cmp("lt", a, b);
  Value* ne = k.b.cmp("ne", a, b);
  // out = (lt ? 1 : 0) + (ne ? 10 : 0) + (~lt & ne ? 100 : 0)
  Value* one = k.b.constInt(Type::tile(DType::I32, {8}), 1);
  Value* ten = k.b.constInt(Type::tile(DType::I32, {8}), 10);
  Value* hundred = k.b.constInt(Type::tile(DType::I32, {8}), 100);
  Value* zero = k.b.constInt(Type::tile(DType::I32, {8}), 0);
  Value* r = k.b.binary(OpKind::Add, k.b.select(lt, one, zero), k.b.select(ne, ten, zero));
  Value* both = k.b.binary(OpKind::And, k.b.unary(OpKind::Not, lt), ne);
  r = k.b.binary(OpKind::Add, r, k.b.select(both, hundred, zero));
  k.store1D(po, r);
  Memory m;
  addF(m, "a", DType::F32, {8}, {1, 2, 3, kNaN, 1, -0.0, -kInf, 5});
  addF(m, "b", DType::F32, {8}, {2, 2, 1, 1, kNaN, 0.0, 0, 5});
  m.add("out", DType::I32, {8}, true);
  runBlock(k.finish(), LaunchConfig{}, m);
  EXPECT_EQ(readI(m, "out"), (std::vector<int64_t>{11, 0, 110, 110, 110, 0, 11, 0}));
}

TEST(BlockElementwise, Conversions) {
  KernelBuilder k;
  Value* pa = k.ptrParam("a", DType::F32);
  Value* pi = k.ptrParam("toI32", DType::I32);
  Value* pb = k.ptrParam("toI1", DType::I1);
  Value* ph = k.ptrParam("toF16", DType::F16);
  Value* pl = k.ptrParam("l", DType::I64);
  Value* pw = k.ptrParam("wrapped", DType::I32);
  Value* a = k.load1D(pa, 8);
  k.store1D(pi, k.b.convert(a, DType::I32));
  k.store1D(pb, k.b.convert(a, DType::I1));
  k.store1D(ph, k.b.convert(a, DType::F16));
  k.store1D(pw, k.b.convert(k.load1D(pl, 8), DType::I32));
  Memory m;
  addF(m, "a", DType::F32, {8}, {2.9, -2.9, 3e9, -3e9, kNaN, 0.0, 70000, 1e-8});
  m.add("toI32", DType::I32, {8}, true);
  m.add("toI1", DType::I1, {8}, true);
  m.add("toF16", DType::F16, {8}, true);
  addI(m, "l", DType::I64, {8}, {(int64_t(1) << 32) + 5, -1, int64_t(1) << 31, 0, 0, 0, 0, 0});
  m.add("wrapped", DType::I32, {8}, true);
  runBlock(k.finish(), LaunchConfig{}, m);
  const int64_t mx = std::numeric_limits<int32_t>::max(), mn = std::numeric_limits<int32_t>::min();
  EXPECT_EQ(readI(m, "toI32"), (std::vector<int64_t>{2, -2, mx, mn, 0, 0, 70000, 0}));
  EXPECT_EQ(readI(m, "toI1"), (std::vector<int64_t>{1, 1, 1, 1, 1, 0, 1, 1}));
  std::vector<double> h = readF(m, "toF16");
  EXPECT_EQ(h[0], 2.900390625);
  EXPECT_EQ(h[6], kInf);  // above the f16 range
  EXPECT_EQ(h[7], 0.0);   // below the smallest f16 subnormal / 2
  EXPECT_TRUE(std::isnan(h[4]));
  EXPECT_EQ(readI(m, "wrapped"), (std::vector<int64_t>{5, -1, mn, 0, 0, 0, 0, 0}));
}

TEST(BlockShapes, BroadcastAndExpandDims2D) {
  // out[i][j] = 10 * a[i] + b[j] on a 4 x 8 tile, from a[:, None] and b[None, :].
  KernelBuilder k;
  Value* pa = k.ptrParam("a", DType::I32);
  Value* pb = k.ptrParam("b", DType::I32);
  Value* po = k.ptrParam("out", DType::I32);
  Value* a = k.b.expandDims(k.load1D(pa, 4), 1);  // <4x1>
  a = k.b.binary(OpKind::Mul, a, k.b.constInt(Type::tile(DType::I32, {4, 1}), 10));
  Value* b = k.b.expandDims(k.load1D(pb, 8), 0);  // <1x8>
  k.store2D(po, k.b.binary(OpKind::Add, k.b.broadcast(a, {4, 8}), k.b.broadcast(b, {4, 8})));
  Memory m;
  addI(m, "a", DType::I32, {4}, {1, 2, 3, 4});
  addI(m, "b", DType::I32, {8}, {0, 1, 2, 3, 4, 5, 6, 7});
  m.add("out", DType::I32, {4, 8}, true);
  runBlock(k.finish(), LaunchConfig{}, m);
  std::vector<int64_t> got = readI(m, "out");
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 8; ++j) EXPECT_EQ(got[i * 8 + j], 10 * (i + 1) + j) << i << "," << j;
}

// Reduces a 4 x 64 f32 tile along `axis` with `kind` and returns the result.
std::vector<double> runReduce2D(const std::string& kind, int axis, const std::vector<double>& x) {
  KernelBuilder k;
  Value* px = k.ptrParam("x", DType::F32);
  Value* po = k.ptrParam("out", DType::F32);
  k.store1D(po, k.b.reduce(kind, k.load2D(px, 4, 64), axis));
  Memory m;
  addF(m, "x", DType::F32, {4, 64}, x);
  m.add("out", DType::F32, {axis == 0 ? 64 : 4}, true);
  runBlock(k.finish(), LaunchConfig{}, m);
  return readF(m, "out");
}

TEST(BlockReduce, SumMaxMinOnBothAxes) {
  std::vector<double> x(256);
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 64; ++j) x[i * 64 + j] = (i + 1) * 100 + j;  // small ints: sums are exact
  std::vector<double> s0 = runReduce2D("sum", 0, x), s1 = runReduce2D("sum", 1, x);
  for (int j = 0; j < 64; ++j) EXPECT_EQ(s0[j], 1000 + 4 * j);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(s1[i], (i + 1) * 100 * 64 + 63 * 64 / 2);
  std::vector<double> m0 = runReduce2D("max", 0, x), m1 = runReduce2D("min", 1, x);
  for (int j = 0; j < 64; ++j) EXPECT_EQ(m0[j], 400 + j);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(m1[i], (i + 1) * 100);
  // A NaN in row 2 / column 5 poisons that row's and that column's max and min only.
  x[2 * 64 + 5] = kNaN;
  m0 = runReduce2D("max", 0, x);
  m1 = runReduce2D("min", 1, x);
  std::vector<double> n0 = runReduce2D("min", 0, x), n1 = runReduce2D("max", 1, x);
  for (int j = 0; j < 64; ++j) {
    EXPECT_EQ(std::isnan(m0[j]), j == 5) << j;
    EXPECT_EQ(std::isnan(n0[j]), j == 5) << j;
  }
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(std::isnan(m1[i]), i == 2) << i;
    EXPECT_EQ(std::isnan(n1[i]), i == 2) << i;
  }
  EXPECT_EQ(m1[0], 100);
  EXPECT_EQ(n1[3], 463);
}

TEST(BlockReduce, RankOneToScalarAndIntegerWrap) {
  // sum over 1024 i32 elements (the multi-lane path) wraps; max to a scalar; f32 sum of 1..1024.
  KernelBuilder k;
  Value* px = k.ptrParam("x", DType::I32);
  Value* pf = k.ptrParam("f", DType::F32);
  Value* po = k.ptrParam("out", DType::I32);
  Value* pg = k.ptrParam("fout", DType::F32);
  Value* x = k.load1D(px, 1024);
  k.b.store(po, k.b.reduce("sum", x, 0));
  k.b.store(k.b.addptr(po, k.i32(1)), k.b.reduce("max", x, 0));
  k.b.store(k.b.addptr(po, k.i32(2)), k.b.reduce("min", x, 0));
  k.b.store(pg, k.b.reduce("sum", k.load1D(pf, 1024), 0));
  Memory m;
  std::vector<int64_t> xs(1024, 0x10000000);  // 1024 * 2^28 = 2^38 wraps to 0
  xs[100] = 0x10000000 + 7;
  xs[900] = 5;
  std::vector<double> fs(1024);
  for (int i = 0; i < 1024; ++i) fs[i] = i + 1;
  addI(m, "x", DType::I32, {1024}, xs);
  addF(m, "f", DType::F32, {1024}, fs);
  m.add("out", DType::I32, {3}, true);
  m.add("fout", DType::F32, {1}, true);
  runBlock(k.finish(), LaunchConfig{}, m);
  EXPECT_EQ(readI(m, "out"), (std::vector<int64_t>{7 + 5 - 0x10000000, 0x10000000 + 7, 5}));
  EXPECT_EQ(readF(m, "fout")[0], 1024.0 * 1025 / 2);
}

TEST(BlockReduce, F16SumAccumulatesInF32) {
  // 2050 ones in f16: an f16 accumulator would stop at 2048 (2048 + 1 is a tie that rounds to
  // even, 2048); accumulated in f32 and rounded once at the end, the sum is exactly 2050.
  KernelBuilder k;
  Value* px = k.ptrParam("x", DType::F16);
  Value* po = k.ptrParam("out", DType::F16);
  k.b.store(po, k.b.reduce("sum", k.load1D(px, 4096), 0));
  Memory m;
  std::vector<double> xs(4096, 0.0);
  for (int i = 0; i < 2050; ++i) xs[i] = 1.0;
  addF(m, "x", DType::F16, {4096}, xs);
  m.add("out", DType::F16, {1}, true);
  runBlock(k.finish(), LaunchConfig{}, m);
  EXPECT_EQ(readF(m, "out")[0], 2050.0);
}

TEST(BlockReduce, ArgmaxFirstIndexTiesAndNaN) {
  KernelBuilder k;
  Value* px = k.ptrParam("x", DType::F32);
  Value* po = k.ptrParam("out", DType::I32);
  Value* x = k.load2D(px, 4, 4);
  Value* a1 = k.b.argmax(x, 1);  // <4>
  Value* a0 = k.b.argmax(x, 0);  // <4>
  k.b.store(k.ptrs1D(po, 4), a1);
  k.b.store(k.ptrs1D(po, 4, 4), a0);
  Memory m;
  addF(m, "x", DType::F32, {4, 4},
       {1, 3, 3, 2,          // tie: first index 1
        1, kNaN, 5, kNaN,    // first NaN counts as the max: 1
        -kInf, -kInf, -kInf, -kInf,  // all equal: 0
        0.0, -0.0, 7, 7});   // 2
  m.add("out", DType::I32, {8}, true);
  runBlock(k.finish(), LaunchConfig{}, m);
  // Columns: [1, 1, -inf, 0] -> 0 (tie); [3, NaN, -inf, -0] -> 1; [3, 5, -inf, 7] -> 3;
  // [2, NaN, -inf, 7] -> 1.
  EXPECT_EQ(readI(m, "out"), (std::vector<int64_t>{1, 1, 0, 2, 0, 1, 3, 1}));
}

TEST(BlockDot, MatchesNaiveTripleLoopExactly) {
  const int M = 16, K = 32, N = 8;
  KernelBuilder k;
  Value* pa = k.ptrParam("a", DType::F32);
  Value* pb = k.ptrParam("b", DType::F32);
  Value* pc = k.ptrParam("c", DType::F32);
  Value* po = k.ptrParam("out", DType::F32);
  k.store2D(po, k.b.dot(k.load2D(pa, M, K), k.load2D(pb, K, N), k.load2D(pc, M, N)));
  std::vector<double> a(M * K), b(K * N), c(M * N);
  uint32_t seed = 12345;
  auto rnd = [&] {
    seed = seed * 1664525u + 1013904223u;
    return static_cast<float>(static_cast<int32_t>(seed >> 8) % 2000) / 997.0f;
  };
  for (auto& v : a) v = rnd();
  for (auto& v : b) v = rnd();
  for (auto& v : c) v = rnd();
  Memory m;
  addF(m, "a", DType::F32, {M, K}, a);
  addF(m, "b", DType::F32, {K, N}, b);
  addF(m, "c", DType::F32, {M, N}, c);
  m.add("out", DType::F32, {M, N}, true);
  runBlock(k.finish(), LaunchConfig{}, m);
  std::vector<double> got = readF(m, "out");
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      float s = static_cast<float>(c[i * N + j]);
      for (int kk = 0; kk < K; ++kk) {
        volatile float prod = static_cast<float>(a[i * K + kk]) * static_cast<float>(b[kk * N + j]);
        s = s + prod;
      }
      EXPECT_TRUE(sameFloat(static_cast<float>(got[i * N + j]), s)) << i << "," << j;
    }
}

}  // namespace
}  // namespace tl
