// Checked integer arithmetic for compile-time evaluation (constexpr folding in kernels and the
// @launch expression language). Overflow and division by zero are reported as errors, never UB.
//
// Constants converted to an integer dtype (floatConstToInt, intConstToInt) follow the run-time
// `convert` op, so a constant folded at compile time never differs from the same value converted
// at run time.
//
// `//` and `%` follow C (and Triton's runtime) semantics everywhere in tilelab: the quotient is
// truncated toward zero and the remainder has the sign of the dividend, so a folded constant
// always equals what the same expression computes at runtime.
#pragma once

#include <cmath>
#include <cstdint>
#include <optional>
#include <string>

#include "frontend/AST.h"
#include "ir/PassUtils.h"

namespace tl {

// Folds `a op b` for integers. Comparisons give 0/1. Returns std::nullopt with `err` set on
// overflow or division by zero. BinOp::Div is not handled here (it is a float division).
inline std::optional<int64_t> foldInt(ast::BinOp op, int64_t a, int64_t b, std::string& err) {
  using ast::BinOp;
  int64_t r = 0;
  switch (op) {
    case BinOp::Add:
      if (__builtin_add_overflow(a, b, &r)) break;
      return r;
    case BinOp::Sub:
      if (__builtin_sub_overflow(a, b, &r)) break;
      return r;
    case BinOp::Mul:
      if (__builtin_mul_overflow(a, b, &r)) break;
      return r;
    case BinOp::FloorDiv:
    case BinOp::Mod:
      if (b == 0) {
        err = "integer division by zero";
        return std::nullopt;
      }
      if (a == INT64_MIN && b == -1) break;
      return op == BinOp::FloorDiv ? a / b : a % b;
    case BinOp::BitAnd: return a & b;
    case BinOp::BitOr: return a | b;
    case BinOp::BitXor: return a ^ b;
    case BinOp::Shl:
    case BinOp::Shr:
      if (b < 0) {
        err = "negative shift count " + std::to_string(b);
        return std::nullopt;
      }
      if (op == BinOp::Shr) return b >= 64 ? (a < 0 ? -1 : 0) : a >> b;
      if (a == 0) return 0;
      if (b >= 63 || (a > 0 ? a > (INT64_MAX >> b) : a < (INT64_MIN >> b))) break;
      return static_cast<int64_t>(static_cast<uint64_t>(a) << b);
    case BinOp::Pow: {
      if (b < 0) {
        err = "a negative integer power (" + std::to_string(a) + " ** " + std::to_string(b) + ") is a float: write " +
              std::to_string(a) + ".0 ** " + std::to_string(b);
        return std::nullopt;
      }
      int64_t p = 1;
      for (int64_t k = 0; k < b; ++k) {
        if (__builtin_mul_overflow(p, a, &p)) {
          err = "integer overflow in " + std::to_string(a) + " ** " + std::to_string(b);
          return std::nullopt;
        }
        if (p == 0 || p == 1) break;  // 0 ** b, 1 ** b
        if (p == -1) {
          p = (b % 2 == 0) ? 1 : -1;
          break;
        }
      }
      return p;
    }
    case BinOp::Lt: return a < b;
    case BinOp::Le: return a <= b;
    case BinOp::Gt: return a > b;
    case BinOp::Ge: return a >= b;
    case BinOp::Eq: return a == b;
    case BinOp::Ne: return a != b;
    case BinOp::Div:
      err = "internal: integer '/' is a float division";
      return std::nullopt;
  }
  err = std::string("integer overflow in ") + std::to_string(a) + " " + ast::spelling(op) + " " +
        std::to_string(b);
  return std::nullopt;
}

// ceil(a / b) for b > 0 as (a + b - 1) // b, checked.
inline std::optional<int64_t> foldCdiv(int64_t a, int64_t b, std::string& err) {
  if (b == 0) {
    err = "cdiv by zero";
    return std::nullopt;
  }
  int64_t t = 0;
  if (__builtin_add_overflow(a, b, &t) || __builtin_sub_overflow(t, int64_t(1), &t)) {
    err = "integer overflow in cdiv(" + std::to_string(a) + ", " + std::to_string(b) + ")";
    return std::nullopt;
  }
  return foldInt(ast::BinOp::FloorDiv, t, b, err);
}

// The smallest power of two >= x (1 for x <= 1).
inline std::optional<int64_t> foldNextPow2(int64_t x, std::string& err) {
  int64_t p = 1;
  while (p < x) {
    if (p > (INT64_MAX >> 1)) {
      err = "next_pow2(" + std::to_string(x) + ") does not fit in 64 bits";
      return std::nullopt;
    }
    p <<= 1;
  }
  return p;
}

inline bool fitsI32(int64_t v) { return v >= INT32_MIN && v <= INT32_MAX; }

// A compile-time constant converted to an integer dtype exactly as the run-time `convert` op
// converts the same value (the interpreters' rule, lib/runtime/Memory.h floatToInt; the front end
// cannot call it: lib/runtime links the front end, not the other way round, so this is the
// front end's one copy of the rule):
//   float -> int  the float constant is an f32 (a weak float meets an int as f32), so it is
//                 rounded to f32 first; then truncated toward zero and saturated at the dtype's
//                 range; NaN -> 0. -inf -> INT32_MIN, 1e30 -> INT32_MAX for i32.
//   int -> int    two's complement: i32 keeps the low 32 bits (an i64 constant stored to i32
//                 wraps as a converted i64 value does); i1 is `v != 0` (lib/ir/PassUtils.h wrapInt)
//   -> i1         `v != 0` (NaN is true, as at run time)
// The result is always inside the dtype's range, so the constant op verifies.
inline int64_t floatConstToInt(double v, DType dt) {
  const double f = static_cast<float>(v);
  if (dt == DType::I1) return f != 0 ? 1 : 0;
  if (std::isnan(f)) return 0;
  const bool i32 = dt == DType::I32;
  if (f < (i32 ? -2147483648.0 : -9223372036854775808.0)) return i32 ? INT32_MIN : INT64_MIN;
  if (f >= (i32 ? 2147483648.0 : 9223372036854775808.0)) return i32 ? INT32_MAX : INT64_MAX;
  return static_cast<int64_t>(std::trunc(f));
}
inline int64_t intConstToInt(int64_t v, DType dt) { return wrapInt(dt, v); }

}  // namespace tl
