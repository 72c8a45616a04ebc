// Helpers for the pass tests: a kernel under construction with a Builder, and op counting.
#pragma once

#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "ir/Builder.h"
#include "ir/IR.h"
#include "ir/PassUtils.h"
#include "ir/Verifier.h"

namespace tl::passtest {

// A function being built: add parameters, build ops with `b`, then finish() adds the return.
// Not movable (ops point at fn.body), so create it as a local.
struct Kernel {
  Function fn;
  Builder b;

  Kernel() {
    fn.name = "k";
    b.setInsertionPointToEnd(&fn.body);
  }
  Kernel(const Kernel&) = delete;

  Value* ptrParam(const std::string& name, DType d = DType::F32) {
    fn.params.push_back({name, Param::Kind::Pointer, {}});
    return fn.body.addArg(Type::ptr(d), name);
  }
  Value* scalarParam(const std::string& name, DType d = DType::I32) {
    fn.params.push_back({name, Param::Kind::Scalar, {}});
    return fn.body.addArg(Type::scalar(d), name);
  }
  // Scalar constants.
  Value* i32(int64_t v) { return b.constInt(Type::scalar(DType::I32), v); }
  Value* i64(int64_t v) { return b.constInt(Type::scalar(DType::I64), v); }
  Value* i1(bool v) { return b.constInt(Type::scalar(DType::I1), v); }
  Value* f32(double v) { return b.constFloat(Type::scalar(DType::F32), v); }
  // Stores `v` (a scalar of `p`'s dtype) through `p`, so that `v` stays live under DCE.
  void keep(Value* p, Value* v) { b.store(p, v); }
  void finish() { b.ret(); }
};

inline size_t countOps(const Function& fn, OpKind kind) {
  size_t n = 0;
  walk(fn.body, [&](Op& op) { n += op.kind == kind; });
  return n;
}

inline size_t countAllOps(const Function& fn) {
  size_t n = 0;
  walk(fn.body, [&](Op&) { ++n; });
  return n;
}

// The op that defines `v` must be a constant: its int value (wrapped to the dtype).
inline int64_t intValue(const Value* v) {
  auto c = constantOf(v);
  EXPECT_TRUE(c.has_value()) << "not a constant";
  return c ? c->i : 0;
}

inline double floatValue(const Value* v) {
  auto c = constantOf(v);
  EXPECT_TRUE(c.has_value()) << "not a constant";
  return c ? c->f : 0.0;
}

inline bool sameBits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

inline bool isConstantOp(const Value* v) { return v->def && v->def->kind == OpKind::Constant; }

#define EXPECT_VERIFIES(fn) EXPECT_EQ(::tl::verifyFunction(fn), "")

}  // namespace tl::passtest
