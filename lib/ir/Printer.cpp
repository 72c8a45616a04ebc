// The IR printer: writes a Function in the textual form that ir/Parser.cpp reads back.
//
// Expects: any Function (verified IR prints in the documented form; malformed IR — a pass bug
// shown by --print-after-all — still prints, without crashing, in a generic form that marks
// what is wrong, but need not parse back).
// Guarantees: deterministic output; for verified IR, parse(print(f)) rebuilds f and printing
// it again gives the same text (tests/ir/RoundTripTest.cpp). The grammar is in docs/ir.md:
//
//   func @name(%p: ptr<f32>, %n: i32) constexprs(BLOCK = 64) loc(1:1) {
//     %a, %b = mnemonic %x, %y {attr = 1, other = "lt"} : <64xf32>, f32 loc(3:5)
//     %r = for %iv = %lo to %hi step %st iter_args(%acc = %init) : f32 { ... yield %v } loc(..)
//     %v = if %c : f32 { ... yield %a } else { ... yield %b } loc(..)
//     return loc(9:1)
//   }
#include "ir/Printer.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <unordered_map>
#include <unordered_set>

namespace tl {

namespace {

// Is `c` allowed inside a printed value name after its first character?
bool isNameChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '.';
}

// Turns a name hint into something the parser's lexer reads back as one value name:
// [A-Za-z_][A-Za-z0-9_.]* (no '.' for attribute and constexpr names, which are identifiers).
// Pure-digit names are reserved for unnamed values.
std::string sanitizeHint(const std::string& hint, bool allowDot = true) {
  std::string s;
  for (char c : hint) s += isNameChar(c) && (allowDot || c != '.') ? c : '_';
  if (!s.empty() && !((s[0] >= 'a' && s[0] <= 'z') || (s[0] >= 'A' && s[0] <= 'Z') || s[0] == '_'))
    s.insert(s.begin(), '_');
  return s;
}

class Printer {
 public:
  Printer(const PrintOptions& opts) : opts_(opts) {}

  // Names every value of `fn` as print() will (without the '%').
  const std::unordered_map<const Value*, std::string>& nameAll(const Function& fn) {
    // Names are given in textual order, so the parser, which creates values in that order,
    // rebuilds the same numbering for unnamed values.
    for (size_t i = 0; i < fn.body.args.size(); ++i) {
      const Value* a = fn.body.arg(i);
      nameValue(a, !a->name.empty() || i >= fn.params.size() ? a->name : fn.params[i].name);
    }
    nameRegionOps(fn.body);
    return names_;
  }

  std::string print(const Function& fn) {
    nameAll(fn);

    out_ += fn.level == IRLevel::Thread ? "thread_func @" : "func @";
    out_ += funcName(fn.name) + "(";
    for (size_t i = 0; i < fn.body.args.size(); ++i) {
      if (i) out_ += ", ";
      out_ += name(fn.body.arg(i)) + ": " + fn.body.arg(i)->type.str();
    }
    out_ += ")";
    if (!fn.constexprs.empty()) {
      out_ += " constexprs(";
      for (size_t i = 0; i < fn.constexprs.size(); ++i) {
        if (i) out_ += ", ";
        out_ += sanitizeHint(fn.constexprs[i].first, false) + " = " + std::to_string(fn.constexprs[i].second);
      }
      out_ += ")";
    }
    if (fn.numWarps > 0) out_ += " num_warps(" + std::to_string(fn.numWarps) + ")";
    if (fn.maxRegisters > 0) out_ += " max_registers(" + std::to_string(fn.maxRegisters) + ")";
    if (fn.level == IRLevel::Thread) out_ += " shared_bytes(" + std::to_string(fn.sharedBytes) + ")";
    printLoc(fn.loc);
    out_ += " {\n";
    printRegionOps(fn.body, 1);
    out_ += "}\n";
    return std::move(out_);
  }

 private:
  const PrintOptions& opts_;
  std::string out_;
  std::unordered_map<const Value*, std::string> names_;
  std::unordered_set<std::string> used_;
  std::unordered_map<std::string, int> nextSuffix_;  // base -> the last k tried for base.k
  int nextNumber_ = 0;

  // --- naming ---------------------------------------------------------------------------------

  // Gives `v` its printed name: the sanitized hint, made unique with ".1", ".2", ...; or the
  // next number when it has no hint.
  void nameValue(const Value* v, const std::string& hint) {
    if (names_.count(v)) return;
    std::string base = sanitizeHint(hint);
    std::string n;
    if (base.empty()) {
      n = std::to_string(nextNumber_++);
    } else {
      // base, else base.k for the smallest unused k. Every base.j below nextSuffix_[base] is
      // taken (names are never freed), so the search resumes there: linear, not quadratic, in
      // the number of values sharing a hint (200000 statements assigning `x`).
      n = base;
      int& k = nextSuffix_[base];
      while (used_.count(n)) n = base + "." + std::to_string(++k);
    }
    used_.insert(n);
    names_[v] = n;
  }

  // Names every value defined in `r`'s ops, in the order they appear in the text.
  void nameRegionOps(const Region& r) {
    for (const auto& op : r.ops) {
      for (const auto& res : op->results) nameValue(res.get(), res->name);
      for (const auto& sub : op->regions) {
        for (const auto& a : sub->args) nameValue(a.get(), a->name);
        nameRegionOps(*sub);
      }
    }
  }

  std::string name(const Value* v) const {
    if (!v) return "<<null>>";
    auto it = names_.find(v);
    // A value defined nowhere in this function (a dangling pointer left by a broken pass).
    return it == names_.end() ? "<<undefined>>" : "%" + it->second;
  }

  static std::string funcName(const std::string& n) {
    std::string s = sanitizeHint(n);
    return s.empty() ? "_" : s;
  }

  // --- pieces -------------------------------------------------------------------------------

  void indent(int depth) { out_.append(static_cast<size_t>(depth) * 2, ' '); }

  void printLoc(Loc loc) {
    if (opts_.locs && loc.known())
      out_ += " loc(" + std::to_string(loc.line) + ":" + std::to_string(loc.col) + ")";
  }

  // `%a, %b = ` (nothing for an op without results)
  void printResults(const Op& op) {
    if (op.results.empty()) return;
    for (size_t i = 0; i < op.results.size(); ++i) out_ += (i ? ", " : "") + name(op.result(i));
    out_ += " = ";
  }

  void printValueList(const std::vector<Value*>& vs, size_t from = 0) {
    for (size_t i = from; i < vs.size(); ++i) out_ += (i > from ? ", " : "") + name(vs[i]);
  }

  // ` : t1, t2` (nothing for an op without results)
  void printResultTypes(const Op& op) {
    if (op.results.empty()) return;
    out_ += " : ";
    for (size_t i = 0; i < op.results.size(); ++i) out_ += (i ? ", " : "") + op.result(i)->type.str();
  }

  void printAttrs(const Op& op) {
    if (op.attrs.empty()) return;
    out_ += " {";
    for (size_t i = 0; i < op.attrs.size(); ++i) {
      out_ += (i ? ", " : "") + sanitizeHint(op.attrs[i].name, false) + " = ";
      out_ += attrString(op.attrs[i].value);
    }
    out_ += "}";
  }

  // `{` newline, the ops one level deeper, then the closing `}` at this op's indentation.
  void printRegionBlock(const Region& r, int depth) {
    out_ += " {\n";
    printRegionOps(r, depth + 1);
    indent(depth);
    out_ += "}";
  }

  void printRegionOps(const Region& r, int depth) {
    for (const auto& op : r.ops) printOp(*op, depth);
  }

  // --- ops ----------------------------------------------------------------------------------

  void printOp(const Op& op, int depth) {
    indent(depth);
    if (op.kind == OpKind::For && isWellFormedFor(op)) printFor(op, depth);
    else if (op.kind == OpKind::If && isWellFormedIf(op)) printIf(op, depth);
    else if (op.kind == OpKind::While && isWellFormedWhile(op)) printWhile(op, depth);
    else printGeneric(op, depth);
    printLoc(op.loc);
    out_ += "\n";
  }

  static bool isWellFormedFor(const Op& op) {
    return op.numOperands() >= 3 && op.regions.size() == 1 &&
           op.region(0).args.size() == op.numOperands() - 2 && op.numResults() == op.numOperands() - 3;
  }
  static bool isWellFormedIf(const Op& op) {
    return op.numOperands() == 1 && op.regions.size() == 2 && op.region(0).args.empty() &&
           op.region(1).args.empty();
  }

  static bool isWellFormedWhile(const Op& op) {
    return op.regions.size() == 2 && op.numResults() == op.numOperands() &&
           op.region(0).args.size() == op.numOperands() && op.region(1).args.size() == op.numOperands();
  }

  // results = mnemonic operands {attrs} : types
  // Ops with regions reach here only when malformed; their regions follow, each headed by a
  // comment listing its arguments, so the student sees what the broken op holds.
  void printGeneric(const Op& op, int depth) {
    printResults(op);
    out_ += mnemonic(op.kind);
    if (!op.operands.empty()) out_ += " ";
    printValueList(op.operands);
    printAttrs(op);
    printResultTypes(op);
    for (const auto& r : op.regions) {
      out_ += " {\n";
      indent(depth + 1);
      out_ += "// region arguments:";
      for (const auto& a : r->args) out_ += " " + name(a.get()) + ": " + a->type.str();
      out_ += "\n";
      printRegionOps(*r, depth + 1);
      indent(depth);
      out_ += "}";
    }
  }

  // %r = for %iv = %lo to %hi step %st iter_args(%a = %init, ...) {attrs} : types { ... }
  void printFor(const Op& op, int depth) {
    const Region& body = op.region(0);
    printResults(op);
    out_ += "for " + name(body.arg(0)) + " = " + name(op.operand(0)) + " to " + name(op.operand(1)) +
            " step " + name(op.operand(2));
    if (op.numOperands() > 3) {
      out_ += " iter_args(";
      for (size_t i = 3; i < op.numOperands(); ++i)
        out_ += (i > 3 ? ", " : "") + name(body.arg(i - 2)) + " = " + name(op.operand(i));
      out_ += ")";
    }
    printAttrs(op);
    printResultTypes(op);
    printRegionBlock(body, depth);
  }

  // %r = while iter_args(%a = %init, ...) {attrs} : types { ... condition %c } do (%a.1, ...) { ... yield }
  // (the cond region's arguments are named in iter_args, the body's after `do`; with nothing
  // carried, both lists are left out)
  void printWhile(const Op& op, int depth) {
    const Region &cond = op.region(0), &body = op.region(1);
    printResults(op);
    out_ += "while";
    if (op.numOperands() > 0) {
      out_ += " iter_args(";
      for (size_t i = 0; i < op.numOperands(); ++i)
        out_ += (i ? ", " : "") + name(cond.arg(i)) + " = " + name(op.operand(i));
      out_ += ")";
    }
    printAttrs(op);
    printResultTypes(op);
    printRegionBlock(cond, depth);
    out_ += " do";
    if (!body.args.empty()) {
      out_ += " (";
      for (size_t i = 0; i < body.args.size(); ++i) out_ += (i ? ", " : "") + name(body.arg(i));
      out_ += ")";
    }
    printRegionBlock(body, depth);
  }

  // %r = if %c {attrs} : types { ... } else { ... }
  void printIf(const Op& op, int depth) {
    printResults(op);
    out_ += "if " + name(op.operand(0));
    printAttrs(op);
    printResultTypes(op);
    printRegionBlock(op.region(0), depth);
    out_ += " else";
    printRegionBlock(op.region(1), depth);
  }
};

}  // namespace

std::string formatDouble(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v < 0 ? "-inf" : "inf";
  char buf[64];
  // std::to_chars without a precision writes the shortest text that reads back as exactly v.
  auto res = std::to_chars(buf, buf + sizeof(buf), v);
  std::string s(buf, res.ptr);
  // Keep floats visibly distinct from integers: 1 -> 1.0 (1e+30 already is).
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return s;
}

std::string quoteString(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c < 0x20 || c >= 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\x%02x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

std::string attrString(const Attr& a) {
  if (auto* i = std::get_if<int64_t>(&a)) return std::to_string(*i);
  if (auto* d = std::get_if<double>(&a)) return formatDouble(*d);
  if (auto* list = std::get_if<std::vector<int64_t>>(&a)) {
    std::string s = "[";
    for (size_t i = 0; i < list->size(); ++i) s += (i ? ", " : "") + std::to_string((*list)[i]);
    return s + "]";
  }
  return quoteString(std::get<std::string>(a));
}

std::unordered_map<const Value*, std::string> printedValueNames(const Function& fn) {
  PrintOptions opts;
  Printer p(opts);
  return p.nameAll(fn);
}

std::string printFunction(const Function& fn, const PrintOptions& opts) {
  return Printer(opts).print(fn);
}

}  // namespace tl
