// fold-constants: each folded value must be exactly what the interpreters compute, and every
// case the interpreters must decide at run time (x/0, INT_MIN/-1, out-of-range conversions,
// f16 arithmetic) must be left alone.
#include <cmath>
#include <limits>

#include "PassTestUtil.h"
#include "ir/Pass.h"

namespace tl {
namespace {

using passtest::Kernel;
using passtest::floatValue;
using passtest::intValue;
using passtest::isConstantOp;
using passtest::sameBits;

constexpr int64_t kI32Min = std::numeric_limits<int32_t>::min();
constexpr int64_t kI32Max = std::numeric_limits<int32_t>::max();
constexpr int64_t kI64Min = std::numeric_limits<int64_t>::min();
constexpr int64_t kI64Max = std::numeric_limits<int64_t>::max();

// Folds `a kind b` on i32 scalars; returns the folded value or nullopt when not folded.
std::optional<int64_t> foldI32(OpKind kind, int64_t a, int64_t b) {
  Kernel k;
  Value* r = k.b.binary(kind, k.i32(a), k.i32(b));
  k.finish();
  foldConstants(k.fn);
  EXPECT_VERIFIES(k.fn);
  if (!isConstantOp(r)) return std::nullopt;
  return intValue(r);
}

std::optional<int64_t> foldI64(OpKind kind, int64_t a, int64_t b) {
  Kernel k;
  Value* r = k.b.binary(kind, k.i64(a), k.i64(b));
  k.finish();
  foldConstants(k.fn);
  EXPECT_VERIFIES(k.fn);
  if (!isConstantOp(r)) return std::nullopt;
  return intValue(r);
}

std::optional<double> foldF32(OpKind kind, double a, double b) {
  Kernel k;
  Value* r = k.b.binary(kind, k.f32(a), k.f32(b));
  k.finish();
  foldConstants(k.fn);
  EXPECT_VERIFIES(k.fn);
  if (!isConstantOp(r)) return std::nullopt;
  return floatValue(r);
}

std::optional<double> foldF32Unary(OpKind kind, double a) {
  Kernel k;
  Value* r = k.b.unary(kind, k.f32(a));
  k.finish();
  foldConstants(k.fn);
  EXPECT_VERIFIES(k.fn);
  if (!isConstantOp(r)) return std::nullopt;
  return floatValue(r);
}

TEST(FoldConstants, I32ArithmeticWraps) {
  EXPECT_EQ(foldI32(OpKind::Add, kI32Max, 1), kI32Min);
  EXPECT_EQ(foldI32(OpKind::Sub, kI32Min, 1), kI32Max);
  EXPECT_EQ(foldI32(OpKind::Mul, 65536, 65536), 0);
  EXPECT_EQ(foldI32(OpKind::Mul, 65537, 65537), 131073);  // 2^32 + 2^17 + 1 wraps to 2^17 + 1
  EXPECT_EQ(foldI32(OpKind::Add, 2, 3), 5);
}

TEST(FoldConstants, I64ArithmeticWraps) {
  EXPECT_EQ(foldI64(OpKind::Add, kI64Max, 1), kI64Min);
  EXPECT_EQ(foldI64(OpKind::Mul, int64_t(1) << 32, int64_t(1) << 32), 0);
  EXPECT_EQ(foldI64(OpKind::Add, int64_t(1) << 40, 1), (int64_t(1) << 40) + 1);  // no i32 wrap
}

TEST(FoldConstants, IntDivisionTruncatesTowardZero) {
  EXPECT_EQ(foldI32(OpKind::Div, -7, 2), -3);
  EXPECT_EQ(foldI32(OpKind::Rem, -7, 2), -1);
  EXPECT_EQ(foldI32(OpKind::Div, 7, -2), -3);
  EXPECT_EQ(foldI32(OpKind::Rem, 7, -2), 1);
  EXPECT_EQ(foldI64(OpKind::Div, -7, 2), -3);
}

TEST(FoldConstants, RunTimeDivisionCasesAreLeftAlone) {
  EXPECT_EQ(foldI32(OpKind::Div, 5, 0), std::nullopt);
  EXPECT_EQ(foldI32(OpKind::Rem, 5, 0), std::nullopt);
  EXPECT_EQ(foldI32(OpKind::Div, kI32Min, -1), std::nullopt);
  EXPECT_EQ(foldI32(OpKind::Rem, kI32Min, -1), std::nullopt);
  EXPECT_EQ(foldI64(OpKind::Div, kI64Min, -1), std::nullopt);
  // INT32_MIN / -1 is fine in i64.
  EXPECT_EQ(foldI64(OpKind::Div, kI32Min, -1), -kI32Min);
}

TEST(FoldConstants, IntMinMaxAndBitwise) {
  EXPECT_EQ(foldI32(OpKind::Maximum, -3, 2), 2);
  EXPECT_EQ(foldI32(OpKind::Minimum, -3, 2), -3);
  EXPECT_EQ(foldI32(OpKind::And, 12, 10), 8);
  EXPECT_EQ(foldI32(OpKind::Or, 12, 10), 14);
  EXPECT_EQ(foldI32(OpKind::Xor, 12, 10), 6);
}

TEST(FoldConstants, F32IsComputedInFloat) {
  float expect = 0.1f + 0.2f;
  auto r = foldF32(OpKind::Add, 0.1, 0.2);
  ASSERT_TRUE(r);
  EXPECT_TRUE(sameBits(*r, double(expect)));
  EXPECT_NE(*r, 0.1 + 0.2);  // not the double sum
  // 1 + 2^-30 is 1 in float (the double sum would not be).
  EXPECT_EQ(foldF32(OpKind::Add, 1.0, std::ldexp(1.0, -30)), 1.0);
  EXPECT_EQ(foldF32(OpKind::Div, 1.0, 3.0), double(1.0f / 3.0f));
  EXPECT_EQ(foldF32(OpKind::Rem, 7.5, 2.0), 1.5);
  EXPECT_EQ(foldF32(OpKind::Div, 1.0, 0.0), std::numeric_limits<double>::infinity());
}

TEST(FoldConstants, F32NaNResultsAndSignedZeroMaxAreNotFolded) {
  EXPECT_EQ(foldF32(OpKind::Div, 0.0, 0.0), std::nullopt);
  EXPECT_EQ(foldF32Unary(OpKind::Log, -1.0), std::nullopt);
  EXPECT_EQ(foldF32(OpKind::Maximum, 0.0, -0.0), std::nullopt);
  EXPECT_EQ(foldF32(OpKind::Maximum, -1.0, 2.5), 2.5);
}

TEST(FoldConstants, F32UnaryUsesFloatFunctions) {
  EXPECT_EQ(foldF32Unary(OpKind::Exp, 1.5), double(expf(1.5f)));
  EXPECT_EQ(foldF32Unary(OpKind::Exp2, 0.3), double(exp2f(0.3f)));
  EXPECT_EQ(foldF32Unary(OpKind::Log, 3.0), double(logf(3.0f)));
  EXPECT_EQ(foldF32Unary(OpKind::Sqrt, 2.0), double(sqrtf(2.0f)));
  EXPECT_EQ(foldF32Unary(OpKind::Rsqrt, 2.0), double(1.0f / sqrtf(2.0f)));
  EXPECT_EQ(foldF32Unary(OpKind::Sigmoid, 0.5), double(1.0f / (1.0f + expf(-0.5f))));
  EXPECT_EQ(foldF32Unary(OpKind::Abs, -2.25), 2.25);
  auto negZero = foldF32Unary(OpKind::Neg, 0.0);
  ASSERT_TRUE(negZero);
  EXPECT_TRUE(std::signbit(*negZero));
}

TEST(FoldConstants, IntUnary) {
  Kernel k;
  Value* neg = k.b.unary(OpKind::Neg, k.i32(kI32Min));
  Value* abs = k.b.unary(OpKind::Abs, k.i32(-5));
  Value* notI = k.b.unary(OpKind::Not, k.i32(0));
  Value* notB = k.b.unary(OpKind::Not, k.i1(true));
  k.finish();
  EXPECT_TRUE(foldConstants(k.fn));
  EXPECT_VERIFIES(k.fn);
  EXPECT_EQ(intValue(neg), kI32Min);  // wraps
  EXPECT_EQ(intValue(abs), 5);
  EXPECT_EQ(intValue(notI), -1);
  EXPECT_EQ(intValue(notB), 0);
}

TEST(FoldConstants, F16ArithmeticIsNotFolded) {
  Kernel k;
  Value* a = k.b.constFloat(Type::scalar(DType::F16), 0.1);
  Value* sum = k.b.binary(OpKind::Add, a, a);
  Value* toF16 = k.b.convert(k.f32(0.1), DType::F16);
  Value* fromF16 = k.b.convert(a, DType::F32);
  k.finish();
  EXPECT_FALSE(foldConstants(k.fn));
  EXPECT_FALSE(isConstantOp(sum));
  EXPECT_FALSE(isConstantOp(toF16));
  EXPECT_FALSE(isConstantOp(fromF16));
}

TEST(FoldConstants, Comparisons) {
  Kernel k;
  Value* lt = k.b.cmp("lt", k.i32(-1), k.i32(1));
  Value* ge = k.b.cmp("ge", k.i32(-1), k.i32(1));
  Value* zeros = k.b.cmp("eq", k.f32(-0.0), k.f32(0.0));
  Value* fne = k.b.cmp("ne", k.f32(0.1), k.f32(0.1000000001));  // equal as f32
  k.finish();
  foldConstants(k.fn);
  EXPECT_VERIFIES(k.fn);
  EXPECT_EQ(intValue(lt), 1);
  EXPECT_EQ(intValue(ge), 0);
  EXPECT_EQ(intValue(zeros), 1);
  EXPECT_EQ(intValue(fne), 0);
  EXPECT_EQ(lt->type, Type::scalar(DType::I1));
}

TEST(FoldConstants, Conversions) {
  Kernel k;
  Value* trunc = k.b.convert(k.f32(-3.7), DType::I32);
  Value* big = k.b.convert(k.f32(3e9), DType::I32);
  Value* bigI64 = k.b.convert(k.f32(3e9), DType::I64);
  Value* toBool = k.b.convert(k.i32(5), DType::I1);
  Value* narrow = k.b.convert(k.i64((int64_t(1) << 32) + 5), DType::I32);
  Value* toFloat = k.b.convert(k.i32(16777217), DType::F32);
  Value* fromBool = k.b.convert(k.i1(true), DType::F32);
  Value* signExt = k.b.convert(k.i32(-2), DType::I64);
  k.finish();
  foldConstants(k.fn);
  EXPECT_VERIFIES(k.fn);
  EXPECT_EQ(intValue(trunc), -3);
  EXPECT_FALSE(isConstantOp(big));  // out of i32 range: the run time decides
  EXPECT_EQ(intValue(bigI64), 3000000000);
  EXPECT_EQ(intValue(toBool), 1);
  EXPECT_EQ(intValue(narrow), 5);
  EXPECT_EQ(floatValue(toFloat), 16777216.0);  // rounded to the nearest f32
  EXPECT_EQ(floatValue(fromBool), 1.0);
  EXPECT_EQ(intValue(signExt), -2);
}

TEST(FoldConstants, ShapeOpsOfConstantsBecomeTileConstants) {
  Kernel k;
  Value* s = k.b.splat(k.f32(2.5), {128});
  Value* e = k.b.expandDims(s, 0);
  Value* br = k.b.broadcast(e, {64, 128});
  Value* sum = k.b.binary(OpKind::Mul, br, br);
  k.finish();
  EXPECT_TRUE(foldConstants(k.fn));
  EXPECT_VERIFIES(k.fn);
  for (Value* v : {s, e, br, sum}) EXPECT_TRUE(isConstantOp(v));
  EXPECT_EQ(br->type, Type::tile(DType::F32, {64, 128}));
  EXPECT_EQ(floatValue(sum), 6.25);
}

TEST(FoldConstants, SelectWithConstantCondition) {
  Kernel k;
  Value* out = k.ptrParam("out", DType::I32);
  Value* x = k.b.programId(0);
  Value* y = k.b.numPrograms(0);
  k.keep(out, k.b.select(k.i1(true), x, y));
  k.keep(out, k.b.select(k.i1(false), x, y));
  k.finish();
  EXPECT_TRUE(foldConstants(k.fn));
  EXPECT_VERIFIES(k.fn);
  EXPECT_EQ(passtest::countOps(k.fn, OpKind::Select), 0u);
  std::vector<Value*> stored;
  walk(k.fn.body, [&](Op& op) {
    if (op.kind == OpKind::Store) stored.push_back(op.operand(1));
  });
  ASSERT_EQ(stored.size(), 2u);
  EXPECT_EQ(stored[0], x);
  EXPECT_EQ(stored[1], y);
}

TEST(FoldConstants, ReductionsOfConstantTiles) {
  Kernel k;
  Value* ones = k.b.splat(k.i32(3), {8, 16});
  Value* sum = k.b.reduce("sum", ones, 1);
  Value* mx = k.b.reduce("max", k.b.splat(k.f32(1.5), {32}), 0);
  Value* fsum = k.b.reduce("sum", k.b.splat(k.f32(0.1), {32}), 0);
  Value* am = k.b.argmax(ones, 0);
  k.finish();
  foldConstants(k.fn);
  EXPECT_VERIFIES(k.fn);
  EXPECT_EQ(intValue(sum), 48);
  EXPECT_EQ(sum->type, Type::tile(DType::I32, {8}));
  EXPECT_EQ(floatValue(mx), 1.5);
  EXPECT_FALSE(isConstantOp(fsum));  // float sums depend on the order of the additions
  EXPECT_EQ(intValue(am), 0);
}

TEST(FoldConstants, ChainsFoldInOneRunAndRuntimeValuesStop) {
  Kernel k;
  Value* out = k.ptrParam("out", DType::I32);
  Value* c = k.b.binary(OpKind::Mul, k.b.binary(OpKind::Add, k.i32(2), k.i32(3)), k.i32(4));
  Value* pid = k.b.programId(0);
  Value* r = k.b.binary(OpKind::Add, pid, c);
  k.keep(out, r);
  k.finish();
  EXPECT_TRUE(foldConstants(k.fn));
  EXPECT_VERIFIES(k.fn);
  EXPECT_EQ(intValue(c), 20);
  EXPECT_FALSE(isConstantOp(r));
  EXPECT_FALSE(foldConstants(k.fn));  // nothing left
}

TEST(FoldConstants, FoldsInsideLoopBodies) {
  Kernel k;
  Value* out = k.ptrParam("out", DType::I32);
  Op* loop = k.b.forOp(k.i32(0), k.i32(4), k.i32(1), {});
  Builder body(&loop->region(0));
  Value* v = body.binary(OpKind::Add, body.constInt(Type::scalar(DType::I32), 40), body.constInt(Type::scalar(DType::I32), 2));
  body.store(out, v);
  body.yield({});
  k.finish();
  EXPECT_TRUE(foldConstants(k.fn));
  EXPECT_VERIFIES(k.fn);
  EXPECT_EQ(intValue(v), 42);
}

}  // namespace
}  // namespace tl

namespace tl::passtest {

// Thread IR: `pack` of different constants is not a splat and must stay; `permute` of a splat
// constant is the same splat.
TEST(FoldConstants, ThreadPackOfDifferentConstantsIsNotFolded) {
  Kernel k;
  k.fn.level = IRLevel::Thread;
  k.fn.numWarps = 1;
  Value* out = k.ptrParam("out", DType::I32);
  Value* packed = k.b.create(OpKind::Pack, {k.i32(1), k.i32(2)}, {Type::tile(DType::I32, {2})})->result();
  Value* perm = k.b.create(OpKind::Permute, {k.b.constInt(Type::tile(DType::I32, {2}), 7)},
                           {Type::tile(DType::I32, {2})}, {{"indices", std::vector<int64_t>{1, 0}}})
                    ->result();
  Value* sum = k.b.binary(OpKind::Add, packed, perm);
  Value* ptrs = k.b.splat(out, {2});
  k.b.create(OpKind::StGlobal, {ptrs, sum}, {}, {{"vec", int64_t(1)}});
  k.finish();
  ASSERT_EQ(verifyFunction(k.fn), "");
  foldConstants(k.fn);
  ASSERT_EQ(verifyFunction(k.fn), "");
  EXPECT_EQ(countOps(k.fn, OpKind::Pack), 1u);
  EXPECT_EQ(countOps(k.fn, OpKind::Permute), 0u);
}

}  // namespace tl::passtest
