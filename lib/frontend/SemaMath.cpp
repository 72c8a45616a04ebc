// Sema, the elementwise math built-ins (docs/language.md, "Built-ins"): exp, log, sqrt, ... on
// numbers and tiles, and minimum/maximum. Each binds its arguments, converts ints to f32 where
// the op is a float op, and builds one elementwise op at the call's location.
#include "frontend/CallArgs.h"
#include "frontend/Sema.h"

namespace tl {

using namespace ast;

PyVal Sema::builtinMath(const Expr& e, const std::string& f) {
  Args a;
  if (!bindArgs(e, f, {"x"}, 1, a)) return PyVal::poison();
  const PyVal& x = a.vals[0];
  if (!x.isConst() && !(x.isValue() && !x.v->type.isPtr))
    return fail(a.locs[0], f + "() needs a number or a tile, got " + describe(x));
  Value* v = toValue(x, a.locs[0]);
  static const std::map<std::string, OpKind> kOps = {{"exp", OpKind::Exp},   {"exp2", OpKind::Exp2},
                                                     {"log", OpKind::Log},   {"sqrt", OpKind::Sqrt},
                                                     {"rsqrt", OpKind::Rsqrt}, {"sigmoid", OpKind::Sigmoid},
                                                     {"abs", OpKind::Abs}};
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
  if (va->type.dtype == DType::I1) {
    va = convert(va, DType::I32, e.loc);
    vb = convert(vb, DType::I32, e.loc);
  }
  return PyVal::value(at(e.loc).binary(f == "maximum" ? OpKind::Maximum : OpKind::Minimum, va, vb));
}

}  // namespace tl
