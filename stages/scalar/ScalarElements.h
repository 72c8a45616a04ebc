// Private to tl-scalar (stages/scalar/ScalarInterpreter.cpp): its boxed values and the element
// rules of the elementwise ops — one element at a time, exactly as ScalarInterpreter.cpp's header
// comment defines them — and the row-major index arithmetic of its tiles.
//
// Expects: elements of the op's dtype (the verifier's rules). Guarantees: tl-scalar's semantics
// (every later stage is checked against them); nothing here throws except std::logic_error for
// an op kind that is not one of the family asked for.
// Include after ScalarInterpreter.cpp's fp-contract pragma: no a*b + c here may become an fma.
#pragma once

#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "ir/IR.h"
#include "runtime/FloatOps.h"
#include "runtime/Memory.h"

namespace tl::scalar {

// ---------------------------------------------------------------------------------------------
// Boxed values.

// One element: an integer (i1 as 0/1), a float (always exactly representable in its dtype,
// stored in a double), or a pointer (an address in Memory, pointing to `dtype`).
struct Scalar {
  DType dtype = DType::I32;
  bool isPtr = false;
  int64_t i = 0;  // ints, i1, pointer addresses
  double f = 0;   // floats
};

// A runtime value: its type and its elements, row-major (one element for a scalar).
struct Tile {
  Type type;
  std::vector<Scalar> elems;
};

// Wraps v to the integer dtype d (two's complement; i1 keeps the low bit).
inline int64_t wrapInt(int64_t v, DType d) {
  switch (d) {
    case DType::I1: return v & 1;
    case DType::I32: return static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint64_t>(v)));
    default: return v;
  }
}

inline Scalar intScalar(DType d, int64_t v) {
  Scalar s;
  s.dtype = d;
  s.i = wrapInt(v, d);
  return s;
}

inline Scalar floatScalar(DType d, double v) {
  Scalar s;
  s.dtype = d;
  s.f = roundToDType(v, d);
  return s;
}

inline Scalar ptrScalar(DType pointee, uint64_t addr) {
  Scalar s;
  s.dtype = pointee;
  s.isPtr = true;
  s.i = static_cast<int64_t>(addr);
  return s;
}

inline Scalar zeroOf(DType d) { return isFloat(d) ? floatScalar(d, 0) : intScalar(d, 0); }

// `convert` of one element (the rules in the header comment).
inline Scalar convertScalar(const Scalar& x, DType to) {
  if (x.dtype == to) return x;
  if (to == DType::I1) return intScalar(DType::I1, isFloat(x.dtype) ? (x.f != 0) : (x.i != 0));
  if (isInt(to)) {
    if (isInt(x.dtype)) return intScalar(to, x.i);
    return intScalar(to, floatToInt(x.f, to));  // truncate, saturate, NaN -> 0
  }
  if (isInt(x.dtype)) return floatScalar(to, static_cast<float>(x.i));  // round to f32 first
  return floatScalar(to, x.f);
}

// ---------------------------------------------------------------------------------------------
// Elementwise arithmetic on one element.

// Unary ops; `x` has the op's dtype.
inline Scalar unaryScalar(OpKind kind, const Scalar& x) {
  DType d = x.dtype;
  if (isInt(d)) {
    uint64_t u = static_cast<uint64_t>(x.i);
    switch (kind) {
      case OpKind::Neg: return intScalar(d, static_cast<int64_t>(0 - u));
      case OpKind::Not: return intScalar(d, static_cast<int64_t>(~u));
      case OpKind::Abs: return intScalar(d, x.i < 0 ? static_cast<int64_t>(0 - u) : x.i);
      default: break;
    }
    throw std::logic_error(std::string("unaryScalar: ") + mnemonic(kind) + " on an integer");
  }
  return floatScalar(d, floatUnary(kind, static_cast<float>(x.f)));
}

// Binary ops; a and b have the op's dtype. Sets `divByZero` instead of dividing by zero.
inline Scalar binaryScalar(OpKind kind, const Scalar& a, const Scalar& b, bool& divByZero) {
  DType d = a.dtype;
  if (isInt(d)) {
    uint64_t ua = static_cast<uint64_t>(a.i), ub = static_cast<uint64_t>(b.i);
    const int64_t minOfType = d == DType::I32 ? std::numeric_limits<int32_t>::min()
                                              : std::numeric_limits<int64_t>::min();
    switch (kind) {
      case OpKind::Add: return intScalar(d, static_cast<int64_t>(ua + ub));
      case OpKind::Sub: return intScalar(d, static_cast<int64_t>(ua - ub));
      case OpKind::Mul: return intScalar(d, static_cast<int64_t>(ua * ub));
      case OpKind::Div:
        if (b.i == 0) { divByZero = true; return zeroOf(d); }
        if (a.i == minOfType && b.i == -1) return intScalar(d, minOfType);  // wraps
        return intScalar(d, a.i / b.i);
      case OpKind::Rem:
        if (b.i == 0) { divByZero = true; return zeroOf(d); }
        if (b.i == -1) return intScalar(d, 0);
        return intScalar(d, a.i % b.i);
      case OpKind::Maximum: return intScalar(d, a.i > b.i ? a.i : b.i);
      case OpKind::Minimum: return intScalar(d, a.i < b.i ? a.i : b.i);
      case OpKind::And: return intScalar(d, a.i & b.i);
      case OpKind::Or: return intScalar(d, a.i | b.i);
      case OpKind::Xor: return intScalar(d, a.i ^ b.i);
      case OpKind::Shl: return intScalar(d, intShl(d, a.i, b.i));
      case OpKind::Shr: return intScalar(d, intShr(d, a.i, b.i));
      case OpKind::Umulhi: return intScalar(d, intUmulhi(d, a.i, b.i));
      default: break;
    }
    throw std::logic_error(std::string("binaryScalar: ") + mnemonic(kind) + " on integers");
  }
  return floatScalar(d, floatBinary(kind, static_cast<float>(a.f), static_cast<float>(b.f)));
}

inline bool compareScalar(const std::string& pred, const Scalar& a, const Scalar& b) {
  if (isFloat(a.dtype)) {
    double x = a.f, y = b.f;
    if (pred == "lt") return x < y;
    if (pred == "le") return x <= y;
    if (pred == "gt") return x > y;
    if (pred == "ge") return x >= y;
    if (pred == "eq") return x == y;
    return x != y;  // "ne"
  }
  int64_t x = a.i, y = b.i;
  if (pred == "lt") return x < y;
  if (pred == "le") return x <= y;
  if (pred == "gt") return x > y;
  if (pred == "ge") return x >= y;
  if (pred == "eq") return x == y;
  return x != y;
}

// ---------------------------------------------------------------------------------------------
// Index arithmetic for row-major tiles of rank <= 2 (written for any rank).

inline std::vector<int64_t> unflatten(int64_t e, const Shape& shape) {
  std::vector<int64_t> idx(shape.size());
  for (size_t k = shape.size(); k-- > 0;) {
    idx[k] = e % shape[k];
    e /= shape[k];
  }
  return idx;
}

inline int64_t flatten(const std::vector<int64_t>& idx, const Shape& shape) {
  int64_t e = 0;
  for (size_t k = 0; k < shape.size(); ++k) e = e * shape[k] + idx[k];
  return e;
}

inline std::string hex(uint64_t v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%" PRIx64, v);
  return buf;
}

}  // namespace tl::scalar
