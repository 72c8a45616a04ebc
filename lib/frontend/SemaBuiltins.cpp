// Sema, part 2: the built-in functions (docs/language.md, "Built-ins"). Each built-in binds its
// arguments against a signature, checks shapes/dtypes/constexpr-ness with a located message,
// and builds the ops. Arguments are evaluated exactly once, left to right.
#include <cmath>

#include "frontend/CallArgs.h"
#include "frontend/ConstFold.h"
#include "frontend/Sema.h"
#include "frontend/Suggest.h"

namespace tl {

using namespace ast;

bool Sema::bindArgs(const Expr& call, const std::string& fname, const std::vector<std::string>& sig,
                    size_t required, Args& out) {
  out.vals.assign(sig.size(), PyVal::poison());
  out.locs.assign(sig.size(), call.loc);
  out.exprs.assign(sig.size(), nullptr);
  const PyVal* self = self_;
  self_ = nullptr;  // only the call being bound gets it, not the calls inside its arguments
  if (self && !sig.empty()) {
    out.vals[0] = *self;
    out.locs[0] = call.lhs && call.lhs->lhs ? call.lhs->lhs->loc : call.loc;
  }
  return bindCallArgs(
      call, fname, sig, required, /*stopAtFirst=*/false, out.given,
      [&](const Expr& arg, size_t slot) {
        PyVal v = eval(arg);
        const bool ok = !v.isPoison();  // a poisoned argument was reported where it failed
        if (slot < sig.size()) {
          out.vals[slot] = std::move(v);
          out.locs[slot] = arg.loc;
          out.exprs[slot] = &arg;
        }
        return ok;
      },
      [&](Loc loc, const std::string& msg) { error(loc, msg); }, self ? 1 : 0) &&
         !fp8Argument(fname, out);
}

// The built-ins that compute on their tile argument (math, reductions, scans): an fp8 tile
// there is an error (fp8 is a storage type; Triton's compiler rejects these too). The built-ins
// of two or three operands (maximum, fma, ...) check their promoted dtype instead (SemaMath.cpp).
bool Sema::fp8Argument(const std::string& fname, const Args& a) {
  static const std::set<std::string> kComputing = {
      "max", "min", "sum", "argmax", "argmin", "cumsum", "cumprod", "associative_scan", "softmax", "sqrt_rn",
      "exp", "exp2", "log", "sqrt", "rsqrt", "sigmoid", "abs", "log2", "cos", "sin", "floor", "ceil", "erf",
      "asin", "acos", "atan", "tan", "sinh", "cosh", "tanh", "log10", "log1p", "expm1", "exp10", "cbrt", "rcp",
      "trunc", "round", "rint", "nearbyint", "isnan", "isinf", "isfinite", "signbit"};
  if (!kComputing.count(fname)) return false;
  for (size_t k = 0; k < a.vals.size(); ++k)
    if (refuseFp8(a.vals[k], nullptr, a.vals[k].isValue() ? a.vals[k].v->type.dtype : DType::F32, a.locs[k], fname + "()"))
      return true;
  return false;
}

// A compile-time integer, or a constexpr error that says how to make it one.
std::optional<int64_t> Sema::constInt(const PyVal& p, const Expr* e, Loc loc, const std::string& what) {
  if (p.isIntConst()) return p.i;
  if (p.isPoison()) return std::nullopt;
  if (p.isValue()) {
    if (e && e->kind == ExprKind::Name && paramValues_.count(p.v))
      error(loc, "'" + e->str + "' must be a compile-time constant (" + what + "): declare it `" + e->str + ": constexpr`");
    else
      error(loc, what + " must be a compile-time constant, but this value is only known at runtime "
                        "(use constexpr parameters and literals)");
    return std::nullopt;
  }
  error(loc, what + " must be an integer, got " + describe(p));
  return std::nullopt;
}

std::optional<Shape> Sema::constShape(const PyVal& p, const Expr* e, Loc loc, const std::string& fname) {
  Shape s;
  if (p.kind == PyVal::Kind::Tuple) {
    for (size_t k = 0; k < p.items.size(); ++k) {
      const Expr* sub = e && e->kind == ExprKind::Tuple && k < e->items.size() ? e->items[k].get() : nullptr;
      auto d = constInt(p.items[k], sub, sub ? sub->loc : loc, fname + "() shape");
      if (!d) return std::nullopt;
      s.push_back(*d);
    }
  } else {
    auto d = constInt(p, e, loc, fname + "() shape");
    if (!d) return std::nullopt;
    s.push_back(*d);
  }
  if (s.empty()) {
    error(loc, fname + "() shape must have at least 1 dimension");
    return std::nullopt;
  }
  if (s.size() > static_cast<size_t>(kMaxTileRank)) {
    error(loc, "tiles have at most " + std::to_string(kMaxTileRank) + " dimensions, this would make " + std::to_string(s.size()));
    return std::nullopt;
  }
  for (int64_t d : s)
    if (!isPowerOfTwo(d)) {
      error(loc, fname + "() shape dimensions must be powers of two, got " + std::to_string(d));
      return std::nullopt;
    }
  if (!checkTileSize(s, loc)) return std::nullopt;
  return s;
}

std::optional<DType> Sema::dtypeArg(const Args& a, size_t k, DType dflt, const std::string& fname) {
  if (!a.has(k)) return dflt;
  if (a.vals[k].kind == PyVal::Kind::DType && !a.vals[k].s.empty()) {
    const std::string& n = a.vals[k].s;
    const bool amd = n.find("float8e4b8") != std::string::npos || n.find("float8e5b16") != std::string::npos;
    const bool legacy = n.find("float8e4b15") != std::string::npos;
    if (amd || legacy)
      error(a.locs[k], n + " is not supported: it is " +
                           (amd ? std::string("an AMD (fnuz, MI300) fp8 format") : std::string("Triton's legacy pre-sm_89 fp8 format")) +
                           ", which tilelab does not model; its fp8 dtypes are tl.float8e4nv (e4m3) and tl.float8e5 (e5m2)");
    else
      error(a.locs[k], n + " is not supported: tilelab's dtypes are int1, int32, int64, float16, bfloat16, float32, "
                           "float8e4nv and float8e5");
    return std::nullopt;
  }
  if (a.vals[k].kind != PyVal::Kind::DType || a.vals[k].ptrTo) {
    error(a.locs[k], fname + "() dtype must be a dtype such as tl.float32 or f16, got " + describe(a.vals[k]) +
                         (a.vals[k].ptrTo ? " (pointer casts are not supported)" : ""));
    return std::nullopt;
  }
  return a.vals[k].dtype;
}

// A mask argument: an i1 value (or True/False) broadcast to `shape`.
Value* Sema::maskArg(const PyVal& m, const Shape& shape, Loc loc, const std::string& fname) {
  if (m.kind == PyVal::Kind::Bool) return materialize(m, DType::I1, shape, loc);
  if (!m.isValue() || m.v->type.isPtr || m.v->type.dtype != DType::I1) {
    error(loc, fname + "() mask must be i1 (a comparison such as offs < N), got " + describe(m));
    return nullptr;
  }
  auto s = broadcastShape(m.v->type.shape, shape);
  if (!s || *s != shape) {
    error(loc, fname + "() mask of shape " + m.v->type.str() + " cannot be broadcast to the pointers' shape " +
                   Type::tile(DType::I1, shape).str());
    return nullptr;
  }
  return broadcastTo(m.v, shape, loc);
}

// ---- dispatch ------------------------------------------------------------------------------

// f(...), tl.f(...), x.f(...): a @jit function of the file is inlined, tl.f is the built-in f,
// x.f(...) is a method of the value x.
PyVal Sema::evalCall(const Expr& e) {
  PyVal callee;
  if (e.lhs->kind == ExprKind::Attribute) {
    PyVal base = eval(*e.lhs->lhs);
    if (base.kind != PyVal::Kind::Module) return evalMethod(e, base);
    callee = moduleMember(base, e.lhs->str, e.lhs->loc);
  } else if (e.lhs->kind == ExprKind::Name) {
    auto it = env_.find(e.lhs->str);
    if (it == env_.end()) {
      bool handled = false;
      PyVal r = pythonBuiltin(e, e.lhs->str, handled);
      if (handled) return r;
      return callBuiltin(e, e.lhs->str);
    }
    callee = it->second.val;
    if (callee.kind != PyVal::Kind::Function && !callee.isPoison())
      return fail(e.loc, "'" + e.lhs->str + "' is a variable here, not a function");
  } else {
    for (const auto& a : e.items) eval(*a);
    return fail(e.loc, "only functions can be called");
  }
  if (callee.isPoison()) {
    for (const auto& a : e.items) eval(*a);
    return callee;
  }
  if (callee.kind != PyVal::Kind::Function) return fail(e.loc, describe(callee) + " cannot be called");
  if (callee.fn) return inlineCall(*callee.fn, e);
  return callBuiltin(e, callee.s);
}

PyVal Sema::callBuiltin(const Expr& e, const std::string& f, const PyVal* self) {
  self_ = self;
  if (f == "program_id" || f == "num_programs") return builtinProgramId(e, f);
  if (f == "arange") return builtinArange(e);
  if (f == "zeros" || f == "full") return builtinZerosFull(e, f);
  if (f == "load") return builtinLoad(e);
  if (f == "store") return builtinStore(e);
  if (f == "max" || f == "min" || f == "sum") return builtinReduce(e, f);
  if (f == "argmax") return builtinArgmax(e);
  if (f == "cumsum" || f == "cumprod" || f == "associative_scan") return builtinScan(e, f);
  if (f == "reduce") return builtinUserReduce(e);
  if (f == "sort" || f == "topk" || f == "flip" || f == "gather" || f == "histogram" || f == "swizzle2d")
    return builtinSort(e, f);
  if (f == "exp" || f == "exp2" || f == "log" || f == "sqrt" || f == "rsqrt" || f == "sigmoid" || f == "abs")
    return builtinMath(e, f);
  if (f == "log2" || f == "cos" || f == "sin" || f == "floor" || f == "ceil" || f == "erf") return builtinMath(e, f);
  static const std::set<std::string> kLibdeviceMath = {  // SemaMath.cpp (libdevice / tl.math)
      "asin", "acos", "atan", "tan", "sinh", "cosh", "tanh", "log10", "log1p", "expm1", "exp10", "cbrt", "rcp",
      "trunc", "round", "rint", "nearbyint", "atan2", "pow", "hypot", "isnan", "isinf", "isfinite", "signbit"};
  if (kLibdeviceMath.count(f)) return builtinMath(e, f);
  if (f == "fma") return builtinFma(e);
  if (f == "umulhi") return builtinUmulhi(e);
  if (f == "clamp") return builtinClamp(e);
  if (f == "atomic_add" || f == "atomic_max" || f == "atomic_min" || f == "atomic_and" || f == "atomic_or") return builtinAtomic(e, f);
  if (f == "atomic_xor" || f == "atomic_xchg" || f == "atomic_cas") return builtinAtomic(e, f);
  if (f == "debug_barrier") return builtinDebugBarrier(e);
  if (f == "device_print" || f == "print") return builtinDevicePrint(e, f);
  if (f == "device_assert") return builtinDeviceAssert(e);
  if (f == "static_print") return builtinStaticPrint(e);
  if (f == "where") return builtinWhere(e);
  if (f == "maximum" || f == "minimum") return builtinMinMaximum(e, f);
  if (f == "dot") return builtinDot(e);
  if (f == "trans") return builtinShape(e, f);  // trans(x, *dims): SemaTriton.cpp
  if (f == "cdiv") return builtinCdiv(e);
  if (f == "range" || f == "static_range")
    return fail(e.loc, f + "() can only be used in a for loop: for i in tl." + f + "(...)");
  if (f == "static_assert") return builtinStaticAssert(e);
  if (f == "rand" || f == "randn" || f == "randint" || f == "rand4x" || f == "randn4x" || f == "randint4x")
    return builtinRandom(e, f);
  if (f == "multiple_of" || f == "max_contiguous" || f == "max_constancy") return builtinHint(e, f);
  if (f == "assume") return builtinAssume(e);
  if (f == "make_block_ptr" || f == "make_tensor_descriptor") return builtinMakeBlockPtr(e, f);
  if (f == "advance") return builtinAdvance(e);
  if (f == "load_tensor_descriptor" || f == "store_tensor_descriptor") return descriptorAccess(e, f, nullptr);
  if (f == "zeros_like" || f == "broadcast_to" || f == "expand_dims" || f == "permute" || f == "reshape" ||
      f == "view" || f == "ravel" || f == "broadcast" || f == "join" || f == "split")
    return builtinShape(e, f);
  if (f == "pointer_type") return builtinPointerType(e);
  if (f == "cast") {  // tl.cast(x, dtype, ...): x.to(dtype, ...)
    Args a;
    if (!bindArgs(e, "cast", {"input", "dtype", "fp_downcast_rounding", "bitcast"}, 2, a)) return PyVal::poison();
    return castValue(a.vals[0], a, 1, e.loc, "cast()");
  }
  if (f == "softmax" || f == "fdiv" || f == "div_rn" || f == "sqrt_rn" || f == "argmin") return builtinTritonMath(e, f);
  if (f == "constexpr") {  // tl.constexpr(3): the value itself
    Args a;
    if (!bindArgs(e, "constexpr", {"value"}, 1, a)) return PyVal::poison();
    return a.vals[0];
  }
  self_ = nullptr;
  if (f.rfind("triton.", 0) == 0) {
    for (const auto& arg : e.items) eval(*arg);
    return fail(e.lhs->loc, f + " is host-side Python: a kernel cannot call it (tl.* built-ins run in kernels)");
  }
  return unknownFunction(e, f, e.lhs->kind == ExprKind::Attribute ? e.lhs->loc : e.lhs->loc);  // print(...), or a typo: SemaExpr.cpp
}

// trans(x), x.T and permute(x, dims): one trans op at `loc` (result dim j is x's dim order[j]);
// `what` names the spelling. An empty order reverses a 2-D tile's dims (x.T, trans(x)).
PyVal Sema::transpose(const PyVal& x, Loc argLoc, Loc loc, const char* what, std::vector<int> order) {
  if (!x.isValue() || x.v->type.isScalar() || (order.empty() && x.v->type.rank() != 2))
    return fail(argLoc, std::string(what) + (order.empty() ? " needs a 2-D tile, got " : " needs a tile, got ") + describe(x) +
                            (order.empty() ? " (trans(x, *dims) and permute(x, dims) permute a tile of any rank)" : ""));
  const Type& t = x.v->type;
  if (order.empty()) order = {1, 0};
  std::vector<int> seen(static_cast<size_t>(t.rank()), 0);
  bool perm = static_cast<int>(order.size()) == t.rank();
  for (int& d : order) {
    if (d < 0) d += t.rank();
    perm = perm && d >= 0 && d < t.rank() && !seen[static_cast<size_t>(d)]++;
  }
  if (!perm) return fail(loc, std::string(what) + " dims must be a permutation of 0.." + std::to_string(t.rank() - 1) + " for " + t.str());
  bool identity = true;
  Shape s;
  for (size_t j = 0; j < order.size(); ++j) {
    identity = identity && order[j] == static_cast<int>(j);
    s.push_back(t.shape[static_cast<size_t>(order[j])]);
  }
  if (identity) return x;
  std::vector<NamedAttr> attrs;
  if (t.rank() != 2) attrs.push_back({"order", Attr(std::vector<int64_t>(order.begin(), order.end()))});
  return PyVal::value(at(loc).create(OpKind::Trans, {x.v}, {t.withShape(s)}, attrs)->result());
}

// Tensor methods Triton has that are the built-in of the same name applied to the tensor.
static const std::vector<std::string> kTensorMethods = {
    "sum", "max", "min", "argmax", "exp", "exp2", "log", "log2", "sqrt", "rsqrt", "abs", "sigmoid", "cos", "sin",
    "floor", "ceil", "erf", "trans", "broadcast_to", "expand_dims", "permute", "reshape", "view", "split", "to",
    "cumsum", "cumprod", "sort", "flip", "histogram"};

// x.to(dtype), x.sum(axis), ... (kTensorMethods), and a dtype's predicates (x.dtype.is_fp16()).
PyVal Sema::evalMethod(const Expr& e, const PyVal& base) {
  const Expr& attr = *e.lhs;
  if (base.isPoison()) {
    for (const auto& a : e.items) eval(*a);
    bool known = false;
    for (const auto& m : kTensorMethods) known |= m == attr.str;
    // (after a name that failed, `tl.program_id`, the name's error says it all)
    if (!known && attr.lhs->kind != ExprKind::Name)
      error(attr.loc, "unknown method '." + attr.str + "'" + didYouMean(attr.str, kTensorMethods));
    return base;
  }
  if (base.kind == PyVal::Kind::DType && e.items.empty() && e.keywords.empty()) {
    const DType d = base.dtype;
    const std::string& m = attr.str;
    std::optional<bool> r;
    if (m == "is_ptr") r = base.ptrTo;
    else if (base.ptrTo) r = false;
    else if (m == "is_floating") r = isFloat(d);
    else if (m == "is_int") r = isInt(d) || d == DType::I1;
    else if (m == "is_int_signed") r = isInt(d);
    else if (m == "is_fp16") r = d == DType::F16;
    else if (m == "is_bf16") r = d == DType::BF16;
    else if (m == "is_fp8") r = isFp8(d);
    else if (m == "is_fp8e4nv") r = d == DType::F8E4M3;
    else if (m == "is_fp8e5") r = d == DType::F8E5M2;
    else if (m == "is_fp32") r = d == DType::F32;
    else if (m == "is_int1" || m == "is_bool") r = d == DType::I1;
    else if (m == "is_int32") r = d == DType::I32;
    else if (m == "is_int64") r = d == DType::I64;
    if (r) return PyVal::boolean(*r);
  }
  if (base.kind == PyVal::Kind::TensorDesc && (attr.str == "load" || attr.str == "store"))
    return descriptorAccess(e, attr.str, &base);
  if (!(base.isValue() || base.isConst()) || attr.str != "to") {
    bool method = false;
    for (const auto& m : kTensorMethods) method |= m == attr.str;
    if (base.isValue() && method) return callBuiltin(e, attr.str, &base);
    for (const auto& a : e.items) eval(*a);
    return fail(attr.loc, "unknown method '." + attr.str + "' of " + describe(base) + didYouMean(attr.str, kTensorMethods));
  }
  Args a;
  if (!bindArgs(e, "to", {"dtype", "fp_downcast_rounding", "bitcast"}, 1, a)) return PyVal::poison();
  return castValue(base, a, 0, attr.loc, ".to()");
}

// x.to(dtype, fp_downcast_rounding, bitcast) and tl.cast(x, dtype, ...): `a` holds the three
// arguments from slot `first`.
PyVal Sema::castValue(const PyVal& base, const Args& a, size_t first, Loc loc, const std::string& what) {
  if (a.has(first + 2) && !(a.vals[first + 2].isIntConst() && a.vals[first + 2].i == 0))
    return fail(a.locs[first + 2], what + " with bitcast=True is not supported: tilelab converts values, it does not reinterpret bits");
  if (a.has(first + 1) && !(a.vals[first + 1].kind == PyVal::Kind::String && a.vals[first + 1].s == "rtne"))
    return fail(a.locs[first + 1], what + " rounds to nearest even (fp_downcast_rounding='rtne'); other roundings are not supported");
  if (a.has(first) && a.vals[first].kind == PyVal::Kind::DType && a.vals[first].s.empty() &&
      (a.vals[first].ptrTo || (base.isValue() && base.v->type.isPtr)))
    return pointerCast(base, a.vals[first], a.locs[first], loc, what);
  auto dt = dtypeArg(a, first, DType::F32, "to");
  if (!dt) return PyVal::poison();
  if (base.isPoison()) return base;
  if (base.isConst()) return PyVal::value(materialize(base, *dt, {}, loc));
  if (!base.isValue()) return fail(loc, what + " needs a number or a tile, got " + describe(base));
  if (base.v->type.isPtr) return fail(loc, "pointers cannot be converted with " + what);
  return PyVal::value(convert(base.v, *dt, loc));
}

// ---- the built-ins -------------------------------------------------------------------------

PyVal Sema::builtinProgramId(const Expr& e, const std::string& f) {
  Args a;
  if (!bindArgs(e, f, {"axis"}, 1, a)) return PyVal::poison();
  auto axis = constInt(a.vals[0], a.exprs[0], a.locs[0], f + "() axis");
  if (!axis) return PyVal::poison();
  if (*axis < 0 || *axis > 2) return fail(a.locs[0], f + "() axis must be 0, 1 or 2, got " + std::to_string(*axis));
  Builder& B = at(e.loc);
  return PyVal::value(f == "program_id" ? B.programId(static_cast<int>(*axis)) : B.numPrograms(static_cast<int>(*axis)));
}

PyVal Sema::builtinArange(const Expr& e) {
  Args a;
  if (!bindArgs(e, "arange", {"start", "end"}, 2, a)) return PyVal::poison();
  auto start = constInt(a.vals[0], a.exprs[0], a.locs[0], "arange() start");
  auto end = constInt(a.vals[1], a.exprs[1], a.locs[1], "arange() end");
  if (!start || !end) return PyVal::poison();
  if (!fitsI32(*start) || !fitsI32(*end)) return fail(e.loc, "arange() bounds must fit in i32");
  int64_t n = *end - *start;
  if (!isPowerOfTwo(n))
    return fail(e.loc, "arange(" + std::to_string(*start) + ", " + std::to_string(*end) + ") has " + std::to_string(n) +
                           " elements: the size must be a power of two (round up with next_pow2 and mask the rest)");
  if (!checkTileSize({n}, e.loc)) return PyVal::poison();
  return PyVal::value(at(e.loc).arange(*start, *end));
}

PyVal Sema::builtinZerosFull(const Expr& e, const std::string& f) {
  Args a;
  bool full = f == "full";
  std::vector<std::string> sig = full ? std::vector<std::string>{"shape", "value", "dtype"}
                                      : std::vector<std::string>{"shape", "dtype"};
  if (!bindArgs(e, f, sig, full ? 2 : 1, a)) return PyVal::poison();
  if (a.vals[0].kind == PyVal::Kind::Tuple && a.vals[0].items.empty()) {  // full((), v): a scalar
    auto dt = dtypeArg(a, full ? 2 : 1, DType::F32, f);
    if (!dt) return PyVal::poison();
    const PyVal value = full ? a.vals[1] : PyVal::integer(0);
    if (value.isConst()) return PyVal::value(materialize(value, *dt, {}, e.loc));
    if (!value.isValue() || value.v->type.isPtr || !value.v->type.isScalar())
      return fail(a.locs[1], "full() value must be a number or a scalar, got " + describe(value));
    return PyVal::value(convert(value.v, *dt, e.loc));
  }
  auto shape = constShape(a.vals[0], a.exprs[0], a.locs[0], f);
  auto dt = dtypeArg(a, full ? 2 : 1, DType::F32, f);
  if (!shape || !dt) return PyVal::poison();
  PyVal value = full ? a.vals[1] : PyVal::integer(0);
  if (value.isConst()) return PyVal::value(materialize(value, *dt, *shape, e.loc));
  if (!value.isValue() || value.v->type.isPtr || !value.v->type.isScalar())
    return fail(a.locs[1], "full() value must be a number or a scalar, got " + describe(value));
  return PyVal::value(at(e.loc).splat(convert(value.v, *dt, e.loc), *shape));
}

// Triton's cache and eviction hints: accepted (strings / a bool); tilelab's memory model does not use them.
static bool cacheHintsOk(const Sema::Args& a, size_t from, const std::string& f, std::string& why) {
  for (size_t k = from; k < a.vals.size(); ++k) {
    if (!a.has(k)) continue;
    const PyVal& v = a.vals[k];
    const bool ok = v.kind == PyVal::Kind::String || v.kind == PyVal::Kind::Bool || v.isIntConst();
    if (!ok) {
      why = f + "() cache hints must be strings such as \".cg\" or \"evict_last\"";
      return false;
    }
  }
  return true;
}

PyVal Sema::builtinLoad(const Expr& e) {
  Args a;
  if (!bindArgs(e, "load", {"pointer", "mask", "other", "boundary_check", "padding_option", "cache_modifier",
                            "eviction_policy", "volatile"}, 1, a))
    return PyVal::poison();
  std::string why;
  if (!cacheHintsOk(a, 5, "load", why)) return fail(e.loc, why);
  const PyVal& p = a.vals[0];
  if (p.kind == PyVal::Kind::BlockPtr) return loadBlockPtr(e, a);
  if (a.has(3) || a.has(4))
    return fail(a.locs[a.has(3) ? 3 : 4], "boundary_check= and padding_option= are for block pointers (tl.make_block_ptr); "
                                          "for a tile of pointers use mask= and other=");
  if (!p.isValue() || !p.v->type.isPtr)
    return fail(a.locs[0], "load() needs a pointer (e.g. x_ptr + offsets), got " + describe(p));
  Value* ptr = p.v;
  const Shape& shape = ptr->type.shape;
  Value* mask = nullptr;
  Value* other = nullptr;
  if (a.has(1)) {
    mask = maskArg(a.vals[1], shape, a.locs[1], "load");
    if (!mask) return PyVal::poison();
  }
  if (a.has(2) && mask) {
    const PyVal& o = a.vals[2];
    DType elem = ptr->type.dtype;
    if (o.isConst()) {
      other = materialize(o, elem, shape, a.locs[2]);
    } else if (o.isValue() && !o.v->type.isPtr) {
      auto s = broadcastShape(o.v->type.shape, shape);
      if (!s || *s != shape)
        return fail(a.locs[2], "load() other of shape " + o.v->type.str() + " cannot be broadcast to the pointers' shape");
      other = broadcastTo(convert(o.v, elem, a.locs[2]), shape, a.locs[2]);
    } else {
      return fail(a.locs[2], "load() other must be a number or a tile, got " + describe(o));
    }
  }
  return PyVal::value(at(e.loc).load(ptr, mask, other));
}

PyVal Sema::builtinStore(const Expr& e) {
  Args a;
  if (!bindArgs(e, "store", {"pointer", "value", "mask", "boundary_check", "cache_modifier", "eviction_policy"}, 2, a))
    return PyVal::poison();
  std::string why;
  if (!cacheHintsOk(a, 4, "store", why)) return fail(e.loc, why);
  const PyVal& p = a.vals[0];
  if (p.kind == PyVal::Kind::BlockPtr) return storeBlockPtr(e, a);
  if (a.has(3)) return fail(a.locs[3], "boundary_check= is for block pointers (tl.make_block_ptr); for a tile of pointers use mask=");
  if (!p.isValue() || !p.v->type.isPtr)
    return fail(a.locs[0], "store() needs a pointer (e.g. out_ptr + offsets), got " + describe(p));
  Value* mask = nullptr;
  if (a.has(2)) {
    mask = maskArg(a.vals[2], p.v->type.shape, a.locs[2], "store");
    if (!mask) return PyVal::poison();
  }
  return storeTile(p.v, a.vals[1], a.locs[1], mask, e.loc);
}

PyVal Sema::storeTile(Value* ptr, const PyVal& v, Loc valueLoc, Value* mask, Loc loc) {
  const Shape& shape = ptr->type.shape;
  Value* value = nullptr;
  if (v.isConst()) {
    value = materialize(v, ptr->type.dtype, shape, valueLoc);
  } else if (v.isValue() && !v.v->type.isPtr) {
    auto s = broadcastShape(v.v->type.shape, shape);
    if (!s || *s != shape)
      return fail(valueLoc, "cannot store a value of shape " + v.v->type.str() + " through pointers of shape " +
                                ptr->type.str() + ": the value must broadcast to the pointers' shape");
    value = broadcastTo(convert(v.v, ptr->type.dtype, valueLoc), shape, valueLoc);
  } else {
    return fail(valueLoc, "store() value must be a number or a tile, got " + describe(v));
  }
  at(loc).store(ptr, value, mask);
  return PyVal::none();
}

Value* Sema::reduceAll(const std::string& kind, Value* x, Loc loc) {
  while (x->type.rank() > 0) x = at(loc).reduce(kind, x, x->type.rank() - 1);
  return x;
}

// max/min/sum(x, axis=None). `max(a, b)` of two constants folds, as in Python.
// Triton's forms: sum(x, axis, keep_dims=False, dtype=None); max/min(x, axis, return_indices=False,
// return_indices_tie_break_left=True, keep_dims=False) (return_indices: the tuple (value, index)).
PyVal Sema::builtinReduce(const Expr& e, const std::string& f) {
  Args a;
  const bool isSum = f == "sum";
  std::vector<std::string> sig = isSum ? std::vector<std::string>{"x", "axis", "keep_dims", "dtype"}
                                       : std::vector<std::string>{"x", "axis", "return_indices", "return_indices_tie_break_left", "keep_dims"};
  if (!bindArgs(e, f, sig, 1, a)) return PyVal::poison();
  const size_t keepSlot = isSum ? 2 : 4;
  const bool keepDims = a.has(keepSlot) && a.vals[keepSlot].isIntConst() && a.vals[keepSlot].i;
  const bool indices = !isSum && a.has(2) && a.vals[2].isIntConst() && a.vals[2].i;
  if (!isSum && a.has(3) && !(a.vals[3].isIntConst() && a.vals[3].i))
    return fail(a.locs[3], f + "() with return_indices_tie_break_left=False is not supported: the first index is returned");
  if (isSum && a.has(3)) {  // sum(x, dtype=...): x converted first
    auto dt = dtypeArg(a, 3, DType::F32, f);
    if (!dt) return PyVal::poison();
    if (a.vals[0].isValue() && !a.vals[0].v->type.isPtr) a.vals[0] = PyVal::value(convert(a.vals[0].v, *dt, e.loc));
  }
  const PyVal& x = a.vals[0];
  if (f != "sum" && x.isConst() && a.given[1] && a.vals[1].isConst() && e.keywords.empty()) {
    const PyVal& y = a.vals[1];
    bool second = f == "max" ? y.asDouble() > x.asDouble() : y.asDouble() < x.asDouble();
    return second ? y : x;
  }
  if (!x.isValue() || x.v->type.isPtr || x.v->type.isScalar()) {
    std::string hint = f == "sum" ? "" : std::string(" (for the elementwise ") + f + " of two values use " + f + "imum(a, b))";
    return fail(a.locs[0], f + "() reduces a tile, got " + describe(x) + hint);
  }
  Value* v = x.v;
  if (v->type.dtype == DType::I1) v = convert(v, DType::I32, e.loc);  // sum of i1 counts in i32
  if (!a.has(1)) {
    if (indices) return fail(e.loc, f + "(return_indices=True) needs an axis");
    Value* all = reduceAll(f, v, e.loc);
    if (keepDims) all = at(e.loc).splat(all, Shape(static_cast<size_t>(v->type.rank()), 1));
    return PyVal::value(all);
  }
  if (a.vals[1].isValue() && !e.keywords.size() && f != "sum")
    return fail(a.locs[1], "the second argument of " + f + "() is the axis; for the elementwise " + f + " of two values use " + f + "imum(a, b)");
  auto axis = constInt(a.vals[1], a.exprs[1], a.locs[1], f + "() axis");
  if (!axis) return PyVal::poison();
  int64_t r = v->type.rank();
  int64_t ax = *axis < 0 ? *axis + r : *axis;
  if (ax < 0 || ax >= r)
    return fail(a.locs[1], f + "() axis " + std::to_string(*axis) + " is out of range for " + v->type.str());
  auto keep = [&](Value* red) {
    if (!keepDims) return red;
    return red->type.isScalar() ? at(e.loc).splat(red, {1}) : at(e.loc).expandDims(red, static_cast<int>(ax));
  };
  Value* red = keep(at(e.loc).reduce(f, v, static_cast<int>(ax)));
  if (!indices) return PyVal::value(red);
  // The index of the first max (min: of the first max of the order-reversed values).
  Value* src = f == "max" ? v : at(e.loc).unary(isFloat(v->type.dtype) ? OpKind::Neg : OpKind::Not, v);
  return PyVal::tuple({PyVal::value(red), PyVal::value(keep(at(e.loc).argmax(src, static_cast<int>(ax))))});
}

PyVal Sema::builtinArgmax(const Expr& e) {
  Args a;
  if (!bindArgs(e, "argmax", {"x", "axis"}, 2, a)) return PyVal::poison();
  const PyVal& x = a.vals[0];
  if (!x.isValue() || x.v->type.isPtr || x.v->type.isScalar())
    return fail(a.locs[0], "argmax() needs a tile, got " + describe(x));
  auto axis = constInt(a.vals[1], a.exprs[1], a.locs[1], "argmax() axis");
  if (!axis) return PyVal::poison();
  Value* v = x.v;
  if (v->type.dtype == DType::I1) v = convert(v, DType::I32, e.loc);
  int64_t r = v->type.rank();
  int64_t ax = *axis < 0 ? *axis + r : *axis;
  if (ax < 0 || ax >= r)
    return fail(a.locs[1], "argmax() axis " + std::to_string(*axis) + " is out of range for " + v->type.str());
  return PyVal::value(at(e.loc).argmax(v, static_cast<int>(ax)));
}

PyVal Sema::builtinWhere(const Expr& e) {
  Args a;
  if (!bindArgs(e, "where", {"condition", "x", "y"}, 3, a)) return PyVal::poison();
  // An integer or float condition means `!= 0`, as Triton casts it to i1.
  if (a.vals[0].isValue() && !a.vals[0].v->type.isPtr && a.vals[0].v->type.dtype != DType::I1)
    a.vals[0] = binary(BinOp::Ne, a.vals[0], PyVal::integer(0), a.locs[0]);
  if (a.vals[0].kind == PyVal::Kind::Int || a.vals[0].kind == PyVal::Kind::Float)
    a.vals[0] = PyVal::boolean(a.vals[0].asDouble() != 0);
  const PyVal &c = a.vals[0], &x = a.vals[1], &y = a.vals[2];
  if (c.kind == PyVal::Kind::Bool && x.isConst() && y.isConst()) return c.i ? x : y;
  if (!(c.kind == PyVal::Kind::Bool || (c.isValue() && !c.v->type.isPtr && c.v->type.dtype == DType::I1)))
    return fail(a.locs[0], "where() condition must be i1 (a comparison), got " + describe(c));
  for (size_t k = 1; k < 3; ++k)
    if (!a.vals[k].isConst() && !(a.vals[k].isValue() && !a.vals[k].v->type.isPtr))
      return fail(a.locs[k], "where() values must be numbers or tiles, got " + describe(a.vals[k]));
  Value *va = nullptr, *vb = nullptr;
  PyVal xx = x, yy = y;
  if (x.isConst() && y.isConst()) xx = PyVal::value(materialize(x, promote(weakDType(x), weakDType(y)), {}, e.loc));
  if (!unify(xx, yy, e.loc, va, vb)) return PyVal::poison();
  Shape cs = c.isValue() ? c.v->type.shape : Shape{};
  auto shape = broadcastShape(cs, va->type.shape);
  if (!shape) return fail(e.loc, "cannot broadcast the condition " + c.v->type.str() + " and the values " + va->type.str());
  if (!checkTileSize(*shape, e.loc)) return PyVal::poison();
  Value* cond = c.isValue() ? broadcastTo(c.v, *shape, e.loc) : materialize(c, DType::I1, *shape, e.loc);
  va = broadcastTo(va, *shape, e.loc);
  vb = broadcastTo(vb, *shape, e.loc);
  return PyVal::value(at(e.loc).select(cond, va, vb));
}

PyVal Sema::builtinDot(const Expr& e) {
  Args a;
  if (!bindArgs(e, "dot", {"a", "b", "acc", "input_precision", "allow_tf32", "max_num_imprecise_acc", "out_dtype"}, 2, a))
    return PyVal::poison();
  // Precision of f32 inputs (Triton's input_precision / allow_tf32): "tf32" reads them as tf32
  // and runs on tensor cores, "ieee" multiplies in fp32. Triton's default is tf32, and so is a
  // file that imports triton's; tilelab's own dialect defaults to ieee (docs/language.md).
  if (a.has(3) && !(a.vals[3].kind == PyVal::Kind::String &&
                    (a.vals[3].s == "ieee" || a.vals[3].s == "tf32" || a.vals[3].s == "tf32x3")))
    return fail(a.locs[3], "dot() input_precision must be \"ieee\", \"tf32\" or \"tf32x3\", got " + describe(a.vals[3]));
  const bool allowGiven = a.has(4);
  if (a.has(3) && allowGiven)
    return fail(a.locs[4], "dot() takes input_precision or allow_tf32, not both (allow_tf32 is the older spelling)");
  if (allowGiven && a.vals[4].kind != PyVal::Kind::Bool)
    return fail(a.locs[4], "dot() allow_tf32 must be True or False, got " + describe(a.vals[4]));
  std::string precision = a.has(3) ? a.vals[3].s : allowGiven ? (a.vals[4].i ? "tf32" : "ieee") : triton_ ? "tf32" : "ieee";
  // out_dtype (Triton's): tl.float32, or tl.float16 for f16 inputs, which then accumulate in f16
  // (tensor cores: mma.sync's and wgmma's f16 accumulators; docs/language.md).
  if (a.has(6) && !(a.vals[6].kind == PyVal::Kind::DType && !a.vals[6].ptrTo &&
                    (a.vals[6].dtype == DType::F32 || a.vals[6].dtype == DType::F16)))
    return fail(a.locs[6], "dot() out_dtype must be tl.float32 or tl.float16, got " + describe(a.vals[6]));
  const DType accDtype = a.has(6) ? a.vals[6].dtype : DType::F32;
  for (size_t k = 0; k < 2; ++k) {
    const PyVal& t = a.vals[k];
    if (!t.isValue() || t.v->type.isPtr || (t.v->type.rank() != 2 && t.v->type.rank() != 3))
      return fail(a.locs[k], "dot() needs 2-D tiles (or 3-D: batched), got " + describe(t));
    if (!isFloat(t.v->type.dtype))
      return fail(a.locs[k], "dot() needs float tiles, got " + t.v->type.str() + ": convert with .to(f16) or .to(f32)");
  }
  Value *x = a.vals[0].v, *y = a.vals[1].v;
  const int r = x->type.rank();
  if (y->type.rank() != r)
    return fail(e.loc, "dot() needs a and b of one rank: " + x->type.str() + " @ " + y->type.str() +
                           " (2-D: [M, K] @ [K, N]; batched: [B, M, K] @ [B, K, N])");
  if (r == 3 && x->type.shape[0] != y->type.shape[0])
    return fail(e.loc, "dot() batch dimensions differ: " + x->type.str() + " @ " + y->type.str() + " (a is [B, M, K], b must be [B, K, N])");
  if (x->type.shape[r - 1] != y->type.shape[r - 2])
    return fail(e.loc, "dot() inner dimensions differ: " + x->type.str() + " @ " + y->type.str() +
                           (r == 3 ? " (a is [B, M, K], b must be [B, K, N])" : " (a is [M, K], b must be [K, N])"));
  if (isFp8(x->type.dtype) != isFp8(y->type.dtype))
    return fail(e.loc, "dot() of " + x->type.str() + " and " + y->type.str() + ": an fp8 operand needs an fp8 partner (as in "
                       "Triton); convert the other one with .to(tl.float8e4nv) or the fp8 one with .to(tl.float16)");
  // Two different fp8 formats meet in f16 (exact for both); one fp8 dtype stays fp8 (the dot
  // widens it to f32).
  DType dt = promote(x->type.dtype, y->type.dtype);
  if (accDtype == DType::F16 && dt != DType::F16)
    return fail(a.locs[6], "dot() out_dtype=tl.float16 needs f16 inputs, got " + x->type.str() + " @ " + y->type.str() +
                               (isFp8(dt) ? " (fp8 with an f16 accumulator is not built)"
                                          : " (as in Triton, bf16 and f32 inputs accumulate in f32)"));
  x = convert(x, dt, a.locs[0]);
  y = convert(y, dt, a.locs[1]);
  Shape accShape = {x->type.shape[r - 2], y->type.shape[r - 1]};
  if (r == 3) accShape.insert(accShape.begin(), x->type.shape[0]);
  Type accType = Type::tile(accDtype, accShape);
  if (!checkTileSize(accType.shape, e.loc)) return PyVal::poison();
  Value* acc = nullptr;
  const std::string accName = accDtype == DType::F16 ? "f16" : "f32";
  if (a.has(2)) {
    const PyVal& c = a.vals[2];
    if (!c.isValue() || c.v->type != accType)
      return fail(a.locs[2], "dot() acc must be an " + accName + " tile " + accType.str() + ", got " + describe(c) +
                                 " (start it with zeros((M, N), dtype=" + accName + ")" +
                                 (accDtype == DType::F16 ? ", as out_dtype=tl.float16 asks)" : ")"));
    acc = c.v;
  } else {
    acc = materialize(PyVal::real(0), accDtype, accType.shape, e.loc);
  }
  // max_num_imprecise_acc (Triton's): for fp8 inputs, how many k the tensor core's 13-bit sum
  // covers before an f32 add; 0 or None leaves the whole dot to it (the hardware's default).
  int64_t maxImprecise = 0;
  if (a.has(5)) {
    if (!a.vals[5].isIntConst() || a.vals[5].i < 0)
      return fail(a.locs[5], "dot() max_num_imprecise_acc must be a non-negative constant integer, got " + describe(a.vals[5]));
    const int64_t K = x->type.shape[r - 1];
    if (isFp8(dt) && a.vals[5].i > K)
      return fail(a.locs[5], "dot() max_num_imprecise_acc (" + std::to_string(a.vals[5].i) + ") must be at most K (" +
                                 std::to_string(K) + "), as in Triton");
    if (isFp8(dt)) maxImprecise = a.vals[5].i;
  }
  return PyVal::value(at(e.loc).dot(x, y, acc, dt == DType::F32 && precision != "ieee" ? precision : "", maxImprecise));
}

PyVal Sema::builtinCdiv(const Expr& e) {
  Args a;
  if (!bindArgs(e, "cdiv", {"a", "b"}, 2, a)) return PyVal::poison();
  const PyVal &x = a.vals[0], &y = a.vals[1];
  if (x.isIntConst() && y.isIntConst()) {
    std::string err;
    auto r = foldCdiv(x.i, y.i, err);
    if (!r) return fail(e.loc, err);
    return PyVal::integer(*r);
  }
  for (size_t k = 0; k < 2; ++k) {
    const PyVal& v = a.vals[k];
    bool intLike = v.isIntConst() || (v.isValue() && !v.v->type.isPtr && isInt(v.v->type.dtype));
    if (!intLike) return fail(a.locs[k], "cdiv() needs integers, got " + describe(v));
  }
  PyVal t = binary(BinOp::Add, x, y, e.loc);
  t = binary(BinOp::Sub, t, PyVal::integer(1), e.loc);
  return binary(BinOp::FloorDiv, t, y, e.loc);
}

}  // namespace tl
