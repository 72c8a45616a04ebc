// Sema, part 4: what a Triton file has around its kernel — imports and modules (`tl.load`,
// `tl.float32`, `triton.cdiv`), module-level constants, calls of other @jit functions
// (inlined at block level: their ops keep their own source locations), Python's built-ins
// that Triton gives a meaning (float("inf"), min/max, len), and the expression forms
// `a if c else b` and `and`/`or`/`not`.
//
//   import triton.language as tl     tl is the module triton.language; tl.X is the built-in X
//                                    (or the dtype X); tl.math.X and libdevice.X the same
//   from triton.language import load  load is the built-in load
//   helper(x, BLOCK=...)             the helper's body compiled in place with its parameters
//                                    bound to the argument values; `return a, b` gives a tuple
//
// Expects: bindGlobals() before the kernel's parameters are bound. Guarantees: recursion and
// inlining deeper than kMaxInlineDepth are located errors; a name Triton has but tilelab does
// not is an error that names it.
#include <cmath>
#include <set>

#include "frontend/CallArgs.h"
#include "frontend/Sema.h"
#include "frontend/Suggest.h"

namespace tl {

using namespace ast;

namespace {

bool isTritonPath(const std::string& p) { return p == "triton" || p.rfind("triton.", 0) == 0; }

// The Triton modules whose members are built-ins (tl.exp, tl.math.exp, libdevice.exp).
const std::set<std::string>& tritonModules() {
  static const std::set<std::string> kModules = {
      "triton", "triton.language", "triton.language.math", "triton.language.core", "triton.language.standard",
      "triton.language.extra", "triton.language.extra.libdevice", "triton.language.extra.cuda",
      "triton.language.extra.cuda.libdevice"};
  return kModules;
}

// Triton dtypes tilelab does not have.
const std::set<std::string>& unsupportedDTypes() {
  static const std::set<std::string> kNames = {
      "int8", "int16", "uint8", "uint16", "uint32", "uint64", "float64", "fp64", "float8e4b15", "float8e4b8",
      "float8e5b16", "float8_e4m3fn", "float8_e5m2", "void"};
  return kNames;
}

// The short name a user writes for a module path in messages: tl for triton.language.
Type typeOf(DType d, const Shape& shape) { return shape.empty() ? Type::scalar(d) : Type::tile(d, shape); }

std::string shortPath(const std::string& p) {
  if (p.rfind("triton.language", 0) == 0) return "tl" + p.substr(15);
  return p;
}

}  // namespace

void Sema::bindGlobals() {
  const Module& m = *pk_.module;
  for (const auto& k : m.kernels) globals_[k.name] = Binding{PyVal::function(&k), k.loc};
  for (const auto& im : m.imports) {
    PyVal v;
    if (tritonModules().count(im.path) || !isTritonPath(im.path)) {
      v = PyVal::module(im.path);
    } else {  // from triton.language import load: a member
      const size_t dot = im.path.rfind('.');
      v = moduleMember(PyVal::module(im.path.substr(0, dot)), im.path.substr(dot + 1), im.loc);
    }
    globals_[im.name] = Binding{v, im.loc};
  }
  // Module-level constants, in order; each sees the ones before it.
  for (const auto& c : m.constants) {
    env_ = globals_;
    PyVal v = eval(*c->value);
    const bool constant = v.isConst() || v.kind == PyVal::Kind::DType || v.kind == PyVal::Kind::String ||
                          v.kind == PyVal::Kind::None || v.kind == PyVal::Kind::Tuple || v.kind == PyVal::Kind::Module ||
                          v.kind == PyVal::Kind::Function;
    if (!constant && !v.isPoison()) {
      error(c->value->loc, "a module-level value must be a compile-time constant (a number, a dtype, a string), got " +
                               describe(v));
      v = PyVal::poison();
    }
    if (!c->targetTree)
      globals_[c->target] = Binding{v, c->targetLoc};
    else
      unpack(*c->targetTree, v, c->value->loc,
             [&](const std::string& n, const PyVal& x, Loc loc) { globals_[n] = Binding{x, loc}; });
  }
  env_.clear();
}

PyVal Sema::moduleMember(const PyVal& mod, const std::string& name, Loc loc) {
  const std::string path = mod.s + "." + name;
  if (tritonModules().count(path)) return PyVal::module(path);
  if (!isTritonPath(mod.s))
    return fail(loc, "'" + mod.s + "' is host-side Python: a kernel can only use triton and triton.language (" + path + ")");
  if (mod.s == "triton") {
    if (name == "cdiv") return PyVal::builtin("cdiv");
    return PyVal::builtin("triton." + name);  // host-side Python (next_power_of_2, Config): an error when called
  }
  if (auto d = parseDType(name)) return PyVal::dtypeVal(*d);
  if (unsupportedDTypes().count(name)) {  // comparable (x.dtype == tl.float8e5 is False), an error when used
    PyVal d = PyVal::dtypeVal(DType::F32);
    d.s = shortPath(mod.s) + "." + name;
    return d;
  }
  return PyVal::builtin(name);  // whether it exists is checked when it is called
}

PyVal Sema::inlineCall(const Kernel& f, const Expr& call) {
  auto evalArgs = [&] {
    for (const auto& a : call.items) eval(*a);
    for (const auto& k : call.keywords) eval(*k.value);
  };
  const Kernel* entry = pk_.module->mainKernel();
  bool recursive = &f == entry;
  for (const auto& fr : frames_) recursive |= fr.fn == &f;
  if (recursive) {
    evalArgs();
    return fail(call.loc, "recursive call of '" + f.name + "': @jit functions are inlined where they are called, so "
                                                          "they cannot call themselves");
  }
  if (frames_.size() >= kMaxInlineDepth) {
    evalArgs();
    return fail(call.loc, "@jit calls nested more than " + std::to_string(kMaxInlineDepth) + " deep");
  }
  if (!f.decorator("jit")) {
    evalArgs();
    return fail(call.loc, "'" + f.name + "' is not a @triton.jit function: only @jit functions can be called in a kernel");
  }
  // Bind the arguments (evaluated here, in the caller's scope), then the defaults.
  std::vector<PyVal> vals(f.params.size(), PyVal::poison());
  std::vector<bool> given(f.params.size(), false);
  std::vector<Loc> locs(f.params.size(), call.loc);
  bool ok = true;
  for (size_t k = 0; k < call.items.size(); ++k) {
    PyVal v = eval(*call.items[k]);
    if (k >= f.params.size()) {
      if (ok) {
        std::string names;
        for (const auto& p : f.params) names += (names.empty() ? "" : ", ") + p.name;
        error(call.items[k]->loc, "'" + f.name + "' takes " + std::to_string(f.params.size()) +
                                      (f.params.size() == 1 ? " argument" : " arguments") + " (" + names + "), got " +
                                      std::to_string(call.items.size()));
      }
      ok = false;
      continue;
    }
    vals[k] = v;
    given[k] = true;
    locs[k] = call.items[k]->loc;
  }
  for (const auto& kw : call.keywords) {
    PyVal v = eval(*kw.value);
    size_t slot = f.params.size();
    for (size_t k = 0; k < f.params.size(); ++k)
      if (f.params[k].name == kw.name) slot = k;
    if (slot == f.params.size()) {
      std::vector<std::string> names;
      for (const auto& p : f.params) names.push_back(p.name);
      error(kw.loc, "'" + f.name + "' has no parameter '" + kw.name + "'" + didYouMean(kw.name, names));
      ok = false;
    } else if (given[slot]) {
      error(kw.loc, "'" + f.name + "' got argument '" + kw.name + "' twice");
      ok = false;
    } else {
      vals[slot] = v;
      given[slot] = true;
      locs[slot] = kw.value->loc;
    }
  }
  Env saved = std::move(env_);
  auto savedNotes = std::move(scopeNotes_);
  const int savedLoops = loopDepth_;
  env_ = globals_;
  scopeNotes_.clear();
  loopDepth_ = 0;
  for (size_t k = 0; k < f.params.size() && ok; ++k) {
    const ast::Param& p = f.params[k];
    if (!given[k]) {
      if (!p.defaultValue) {
        error(call.loc, "'" + f.name + "' needs the argument '" + p.name + "'");
        ok = false;
        break;
      }
      vals[k] = eval(*p.defaultValue);
      locs[k] = p.defaultValue->loc;
    }
    // (a tl.constexpr annotation on a helper's parameter asks nothing of a runtime argument: as
    // in Triton, the value is passed as it is)
    env_[p.name] = Binding{vals[k], p.loc};
  }
  PyVal result = PyVal::poison();
  if (ok) {
    frames_.push_back({&f, call.loc});
    genBlock(f.body, 0, {{nullptr, 0}});
    frames_.pop_back();
    auto count = env_.find(kReturnCount);
    if (count != env_.end() && count->second.val.isIntConst()) {
      const int64_t n = count->second.val.i;
      if (n == -2) {
        result = PyVal::none();
      } else if (n == -1) {
        result = env_[kReturnValue].val;
      } else {
        std::vector<PyVal> items;
        for (int64_t k = 0; k < n; ++k) items.push_back(env_[kReturnValue + std::to_string(k)].val);
        result = PyVal::tuple(std::move(items));
        for (const auto& it : result.items)
          if (it.isPoison()) result = PyVal::poison();
      }
    }
  }
  env_ = std::move(saved);
  scopeNotes_ = std::move(savedNotes);
  loopDepth_ = savedLoops;
  return result;
}

// Python built-ins with a meaning in Triton kernels. `handled` is false for any other name.
PyVal Sema::pythonBuiltin(const Expr& e, const std::string& f, bool& handled) {
  handled = true;
  auto one = [&](const char* what) -> std::optional<PyVal> {
    if (e.items.size() != 1 || !e.keywords.empty()) {
      for (const auto& a : e.items) eval(*a);
      error(e.loc, std::string(what) + "() takes one argument");
      return std::nullopt;
    }
    return eval(*e.items[0]);
  };
  if (f == "float") {
    auto x = one("float");
    if (!x || x->isPoison()) return PyVal::poison();
    if (x->kind == PyVal::Kind::String) {
      std::string t;
      for (char c : x->s) t += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      if (t == "inf" || t == "+inf" || t == "infinity") return PyVal::real(INFINITY);
      if (t == "-inf" || t == "-infinity") return PyVal::real(-INFINITY);
      if (t == "nan") return PyVal::real(NAN);
      char* end = nullptr;
      double v = std::strtod(x->s.c_str(), &end);
      if (!x->s.empty() && end && *end == '\0') return PyVal::real(v);
      return fail(e.items[0]->loc, "float() of the string \"" + x->s + "\" is not a number");
    }
    if (x->isConst()) return PyVal::real(x->asDouble());
    return fail(e.items[0]->loc, "float() needs a constant; to convert a tensor write x.to(tl.float32)");
  }
  if (f == "int") {
    auto x = one("int");
    if (!x || x->isPoison()) return PyVal::poison();
    if (x->isIntConst()) return PyVal::integer(x->i);
    if (x->kind == PyVal::Kind::Float && std::isfinite(x->f) && std::fabs(x->f) < 9.2e18)
      return PyVal::integer(static_cast<int64_t>(x->f));
    return fail(e.items[0]->loc, "int() needs a finite constant; to convert a tensor write x.to(tl.int32)");
  }
  if (f == "len") {
    auto x = one("len");
    if (!x || x->isPoison()) return PyVal::poison();
    if (x->kind == PyVal::Kind::Tuple) return PyVal::integer(static_cast<int64_t>(x->items.size()));
    return fail(e.items[0]->loc, "len() needs a tuple, got " + describe(*x) + " (a tile's size: x.shape)");
  }
  // Python's min/max in a Triton file are minimum/maximum (tl.min/tl.max are the reductions).
  if (triton_ && (f == "min" || f == "max") && e.items.size() == 2 && e.keywords.empty())
    return callBuiltin(e, f == "min" ? "minimum" : "maximum");
  handled = false;
  return PyVal::poison();
}

// a if c else b: a compile-time c picks one side (the other is not compiled); a runtime scalar
// c is an `if` op with one result, so only the chosen side runs (a load on the other side is
// not made).
PyVal Sema::evalIfExp(const Expr& e) {
  PyVal c = eval(*e.items[0]);
  if (c.isPoison()) return c;
  if (c.isConst()) return eval(c.asDouble() != 0 ? *e.lhs : *e.rhs);
  if (!c.isValue() || c.v->type.isPtr || !c.v->type.isScalar())
    return fail(e.items[0]->loc, "the condition of 'a if c else b' must be a scalar, got " + describe(c) +
                                     (c.isValue() && c.v->type.isTile() ? ": for tiles use tl.where(c, a, b)" : ""));
  Value* cond = c.v;
  if (cond->type.dtype != DType::I1)
    cond = at(e.items[0]->loc).cmp("ne", cond, materialize(PyVal::integer(0), cond->type.dtype, {}, e.items[0]->loc));
  Op* ifOp = at(e.loc).ifOp(cond, {});
  Region* outer = b_.region();
  size_t outerIndex = b_.index();
  PyVal side[2];
  for (int k = 0; k < 2; ++k) {
    b_.setInsertionPointToEnd(&ifOp->region(k));
    side[k] = eval(k == 0 ? *e.lhs : *e.rhs);
  }
  auto numeric = [](const PyVal& p) { return p.isConst() || p.isValue(); };
  Type want;
  bool ok = numeric(side[0]) && numeric(side[1]);
  if (!ok && !side[0].isPoison() && !side[1].isPoison())
    error(e.loc, "both sides of 'a if c else b' must be numbers or tensors, got " + describe(side[0]) + " and " + describe(side[1]));
  if (ok) {
    const PyVal &a = side[0], &b = side[1];
    if (a.isValue() && b.isValue()) {
      if (a.v->type.isPtr || b.v->type.isPtr) {
        ok = a.v->type == b.v->type;
        want = a.v->type;
      } else {
        auto shape = broadcastShape(a.v->type.shape, b.v->type.shape);
        ok = shape.has_value();
        if (ok) want = typeOf(promote(a.v->type.dtype, b.v->type.dtype), *shape);
      }
    } else if (a.isValue() || b.isValue()) {
      const PyVal& typed = a.isValue() ? a : b;
      const PyVal& weak = a.isValue() ? b : a;
      ok = !typed.v->type.isPtr;
      want = typeOf(withWeak(typed.v->type.dtype, weak), typed.v->type.shape);
    } else {
      want = Type::scalar(promote(weakDType(a), weakDType(b)));
    }
    if (!ok)
      error(e.loc, "the two sides of 'a if c else b' have types that do not combine: " + describe(a) + " and " + describe(b));
  }
  Value* ys[2] = {nullptr, nullptr};
  for (int k = 0; k < 2; ++k) {
    b_.setInsertionPointToEnd(&ifOp->region(k));
    const Loc sideLoc = k == 0 ? e.lhs->loc : e.rhs->loc;
    if (ok) {
      const PyVal& v = side[k];
      ys[k] = v.isValue() ? (want.isPtr ? v.v : broadcastTo(convert(v.v, want.dtype, sideLoc), want.shape, sideLoc))
                          : materialize(v, want.dtype, want.shape, sideLoc);
    }
    at(e.loc).yield(ok ? std::vector<Value*>{ys[k]} : std::vector<Value*>{});
  }
  b_.setInsertionPoint(outer, outerIndex);
  if (!ok) return PyVal::poison();
  return PyVal::value(ifOp->addResult(want));
}

// a and b, a or b: Python's meaning on constants (short-circuit); on runtime values both sides
// are computed and combined as i1 (Triton's logical_and / logical_or).
PyVal Sema::evalBoolOp(const Expr& e) {
  const bool isAnd = e.boolOp == BoolOpKind::And;
  PyVal a = eval(*e.lhs);
  if (a.isPoison()) return a;
  if (a.isConst()) {
    const bool truthy = a.asDouble() != 0;
    if (isAnd != truthy) return a;  // False and ..., True or ...
    return eval(*e.rhs);
  }
  PyVal b = eval(*e.rhs);
  if (b.isPoison()) return b;
  auto asBool = [&](const PyVal& p, Loc loc) -> PyVal {
    if (p.kind == PyVal::Kind::Bool) return p;
    if (p.isConst()) return PyVal::boolean(p.asDouble() != 0);
    if (!p.isValue() || p.v->type.isPtr) {
      error(loc, std::string("'") + (isAnd ? "and" : "or") + "' needs conditions, got " + describe(p));
      return PyVal::poison();
    }
    if (p.v->type.dtype == DType::I1) return p;
    return binary(BinOp::Ne, p, PyVal::integer(0), loc);
  };
  PyVal x = asBool(a, e.lhs->loc), y = asBool(b, e.rhs->loc);
  return binary(isAnd ? BinOp::BitAnd : BinOp::BitOr, x, y, e.loc);
}

// tl.static_assert(cond, msg=""): a compile-time check; a false cond is an error at cond.
PyVal Sema::builtinStaticAssert(const Expr& e) {
  Args a;
  if (!bindArgs(e, "static_assert", {"cond", "msg"}, 1, a)) return PyVal::poison();
  const PyVal& c = a.vals[0];
  if (!c.isConst())
    return fail(a.locs[0], "static_assert() needs a compile-time condition, got " + describe(c));
  if (c.asDouble() == 0) {
    std::string msg = a.has(1) && a.vals[1].kind == PyVal::Kind::String ? ": " + a.vals[1].s : "";
    return fail(a.locs[0], "static_assert failed" + msg);
  }
  return PyVal::none();
}

}  // namespace tl
