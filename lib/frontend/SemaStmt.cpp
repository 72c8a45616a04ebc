// Sema, part 3: statements and control flow, and compileKernel().
//
//   x = e / x op= e   bind a name (the IR value takes the name as its printing hint)
//   for i in range()  a `for` op; variables defined before the loop and assigned in its body
//                     (found by pre-scanning the body) are carried as iter args; their type
//                     must not change across an iteration
//   if / elif / else  constexpr condition: only the taken branch is compiled; runtime
//                     condition: an `if` op whose results merge the variables assigned in a
//                     branch and defined before (or assigned in every branch)
#include "frontend/ConstFold.h"
#include "frontend/Sema.h"
#include "ir/Verifier.h"

namespace tl {

using namespace ast;

void collectAssigned(const std::vector<StmtPtr>& body, std::vector<std::string>& out) {
  auto add = [&](const std::string& n) {
    for (const auto& o : out)
      if (o == n) return;
    out.push_back(n);
  };
  for (const auto& s : body) {
    switch (s->kind) {
      case StmtKind::Assign:
      case StmtKind::AugAssign: add(s->target); break;
      case StmtKind::For: {
        std::vector<std::string> inner;
        collectAssigned(s->body, inner);
        for (const auto& n : inner)
          if (n != s->target) add(n);
        break;
      }
      case StmtKind::If:
        collectAssigned(s->body, out);
        collectAssigned(s->orelse, out);
        break;
      default: break;
    }
  }
}

void Sema::genBlock(const std::vector<StmtPtr>& body) {
  for (const auto& s : body) genStmt(*s);
}

void Sema::assign(const std::string& name, PyVal v, Loc loc) {
  if (v.isValue() && v.v->name.empty() && !v.v->isRegionArg()) v.v->name = name;
  env_[name] = Binding{v, loc};
}

void Sema::genStmt(const Stmt& s) {
  switch (s.kind) {
    case StmtKind::Pass: return;
    case StmtKind::Assign: {
      PyVal v = eval(*s.value);
      if (v.kind == PyVal::Kind::None && s.value->kind == ExprKind::Call)
        error(s.value->loc, "this call returns nothing, so there is nothing to assign to '" + s.target + "'");
      assign(s.target, v, s.targetLoc);
      return;
    }
    case StmtKind::AugAssign: {
      auto it = env_.find(s.target);
      PyVal rhs = eval(*s.value);
      if (it == env_.end()) {
        auto note = scopeNotes_.find(s.target);
        error(s.targetLoc, note != scopeNotes_.end() ? note->second
                                                     : "'" + s.target + "' is not defined: assign it before using '" +
                                                           spelling(s.augOp) + "='");
        env_[s.target] = Binding{PyVal::poison(), s.targetLoc};
        return;
      }
      PyVal v = binary(s.augOp, it->second.val, rhs, s.opLoc);
      assign(s.target, v, s.targetLoc);
      return;
    }
    case StmtKind::ExprStmt: eval(*s.value); return;
    case StmtKind::For: genFor(s); return;
    case StmtKind::If: genIf(s); return;
  }
}

// A type mismatch of a carried/merged variable, with advice.
static std::string mismatchAdvice(const Type& a, const Type& b) {
  if (a.shape != b.shape)
    return "its shape must stay the same (create it with its final shape, e.g. zeros((M, N)), or broadcast it first)";
  if (a.isPtr || b.isPtr) return "a variable cannot switch between pointers and numbers";
  return std::string("convert with .to(") + dtypeName(a.dtype) + ")";
}

void Sema::genFor(const Stmt& s) {
  const Expr& it = *s.value;
  if (it.kind != ExprKind::Call || it.lhs->kind != ExprKind::Name || it.lhs->str != "range" || env_.count("range")) {
    error(it.loc, "a for loop must iterate over range(stop), range(start, stop) or range(start, stop, step)");
    return;
  }
  if (!it.keywords.empty()) {
    error(it.keywords[0].loc, "range() takes no keyword arguments");
    return;
  }
  if (it.items.empty() || it.items.size() > 3) {
    error(it.loc, "range() takes 1 to 3 arguments, got " + std::to_string(it.items.size()));
    return;
  }
  // Bounds: constants or integer scalars; i64 if any bound needs it.
  std::vector<PyVal> bounds;
  bool bad = false, wide = false;
  for (const auto& a : it.items) {
    PyVal v = eval(*a);
    if (v.isPoison()) bad = true;
    else if (v.isIntConst()) wide |= !fitsI32(v.i);
    else if (v.isValue() && v.v->type.isScalar() && !v.v->type.isPtr && isInt(v.v->type.dtype)) wide |= v.v->type.dtype == DType::I64;
    else {
      error(a->loc, "range() bounds must be integer scalars, got " + describe(v));
      bad = true;
    }
    bounds.push_back(v);
  }
  if (bounds.size() == 3 && bounds[2].isIntConst() && bounds[2].i == 0) {
    error(it.items[2]->loc, "range() step must not be zero");
    bad = true;
  }
  std::vector<std::string> assigned;
  collectAssigned(s.body, assigned);
  if (bad) {
    // Still analyse the body for errors, with the loop variable poisoned.
    Env saved = env_;
    env_[s.target] = Binding{PyVal::poison(), s.targetLoc};
    genBlock(s.body);
    env_ = saved;
    for (const auto& n : assigned)
      if (env_.count(n)) env_[n].val = PyVal::poison();
    return;
  }
  DType ivType = wide ? DType::I64 : DType::I32;
  Loc loc = s.loc;
  std::vector<Value*> b3;
  for (size_t k = 0; k < bounds.size(); ++k) {
    Value* v = bounds[k].isValue() ? convert(bounds[k].v, ivType, it.items[k]->loc)
                                   : materialize(bounds[k], ivType, {}, it.items[k]->loc);
    b3.push_back(v);
  }
  if (b3.size() == 1) b3.insert(b3.begin(), materialize(PyVal::integer(0), ivType, {}, it.loc));
  if (b3.size() == 2) b3.push_back(materialize(PyVal::integer(1), ivType, {}, it.loc));

  // Carried values: defined before the loop, assigned in the body (not the loop variable).
  std::vector<std::string> carried;
  std::vector<Value*> inits;
  for (const auto& n : assigned) {
    auto e = env_.find(n);
    if (n == s.target || e == env_.end() || e->second.val.isPoison()) continue;
    const PyVal& v = e->second.val;
    if (!v.isConst() && !v.isValue()) {
      error(e->second.loc, "'" + n + "' holds " + describe(v) + " and cannot be reassigned inside a loop");
      e->second.val = PyVal::poison();
      continue;
    }
    carried.push_back(n);
    Value* init = toValue(v, e->second.loc);
    if (!v.isValue()) init->name = n;
    inits.push_back(init);
  }
  Op* forOp = at(loc).forOp(b3[0], b3[1], b3[2], inits);
  Region* outer = b_.region();
  size_t outerIndex = b_.index();
  Region& body = forOp->region(0);
  body.arg(0)->name = s.target;
  Env saved = env_;
  for (size_t k = 0; k < carried.size(); ++k) {
    body.arg(k + 1)->name = carried[k];
    env_[carried[k]].val = PyVal::value(body.arg(k + 1));
  }
  env_[s.target] = Binding{PyVal::value(body.arg(0)), s.targetLoc};
  b_.setInsertionPointToEnd(&body);
  genBlock(s.body);

  // Yield each carried variable's value at the end of the body, at the type it entered with.
  std::vector<Value*> yields;
  std::vector<bool> broken(carried.size(), false);  // a type mismatch was reported
  for (size_t k = 0; k < carried.size(); ++k) {
    const Binding& end = env_[carried[k]];
    const Type& want = inits[k]->type;
    Value* y = body.arg(k + 1);
    if (end.val.isValue() && end.val.v->type == want) {
      y = end.val.v;
    } else if (end.val.isConst() && !want.isPtr && (end.val.kind != PyVal::Kind::Float || isFloat(want.dtype))) {
      y = materialize(end.val, want.dtype, want.shape, end.loc);
    } else if (end.val.isValue()) {
      broken[k] = true;
      error(end.loc, "'" + carried[k] + "' is carried across loop iterations: it is " + want.str() +
                         " before the loop but " + end.val.v->type.str() + " at the end of the body; " +
                         mismatchAdvice(want, end.val.v->type));
    } else if (!end.val.isPoison()) {
      broken[k] = true;
      error(end.loc, "'" + carried[k] + "' is carried across loop iterations: it is " + want.str() +
                         " before the loop but " + describe(end.val) + " at the end of the body");
    }
    yields.push_back(y);
  }
  at(loc).yield(yields);
  b_.setInsertionPoint(outer, outerIndex);

  // After the loop: carried names are the loop's results; body-local names are gone.
  Env inner = std::move(env_);
  env_ = std::move(saved);
  for (size_t k = 0; k < carried.size(); ++k) {
    Value* r = forOp->result(k);
    r->name = carried[k];
    env_[carried[k]].val = broken[k] ? PyVal::poison() : PyVal::value(r);  // no cascades
  }
  std::string line = std::to_string(s.loc.line);
  for (const auto& [name, binding] : inner)
    if (!env_.count(name))
      scopeNotes_[name] = name == s.target
                              ? "loop variable '" + name + "' is only defined inside the for loop at line " + line
                              : "'" + name + "' is only defined inside the for loop at line " + line +
                                    ": assign it before the loop to use it after";
}

void Sema::genIf(const Stmt& s) {
  PyVal c = eval(*s.value);
  if (c.isConst()) {  // compile-time condition: only the taken branch exists
    genBlock(c.asDouble() != 0 ? s.body : s.orelse);
    return;
  }
  Value* cond = nullptr;
  if (c.isValue()) {
    Value* v = c.v;
    if (v->type.isPtr) error(s.value->loc, "an if condition cannot be a pointer");
    else if (v->type.isTile())
      error(s.value->loc, "an if condition must be a scalar, got " + v->type.str() + ": for tiles use where(cond, a, b)");
    else if (v->type.dtype == DType::I1) cond = v;
    else cond = at(s.value->loc).cmp("ne", v, materialize(PyVal::integer(0), v->type.dtype, {}, s.value->loc));
  } else if (!c.isPoison()) {
    error(s.value->loc, "an if condition must be a number or a comparison, got " + describe(c));
  }
  Env before = env_;
  if (!cond) {
    // Broken condition: still check both branches, then forget what they assigned.
    genBlock(s.body);
    env_ = before;
    genBlock(s.orelse);
    env_ = before;
    std::vector<std::string> assigned;
    collectAssigned(s.body, assigned);
    collectAssigned(s.orelse, assigned);
    for (const auto& n : assigned) env_[n] = Binding{PyVal::poison(), s.loc};
    return;
  }
  Op* ifOp = at(s.loc).ifOp(cond, {});
  Region* outer = b_.region();
  size_t outerIndex = b_.index();
  Env branch[2];
  for (int k = 0; k < 2; ++k) {
    env_ = before;
    b_.setInsertionPointToEnd(&ifOp->region(k));
    genBlock(k == 0 ? s.body : s.orelse);
    branch[k] = std::move(env_);
  }
  env_ = std::move(before);

  // Which names changed in some branch, and can they be merged?
  std::vector<std::string> names;
  for (int k = 0; k < 2; ++k)
    for (const auto& [n, bnd] : branch[k]) {
      auto old = env_.find(n);
      if (old != env_.end() && sameVal(old->second.val, bnd.val)) continue;
      bool seen = false;
      for (const auto& x : names) seen |= x == n;
      if (!seen) names.push_back(n);
    }
  std::vector<Value*> yields[2];
  std::vector<std::string> merged;
  std::string line = std::to_string(s.loc.line);
  for (const auto& n : names) {
    bool inThen = branch[0].count(n), inElse = branch[1].count(n);
    if (!inThen || !inElse) {
      scopeNotes_[n] = "'" + n + "' is only assigned in one branch of the if at line " + line +
                       ": assign it before the if (or in every branch) to use it after";
      env_.erase(n);
      continue;
    }
    const Binding& t = branch[0][n];
    const Binding& e = branch[1][n];
    if (t.val.isPoison() || e.val.isPoison()) {
      env_[n] = Binding{PyVal::poison(), t.loc};
      continue;
    }
    bool numeric = (t.val.isConst() || t.val.isValue()) && (e.val.isConst() || e.val.isValue());
    if (!numeric) {
      if (sameVal(t.val, e.val)) {
        env_[n] = t;
      } else {
        error(t.loc, "'" + n + "' holds " + describe(t.val) + " and cannot be changed under a runtime if");
        env_[n] = Binding{PyVal::poison(), t.loc};
      }
      continue;
    }
    if (t.val.isConst() && e.val.isConst() && sameVal(t.val, e.val)) {
      env_[n] = t;
      continue;
    }
    // The merged type: a value's type; two different constants take their promoted dtype.
    Type want;
    if (t.val.isValue() && e.val.isValue()) {
      if (t.val.v->type != e.val.v->type) {
        error(e.loc, "'" + n + "' is " + t.val.v->type.str() + " after the if branch but " + e.val.v->type.str() +
                         " after the else branch (line " + line + "): both branches must give it the same type; " +
                         mismatchAdvice(t.val.v->type, e.val.v->type));
        env_[n] = Binding{PyVal::poison(), t.loc};
        continue;
      }
      want = t.val.v->type;
    } else if (t.val.isValue() || e.val.isValue()) {
      const PyVal& typed = t.val.isValue() ? t.val : e.val;
      const PyVal& weak = t.val.isValue() ? e.val : t.val;
      if (typed.v->type.isPtr || (weak.kind == PyVal::Kind::Float && !isFloat(typed.v->type.dtype))) {
        error(t.val.isValue() ? e.loc : t.loc, "'" + n + "' is " + typed.v->type.str() + " in one branch of the if but " +
                                                   describe(weak) + " in the other: both must have the same type");
        env_[n] = Binding{PyVal::poison(), t.loc};
        continue;
      }
      want = typed.v->type;
    } else {
      want = Type::scalar(promote(weakDType(t.val), weakDType(e.val)));
    }
    for (int k = 0; k < 2; ++k) {
      const Binding& bk = branch[k][n];
      b_.setInsertionPointToEnd(&ifOp->region(k));
      yields[k].push_back(bk.val.isValue() ? bk.val.v : materialize(bk.val, want.dtype, want.shape, bk.loc));
    }
    merged.push_back(n);
    env_[n] = Binding{PyVal::poison(), t.loc};  // replaced by the if's result below
  }
  for (int k = 0; k < 2; ++k) {
    b_.setInsertionPointToEnd(&ifOp->region(k));
    at(s.loc).yield(yields[k]);
  }
  for (size_t k = 0; k < merged.size(); ++k) {
    Value* r = ifOp->addResult(yields[0][k]->type, merged[k]);
    env_[merged[k]].val = PyVal::value(r);
  }
  b_.setInsertionPoint(outer, outerIndex);
}

bool Sema::bindParams(const Kernel& k) {
  bool ok = true;
  for (const auto& p : k.params) {
    if (p.annot == AnnotKind::Constexpr) {
      auto it = spec_.constexprs.find(p.name);
      if (it == spec_.constexprs.end()) {
        error(p.loc, "constexpr parameter '" + p.name + "' has no value: add it to @launch or pass --set " + p.name + "=...");
        env_[p.name] = Binding{PyVal::poison(), p.loc};
        ok = false;
        continue;
      }
      env_[p.name] = Binding{PyVal::integer(it->second), p.loc};
      fn_->constexprs.push_back({p.name, it->second});
      continue;
    }
    auto it = spec_.paramTypes.find(p.name);
    if (it == spec_.paramTypes.end()) {
      error(p.loc, "parameter '" + p.name + "' has no value: add it to @launch or pass --set " + p.name + "=...");
      env_[p.name] = Binding{PyVal::poison(), p.loc};
      ok = false;
      continue;
    }
    Type t = it->second;
    if (!t.isScalar() || (p.annot == AnnotKind::Pointer && !t.isPtr) || (p.annot == AnnotKind::Scalar && t.isPtr)) {
      error(p.loc, "parameter '" + p.name + "' cannot have type " + t.str() + " here");
      env_[p.name] = Binding{PyVal::poison(), p.loc};
      ok = false;
      continue;
    }
    Value* v = fn_->body.addArg(t, p.name);
    fn_->params.push_back(tl::Param{p.name, t.isPtr ? tl::Param::Kind::Pointer : tl::Param::Kind::Scalar, p.loc});
    paramValues_.insert(v);
    env_[p.name] = Binding{PyVal::value(v), p.loc};
  }
  return ok;
}

std::unique_ptr<Function> Sema::run() {
  const Kernel* k = pk_.module ? pk_.module->mainKernel() : nullptr;
  if (!k) {
    diag_.error(Loc{}, "no kernel to compile: the file has no '@jit def ...'");
    return nullptr;
  }
  int errorsBefore = diag_.numErrors();
  fn_ = std::make_unique<Function>();
  fn_->name = k->name;
  fn_->loc = k->loc;
  fn_->source = pk_.file;
  try {
    bindParams(*k);
    b_.setInsertionPointToEnd(&fn_->body);
    genBlock(k->body);
    b_.setInsertionPointToEnd(&fn_->body);
    at(k->loc).ret();
  } catch (const IRError& e) {
    diag_.error(e.loc.known() ? e.loc : k->loc, std::string("internal compiler error: ") + e.what());
    return nullptr;
  } catch (const std::exception& e) {
    diag_.error(k->loc, std::string("internal compiler error: ") + e.what());
    return nullptr;
  }
  if (diag_.numErrors() > errorsBefore || diag_.numErrors() >= DiagEngine::kMaxErrors) return nullptr;
  std::string problems = verifyFunction(*fn_);
  if (!problems.empty()) {
    diag_.error(k->loc, "internal compiler error: the generated block IR does not verify:\n" + problems);
    return nullptr;
  }
  return std::move(fn_);
}

std::unique_ptr<Function> compileKernel(const ParsedKernel& kernel, const Specialization& spec, DiagEngine& diag) {
  Sema sema(kernel, spec, diag);
  return sema.run();
}

}  // namespace tl
