// Sema, part 6: block pointers and tensor descriptors (issue 12, section 5), lowered to the
// ordinary pointer tiles and masks of block IR, so every stage runs them unchanged:
//
//   p = tl.make_block_ptr(base, shape, strides, offsets, block_shape, order)
//   tl.load(p, boundary_check=(0, 1), padding_option="zero")   ->  load(ptrs, mask, other)
//   p = tl.advance(p, (0, BLOCK_K))                             ->  new offsets (loop-carried)
//   d = tl.make_tensor_descriptor(base, shape, strides, block_shape)
//   d.load([m, n]) / d.store([m, n], v)                        ->  every dimension bounds-checked,
//                                                                    out-of-bounds reads give 0
//
// ptrs[i, j] = base + (offsets[0] + i) * strides[0] + (offsets[1] + j) * strides[1]; a checked
// dimension d masks 0 <= offsets[d] + i < shape[d]. `order` is a layout hint (kept, unused).
// A block pointer is a PyVal of kind BlockPtr: items = {base, shape, strides, offsets,
// block_shape, order}; a descriptor (TensorDesc) has {base, shape, strides, block_shape}.
// Loops carry a block pointer's offsets (SemaStmt.cpp, composites); its base, shape and
// strides must stay the same across iterations.
#include <cmath>

#include "frontend/CallArgs.h"
#include "frontend/Sema.h"

namespace tl {

using namespace ast;

namespace {

enum { kBase, kShape, kStrides, kOffsets, kBlockShape, kOrder };

}  // namespace

// A tuple (or list) of `n` integers or integer scalars, for make_block_ptr's arguments.
bool Sema::intTuple(const PyVal& v, size_t n, Loc loc, const std::string& what, bool constOnly) {
  if (v.kind != PyVal::Kind::Tuple) {
    error(loc, what + " must be a tuple of " + std::to_string(n) + " integers, got " + describe(v));
    return false;
  }
  if (v.items.size() != n) {
    error(loc, what + " has " + std::to_string(v.items.size()) + " entries, the block has " + std::to_string(n) + " dimensions");
    return false;
  }
  for (const PyVal& d : v.items) {
    const bool ok = constOnly ? d.isIntConst()
                              : d.isIntConst() || (d.isValue() && !d.v->type.isPtr && d.v->type.isScalar() && isInt(d.v->type.dtype));
    if (!ok) {
      error(loc, what + " entries must be " + (constOnly ? "compile-time integers" : "integers or integer scalars") + ", got " +
                     describe(d));
      return false;
    }
  }
  return true;
}

// tl.make_block_ptr(base, shape, strides, offsets, block_shape, order) and
// tl.make_tensor_descriptor(base, shape, strides, block_shape, padding_option="zero").
PyVal Sema::builtinMakeBlockPtr(const Expr& e, const std::string& f) {
  const bool desc = f == "make_tensor_descriptor";
  Args a;
  std::vector<std::string> sig = desc ? std::vector<std::string>{"base", "shape", "strides", "block_shape", "padding_option"}
                                      : std::vector<std::string>{"base", "shape", "strides", "offsets", "block_shape", "order"};
  if (!bindArgs(e, f, sig, desc ? 4 : 6, a)) return PyVal::poison();
  const PyVal& base = a.vals[0];
  if (!base.isValue() || !base.v->type.isPtr || !base.v->type.isScalar())
    return fail(a.locs[0], f + "() base must be a pointer (a kernel's pointer parameter, maybe plus an offset), got " + describe(base));
  const size_t blockArg = desc ? 3 : 4;
  const PyVal& block = a.vals[blockArg];
  if (block.kind != PyVal::Kind::Tuple || block.items.empty() || block.items.size() > 2)
    return fail(a.locs[blockArg], f + "() block_shape must be a tuple of 1 or 2 sizes, got " + describe(block));
  const size_t rank = block.items.size();
  if (!intTuple(block, rank, a.locs[blockArg], f + "() block_shape", true)) return PyVal::poison();
  Shape bs;
  for (const PyVal& d : block.items) bs.push_back(d.i);
  for (int64_t d : bs)
    if (!isPowerOfTwo(d)) return fail(a.locs[blockArg], f + "() block_shape sizes must be powers of two, got " + std::to_string(d));
  if (!checkTileSize(bs, e.loc)) return PyVal::poison();
  if (!intTuple(a.vals[1], rank, a.locs[1], f + "() shape", false) ||
      !intTuple(a.vals[2], rank, a.locs[2], f + "() strides", false))
    return PyVal::poison();
  PyVal p;
  if (desc) {
    if (a.has(4) && !(a.vals[4].kind == PyVal::Kind::String && a.vals[4].s == "zero"))
      return fail(a.locs[4], "make_tensor_descriptor() padding_option must be \"zero\" (out-of-bounds reads give 0)");
    p.kind = PyVal::Kind::TensorDesc;
    p.items = {base, a.vals[1], a.vals[2], block};
    return p;
  }
  if (!intTuple(a.vals[3], rank, a.locs[3], "make_block_ptr() offsets", false) ||
      !intTuple(a.vals[5], rank, a.locs[5], "make_block_ptr() order", true))
    return PyVal::poison();
  p.kind = PyVal::Kind::BlockPtr;
  p.items = {base, a.vals[1], a.vals[2], a.vals[3], block, a.vals[5]};
  return p;
}

// tl.advance(p, offsets): the same block pointer moved by `offsets` (one per dimension).
PyVal Sema::builtinAdvance(const Expr& e) {
  Args a;
  if (!bindArgs(e, "advance", {"base", "offsets"}, 2, a)) return PyVal::poison();
  const PyVal& p = a.vals[0];
  if (p.kind != PyVal::Kind::BlockPtr)
    return fail(a.locs[0], "advance() needs a block pointer (from tl.make_block_ptr), got " + describe(p));
  const size_t rank = p.items[kBlockShape].items.size();
  if (!intTuple(a.vals[1], rank, a.locs[1], "advance() offsets", false)) return PyVal::poison();
  PyVal q = p;
  for (size_t d = 0; d < rank; ++d) {
    q.items[kOffsets].items[d] = binary(BinOp::Add, p.items[kOffsets].items[d], a.vals[1].items[d], e.loc);
    if (q.items[kOffsets].items[d].isPoison()) return PyVal::poison();
  }
  return q;
}

// The pointer tile of a block at `offsets` (one per dimension) and, for the dimensions in
// `checked`, the mask 0 <= index < shape. Returns false after reporting an error.
bool Sema::blockAddress(const PyVal& base, const PyVal& shape, const PyVal& strides, const std::vector<PyVal>& offsets,
                        const Shape& block, const std::vector<bool>& checked, Loc loc, Value*& ptrs, Value*& mask) {
  const size_t rank = block.size();
  PyVal p = base, m = PyVal::boolean(true);
  for (size_t d = 0; d < rank; ++d) {
    Value* range = at(loc).arange(0, block[d]);
    if (rank == 2) range = at(loc).expandDims(range, d == 0 ? 1 : 0);
    PyVal idx = binary(BinOp::Add, offsets[d], PyVal::value(range), loc);
    p = binary(BinOp::Add, p, binary(BinOp::Mul, idx, strides.items[d], loc), loc);
    if (checked[d]) {
      PyVal inside = binary(BinOp::BitAnd, binary(BinOp::Ge, idx, PyVal::integer(0), loc),
                            binary(BinOp::Lt, idx, shape.items[d], loc), loc);
      m = binary(BinOp::BitAnd, m, inside, loc);
    }
    if (p.isPoison() || m.isPoison()) return false;
  }
  if (!p.isValue()) return false;
  ptrs = broadcastTo(p.v, block, loc);
  mask = m.isValue() ? broadcastTo(m.v, block, loc) : nullptr;
  return true;
}

// boundary_check=(0, 1): which dimensions are bounds-checked.
std::optional<std::vector<bool>> Sema::boundaryCheck(const Args& a, size_t k, size_t rank) {
  std::vector<bool> checked(rank, false);
  if (!a.has(k)) return checked;
  const PyVal& v = a.vals[k];
  for (const PyVal& d : v.kind == PyVal::Kind::Tuple ? v.items : std::vector<PyVal>{v}) {
    if (!d.isIntConst() || d.i < 0 || d.i >= static_cast<int64_t>(rank)) {
      error(a.locs[k], "boundary_check must list dimensions of the block (0 to " + std::to_string(rank - 1) + "), got " + describe(d));
      return std::nullopt;
    }
    checked[static_cast<size_t>(d.i)] = true;
  }
  return checked;
}

// For an access whose boundary_check leaves dimensions of the block unchecked, the "unchecked"
// attribute says which (every stage's out-of-bounds error quotes it, since the access's mask,
// if any, is boundary_check's and not the user's): "boundary_check=(0,) does not check
// dimension 1".
static void noteUnchecked(Op* op, const std::vector<bool>& checked) {
  std::string list, dims;
  int missing = 0;
  for (size_t d = 0; d < checked.size(); ++d) {
    if (checked[d]) list += (list.empty() ? "" : ", ") + std::to_string(d);
    else dims += (missing++ ? ", " : "") + std::to_string(d);
  }
  if (!missing) return;
  const bool one = list.find(',') == std::string::npos && !list.empty();
  op->setAttr("unchecked", "boundary_check=(" + list + (one ? "," : "") + ") does not check dimension" +
                               (missing > 1 ? "s " : " ") + dims);
}

// load(p, boundary_check=..., padding_option=...) for a block pointer p; args as builtinLoad
// bound them: {pointer, mask, other, boundary_check, padding_option, ...}.
PyVal Sema::loadBlockPtr(const Expr& e, const Args& a) {
  const PyVal& p = a.vals[0];
  if (a.has(1) || a.has(2))
    return fail(a.has(1) ? a.locs[1] : a.locs[2], "a block pointer's load takes boundary_check= and padding_option=, not mask= or other=");
  Shape block;
  for (const PyVal& d : p.items[kBlockShape].items) block.push_back(d.i);
  auto checked = boundaryCheck(a, 3, block.size());
  if (!checked) return PyVal::poison();
  double pad = 0;
  if (a.has(4)) {
    const PyVal& o = a.vals[4];
    if (o.kind != PyVal::Kind::String || (o.s != "" && o.s != "zero" && o.s != "nan"))
      return fail(a.locs[4], "padding_option must be \"zero\" or \"nan\", got " + describe(o));
    if (o.s == "nan") pad = NAN;
  }
  Value *ptrs = nullptr, *mask = nullptr;
  if (!blockAddress(p.items[kBase], p.items[kShape], p.items[kStrides], p.items[kOffsets].items, block, *checked, e.loc, ptrs, mask))
    return PyVal::poison();
  DType elem = ptrs->type.dtype;
  if (pad != 0 && !isFloat(elem)) return fail(a.locs[4], "padding_option=\"nan\" needs a float block, got " + ptrs->type.str());
  Value* other = mask ? materialize(PyVal::real(pad), elem, block, e.loc) : nullptr;
  Value* loaded = at(e.loc).load(ptrs, mask, other);
  noteUnchecked(loaded->def, *checked);
  return PyVal::value(loaded);
}

// store(p, value, boundary_check=...) for a block pointer p: {pointer, value, mask, boundary_check}.
PyVal Sema::storeBlockPtr(const Expr& e, const Args& a) {
  const PyVal& p = a.vals[0];
  if (a.has(2)) return fail(a.locs[2], "a block pointer's store takes boundary_check=, not mask=");
  Shape block;
  for (const PyVal& d : p.items[kBlockShape].items) block.push_back(d.i);
  auto checked = boundaryCheck(a, 3, block.size());
  if (!checked) return PyVal::poison();
  Value *ptrs = nullptr, *mask = nullptr;
  if (!blockAddress(p.items[kBase], p.items[kShape], p.items[kStrides], p.items[kOffsets].items, block, *checked, e.loc, ptrs, mask))
    return PyVal::poison();
  PyVal r = storeTile(ptrs, a.vals[1], a.locs[1], mask, e.loc);
  Builder& b = at(e.loc);
  if (!r.isPoison() && b.index() > 0) noteUnchecked(b.region()->ops[b.index() - 1].get(), *checked);
  return r;
}

// desc.load(offsets), desc.store(offsets, value), tl.load_tensor_descriptor(desc, offsets),
// tl.store_tensor_descriptor(desc, offsets, value): every dimension checked, zero padding.
PyVal Sema::descriptorAccess(const Expr& e, const std::string& f, const PyVal* self) {
  const bool store = f == "store" || f == "store_tensor_descriptor";
  Args a;
  std::vector<std::string> sig = {"desc", "offsets"};
  if (store) sig.push_back("value");
  self_ = self;
  if (!bindArgs(e, f, sig, sig.size(), a)) return PyVal::poison();
  const PyVal& d = a.vals[0];
  if (d.kind != PyVal::Kind::TensorDesc)
    return fail(a.locs[0], f + "() needs a tensor descriptor (from tl.make_tensor_descriptor), got " + describe(d));
  Shape block;
  for (const PyVal& s : d.items[3].items) block.push_back(s.i);
  if (!intTuple(a.vals[1], block.size(), a.locs[1], f + "() offsets", false)) return PyVal::poison();
  Value *ptrs = nullptr, *mask = nullptr;
  std::vector<bool> all(block.size(), true);
  if (!blockAddress(d.items[0], d.items[1], d.items[2], a.vals[1].items, block, all, e.loc, ptrs, mask)) return PyVal::poison();
  if (store) return storeTile(ptrs, a.vals[2], a.locs[2], mask, e.loc);
  return PyVal::value(at(e.loc).load(ptrs, mask, materialize(PyVal::integer(0), ptrs->type.dtype, block, e.loc)));
}

}  // namespace tl
