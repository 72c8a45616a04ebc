// Sema, part 5: the Triton built-ins that are compositions of tilelab's ops, each built the way
// Triton's own definition in triton/language builds it (so the numbers agree), at the call's
// location:
//
//   tl.rand / randn / randint / rand4x / randn4x / randint4x   Philox-4x32 (n_rounds, default
//        10) on i32 lanes: tilelab has no unsigned dtype, so a uint32 is an i32 with the same
//        bits (wrapping +, *, ^ and umulhi are the same bit operations); uniform floats and the
//        Box-Muller normals follow triton/language/random.py
//   tl.multiple_of / max_contiguous / max_constancy   hints kept as attributes of the op that
//        made the value (docs/language.md says which passes read them); on a pointer tensor
//        multiple_of counts bytes of the address and max_contiguous elements (as the axis
//        analysis does)
//   tl.assume(cond)     a hint: checked when cond is a constant, otherwise nothing is emitted
//   zeros_like, broadcast_to, expand_dims, trans / permute (any order), reshape / view (row-major,
//        can_reorder=False), join / split (a last dim of 2), softmax,
//   fdiv / div_rn / sqrt_rn, argmin
//   tl.pointer_type(d)  the pointer type *d as a dtype value; x.to(tl.pointer_type(d)) on int64
//        values (addresses loaded from memory) is a `ptrcast` op, as is a pointer's .to(tl.int64)
//        (its address) or .to(another pointer type); a pointer's .to(tl.int1) is `address != 0`
#include <cmath>

#include "frontend/CallArgs.h"
#include "frontend/Sema.h"

namespace tl {

using namespace ast;

namespace {
// triton/language/random.py's constants.
constexpr uint32_t kPhiloxKeyA = 0x9E3779B9, kPhiloxKeyB = 0xBB67AE85;
constexpr uint32_t kPhiloxRoundA = 0xD2511F53, kPhiloxRoundB = 0xCD9E8D57;
constexpr int64_t kPhiloxRoundsDefault = 10;
}  // namespace

PyVal Sema::builtinRandom(const Expr& e, const std::string& f) {
  Args a;
  if (!bindArgs(e, f, {"seed", "offset", "n_rounds"}, 2, a)) return PyVal::poison();
  const PyVal &seed = a.vals[0], &offset = a.vals[1];
  const bool seedInt = seed.isIntConst() || (seed.isValue() && !seed.v->type.isPtr && seed.v->type.isScalar() && isInt(seed.v->type.dtype));
  if (!seedInt) return fail(a.locs[0], f + "() seed must be an integer scalar, got " + describe(seed));
  if (!(offset.isIntConst() || (offset.isValue() && !offset.v->type.isPtr && offset.v->type.dtype == DType::I32)))
    return fail(a.locs[1], f + "() offset must be i32 (a tile of offsets such as tl.arange(0, BLOCK)), got " + describe(offset) +
                               (offset.isValue() && offset.v->type.dtype == DType::I64 ? " (tilelab's Philox runs on 32-bit counters)" : ""));
  int64_t rounds = kPhiloxRoundsDefault;
  if (a.has(2)) {
    auto r = constInt(a.vals[2], a.exprs[2], a.locs[2], f + "() n_rounds");
    if (!r) return PyVal::poison();
    if (*r < 0 || *r > 64) return fail(a.locs[2], f + "() n_rounds must be between 0 and 64, got " + std::to_string(*r));
    rounds = *r;
  }
  const Loc loc = e.loc;
  // The key: the seed as a uint64, split into its low and high 32 bits.
  PyVal k0, k1;
  if (seed.isIntConst()) {
    k0 = u32Const(static_cast<uint32_t>(static_cast<uint64_t>(seed.i)), loc);
    k1 = u32Const(static_cast<uint32_t>(static_cast<uint64_t>(seed.i) >> 32), loc);
  } else if (seed.v->type.dtype == DType::I64) {
    k0 = PyVal::value(convert(seed.v, DType::I32, loc));
    k1 = PyVal::value(convert(binary(BinOp::Shr, seed, PyVal::integer(32), loc).v, DType::I32, loc));
  } else {  // an i32 seed, sign-extended to 64 bits as Triton's .to(tl.uint64) does
    PyVal s32 = seed.v->type.dtype == DType::I32 ? seed : PyVal::value(convert(seed.v, DType::I32, loc));
    k0 = s32;
    k1 = binary(BinOp::Shr, s32, PyVal::integer(31), loc);
  }
  PyVal c0 = offset.isIntConst() ? u32Const(static_cast<uint32_t>(offset.i), loc) : offset;
  PyVal zero = binary(BinOp::Mul, c0, PyVal::integer(0), loc);
  PyVal c1 = zero, c2 = zero, c3 = zero;
  auto mulhi = [&](const PyVal& x, const PyVal& y) -> PyVal {
    Value *vx = nullptr, *vy = nullptr;
    if (!unify(x, y, loc, vx, vy)) return PyVal::poison();
    return PyVal::value(at(loc).binary(OpKind::Umulhi, vx, vy));
  };
  const PyVal A = u32Const(kPhiloxRoundA, loc), B = u32Const(kPhiloxRoundB, loc);
  const PyVal KA = u32Const(kPhiloxKeyA, loc), KB = u32Const(kPhiloxKeyB, loc);
  for (int64_t r = 0; r < rounds; ++r) {
    PyVal p0 = c0, p2 = c2;
    c0 = binary(BinOp::BitXor, binary(BinOp::BitXor, mulhi(B, p2), c1, loc), k0, loc);
    c2 = binary(BinOp::BitXor, binary(BinOp::BitXor, mulhi(A, p0), c3, loc), k1, loc);
    c1 = binary(BinOp::Mul, B, p2, loc);
    c3 = binary(BinOp::Mul, A, p0, loc);
    k0 = binary(BinOp::Add, k0, KA, loc);
    k1 = binary(BinOp::Add, k1, KB, loc);
  }
  std::vector<PyVal> ints = {c0, c1, c2, c3};
  if (f == "randint") return ints[0];
  if (f == "randint4x") return PyVal::tuple(ints);
  // uint_to_uniform_float: x < 0 ? -x - 1 : x, times the largest scale with MAX_INT * scale < 1.
  auto uniform = [&](const PyVal& x) -> PyVal {
    PyVal neg = binary(BinOp::Lt, x, PyVal::integer(0), loc);
    PyVal flipped = binary(BinOp::Sub, binary(BinOp::Sub, PyVal::integer(0), x, loc), PyVal::integer(1), loc);
    if (!neg.isValue() || !flipped.isValue() || !x.isValue()) return PyVal::poison();  // all of x's type
    PyVal chosen = PyVal::value(at(loc).select(neg.v, flipped.v, x.v));
    return binary(BinOp::Mul, chosen, PyVal::real(4.6566127342e-10), loc);
  };
  // pair_uniform_to_normal (Box-Muller).
  auto normals = [&](const PyVal& u1, const PyVal& u2) -> std::pair<PyVal, PyVal> {
    if (!u1.isValue() || !u2.isValue()) return {PyVal::poison(), PyVal::poison()};
    Value* lo = materialize(PyVal::real(1.0e-7), DType::F32, u1.v->type.shape, loc);
    PyVal v1 = PyVal::value(at(loc).binary(OpKind::Maximum, lo, u1.v));
    PyVal th = binary(BinOp::Mul, PyVal::real(6.283185307179586), u2, loc);
    PyVal lg = PyVal::value(at(loc).unary(OpKind::Log, v1.v));
    PyVal r = PyVal::value(at(loc).unary(OpKind::Sqrt, binary(BinOp::Mul, PyVal::real(-2.0), lg, loc).v));
    return {binary(BinOp::Mul, r, PyVal::value(at(loc).unary(OpKind::Cos, th.v)), loc),
            binary(BinOp::Mul, r, PyVal::value(at(loc).unary(OpKind::Sin, th.v)), loc)};
  };
  if (f == "rand") return uniform(ints[0]);
  if (f == "rand4x") return PyVal::tuple({uniform(ints[0]), uniform(ints[1]), uniform(ints[2]), uniform(ints[3])});
  auto [n1, n2] = normals(uniform(ints[0]), uniform(ints[1]));
  if (f == "randn") return n1;
  auto [n3, n4] = normals(uniform(ints[2]), uniform(ints[3]));
  return PyVal::tuple({n1, n2, n3, n4});  // randn4x
}

// An i32 scalar holding the bits of the uint32 `c`.
PyVal Sema::u32Const(uint32_t c, Loc loc) {
  return PyVal::value(materialize(PyVal::integer(static_cast<int32_t>(c)), DType::I32, {}, loc));
}

// tl.multiple_of(x, 16), tl.max_contiguous(x, 64), tl.max_constancy(x, 4): x unchanged; the hint
// (one value per dimension) goes on the op that made x.
PyVal Sema::builtinHint(const Expr& e, const std::string& f) {
  Args a;
  if (!bindArgs(e, f, {"input", "values"}, 2, a)) return PyVal::poison();
  const PyVal& x = a.vals[0];
  if (!x.isValue() || (!x.v->type.isPtr && !isInt(x.v->type.dtype)))  // on pointers: bytes, as Triton
    return fail(a.locs[0], f + "() needs an integer or pointer tensor, got " + describe(x));
  std::vector<int64_t> values;
  const PyVal& v = a.vals[1];
  for (const PyVal& item : v.kind == PyVal::Kind::Tuple ? v.items : std::vector<PyVal>{v}) {
    auto k = constInt(item, nullptr, a.locs[1], f + "() value");
    if (!k) return PyVal::poison();
    if (*k <= 0) return fail(a.locs[1], f + "() values must be positive, got " + std::to_string(*k));
    values.push_back(*k);
  }
  const size_t rank = static_cast<size_t>(std::max(1, x.v->type.rank()));
  if (values.size() == 1 && rank > 1) values.assign(rank, values[0]);
  if (values.size() != rank)
    return fail(a.locs[1], f + "() needs one value per dimension of " + x.v->type.str() + ", got " + std::to_string(values.size()));
  if (x.v->def && !paramValues_.count(x.v)) x.v->def->setAttr(f, Attr(values));
  return x;
}

// tl.assume(cond): a promise to the compiler. A constant False is an error; a runtime condition
// emits nothing (tilelab's passes do not use it).
PyVal Sema::builtinAssume(const Expr& e) {
  Args a;
  if (!bindArgs(e, "assume", {"cond"}, 1, a)) return PyVal::poison();
  const PyVal& c = a.vals[0];
  if (c.isConst()) {
    if (c.asDouble() == 0) return fail(a.locs[0], "tl.assume() of a condition that is always false");
    return PyVal::none();
  }
  if (!c.isValue() || c.v->type.isPtr || c.v->type.dtype != DType::I1)
    return fail(a.locs[0], "tl.assume() needs a condition (an i1 value), got " + describe(c));
  return PyVal::none();
}

// Shape built-ins: zeros_like(x), broadcast_to(x, shape), expand_dims(x, axis), permute(x, dims),
// trans(x, *dims), reshape(x, shape) (the same elements in row-major order), join(a, b),
// split(x).
PyVal Sema::builtinShape(const Expr& e, const std::string& fname) {
  // tl.view is the old name of reshape; tl.ravel is a reshape to one dimension.
  const std::string f = fname == "view" || fname == "ravel" ? "reshape" : fname;
  if (fname == "broadcast") {  // broadcast(a, b): both at their common shape
    Args a;
    if (!bindArgs(e, "broadcast", {"input", "other"}, 2, a)) return PyVal::poison();
    for (size_t k = 0; k < 2; ++k)
      if (!a.vals[k].isValue()) return fail(a.locs[k], "broadcast() needs tensors, got " + describe(a.vals[k]));
    auto s = broadcastShape(a.vals[0].v->type.shape, a.vals[1].v->type.shape);
    if (!s) return fail(e.loc, "broadcast(): " + a.vals[0].v->type.str() + " and " + a.vals[1].v->type.str() + " do not broadcast");
    if (!checkTileSize(*s, e.loc)) return PyVal::poison();
    return PyVal::tuple({PyVal::value(broadcastTo(a.vals[0].v, *s, e.loc)), PyVal::value(broadcastTo(a.vals[1].v, *s, e.loc))});
  }
  // broadcast_to / permute / reshape take the shape as one tuple or as separate arguments.
  auto shapeArgs = [&](Args& a, size_t from, size_t end) -> std::optional<Shape> {
    PyVal shape;
    if (a.has(from + 1) || !a.has(from) || a.vals[from].kind != PyVal::Kind::Tuple) {
      shape.kind = PyVal::Kind::Tuple;
      for (size_t k = from; k < end; ++k)
        if (a.has(k)) shape.items.push_back(a.vals[k]);
    } else {
      shape = a.vals[from];
    }
    Shape s;
    for (const PyVal& d : shape.items) {
      auto v = constInt(d, nullptr, a.locs[from], f + "() shape");
      if (!v) return std::nullopt;
      s.push_back(*v);
    }
    return s;
  };
  if (fname == "join" || fname == "split") return joinOrSplit(e, fname);
  Args a;
  std::vector<std::string> sig = {"input"};
  if (f == "zeros_like") sig.push_back("dtype");
  else if (fname == "ravel") sig.push_back("can_reorder");
  else if (f == "expand_dims") sig.push_back("axis");
  else
    for (int k = 0; k < 4; ++k) sig.push_back("d" + std::to_string(k));
  if (f == "reshape") sig.push_back("can_reorder");
  if (!bindArgs(e, fname, sig, f == "zeros_like" || fname == "ravel" || f == "trans" ? 1 : 2, a)) return PyVal::poison();
  const PyVal& x = a.vals[0];
  // (trans and permute of pointer tiles are fine: a layout permutation, no data moves.)
  if (!x.isValue() || (x.v->type.isPtr && f != "trans" && f != "permute"))
    return fail(a.locs[0], f + "() needs a tensor, got " + describe(x));
  Value* v = x.v;
  const Type& t = v->type;
  if (f == "zeros_like") {
    auto dt = dtypeArg(a, 1, t.dtype, f);
    if (!dt) return PyVal::poison();
    return PyVal::value(materialize(PyVal::integer(0), *dt, t.shape, e.loc));
  }
  if (f == "expand_dims") {
    auto axis = constInt(a.vals[1], a.exprs[1], a.locs[1], "expand_dims() axis");
    if (!axis) return PyVal::poison();
    const int64_t r = t.rank() + 1;
    const int64_t ax = *axis < 0 ? *axis + r : *axis;
    if (ax < 0 || ax >= r) return fail(a.locs[1], "expand_dims() axis " + std::to_string(*axis) + " is out of range for " + t.str());
    if (!checkTileSize(Shape(static_cast<size_t>(r), 1), e.loc)) return PyVal::poison();
    if (t.isScalar()) return PyVal::value(at(e.loc).splat(v, {1}));
    return PyVal::value(at(e.loc).expandDims(v, static_cast<int>(ax)));
  }
  // (reshape's can_reorder=True allows any element order; the order kept is the same)
  auto shape = fname == "ravel" ? std::optional<Shape>(Shape{t.numel()}) : shapeArgs(a, 1, f == "reshape" ? sig.size() - 1 : sig.size());
  if (!shape) return PyVal::poison();
  if (f == "broadcast_to") {
    auto s = broadcastShape(t.shape, *shape);
    if (!s || *s != *shape)
      return fail(e.loc, "broadcast_to(): " + t.str() + " cannot be broadcast to " + Type::tile(t.dtype, *shape).str());
    if (!checkTileSize(*shape, e.loc)) return PyVal::poison();
    return PyVal::value(broadcastTo(v, *shape, e.loc));
  }
  if (f == "permute" || f == "trans") {  // trans(x) without dims reverses a 2-D tile's dims
    std::vector<int> order(shape->begin(), shape->end());
    if (f == "permute" && order.empty()) return fail(e.loc, "permute() needs the dims");
    return transpose(x, a.locs[0], e.loc, f == "trans" ? "trans()" : "permute()", order);
  }
  // reshape: the same elements in the same order. Only size-1 dims coming or going: as before,
  // through reduce / expand_dims (no data moves); otherwise one reshape op.
  Shape from, to;
  for (int64_t d : t.shape)
    if (d != 1) from.push_back(d);
  for (int64_t d : *shape)
    if (d != 1) to.push_back(d);
  if (!checkTileSize(*shape, e.loc)) return PyVal::poison();
  int64_t numel = 1;
  for (int64_t d : *shape) {
    if (d < 1 || !isPowerOfTwo(d))
      return fail(e.loc, "reshape() to " + Type::tile(t.dtype, *shape).str() + ": tile dimensions must be powers of two");
    numel *= d;
  }
  if (numel != t.numel())
    return fail(e.loc, "reshape() from " + t.str() + " to " + Type::tile(t.dtype, *shape).str() + ": the element counts differ (" +
                           std::to_string(t.numel()) + " vs " + std::to_string(numel) + ")");
  if (from != to) return PyVal::value(at(e.loc).create(OpKind::Reshape, {v}, {t.withShape(*shape)})->result());
  // Drop the size-1 dims (a max over one element is that element, bit for bit), then add the new ones.
  for (int ax = t.rank() - 1; ax >= 0 && v->type.rank() > 0; --ax)
    if (v->type.shape[static_cast<size_t>(ax)] == 1 && v->type.rank() > 1) v = at(e.loc).reduce("max", v, ax);
  if (v->type.rank() == 1 && v->type.shape[0] == 1 && shape->size() != 1) v = at(e.loc).reduce("max", v, 0);
  for (size_t ax = 0; ax < shape->size(); ++ax)
    if ((*shape)[ax] == 1 && (v->type.rank() < static_cast<int>(shape->size()))) {
      v = v->type.isScalar() ? at(e.loc).splat(v, {1}) : at(e.loc).expandDims(v, static_cast<int>(ax));
    }
  if (v->type.shape != *shape) return PyVal::value(at(e.loc).create(OpKind::Reshape, {x.v}, {t.withShape(*shape)})->result());
  return PyVal::value(v);
}

// join(a, b): a and b (broadcast to one shape, promoted to one dtype) side by side along a new
// last dim of 2; split(x): x's last dim of 2 taken apart, a tuple (x[..., 0], x[..., 1]).
PyVal Sema::joinOrSplit(const Expr& e, const std::string& f) {
  Args a;
  if (f == "split") {
    if (!bindArgs(e, f, {"a"}, 1, a)) return PyVal::poison();
    const PyVal& x = a.vals[0];
    if (!x.isValue() || x.v->type.rank() < 2 || x.v->type.shape.back() != 2)
      return fail(a.locs[0], "split() needs a tile of rank >= 2 whose last dim is 2, got " + describe(x));
    if (x.v->type.isPtr) return fail(a.locs[0], "split() of a pointer tile is not supported (tilelab moves no pointers between threads)");
    Shape s = x.v->type.shape;
    s.pop_back();
    std::vector<PyVal> halves;
    for (int64_t k = 0; k < 2; ++k) {
      halves.push_back(PyVal::value(at(e.loc).create(OpKind::Split, {x.v}, {x.v->type.withShape(s)}, {{"index", Attr(k)}})->result()));
    }
    return PyVal::tuple(halves);
  }
  if (!bindArgs(e, f, {"a", "b"}, 2, a)) return PyVal::poison();
  for (size_t k = 0; k < 2; ++k) {
    const PyVal& t = a.vals[k];
    if (!t.isValue() && !t.isConst()) return fail(a.locs[k], "join() needs tensors, got " + describe(t));
    if (t.isValue() && t.v->type.isPtr) return fail(a.locs[k], "join() of pointer tiles is not supported (tilelab moves no pointers between threads)");
  }
  Value *x = nullptr, *y = nullptr;
  if (!unify(a.vals[0], a.vals[1], e.loc, x, y)) return PyVal::poison();
  if (x->type.isScalar()) {  // two scalars: a <2> tile
    x = at(e.loc).splat(x, {1});
    y = at(e.loc).splat(y, {1});
    Shape s = {1, 2};
    if (!checkTileSize(s, e.loc)) return PyVal::poison();
    Value* j = at(e.loc).create(OpKind::Join, {x, y}, {x->type.withShape(s)})->result();
    return PyVal::value(at(e.loc).reduce("max", j, 0));  // drop the leading 1: one element, bit for bit
  }
  Shape s = x->type.shape;
  s.push_back(2);
  if (!checkTileSize(s, e.loc)) return PyVal::poison();
  return PyVal::value(at(e.loc).create(OpKind::Join, {x, y}, {x->type.withShape(s)})->result());
}

// softmax(x) along axis 0 as Triton defines it; fdiv / div_rn / sqrt_rn (division and square
// root: what tilelab's / and sqrt compute, IEEE in every CPU stage; on the GPU div_rn is div.rn
// and `/` Triton's div.full); argmin through argmax of the order-reversed
// values (-x for floats, ~x for integers: the same first index).
PyVal Sema::builtinTritonMath(const Expr& e, const std::string& f) {
  Args a;
  if (f == "softmax" || f == "sqrt_rn") {
    if (!bindArgs(e, f, {"x", "ieee_rounding"}, 1, a)) return PyVal::poison();
    const PyVal& x = a.vals[0];
    if (!x.isValue() || x.v->type.isPtr || !isFloat(x.v->type.dtype))
      return fail(a.locs[0], f + "() needs a float tensor, got " + describe(x));
    if (f == "sqrt_rn") return PyVal::value(at(e.loc).unary(OpKind::Sqrt, x.v));
    if (x.v->type.isScalar()) return fail(a.locs[0], "softmax() needs a tile, got " + describe(x));
    Value* m = at(e.loc).reduce("max", x.v, 0);
    PyVal z = binary(BinOp::Sub, x, PyVal::value(m), e.loc);
    if (!z.isValue()) return PyVal::poison();
    PyVal num = PyVal::value(at(e.loc).unary(OpKind::Exp, z.v));
    PyVal den = PyVal::value(at(e.loc).reduce("sum", num.v, 0));
    return binary(BinOp::Div, num, den, e.loc);
  }
  if (f == "fdiv" || f == "div_rn") {
    if (!bindArgs(e, f, {"x", "y", "ieee_rounding"}, 2, a)) return PyVal::poison();
    PyVal q = binary(BinOp::Div, a.vals[0], a.vals[1], e.loc);
    // div_rn, and fdiv with ieee_rounding=True, divide as IEEE on the GPU too (div.rn.f32; `/`
    // and fdiv's default are Triton's div.full.f32 there). The CPU stages always divide as IEEE.
    const bool ieee = f == "div_rn" || (a.has(2) && a.vals[2].isIntConst() && a.vals[2].i);
    if (ieee && q.isValue() && !q.v->isRegionArg() && q.v->def->kind == OpKind::Div && isFloat(q.v->type.dtype))
      q.v->def->setAttr("rounding", std::string("rn"));
    return q;
  }
  // argmin(input, axis, tie_break_left=True, keep_dims=False)
  if (!bindArgs(e, f, {"input", "axis", "tie_break_left", "keep_dims"}, 2, a)) return PyVal::poison();
  const PyVal& x = a.vals[0];
  if (!x.isValue() || x.v->type.isPtr || x.v->type.isScalar()) return fail(a.locs[0], "argmin() needs a tile, got " + describe(x));
  auto axis = constInt(a.vals[1], a.exprs[1], a.locs[1], "argmin() axis");
  if (!axis) return PyVal::poison();
  Value* v = x.v;
  if (v->type.dtype == DType::I1) v = convert(v, DType::I32, e.loc);
  const int64_t r = v->type.rank();
  const int64_t ax = *axis < 0 ? *axis + r : *axis;
  if (ax < 0 || ax >= r) return fail(a.locs[1], "argmin() axis " + std::to_string(*axis) + " is out of range for " + v->type.str());
  Value* reversed = at(e.loc).unary(isFloat(v->type.dtype) ? OpKind::Neg : OpKind::Not, v);
  Value* idx = at(e.loc).argmax(reversed, static_cast<int>(ax));
  if (a.has(3) && a.vals[3].isIntConst() && a.vals[3].i)
    idx = idx->type.isScalar() ? at(e.loc).splat(idx, {1}) : at(e.loc).expandDims(idx, static_cast<int>(ax));
  return PyVal::value(idx);
}

// tl.pointer_type(element_ty, address_space=1, const=False): a dtype value, *element_ty.
PyVal Sema::builtinPointerType(const Expr& e) {
  Args a;
  if (!bindArgs(e, "pointer_type", {"element_ty", "address_space", "const"}, 1, a)) return PyVal::poison();
  const PyVal& d = a.vals[0];
  if (d.kind != PyVal::Kind::DType || !d.s.empty())
    return fail(a.locs[0], "pointer_type() needs an element dtype such as tl.float16, got " + describe(d));
  if (d.ptrTo)
    return fail(a.locs[0], "pointer_type() of a pointer type (a pointer to pointers) is not supported: keep the "
                           "addresses as int64 values and cast each one where it is used");
  if (a.has(1) && !(a.vals[1].isIntConst() && a.vals[1].i == 1))
    return fail(a.locs[1], "pointer_type() address_space must be 1 (global memory), got " + describe(a.vals[1]));
  if (a.has(2) && !(a.vals[2].kind == PyVal::Kind::Bool || a.vals[2].isIntConst()))
    return fail(a.locs[2], "pointer_type() const must be True or False, got " + describe(a.vals[2]));
  PyVal p = PyVal::dtypeVal(d.dtype);
  p.ptrTo = true;
  return p;
}

// Pointer casts (Triton's semantic.cast for pointers): int64 -> *d, *a -> *b, *d -> int64
// (the address) and *d -> int1 (address != 0). The value keeps its shape; the address itself is
// never changed, so a wrong one is caught where it is dereferenced (a located out-of-bounds load).
PyVal Sema::pointerCast(const PyVal& x, const PyVal& to, Loc toLoc, Loc loc, const std::string& what) {
  if (x.isPoison()) return x;
  const std::string target = describe(to);
  if (!x.isValue())
    return fail(loc, what + " to " + target + " needs an int64 value (an address), got " + describe(x) +
                         ": a pointer cannot be made from a constant");
  Value* v = x.v;
  const Type& t = v->type;
  Builder& B = at(loc);
  if (t.isPtr) {
    if (to.ptrTo) return PyVal::value(t.dtype == to.dtype ? v : B.ptrcast(v, true, to.dtype));
    if (to.dtype == DType::I64) return PyVal::value(B.ptrcast(v, false));
    if (to.dtype == DType::I1) {
      Value* addr = B.ptrcast(v, false);
      Value* zero = materialize(PyVal::integer(0), DType::I64, t.shape, loc);
      return PyVal::value(at(loc).cmp("ne", addr, zero));
    }
    return fail(toLoc, "a pointer (" + t.str() + ") converts only to int64 (its address), int1 (address != 0) or "
                                                 "another pointer type, not to " + target);
  }
  if (t.dtype != DType::I64)
    return fail(loc, what + " to " + target + " needs int64 values (64-bit addresses), got " + t.str() +
                         (isInt(t.dtype) ? ": load the addresses from an int64 buffer (pointers(...) in @launch makes one)"
                                         : ""));
  return PyVal::value(B.ptrcast(v, true, to.dtype));
}

}  // namespace tl
