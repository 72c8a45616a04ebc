// Helpers for tl-block's tests: build small kernels with tl::Builder and run them on a Memory.
//
//   KernelBuilder k;
//   Value* x = k.ptrParam("x", DType::F32);
//   Value* v = k.load1D(x, 8);                      // x[0..8)
//   k.store1D(k.ptrParam("out", DType::F32), k.b.unary(OpKind::Exp, v));
//   Function& fn = k.finish();                       // adds `return`, verifies
#pragma once

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "ir/Builder.h"
#include "ir/IR.h"
#include "ir/Verifier.h"
#include "runtime/Memory.h"

namespace tl::blocktest {

struct KernelBuilder {
  Function fn;
  Builder b;

  KernelBuilder() : b(&fn.body) {
    fn.name = "k";
    b.setLoc(Loc{1, 1});
  }

  Value* ptrParam(const std::string& name, DType d) {
    fn.params.push_back(Param{name, Param::Kind::Pointer, Loc{1, 1}});
    Value* v = fn.body.addArg(Type::ptr(d), name);
    b.setInsertionPointToEnd(&fn.body);
    return v;
  }
  Value* scalarParam(const std::string& name, DType d) {
    fn.params.push_back(Param{name, Param::Kind::Scalar, Loc{1, 1}});
    Value* v = fn.body.addArg(Type::scalar(d), name);
    b.setInsertionPointToEnd(&fn.body);
    return v;
  }

  Value* i32(int64_t v) { return b.constInt(Type::scalar(DType::I32), v); }

  // <n x ptr>: ptr + [start, start + n)
  Value* ptrs1D(Value* ptr, int64_t n, int64_t start = 0) {
    return b.addptr(b.splat(ptr, {n}), b.arange(start, start + n));
  }
  // <M x N x ptr>: ptr + i * N + j
  Value* ptrs2D(Value* ptr, int64_t M, int64_t N) {
    Value* rows = b.expandDims(b.arange(0, M), 1);                           // <Mx1>
    rows = b.binary(OpKind::Mul, rows, b.constInt(Type::tile(DType::I32, {M, 1}), N));
    Value* cols = b.expandDims(b.arange(0, N), 0);                           // <1xN>
    Value* off = b.binary(OpKind::Add, b.broadcast(rows, {M, N}), b.broadcast(cols, {M, N}));
    return b.addptr(b.splat(ptr, {M, N}), off);
  }
  Value* load1D(Value* ptr, int64_t n) { return b.load(ptrs1D(ptr, n)); }
  Value* load2D(Value* ptr, int64_t M, int64_t N) { return b.load(ptrs2D(ptr, M, N)); }
  void store1D(Value* ptr, Value* v) { b.store(ptrs1D(ptr, v->type.shape[0]), v); }
  void store2D(Value* ptr, Value* v) { b.store(ptrs2D(ptr, v->type.shape[0], v->type.shape[1]), v); }

  Function& finish() {
    b.setInsertionPointToEnd(&fn.body);
    b.ret();
    std::string errors = verifyFunction(fn);
    EXPECT_EQ(errors, "");
    return fn;
  }
};

// Buffer contents as doubles / int64 (f16/bf16 decoded).
inline std::vector<double> readF(const Memory& m, const std::string& name) {
  const Buffer* b = m.find(name);
  std::vector<double> v;
  for (int64_t i = 0; b && i < b->numel(); ++i) v.push_back(b->getF(i));
  return v;
}
inline std::vector<int64_t> readI(const Memory& m, const std::string& name) {
  const Buffer* b = m.find(name);
  std::vector<int64_t> v;
  for (int64_t i = 0; b && i < b->numel(); ++i) v.push_back(b->getI(i));
  return v;
}

inline Buffer& addF(Memory& m, const std::string& name, DType d, Shape shape, const std::vector<double>& values) {
  Buffer& b = m.add(name, d, std::move(shape), false);
  for (size_t i = 0; i < values.size(); ++i) b.setF(static_cast<int64_t>(i), values[i]);
  return b;
}
inline Buffer& addI(Memory& m, const std::string& name, DType d, Shape shape, const std::vector<int64_t>& values) {
  Buffer& b = m.add(name, d, std::move(shape), false);
  for (size_t i = 0; i < values.size(); ++i) b.setI(static_cast<int64_t>(i), values[i]);
  return b;
}

// Same bits, or both NaN.
inline bool sameFloat(float a, float b) {
  if (a != a && b != b) return true;
  uint32_t x, y;
  std::memcpy(&x, &a, 4);
  std::memcpy(&y, &b, 4);
  return x == y;
}

}  // namespace tl::blocktest
