// Sema, scans: tl.cumsum, tl.cumprod and tl.associative_scan (also as methods: x.cumsum(0)),
// each one block-IR `scan` op (BlockOps.def) at the call's location; and tl.reduce, whose
// combine function is recognized the same way (reduce(input, axis, combine_fn, keep_dims=False):
// kinds sum, max and min become the `reduce` op tl.sum / tl.max / tl.min build, in the input's
// dtype; a product has no reduce op and is refused with the alternative named).
//
//   cumsum(input, axis=0, reverse=False, dtype=None)   kind "sum"; i1 counts in i32 (as sum()),
//                                                      bf16 is scanned in f32 (Triton promotes it),
//                                                      dtype=: input converted first
//   cumprod(input, axis=0, reverse=False)              kind "prod"; i1 -> i32, bf16 -> f32
//   associative_scan(input, axis, combine_fn, reverse=False)
//                                                      combine_fn: a @jit function of the file
//                                                      with two parameters (a, b) whose body is
//                                                      `return a + b`, `a * b`, `maximum(a, b)` or
//                                                      `minimum(a, b)` (tl.maximum, tl.math.maximum,
//                                                      Python's max/min in a Triton file; the two
//                                                      names in either order; a docstring may come
//                                                      first), or the built-in tl.maximum /
//                                                      tl.minimum itself: the matching kind. The
//                                                      input keeps its dtype (i1 is refused).
//
// Expects: a tile operand (rank 1 or 2) of an int or float dtype. Guarantees: a scan op whose
// result has the input's (possibly converted) type; or a located error — a scalar or pointer
// operand, an axis that is not a constant or out of range (negative axes count from the end), a
// non-constant `reverse`, a combine function of any other form (named, with what is accepted),
// a tuple of inputs (Triton's multi-operand scans) — and poison.
#include "frontend/Sema.h"

namespace tl {

using namespace ast;

namespace {

// The names `a` and `b` in either order.
bool twoParams(const Expr& x, const Expr& y, const std::string& a, const std::string& b) {
  if (x.kind != ExprKind::Name || y.kind != ExprKind::Name) return false;
  return (x.str == a && y.str == b) || (x.str == b && y.str == a);
}

// The scan kind a combine function's body computes, or "" when it is not one of the four forms.
std::string combineKind(const Kernel& f) {
  if (f.params.size() != 2) return "";
  const std::string &a = f.params[0].name, &b = f.params[1].name;
  const Stmt* ret = nullptr;
  for (const auto& s : f.body) {
    const bool docstring = s->kind == StmtKind::ExprStmt && s->value && s->value->kind == ExprKind::String;
    if (docstring && !ret) continue;
    if (ret || s->kind != StmtKind::Return) return "";
    ret = s.get();
  }
  if (!ret || !ret->value) return "";
  const Expr& v = *ret->value;
  if (v.kind == ExprKind::Binary && v.lhs && v.rhs && twoParams(*v.lhs, *v.rhs, a, b)) {
    if (v.binOp == BinOp::Add) return "sum";
    if (v.binOp == BinOp::Mul) return "prod";
    return "";
  }
  if (v.kind != ExprKind::Call || !v.lhs || v.items.size() != 2 || !v.keywords.empty() ||
      !twoParams(*v.items[0], *v.items[1], a, b))
    return "";
  const Expr& callee = *v.lhs;
  if (callee.kind != ExprKind::Name && callee.kind != ExprKind::Attribute) return "";
  const std::string& n = callee.str;
  if (n == "maximum" || (callee.kind == ExprKind::Name && n == "max")) return "max";
  if (n == "minimum" || (callee.kind == ExprKind::Name && n == "min")) return "min";
  return "";
}

}  // namespace

// The kind of a combine_fn argument (a @jit function of one of combineKind's forms, or the
// built-in tl.maximum / tl.minimum), or "" after reporting an error.
std::string Sema::combineFnKind(const PyVal& fn, Loc loc, const std::string& f) {
  if (fn.isPoison()) return "";
  if (fn.kind == PyVal::Kind::Function && !fn.fn && (fn.s == "maximum" || fn.s == "minimum"))
    return fn.s == "maximum" ? "max" : "min";
  if (fn.kind != PyVal::Kind::Function || !fn.fn) {
    error(loc, f + "() combine_fn must be a @jit function of two values, got " + describe(fn));
    return "";
  }
  std::string kind = combineKind(*fn.fn);
  if (kind.empty()) {
    error(loc, f + "() combine_fn '" + fn.fn->name + "' is not supported: tilelab's " +
                   (f == "reduce" ? "reduce" : "scan") +
                   " takes a @jit function (a, b) that returns a + b, a * b, tl.maximum(a, b) or tl.minimum(a, b); write " +
                   (f == "reduce" ? "other reductions" : "other scans") + " with a loop");
    return "";
  }
  if (!fn.fn->decorator("jit")) {
    error(loc, f + "() combine_fn '" + fn.fn->name + "' must be a @triton.jit function");
    return "";
  }
  return kind;
}

// tl.reduce(input, axis, combine_fn, keep_dims=False).
PyVal Sema::builtinUserReduce(const Expr& e) {
  Args a;
  if (!bindArgs(e, "reduce", {"input", "axis", "combine_fn", "keep_dims"}, 3, a)) return PyVal::poison();
  const PyVal& x = a.vals[0];
  if (x.isPoison()) return PyVal::poison();
  if (x.kind == PyVal::Kind::Tuple)
    return fail(a.locs[0], "reduce() of a tuple of tiles (a multi-operand reduction, as argmax builds) is not supported: reduce one tile at a time");
  if (!x.isValue() || x.v->type.isPtr || x.v->type.isScalar())
    return fail(a.locs[0], "reduce() reduces a tile along an axis, got " + describe(x));
  const std::string kind = combineFnKind(a.vals[2], a.locs[2], "reduce");
  if (kind.empty()) return PyVal::poison();
  if (kind == "prod")
    return fail(a.locs[2], "reduce() with a product combine_fn is not supported: tilelab has no product reduction (tl.cumprod's last element is one)");
  Value* v = x.v;
  if (v->type.dtype == DType::I1) v = convert(v, DType::I32, e.loc);
  const bool keepDims = a.has(3) && a.vals[3].isIntConst() && a.vals[3].i;
  const int64_t rank = v->type.rank();
  if (a.vals[1].kind == PyVal::Kind::None) {
    Value* all = reduceAll(kind, v, e.loc);
    if (keepDims) all = at(e.loc).splat(all, Shape(static_cast<size_t>(rank), 1));
    return PyVal::value(all);
  }
  auto ax = constInt(a.vals[1], a.exprs[1], a.locs[1], "reduce() axis");
  if (!ax) return PyVal::poison();
  const int64_t axis = *ax < 0 ? *ax + rank : *ax;
  if (axis < 0 || axis >= rank)
    return fail(a.locs[1], "reduce() axis " + std::to_string(*ax) + " is out of range for " + v->type.str());
  Value* r = at(e.loc).reduce(kind, v, static_cast<int>(axis));
  if (keepDims) r = at(e.loc).expandDims(r, static_cast<int>(axis));
  return PyVal::value(r);
}

PyVal Sema::builtinScan(const Expr& e, const std::string& f) {
  Args a;
  const bool assoc = f == "associative_scan";
  std::vector<std::string> sig = f == "cumsum"   ? std::vector<std::string>{"input", "axis", "reverse", "dtype"}
                                 : f == "cumprod" ? std::vector<std::string>{"input", "axis", "reverse"}
                                                  : std::vector<std::string>{"input", "axis", "combine_fn", "reverse"};
  if (!bindArgs(e, f, sig, assoc ? 3 : 1, a)) return PyVal::poison();
  const size_t revSlot = assoc ? 3 : 2;
  const PyVal& x = a.vals[0];
  if (x.isPoison()) return PyVal::poison();
  if (x.kind == PyVal::Kind::Tuple)
    return fail(a.locs[0], f + "() of a tuple of tiles (a multi-operand scan) is not supported: scan one tile at a time");
  if (!x.isValue() || x.v->type.isPtr || x.v->type.isScalar())
    return fail(a.locs[0], f + "() scans a tile along an axis, got " + describe(x));

  // The kind.
  std::string kind = f == "cumsum" ? "sum" : "prod";
  if (assoc) {
    kind = combineFnKind(a.vals[2], a.locs[2], f);
    if (kind.empty()) return PyVal::poison();
  }

  // axis and reverse: compile-time constants.
  int64_t axisArg = 0;
  if (a.has(1)) {
    auto ax = constInt(a.vals[1], a.exprs[1], a.locs[1], f + "() axis");
    if (!ax) return PyVal::poison();
    axisArg = *ax;
  } else if (assoc) {
    return fail(e.loc, "associative_scan() needs an axis");
  }
  bool reverse = false;
  if (a.has(revSlot)) {
    if (!a.vals[revSlot].isIntConst()) {
      if (a.vals[revSlot].isPoison()) return PyVal::poison();
      return fail(a.locs[revSlot], f + "() reverse must be a compile-time True or False, got " + describe(a.vals[revSlot]));
    }
    reverse = a.vals[revSlot].i != 0;
  }
  Value* v = x.v;
  const int64_t rank = v->type.rank();
  const int64_t axis = axisArg < 0 ? axisArg + rank : axisArg;
  if (axis < 0 || axis >= rank)
    return fail(a.has(1) ? a.locs[1] : e.loc,
                f + "() axis " + std::to_string(axisArg) + " is out of range for " + v->type.str());

  // dtypes.
  if (f == "cumsum" && a.has(3)) {  // cumsum(x, dtype=...): x converted first, as sum(dtype=)
    auto dt = dtypeArg(a, 3, DType::F32, f);
    if (!dt) return PyVal::poison();
    v = convert(v, *dt, e.loc);
  }
  if (!assoc && v->type.dtype == DType::I1) v = convert(v, DType::I32, e.loc);  // counts, as sum() does
  if (!assoc && v->type.dtype == DType::BF16) v = convert(v, DType::F32, e.loc);  // Triton scans bf16 in f32
  if (v->type.dtype == DType::I1)
    return fail(a.locs[0], "associative_scan() of an int1 tile is not supported: convert it first, x.to(tl.int32)");
  return PyVal::value(at(e.loc).scan(kind, v, static_cast<int>(axis), reverse));
}

}  // namespace tl
