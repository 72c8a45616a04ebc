// Float rules every engine shares where IEEE and C++ leave a choice: maximum/minimum propagate
// NaN (as PTX max.NaN.f32 does) and order the zeros (+0 beats -0 for maximum, -0 beats +0 for
// minimum). tl-scalar and the executor call these; tl-block uses branch-free forms of the same
// rules (stages/block/TileKernels.cpp) and is tested bit-for-bit against tl-scalar.
#pragma once

#include <cmath>

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

}  // namespace tl
