// Register-level arithmetic for the thread-IR executor: what ONE register of ONE lane computes.
//
// The executor keeps every register in a 64-bit slot:
//   - integers (i1, i32, i64): the value wrapped to its dtype, sign-extended to 64 bits
//     (i1 is 0 or 1);
//   - floats (f32, f16, bf16, f8e4m3, f8e5m2): the bits of a `float` in the low 32 bits; the
//     float always holds a value exactly representable in the dtype (f16/bf16 are rounded after
//     every op; fp8 values are only converted, loaded, stored and moved);
//   - pointers: the 64-bit byte address.
//
// Expects: slots holding values of the dtype passed alongside (the verifier guarantees the
// types; the executor guarantees the encodings).
// Guarantees: EXACTLY the element semantics written at the top of
// stages/scalar/ScalarInterpreter.cpp (the ground truth): i32/i64 wrap, C division and
// remainder (division by zero is reported to the caller, never performed), float ops in float
// with f16/bf16 rounded to nearest even after each op, NaN-propagating maximum/minimum with
// +0 > -0, saturating float -> int conversion; plus `fma` as std::fmaf (one rounding).
#pragma once

#include <cstdint>
#include <cstring>

#include "ir/IR.h"

namespace tl::sim {

using Slot = uint64_t;  // one register of one lane

inline float asF(Slot s) {
  uint32_t bits = static_cast<uint32_t>(s);
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}
inline Slot fromF(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  return bits;
}
inline int64_t asI(Slot s) { return static_cast<int64_t>(s); }

// Two's-complement wrap of v to the integer dtype d (i1 keeps the low bit).
inline int64_t wrapInt(int64_t v, DType d) {
  switch (d) {
    case DType::I1: return v & 1;
    case DType::I32: return static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint64_t>(v)));
    default: return v;
  }
}

// Rounds a float to what dtype d holds: f16/bf16 to nearest even, fp8 to nearest even with
// saturation (runtime/Fp8.h), f32 unchanged.
float roundFloat(float v, DType d);

inline Slot intSlot(DType d, int64_t v) { return static_cast<Slot>(wrapInt(v, d)); }
inline Slot floatSlot(DType d, float v) { return fromF(roundFloat(v, d)); }

// Comparison predicates of `cmp`, decoded once from the attribute string.
enum class CmpPred : uint8_t {
  Lt,  // a < b
  Le,  // a <= b
  Gt,  // a > b
  Ge,  // a >= b
  Eq,  // a == b
  Ne,  // a != b (true when either float operand is NaN)
};
CmpPred parseCmpPred(const std::string& pred);  // verified IR: one of the six names

// `convert` of one register from dtype `from` to dtype `to`.
Slot convertSlot(Slot x, DType from, DType to);
// The value of a `constant` op of dtype d (attribute `value`), as the scalar interpreter makes it.
Slot constantSlot(const Op& op, DType d);
// Unary elementwise ops (Neg, Not, Exp, Exp2, Log, Sqrt, Rsqrt, Abs, Sigmoid, Log2, Cos, Sin,
// Floor, Ceil, Erf, and the libdevice ones: Asin ... Rint; runtime/FloatOps.h's floatUnary).
Slot unarySlot(OpKind kind, DType d, Slot x);
// Binary elementwise ops (Add ... Xor, Shl, Shr, Umulhi, Atan2, Pow, Hypot). Returns false, leaving `out` alone, for an integer
// division or remainder by zero (the caller reports it with the lane).
bool binarySlot(OpKind kind, DType d, Slot a, Slot b, Slot& out);
bool compareSlot(CmpPred pred, DType d, Slot a, Slot b);
// a*b + c with one rounding (std::fmaf), then rounded to d (f16/bf16).
Slot fmaSlot(DType d, Slot a, Slot b, Slot c);

// What an atomic does to its element (atom_global's kind; cas is atom_cas_global).
enum class AtomicKind : uint8_t {
  Add,   // old + v (ints wrap; f32 rounds)
  Max,   // max(old, v) (ints)
  Min,   // min(old, v) (ints)
  And,   // old & v
  Or,    // old | v
  Xor,   // old ^ v
  Xchg,  // v
  Cas,   // v if old == cmp, else old (no write)
};
AtomicKind parseAtomicKind(const std::string& kind);  // verified IR: add|max|min|and|or|xor|xchg
// The value an atomic leaves at its address, given the old one there (tl-scalar's rules).
Slot atomicSlot(AtomicKind kind, DType d, Slot old, Slot v, Slot cmp);

// Reads / writes one element of dtype d at p (little-endian bytes, as Memory stores them).
Slot loadElement(const uint8_t* p, DType d);
void storeElement(uint8_t* p, DType d, Slot v);

}  // namespace tl::sim
