// Sema, the debugging built-ins (docs/language.md, "Debugging"):
//
//   tl.device_print(prefix, *args, hex=False)  and Python's print(...)   -> device_print op
//   tl.device_assert(cond, msg="", mask=None)  and `assert cond, msg`    -> device_assert op
//   tl.static_print(*args)                                               -> a compile-time line
//
// device_print's prefix is munged as Triton's semantic.device_print does (" x: "), so every stage
// prints Triton's line format (runtime/DevicePrint.h). Constant arguments become tensors of their
// default dtype (as Triton's to_tensor). print(...) is Triton's alias of device_print; its first
// argument is the prefix when it is a string (else the prefix is empty: a tilelab leniency).
// device_assert takes i1 (or numbers: != 0), with mask=False elements passing; the op checks at
// run time in every stage, always (not only under TRITON_DEBUG=1: docs/language.md says why).
// A compile-time constant condition (assert BLOCK % 16 == 0) is checked at compile time: no op,
// and a false one is a located error.
// static_print joins its arguments' texts with spaces, as Python's print does: constants as
// Python prints them, tensors as Triton's str(tensor) ("fp32[128]", "int32[]" for a scalar).
#include <cstdio>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include "frontend/Sema.h"

namespace tl {

using namespace ast;

namespace {

// Triton's dtype names (str(tl.float32) == "fp32").
std::string tritonDTypeName(DType d) {
  switch (d) {
    case DType::I1: return "int1";
    case DType::I32: return "int32";
    case DType::I64: return "int64";
    case DType::F16: return "fp16";
    case DType::BF16: return "bf16";
    case DType::F32: return "fp32";
  }
  return "?";
}

// Python's repr of a float: the shortest text that reads back as the same double.
std::string pythonFloat(double f) {
  if (f != f) return "nan";
  if (f == INFINITY) return "inf";
  if (f == -INFINITY) return "-inf";
  char buf[40];
  for (int prec = 1; prec <= 17; ++prec) {
    std::snprintf(buf, sizeof buf, "%.*g", prec, f);
    if (std::strtod(buf, nullptr) == f) break;
  }
  std::string s = buf;
  if (s.find_first_of(".en") == std::string::npos) s += ".0";
  return s;
}

// Triton's prefix munging (semantic.device_print): with arguments the prefix ends in ": ";
// a prefix longer than 2 characters starts with " ". ("x" -> " x: ", "" -> ": " with args.)
std::string tritonPrintPrefix(std::string prefix, bool hasArgs) {
  auto endsWith = [&](const char* t) {
    size_t n = std::strlen(t);
    return prefix.size() >= n && prefix.compare(prefix.size() - n, n, t) == 0;
  };
  if (hasArgs && !endsWith(" ")) prefix += " ";
  if (hasArgs && !endsWith(": ")) prefix = prefix.substr(0, prefix.size() - 1) + ": ";
  if (prefix.size() > 2 && prefix[0] != ' ') prefix = " " + prefix;
  return prefix;
}

bool printableAscii(const std::string& s) {
  for (char c : s)
    if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) > 0x7e) return false;
  return true;
}

}  // namespace

// What static_print shows for one argument.
std::string Sema::staticText(const PyVal& p) const {
  switch (p.kind) {
    case PyVal::Kind::String: return p.s;
    case PyVal::Kind::Int: return std::to_string(p.i);
    case PyVal::Kind::Bool: return p.i ? "True" : "False";
    case PyVal::Kind::Float: return pythonFloat(p.f);
    case PyVal::Kind::None: return "None";
    case PyVal::Kind::DType: return p.ptrTo ? "pointer<" + tritonDTypeName(p.dtype) + ">" : tritonDTypeName(p.dtype);
    case PyVal::Kind::Tuple: {
      std::string s = "(";
      for (size_t k = 0; k < p.items.size(); ++k) s += (k ? ", " : "") + staticText(p.items[k]);
      return s + (p.items.size() == 1 ? ",)" : ")");
    }
    case PyVal::Kind::Value: {
      const Type& t = p.v->type;
      std::string s = t.isPtr ? "pointer<" + tritonDTypeName(t.dtype) + ">" : tritonDTypeName(t.dtype);
      s += "[";
      for (size_t d = 0; d < t.shape.size(); ++d) s += (d ? ", " : "") + std::to_string(t.shape[d]);
      return s + "]";
    }
    default: return describe(p);
  }
}

// tl.static_print(*args): one line of compile-time output (DiagEngine::compileOutput).
PyVal Sema::builtinStaticPrint(const Expr& e) {
  std::string line;
  bool ok = true;
  for (size_t k = 0; k < e.items.size(); ++k) {
    PyVal v = eval(*e.items[k]);
    ok = ok && !v.isPoison();
    if (!v.isPoison()) line += (k ? " " : "") + staticText(v);
  }
  for (const auto& kw : e.keywords) {
    eval(*kw.value);
    error(kw.loc, "static_print() takes no keyword arguments (got '" + kw.name + "')");
    ok = false;
  }
  if (ok) diag_.compileOutput(line);
  return ok ? PyVal::none() : PyVal::poison();
}

// tl.device_print(prefix, *args, hex=False) and print(...): one device_print op.
PyVal Sema::builtinDevicePrint(const Expr& e, const std::string& f) {
  std::vector<PyVal> vals;
  for (const auto& a : e.items) vals.push_back(eval(*a));
  bool hex = false, ok = true;
  for (const auto& kw : e.keywords) {
    PyVal v = eval(*kw.value);
    if (kw.name != "hex") {
      error(kw.loc, f + "() has no keyword argument '" + kw.name + "' (it takes prefix, *args, hex=False)");
      ok = false;
    } else if (v.kind == PyVal::Kind::Bool || v.kind == PyVal::Kind::Int) {
      hex = v.i != 0;
    } else if (!v.isPoison()) {
      error(kw.value->loc, f + "() hex must be True or False, got " + describe(v));
      ok = false;
    }
  }
  size_t first = 0;
  std::string prefix;
  if (!vals.empty() && vals[0].kind == PyVal::Kind::String) {
    prefix = vals[0].s;
    first = 1;
  } else if (f != "print") {
    if (vals.empty()) return fail(e.loc, f + "() needs a prefix string: " + f + "(\"x\", x)");
    if (!vals[0].isPoison())
      error(e.items[0]->loc, f + "() prefix must be a string, got " + describe(vals[0]) + ": " + f + "(\"x\", x)");
    return PyVal::poison();
  }
  if (!printableAscii(prefix)) {
    error(e.items[0]->loc, f + "() prefix must be printable ASCII (no newlines or other control characters)");
    ok = false;
  }
  std::vector<Value*> operands;
  for (size_t k = first; k < vals.size(); ++k) {
    const PyVal& v = vals[k];
    Loc loc = e.items[k]->loc;
    if (v.isPoison()) { ok = false; continue; }
    if (v.isConst()) {
      operands.push_back(toValue(v, loc));
    } else if (v.isValue()) {
      operands.push_back(v.v);
    } else {
      error(loc, f + "() arguments after the prefix must be tensors or numbers, got " + describe(v) +
                     (v.kind == PyVal::Kind::String ? " (only the first argument is the prefix)" : ""));
      ok = false;
    }
  }
  if (!ok) return PyVal::poison();
  at(e.loc).create(OpKind::DevicePrint, operands, {},
                   {{"prefix", tritonPrintPrefix(prefix, !operands.empty())}, {"hex", int64_t(hex)}});
  return PyVal::none();
}

// cond, a condition value: i1 as is, numbers as != 0. A compile-time constant is checked now
// (nullptr, no op): false is an error at `loc` ("assertion is always false").
Value* Sema::assertCondition(const PyVal& c, Loc loc, const std::string& what, const std::string& msg) {
  if (c.isPoison()) return nullptr;
  if (c.isConst()) {
    if (c.asDouble() == 0)
      error(loc, what + " condition is always false (a compile-time constant)" + (msg.empty() ? "" : ": " + msg));
    return nullptr;
  }
  if (!c.isValue() || c.v->type.isPtr) {
    error(loc, what + " condition must be a boolean or a number (a comparison such as x > 0), got " + describe(c));
    return nullptr;
  }
  if (c.v->type.dtype == DType::I1) return c.v;
  PyVal ne = binary(BinOp::Ne, c, PyVal::integer(0), loc);
  return ne.isValue() ? ne.v : nullptr;
}

void Sema::emitAssert(Value* cond, const std::string& msg, Loc loc) {
  at(loc).create(OpKind::DeviceAssert, {cond}, {}, {{"msg", msg}});
}

// tl.device_assert(cond, msg="", mask=None)
PyVal Sema::builtinDeviceAssert(const Expr& e) {
  Args a;
  if (!bindArgs(e, "device_assert", {"cond", "msg", "mask"}, 1, a)) return PyVal::poison();
  std::string msg;
  if (a.has(1)) {
    if (a.vals[1].kind != PyVal::Kind::String) return fail(a.locs[1], "device_assert() msg must be a string, got " + describe(a.vals[1]));
    msg = a.vals[1].s;
  }
  Value* cond = assertCondition(a.vals[0], a.locs[0], "device_assert()", msg);
  if (!cond) return a.vals[0].isConst() ? PyVal::none() : PyVal::poison();
  if (a.has(2)) {
    Value* mask = maskArg(a.vals[2], cond->type.shape, a.locs[2], "device_assert");
    if (!mask) return PyVal::poison();
    // Elements with mask False pass: cond | ~mask.
    Value* notMask = at(a.locs[2]).create(OpKind::Not, {mask}, {mask->type})->result();
    cond = at(a.locs[2]).create(OpKind::Or, {cond, notMask}, {cond->type})->result();
  }
  emitAssert(cond, msg, e.loc);
  return PyVal::none();
}

// assert cond [, msg]: device_assert(cond, msg), located at the `assert` keyword.
void Sema::genAssert(const Stmt& s) {
  PyVal c = eval(*s.value);
  std::string msg;
  if (s.msg) {
    PyVal m = eval(*s.msg);
    if (m.isPoison()) return;
    if (m.kind == PyVal::Kind::String) msg = m.s;
    else if (m.isConst() || m.kind == PyVal::Kind::None) msg = staticText(m);
    else return error(s.msg->loc, "an assert's message must be a string or a constant, got " + describe(m));
  }
  Value* cond = assertCondition(c, s.value->loc, "assert", msg);
  if (cond) emitAssert(cond, msg, s.loc);
}

}  // namespace tl
