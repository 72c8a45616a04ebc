// Sema, part 3: statements and control flow, and compileKernel().
//
//   x = e / x op= e   bind a name (the IR value takes the name as its printing hint);
//   a, b = e          e must be a tuple of as many values
//   for i in range()  a `for` op (tl.range too, its hints kept as attributes); variables defined
//                     before the loop and assigned in its body (found by pre-scanning the body)
//                     are carried as iter args; their type must not change across an iteration
//   tl.static_range   unrolled at compile time: the body is compiled once per value
//   if / elif / else  constexpr condition: only the taken branch is compiled; runtime
//                     condition: an `if` op whose results merge the variables assigned in a
//                     branch and defined before (or assigned in every branch)
//   return            ends the function. A block is compiled together with its continuation
//                     (the rest of the enclosing blocks up to the end of the function, Cont):
//                     an `if` with a `return` inside compiles that continuation into both
//                     branches, so code after `if c: return` runs only where c is false, and
//                     the returned values merge like variables (kReturnCount/kReturnValue)
#include "frontend/ConstFold.h"
#include "frontend/Sema.h"
#include "frontend/Suggest.h"
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
      case StmtKind::AugAssign:
        if (s->targets.empty()) add(s->target);
        for (const auto& t : s->targets) add(t);
        break;
      case StmtKind::While:
        collectAssigned(s->body, out);
        break;
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

bool containsReturn(const std::vector<StmtPtr>& stmts) {
  for (const auto& s : stmts) {
    if (s->kind == StmtKind::Return) return true;
    if (s->kind == StmtKind::If && (containsReturn(s->body) || containsReturn(s->orelse))) return true;
  }
  return false;
}

bool Sema::genBlock(const std::vector<StmtPtr>& body, size_t from, const Cont& cont) {
  for (size_t i = from; i < body.size(); ++i) {
    const Stmt& s = *body[i];
    if (s.kind == StmtKind::Return) {
      genReturn(s);
      return true;
    }
    if (s.kind == StmtKind::If && (containsReturn(s.body) || containsReturn(s.orelse))) {
      Cont next = cont;
      next.push_back({&body, i + 1});
      return genIf(s, next);
    }
    if (s.kind == StmtKind::If) {
      genIf(s, {});
      continue;
    }
    genStmt(s);
  }
  if (cont.empty()) return false;
  auto [rest, at] = cont.back();
  Cont outer(cont.begin(), cont.end() - 1);
  if (!rest) {  // the end of the function: `return None`
    env_[kReturnCount] = Binding{PyVal::integer(-2), Loc{}};
    return true;
  }
  return genBlock(*rest, at, outer);
}

void Sema::genReturn(const Stmt& s) {
  if (loopDepth_ > 0) {
    error(s.loc, "'return' inside a loop is not supported (Triton does not allow it either): "
                 "keep the value in a variable and return it after the loop");
    return;
  }
  PyVal v = s.value ? eval(*s.value) : PyVal::none();
  if (frames_.empty() && v.kind != PyVal::Kind::None && !v.isPoison()) {
    error(s.value->loc, "a kernel returns nothing: write its results with tl.store(...)");
    return;
  }
  if (v.kind == PyVal::Kind::None) {
    env_[kReturnCount] = Binding{PyVal::integer(-2), s.loc};
  } else if (v.kind == PyVal::Kind::Tuple) {
    env_[kReturnCount] = Binding{PyVal::integer(static_cast<int64_t>(v.items.size())), s.loc};
    for (size_t k = 0; k < v.items.size(); ++k)
      env_[kReturnValue + std::to_string(k)] = Binding{v.items[k], s.loc};
  } else {
    env_[kReturnCount] = Binding{PyVal::integer(-1), s.loc};
    env_[kReturnValue] = Binding{v, s.loc};
  }
}

void Sema::assign(const std::string& name, PyVal v, Loc loc) {
  if (v.isValue() && v.v->name.empty() && !v.v->isRegionArg()) v.v->name = name;
  env_[name] = Binding{v, loc};
}

// `a, (b, c) = value`: each name of the target tree takes the matching item of the value.
void Sema::unpack(const Expr& target, const PyVal& v, Loc valueLoc,
                  const std::function<void(const std::string&, const PyVal&, Loc)>& bind) {
  if (target.kind == ExprKind::Name) return bind(target.str, v, target.loc);
  const bool fits = v.kind == PyVal::Kind::Tuple && v.items.size() == target.items.size();
  if (!fits && !v.isPoison())
    error(valueLoc, "cannot unpack " + describe(v) +
                        (v.kind == PyVal::Kind::Tuple ? " of " + std::to_string(v.items.size()) + " values" : "") +
                        " into " + std::to_string(target.items.size()) + " names");
  for (size_t k = 0; k < target.items.size(); ++k) unpack(*target.items[k], fits ? v.items[k] : PyVal::poison(), valueLoc, bind);
}

void Sema::assignTargets(const Stmt& s, PyVal v) {
  unpack(*s.targetTree, v, s.value->loc, [&](const std::string& n, const PyVal& x, Loc loc) { assign(n, x, loc); });
}

void Sema::genStmt(const Stmt& s) {
  switch (s.kind) {
    case StmtKind::Pass: return;
    case StmtKind::Assign: {
      PyVal v = eval(*s.value);
      if (s.targetTree) return assignTargets(s, v);
      if (v.kind == PyVal::Kind::None && s.value->kind == ExprKind::Call)
        error(s.value->loc, "this call returns nothing, so there is nothing to assign to '" + s.target + "'");
      if (s.constexprAnnot && !v.isPoison() && !v.isConst() && v.kind != PyVal::Kind::DType &&
          v.kind != PyVal::Kind::String && v.kind != PyVal::Kind::Tuple) {
        error(s.value->loc, "'" + s.target + "' is declared tl.constexpr but this value is only known at run time (" +
                                describe(v) + ")");
        v = PyVal::poison();
      }
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
    case StmtKind::While: genWhile(s); return;
    case StmtKind::If: genIf(s, {}); return;
    case StmtKind::Return: genReturn(s); return;
    case StmtKind::Assert: genAssert(s); return;
  }
}

// A type mismatch of a carried/merged variable, with advice.
static std::string mismatchAdvice(const Type& a, const Type& b) {
  if (a.shape != b.shape)
    return "its shape must stay the same (create it with its final shape, e.g. zeros((M, N)), or broadcast it first)";
  if (a.isPtr || b.isPtr) return "a variable cannot switch between pointers and numbers";
  return std::string("convert with .to(") + dtypeName(a.dtype) + ")";
}

// Which loop a `for` header asks for: "range" (Python's range or tl.range), "static_range", or ""
// (anything else). `tl.range` and `tl.static_range` are resolved through the imports.
std::string Sema::loopKind(const Expr& it) {
  if (it.kind != ExprKind::Call) return "";
  if (it.lhs->kind == ExprKind::Name && it.lhs->str == "range" && !env_.count("range")) return "range";
  PyVal callee = it.lhs->kind == ExprKind::Name ? evalName(*it.lhs) : it.lhs->kind == ExprKind::Attribute ? evalAttribute(*it.lhs) : PyVal::poison();
  if (callee.kind == PyVal::Kind::Function && !callee.fn && (callee.s == "range" || callee.s == "static_range")) return callee.s;
  return "";
}

void Sema::genFor(const Stmt& s) {
  const Expr& it = *s.value;
  const std::string kind = loopKind(it);
  if (kind.empty()) {
    error(it.loc, "a for loop must iterate over range(...), tl.range(...) or tl.static_range(...)");
    return;
  }
  if (kind == "static_range") return genStaticFor(s);
  // tl.range's hints (Triton: range(arg1, arg2, step, num_stages, loop_unroll_factor, ...)):
  // compile-time values kept as attributes of the for op for the pipelining work.
  static const std::vector<std::string> kHints = {"num_stages", "loop_unroll_factor", "warp_specialize",
                                                  "disallow_acc_multi_buffer", "flatten"};
  std::vector<std::pair<std::string, int64_t>> hints;
  size_t positional = it.items.size();
  if (positional > 3) {  // the 4th positional is num_stages
    PyVal h = eval(*it.items[3]);
    if (!h.isIntConst()) {
      error(it.items[3]->loc, "range() num_stages must be a compile-time integer, got " + describe(h));
      return;
    }
    hints.push_back({"num_stages", h.i});
    if (positional > 4) {
      error(it.items[4]->loc, "range() takes at most 4 positional arguments: pass loop_unroll_factor= by name");
      return;
    }
    positional = 3;
  }
  for (const auto& kw : it.keywords) {
    bool known = false;
    for (const auto& h : kHints) known |= h == kw.name;
    if (!known) {
      error(kw.loc, "range() has no argument '" + kw.name + "'" + didYouMean(kw.name, kHints));
      return;
    }
    PyVal h = eval(*kw.value);
    if (!h.isIntConst()) {
      error(kw.value->loc, "range() " + kw.name + " must be a compile-time integer or bool, got " + describe(h));
      return;
    }
    hints.push_back({kw.name, h.i});
  }
  if (positional == 0) {
    error(it.loc, "range() takes 1 to 3 bounds, got none");
    return;
  }
  // Bounds: constants or integer scalars; i64 if any bound needs it.
  std::vector<PyVal> bounds;
  bool bad = false, wide = false;
  for (size_t k = 0; k < positional; ++k) {
    const auto& a = it.items[k];
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
    ++loopDepth_;
    genBlock(s.body);
    --loopDepth_;
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

  // Carried values: defined before the loop, assigned in the body (not the loop variable); a
  // block pointer or a tuple is carried as its parts.
  std::vector<Composite> comps = splitComposites(assigned);
  std::vector<std::string> carried;
  std::vector<Value*> inits;
  collectCarried(assigned, s.target, carried, inits);
  Op* forOp = at(loc).forOp(b3[0], b3[1], b3[2], inits);
  for (const auto& [name, v] : hints) forOp->setAttr(name, Attr(v));
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
  for (const auto& c : comps) rebuildComposite(c);
  b_.setInsertionPointToEnd(&body);
  ++loopDepth_;
  genBlock(s.body);
  --loopDepth_;
  for (const auto& c : comps) flattenComposite(c);
  std::vector<bool> broken = yieldCarried(carried, inits, body, 1, loc);
  // The launch's num_stages applies to the loops that contain a dot, as Triton's does (a
  // tl.range hint wins): ir/PipelineLoads.cpp reads it.
  if (spec_.numStages > 0 && !forOp->hasAttr("num_stages"))
    for (const auto& op : body.ops)
      if (op->kind == OpKind::Dot) {
        forOp->setAttr("num_stages", Attr(int64_t(spec_.numStages)));
        break;
      }
  b_.setInsertionPoint(outer, outerIndex);
  endLoop(s, forOp, carried, broken, std::move(saved), "for");
  for (const auto& c : comps) rebuildComposite(c);
}

// The parts a loop carries of a composite value: a block pointer's offsets, a tuple's items.
static std::vector<PyVal>* compositeLeaves(PyVal& v) {
  if (v.kind == PyVal::Kind::BlockPtr) return &v.items[3].items;
  if (v.kind == PyVal::Kind::Tuple) {
    for (const auto& it : v.items)
      if (!it.isConst() && !it.isValue()) return nullptr;
    return v.items.empty() ? nullptr : &v.items;
  }
  return nullptr;
}

std::vector<Sema::Composite> Sema::splitComposites(std::vector<std::string>& assigned) {
  std::vector<Composite> comps;
  std::vector<std::string> names;
  for (const auto& n : assigned) {
    auto e = env_.find(n);
    PyVal v = e == env_.end() ? PyVal::poison() : e->second.val;
    std::vector<PyVal>* leaves = compositeLeaves(v);
    if (!leaves) {
      names.push_back(n);
      continue;
    }
    Composite c{n, v, {}};
    for (size_t k = 0; k < leaves->size(); ++k) {
      c.leaves.push_back(n + "#" + std::to_string(k));
      env_[c.leaves.back()] = Binding{(*leaves)[k], e->second.loc};
      names.push_back(c.leaves.back());
    }
    comps.push_back(std::move(c));
  }
  assigned = std::move(names);
  return comps;
}

void Sema::rebuildComposite(const Composite& c) {
  PyVal v = c.tmpl;
  std::vector<PyVal>& leaves = *compositeLeaves(v);
  for (size_t k = 0; k < c.leaves.size(); ++k) leaves[k] = env_[c.leaves[k]].val;
  env_[c.name].val = v;
}

// At the end of a loop body: the composite's parts, for the yield; its other parts (a block
// pointer's base, shape, strides) must not have changed.
void Sema::flattenComposite(const Composite& c) {
  Binding& end = env_[c.name];
  PyVal v = end.val;
  bool same = v.kind == c.tmpl.kind && v.items.size() == c.tmpl.items.size();
  if (same && v.kind == PyVal::Kind::BlockPtr)
    for (size_t k = 0; k < v.items.size(); ++k)
      same = same && (k == 3 ? v.items[k].items.size() == c.tmpl.items[k].items.size() : sameVal(v.items[k], c.tmpl.items[k]));
  std::vector<PyVal>* leaves = same ? compositeLeaves(v) : nullptr;
  if (!leaves) {
    if (!v.isPoison())
      error(end.loc, "'" + c.name + "' is carried across loop iterations as " + describe(c.tmpl) + ", but is " + describe(v) +
                         " at the end of the body" +
                         (c.tmpl.kind == PyVal::Kind::BlockPtr ? ": only its offsets may change (tl.advance)" : ""));
    for (const auto& l : c.leaves) env_[l].val = PyVal::poison();
    return;
  }
  for (size_t k = 0; k < c.leaves.size(); ++k) env_[c.leaves[k]] = Binding{(*leaves)[k], end.loc};
}

// The variables a loop carries: assigned in its body (`assigned`) and defined before it, except
// `skip` (the loop variable); their initial values in `inits`.
void Sema::collectCarried(const std::vector<std::string>& assigned, const std::string& skip,
                          std::vector<std::string>& carried, std::vector<Value*>& inits) {
  for (const auto& n : assigned) {
    auto e = env_.find(n);
    if (n == skip || e == env_.end() || e->second.val.isPoison()) continue;
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
}

// Yields each carried variable's value at the end of a loop body (whose carried arguments start
// at argOffset), at the type it entered with; true where a type mismatch was reported.
std::vector<bool> Sema::yieldCarried(const std::vector<std::string>& carried, const std::vector<Value*>& inits,
                                     Region& body, size_t argOffset, Loc loc) {
  std::vector<Value*> yields;
  std::vector<bool> broken(carried.size(), false);
  for (size_t k = 0; k < carried.size(); ++k) {
    const Binding& end = env_[carried[k]];
    const Type& want = inits[k]->type;
    Value* y = body.arg(k + argOffset);
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
  return broken;
}

// After a loop: carried names are the loop's results; names local to the body are gone (with a
// note saying so for later uses). `saved` is the environment from before the loop.
void Sema::endLoop(const Stmt& s, Op* loop, const std::vector<std::string>& carried, const std::vector<bool>& broken,
                   Env saved, const char* what) {
  Env inner = std::move(env_);
  env_ = std::move(saved);
  for (size_t k = 0; k < carried.size(); ++k) {
    Value* r = loop->result(k);
    r->name = carried[k];
    env_[carried[k]].val = broken[k] ? PyVal::poison() : PyVal::value(r);  // no cascades
  }
  const std::string where = std::string(what) + " loop at line " + std::to_string(s.loc.line);
  for (const auto& [name, binding] : inner)
    if (!env_.count(name) && name[0] != '$' && name.find('#') == std::string::npos)
      scopeNotes_[name] = name == s.target ? "loop variable '" + name + "' is only defined inside the " + where
                                           : "'" + name + "' is only defined inside the " + where +
                                                 ": assign it before the loop to use it after";
}

// while cond: body — a `while` op. Carried: the variables defined before and assigned in the
// body; the condition is compiled in the cond region, where they are its arguments.
void Sema::genWhile(const Stmt& s) {
  std::vector<std::string> assigned;
  collectAssigned(s.body, assigned);
  std::vector<Composite> comps = splitComposites(assigned);
  std::vector<std::string> carried;
  std::vector<Value*> inits;
  collectCarried(assigned, "", carried, inits);
  Op* w = at(s.loc).whileOp(inits);
  Region* outer = b_.region();
  size_t outerIndex = b_.index();
  Env saved = env_;
  for (int r = 0; r < 2; ++r)
    for (size_t k = 0; k < carried.size(); ++k) w->region(r).arg(k)->name = carried[k];
  // The condition, evaluated on the carried values.
  for (size_t k = 0; k < carried.size(); ++k) env_[carried[k]].val = PyVal::value(w->region(0).arg(k));
  for (const auto& c : comps) rebuildComposite(c);
  b_.setInsertionPointToEnd(&w->region(0));
  PyVal c = eval(*s.value);
  const Loc cl = s.value->loc;
  Value* cond = nullptr;
  if (c.isConst()) {
    cond = materialize(PyVal::boolean(c.asDouble() != 0), DType::I1, {}, cl);
  } else if (c.isValue() && !c.v->type.isPtr && c.v->type.isScalar()) {
    cond = c.v->type.dtype == DType::I1 ? c.v : at(cl).cmp("ne", c.v, materialize(PyVal::integer(0), c.v->type.dtype, {}, cl));
  } else {
    if (!c.isPoison())
      error(cl, "a while condition must be a scalar, got " + describe(c) +
                    (c.isValue() && c.v->type.isTile() ? ": reduce the tile first (e.g. tl.max(x, 0) > 0)" : ""));
    cond = materialize(PyVal::boolean(false), DType::I1, {}, cl);
  }
  at(cl).condition(cond);
  // The body.
  env_ = saved;
  for (size_t k = 0; k < carried.size(); ++k) env_[carried[k]].val = PyVal::value(w->region(1).arg(k));
  for (const auto& c : comps) rebuildComposite(c);
  b_.setInsertionPointToEnd(&w->region(1));
  ++loopDepth_;
  genBlock(s.body);
  --loopDepth_;
  for (const auto& c : comps) flattenComposite(c);
  std::vector<bool> broken = yieldCarried(carried, inits, w->region(1), 0, s.loc);
  b_.setInsertionPoint(outer, outerIndex);
  endLoop(s, w, carried, broken, std::move(saved), "while");
  for (const auto& c : comps) rebuildComposite(c);
}

// for i in tl.static_range(...): the body once per value, with i a compile-time integer.
void Sema::genStaticFor(const Stmt& s) {
  const Expr& it = *s.value;
  Args a;
  if (!bindArgs(it, "static_range", {"arg1", "arg2", "step"}, 1, a)) return;
  std::vector<int64_t> r;
  for (size_t k = 0; k < 3; ++k) {
    if (!a.has(k)) continue;
    auto v = constInt(a.vals[k], a.exprs[k], a.locs[k], "static_range() bound");
    if (!v) return;
    r.push_back(*v);
  }
  int64_t lo = r.size() == 1 ? 0 : r[0], hi = r.size() == 1 ? r[0] : r[1], step = r.size() == 3 ? r[2] : 1;
  if (step == 0) {
    error(a.locs[2], "static_range() step must not be zero");
    return;
  }
  const long double trips = step > 0 ? (hi > lo ? ((long double)hi - lo + step - 1) / step : 0)
                                     : (lo > hi ? ((long double)lo - hi - step - 1) / -step : 0);
  if (trips > kMaxStaticTrips) {
    error(it.loc, "static_range() would unroll " + std::to_string((long long)trips) + " iterations; at most " +
                      std::to_string(kMaxStaticTrips) + " are allowed: use tl.range for a loop");
    return;
  }
  ++loopDepth_;
  for (int64_t i = lo; step > 0 ? i < hi : i > hi; i += step) {
    env_[s.target] = Binding{PyVal::integer(i), s.targetLoc};
    genBlock(s.body);
    if (diag_.numErrors() >= DiagEngine::kMaxErrors) break;
  }
  --loopDepth_;
}

bool Sema::genIf(const Stmt& s, const Cont& cont) {
  PyVal c = eval(*s.value);
  if (c.isConst()) {  // compile-time condition: only the taken branch exists
    return genBlock(c.asDouble() != 0 ? s.body : s.orelse, 0, cont);
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
    if (!cont.empty()) env_[kReturnCount] = Binding{PyVal::poison(), s.loc};
    return !cont.empty();
  }
  Op* ifOp = at(s.loc).ifOp(cond, {});
  Region* outer = b_.region();
  size_t outerIndex = b_.index();
  Env branch[2];
  for (int k = 0; k < 2; ++k) {
    env_ = before;
    b_.setInsertionPointToEnd(&ifOp->region(k));
    genBlock(k == 0 ? s.body : s.orelse, 0, cont);
    branch[k] = std::move(env_);
  }
  // With a continuation, both branches ran to the end of the function: only what they return
  // is merged (nothing else is read after the if).
  if (!cont.empty())
    for (int k = 0; k < 2; ++k)
      for (auto i = branch[k].begin(); i != branch[k].end();)
        i = i->first[0] == '$' ? std::next(i) : branch[k].erase(i);
  env_ = std::move(before);
  mergeBranches(s, ifOp, branch);
  b_.setInsertionPoint(outer, outerIndex);
  return !cont.empty();
}

// The user-facing name of a merged variable (the hidden return slots have none).
static std::string shownName(const std::string& n) {
  return n[0] == '$' ? "the returned value" : "'" + n + "'";
}

void Sema::mergeBranches(const Stmt& s, Op* ifOp, Env branch[2]) {
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
    if (n == kReturnCount && !sameVal(t.val, e.val) && !t.val.isPoison() && !e.val.isPoison()) {
      auto what = [](const PyVal& c) {
        return c.i == -2 ? std::string("nothing") : c.i == -1 ? std::string("one value") : "a tuple of " + std::to_string(c.i);
      };
      error(s.loc, "the branches of this if return different things (" + what(t.val) + " and " + what(e.val) +
                       "): every path of the function must return the same kind of value");
      env_[n] = Binding{PyVal::poison(), t.loc};
      continue;
    }
    if (t.val.isPoison() || e.val.isPoison()) {
      env_[n] = Binding{PyVal::poison(), t.loc};
      continue;
    }
    bool numeric = (t.val.isConst() || t.val.isValue()) && (e.val.isConst() || e.val.isValue());
    if (!numeric) {
      if (sameVal(t.val, e.val)) {
        env_[n] = t;
      } else {
        error(t.loc, shownName(n) + " holds " + describe(t.val) + " and cannot be changed under a runtime if");
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
        error(e.loc, shownName(n) + " is " + t.val.v->type.str() + " after the if branch but " + e.val.v->type.str() +
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
        error(t.val.isValue() ? e.loc : t.loc, shownName(n) + " is " + typed.v->type.str() + " in one branch of the if but " +
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
    Value* r = ifOp->addResult(yields[0][k]->type, merged[k][0] == '$' ? std::string("ret") : merged[k]);
    env_[merged[k]].val = PyVal::value(r);
  }
}

bool Sema::bindParams(const Kernel& k) {
  bool ok = true;
  for (const auto& p : k.params) {
    if (p.annot == AnnotKind::Constexpr && spec_.stringConstexprs.count(p.name)) {
      env_[p.name] = Binding{PyVal::str(spec_.stringConstexprs.at(p.name)), p.loc};
      continue;
    }
    if (p.annot == AnnotKind::Constexpr && spec_.floatConstexprs.count(p.name)) {
      env_[p.name] = Binding{PyVal::real(spec_.floatConstexprs.at(p.name)), p.loc};
      continue;
    }
    const bool bound = p.annot == AnnotKind::Constexpr ? spec_.constexprs.count(p.name) > 0 : spec_.paramTypes.count(p.name) > 0;
    if (!bound && p.defaultValue) {  // `BLOCK: tl.constexpr = 128`, `eps=1e-5`: the default, a constant
      PyVal v = eval(*p.defaultValue);
      if (!v.isPoison() && !v.isConst() && v.kind != PyVal::Kind::DType)
        error(p.defaultValue->loc, "the default of '" + p.name + "' must be a compile-time constant, got " + describe(v));
      env_[p.name] = Binding{v, p.loc};
      if (v.isIntConst() && p.annot == AnnotKind::Constexpr) fn_->constexprs.push_back({p.name, v.i});
      continue;
    }
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
  fn_->maxRegisters = spec_.maxRegisters;
  triton_ = pk_.module->tritonSpelling();
  try {
    bindGlobals();
    env_ = globals_;
    bindParams(*k);
    b_.setInsertionPointToEnd(&fn_->body);
    genBlock(k->body, 0, {{nullptr, 0}});
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
