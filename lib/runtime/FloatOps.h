// Float rules every engine shares where IEEE and C++ leave a choice: maximum/minimum propagate
// NaN (as PTX max.NaN.f32 does) and order the zeros (+0 beats -0 for maximum, -0 beats +0 for
// minimum). tl-scalar and the executor call these; tl-block uses branch-free forms of the same
// rules (stages/block/TileKernels.cpp) and is tested bit-for-bit against tl-scalar.
#pragma once

#include <cmath>
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
    default: throw std::logic_error(std::string("floatBinary: ") + mnemonic(kind) + " is not a binary float op");
  }
}

}  // namespace tl
