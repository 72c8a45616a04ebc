// Launch evaluation: the @launch decorator (plus `--set` overrides) -> LaunchConfig.
//
// Expects: a parsed kernel (syntax errors already reported). Guarantees: keywords are evaluated
// left to right, each binding a name later keywords can use; overrides replace a keyword's
// expression before evaluation (or are added at the front when the decorator lacks the name),
// so everything depending on them is recomputed. Every kernel parameter ends up bound exactly
// once (a buffer for a pointer, a value for a scalar or constexpr) or an error names it. All
// integer arithmetic is checked; errors are located at the offending sub-expression, in the
// kernel file or, for overrides, in the `<command line>` text.
//
// file("X.npy") buffers: the file is read later (Memory::fromLaunch), but its .npy header is read
// here, because an unannotated pointer parameter takes its dtype from the file and the kernel is
// specialized for that dtype. A file() override that replaces a buffer keyword and does not say
// output= keeps the replaced buffer's output flag (`--input out_ptr=o.npy` stays an output).
//
// pointers(A0, A1, ...) buffers: each name must be an earlier keyword holding a buffer (so a table
// can neither name itself nor form a cycle); the buffers a table names become buffers of the
// launch after the parameters' ones, in the order first named. Memory::fromLaunch (and tl-ptx's
// DeviceBuffers, with device addresses) writes the addresses. values([...]) checks every number
// against the dtype here.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <set>

#include "frontend/AST.h"
#include "frontend/CallArgs.h"
#include "frontend/ConstFold.h"
#include "frontend/Frontend.h"
#include "frontend/LaunchValue.h"
#include "frontend/Lexer.h"
#include "frontend/Parser.h"
#include "frontend/Suggest.h"

namespace tl {

using namespace ast;

bool parseOverride(const std::string& text, LaunchOverride& out) {
  size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0) return false;
  std::string name = text.substr(0, eq);
  while (!name.empty() && name.back() == ' ') name.pop_back();
  if (name.empty() || !(std::isalpha(static_cast<unsigned char>(name[0])) || name[0] == '_')) return false;
  for (char c : name)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
  out.name = name;
  out.expr = text.substr(eq + 1);
  return true;
}

namespace {

using namespace launchexpr;

// The largest buffer a launch may describe (elements): keeps the CPU stages' memory bounded.
constexpr int64_t kMaxBufferElems = int64_t(1) << 28;

// One keyword to evaluate: from the decorator, or from a --set override.
struct Entry {
  std::string name;
  Loc loc;                          // the keyword (or the override's name in its own text)
  const Expr* expr = nullptr;       // nullptr when the override text failed to parse
  const SourceFile* origin = nullptr;  // nullptr: the kernel file; else the override's text
  const Expr* replaced = nullptr;   // the decorator's expression an override replaced
};

class LaunchEvaluator {
 public:
  LaunchEvaluator(const Kernel& k, DiagEngine& diag) : kernel_(k), diag_(diag) {}

  LaunchConfig run(const std::vector<LaunchOverride>& overrides) {
    std::vector<Entry> entries;
    const Decorator* launch = kernel_.decorator("launch");
    if (launch) {
      for (const auto& a : launch->args)
        diag_.error(a->loc, "@launch takes keyword arguments only, e.g. @launch(N=1024, grid=(4,))");
      for (const auto& kw : launch->keywords) {
        entries.push_back({kw.name, kw.loc, kw.value.get(), nullptr});
        mentionNames(*kw.value);
      }
    }
    // Overrides: parse each in its own "<command line>" source, then replace or prepend.
    std::vector<Entry> front;
    for (const auto& ov : overrides) {
      Entry e = parseOverrideEntry(ov);
      bool replaced = false;
      for (auto& existing : entries)
        if (existing.name == e.name) {
          if (!existing.origin) existing.replaced = existing.expr;
          existing.expr = e.expr;
          existing.origin = e.origin;
          existing.loc = e.loc;
          replaced = true;
        }
      for (auto& existing : front)
        if (existing.name == e.name) {
          existing = e;
          replaced = true;
        }
      if (!replaced) front.push_back(e);
    }
    entries.insert(entries.begin(), front.begin(), front.end());

    entries_ = entries;
    for (const auto& e : entries) evalEntry(e);
    checkUnused();
    bindParams();
    return std::move(cfg_);
  }

 private:
  const Kernel& kernel_;
  DiagEngine& diag_;
  LaunchConfig cfg_;
  std::map<std::string, LVal> names_;
  std::map<std::string, Entry> boundBy_;  // name -> the entry that bound it
  std::vector<Entry> entries_;            // every keyword, in evaluation order
  std::set<std::string> used_;            // names a keyword's expression read
  std::set<std::string> mentioned_;       // names the decorator's own expressions mention
  std::vector<std::shared_ptr<SourceFile>> cmdFiles_;
  std::vector<std::vector<Token>> cmdTokens_;
  std::vector<ExprPtr> cmdExprs_;
  const SourceFile* origin_ = nullptr;  // where the expression being evaluated comes from
  int quiet_ = 0;                       // > 0: errors are not reported (a look at a replaced keyword)
  std::string current_;                 // the keyword being evaluated
  std::vector<std::string> pointees_;   // buffer keywords a pointers() names, first mention first

  // Reports at `loc` in the current origin: the kernel file (the DiagEngine's file) or an
  // override's text, whose location and source line are written into the message.
  void error(Loc loc, const std::string& msg) { errorIn(origin_, loc, msg); }
  void errorIn(const SourceFile* origin, Loc loc, const std::string& msg) {
    if (quiet_) return;
    if (!origin) {
      diag_.error(loc, msg);
      return;
    }
    std::string text = origin->path() + ":" + std::to_string(loc.line) + ":" + std::to_string(loc.col) + ": " + msg;
    std::string_view line = origin->line(static_cast<int>(loc.line));
    text += "\n    " + std::string(line) + "\n    " + std::string(loc.col > 0 ? loc.col - 1 : 0, ' ') + "^";
    diag_.error(Loc{}, text);
  }

  Entry parseOverrideEntry(const LaunchOverride& ov) {
    auto file = std::make_shared<SourceFile>("<command line>", ov.name + "=" + ov.expr);
    cmdFiles_.push_back(file);
    Entry e{ov.name, Loc{1, 1}, nullptr, file.get()};
    DiagEngine local(file);
    std::vector<Token> toks = lex(*file, local);
    if (toks.size() < 3 || !toks[1].isOp("=")) {
      errorIn(file.get(), Loc{1, 1}, "expected --set NAME=EXPR");
      return e;
    }
    std::vector<Token> exprToks(toks.begin() + 2, toks.end());
    ExprPtr expr = parseExpression(exprToks, local);
    for (const auto& d : local.diagnostics())
      if (d.severity == Severity::Error) errorIn(file.get(), d.loc, d.message);
    if (local.hasErrors()) return e;
    e.expr = expr.get();
    cmdExprs_.push_back(std::move(expr));
    return e;
  }

  void evalEntry(const Entry& e) {
    origin_ = e.origin;
    if (boundBy_.count(e.name) && !e.origin) {
      error(e.loc, "'" + e.name + "' is given twice in @launch");
      return;
    }
    boundBy_[e.name] = e;
    LVal v;
    current_ = e.name;
    if (e.expr) v = eval(*e.expr);
    current_.clear();
    if (v.kind == LVal::Kind::Buffer && v.buf.fill == Fill::File && !v.outputGiven && e.replaced)
      v.buf.output = replacedIsOutput(e);
    names_[e.name] = v;
    if (v.kind == LVal::Kind::Error) return;
    cfg_.names.push_back({e.name, show(v)});
    // Keyword-level problems (a bad grid, a value that does not fit its parameter) are
    // reported at the keyword.
    if (e.name == "grid") setGrid(v, e.loc);
    else if (e.name == "num_warps") setNumWarps(v, e.loc);
    else if (e.name == "num_stages") setNumStages(v, e.loc);
    else if (e.name == "maxnreg") setMaxRegisters(v, e.loc);
  }

  // Whether the decorator's expression that override `e` replaced describes an output buffer.
  // It is evaluated quietly in the kernel file: its errors belong to an expression not in use.
  bool replacedIsOutput(const Entry& e) {
    ++quiet_;
    origin_ = nullptr;
    LVal old = eval(*e.replaced);
    origin_ = e.origin;
    --quiet_;
    return old.kind == LVal::Kind::Buffer && old.buf.output;
  }

  void setGrid(const LVal& v, Loc at) {
    std::vector<LVal> dims = v.kind == LVal::Kind::Tuple ? v.items : std::vector<LVal>{v};
    if (dims.empty() || dims.size() > 3) {
      error(at, "grid must be an int or a tuple of 1 to 3 positive ints, got " + show(v));
      return;
    }
    for (size_t k = 0; k < dims.size(); ++k) {
      if (dims[k].kind != LVal::Kind::Int || dims[k].i < 1 || dims[k].i > INT32_MAX) {
        error(at, "grid must be an int or a tuple of 1 to 3 positive ints, got " + show(v));
        return;
      }
    }
    cfg_.grid = {1, 1, 1};
    for (size_t k = 0; k < dims.size(); ++k) cfg_.grid[k] = dims[k].i;
  }

  void setNumWarps(const LVal& v, Loc at) {
    if (v.kind != LVal::Kind::Int || v.i < 1 || v.i > 32 || !isPowerOfTwo(v.i)) {
      error(at, "num_warps must be a power of two from 1 to 32, got " + show(v));
      return;
    }
    cfg_.numWarps = static_cast<int>(v.i);
  }

  void setNumStages(const LVal& v, Loc at) {
    if (v.kind != LVal::Kind::Int || v.i < 1 || v.i > 16) {
      error(at, "num_stages must be an int from 1 to 16, got " + show(v));
      return;
    }
    cfg_.numStages = static_cast<int>(v.i);
  }

  // Triton's maxnreg: the registers per thread ptxas may use (PTX .maxnreg), within ptxas's bounds.
  void setMaxRegisters(const LVal& v, Loc at) {
    if (v.kind != LVal::Kind::Int || v.i < kMinMaxRegisters || v.i > kMaxMaxRegisters) {
      error(at, "maxnreg must be an int from " + std::to_string(kMinMaxRegisters) + " to " + std::to_string(kMaxMaxRegisters) +
                    " (the registers per thread ptxas may use), got " + show(v));
      return;
    }
    cfg_.maxRegisters = static_cast<int>(v.i);
  }

  // Every name the expression mentions (a walk of at most ast::kMaxNesting levels).
  void mentionNames(const Expr& e) {
    if (e.kind == ExprKind::Name) mentioned_.insert(e.str);
    if (e.lhs) mentionNames(*e.lhs);
    if (e.rhs) mentionNames(*e.rhs);
    for (const auto& it : e.items) mentionNames(*it);
    for (const auto& kw : e.keywords) mentionNames(*kw.value);
  }

  // ---- keywords nothing reads ----------------------------------------------------------------
  // A keyword that binds no parameter, is not grid/num_warps and that no keyword reads (nor the
  // decorator mentions: `--set grid=...` may leave a helper of the decorator's grid unread) is a
  // typo when it is close to one of those names (`num_warp=8`, `--set n=30` for N), and useless
  // when it describes a buffer: both are errors (it would silently do nothing).
  void checkUnused() {
    std::vector<std::string> targets;
    std::string paramList;
    for (const auto& p : kernel_.params) {
      targets.push_back(p.name);
      paramList += (paramList.empty() ? "" : ", ") + p.name;
    }
    targets.push_back("grid");
    targets.push_back("num_warps");
    targets.push_back("num_stages");
    targets.push_back("maxnreg");
    std::set<std::string> seen;
    for (const auto& e : entries_) {
      if (!seen.insert(e.name).second) continue;  // reported as given twice
      bool target = false;
      for (const auto& t : targets) target |= t == e.name;
      auto v = names_.find(e.name);
      if (target || used_.count(e.name) || mentioned_.count(e.name) || v == names_.end() || v->second.kind == LVal::Kind::Error) continue;
      origin_ = boundBy_[e.name].origin;
      Loc at = boundBy_[e.name].loc;
      const std::string what = origin_ ? "--set " + e.name : "@launch keyword '" + e.name + "'";
      std::string hint = didYouMean(e.name, targets);
      if (!hint.empty())
        error(at, what + " binds no parameter of '" + kernel_.name + "' and no keyword uses it" + hint);
      else if (v->second.kind == LVal::Kind::Buffer)
        error(at, what + " is a buffer but '" + kernel_.name + "' has no parameter '" + e.name + "' (its parameters: " + paramList + ")");
    }
  }

  // ---- parameter binding -------------------------------------------------------------------
  void bindParams() {
    for (const auto& p : kernel_.params) {
      auto it = names_.find(p.name);
      if (it == names_.end()) {
        if (p.defaultValue) continue;  // `BLOCK: tl.constexpr = 16`, `eps=1e-5`: the front end uses the default
        origin_ = nullptr;
        error(p.loc, "parameter '" + p.name + "' has no value: add it to @launch or pass --set " + p.name + "=...");
        continue;
      }
      const LVal& v = it->second;
      if (v.kind == LVal::Kind::Error) continue;
      const Entry& e = boundBy_[p.name];
      origin_ = e.origin;
      bindParam(p, v, e.loc);
    }
    // The buffers only a pointers() names: buffers of the launch too, after the parameters'.
    for (const std::string& name : pointees_) {
      bool isParam = false;
      for (const auto& p : kernel_.params) isParam |= p.name == name;
      auto it = names_.find(name);
      if (isParam || it == names_.end() || it->second.kind != LVal::Kind::Buffer) continue;
      BufferSpec b = it->second.buf;
      b.param = name;
      b.loc = boundBy_[name].origin ? Loc{} : boundBy_[name].loc;
      cfg_.buffers.push_back(b);
    }
  }

  void bindParam(const ast::Param& p, const LVal& v, Loc at) {
    const std::string& n = p.name;
    if (p.annot == AnnotKind::Constexpr) {
      if (v.kind == LVal::Kind::String) {  // ACTIVATION="leaky_relu": a string constexpr, as Triton allows
        cfg_.stringConstexprs[n] = v.str;
        return;
      }
      if (v.kind == LVal::Kind::Float) {  // eps: tl.constexpr = 1e-5
        cfg_.floatConstexprs[n] = v.f;
        return;
      }
      if (!v.isIntLike()) {
        error(at, "constexpr parameter '" + n + "' needs a number or a string, got " + std::string(kindName(v)) + " (" + show(v) + ")");
        return;
      }
      cfg_.constexprs[n] = v.i;
      return;
    }
    if (v.kind == LVal::Kind::Buffer) {
      if (p.annot == AnnotKind::Scalar) {
        error(at, "'" + n + "' is a scalar parameter (" + dtypeName(p.dtype) + ") but is bound to a buffer");
        return;
      }
      if (p.annot == AnnotKind::Pointer && v.buf.fill == Fill::Pointers && p.dtype != DType::I64) {
        error(at, "'" + n + "' is *" + dtypeName(p.dtype) + " but pointers() makes a table of int64 addresses: declare it "
                  "*i64 (or leave it unannotated) and cast each loaded address with .to(tl.pointer_type(...))");
        return;
      }
      if (p.annot == AnnotKind::Pointer && v.buf.fill != Fill::File && v.buf.dtype != p.dtype) {
        error(at, "buffer for '" + n + "' has dtype " + dtypeName(v.buf.dtype) + " but the parameter is *" +
                      dtypeName(p.dtype) + ": pass dtype=" + dtypeName(p.dtype));
        return;
      }
      BufferSpec b = v.buf;
      b.param = n;
      if (p.annot == AnnotKind::Pointer && b.fill == Fill::File) b.dtype = p.dtype;
      b.loc = origin_ ? Loc{} : at;
      cfg_.buffers.push_back(b);
      return;
    }
    if (p.annot == AnnotKind::Pointer) {
      error(at, "'" + n + "' is a pointer parameter (*" + std::string(dtypeName(p.dtype)) +
                    ") and needs a buffer such as zeros((N,)), got " + kindName(v));
      return;
    }
    if (!v.isNumber()) {
      error(at, "parameter '" + n + "' needs a number or a buffer, got " + std::string(kindName(v)) + " (" + show(v) + ")");
      return;
    }
    ScalarValue s;
    if (p.annot == AnnotKind::Scalar) {
      s.dtype = p.dtype;
      if (isFloat(p.dtype)) {
        s.f = v.asDouble();
      } else if (v.kind == LVal::Kind::Float) {
        if (!std::isfinite(v.f) || std::fabs(v.f) > 9.2e18) {
          error(at, "value " + show(v) + " does not fit in " + dtypeName(p.dtype) + " parameter '" + n + "'");
          return;
        }
        s.i = static_cast<int64_t>(v.f);  // converted: truncation toward zero
      } else {
        s.i = v.i;
      }
      if (!isFloat(p.dtype)) {
        bool fits = p.dtype == DType::I64 || (p.dtype == DType::I32 && fitsI32(s.i)) ||
                    (p.dtype == DType::I1 && (s.i == 0 || s.i == 1));
        if (!fits) {
          error(at, "value " + show(v) + " does not fit in " + dtypeName(p.dtype) + " parameter '" + n + "'");
          return;
        }
      }
    } else if (v.kind == LVal::Kind::Float) {
      s.dtype = DType::F32;
      s.f = v.f;
    } else if (v.kind == LVal::Kind::Bool) {
      s.dtype = DType::I1;
      s.i = v.i;
    } else {
      s.dtype = fitsI32(v.i) ? DType::I32 : DType::I64;
      s.i = v.i;
    }
    cfg_.scalars[n] = s;
  }

  // ---- expressions -------------------------------------------------------------------------
  LVal fail(Loc loc, const std::string& msg) {
    error(loc, msg);
    return LVal{};
  }

  // The one recursive walk of an @launch expression: at most ast::kMaxNesting levels deep (the
  // parser's bound). It stays a small dispatcher; the cases with large frames (calls, which
  // hold buffer descriptions) are out of line so that each level costs little stack.
  LVal eval(const Expr& e) {
    switch (e.kind) {
      case ExprKind::Int: return LVal::integer(e.ival);
      case ExprKind::Float: return LVal::real(e.fval);
      case ExprKind::Bool: {
        LVal v;
        v.kind = LVal::Kind::Bool;
        v.i = e.ival;
        return v;
      }
      case ExprKind::None: {
        LVal v;
        v.kind = LVal::Kind::None;
        return v;
      }
      case ExprKind::String: {
        LVal v;
        v.kind = LVal::Kind::String;
        v.str = e.str;
        return v;
      }
      case ExprKind::Name: return evalName(e);
      case ExprKind::Tuple: return evalTuple(e);
      case ExprKind::Unary: return evalUnary(e);
      case ExprKind::Binary: return evalBinary(e);
      case ExprKind::Call: return evalCall(e);
      case ExprKind::Attribute:
      case ExprKind::Subscript:
      case ExprKind::Slice:
      case ExprKind::IfExp:
      case ExprKind::BoolOp:
        return fail(e.loc, "this expression is not supported in @launch: use numbers, names, + - * / // %, tuples and calls");
    }
    return LVal{};
  }

  [[gnu::noinline]] LVal evalTuple(const Expr& e) {
    LVal v;
    v.kind = LVal::Kind::Tuple;
    for (const auto& it : e.items) {
      v.items.push_back(eval(*it));
      if (v.items.back().kind == LVal::Kind::Error) return LVal{};
    }
    return v;
  }

  [[gnu::noinline]] LVal evalName(const Expr& e) {
    auto it = names_.find(e.str);
    if (it != names_.end()) {
      used_.insert(e.str);
      return it->second;  // an Error value stays silent
    }
    if (e.str == "inf") return LVal::real(INFINITY);
    if (auto d = parseDType(e.str)) {
      LVal v;
      v.kind = LVal::Kind::DType;
      v.dtype = *d;
      return v;
    }
    for (const auto& later : entries_)
      if (later.name == e.str)
        return fail(e.loc, "'" + e.str + "' is used before it is given a value: @launch keywords are evaluated left "
                           "to right (move " + e.str + "=... in front of this keyword)");
    bool isParam = false;
    for (const auto& p : kernel_.params) isParam |= p.name == e.str;
    if (isParam) return fail(e.loc, "parameter '" + e.str + "' is used in @launch before it is given a value: add " + e.str + "=... in front of this keyword");
    std::vector<std::string> known;
    for (const auto& [name, _] : names_) known.push_back(name);
    known.push_back("inf");
    for (const char* d : {"i1", "i32", "i64", "f16", "bf16", "f32", "f8e4m3", "f8e5m2"}) known.push_back(d);
    std::string hint = didYouMean(e.str, known);
    if (!hint.empty()) return fail(e.loc, "unknown name '" + e.str + "' in @launch" + hint);
    return fail(e.loc, "unknown name '" + e.str + "' in @launch: define it as an earlier keyword (e.g. " + e.str + "=1024)");
  }

  [[gnu::noinline]] LVal evalUnary(const Expr& e) {
    LVal v = eval(*e.lhs);
    if (v.kind == LVal::Kind::Error) return v;
    if (!v.isNumber()) return fail(e.loc, std::string("unary operator needs a number, got ") + kindName(v));
    if (e.unaryOp == UnaryOp::Invert) return fail(e.loc, "'~' is not supported in @launch expressions");
    if (e.unaryOp == UnaryOp::Pos) return v.kind == LVal::Kind::Bool ? LVal::integer(v.i) : v;
    if (v.kind == LVal::Kind::Float) return LVal::real(-v.f);
    if (v.i == INT64_MIN) return fail(e.loc, "integer overflow in negation");
    return LVal::integer(-v.i);
  }

  [[gnu::noinline]] LVal evalBinary(const Expr& e) {
    LVal a = eval(*e.lhs);
    if (a.kind == LVal::Kind::Error) return a;
    LVal b = eval(*e.rhs);
    if (b.kind == LVal::Kind::Error) return b;
    BinOp op = e.binOp;
    bool arith = op == BinOp::Add || op == BinOp::Sub || op == BinOp::Mul || op == BinOp::Div ||
                 op == BinOp::FloorDiv || op == BinOp::Mod || op == BinOp::Pow;
    const bool shift = op == BinOp::Shl || op == BinOp::Shr;
    if (!arith && !shift)
      return fail(e.loc, std::string("operator '") + spelling(op) + "' is not supported in @launch: use + - * / // % ** << >>");
    if (shift && !(a.isIntLike() && b.isIntLike()))
      return fail(e.loc, std::string("operator '") + spelling(op) + "' needs integers, got " + kindName(a) + " and " + kindName(b));
    if (!a.isNumber() || !b.isNumber())
      return fail(e.loc, std::string("operator '") + spelling(op) + "' needs numbers, got " + kindName(a) + " and " + kindName(b));
    if (a.isIntLike() && b.isIntLike() && op != BinOp::Div) {
      std::string err;
      auto r = foldInt(op, a.i, b.i, err);
      if (!r) return fail(e.loc, err);
      return LVal::integer(*r);
    }
    double x = a.asDouble(), y = b.asDouble();
    if ((op == BinOp::Div || op == BinOp::FloorDiv || op == BinOp::Mod) && y == 0)
      return fail(e.loc, "division by zero");
    switch (op) {
      case BinOp::Add: return LVal::real(x + y);
      case BinOp::Sub: return LVal::real(x - y);
      case BinOp::Mul: return LVal::real(x * y);
      case BinOp::Div: return LVal::real(x / y);
      case BinOp::FloorDiv: return LVal::real(std::trunc(x / y));
      case BinOp::Mod: return LVal::real(std::fmod(x, y));
      case BinOp::Pow: return LVal::real(std::pow(x, y));
      default: return LVal{};
    }
  }

  // ---- calls -------------------------------------------------------------------------------
  // Binds a call's positional and keyword arguments to a signature (`required` of them first).
  // Returns false after reporting an error. Missing optional arguments stay Kind::Error.
  bool bindArgs(const Expr& call, const std::string& fname, const std::vector<std::string>& sig,
                size_t required, std::vector<LVal>& out, std::vector<Loc>& locs) {
    out.assign(sig.size(), LVal{});
    locs.assign(sig.size(), call.loc);
    std::vector<bool> given;
    return bindCallArgs(
        call, fname, sig, required, /*stopAtFirst=*/true, given,
        [&](const Expr& arg, size_t slot) {
          LVal v = eval(arg);
          if (slot < sig.size()) {
            locs[slot] = arg.loc;
            out[slot] = std::move(v);
            return out[slot].kind != LVal::Kind::Error;
          }
          return v.kind != LVal::Kind::Error;
        },
        [&](Loc loc, const std::string& msg) { error(loc, msg); });
  }

  [[gnu::noinline]] LVal evalCall(const Expr& e) {
    if (e.lhs->kind != ExprKind::Name) return fail(e.loc, "only built-in functions can be called in @launch");
    const std::string& f = e.lhs->str;
    if (f == "cdiv" || f == "next_pow2" || f == "min" || f == "max") return evalMathCall(e, f);
    static const std::map<std::string, std::pair<Fill, std::vector<std::string>>> kBuffers = {
        {"randn", {Fill::Randn, {"shape", "mean", "std", "seed", "dtype", "output"}}},
        {"uniform", {Fill::Uniform, {"shape", "lo", "hi", "seed", "dtype", "output"}}},
        {"arange", {Fill::Arange, {"shape", "start", "step", "dtype", "output"}}},
        {"full", {Fill::Full, {"shape", "value", "dtype", "output"}}},
        {"zeros", {Fill::Zeros, {"shape", "dtype", "output"}}},
        {"file", {Fill::File, {"path", "output"}}},
        {"empty", {Fill::Empty, {"shape", "dtype", "output"}}},
    };
    if (f == "pointers") return evalPointers(e);
    if (f == "values") return evalValues(e);
    auto it = kBuffers.find(f);
    if (it == kBuffers.end())
      return fail(e.loc, "unknown function '" + f + "' in @launch (known: cdiv, next_pow2, min, max, randn, uniform, arange, full, zeros, empty, file, pointers, values)" +
                             didYouMean(f, {"cdiv", "next_pow2", "min", "max", "randn", "uniform", "arange", "full", "zeros", "empty", "file", "pointers", "values"}));
    const auto& [fill, sig] = it->second;
    std::vector<LVal> args;
    std::vector<Loc> locs;
    size_t required = fill == Fill::Full ? 2 : 1;
    if (!bindArgs(e, f, sig, required, args, locs)) return LVal{};
    LVal out;
    out.kind = LVal::Kind::Buffer;
    BufferSpec& b = out.buf;
    b.fill = fill;
    b.loc = e.loc;
    // Defaults per fill: a/b are (mean, std), (lo, hi), (start, step) or (value, -).
    b.a = 0;
    b.b = fill == Fill::Arange || fill == Fill::Randn || fill == Fill::Uniform ? 1 : 0;
    for (size_t k = 0; k < sig.size(); ++k) {
      const LVal& v = args[k];
      if (v.kind == LVal::Kind::Error) continue;  // not given
      const std::string& name = sig[k];
      if (name == "shape") {
        if (!toShape(v, locs[k], b.shape)) return LVal{};
      } else if (name == "path") {
        if (v.kind != LVal::Kind::String) return fail(locs[k], "file() needs a path string, e.g. file(\"x.npy\")");
        b.file = v.str;
      } else if (name == "dtype") {
        if (v.kind != LVal::Kind::DType) return fail(locs[k], "dtype must be a dtype name such as f32 or f16, got " + show(v));
        b.dtype = v.dtype;
      } else if (name == "output") {
        if (!v.isIntLike()) return fail(locs[k], "output must be True or False, got " + show(v));
        b.output = v.i != 0;
        out.outputGiven = true;
      } else if (name == "seed") {
        if (!v.isIntLike() || v.i < 0) return fail(locs[k], "seed must be a non-negative int, got " + show(v));
        b.seed = static_cast<uint64_t>(v.i);
      } else {
        if (!v.isNumber()) return fail(locs[k], f + "() argument '" + name + "' must be a number, got " + show(v));
        bool first = name == "mean" || name == "lo" || name == "start" || name == "value";
        (first ? b.a : b.b) = v.asDouble();
      }
    }
    if (fill == Fill::Uniform && !(b.a < b.b)) return fail(e.loc, "uniform() needs lo < hi");
    if (fill == Fill::Randn && b.b < 0) return fail(e.loc, "randn() needs std >= 0");
    if (fill == Fill::File)
      if (auto d = npyHeaderDType(b.file)) b.dtype = *d;  // an unannotated pointer takes it
    return out;
  }

  // pointers(A0, A1, ...): an i64 buffer holding the addresses of the buffer keywords it names
  // (each name is looked up like any other; a name can repeat; a table may name another table).
  [[gnu::noinline]] LVal evalPointers(const Expr& e) {
    if (!e.keywords.empty())
      return fail(e.keywords[0].loc, "pointers() takes buffer names only, e.g. pointers(A0, A1, A2)");
    if (e.items.empty()) return fail(e.loc, "pointers() needs at least one buffer name, e.g. pointers(A0, A1)");
    if (static_cast<int64_t>(e.items.size()) > kMaxBufferElems) return fail(e.loc, "pointers() names too many buffers");
    LVal out;
    out.kind = LVal::Kind::Buffer;
    out.buf.fill = Fill::Pointers;
    out.buf.dtype = DType::I64;
    out.buf.shape = {static_cast<int64_t>(e.items.size())};
    out.buf.loc = e.loc;
    for (const auto& item : e.items) {
      if (item->kind != ExprKind::Name)
        return fail(item->loc, "pointers() takes the names of buffer keywords (A0=randn((M, K)), then pointers(A0)), "
                               "not an expression");
      if (item->str == current_)
        return fail(item->loc, "pointers() cannot hold its own address: '" + current_ + "' is the keyword being defined");
      LVal v = evalName(*item);
      if (v.kind == LVal::Kind::Error) return v;
      if (v.kind != LVal::Kind::Buffer)
        return fail(item->loc, "'" + item->str + "' is " + kindName(v) + " (" + show(v) +
                                   "), not a buffer: pointers() takes the names of buffer keywords");
      out.buf.pointees.push_back(item->str);
      if (!quiet_ && std::find(pointees_.begin(), pointees_.end(), item->str) == pointees_.end())
        pointees_.push_back(item->str);  // (not from a replaced keyword's quiet look)
    }
    return out;
  }

  // values([v0, v1, ...], dtype=, output=False): a 1-D buffer of the given numbers. The dtype
  // defaults to i32 (all ints) or f32; ints must fit it, and an int dtype takes no floats.
  [[gnu::noinline]] LVal evalValues(const Expr& e) {
    std::vector<LVal> args;
    std::vector<Loc> locs;
    if (!bindArgs(e, "values", {"values", "dtype", "output"}, 1, args, locs)) return LVal{};
    const LVal& list = args[0];
    if (list.kind != LVal::Kind::Tuple || list.items.empty())
      return fail(locs[0], "values() needs a non-empty list of numbers, e.g. values([1, 2, 3], dtype=i32), got " + show(list));
    // Where element k was written, when the list is written in the call (else the list's place).
    const Expr* listExpr = !e.items.empty() ? e.items[0].get() : nullptr;
    for (const auto& kw : e.keywords)
      if (kw.name == "values") listExpr = kw.value.get();
    auto elemLoc = [&](size_t k) {
      return listExpr && listExpr->kind == ExprKind::Tuple && k < listExpr->items.size() ? listExpr->items[k]->loc : locs[0];
    };
    bool anyFloat = false;
    for (size_t k = 0; k < list.items.size(); ++k) {
      const LVal& v = list.items[k];
      if (!v.isNumber()) return fail(elemLoc(k), "values() element " + std::to_string(k) + " must be a number, got " + show(v));
      anyFloat |= v.kind == LVal::Kind::Float;
    }
    LVal out;
    out.kind = LVal::Kind::Buffer;
    BufferSpec& b = out.buf;
    b.fill = Fill::Values;
    b.loc = e.loc;
    b.dtype = anyFloat ? DType::F32 : DType::I32;
    if (args[1].kind != LVal::Kind::Error) {
      if (args[1].kind != LVal::Kind::DType) return fail(locs[1], "dtype must be a dtype name such as i32 or f16, got " + show(args[1]));
      b.dtype = args[1].dtype;
    }
    if (args[2].kind != LVal::Kind::Error) {
      if (!args[2].isIntLike()) return fail(locs[2], "output must be True or False, got " + show(args[2]));
      b.output = args[2].i != 0;
      out.outputGiven = true;
    }
    for (size_t k = 0; k < list.items.size(); ++k) {
      const LVal& v = list.items[k];
      ScalarValue sv;
      sv.dtype = b.dtype;
      if (isFloat(b.dtype)) {
        sv.f = v.asDouble();
      } else if (v.kind == LVal::Kind::Float) {
        return fail(elemLoc(k), "values() element " + std::to_string(k) + " is " + show(v) + ", not an integer, but the dtype is " +
                                    dtypeName(b.dtype) + (args[1].kind == LVal::Kind::Error ? "" : ": pass dtype=f32"));
      } else {
        bool fits = b.dtype == DType::I64 || (b.dtype == DType::I32 && fitsI32(v.i)) ||
                    (b.dtype == DType::I1 && (v.i == 0 || v.i == 1));
        if (!fits)
          return fail(elemLoc(k), "values() element " + std::to_string(k) + " (" + show(v) + ") does not fit in " +
                                      dtypeName(b.dtype) + (b.dtype == DType::I32 ? ": pass dtype=i64" : ""));
        sv.i = v.i;
      }
      b.values.push_back(sv);
    }
    b.shape = {static_cast<int64_t>(b.values.size())};
    return out;
  }

  bool toShape(const LVal& v, Loc loc, Shape& shape) {
    std::vector<LVal> dims = v.kind == LVal::Kind::Tuple ? v.items : std::vector<LVal>{v};
    if (dims.empty()) {
      error(loc, "a buffer shape needs at least one dimension");
      return false;
    }
    int64_t total = 1;
    for (const auto& d : dims) {
      if (d.kind != LVal::Kind::Int || d.i < 1) {
        error(loc, "a buffer shape must be a positive int or a tuple of positive ints, got " + show(v));
        return false;
      }
      if (d.i > kMaxBufferElems || total * d.i > kMaxBufferElems) {
        error(loc, "buffer of shape " + show(v) + " is too large (at most " + std::to_string(kMaxBufferElems) + " elements)");
        return false;
      }
      total *= d.i;
      shape.push_back(d.i);
    }
    return true;
  }

  [[gnu::noinline]] LVal evalMathCall(const Expr& e, const std::string& f) {
    if (!e.keywords.empty()) return fail(e.keywords[0].loc, f + "() takes no keyword arguments");
    size_t want = f == "next_pow2" ? 1 : 2;
    if (e.items.size() != want && !((f == "min" || f == "max") && e.items.size() >= 2))
      return fail(e.loc, f + "() takes " + std::to_string(want) + (want == 1 ? " argument" : " arguments"));
    std::vector<LVal> args;
    for (const auto& a : e.items) {
      args.push_back(eval(*a));
      if (args.back().kind == LVal::Kind::Error) return LVal{};
      if (!args.back().isNumber()) return fail(a->loc, f + "() needs numbers, got " + kindName(args.back()));
    }
    std::string err;
    if (f == "next_pow2" || f == "cdiv") {
      for (size_t k = 0; k < args.size(); ++k)
        if (!args[k].isIntLike()) return fail(e.items[k]->loc, f + "() needs integers, got " + show(args[k]));
      auto r = f == "cdiv" ? foldCdiv(args[0].i, args[1].i, err) : foldNextPow2(args[0].i, err);
      if (!r) return fail(e.loc, err);
      return LVal::integer(*r);
    }
    LVal best = args[0];
    for (size_t k = 1; k < args.size(); ++k) {
      bool less = args[k].asDouble() < best.asDouble();
      if (f == "min" ? less : args[k].asDouble() > best.asDouble()) best = args[k];
    }
    if (best.kind == LVal::Kind::Bool) best.kind = LVal::Kind::Int;
    return best;
  }
};

}  // namespace

LaunchConfig evalLaunch(const ParsedKernel& kernel, const std::vector<LaunchOverride>& overrides,
                        DiagEngine& diag) {
  const Kernel* k = kernel.module ? kernel.module->mainKernel() : nullptr;
  if (!k) {
    diag.error(Loc{}, "no kernel to launch: the file has no '@jit def ...'");
    return LaunchConfig{};
  }
  return LaunchEvaluator(*k, diag).run(overrides);
}

}  // namespace tl
