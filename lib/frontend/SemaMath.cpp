// Sema, the elementwise math built-ins (docs/language.md, "Built-ins"): exp, log, sqrt, log2,
// cos, sin, floor, ceil, erf, libdevice's asin ... rint (and nearbyint, the same op) and
// atan2/pow/hypot, ... on numbers and tiles, minimum/maximum, clamp, fma, umulhi, and
// the typing of the shift operators << and >> (Sema::shift, called from SemaExpr.cpp's binary
// operators). Each binds its arguments, converts ints to f32 where the op is a float op, and
// builds one elementwise op at the call's location; two constants fold where the op allows.
#include <cmath>

#include "frontend/CallArgs.h"
#include "frontend/Sema.h"

namespace tl {

using namespace ast;

// The float functions of two arguments (libdevice's atan2(y, x), pow(x, y), hypot(x, y)): the
// two operands broadcast and promote together, ints are computed in f32.
static const std::map<std::string, OpKind> kBinaryMath = {
    {"atan2", OpKind::Atan2}, {"pow", OpKind::Pow}, {"hypot", OpKind::Hypot}};

PyVal Sema::builtinMath(const Expr& e, const std::string& f) {
  Args a;
  if (auto bin = kBinaryMath.find(f); bin != kBinaryMath.end()) {
    if (!bindArgs(e, f, {"x", "y"}, 2, a)) return PyVal::poison();
    for (size_t k = 0; k < 2; ++k)
      if (!a.vals[k].isConst() && !(a.vals[k].isValue() && !a.vals[k].v->type.isPtr))
        return fail(a.locs[k], f + "() needs numbers or tiles, got " + describe(a.vals[k]));
    Value *x = nullptr, *y = nullptr;
    // Two constants: the first becomes an f32 constant op (unify needs a value), so the op is
    // built and folded in f32 as at run time (fold-constants), not in Python's doubles.
    const PyVal first = a.vals[0].isConst() && a.vals[1].isConst() ? PyVal::value(toValue(a.vals[0], a.locs[0])) : a.vals[0];
    if (!unify(first, a.vals[1], e.loc, x, y)) return PyVal::poison();
    if (refuseFp8(PyVal::value(x), nullptr, x->type.dtype, e.loc, f + "()")) return PyVal::poison();
    if (!isFloat(x->type.dtype)) {
      x = convert(x, DType::F32, e.loc);
      y = convert(y, DType::F32, e.loc);
    }
    return PyVal::value(at(e.loc).binary(bin->second, x, y));
  }
  // libdevice's isnan, isinf, isfinite, signbit: i1 results, built from comparisons (the IR has
  // no bit casts): isnan(x) = x != x (ne is true on NaN), isinf(x) = |x| == inf, isfinite(x) =
  // |x| < inf (false on NaN), signbit(x) = x < 0 or (x == 0 and 1/x < 0), so signbit(-0) is
  // true; the sign bit of a NaN is not seen (signbit(NaN) is false). Ints are compared as f32.
  if (f == "isnan" || f == "isinf" || f == "isfinite" || f == "signbit") {
    if (!bindArgs(e, f, {"x"}, 1, a)) return PyVal::poison();
    const PyVal& x = a.vals[0];
    if (!x.isConst() && !(x.isValue() && !x.v->type.isPtr))
      return fail(a.locs[0], f + "() needs a number or a tile, got " + describe(x));
    Value* v = toValue(x, a.locs[0]);
    if (!isFloat(v->type.dtype)) v = convert(v, DType::F32, e.loc);
    Builder& b = at(e.loc);
    const Type t = v->type;
    auto c = [&](double k) { return b.constFloat(t, k); };
    if (f == "isnan") return PyVal::value(b.cmp("ne", v, v));
    if (f == "isinf") return PyVal::value(b.cmp("eq", b.unary(OpKind::Abs, v), c(INFINITY)));
    if (f == "isfinite") return PyVal::value(b.cmp("lt", b.unary(OpKind::Abs, v), c(INFINITY)));
    Value* neg = b.cmp("lt", v, c(0.0));
    Value* negZero =
        b.binary(OpKind::And, b.cmp("eq", v, c(0.0)), b.cmp("lt", b.binary(OpKind::Div, c(1.0), v), c(0.0)));
    return PyVal::value(b.binary(OpKind::Or, neg, negZero));
  }
  if (!bindArgs(e, f, {"x"}, 1, a)) return PyVal::poison();
  const PyVal& x = a.vals[0];
  if (!x.isConst() && !(x.isValue() && !x.v->type.isPtr))
    return fail(a.locs[0], f + "() needs a number or a tile, got " + describe(x));
  Value* v = toValue(x, a.locs[0]);
  static const std::map<std::string, OpKind> kOps = {{"exp", OpKind::Exp},   {"exp2", OpKind::Exp2},
                                                     {"log", OpKind::Log},   {"sqrt", OpKind::Sqrt},
                                                     {"rsqrt", OpKind::Rsqrt}, {"sigmoid", OpKind::Sigmoid},
                                                     {"abs", OpKind::Abs},     {"log2", OpKind::Log2},
                                                     {"cos", OpKind::Cos},     {"sin", OpKind::Sin},
                                                     {"floor", OpKind::Floor}, {"ceil", OpKind::Ceil},
                                                     {"erf", OpKind::Erf},
                                                     // libdevice / tl.math
                                                     {"asin", OpKind::Asin},   {"acos", OpKind::Acos},
                                                     {"atan", OpKind::Atan},   {"tan", OpKind::Tan},
                                                     {"sinh", OpKind::Sinh},   {"cosh", OpKind::Cosh},
                                                     {"tanh", OpKind::Tanh},   {"log10", OpKind::Log10},
                                                     {"log1p", OpKind::Log1p}, {"expm1", OpKind::Expm1},
                                                     {"exp10", OpKind::Exp10}, {"cbrt", OpKind::Cbrt},
                                                     {"rcp", OpKind::Rcp},     {"trunc", OpKind::Trunc},
                                                     {"round", OpKind::Round}, {"rint", OpKind::Rint},
                                                     {"nearbyint", OpKind::Rint}};
  if (f == "abs") {
    if (v->type.dtype == DType::I1) v = convert(v, DType::I32, e.loc);
  } else if (!isFloat(v->type.dtype)) {
    v = convert(v, DType::F32, e.loc);  // ints are computed in f32
  }
  return PyVal::value(at(e.loc).unary(kOps.at(f), v));
}

PyVal Sema::builtinMinMaximum(const Expr& e, const std::string& f) {
  Args a;
  if (!bindArgs(e, f, {"a", "b"}, 2, a)) return PyVal::poison();
  const PyVal &x = a.vals[0], &y = a.vals[1];
  if (x.isConst() && y.isConst()) {
    bool second = f == "maximum" ? y.asDouble() > x.asDouble() : y.asDouble() < x.asDouble();
    return second ? y : x;
  }
  for (size_t k = 0; k < 2; ++k)
    if (!a.vals[k].isConst() && !(a.vals[k].isValue() && !a.vals[k].v->type.isPtr))
      return fail(a.locs[k], f + "() needs numbers or tiles, got " + describe(a.vals[k]));
  Value *va = nullptr, *vb = nullptr;
  if (!unify(x, y, e.loc, va, vb)) return PyVal::poison();
  if (refuseFp8(PyVal::value(va), nullptr, va->type.dtype, e.loc, f + "()")) return PyVal::poison();
  if (va->type.dtype == DType::I1) {
    va = convert(va, DType::I32, e.loc);
    vb = convert(vb, DType::I32, e.loc);
  }
  return PyVal::value(at(e.loc).binary(f == "maximum" ? OpKind::Maximum : OpKind::Minimum, va, vb));
}

namespace {
bool isNumberOrTile(const PyVal& p) { return p.isConst() || (p.isValue() && !p.v->type.isPtr); }
}  // namespace

// fma(x, y, z) = x*y + z with one rounding: the three operands broadcast and promote together
// (as two binary ops would); ints are computed in f32.
PyVal Sema::builtinFma(const Expr& e) {
  Args a;
  if (!bindArgs(e, "fma", {"x", "y", "z"}, 3, a)) return PyVal::poison();
  for (size_t k = 0; k < 3; ++k)
    if (!isNumberOrTile(a.vals[k])) return fail(a.locs[k], "fma() needs numbers or tiles, got " + describe(a.vals[k]));
  if (a.vals[0].isConst() && a.vals[1].isConst() && a.vals[2].isConst())
    return PyVal::real(std::fma(a.vals[0].asDouble(), a.vals[1].asDouble(), a.vals[2].asDouble()));
  Value *x = nullptr, *y = nullptr, *z = nullptr, *xy = nullptr;
  if (!unify(a.vals[0], a.vals[1], e.loc, x, y)) return PyVal::poison();
  if (!unify(PyVal::value(x), a.vals[2], e.loc, xy, z)) return PyVal::poison();
  if (xy->type != x->type && !unify(PyVal::value(y), PyVal::value(z), e.loc, y, z)) return PyVal::poison();
  x = xy;
  if (refuseFp8(PyVal::value(x), nullptr, x->type.dtype, e.loc, "fma()")) return PyVal::poison();
  if (!isFloat(x->type.dtype)) {
    x = convert(x, DType::F32, e.loc);
    y = convert(y, DType::F32, e.loc);
    z = convert(z, DType::F32, e.loc);
  }
  return PyVal::value(at(e.loc).fma(x, y, z));
}

// umulhi(x, y): the high half of the unsigned product of two i32 (or i64) values.
PyVal Sema::builtinUmulhi(const Expr& e) {
  Args a;
  if (!bindArgs(e, "umulhi", {"x", "y"}, 2, a)) return PyVal::poison();
  for (size_t k = 0; k < 2; ++k) {
    const PyVal& v = a.vals[k];
    const bool intConst = v.isIntConst() && v.kind != PyVal::Kind::Bool;
    const bool intTile = v.isValue() && !v.v->type.isPtr && (v.v->type.dtype == DType::I32 || v.v->type.dtype == DType::I64);
    if (!intConst && !intTile)
      return fail(a.locs[k], "umulhi() needs i32 or i64 integers or tiles, got " + describe(v));
  }
  Value *x = nullptr, *y = nullptr;
  if (!unify(a.vals[0], a.vals[1], e.loc, x, y)) return PyVal::poison();
  return PyVal::value(at(e.loc).binary(OpKind::Umulhi, x, y));
}

// clamp(x, min, max) = minimum(maximum(x, min), max): maximum and minimum propagate NaN, so a
// NaN in x, min or max gives NaN. Three constants fold.
PyVal Sema::builtinClamp(const Expr& e) {
  Args a;
  if (!bindArgs(e, "clamp", {"x", "min", "max"}, 3, a)) return PyVal::poison();
  for (size_t k = 0; k < 3; ++k)
    if (!isNumberOrTile(a.vals[k])) return fail(a.locs[k], "clamp() needs numbers or tiles, got " + describe(a.vals[k]));
  const PyVal &x = a.vals[0], &lo = a.vals[1], &hi = a.vals[2];
  if (x.isConst() && lo.isConst() && hi.isConst()) {
    const PyVal& up = x.asDouble() < lo.asDouble() ? lo : x;
    return hi.asDouble() < up.asDouble() ? hi : up;
  }
  Value *vx = nullptr, *vlo = nullptr, *vm = nullptr, *vhi = nullptr;
  if (!unify(x, lo, e.loc, vx, vlo)) return PyVal::poison();
  if (refuseFp8(PyVal::value(vx), nullptr, vx->type.dtype, e.loc, "clamp()")) return PyVal::poison();
  if (vx->type.dtype == DType::I1) {
    vx = convert(vx, DType::I32, e.loc);
    vlo = convert(vlo, DType::I32, e.loc);
  }
  Value* m = at(e.loc).binary(OpKind::Maximum, vx, vlo);
  if (!unify(PyVal::value(m), hi, e.loc, vm, vhi)) return PyVal::poison();
  if (refuseFp8(PyVal::value(vm), nullptr, vm->type.dtype, e.loc, "clamp()")) return PyVal::poison();
  if (vm->type.dtype == DType::I1) {
    vm = convert(vm, DType::I32, e.loc);
    vhi = convert(vhi, DType::I32, e.loc);
  }
  return PyVal::value(at(e.loc).binary(OpKind::Minimum, vm, vhi));
}

// a << b and a >> b: integers only (>> is arithmetic: i32 and i64 are signed); weak literals
// take the other operand's dtype, as for the other binary operators; i1 is shifted as i32. Two
// constants fold with Python's rules (a negative count is an error, as Python's ValueError;
// a result outside 64 bits is an error). At run time an amount outside [0, bits) gives 0 for
// << and the sign fill for >> (docs/language.md).
PyVal Sema::shift(ast::BinOp op, const PyVal& a, const PyVal& b, Loc opLoc) {
  const bool left = op == ast::BinOp::Shl;
  const char* spell = left ? "<<" : ">>";
  if (a.isPoison() || b.isPoison()) return PyVal::poison();
  if (!isNumberOrTile(a) || !isNumberOrTile(b))
    return fail(opLoc, std::string("operator '") + spell + "' needs integers or integer tiles, got " + describe(a) +
                           " and " + describe(b));
  if (a.isConst() && b.isConst()) {
    if (!a.isIntConst() || !b.isIntConst())
      return fail(opLoc, std::string("'") + spell + "' needs integer operands, got a float");
    if (b.i < 0) return fail(opLoc, "negative shift count " + std::to_string(b.i));
    if (!left) return PyVal::integer(b.i >= 63 ? (a.i < 0 ? -1 : 0) : a.i >> b.i);
    if (a.i == 0) return PyVal::integer(0);
    if (b.i >= 63 || (a.i > 0 ? a.i > (INT64_MAX >> b.i) : a.i < (INT64_MIN >> b.i)))
      return fail(opLoc, std::to_string(a.i) + " << " + std::to_string(b.i) + " does not fit in 64 bits");
    return PyVal::integer(static_cast<int64_t>(static_cast<uint64_t>(a.i) << b.i));
  }
  const DType dt = a.isValue() && b.isValue() ? promote(a.v->type.dtype, b.v->type.dtype)
                   : a.isValue()             ? withWeak(a.v->type.dtype, b)
                                             : withWeak(b.v->type.dtype, a);
  if (isFloat(dt)) {
    auto show = [&](const PyVal& p) { return p.isValue() ? p.v->type.str() : describe(p); };
    return fail(opLoc, std::string("'") + spell + "' needs integer operands, got " + show(a) + " and " + show(b));
  }
  Value *va = nullptr, *vb = nullptr;
  if (!unify(a, b, opLoc, va, vb)) return PyVal::poison();
  if (va->type.dtype == DType::I1) {
    va = convert(va, DType::I32, opLoc);
    vb = convert(vb, DType::I32, opLoc);
  }
  return PyVal::value(at(opLoc).binary(left ? OpKind::Shl : OpKind::Shr, va, vb));
}

}  // namespace tl
