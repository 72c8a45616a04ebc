// Tests of tl-scalar's engine (stages/scalar/ScalarInterpreter.cpp) on block IR built with
// tl::Builder: element semantics, memory faults, reductions, dot and control flow.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include "ir/Builder.h"
#include "scalar/ScalarInterpreter.h"

namespace tl {
namespace {

const float kNaN = std::numeric_limits<float>::quiet_NaN();
const float kInf = std::numeric_limits<float>::infinity();

// A kernel under construction plus the memory and launch it runs with.
struct Kernel {
  Function fn;
  Builder b;
  Memory mem;
  LaunchConfig launch;

  Kernel() : b(&fn.body) {
    fn.name = "test_kernel";
    b.setLoc(Loc{1, 1});
  }

  Value* ptrParam(const std::string& name, DType d) {
    fn.params.push_back(Param{name, Param::Kind::Pointer, Loc{1, 1}});
    return fn.body.addArg(Type::ptr(d), name);
  }
  Value* scalarParam(const std::string& name, DType d, ScalarValue v) {
    fn.params.push_back(Param{name, Param::Kind::Scalar, Loc{1, 1}});
    launch.scalars[name] = v;
    return fn.body.addArg(Type::scalar(d), name);
  }
  // A buffer named `name` holding `values` (converted to d).
  void buffer(const std::string& name, DType d, Shape shape, const std::vector<double>& values = {}) {
    Buffer& buf = mem.add(name, d, std::move(shape), false);
    for (size_t i = 0; i < values.size(); ++i) buf.setF(static_cast<int64_t>(i), values[i]);
  }
  std::vector<double> read(const std::string& name) {
    const Buffer& buf = *mem.find(name);
    std::vector<double> out;
    for (int64_t i = 0; i < buf.numel(); ++i) out.push_back(buf.getF(i));
    return out;
  }
  std::vector<int64_t> readI(const std::string& name) {
    const Buffer& buf = *mem.find(name);
    std::vector<int64_t> out;
    for (int64_t i = 0; i < buf.numel(); ++i) out.push_back(buf.getI(i));
    return out;
  }
  // `ptr + arange(0, n)` as a tile of pointers.
  Value* ptrs(Value* ptr, int64_t n) { return b.addptr(b.splat(ptr, {n}), b.arange(0, n)); }
  ScalarRunStats run() {
    b.ret();
    return runScalar(fn, launch, mem);
  }
};

// Runs out[i] = op(x[i]) over a tile of `values.size()` (a power of two) elements of dtype d.
std::vector<double> runUnary(OpKind kind, DType d, const std::vector<double>& values) {
  Kernel k;
  int64_t n = static_cast<int64_t>(values.size());
  Value* x = k.ptrParam("x", d);
  Value* out = k.ptrParam("out", d);
  k.buffer("x", d, {n}, values);
  k.buffer("out", d, {n});
  k.b.store(k.ptrs(out, n), k.b.unary(kind, k.b.load(k.ptrs(x, n))));
  k.run();
  return k.read("out");
}

// Runs out[i] = op(x[i], y[i]).
std::vector<double> runBinary(OpKind kind, DType d, const std::vector<double>& xs, const std::vector<double>& ys) {
  Kernel k;
  int64_t n = static_cast<int64_t>(xs.size());
  Value* x = k.ptrParam("x", d);
  Value* y = k.ptrParam("y", d);
  Value* out = k.ptrParam("out", d);
  k.buffer("x", d, {n}, xs);
  k.buffer("y", d, {n}, ys);
  k.buffer("out", d, {n});
  k.b.store(k.ptrs(out, n), k.b.binary(kind, k.b.load(k.ptrs(x, n)), k.b.load(k.ptrs(y, n))));
  k.run();
  return k.read("out");
}

// Expects fn() to throw RuntimeError at `loc` whose message contains every one of `words`.
template <typename Fn>
void expectRuntimeError(Fn fn, Loc loc, const std::vector<std::string>& words) {
  try {
    fn();
    ADD_FAILURE() << "no RuntimeError";
  } catch (const RuntimeError& e) {
    EXPECT_EQ(e.loc, loc) << e.what();
    for (const auto& w : words) EXPECT_NE(std::string(e.what()).find(w), std::string::npos) << "'" << w << "' not in: " << e.what();
  }
}

// ---------------------------------------------------------------------------------------------
// Elementwise

TEST(ScalarElementwise, FloatUnaryInF32) {
  std::vector<double> xs = {0.5, -1.25, 2.0, 3.75};
  auto check = [&](OpKind kind, float (*ref)(float)) {
    std::vector<double> got = runUnary(kind, DType::F32, xs);
    for (size_t i = 0; i < xs.size(); ++i)
      EXPECT_EQ(got[i], ref(static_cast<float>(xs[i]))) << mnemonic(kind) << " of " << xs[i];
  };
  check(OpKind::Exp, [](float x) { return expf(x); });
  check(OpKind::Exp2, [](float x) { return exp2f(x); });
  check(OpKind::Sigmoid, [](float x) { return 1.0f / (1.0f + expf(-x)); });
  check(OpKind::Neg, [](float x) { return -x; });
  check(OpKind::Abs, [](float x) { return std::fabs(x); });
  std::vector<double> pos = {0.5, 1.25, 2.0, 3.75};
  std::vector<double> got = runUnary(OpKind::Rsqrt, DType::F32, pos);
  for (size_t i = 0; i < pos.size(); ++i) EXPECT_EQ(got[i], 1.0f / sqrtf(static_cast<float>(pos[i])));
  got = runUnary(OpKind::Log, DType::F32, pos);
  for (size_t i = 0; i < pos.size(); ++i) EXPECT_EQ(got[i], logf(static_cast<float>(pos[i])));
  got = runUnary(OpKind::Sqrt, DType::F32, {-1, 0, 4, 2});
  EXPECT_TRUE(std::isnan(got[0]));
  EXPECT_EQ(got[2], 2);
  EXPECT_EQ(got[3], sqrtf(2.0f));
}

TEST(ScalarElementwise, FloatBinaryAndNaN) {
  std::vector<double> xs = {1.5, -2, kNaN, 0.0, 7, 5, -0.0, 3};
  std::vector<double> ys = {0.25, 3, 1, kNaN, -2, 0, 0.0, 0.1};
  std::vector<double> mx = runBinary(OpKind::Maximum, DType::F32, xs, ys);
  std::vector<double> mn = runBinary(OpKind::Minimum, DType::F32, xs, ys);
  EXPECT_EQ(mx[0], 1.5);
  EXPECT_EQ(mn[1], -2);
  EXPECT_TRUE(std::isnan(mx[2]) && std::isnan(mx[3]) && std::isnan(mn[2]) && std::isnan(mn[3]));
  EXPECT_FALSE(std::signbit(mx[6]));  // maximum(-0, +0) = +0
  EXPECT_TRUE(std::signbit(mn[6]));   // minimum(-0, +0) = -0
  std::vector<double> div = runBinary(OpKind::Div, DType::F32, xs, ys);
  EXPECT_EQ(div[5], kInf);  // float division by zero is IEEE, not an error
  EXPECT_EQ(div[7], 3.0f / 0.1f);
  std::vector<double> rem = runBinary(OpKind::Rem, DType::F32, {-7, 7, 5.5, 1}, {2, -2, 2, 0});
  EXPECT_EQ(rem[0], -1);
  EXPECT_EQ(rem[1], 1);
  EXPECT_EQ(rem[2], 1.5);
  EXPECT_TRUE(std::isnan(rem[3]));
  std::vector<double> add = runBinary(OpKind::Add, DType::F32, {0.1, 1e8}, {0.2, 1});
  EXPECT_EQ(add[0], 0.1f + 0.2f);  // float, not double, arithmetic
  EXPECT_EQ(add[1], 1e8);          // 1e8 + 1 is not an f32
}

TEST(ScalarElementwise, HalfRoundsAfterEachOp) {
  // 2048 + 1 = 2049 is not an f16: it rounds to even (2048); 2048 + 3 rounds to 2052.
  std::vector<double> got = runBinary(OpKind::Add, DType::F16, {2048, 2048}, {1, 3});
  EXPECT_EQ(got[0], 2048);
  EXPECT_EQ(got[1], 2052);
  got = runBinary(OpKind::Mul, DType::BF16, {1.0078125, 300}, {1.0078125, 300});
  EXPECT_EQ(got[0], 1.015625);  // 1.01568... rounds to 8 significant bits
  EXPECT_EQ(got[1], 90112);     // 90000 -> nearest bf16
  got = runBinary(OpKind::Mul, DType::F16, {300, 0.001}, {300, 0.001});
  EXPECT_EQ(got[0], kInf);  // 90000 overflows f16
  EXPECT_EQ(got[1], halfToFloat(floatToHalf(static_cast<float>(halfToFloat(floatToHalf(0.001f))) *
                                            static_cast<float>(halfToFloat(floatToHalf(0.001f))))));
}

TEST(ScalarElementwise, IntegerWraparound) {
  const double imax = 2147483647, imin = -2147483648.0;
  std::vector<double> got = runBinary(OpKind::Add, DType::I32, {imax, imin}, {1, -1});
  EXPECT_EQ(got[0], imin);
  EXPECT_EQ(got[1], imax);
  got = runBinary(OpKind::Mul, DType::I32, {65536, 123456789}, {65536, 100});
  EXPECT_EQ(got[0], 0);
  EXPECT_EQ(got[1], static_cast<int32_t>(static_cast<uint32_t>(123456789u * 100u)));
  got = runUnary(OpKind::Neg, DType::I32, {imin, 5});
  EXPECT_EQ(got[0], imin);
  EXPECT_EQ(got[1], -5);
  got = runUnary(OpKind::Abs, DType::I32, {imin, -5});
  EXPECT_EQ(got[0], imin);
  EXPECT_EQ(got[1], 5);
  got = runUnary(OpKind::Not, DType::I32, {0, 5});
  EXPECT_EQ(got[0], -1);
  EXPECT_EQ(got[1], -6);

  Kernel k;  // i64 wraps at 2^63
  Value* out = k.ptrParam("out", DType::I64);
  k.buffer("out", DType::I64, {1});
  Value* big = k.b.constInt(Type::scalar(DType::I64), std::numeric_limits<int64_t>::max());
  k.b.store(out, k.b.binary(OpKind::Add, big, k.b.constInt(Type::scalar(DType::I64), 1)));
  k.run();
  EXPECT_EQ(k.readI("out")[0], std::numeric_limits<int64_t>::min());
}

TEST(ScalarElementwise, CDivisionAndRemainder) {
  std::vector<double> a = {-7, 7, -7, 7, -2147483648.0, -2147483648.0, 0, 9};
  std::vector<double> b = {2, -2, -2, 2, -1, 3, 5, 3};
  std::vector<double> q = runBinary(OpKind::Div, DType::I32, a, b);
  std::vector<double> r = runBinary(OpKind::Rem, DType::I32, a, b);
  EXPECT_EQ(q, (std::vector<double>{-3, -3, 3, 3, -2147483648.0, -715827882, 0, 3}));
  EXPECT_EQ(r, (std::vector<double>{-1, 1, -1, 1, 0, -2, 0, 0}));
}

TEST(ScalarElementwise, IntegerDivisionByZeroIsLocated) {
  for (OpKind kind : {OpKind::Div, OpKind::Rem}) {
    Kernel k;
    Value* x = k.ptrParam("x", DType::I32);
    Value* out = k.ptrParam("out", DType::I32);
    k.buffer("x", DType::I32, {4}, {1, 2, 0, 3});
    k.buffer("out", DType::I32, {4}, {-1, -1, -1, -1});
    Value* v = k.b.load(k.ptrs(x, 4));
    k.b.setLoc(Loc{7, 12});
    Value* q = k.b.binary(kind, k.b.constInt(Type::tile(DType::I32, {4}), 10), v);
    k.b.setLoc(Loc{8, 1});
    k.b.store(k.ptrs(out, 4), q);
    expectRuntimeError([&] { k.run(); }, Loc{7, 12},
                       {"integer division by zero", "program (0, 0, 0)", "element [2]"});
    EXPECT_EQ(k.readI("out"), (std::vector<int64_t>{-1, -1, -1, -1}));
  }
}

TEST(ScalarElementwise, ConvertCmpSelect) {
  Kernel k;
  Value* x = k.ptrParam("x", DType::F32);
  Value* toI = k.ptrParam("to_i32", DType::I32);
  Value* toB = k.ptrParam("to_i1", DType::I1);
  Value* toH = k.ptrParam("to_f16", DType::F16);
  Value* sel = k.ptrParam("sel", DType::F32);
  k.buffer("x", DType::F32, {8}, {2.9, -2.9, kNaN, 1e20, -1e20, 0.0, 65519, 0.5});
  k.buffer("to_i32", DType::I32, {8});
  k.buffer("to_i1", DType::I1, {8});
  k.buffer("to_f16", DType::F16, {8});
  k.buffer("sel", DType::F32, {8});
  Value* v = k.b.load(k.ptrs(x, 8));
  k.b.store(k.ptrs(toI, 8), k.b.convert(v, DType::I32));
  k.b.store(k.ptrs(toB, 8), k.b.convert(v, DType::I1));
  k.b.store(k.ptrs(toH, 8), k.b.convert(v, DType::F16));
  Value* zero = k.b.constFloat(Type::tile(DType::F32, {8}), 0.0);
  Value* pos = k.b.cmp("gt", v, zero);
  k.b.store(k.ptrs(sel, 8), k.b.select(pos, v, k.b.unary(OpKind::Neg, v)));
  k.run();
  EXPECT_EQ(k.readI("to_i32"), (std::vector<int64_t>{2, -2, 0, 2147483647, -2147483648LL, 0, 65519, 0}));
  EXPECT_EQ(k.readI("to_i1"), (std::vector<int64_t>{1, 1, 1, 1, 1, 0, 1, 1}));
  std::vector<double> h = k.read("to_f16");
  EXPECT_EQ(h[0], halfToFloat(floatToHalf(2.9f)));
  EXPECT_EQ(h[3], kInf);
  EXPECT_EQ(h[6], 65504);
  std::vector<double> s = k.read("sel");
  EXPECT_EQ(s[1], 2.9f);
  EXPECT_TRUE(std::isnan(s[2]));  // NaN > 0 is false: select picks -NaN

  // Float -> i64 saturates exactly at the i64 limits (2^63 is not an i64).
  Kernel k64;
  Value* xf = k64.ptrParam("x", DType::F32);
  Value* o64 = k64.ptrParam("o", DType::I64);
  k64.buffer("x", DType::F32, {4}, {kInf, -kInf, 1e30, kNaN});
  k64.buffer("o", DType::I64, {4});
  k64.b.store(k64.ptrs(o64, 4), k64.b.convert(k64.b.load(k64.ptrs(xf, 4)), DType::I64));
  k64.run();
  EXPECT_EQ(k64.readI("o"), (std::vector<int64_t>{std::numeric_limits<int64_t>::max(),
                                                  std::numeric_limits<int64_t>::min(),
                                                  std::numeric_limits<int64_t>::max(), 0}));

  // Int -> float rounds; i1 -> int is 0/1.
  Kernel k2;
  Value* out = k2.ptrParam("out", DType::F16);
  Value* outI = k2.ptrParam("outI", DType::I32);
  k2.buffer("out", DType::F16, {1});
  k2.buffer("outI", DType::I32, {1});
  k2.b.store(out, k2.b.convert(k2.b.constInt(Type::scalar(DType::I32), 2049), DType::F16));
  k2.b.store(outI, k2.b.convert(k2.b.constInt(Type::scalar(DType::I1), 1), DType::I32));
  k2.run();
  EXPECT_EQ(k2.read("out")[0], 2048);
  EXPECT_EQ(k2.readI("outI")[0], 1);
}

TEST(ScalarElementwise, BroadcastAndExpandDims) {
  // out[i][j] = 10 * row[i] + col[j] over a 4x8 tile, via expand_dims + broadcast.
  Kernel k;
  Value* out = k.ptrParam("out", DType::I32);
  k.buffer("out", DType::I32, {4, 8});
  Value* rows = k.b.expandDims(k.b.arange(0, 4), 1);  // <4x1>
  Value* cols = k.b.expandDims(k.b.arange(0, 8), 0);  // <1x8>
  Value* r = k.b.broadcast(rows, {4, 8});
  Value* c = k.b.broadcast(cols, {4, 8});
  Value* ten = k.b.constInt(Type::tile(DType::I32, {4, 8}), 10);
  Value* val = k.b.binary(OpKind::Add, k.b.binary(OpKind::Mul, r, ten), c);
  Value* offs = k.b.binary(OpKind::Add, k.b.binary(OpKind::Mul, r, k.b.constInt(Type::tile(DType::I32, {4, 8}), 8)), c);
  k.b.store(k.b.addptr(k.b.splat(out, {4, 8}), offs), val);
  k.run();
  std::vector<int64_t> got = k.readI("out");
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 8; ++j) EXPECT_EQ(got[static_cast<size_t>(i * 8 + j)], 10 * i + j);
}

// ---------------------------------------------------------------------------------------------
// Memory

TEST(ScalarMemory, MaskedLoadWithOther) {
  // The softmax pattern: a ragged row of 5 in a tile of 8.
  Kernel k;
  Value* x = k.ptrParam("x", DType::F32);
  Value* out = k.ptrParam("out", DType::F32);
  Value* n = k.scalarParam("N", DType::I32, ScalarValue{DType::I32, 5, 0});
  k.buffer("x", DType::F32, {5}, {1, 2, 3, 4, 5});
  k.buffer("out", DType::F32, {8}, {-1, -1, -1, -1, -1, -1, -1, -1});
  Value* cols = k.b.arange(0, 8);
  Value* mask = k.b.cmp("lt", cols, k.b.splat(n, {8}));
  Value* other = k.b.constFloat(Type::tile(DType::F32, {8}), -kInf);
  Value* v = k.b.load(k.b.addptr(k.b.splat(x, {8}), cols), mask, other);
  Value* v0 = k.b.load(k.b.addptr(k.b.splat(x, {8}), cols), mask);  // default other: 0
  Value* sum = k.b.binary(OpKind::Add, v, v0);
  k.b.store(k.b.addptr(k.b.splat(out, {8}), cols), sum);  // writes all 8 elements of out
  k.run();
  EXPECT_EQ(k.read("out"), (std::vector<double>{2, 4, 6, 8, 10, -kInf, -kInf, -kInf}));
}

TEST(ScalarMemory, OutOfBoundsLoadIsLocated) {
  // Program p loads x[p*8 + j]; x has 12 elements, so program 1 faults at element [4].
  Kernel k;
  Value* x = k.ptrParam("x_ptr", DType::F32);
  Value* out = k.ptrParam("out", DType::F32);
  k.buffer("x_ptr", DType::F32, {12});
  k.buffer("out", DType::F32, {16});
  k.launch.grid = {2, 1, 1};
  Value* base = k.b.binary(OpKind::Mul, k.b.programId(0), k.b.constInt(Type::scalar(DType::I32), 8));
  Value* offs = k.b.binary(OpKind::Add, k.b.splat(base, {8}), k.b.arange(0, 8));
  k.b.setLoc(Loc{6, 9});
  Value* v = k.b.load(k.b.addptr(k.b.splat(x, {8}), offs));
  k.b.setLoc(Loc{7, 1});
  k.b.store(k.b.addptr(k.b.splat(out, {8}), offs), v);
  uint64_t end = k.mem.find("x_ptr")->end();
  char addr[32];
  std::snprintf(addr, sizeof addr, "0x%llx", static_cast<unsigned long long>(end));
  expectRuntimeError([&] { k.run(); }, Loc{6, 9},
                     {"load out of bounds", std::string("address ") + addr, "0 bytes past the end",
                      "buffer 'x_ptr' (12 x f32)", "program (1, 0, 0)", "element [4]"});
}

TEST(ScalarMemory, OutOfBounds2DReportsRowAndColumn) {
  // A 4x4 tile over a 3x4 buffer: row 3 is outside.
  Kernel k;
  Value* x = k.ptrParam("x", DType::F16);
  k.buffer("x", DType::F16, {3, 4});
  Value* rows = k.b.broadcast(k.b.expandDims(k.b.arange(0, 4), 1), {4, 4});
  Value* cols = k.b.broadcast(k.b.expandDims(k.b.arange(0, 4), 0), {4, 4});
  Value* offs = k.b.binary(OpKind::Add, k.b.binary(OpKind::Mul, rows, k.b.constInt(Type::tile(DType::I32, {4, 4}), 4)), cols);
  k.b.setLoc(Loc{3, 5});
  k.b.load(k.b.addptr(k.b.splat(x, {4, 4}), offs));
  expectRuntimeError([&] { k.run(); }, Loc{3, 5}, {"element [3, 0]", "buffer 'x' (3 x 4 x f16)"});
}

TEST(ScalarMemory, OutOfBoundsStoreWritesNothing) {
  // Program 0 stores out[0..7] (fine); program 1 stores out[8..15] but out has 12 elements:
  // the run stops and out[8..11] keep their old values.
  Kernel k;
  Value* out = k.ptrParam("out", DType::F32);
  k.buffer("out", DType::F32, {12}, std::vector<double>(12, -1));
  k.launch.grid = {2, 1, 1};
  Value* base = k.b.binary(OpKind::Mul, k.b.programId(0), k.b.constInt(Type::scalar(DType::I32), 8));
  Value* offs = k.b.binary(OpKind::Add, k.b.splat(base, {8}), k.b.arange(0, 8));
  k.b.setLoc(Loc{4, 2});
  k.b.store(k.b.addptr(k.b.splat(out, {8}), offs), k.b.constFloat(Type::tile(DType::F32, {8}), 3.0));
  expectRuntimeError([&] { k.run(); }, Loc{4, 2},
                     {"store out of bounds", "buffer 'out'", "program (1, 0, 0)", "element [4]"});
  std::vector<double> got = k.read("out");
  for (int i = 0; i < 8; ++i) EXPECT_EQ(got[static_cast<size_t>(i)], 3);
  for (int i = 8; i < 12; ++i) EXPECT_EQ(got[static_cast<size_t>(i)], -1);
}

TEST(ScalarMemory, BeforeTheStartAndMaskedOffIsFine) {
  Kernel k;
  Value* x = k.ptrParam("x", DType::I32);
  k.buffer("x", DType::I32, {4}, {1, 2, 3, 4});
  Value* offs = k.b.binary(OpKind::Sub, k.b.arange(0, 4), k.b.constInt(Type::tile(DType::I32, {4}), 2));
  Value* p = k.b.addptr(k.b.splat(x, {4}), offs);  // x-2, x-1, x, x+1
  Value* ok = k.b.cmp("ge", offs, k.b.constInt(Type::tile(DType::I32, {4}), 0));
  k.b.store(p, k.b.constInt(Type::tile(DType::I32, {4}), 9), ok);  // masked: fine
  k.b.setLoc(Loc{9, 3});
  k.b.load(p);  // unmasked: x-2 is 8 bytes before the start
  expectRuntimeError([&] { k.run(); }, Loc{9, 3}, {"load out of bounds", "8 bytes before the start of buffer 'x'", "element [0]"});
  EXPECT_EQ(k.readI("x"), (std::vector<int64_t>{9, 9, 3, 4}));
}

TEST(ScalarMemory, MissingBufferAndScalarConversion) {
  Kernel k;
  Value* x = k.ptrParam("x", DType::F32);
  Value* s = k.scalarParam("scale", DType::F32, ScalarValue{DType::I32, 3, 0});  // int -> f32
  k.buffer("x", DType::F32, {1}, {2});
  k.b.store(x, k.b.binary(OpKind::Mul, k.b.load(x), s));
  ScalarRunStats st = k.run();
  EXPECT_EQ(k.read("x")[0], 6);
  EXPECT_EQ(st.programs, 1);
  EXPECT_GT(st.elementOps, 0);

  Kernel m;
  m.ptrParam("y", DType::F32);
  EXPECT_THROW(m.run(), std::runtime_error);
}

// ---------------------------------------------------------------------------------------------
// Reductions and dot

// Loads an n-element f32 tile from x, reduces it and stores the scalar to out[0].
std::vector<double> runReduce1D(const std::string& kind, DType d, const std::vector<double>& xs) {
  Kernel k;
  int64_t n = static_cast<int64_t>(xs.size());
  Value* x = k.ptrParam("x", d);
  Value* out = k.ptrParam("out", d);
  k.buffer("x", d, {n}, xs);
  k.buffer("out", d, {1});
  k.b.store(out, k.b.reduce(kind, k.b.load(k.ptrs(x, n)), 0));
  k.run();
  return k.read("out");
}

TEST(ScalarReduce, SumIsSequentialInTheDType) {
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> dist(-1, 1);
  std::vector<double> xs(1024);
  for (auto& v : xs) v = dist(rng);
  float ref = static_cast<float>(xs[0]);
  for (size_t i = 1; i < xs.size(); ++i) ref = ref + static_cast<float>(xs[i]);
  EXPECT_EQ(runReduce1D("sum", DType::F32, xs)[0], ref);
  // f16 accumulates in f32: 2048 + 1 + 1 + 1 = 2051 -> f16 2052 (in f16 steps it stays 2048).
  EXPECT_EQ(runReduce1D("sum", DType::F16, {2048, 1, 1, 1})[0], 2052);
  // Integers wrap.
  EXPECT_EQ(runReduce1D("sum", DType::I32, {2147483647, 1, 0, 0})[0], -2147483648.0);
}

TEST(ScalarReduce, MaxMinPropagateNaN) {
  EXPECT_EQ(runReduce1D("max", DType::F32, {1, 5, -3, 2})[0], 5);
  EXPECT_EQ(runReduce1D("min", DType::F32, {1, 5, -3, 2})[0], -3);
  EXPECT_TRUE(std::isnan(runReduce1D("max", DType::F32, {1, kNaN, 9, 2})[0]));
  EXPECT_TRUE(std::isnan(runReduce1D("min", DType::F32, {1, 2, 9, kNaN})[0]));
  EXPECT_EQ(runReduce1D("max", DType::F32, {-kInf, -kInf})[0], -kInf);
  EXPECT_EQ(runReduce1D("max", DType::I64, {-4, -9, -2, -7})[0], -2);
}

TEST(ScalarReduce, ArgmaxTiesAndNaN) {
  auto argmax = [](std::vector<double> xs) {
    Kernel k;
    int64_t n = static_cast<int64_t>(xs.size());
    Value* x = k.ptrParam("x", DType::F32);
    Value* out = k.ptrParam("out", DType::I32);
    k.buffer("x", DType::F32, {n}, xs);
    k.buffer("out", DType::I32, {1});
    k.b.store(out, k.b.argmax(k.b.load(k.ptrs(x, n)), 0));
    k.run();
    return k.readI("out")[0];
  };
  EXPECT_EQ(argmax({1, 7, 3, 7}), 1);           // first of the tied maxima
  EXPECT_EQ(argmax({1, kNaN, 9, kNaN}), 1);     // NaN counts as the maximum; the first wins
  EXPECT_EQ(argmax({-kInf, -kInf, -kInf, -kInf}), 0);
  EXPECT_EQ(argmax({-0.0, 0.0, -1, -2}), 0);    // -0 == +0
  EXPECT_EQ(argmax({0, 0, 0, 5}), 3);
}

TEST(ScalarReduce, TwoDimensionalAlongEachAxis) {
  // x = [[0,1,2,3],[10,11,12,13]]: sum over axis 0 -> [10,12,14,16]; over axis 1 -> [6, 46];
  // argmax over axis 0 -> [1,1,1,1].
  Kernel k;
  Value* x = k.ptrParam("x", DType::I32);
  Value* s0 = k.ptrParam("s0", DType::I32);
  Value* s1 = k.ptrParam("s1", DType::I32);
  Value* a0 = k.ptrParam("a0", DType::I32);
  k.buffer("x", DType::I32, {2, 4}, {0, 1, 2, 3, 10, 11, 12, 13});
  k.buffer("s0", DType::I32, {4});
  k.buffer("s1", DType::I32, {2});
  k.buffer("a0", DType::I32, {4});
  Value* rows = k.b.broadcast(k.b.expandDims(k.b.arange(0, 2), 1), {2, 4});
  Value* cols = k.b.broadcast(k.b.expandDims(k.b.arange(0, 4), 0), {2, 4});
  Value* offs = k.b.binary(OpKind::Add, k.b.binary(OpKind::Mul, rows, k.b.constInt(Type::tile(DType::I32, {2, 4}), 4)), cols);
  Value* v = k.b.load(k.b.addptr(k.b.splat(x, {2, 4}), offs));
  k.b.store(k.ptrs(s0, 4), k.b.reduce("sum", v, 0));
  k.b.store(k.ptrs(s1, 2), k.b.reduce("sum", v, 1));
  k.b.store(k.ptrs(a0, 4), k.b.argmax(v, 0));
  k.run();
  EXPECT_EQ(k.readI("s0"), (std::vector<int64_t>{10, 12, 14, 16}));
  EXPECT_EQ(k.readI("s1"), (std::vector<int64_t>{6, 46}));
  EXPECT_EQ(k.readI("a0"), (std::vector<int64_t>{1, 1, 1, 1}));
}

// Loads an R x C tile of dtype d from a row-major buffer.
Value* load2D(Kernel& k, Value* ptr, int64_t R, int64_t C) {
  Value* rows = k.b.broadcast(k.b.expandDims(k.b.arange(0, R), 1), {R, C});
  Value* cols = k.b.broadcast(k.b.expandDims(k.b.arange(0, C), 0), {R, C});
  Value* offs = k.b.binary(OpKind::Add, k.b.binary(OpKind::Mul, rows, k.b.constInt(Type::tile(DType::I32, {R, C}), C)), cols);
  return k.b.addptr(k.b.splat(ptr, {R, C}), offs);
}

TEST(ScalarDot, MatchesNaiveLoop) {
  for (DType d : {DType::F32, DType::F16}) {
    const int64_t M = 4, K = 16, N = 8;
    std::mt19937 rng(9);
    std::uniform_real_distribution<float> dist(-2, 2);
    std::vector<double> a(M * K), b(K * N), acc(M * N);
    for (auto& v : a) v = roundToDType(dist(rng), d);
    for (auto& v : b) v = roundToDType(dist(rng), d);
    for (auto& v : acc) v = dist(rng);
    Kernel k;
    Value* pa = k.ptrParam("a", d);
    Value* pb = k.ptrParam("b", d);
    Value* pc = k.ptrParam("c", DType::F32);
    k.buffer("a", d, {M, K}, a);
    k.buffer("b", d, {K, N}, b);
    k.buffer("c", DType::F32, {M, N}, acc);
    Value* cptrs = load2D(k, pc, M, N);
    Value* res = k.b.dot(k.b.load(load2D(k, pa, M, K)), k.b.load(load2D(k, pb, K, N)), k.b.load(cptrs));
    k.b.store(cptrs, res);
    ScalarRunStats st = k.run();
    EXPECT_GE(st.elementOps, M * N * K);
    std::vector<double> got = k.read("c");
    for (int64_t m = 0; m < M; ++m)
      for (int64_t n = 0; n < N; ++n) {
        float s = static_cast<float>(acc[static_cast<size_t>(m * N + n)]);
        for (int64_t kk = 0; kk < K; ++kk) {
          float p = static_cast<float>(a[static_cast<size_t>(m * K + kk)]) * static_cast<float>(b[static_cast<size_t>(kk * N + n)]);
          s = s + p;
        }
        EXPECT_EQ(got[static_cast<size_t>(m * N + n)], s) << dtypeName(d) << " [" << m << ", " << n << "]";
      }
  }
}

// ---------------------------------------------------------------------------------------------
// Control flow

// for iv in range(lo, hi, step): acc += iv; count += 1. Stores acc and count.
std::pair<int64_t, int64_t> runLoop(int64_t lo, int64_t hi, int64_t step, DType ivType = DType::I32) {
  Kernel k;
  Value* out = k.ptrParam("out", DType::I64);
  Value* st = k.scalarParam("step", ivType, ScalarValue{ivType, step, 0});
  k.buffer("out", DType::I64, {2});
  Type it = Type::scalar(ivType);
  Value* acc0 = k.b.constInt(Type::scalar(DType::I64), 0);
  Value* cnt0 = k.b.constInt(Type::scalar(DType::I64), 0);
  Op* loop = k.b.forOp(k.b.constInt(it, lo), k.b.constInt(it, hi), st, {acc0, cnt0});
  Builder body(&loop->region(0));
  body.setLoc(Loc{2, 5});
  Value* iv = loop->region(0).arg(0);
  Value* iv64 = ivType == DType::I64 ? iv : body.convert(iv, DType::I64);
  Value* acc = body.binary(OpKind::Add, loop->region(0).arg(1), iv64);
  Value* cnt = body.binary(OpKind::Add, loop->region(0).arg(2), body.constInt(Type::scalar(DType::I64), 1));
  body.yield({acc, cnt});
  k.b.store(out, loop->result(0));
  k.b.store(k.b.addptr(out, k.b.constInt(Type::scalar(DType::I32), 1)), loop->result(1));
  k.run();
  std::vector<int64_t> r = k.readI("out");
  return {r[0], r[1]};
}

TEST(ScalarControl, ForWithCarriedValues) {
  EXPECT_EQ(runLoop(0, 10, 1), std::make_pair(int64_t(45), int64_t(10)));      // sum of 0..9
  EXPECT_EQ(runLoop(10, 0, -3), std::make_pair(int64_t(22), int64_t(4)));      // 10, 7, 4, 1
  EXPECT_EQ(runLoop(5, 5, 1), std::make_pair(int64_t(0), int64_t(0)));         // no iteration: the inits
  EXPECT_EQ(runLoop(0, 10, -1), std::make_pair(int64_t(0), int64_t(0)));
  EXPECT_EQ(runLoop(0, 7, 3), std::make_pair(int64_t(9), int64_t(3)));         // 0, 3, 6
  // Near the top of i32 the iv must not wrap around: 2147483645, 2147483646 only.
  EXPECT_EQ(runLoop(2147483645, 2147483647, 1000), std::make_pair(int64_t(2147483645), int64_t(1)));
  EXPECT_EQ(runLoop(2147483640, 2147483647, 3).second, 3);
  // i64 loop with a step that would overflow past hi.
  const int64_t big = std::numeric_limits<int64_t>::max();
  EXPECT_EQ(runLoop(big - 1, big, big, DType::I64).second, 1);
}

TEST(ScalarControl, ForStepZeroIsLocated) {
  Kernel k;
  Value* st = k.scalarParam("step", DType::I32, ScalarValue{DType::I32, 0, 0});
  Type it = Type::scalar(DType::I32);
  k.b.setLoc(Loc{4, 7});
  Op* loop = k.b.forOp(k.b.constInt(it, 0), k.b.constInt(it, 10), st, {});
  Builder body(&loop->region(0));
  body.yield({});
  expectRuntimeError([&] { k.run(); }, Loc{4, 7}, {"range() step is zero"});
}

TEST(ScalarControl, IfPicksTheTakenBranch) {
  // out[pid] = pid == 1 ? 100 : 200 + pid, over a grid of 3.
  Kernel k;
  Value* out = k.ptrParam("out", DType::I32);
  k.buffer("out", DType::I32, {3});
  k.launch.grid = {3, 1, 1};
  Value* pid = k.b.programId(0);
  Value* cond = k.b.cmp("eq", pid, k.b.constInt(Type::scalar(DType::I32), 1));
  Op* ifop = k.b.ifOp(cond, {Type::scalar(DType::I32)});
  Builder thenB(&ifop->region(0));
  thenB.yield({thenB.constInt(Type::scalar(DType::I32), 100)});
  Builder elseB(&ifop->region(1));
  elseB.yield({elseB.binary(OpKind::Add, pid, elseB.constInt(Type::scalar(DType::I32), 200))});
  k.b.store(k.b.addptr(out, pid), ifop->result(0));
  ScalarRunStats st = k.run();
  EXPECT_EQ(k.readI("out"), (std::vector<int64_t>{200, 100, 202}));
  EXPECT_EQ(st.programs, 3);
}

TEST(ScalarControl, GridOrderAndNumPrograms) {
  // Each program appends its linear id through a shared counter in memory: x must be fastest.
  Kernel k;
  Value* out = k.ptrParam("out", DType::I32);
  Value* counter = k.ptrParam("counter", DType::I32);
  k.buffer("out", DType::I32, {12});
  k.buffer("counter", DType::I32, {1});
  k.launch.grid = {3, 2, 2};
  Type i32 = Type::scalar(DType::I32);
  Value* lin = k.b.binary(
      OpKind::Add, k.b.programId(0),
      k.b.binary(OpKind::Mul, k.b.numPrograms(0),
                 k.b.binary(OpKind::Add, k.b.programId(1), k.b.binary(OpKind::Mul, k.b.numPrograms(1), k.b.programId(2)))));
  Value* c = k.b.load(counter);
  k.b.store(k.b.addptr(out, c), lin);
  k.b.store(counter, k.b.binary(OpKind::Add, c, k.b.constInt(i32, 1)));
  ScalarRunStats st = k.run();
  EXPECT_EQ(st.programs, 12);
  std::vector<int64_t> got = k.readI("out");
  for (int64_t i = 0; i < 12; ++i) EXPECT_EQ(got[static_cast<size_t>(i)], i);
}

TEST(ScalarControl, RejectsUnverifiedIR) {
  Kernel k;
  k.ptrParam("x", DType::F32);
  k.buffer("x", DType::F32, {1});
  // No return at the end of the body.
  EXPECT_THROW(runScalar(k.fn, k.launch, k.mem), IRError);
}

}  // namespace
}  // namespace tl
