// Compile-time constants converted to an integer dtype follow the run-time `convert` op
// (ConstFold.h floatConstToInt / intConstToInt: truncate, saturate, NaN -> 0; ints wrap), and
// the verifier rejects an integer constant outside its dtype's range (lib/ir/Verifier.cpp).
// Before, `static_cast<int64_t>(std::trunc(f))` was undefined for -inf and 1e30: `other=-inf`
// on an i32 load became 0 (a row max of -5 read 0) and `(1e30).to(i32)` gave 0, not 2147483647.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "FrontendTestUtil.h"
#include "frontend/ConstFold.h"
#include "ir/Builder.h"

namespace tl {
namespace {

using test::findOp;
using test::runFrontend;

TEST(Constants, FloatToIntFollowsTheRunTimeConvert) {
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_EQ(floatConstToInt(1e30, DType::I32), INT32_MAX);
  EXPECT_EQ(floatConstToInt(-1e30, DType::I32), INT32_MIN);
  EXPECT_EQ(floatConstToInt(-inf, DType::I32), INT32_MIN);
  EXPECT_EQ(floatConstToInt(inf, DType::I64), INT64_MAX);
  EXPECT_EQ(floatConstToInt(-inf, DType::I64), INT64_MIN);
  EXPECT_EQ(floatConstToInt(std::nan(""), DType::I32), 0);
  EXPECT_EQ(floatConstToInt(std::nan(""), DType::I1), 1);  // NaN != 0, as at run time
  EXPECT_EQ(floatConstToInt(-2.9, DType::I32), -2);        // toward zero
  EXPECT_EQ(floatConstToInt(2.9, DType::I64), 2);
  EXPECT_EQ(floatConstToInt(0.5, DType::I1), 1);
  EXPECT_EQ(floatConstToInt(1e-50, DType::I1), 0);         // an f32 constant: 1e-50 is 0
  EXPECT_EQ(floatConstToInt(16777217.0, DType::I32), 16777216);  // rounded to f32 first
  EXPECT_EQ(intConstToInt(int64_t(1) << 32 | 5, DType::I32), 5);  // wraps like i64 -> i32
  EXPECT_EQ(intConstToInt(-1, DType::I1), 1);
  EXPECT_EQ(intConstToInt(INT64_MAX, DType::I64), INT64_MAX);
}

// The value of the constant op that produced `v` (looking through splat).
int64_t constValue(const Value* v) {
  while (v->def && v->def->kind == OpKind::Splat) v = v->def->operand(0);
  EXPECT_TRUE(v->def && v->def->kind == OpKind::Constant);
  return v->def->intAttr("value");
}

TEST(Constants, LoadOtherMinusInfOnAnI32BufferIsInt32Min) {
  // A row of negative i32 values with a masked tail: max must be the row's max (-5), so the
  // masked-off elements must hold INT32_MIN (what -inf converts to), not 0.
  auto r = runFrontend(test::kernelWith("N=100, x_ptr=full(N, -5, dtype=i32), out_ptr=zeros(1, dtype=i32, output=True)",
                                        "x_ptr: *i32, out_ptr: *i32, N",
                                        "    offs = arange(0, 128)\n"
                                        "    x = load(x_ptr + offs, mask=offs < N, other=-inf)\n"
                                        "    store(out_ptr, max(x, axis=0))\n"));
  ASSERT_EQ(r->phase, "") << r->errors();
  Op* load = findOp(*r->fn, OpKind::Load);
  ASSERT_NE(load, nullptr);
  ASSERT_EQ(load->numOperands(), 3u);
  EXPECT_EQ(load->operand(2)->type, Type::tile(DType::I32, {128}));
  EXPECT_EQ(constValue(load->operand(2)), INT32_MIN);
}

TEST(Constants, ToI32OfAHugeFloatSaturates) {
  for (auto [text, want] : {std::pair<const char*, int64_t>{"(1e30).to(i32)", INT32_MAX},
                            {"(-1e30).to(i32)", INT32_MIN},
                            {"(-inf).to(i32)", INT32_MIN},
                            {"(1e30).to(i64)", INT64_MAX},
                            {"(2.75).to(i32)", 2},
                            {"(3000000000).to(i32)", -1294967296}}) {
    auto r = runFrontend(test::kernelWith("out_ptr=zeros(1, dtype=i64, output=True)", "out_ptr: *i64",
                                          std::string("    store(out_ptr, ") + text + ")\n"));
    ASSERT_EQ(r->phase, "") << text << "\n" << r->errors();
    Op* store = findOp(*r->fn, OpKind::Store);
    ASSERT_NE(store, nullptr);
    // The converted constant feeds the store (through a convert to i64 where the dtypes differ).
    const Value* v = store->operand(1);
    if (v->def && v->def->kind == OpKind::Convert) v = v->def->operand(0);
    EXPECT_EQ(constValue(v), want) << text;
  }
}

TEST(Constants, StoreOfAWideIntConstantWrapsLikeAConvert) {
  auto r = runFrontend(test::kernelWith("out_ptr=zeros(4, dtype=i32, output=True)", "out_ptr: *i32",
                                        "    store(out_ptr + arange(0, 4), 4294967298)\n"));
  ASSERT_EQ(r->phase, "") << r->errors();
  EXPECT_EQ(constValue(findOp(*r->fn, OpKind::Store)->operand(1)), 2);
}

TEST(Constants, VerifierRejectsIntegerConstantsOutsideTheirRange) {
  Function fn;
  Builder b;
  b.setInsertionPointToEnd(&fn.body);
  EXPECT_THROW(b.constInt(Type::scalar(DType::I32), int64_t(1) << 40), IRError);
  EXPECT_THROW(b.constInt(Type::scalar(DType::I32), int64_t(INT32_MIN) - 1), IRError);
  EXPECT_THROW(b.constInt(Type::tile(DType::I1, {4}), 2), IRError);
  EXPECT_THROW(b.constInt(Type::scalar(DType::I1), -1), IRError);
  EXPECT_NO_THROW(b.constInt(Type::scalar(DType::I32), INT32_MIN));
  EXPECT_NO_THROW(b.constInt(Type::scalar(DType::I32), INT32_MAX));
  EXPECT_NO_THROW(b.constInt(Type::scalar(DType::I1), 1));
  EXPECT_NO_THROW(b.constInt(Type::scalar(DType::I64), INT64_MIN));
}

}  // namespace
}  // namespace tl
