// Float and integer rules every engine shares where IEEE and C++ leave a choice: maximum/minimum propagate
// NaN (as PTX max.NaN.f32 does) and order the zeros (+0 beats -0 for maximum, -0 beats +0 for
// minimum). tl-scalar and the executor call these; tl-block uses branch-free forms of the same
// rules (stages/block/TileKernels.cpp) and is tested bit-for-bit against tl-scalar.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>

#include "ir/IR.h"

namespace tl {

inline float floatMaximum(float a, float b) {
  if (std::isnan(a)) return a;
  if (std::isnan(b)) return b;
  if (a == b) return std::signbit(a) ? b : a;  // +0 beats -0
  return a > b ? a : b;
}

inline float floatMinimum(float a, float b) {
  if (std::isnan(a)) return a;
  if (std::isnan(b)) return b;
  if (a == b) return std::signbit(a) ? a : b;  // -0 beats +0
  return a < b ? a : b;
}

// f32 -> tf32 (8-bit exponent, 10-bit mantissa, kept in an f32) by dropping the low 13
// mantissa bits: what a dot with precision "tf32" does to each input in every engine, before
// products that are then exact in f32. It is how the tensor core reads an f32 word as tf32
// (mma.sync from registers, wgmma from shared memory, where a cp.async or TMA copy cannot
// round on the way), and what Triton's tf32 dots give (no cvt.rna: Triton issue #4574). NaN and
// infinities keep their class; values move towards zero by less than one tf32 ulp.
inline float truncToTf32(float v) {
  uint32_t bits;
  std::memcpy(&bits, &v, sizeof bits);
  if ((bits & 0x7f800000u) == 0x7f800000u) return v;  // inf, NaN (a NaN keeps its payload)
  bits &= ~0x1fffu;
  std::memcpy(&v, &bits, sizeof v);
  return v;
}

// The unary float ops, computed in float precision with libm's float functions (expf, logf,
// ...): what tl-scalar and the executor compute for every element. (The GPU uses its approximate
// instructions instead: docs/gpu.md lists the difference.) Throws std::logic_error for a kind
// that is not a unary float op.
inline float floatUnary(OpKind kind, float v) {
  switch (kind) {
    case OpKind::Neg: return -v;
    case OpKind::Abs: return std::fabs(v);
    case OpKind::Exp: return expf(v);
    case OpKind::Exp2: return exp2f(v);
    case OpKind::Log: return logf(v);
    case OpKind::Sqrt: return sqrtf(v);
    case OpKind::Rsqrt: return 1.0f / sqrtf(v);
    case OpKind::Sigmoid: return 1.0f / (1.0f + expf(-v));
    case OpKind::Log2: return log2f(v);
    case OpKind::Cos: return cosf(v);
    case OpKind::Sin: return sinf(v);
    case OpKind::Floor: return floorf(v);
    case OpKind::Ceil: return ceilf(v);
    case OpKind::Erf: return erff(v);
    case OpKind::Asin: return asinf(v);
    case OpKind::Acos: return acosf(v);
    case OpKind::Atan: return atanf(v);
    case OpKind::Tan: return tanf(v);
    case OpKind::Sinh: return sinhf(v);
    case OpKind::Cosh: return coshf(v);
    case OpKind::Tanh: return tanhf(v);
    case OpKind::Log10: return log10f(v);
    case OpKind::Log1p: return log1pf(v);
    case OpKind::Expm1: return expm1f(v);
    case OpKind::Exp10: return exp10f(v);  // glibc's (GNU extension)
    case OpKind::Cbrt: return cbrtf(v);
    case OpKind::Rcp: return 1.0f / v;
    case OpKind::Trunc: return truncf(v);
    case OpKind::Round: return roundf(v);       // halves away from zero
    case OpKind::Rint: return nearbyintf(v);    // the default rounding mode: halves to even
    default: throw std::logic_error(std::string("floatUnary: ") + mnemonic(kind) + " is not a unary float op");
  }
}

// The binary float ops (add ... minimum) in float precision: what tl-scalar and the executor
// compute for every element. Throws std::logic_error for a kind that is not one of them.
inline float floatBinary(OpKind kind, float x, float y) {
  switch (kind) {
    case OpKind::Add: return x + y;
    case OpKind::Sub: return x - y;
    case OpKind::Mul: return x * y;
    case OpKind::Div: return x / y;
    case OpKind::Rem: return fmodf(x, y);
    case OpKind::Maximum: return floatMaximum(x, y);
    case OpKind::Minimum: return floatMinimum(x, y);
    case OpKind::Atan2: return atan2f(x, y);
    case OpKind::Pow: return powf(x, y);
    case OpKind::Hypot: return hypotf(x, y);
    default: throw std::logic_error(std::string("floatBinary: ") + mnemonic(kind) + " is not a binary float op");
  }
}

// fma(a, b, c) = a*b + c rounded once (fmaf); f16/bf16 callers round the f32 result to their
// dtype afterwards (the exact product of two f16 values fits f32's significand, so that is one
// rounding of a*b + c to f32, then one to the dtype).
inline float floatFma(float a, float b, float c) { return fmaf(a, b, c); }

// The integer ops that C++ leaves undefined at the edges, defined once for every engine (i32
// values are passed sign-extended in int64_t and the result is wrapped to i32 by the caller):
//   shl(a, b): a << b; b outside [0, bits) (negative included) gives 0 (PTX shl clamps the
//              amount to the width);
//   shr(a, b): a >> b, arithmetic (sign-filling); b outside [0, bits) gives 0 or -1 (the sign);
//   umulhi(a, b): the high `bits` bits of the unsigned 2*bits-bit product of a's and b's bits.
inline int64_t intShl(DType d, int64_t a, int64_t b) {
  const int bits = d == DType::I32 ? 32 : 64;
  if (b < 0 || b >= bits) return 0;
  const uint64_t r = static_cast<uint64_t>(a) << b;
  return d == DType::I32 ? static_cast<int32_t>(static_cast<uint32_t>(r)) : static_cast<int64_t>(r);
}
inline int64_t intShr(DType d, int64_t a, int64_t b) {
  const int bits = d == DType::I32 ? 32 : 64;
  if (b < 0 || b >= bits) return a < 0 ? -1 : 0;
  return a >> b;  // C++20: arithmetic on signed values
}
inline int64_t intUmulhi(DType d, int64_t a, int64_t b) {
  if (d == DType::I32) {
    const uint64_t p = uint64_t(static_cast<uint32_t>(a)) * uint64_t(static_cast<uint32_t>(b));
    return static_cast<int32_t>(static_cast<uint32_t>(p >> 32));
  }
  const unsigned __int128 p = static_cast<unsigned __int128>(static_cast<uint64_t>(a)) * static_cast<uint64_t>(b);
  return static_cast<int64_t>(static_cast<uint64_t>(p >> 64));
}

}  // namespace tl
