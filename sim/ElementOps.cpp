// Register-level arithmetic for the thread-IR executor (see ElementOps.h). Each function is the
// slot-encoded twin of the same-named helper in stages/scalar/ScalarInterpreter.cpp; the
// sim tests compare the two on edge cases (wraparound, MIN / -1, NaN, signed zeros, f16).
#include "sim/ElementOps.h"

#include "runtime/FloatOps.h"

#include <cmath>
#include <limits>
#include <stdexcept>

#include "runtime/Memory.h"

// fma must be the only fused operation: a*b + c elsewhere rounds twice, as the scalar
// interpreter does.
#if defined(__clang__)
#pragma clang fp contract(off)
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

namespace tl::sim {

float roundFloat(float v, DType d) {
  switch (d) {
    case DType::F16: return halfToFloat(floatToHalf(v));
    case DType::BF16: return bf16ToFloat(floatToBf16(v));
    case DType::F8E4M3:
    case DType::F8E5M2: return roundToFp8(d, v);
    default: return v;
  }
}

CmpPred parseCmpPred(const std::string& pred) {
  if (pred == "lt") return CmpPred::Lt;
  if (pred == "le") return CmpPred::Le;
  if (pred == "gt") return CmpPred::Gt;
  if (pred == "ge") return CmpPred::Ge;
  if (pred == "eq") return CmpPred::Eq;
  return CmpPred::Ne;
}

Slot convertSlot(Slot x, DType from, DType to) {
  if (from == to) return x;
  if (to == DType::I1) return isFloat(from) ? (asF(x) != 0) : (asI(x) != 0);
  if (isInt(to)) {
    if (isInt(from)) return intSlot(to, asI(x));
    return intSlot(to, floatToInt(asF(x), to));  // truncate toward zero, saturate, NaN -> 0
  }
  if (isInt(from)) return floatSlot(to, static_cast<float>(asI(x)));  // to f32 first, then f16/bf16/fp8
  return floatSlot(to, asF(x));
}

Slot constantSlot(const Op& op, DType d) {
  const Attr* v = op.attr("value");
  if (isInt(d)) return convertSlot(static_cast<Slot>(std::get<int64_t>(*v)), DType::I64, d);
  return floatSlot(d, static_cast<float>(roundToDType(op.floatAttr("value"), DType::F32)));
}

namespace {

[[noreturn]] void badKind(const char* what, OpKind kind) {
  throw std::logic_error(std::string(what) + ": unexpected " + mnemonic(kind));
}

}  // namespace

Slot unarySlot(OpKind kind, DType d, Slot x) {
  if (isInt(d)) {
    uint64_t u = x;
    switch (kind) {
      case OpKind::Neg: return intSlot(d, static_cast<int64_t>(0 - u));
      case OpKind::Not: return intSlot(d, static_cast<int64_t>(~u));
      case OpKind::Abs: return intSlot(d, asI(x) < 0 ? static_cast<int64_t>(0 - u) : asI(x));
      default: badKind("unarySlot on an integer", kind);
    }
  }
  return floatSlot(d, floatUnary(kind, asF(x)));
}

bool binarySlot(OpKind kind, DType d, Slot a, Slot b, Slot& out) {
  if (isInt(d)) {
    const int64_t x = asI(a), y = asI(b);
    const int64_t minOfType = d == DType::I32 ? std::numeric_limits<int32_t>::min()
                                              : std::numeric_limits<int64_t>::min();
    switch (kind) {
      case OpKind::Add: out = intSlot(d, static_cast<int64_t>(a + b)); return true;
      case OpKind::Sub: out = intSlot(d, static_cast<int64_t>(a - b)); return true;
      case OpKind::Mul: out = intSlot(d, static_cast<int64_t>(a * b)); return true;
      case OpKind::Div:
        if (y == 0) return false;
        out = (x == minOfType && y == -1) ? intSlot(d, minOfType) : intSlot(d, x / y);  // MIN / -1 wraps
        return true;
      case OpKind::Rem:
        if (y == 0) return false;
        out = y == -1 ? 0 : intSlot(d, x % y);
        return true;
      case OpKind::Maximum: out = intSlot(d, x > y ? x : y); return true;
      case OpKind::Minimum: out = intSlot(d, x < y ? x : y); return true;
      case OpKind::And: out = intSlot(d, x & y); return true;
      case OpKind::Or: out = intSlot(d, x | y); return true;
      case OpKind::Xor: out = intSlot(d, x ^ y); return true;
      case OpKind::Shl: out = intSlot(d, intShl(d, x, y)); return true;
      case OpKind::Shr: out = intSlot(d, intShr(d, x, y)); return true;
      case OpKind::Umulhi: out = intSlot(d, intUmulhi(d, x, y)); return true;
      default: badKind("binarySlot on integers", kind);
    }
  }
  out = floatSlot(d, floatBinary(kind, asF(a), asF(b)));
  return true;
}

namespace {
// One comparison, for floats (IEEE: NaN compares false, except !=) and for integers alike.
template <typename T>
bool compare(CmpPred pred, T x, T y) {
  switch (pred) {
    case CmpPred::Lt: return x < y;
    case CmpPred::Le: return x <= y;
    case CmpPred::Gt: return x > y;
    case CmpPred::Ge: return x >= y;
    case CmpPred::Eq: return x == y;
    case CmpPred::Ne: return x != y;
  }
  return false;
}
}  // namespace

bool compareSlot(CmpPred pred, DType d, Slot a, Slot b) {
  return isFloat(d) ? compare(pred, asF(a), asF(b)) : compare(pred, asI(a), asI(b));
}

Slot fmaSlot(DType d, Slot a, Slot b, Slot c) { return floatSlot(d, floatFma(asF(a), asF(b), asF(c))); }

AtomicKind parseAtomicKind(const std::string& kind) {
  if (kind == "add") return AtomicKind::Add;
  if (kind == "max") return AtomicKind::Max;
  if (kind == "min") return AtomicKind::Min;
  if (kind == "and") return AtomicKind::And;
  if (kind == "or") return AtomicKind::Or;
  if (kind == "xor") return AtomicKind::Xor;
  return AtomicKind::Xchg;
}

Slot atomicSlot(AtomicKind kind, DType d, Slot old, Slot v, Slot cmp) {
  if (isFloat(d)) {  // add and xchg only (the verifier's rule)
    return kind == AtomicKind::Add ? floatSlot(d, asF(old) + asF(v)) : v;
  }
  const int64_t a = asI(old), b = asI(v);
  switch (kind) {
    case AtomicKind::Add: return intSlot(d, static_cast<int64_t>(old + v));
    case AtomicKind::Max: return intSlot(d, a > b ? a : b);
    case AtomicKind::Min: return intSlot(d, a < b ? a : b);
    case AtomicKind::And: return intSlot(d, a & b);
    case AtomicKind::Or: return intSlot(d, a | b);
    case AtomicKind::Xor: return intSlot(d, a ^ b);
    case AtomicKind::Xchg: return v;
    case AtomicKind::Cas: return a == asI(cmp) ? v : old;
  }
  return old;
}

Slot loadElement(const uint8_t* p, DType d) {
  switch (d) {
    case DType::I1: return *p != 0 ? 1 : 0;
    case DType::I32: { int32_t v; std::memcpy(&v, p, 4); return static_cast<Slot>(static_cast<int64_t>(v)); }
    case DType::I64: { int64_t v; std::memcpy(&v, p, 8); return static_cast<Slot>(v); }
    case DType::F16: { uint16_t h; std::memcpy(&h, p, 2); return fromF(halfToFloat(h)); }
    case DType::BF16: { uint16_t h; std::memcpy(&h, p, 2); return fromF(bf16ToFloat(h)); }
    case DType::F32: { float f; std::memcpy(&f, p, 4); return fromF(f); }
    case DType::F8E4M3:
    case DType::F8E5M2: return fromF(fp8ToFloat(d, *p));
  }
  return 0;
}

void storeElement(uint8_t* p, DType d, Slot v) {
  switch (d) {
    case DType::I1: *p = (v & 1) ? 1 : 0; break;
    case DType::I32: { int32_t x = static_cast<int32_t>(static_cast<uint32_t>(v)); std::memcpy(p, &x, 4); break; }
    case DType::I64: { int64_t x = asI(v); std::memcpy(p, &x, 8); break; }
    case DType::F16: { uint16_t h = floatToHalf(asF(v)); std::memcpy(p, &h, 2); break; }
    case DType::BF16: { uint16_t h = floatToBf16(asF(v)); std::memcpy(p, &h, 2); break; }
    case DType::F32: { float f = asF(v); std::memcpy(p, &f, 4); break; }
    case DType::F8E4M3:
    case DType::F8E5M2: *p = floatToFp8(d, asF(v)); break;
  }
}

}  // namespace tl::sim
