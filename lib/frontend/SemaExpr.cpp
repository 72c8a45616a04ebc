// Sema, part 1: expressions — names, constants, unary/binary operators, subscripts, and the
// typing rules behind them (docs/language.md, "Types"):
//
//   promotion   same dtype -> it; int with float -> the float; f16 with bf16 -> f32;
//               f16/bf16 with f32 -> f32; i32 with i64 -> i64; i1 with x -> x;
//               fp8 (Triton's rules): with f16 -> f16, with bf16 or f32 -> f32, two fp8
//               formats -> f16; an fp8 computation dtype, or fp8 with an integer tile, is an
//               error (refuseFp8: fp8 is stored and converted, never computed with)
//   weak consts an int literal next to a typed int takes its dtype (i64 if it does not fit
//               i32); next to a float it takes the float's dtype; a float literal next to a
//               float takes its dtype, next to an int it is f32
//   broadcast   right-aligned; size-1 or missing dims grow; scalars splat; rank <= kMaxTileRank (3)
//
// Every conversion, splat, expand_dims and broadcast is emitted as its own op.
#include <cctype>
#include <cmath>

#include "frontend/ConstFold.h"
#include "frontend/Sema.h"
#include "frontend/Suggest.h"

namespace tl {

using namespace ast;

bool sameVal(const PyVal& a, const PyVal& b) {
  if (a.kind != b.kind) return false;
  switch (a.kind) {
    case PyVal::Kind::Poison: return true;
    case PyVal::Kind::Int:
    case PyVal::Kind::Bool: return a.i == b.i;
    case PyVal::Kind::Float: return a.f == b.f || (std::isnan(a.f) && std::isnan(b.f));
    case PyVal::Kind::Value: return a.v == b.v;
    case PyVal::Kind::DType: return a.dtype == b.dtype && a.ptrTo == b.ptrTo && a.s == b.s;
    case PyVal::Kind::None: return true;
    case PyVal::Kind::String: return a.s == b.s;
    case PyVal::Kind::Module: return a.s == b.s;
    case PyVal::Kind::Function: return a.fn == b.fn && a.s == b.s;
    case PyVal::Kind::BlockPtr:
    case PyVal::Kind::TensorDesc:
      if (a.items.size() != b.items.size()) return false;
      for (size_t k = 0; k < a.items.size(); ++k)
        if (!sameVal(a.items[k], b.items[k])) return false;
      return true;
    case PyVal::Kind::Tuple:
      if (a.items.size() != b.items.size()) return false;
      for (size_t k = 0; k < a.items.size(); ++k)
        if (!sameVal(a.items[k], b.items[k])) return false;
      return true;
  }
  return false;
}

std::string Sema::describe(const PyVal& p) const {
  switch (p.kind) {
    case PyVal::Kind::Poison: return "<error>";
    case PyVal::Kind::Int: return "the constant " + std::to_string(p.i);
    case PyVal::Kind::Float: return "a float constant";
    case PyVal::Kind::Bool: return p.i ? "True" : "False";
    case PyVal::Kind::Value: return p.v->type.str();
    case PyVal::Kind::DType:
      if (!p.s.empty()) return "the dtype " + p.s;
      return std::string(p.ptrTo ? "the pointer type *" : "the dtype ") + dtypeName(p.dtype);
    case PyVal::Kind::None: return "None";
    case PyVal::Kind::Tuple: return "a tuple";
    case PyVal::Kind::String: return "a string";
    case PyVal::Kind::Module: return "the module " + p.s;
    case PyVal::Kind::Function: return p.fn ? "the @jit function '" + p.s + "'" : "the built-in '" + p.s + "'";
    case PyVal::Kind::BlockPtr: return "a block pointer";
    case PyVal::Kind::TensorDesc: return "a tensor descriptor";
  }
  return "?";
}

// ---- typing helpers ------------------------------------------------------------------------

DType Sema::promote(DType a, DType b) {
  if (a == b) return a;
  if (a == DType::I1) return b;
  if (b == DType::I1) return a;
  if (isFloat(a) != isFloat(b)) return isFloat(a) ? a : b;
  if (isFp8(a) && isFp8(b)) return DType::F16;  // e4m3 with e5m2: both exact in f16
  if (isFp8(a) || isFp8(b)) {
    const DType other = isFp8(a) ? b : a;
    return other == DType::BF16 ? DType::F32 : other;  // f16 -> f16, f32 -> f32, bf16 -> f32
  }
  if (isFloat(a)) return DType::F32;  // f16/bf16 mixes, or either with f32
  return DType::I64;                   // i32 with i64
}

DType Sema::weakDType(const PyVal& c) {
  if (c.kind == PyVal::Kind::Float) return DType::F32;
  if (c.kind == PyVal::Kind::Bool) return DType::I1;
  return fitsI32(c.i) ? DType::I32 : DType::I64;
}

DType Sema::withWeak(DType typed, const PyVal& c) {
  switch (c.kind) {
    case PyVal::Kind::Float: return isFloat(typed) ? typed : DType::F32;
    case PyVal::Kind::Bool: return typed;
    default:  // Int
      if (isFloat(typed)) return typed;
      if (typed == DType::I64) return DType::I64;
      return fitsI32(c.i) ? DType::I32 : DType::I64;
  }
}

Value* Sema::materialize(const PyVal& c, DType dt, const Shape& shape, Loc loc) {
  Type t = shape.empty() ? Type::scalar(dt) : Type::tile(dt, shape);
  if (isFloat(dt)) return at(loc).constFloat(t, c.asDouble());
  // Converted as the run-time `convert` would (ConstFold.h): saturating, NaN -> 0, ints wrap.
  int64_t v = c.kind == PyVal::Kind::Float ? floatConstToInt(c.f, dt) : intConstToInt(c.i, dt);
  return at(loc).constInt(t, v);
}

Value* Sema::toValue(const PyVal& p, Loc loc) {
  if (p.isValue()) return p.v;
  if (p.isConst()) return materialize(p, weakDType(p), {}, loc);
  return nullptr;
}

Value* Sema::convert(Value* v, DType dt, Loc loc) {
  if (v->type.dtype == dt) return v;
  const DType from = v->type.dtype;
  if ((isFp8(from) && !isFloat(dt)) || (!isFloat(from) && isFp8(dt)))
    error(loc, std::string("cannot convert ") + dtypeName(from) + " to " + dtypeName(dt) +
                   ": Triton converts fp8 only to and from float dtypes; go through float32, e.g. x.to(tl.float32)" +
                   (isFp8(dt) ? std::string(".to(tl.") + (dt == DType::F8E4M3 ? "float8e4nv" : "float8e5") + ")" : ""));
  return at(loc).convert(v, dt);  // still valid IR (via f32): the error stops the compilation
}

bool Sema::refuseFp8(const PyVal& a, const PyVal* b, DType dt, Loc loc, const std::string& what) {
  auto fp8 = [](const PyVal* p) { return p && p->isValue() && !p->v->type.isPtr && isFp8(p->v->type.dtype); };
  auto intTile = [](const PyVal* p) { return p && p->isValue() && !p->v->type.isPtr && !isFloat(p->v->type.dtype); };
  const PyVal* f = fp8(&a) ? &a : fp8(b) ? b : nullptr;
  if (!f) return false;
  const std::string t = f->v->type.str();
  if (intTile(&a) || intTile(b)) {
    error(loc, what + " cannot combine " + t + " with an integer tile (Triton rejects fp8 with integers): convert the fp8 "
                      "value first, e.g. x.to(tl.float32)");
    return true;
  }
  if (!isFp8(dt)) return false;
  error(loc, what + " on " + t + " is not supported: fp8 is a storage type, converted but not computed with (Triton's "
                    "compiler rejects fp8 arithmetic too); convert first, e.g. x.to(tl.float16) or x.to(tl.float32)");
  return true;
}

std::optional<Shape> Sema::broadcastShape(const Shape& a, const Shape& b) const {
  size_t n = std::max(a.size(), b.size());
  Shape out(n);
  for (size_t k = 0; k < n; ++k) {
    int64_t da = k < n - a.size() ? 1 : a[k - (n - a.size())];
    int64_t db = k < n - b.size() ? 1 : b[k - (n - b.size())];
    if (da != db && da != 1 && db != 1) return std::nullopt;
    out[k] = std::max(da, db);
  }
  return out;
}

bool Sema::checkTileSize(const Shape& s, Loc loc) {
  if (s.size() > static_cast<size_t>(kMaxTileRank)) {
    error(loc, "tiles have at most " + std::to_string(kMaxTileRank) + " dimensions, this would make " + std::to_string(s.size()));
    return false;
  }
  int64_t n = 1;
  for (int64_t d : s) {
    if (d > kMaxTileElems || n * d > kMaxTileElems) {
      error(loc, "a tile of more than " + std::to_string(kMaxTileElems) + " elements is too large");
      return false;
    }
    n *= d;
  }
  return true;
}

// Grows `v` to `shape` (which must be a valid broadcast target): splat a scalar, prepend size-1
// dims with expand_dims, then broadcast the size-1 dims.
Value* Sema::broadcastTo(Value* v, const Shape& shape, Loc loc) {
  if (v->type.shape == shape) return v;
  if (shape.empty()) return v;  // only reached for matching scalars
  if (v->type.isScalar()) return at(loc).splat(v, shape);
  while (v->type.rank() < static_cast<int>(shape.size())) v = at(loc).expandDims(v, 0);
  if (v->type.shape != shape) v = at(loc).broadcast(v, shape);
  return v;
}

bool Sema::unify(const PyVal& a, const PyVal& b, Loc loc, Value*& va, Value*& vb) {
  DType dt;
  if (a.isValue() && b.isValue()) dt = promote(a.v->type.dtype, b.v->type.dtype);
  else if (a.isValue()) dt = withWeak(a.v->type.dtype, b);
  else dt = withWeak(b.v->type.dtype, a);
  Shape sa = a.isValue() ? a.v->type.shape : Shape{};
  Shape sb = b.isValue() ? b.v->type.shape : Shape{};
  auto shape = broadcastShape(sa, sb);
  if (!shape) {
    error(loc, "cannot broadcast " + a.v->type.str() + " and " + b.v->type.str() +
                   ": dimensions must be equal or 1 (use x[:, None] / x[None, :] to add a dimension)");
    return false;
  }
  if (!checkTileSize(*shape, loc)) return false;
  // A constant is built directly at the result dtype and shape (a splat constant).
  va = a.isValue() ? broadcastTo(convert(a.v, dt, loc), *shape, loc) : materialize(a, dt, *shape, loc);
  vb = b.isValue() ? broadcastTo(convert(b.v, dt, loc), *shape, loc) : materialize(b, dt, *shape, loc);
  return true;
}

// ---- expressions ---------------------------------------------------------------------------

PyVal Sema::eval(const Expr& e) {
  switch (e.kind) {
    case ExprKind::Int: return PyVal::integer(e.ival);
    case ExprKind::Float: return PyVal::real(e.fval);
    case ExprKind::Bool: return PyVal::boolean(e.ival != 0);
    case ExprKind::None: return PyVal::none();
    case ExprKind::String: return PyVal::str(e.str);
    case ExprKind::IfExp: return evalIfExp(e);
    case ExprKind::BoolOp: return evalBoolOp(e);
    case ExprKind::Name: return evalName(e);
    case ExprKind::Unary: return evalUnary(e);
    case ExprKind::Binary: {
      PyVal a = eval(*e.lhs);
      PyVal b = eval(*e.rhs);
      return binary(e.binOp, a, b, e.loc);
    }
    case ExprKind::Call: return evalCall(e);
    case ExprKind::Attribute: return evalAttribute(e);
    case ExprKind::Subscript: return evalSubscript(e);
    case ExprKind::Slice: return fail(e.loc, "':' is only allowed inside a subscript such as x[:, None]");
    case ExprKind::Tuple: {
      PyVal t;
      t.kind = PyVal::Kind::Tuple;
      for (const auto& it : e.items) {
        t.items.push_back(eval(*it));
        if (t.items.back().isPoison()) return PyVal::poison();
      }
      return t;
    }
  }
  return PyVal::poison();
}

const std::vector<std::string>& kernelBuiltins() {
  static const std::vector<std::string> kNames = {
      "program_id", "num_programs", "arange", "zeros", "full", "load", "store", "max", "min", "sum",
      "argmax", "exp", "exp2", "log", "sqrt", "rsqrt", "sigmoid", "abs", "where", "maximum", "minimum",
      "dot", "trans", "cdiv", "range", "log2", "cos", "sin", "floor", "ceil", "erf", "fma", "umulhi", "clamp",
      "atomic_add", "atomic_max", "atomic_min", "atomic_and", "atomic_or", "atomic_xor", "atomic_xchg", "atomic_cas",
      "debug_barrier", "device_print", "device_assert", "static_print", "static_assert", "static_range", "rand", "randn", "randint", "rand4x", "randn4x", "randint4x",
      "multiple_of", "max_contiguous", "max_constancy", "assume", "zeros_like", "broadcast_to", "expand_dims",
      "permute", "reshape", "view", "ravel", "broadcast", "join", "split", "cast", "softmax", "fdiv", "div_rn", "sqrt_rn", "argmin", "make_block_ptr", "advance", "pointer_type",
      "make_tensor_descriptor", "load_tensor_descriptor", "store_tensor_descriptor",
      "cumsum", "cumprod", "associative_scan", "reduce", "sort", "topk", "flip", "gather", "histogram", "swizzle2d",
      "asin", "acos", "atan", "tan", "sinh", "cosh", "tanh", "log10", "log1p", "expm1", "exp10", "cbrt", "rcp",
      "trunc", "round", "rint", "nearbyint", "atan2", "pow", "hypot", "isnan", "isinf", "isfinite", "signbit"};
  return kNames;
}

bool isPrintFunction(const std::string& f) {
  return f == "printf";
}

PyVal Sema::refusePrint(const std::string& f, Loc loc) {
  return fail(loc, f + "() is not supported in kernels: use print(\"x\", x) or tl.device_print(\"x\", x); or store the value into an extra output buffer "
                       "(a parameter dbg_ptr, with dbg_ptr=zeros((N,), output=True) in @launch) and write it out with "
                       "--out-dir DIR; --print-ir shows the IR, tl-thread --show-map NAME the threads holding a value");
}

PyVal Sema::unknownFunction(const Expr& call, const std::string& f, Loc loc) {
  for (const auto& a : call.items) eval(*a);  // errors inside the arguments still count
  for (const auto& k : call.keywords) eval(*k.value);
  if (isPrintFunction(f)) return refusePrint(f, loc);
  return fail(loc, "unknown function '" + f + "'" + didYouMean(f, kernelBuiltins()));
}

PyVal Sema::evalName(const Expr& e) {
  auto it = env_.find(e.str);
  if (it != env_.end()) return it->second.val;
  if (e.str == "inf") return PyVal::real(INFINITY);
  if (auto d = parseDType(e.str)) return PyVal::dtypeVal(*d);
  auto note = scopeNotes_.find(e.str);
  if (note != scopeNotes_.end()) return fail(e.loc, note->second);
  if (e.str == "tl" || e.str == "triton" || e.str == "libdevice")
    return fail(e.loc, "'" + e.str + "' is not defined: add `" +
                           (e.str == "tl" ? "import triton.language as tl"
                                          : e.str == "triton" ? "import triton"
                                                              : "from triton.language.extra import libdevice") +
                           "` at the top of the file");
  for (const auto& bname : kernelBuiltins())
    if (e.str == bname) return fail(e.loc, "'" + e.str + "' is a built-in function: call it, e.g. " + e.str + "(...)");
  // A @launch keyword that is not a parameter: the launch knows it, the kernel body does not.
  const Kernel* k = pk_.module ? pk_.module->mainKernel() : nullptr;
  const Decorator* launch = k ? k->decorator("launch") : nullptr;
  if (launch)
    for (const auto& kw : launch->keywords)
      if (kw.name == e.str) {
        std::string params;
        for (const auto& p : k->params) params += p.name + ", ";
        return fail(e.loc, "'" + e.str + "' is a @launch keyword, not a parameter of '" + k->name +
                               "': to use it in the kernel body, add it to the parameter list: def " + k->name + "(" +
                               params + e.str + ")");
      }
  std::vector<std::string> known;
  for (const auto& [name, _] : env_) known.push_back(name);
  known.push_back("inf");
  for (const char* d : {"i1", "i32", "i64", "f16", "bf16", "f32", "f8e4m3", "f8e5m2"}) known.push_back(d);
  return fail(e.loc, "unknown name '" + e.str + "'" + didYouMean(e.str, known));
}

PyVal Sema::evalUnary(const Expr& e) {
  PyVal x = eval(*e.lhs);
  if (x.isPoison()) return x;
  const char* sp = e.unaryOp == UnaryOp::Neg ? "-" : e.unaryOp == UnaryOp::Pos ? "+" : e.unaryOp == UnaryOp::Not ? "not" : "~";
  if (e.unaryOp == UnaryOp::Not) {  // not x: Python's on constants; == 0 (an i1) on runtime values
    if (x.isConst()) return PyVal::boolean(x.asDouble() == 0);
    if (!x.isValue() || x.v->type.isPtr) return fail(e.loc, "'not' needs a condition or a number, got " + describe(x));
    if (x.v->type.dtype == DType::I1) return PyVal::value(at(e.loc).unary(OpKind::Not, x.v));
    return binary(BinOp::Eq, x, PyVal::integer(0), e.loc);
  }
  if (x.isConst()) {
    switch (e.unaryOp) {
      case UnaryOp::Pos: return x.kind == PyVal::Kind::Bool ? PyVal::integer(x.i) : x;
      case UnaryOp::Neg:
        if (x.kind == PyVal::Kind::Float) return PyVal::real(-x.f);
        if (x.i == INT64_MIN) return fail(e.loc, "integer overflow in negation");
        return PyVal::integer(-x.i);
      case UnaryOp::Invert:
        if (x.kind == PyVal::Kind::Float) return fail(e.loc, "'~' needs an integer or i1 operand, got a float");
        if (x.kind == PyVal::Kind::Bool) return PyVal::boolean(!x.i);
        return PyVal::integer(~x.i);
      case UnaryOp::Not: break;
    }
  }
  if (!x.isValue()) return fail(e.loc, std::string("unary '") + sp + "' needs a number, got " + describe(x));
  Value* v = x.v;
  if (v->type.isPtr) return fail(e.loc, std::string("unary '") + sp + "' cannot be applied to pointers (" + v->type.str() + ")");
  switch (e.unaryOp) {
    case UnaryOp::Pos: return x;
    case UnaryOp::Neg:
      if (refuseFp8(x, nullptr, v->type.dtype, e.loc, "unary '-'")) return PyVal::poison();
      if (v->type.dtype == DType::I1) v = convert(v, DType::I32, e.loc);
      return PyVal::value(at(e.loc).unary(OpKind::Neg, v));
    case UnaryOp::Invert:
      if (isFloat(v->type.dtype))
        return fail(e.loc, "'~' needs an integer or i1 operand, got " + v->type.str());
      return PyVal::value(at(e.loc).unary(OpKind::Not, v));
    case UnaryOp::Not: break;
  }
  return PyVal::poison();
}

PyVal Sema::foldBinary(BinOp op, const PyVal& a, const PyVal& b, Loc loc) {
  bool cmp = isComparison(op);
  if (a.isIntConst() && b.isIntConst()) {
    if (op == BinOp::Div) {
      if (b.i == 0) return fail(loc, "division by zero");
      return PyVal::real(static_cast<double>(a.i) / static_cast<double>(b.i));
    }
    std::string err;
    auto r = foldInt(op, a.i, b.i, err);
    if (!r) return fail(loc, err);
    bool bitwise = op == BinOp::BitAnd || op == BinOp::BitOr || op == BinOp::BitXor;
    if (cmp || (bitwise && a.kind == PyVal::Kind::Bool && b.kind == PyVal::Kind::Bool)) return PyVal::boolean(*r != 0);
    return PyVal::integer(*r);
  }
  double x = a.asDouble(), y = b.asDouble();
  switch (op) {
    case BinOp::Add: return PyVal::real(x + y);
    case BinOp::Sub: return PyVal::real(x - y);
    case BinOp::Mul: return PyVal::real(x * y);
    case BinOp::Div:
      if (y == 0) return fail(loc, "division by zero");
      return PyVal::real(x / y);
    case BinOp::Mod:
      if (y == 0) return fail(loc, "division by zero");
      return PyVal::real(std::fmod(x, y));
    case BinOp::FloorDiv: return fail(loc, "'//' needs integer operands, got a float: use / for float division");
    case BinOp::BitAnd:
    case BinOp::BitOr:
    case BinOp::BitXor:
    case BinOp::Shl:
    case BinOp::Shr:
      return fail(loc, std::string("'") + spelling(op) + "' needs integer or i1 operands, got a float");
    case BinOp::Pow: return PyVal::real(std::pow(x, y));
    case BinOp::Lt: return PyVal::boolean(x < y);
    case BinOp::Le: return PyVal::boolean(x <= y);
    case BinOp::Gt: return PyVal::boolean(x > y);
    case BinOp::Ge: return PyVal::boolean(x >= y);
    case BinOp::Eq: return PyVal::boolean(x == y);
    case BinOp::Ne: return PyVal::boolean(x != y);
  }
  return PyVal::poison();
}

// ptr + int, int + ptr, ptr - int: element offsets; the result is a pointer (tile).
PyVal Sema::pointerArith(BinOp op, const PyVal& a, const PyVal& b, Loc loc) {
  bool aPtr = a.isValue() && a.v->type.isPtr, bPtr = b.isValue() && b.v->type.isPtr;
  if (aPtr && bPtr) return fail(loc, std::string("cannot apply '") + spelling(op) + "' to two pointers (" + a.v->type.str() + " and " + b.v->type.str() + ")");
  if (!(op == BinOp::Add || (op == BinOp::Sub && aPtr)))
    return fail(loc, std::string("pointers only support ptr + int and ptr - int (offsets in elements), not '") +
                         spelling(op) + "'" + (op == BinOp::Sub ? " with the pointer on the right" : ""));
  const PyVal& p = aPtr ? a : b;
  const PyVal& off = aPtr ? b : a;
  Value* offset = nullptr;
  if (off.isIntConst() && off.kind != PyVal::Kind::Bool) {
    int64_t v = off.i;
    if (op == BinOp::Sub) {
      if (v == INT64_MIN) return fail(loc, "integer overflow in pointer offset");
      v = -v;
    }
    offset = materialize(PyVal::integer(v), fitsI32(v) ? DType::I32 : DType::I64, {}, loc);
  } else if (off.isValue() && !off.v->type.isPtr && (off.v->type.dtype == DType::I32 || off.v->type.dtype == DType::I64)) {
    offset = off.v;
    if (op == BinOp::Sub) offset = at(loc).unary(OpKind::Neg, offset);
  } else {
    return fail(loc, "pointer offsets must be i32 or i64 integers, got " + describe(off) +
                         (off.isValue() && isFloat(off.v->type.dtype) ? " (convert with .to(i32))" : ""));
  }
  auto shape = broadcastShape(p.v->type.shape, offset->type.shape);
  if (!shape) return fail(loc, "cannot broadcast " + p.v->type.str() + " and " + offset->type.str());
  if (!checkTileSize(*shape, loc)) return PyVal::poison();
  Value* ptr = broadcastTo(p.v, *shape, loc);
  offset = broadcastTo(offset, *shape, loc);
  return PyVal::value(at(loc).addptr(ptr, offset));
}

PyVal Sema::binary(BinOp op, const PyVal& a, const PyVal& b, Loc loc) {
  if (a.isPoison() || b.isPoison()) return PyVal::poison();
  if (op == BinOp::Shl || op == BinOp::Shr) return shift(op, a, b, loc);
  if (op == BinOp::Pow && !(a.isConst() && b.isConst()))
    return fail(loc, "'**' (power) is not supported on tensors: write x * x, or tl.exp2(y * tl.log2(x)); "
                     "it is only computed between compile-time numbers (2 ** 10)");
  // dtype == dtype, x is None, s == "str": compile-time identity, as in Python.
  auto symbolic = [](const PyVal& p) {
    return p.kind == PyVal::Kind::DType || p.kind == PyVal::Kind::None || p.kind == PyVal::Kind::String ||
           p.kind == PyVal::Kind::Module || p.kind == PyVal::Kind::Function;
  };
  if ((op == BinOp::Eq || op == BinOp::Ne) && (symbolic(a) || symbolic(b)))
    return PyVal::boolean(sameVal(a, b) == (op == BinOp::Eq));
  if (a.isConst() && b.isConst()) return foldBinary(op, a, b, loc);
  if (!(a.isConst() || a.isValue()) || !(b.isConst() || b.isValue()))
    return fail(loc, std::string("operator '") + spelling(op) + "' needs numbers or tiles, got " + describe(a) +
                         " and " + describe(b));
  if ((a.isValue() && a.v->type.isPtr) || (b.isValue() && b.v->type.isPtr)) {
    if (isComparison(op)) return fail(loc, "pointers cannot be compared");
    return pointerArith(op, a, b, loc);
  }
  Value *va = nullptr, *vb = nullptr;
  // Check the operator against the operand dtypes before building anything.
  DType dt = a.isValue() && b.isValue() ? promote(a.v->type.dtype, b.v->type.dtype)
             : a.isValue()             ? withWeak(a.v->type.dtype, b)
                                       : withWeak(b.v->type.dtype, a);
  bool bitwise = op == BinOp::BitAnd || op == BinOp::BitOr || op == BinOp::BitXor;
  auto operandTypes = [&] {
    return (a.isValue() ? a.v->type.str() : describe(a)) + " and " + (b.isValue() ? b.v->type.str() : describe(b));
  };
  if (bitwise && isFloat(dt))
    return fail(loc, std::string("'") + spelling(op) + "' needs integer or i1 operands, got " + operandTypes());
  if (op == BinOp::FloorDiv && isFloat(dt))
    return fail(loc, "'//' needs integer operands, got " + operandTypes() + ": use / for float division");
  if (refuseFp8(a, &b, dt, loc, std::string("'") + spelling(op) + "'")) return PyVal::poison();
  if (!unify(a, b, loc, va, vb)) return PyVal::poison();
  Builder& B = at(loc);
  if (isComparison(op)) {
    static const char* const kPred[] = {"lt", "le", "gt", "ge", "eq", "ne"};
    return PyVal::value(B.cmp(kPred[static_cast<int>(op) - static_cast<int>(BinOp::Lt)], va, vb));
  }
  if (bitwise) {
    OpKind k = op == BinOp::BitAnd ? OpKind::And : op == BinOp::BitOr ? OpKind::Or : OpKind::Xor;
    return PyVal::value(B.binary(k, va, vb));
  }
  // Arithmetic: i1 is computed as i32; int / int is a float division in f32.
  if (va->type.dtype == DType::I1) {
    va = convert(va, DType::I32, loc);
    vb = convert(vb, DType::I32, loc);
  }
  if (op == BinOp::Div && isInt(va->type.dtype)) {
    va = convert(va, DType::F32, loc);
    vb = convert(vb, DType::F32, loc);
  }
  OpKind k = OpKind::Add;
  switch (op) {
    case BinOp::Add: k = OpKind::Add; break;
    case BinOp::Sub: k = OpKind::Sub; break;
    case BinOp::Mul: k = OpKind::Mul; break;
    case BinOp::Div:
    case BinOp::FloorDiv: k = OpKind::Div; break;
    case BinOp::Mod: k = OpKind::Rem; break;
    default: break;
  }
  return PyVal::value(at(loc).binary(k, va, vb));
}

// m.X (a module's member), x.T, x.dtype, x.type, x.shape, x.dtype.element_ty.
PyVal Sema::evalAttribute(const Expr& e) {
  PyVal base = eval(*e.lhs);
  if (base.isPoison()) return base;
  const std::string& a = e.str;
  if (base.kind == PyVal::Kind::Module) return moduleMember(base, a, e.loc);
  if (base.isValue()) {
    const Type& t = base.v->type;
    if (a == "T") return transpose(base, e.lhs->loc, e.loc, "x.T");
    if (a == "dtype" || a == "type") {  // a pointer's is its pointer type; a tile's its element dtype
      PyVal d = PyVal::dtypeVal(t.dtype);
      d.ptrTo = t.isPtr;
      return d;
    }
    if (a == "shape") {
      std::vector<PyVal> dims;
      for (int64_t d : t.shape) dims.push_back(PyVal::integer(d));
      return PyVal::tuple(std::move(dims));
    }
    if (a == "numel") return PyVal::integer(t.numel());
    return fail(e.loc, "unknown attribute '." + a + "' of " + t.str() + didYouMean(a, {"T", "dtype", "type", "shape", "numel"}));
  }
  if (base.kind == PyVal::Kind::DType) {
    if (a == "element_ty") return PyVal::dtypeVal(base.dtype);  // *f32 -> f32 (a block type's too)
    if (a == "primitive_bitwidth" && !base.ptrTo) return PyVal::integer(base.dtype == DType::I1 ? 1 : 8 * dtypeBytes(base.dtype));
    return fail(e.loc, "unknown attribute '." + a + "' of " + describe(base) + didYouMean(a, {"element_ty", "primitive_bitwidth"}));
  }
  return fail(e.loc, "'." + a + "': " + describe(base) + " has no attributes");
}

// x[:, None], x[None, :], x[:]: one ':' per existing dimension, None inserts a size-1 dim.
PyVal Sema::evalSubscript(const Expr& e) {
  PyVal base = eval(*e.lhs);
  if (base.isPoison()) return base;
  if (base.kind == PyVal::Kind::Tuple) {  // x.shape[0], t[-1]: a compile-time item
    if (e.items.size() != 1 || e.items[0]->kind == ExprKind::Slice)
      return fail(e.loc, "a tuple takes one integer index, e.g. x.shape[0]");
    PyVal i = eval(*e.items[0]);
    auto k = constInt(i, e.items[0].get(), e.items[0]->loc, "a tuple index");
    if (!k) return PyVal::poison();
    const int64_t n = static_cast<int64_t>(base.items.size());
    if (*k < -n || *k >= n)
      return fail(e.items[0]->loc, "index " + std::to_string(*k) + " is out of range for a tuple of " + std::to_string(n));
    return base.items[static_cast<size_t>(*k < 0 ? *k + n : *k)];
  }
  if (!base.isValue()) return fail(e.loc, "only tiles can be subscripted, got " + describe(base));
  Value* v = base.v;
  int slices = 0;
  for (const auto& it : e.items) {
    if (it->kind == ExprKind::Slice) ++slices;
    else if (it->kind != ExprKind::None)
      return fail(it->loc, "only ':' and None are supported in subscripts (e.g. x[:, None]); indexing single elements is not");
  }
  if (slices != v->type.rank())
    return fail(e.loc, "subscript has " + std::to_string(slices) + " ':' but " + v->type.str() + " has " +
                           std::to_string(v->type.rank()) + (v->type.rank() == 1 ? " dimension" : " dimensions"));
  if (e.items.size() > static_cast<size_t>(kMaxTileRank))
    return fail(e.loc, "tiles have at most " + std::to_string(kMaxTileRank) + " dimensions, this subscript would make " +
                           std::to_string(e.items.size()));
  for (size_t k = 0; k < e.items.size(); ++k) {
    if (e.items[k]->kind != ExprKind::None) continue;
    if (v->type.isScalar()) {
      v = at(e.loc).splat(v, {1});
    } else {
      v = at(e.loc).expandDims(v, static_cast<int>(k));
    }
  }
  return PyVal::value(v);
}

}  // namespace tl
