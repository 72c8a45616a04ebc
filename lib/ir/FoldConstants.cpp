// fold-constants: evaluates ops whose operands are all `constant` ops and replaces each by a
// `constant` holding the result.
//
// Expects: verified block IR.
// Guarantees: every folded value is bit-for-bit what tl-scalar and tl-block compute at run time:
//   - i32 / i64 arithmetic wraps (two's complement: computed in uint32_t / uint64_t); shl/shr
//     by an amount outside [0, bits) give 0 / the sign fill; umulhi is the unsigned high half;
//   - int `/` and `%` truncate toward zero (C); x/0, x%0, MIN/-1 and MIN%-1 are left alone
//     (the interpreters decide what happens at run time);
//   - f32 is computed in float, not double (the double attribute is cast to float, the op is
//     computed, the float result is stored back as a double, which holds it exactly);
//   - f16/bf16 arithmetic is never folded (the IR library does not model their rounding), nor
//     are conversions to or from them or fp8;
//   - a result that is NaN, or a float->int conversion out of range, is not folded.
// A constant tile is a splat, so elementwise folding works on the single element value.
//
// Each op becomes a constant *in place* (kind, operands and attributes change; its result Value
// stays), so no use has to be rewritten.
#include <cmath>
#include <limits>

#include "ir/Pass.h"
#include "ir/PassUtils.h"

namespace tl {

namespace {

// --- integers ---------------------------------------------------------------------------------

// Two's-complement helpers: compute in unsigned (defined overflow), wrap to the dtype's width.
int64_t wrapAdd(DType d, int64_t a, int64_t b) { return wrapInt(d, static_cast<int64_t>(uint64_t(a) + uint64_t(b))); }
int64_t wrapSub(DType d, int64_t a, int64_t b) { return wrapInt(d, static_cast<int64_t>(uint64_t(a) - uint64_t(b))); }
int64_t wrapMul(DType d, int64_t a, int64_t b) { return wrapInt(d, static_cast<int64_t>(uint64_t(a) * uint64_t(b))); }

int64_t minOf(DType d) {
  return d == DType::I32 ? std::numeric_limits<int32_t>::min() : std::numeric_limits<int64_t>::min();
}

int bitsOf(DType d) { return d == DType::I32 ? 32 : 64; }

// a op b on ints of dtype d (operands already wrapped to d). i1 only has the bitwise ops.
std::optional<int64_t> foldIntBinary(OpKind kind, DType d, int64_t a, int64_t b) {
  bool bitwise = kind == OpKind::And || kind == OpKind::Or || kind == OpKind::Xor;
  if (d == DType::I1 && !bitwise) return std::nullopt;
  switch (kind) {
    case OpKind::Add: return wrapAdd(d, a, b);
    case OpKind::Sub: return wrapSub(d, a, b);
    case OpKind::Mul: return wrapMul(d, a, b);
    case OpKind::Div:
    case OpKind::Rem:
      if (b == 0 || (a == minOf(d) && b == -1)) return std::nullopt;  // run-time behaviour
      return kind == OpKind::Div ? a / b : a % b;                    // C: truncating
    case OpKind::Maximum: return std::max(a, b);
    case OpKind::Minimum: return std::min(a, b);
    case OpKind::And: return a & b;
    case OpKind::Or: return a | b;
    case OpKind::Xor: return a ^ b;
    // shl/shr: an amount outside [0, bits) gives 0 (shl) or the sign fill (shr), as at run time
    // (runtime/FloatOps.h's intShl/intShr, which this library cannot include).
    case OpKind::Shl:
      if (b < 0 || b >= bitsOf(d)) return 0;
      return wrapInt(d, static_cast<int64_t>(uint64_t(a) << b));
    case OpKind::Shr:
      if (b < 0 || b >= bitsOf(d)) return a < 0 ? -1 : 0;
      return a >> b;
    case OpKind::Umulhi:
      if (d == DType::I32) return wrapInt(d, static_cast<int64_t>((uint64_t(uint32_t(a)) * uint64_t(uint32_t(b))) >> 32));
      return static_cast<int64_t>(uint64_t((static_cast<unsigned __int128>(uint64_t(a)) * uint64_t(b)) >> 64));
    default: return std::nullopt;
  }
}

std::optional<int64_t> foldIntUnary(OpKind kind, DType d, int64_t a) {
  switch (kind) {
    case OpKind::Not: return d == DType::I1 ? int64_t(!a) : wrapInt(d, ~a);
    case OpKind::Neg: if (d == DType::I1) return std::nullopt; return wrapSub(d, 0, a);
    case OpKind::Abs: if (d == DType::I1) return std::nullopt; return a < 0 ? wrapSub(d, 0, a) : a;
    default: return std::nullopt;
  }
}

// --- f32 --------------------------------------------------------------------------------------

std::optional<float> foldFloatBinary(OpKind kind, float a, float b) {
  switch (kind) {
    case OpKind::Add: return a + b;
    case OpKind::Sub: return a - b;
    case OpKind::Mul: return a * b;
    case OpKind::Div: return a / b;  // IEEE: x/0 is +-inf, as at run time
    case OpKind::Rem: return std::fmod(a, b);
    case OpKind::Maximum:
    case OpKind::Minimum:
      // max(+0, -0) is implementation-defined in spirit: leave it to the interpreters.
      if (a == b && std::signbit(a) != std::signbit(b)) return std::nullopt;
      return kind == OpKind::Maximum ? std::max(a, b) : std::min(a, b);  // NaN: rejected below
    case OpKind::Atan2: return std::atan2(a, b);  // atan2f, powf, hypotf
    case OpKind::Pow: return std::pow(a, b);
    case OpKind::Hypot: return std::hypot(a, b);
    default: return std::nullopt;
  }
}

std::optional<float> foldFloatUnary(OpKind kind, float a) {
  switch (kind) {
    case OpKind::Neg: return -a;
    case OpKind::Abs: return std::fabs(a);
    case OpKind::Exp: return std::exp(a);     // the float overloads: expf, exp2f, logf, sqrtf
    case OpKind::Exp2: return std::exp2(a);
    case OpKind::Log: return std::log(a);
    case OpKind::Sqrt: return std::sqrt(a);
    case OpKind::Rsqrt: return 1.0f / std::sqrt(a);
    case OpKind::Sigmoid: return 1.0f / (1.0f + std::exp(-a));
    case OpKind::Log2: return std::log2(a);  // log2f, cosf, sinf, floorf, ceilf, erff
    case OpKind::Cos: return std::cos(a);
    case OpKind::Sin: return std::sin(a);
    case OpKind::Floor: return std::floor(a);
    case OpKind::Ceil: return std::ceil(a);
    case OpKind::Erf: return std::erf(a);
    case OpKind::Asin: return std::asin(a);  // the float overloads, as runtime/FloatOps.h's floatUnary
    case OpKind::Acos: return std::acos(a);
    case OpKind::Atan: return std::atan(a);
    case OpKind::Tan: return std::tan(a);
    case OpKind::Sinh: return std::sinh(a);
    case OpKind::Cosh: return std::cosh(a);
    case OpKind::Tanh: return std::tanh(a);
    case OpKind::Log10: return std::log10(a);
    case OpKind::Log1p: return std::log1p(a);
    case OpKind::Expm1: return std::expm1(a);
    case OpKind::Exp10: return ::exp10f(a);
    case OpKind::Cbrt: return std::cbrt(a);
    case OpKind::Rcp: return 1.0f / a;
    case OpKind::Trunc: return std::trunc(a);
    case OpKind::Round: return std::round(a);
    case OpKind::Rint: return std::nearbyint(a);
    default: return std::nullopt;
  }
}

// --- comparisons and conversions ---------------------------------------------------------------

template <typename T>
bool compare(const std::string& pred, T a, T b) {
  if (pred == "lt") return a < b;
  if (pred == "le") return a <= b;
  if (pred == "gt") return a > b;
  if (pred == "ge") return a >= b;
  if (pred == "eq") return a == b;
  return a != b;  // "ne" (the verifier allows nothing else)
}

// True for the dtypes whose values this pass can compute exactly.
bool foldable(DType d) { return d != DType::F16 && d != DType::BF16 && !isFp8(d); }

// x.to(to): the result, or nullopt when it is not folded (NaN, out of range, f16/bf16).
std::optional<ConstValue> foldConvert(const ConstValue& x, DType to) {
  if (!foldable(x.dtype) || !foldable(to)) return std::nullopt;
  ConstValue r;
  r.dtype = to;
  if (isInt(x.dtype)) {
    if (to == DType::F32) r.f = static_cast<float>(x.i);  // int -> f32 rounds to nearest
    else r.i = wrapInt(to, x.i);                          // int -> int wraps; -> i1 is != 0
    return r;
  }
  float f = static_cast<float>(x.f);
  if (std::isnan(f)) return std::nullopt;
  if (to == DType::F32) r.f = f;
  else if (to == DType::I1) r.i = f != 0.0f;
  else {
    // float -> int truncates toward zero; out of range is left to run time.
    double t = std::trunc(static_cast<double>(f));
    double lo = to == DType::I32 ? -2147483648.0 : -9223372036854775808.0;
    double hi = to == DType::I32 ? 2147483648.0 : 9223372036854775808.0;  // exclusive
    if (t < lo || t >= hi) return std::nullopt;
    r.i = static_cast<int64_t>(t);
  }
  return r;
}

// --- the rewrite ------------------------------------------------------------------------------

// Turns `op` into `constant {value}` of its own result type.
void becomeConstant(Op& op, Attr value) {
  op.kind = OpKind::Constant;
  op.operands.clear();
  op.attrs.clear();
  op.setAttr("value", std::move(value));
}

// The attribute holding `c` for a constant of dtype c.dtype.
Attr attrOf(const ConstValue& c) {
  if (isInt(c.dtype)) return c.i;
  return c.f;
}

// Stores an f32 result unless it is NaN (the printer/parser need not round-trip NaN, and a NaN
// constant tells the reader nothing).
bool setFloatResult(Op& op, std::optional<float> r) {
  if (!r || std::isnan(*r)) return false;
  becomeConstant(op, static_cast<double>(*r));
  return true;
}

bool setIntResult(Op& op, std::optional<int64_t> r) {
  if (!r) return false;
  becomeConstant(op, wrapInt(op.result()->type.dtype, *r));
  return true;
}

// Elementwise ops: unary, binary, cmp, convert.
bool foldElementwise(Op& op, const std::vector<ConstValue>& in) {
  DType d = in[0].dtype;
  if (op.kind == OpKind::Convert) {
    auto r = foldConvert(in[0], op.result()->type.dtype);
    if (!r) return false;
    becomeConstant(op, attrOf(*r));
    return true;
  }
  if (!foldable(d)) return false;
  if (op.kind == OpKind::Cmp) {
    const std::string& pred = op.strAttr("pred");
    bool r;
    if (isInt(d)) r = compare(pred, in[0].i, in[1].i);
    else r = compare(pred, static_cast<float>(in[0].f), static_cast<float>(in[1].f));
    becomeConstant(op, int64_t(r));
    return true;
  }
  if (in.size() == 1) {
    if (isInt(d)) return setIntResult(op, foldIntUnary(op.kind, d, in[0].i));
    return setFloatResult(op, foldFloatUnary(op.kind, static_cast<float>(in[0].f)));
  }
  if (in.size() == 3) {  // fma (f32: fmaf, one rounding; it has no integer form)
    if (op.kind != OpKind::Fma || isInt(d)) return false;
    return setFloatResult(op, std::fma(static_cast<float>(in[0].f), static_cast<float>(in[1].f), static_cast<float>(in[2].f)));
  }
  if (in.size() != 2) return false;
  if (isInt(d)) return setIntResult(op, foldIntBinary(op.kind, d, in[0].i, in[1].i));
  return setFloatResult(op, foldFloatBinary(op.kind, static_cast<float>(in[0].f), static_cast<float>(in[1].f)));
}

// reduce / argmax of a constant (splat) tile: every element is the same value.
bool foldReduction(Op& op, const ConstValue& x) {
  const Type& inType = op.operand(0)->type;
  bool nan = isFloat(x.dtype) && std::isnan(x.f);
  if (op.kind == OpKind::Argmax) {
    if (nan) return false;
    becomeConstant(op, int64_t(0));  // the first index of the maximum
    return true;
  }
  if (op.kind != OpKind::Reduce) return false;
  const std::string& kind = op.strAttr("kind");
  if (kind == "max" || kind == "min") {  // max/min of equal values is that value, any dtype
    becomeConstant(op, attrOf(x));
    return true;
  }
  // sum: only ints, where n * x (wrapped) is exactly what the adds give in any order.
  if (!isInt(x.dtype)) return false;
  int64_t n = inType.shape.at(static_cast<size_t>(op.intAttr("axis")));
  return setIntResult(op, wrapMul(x.dtype, x.i, n));
}

// Folds `op` if it can; true when it changed.
bool foldOp(Op& op, DeferredEdits& edits) {
  if (op.numResults() != 1 || !op.regions.empty() || op.numOperands() == 0) return false;
  std::vector<ConstValue> in;
  for (Value* v : op.operands) {
    auto c = constantOf(v);
    if (!c) {
      in.clear();
      break;
    }
    in.push_back(*c);
  }
  // select with a constant condition needs only the condition.
  if (op.kind == OpKind::Select) {
    auto c = constantOf(op.operand(0));
    if (!c) return false;
    edits.replaceOp(op, op.operand(c->i ? 1 : 2));
    return true;
  }
  if (in.empty()) return false;
  switch (op.info().category) {
    case OpCategory::Shape:  // splat / broadcast / expand_dims / permute / extract of a splat:
      // the same value in a new type. (A pack of several constants is not a splat.)
      if (op.numOperands() != 1) return false;
      becomeConstant(op, attrOf(in[0]));
      return true;
    case OpCategory::Elementwise:
      if (op.kind == OpKind::AddPtr || op.kind == OpKind::PtrCast) return false;  // no pointer constants
      if (op.kind == OpKind::CvtTf32) return false;  // (its rounding lives in runtime/FloatOps.h)
      return foldElementwise(op, in);
    case OpCategory::Reduction:
      return (op.kind == OpKind::Reduce || op.kind == OpKind::Argmax) && foldReduction(op, in[0]);
    default:
      return false;
  }
}

// One forward sweep: operands are folded before their users, so chains fold completely.
bool foldRegion(Region& region, DeferredEdits& edits) {
  bool changed = false;
  for (auto& op : region.ops) {
    edits.remapOperands(*op);
    for (auto& r : op->regions) changed |= foldRegion(*r, edits);
    changed |= foldOp(*op, edits);
  }
  edits.compact(region);
  return changed;
}

}  // namespace

bool foldConstants(Function& fn) {
  DeferredEdits edits;
  return foldRegion(fn.body, edits);
}

}  // namespace tl
