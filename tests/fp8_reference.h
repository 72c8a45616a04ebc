// An independent model of the two fp8 formats, for the tests of runtime/Fp8.h and of every
// engine's fp8 conversions: written from the format definitions (OCP 8-bit floating point
// specification, E4M3 "fn" and E5M2), sharing no code with lib/runtime/Fp8.h.
//
//   decode: the value of a code, by the textbook formula in double:
//           (-1)^s * 2^(e - bias) * (1 + m / 2^M), or (-1)^s * 2^(1 - bias) * (m / 2^M) for
//           e = 0; E4M3: S.1111.111 is NaN, no infinities; E5M2: e = 31 is inf (m = 0) or NaN.
//   encode: by search, not by bit manipulation: the finite code nearest to |x| (every finite
//           code is a candidate, so a value beyond the largest finite one, or an infinity, gets
//           the largest: PTX's .satfinite), ties to the code with an even mantissa (its lowest
//           bit 0), the sign of x on the result (so -0 and tiny negatives give 0x80), NaN ->
//           0x7f (what runtime/Fp8.h promises; PTX promises only "a NaN").
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>

namespace tl::fp8ref {

struct Format {
  int expBits, manBits, bias;
  bool ieee;  // E5M2: the all-ones exponent holds inf and NaN
};
inline constexpr Format kE4M3{4, 3, 7, false};
inline constexpr Format kE5M2{5, 2, 15, true};

inline double decode(Format f, uint8_t code) {
  const int s = code >> 7;
  const int e = (code >> f.manBits) & ((1 << f.expBits) - 1);
  const int m = code & ((1 << f.manBits) - 1);
  const int eMax = (1 << f.expBits) - 1;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  double v;
  if (!f.ieee && e == eMax && m == (1 << f.manBits) - 1) v = nan;
  else if (f.ieee && e == eMax) v = m == 0 ? std::numeric_limits<double>::infinity() : nan;
  else if (e == 0) v = std::pow(2.0, 1 - f.bias) * (m / std::pow(2.0, f.manBits));
  else v = std::pow(2.0, e - f.bias) * (1.0 + m / std::pow(2.0, f.manBits));
  return s ? -v : v;
}

inline bool isFiniteCode(Format f, uint8_t code) { return std::isfinite(decode(f, code)); }

inline uint8_t encode(Format f, double x) {
  if (std::isnan(x)) return 0x7f;
  const double a = std::fabs(x);
  const uint8_t sign = std::signbit(x) ? 0x80 : 0;
  // At or beyond the largest finite value (an infinity too) the nearest finite value is the
  // largest (searching would lose it: |v - 1e36| is 1e36 for every v in double).
  int largest = 0;
  for (int c = 0; c < 0x80; ++c)
    if (isFiniteCode(f, static_cast<uint8_t>(c))) largest = c;
  if (a >= decode(f, static_cast<uint8_t>(largest))) return static_cast<uint8_t>(largest | sign);
  int best = 0;
  double bestErr = std::numeric_limits<double>::infinity();
  for (int c = 0; c < 0x80; ++c) {
    if (!isFiniteCode(f, static_cast<uint8_t>(c))) continue;
    const double v = decode(f, static_cast<uint8_t>(c));
    const double err = std::fabs(v - a);  // exact for the two neighbours of a, where the choice is made
    if (err < bestErr || (err == bestErr && (c & 1) == 0)) {
      best = c;
      bestErr = err;
    }
  }
  return static_cast<uint8_t>(best | sign);
}

}  // namespace tl::fp8ref
