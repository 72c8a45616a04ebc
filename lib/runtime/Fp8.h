// The two fp8 formats tilelab stores (Triton's tl.float8e4nv and tl.float8e5), and the one pair
// of conversions every engine uses: tl-scalar, tl-block, the thread executor, the fills and the
// launch arguments all call these, and tl-ptx emits the PTX instructions they model.
//
//   f8e4m3 (OCP E4M3 "fn", NVIDIA's e4m3): 1 sign, 4 exponent bits (bias 7), 3 mantissa bits.
//          No infinities; S.1111.111 (0x7f/0xff) is NaN; the largest finite value is
//          S.1111.110 = 1.75 * 2^8 = 448; subnormals are m * 2^-9 (m = 1..7).
//   f8e5m2 (OCP E5M2): 1 sign, 5 exponent bits (bias 15), 2 mantissa bits, IEEE-like:
//          S.11111.00 is infinity, S.11111.{01,10,11} NaN; largest finite 1.75 * 2^15 = 57344;
//          subnormals m * 2^-16. (It is the top byte of an IEEE binary16.)
//
// Encoding (f32 -> fp8) is PTX's `cvt.rn.satfinite.{e4m3,e5m2}x2.f32`, which is what Triton's
// `.to(tl.float8e4nv)` / `.to(tl.float8e5)` compile to on sm_89+:
//   - round to nearest, ties to even, subnormals included (values below half the smallest
//     subnormal become a zero of the input's sign);
//   - .satfinite: a finite value beyond the largest finite one, and an infinity, becomes the
//     largest finite value of the input's sign (+-448, +-57344): so e5m2 never produces inf;
//   - NaN becomes NaN: the code 0x7f in both formats (the sign and payload are not kept; PTX only
//     promises "a NaN", and every engine compares NaN with NaN as equal).
// Other sources (f16, bf16, integers) convert to f32 first: f16 and bf16 are exact in f32, so
// f16 -> fp8 is one rounding, as PTX's cvt.rn.satfinite.e4m3x2.f16x2 does it.
// Decoding (fp8 -> f32) is exact: every fp8 value is an f32 (and an f16) value.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

#include "ir/Type.h"

namespace tl {

namespace fp8detail {

// One fp8 format: `man` mantissa bits, exponent bias `bias`, the largest finite code (no sign).
struct Format {
  int man;
  int bias;
  uint8_t maxCode;
  bool ieeeInf;  // e5m2: the all-ones exponent field holds inf and NaN
};
inline constexpr Format kE4M3{3, 7, 0x7e, false};
inline constexpr Format kE5M2{2, 15, 0x7b, true};

inline uint8_t encode(float f, Format fmt) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  const uint8_t sign = static_cast<uint8_t>((x >> 24) & 0x80);
  const uint32_t a = x & 0x7fffffffu;
  if (a > 0x7f800000u) return 0x7f;                             // NaN
  if (a == 0x7f800000u) return sign | fmt.maxCode;              // inf: satfinite
  if (a < 0x00800000u) return sign;                             // zero or an f32 subnormal (< 2^-126)
  const int e = static_cast<int>(a >> 23) - 127;                // unbiased exponent of |f|
  const int emin = 1 - fmt.bias;                                // the smallest normal exponent
  const int eq = e < emin ? emin : e;                           // subnormals share emin
  // |f| = mant * 2^(e-23); in units of the fp8 quantum 2^(eq-man) that is mant >> shift.
  const uint32_t mant = (a & 0x7fffffu) | 0x800000u;
  const int shift = 23 - fmt.man + (eq - e);
  if (shift >= 25) return sign;                                 // below half a quantum: 0
  uint32_t m = mant >> shift;
  const uint32_t rem = mant & ((1u << shift) - 1);
  const uint32_t half = 1u << (shift - 1);
  if (rem > half || (rem == half && (m & 1))) ++m;              // ties to even
  // Normal: m holds the implicit one (2^man); a carry to 2^(man+1) moves into the exponent by
  // the addition. Subnormal (eq == emin): m itself is the code (m == 2^man is the min normal).
  const int64_t code = (static_cast<int64_t>(eq - emin) << fmt.man) + m;
  if (code > fmt.maxCode) return sign | fmt.maxCode;            // satfinite
  return static_cast<uint8_t>(sign | code);
}

inline float decode(uint8_t b, Format fmt) {
  const bool neg = (b & 0x80) != 0;
  const int c = b & 0x7f;
  const int ef = c >> fmt.man, mf = c & ((1 << fmt.man) - 1);
  float v;
  if (!fmt.ieeeInf && c == 0x7f) {
    v = NAN;
  } else if (fmt.ieeeInf && ef == (1 << (7 - fmt.man)) - 1) {
    v = mf == 0 ? INFINITY : NAN;
  } else if (ef == 0) {
    v = std::ldexp(static_cast<float>(mf), 1 - fmt.bias - fmt.man);  // subnormal
  } else {
    v = std::ldexp(static_cast<float>((1 << fmt.man) + mf), ef - fmt.bias - fmt.man);
  }
  return neg ? -v : v;
}

}  // namespace fp8detail

inline uint8_t floatToE4M3(float f) { return fp8detail::encode(f, fp8detail::kE4M3); }
inline uint8_t floatToE5M2(float f) { return fp8detail::encode(f, fp8detail::kE5M2); }
inline float e4m3ToFloat(uint8_t b) { return fp8detail::decode(b, fp8detail::kE4M3); }
inline float e5m2ToFloat(uint8_t b) { return fp8detail::decode(b, fp8detail::kE5M2); }

// By dtype (d must be F8E4M3 or F8E5M2).
inline uint8_t floatToFp8(DType d, float f) { return d == DType::F8E4M3 ? floatToE4M3(f) : floatToE5M2(f); }
inline float fp8ToFloat(DType d, uint8_t b) { return d == DType::F8E4M3 ? e4m3ToFloat(b) : e5m2ToFloat(b); }
// f rounded to the fp8 dtype d and back (what a conversion to d and back to f32 gives).
inline float roundToFp8(DType d, float f) { return fp8ToFloat(d, floatToFp8(d, f)); }

}  // namespace tl
