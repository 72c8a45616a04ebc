// Sema, the permuting built-ins: tl.sort, tl.topk, tl.flip, tl.gather, tl.histogram and
// tl.swizzle2d, each composed of tilelab's existing ops (compare, where, reduce, arange), so every
// stage runs them with no op of its own:
//
//   sort(x, dim=None, descending=False)   along the last dimension (as Triton requires): each
//        element's rank is the number of elements ordered before it (a total order: NaN after
//        every number, ties by position, so the sort is stable); output k takes the element of
//        rank k. Ascending puts NaN last; descending is that order reversed, NaN first.
//   topk(x, k, dim=None)                  the k largest along the last dimension, largest first
//        (k a power of two <= the dimension): sort(descending=True)'s first k
//   flip(x, dim=None)                     out[k] = x[N - 1 - k] along dim (default: the last)
//   gather(src, index, axis)              out[.., k, ..] = src[.., index[.., k, ..], ..]; index has
//        src's rank and src's sizes on the other dimensions. An index outside [0, N) gives the
//        dtype's lowest value (Triton leaves it undefined).
//   histogram(x, num_bins, mask=None)     out[b] = number of i with x[i] == b (and mask[i]); values
//        outside [0, num_bins) are not counted; i32 result
//   swizzle2d(i, j, size_i, size_j, size_g)  Triton's grouped reordering of a 2-D index, the
//        arithmetic of triton/language/standard.py
//
// Cost: "output k takes the element with property p" is a [.., N, N] comparison tile reduced with
// max (selected value, or the lowest value elsewhere: exact for every dtype, -0.0 and NaN
// included), so these cost N^2 compares per row where Triton's sort is an N log^2 N bitonic
// network; fine for the row sizes of kernels that sort (tilelab's register limits say when not).
// The intermediate tile has one dimension more than the input (rank <= 2 inputs, kMaxTileRank 3).
#include <cmath>
#include <limits>

#include "frontend/CallArgs.h"
#include "frontend/Sema.h"

namespace tl {

using namespace ast;

namespace {

// The lowest value of a dtype: what a "not selected" position holds before the max.
PyVal lowest(DType dt) {
  if (dt == DType::I64) return PyVal::integer(std::numeric_limits<int64_t>::min());
  if (dt == DType::I32) return PyVal::integer(std::numeric_limits<int32_t>::min());
  return PyVal::real(-INFINITY);
}

}  // namespace

// arange(0, n) placed along dimension `axis` of a tile of rank `rank` (size 1 elsewhere).
Value* Sema::axisIndex(int64_t n, int axis, int rank, Loc loc) {
  Value* v = at(loc).arange(0, n);
  for (int d = 0; d < rank; ++d)
    if (d != axis) v = at(loc).expandDims(v, d);
  return v;
}

// max over `axis` of where(sel, values, lowest): the one selected value per output position.
Value* Sema::pickAlong(Value* sel, Value* values, int axis, Loc loc) {
  const Shape& shape = sel->type.shape;
  values = broadcastTo(values, shape, loc);
  Value* none = materialize(lowest(values->type.dtype), values->type.dtype, shape, loc);
  Value* picked = at(loc).select(sel, values, none);
  return at(loc).reduce("max", picked, axis);
}

// Per element of x along its last dimension: how many elements come before it in the sort
// order (a [.., N] i32 tile).
Value* Sema::sortRanks(Value* x, bool descending, Loc loc) {
  const int r = x->type.rank();
  const int64_t n = x->type.shape.back();
  Shape sq = x->type.shape;
  sq.push_back(n);
  Value* xi = broadcastTo(at(loc).expandDims(x, r), sq, loc);      // [.., i, j] = x[i]
  Value* xj = broadcastTo(at(loc).expandDims(x, r - 1), sq, loc);  // [.., i, j] = x[j]
  Value *before = nullptr, *same = nullptr;
  if (isFloat(x->type.dtype)) {
    Value* nanI = at(loc).cmp("ne", xi, xi);
    Value* nanJ = at(loc).cmp("ne", xj, xj);
    // Ascending: j before i when x[j] < x[i], or x[j] is a number and x[i] is NaN.
    Value* numJ = at(loc).unary(OpKind::Not, nanJ);
    Value* numI = at(loc).unary(OpKind::Not, nanI);
    Value* lt = at(loc).cmp(descending ? "gt" : "lt", xj, xi);
    Value* nanOrder = descending ? at(loc).binary(OpKind::And, nanJ, numI) : at(loc).binary(OpKind::And, numJ, nanI);
    before = at(loc).binary(OpKind::Or, lt, nanOrder);
    Value* eq = at(loc).cmp("eq", xj, xi);
    Value* bothNan = at(loc).binary(OpKind::And, nanJ, nanI);
    same = at(loc).binary(OpKind::Or, eq, bothNan);
  } else {
    before = at(loc).cmp(descending ? "gt" : "lt", xj, xi);
    same = at(loc).cmp("eq", xj, xi);
  }
  Value* jIdx = broadcastTo(axisIndex(n, r, r + 1, loc), sq, loc);
  Value* iIdx = broadcastTo(axisIndex(n, r - 1, r + 1, loc), sq, loc);
  Value* earlier = at(loc).cmp("lt", jIdx, iIdx);
  Value* tie = at(loc).binary(OpKind::And, same, earlier);
  Value* counts = at(loc).binary(OpKind::Or, before, tie);
  return at(loc).reduce("sum", convert(counts, DType::I32, loc), r);
}

// The first `k` elements of x's last dimension in sort order: output position p takes the
// element whose rank is p.
Value* Sema::sortedPrefix(Value* x, bool descending, int64_t k, Loc loc) {
  const int r = x->type.rank();
  const int64_t n = x->type.shape.back();
  const DType dt = x->type.dtype;
  Value* v = dt == DType::I1 ? convert(x, DType::I32, loc) : x;
  Value* ranks = sortRanks(v, descending, loc);
  Shape sel = x->type.shape;
  sel.back() = n;
  sel.push_back(k);  // [.., i, p]
  Value* rankI = broadcastTo(at(loc).expandDims(ranks, r), sel, loc);
  Value* p = broadcastTo(axisIndex(k, r, r + 1, loc), sel, loc);
  Value* out = pickAlong(at(loc).cmp("eq", rankI, p), at(loc).expandDims(v, r), r - 1, loc);
  return dt == DType::I1 ? convert(out, DType::I1, loc) : out;
}

// out[.., k] = src[.., idx[.., k]] along the last dimension (idx i32 or i64, same leading sizes).
Value* Sema::gatherLast(Value* src, Value* idx, Loc loc) {
  const int r = src->type.rank();
  const int64_t n = src->type.shape.back(), k = idx->type.shape.back();
  Shape sel = idx->type.shape;
  sel.back() = n;
  sel.push_back(k);  // [.., i, k]
  Value* want = broadcastTo(at(loc).expandDims(idx, r - 1), sel, loc);
  Value* i = broadcastTo(convert(axisIndex(n, r - 1, r + 1, loc), idx->type.dtype, loc), sel, loc);
  const DType dt = src->type.dtype;
  Value* v = dt == DType::I1 ? convert(src, DType::I32, loc) : src;
  Value* out = pickAlong(at(loc).cmp("eq", want, i), at(loc).expandDims(v, r), r - 1, loc);
  return dt == DType::I1 ? convert(out, DType::I1, loc) : out;
}

PyVal Sema::builtinSort(const Expr& e, const std::string& f) {
  Args a;
  const Loc loc = e.loc;
  auto tile = [&](const PyVal& x, Loc at, const std::string& what) -> Value* {
    if (!x.isValue() || x.v->type.isPtr || x.v->type.isScalar()) {
      error(at, f + "() " + what + " must be a tile, got " + describe(x));
      return nullptr;
    }
    return x.v;
  };
  // The dimension argument: None means the last; negative counts from the end.
  auto dimOf = [&](size_t k, int rank, bool lastOnly) -> std::optional<int> {
    if (!a.has(k) || a.vals[k].kind == PyVal::Kind::None) return rank - 1;
    auto d = constInt(a.vals[k], a.exprs[k], a.locs[k], f + "() dimension");
    if (!d) return std::nullopt;
    int64_t dim = *d < 0 ? *d + rank : *d;
    if (dim < 0 || dim >= rank) {
      error(a.locs[k], f + "() dimension " + std::to_string(*d) + " is outside a tile of rank " + std::to_string(rank));
      return std::nullopt;
    }
    if (lastOnly && dim != rank - 1) {
      error(a.locs[k], f + "() sorts along the last dimension only (as Triton), got dimension " + std::to_string(*d));
      return std::nullopt;
    }
    return static_cast<int>(dim);
  };
  // Runs `fn` on x with `dim` moved last (a 2-D transpose when it is not), and moves it back.
  auto alongDim = [&](Value* x, int dim, auto fn) -> PyVal {
    if (dim == x->type.rank() - 1) return PyVal::value(fn(x));
    PyVal t = transpose(PyVal::value(x), loc, loc, (f + "() along dimension 0").c_str());
    if (!t.isValue()) return PyVal::poison();
    return transpose(PyVal::value(fn(t.v)), loc, loc, (f + "() along dimension 0").c_str());
  };

  if (f == "sort" || f == "topk") {
    const bool top = f == "topk";
    if (!bindArgs(e, f, top ? std::vector<std::string>{"x", "k", "dim"} : std::vector<std::string>{"x", "dim", "descending"},
                  top ? 2 : 1, a))
      return PyVal::poison();
    Value* x = tile(a.vals[0], a.locs[0], "input");
    if (!x) return PyVal::poison();
    auto dim = dimOf(top ? 2 : 1, x->type.rank(), true);
    if (!dim) return PyVal::poison();
    const int64_t n = x->type.shape.back();
    int64_t k = n;
    bool descending = top;
    if (top) {
      auto kk = constInt(a.vals[1], a.exprs[1], a.locs[1], "topk() k");
      if (!kk) return PyVal::poison();
      if (*kk < 1 || *kk > n || (*kk & (*kk - 1)))
        return fail(a.locs[1], "topk() k must be a power of two from 1 to " + std::to_string(n) + ", got " + std::to_string(*kk));
      k = *kk;
    } else if (a.has(2)) {
      const PyVal& d = a.vals[2];
      if (!(d.isIntConst() || d.kind == PyVal::Kind::Bool))
        return fail(a.locs[2], "sort() descending must be a compile-time bool, got " + describe(d));
      descending = d.i != 0;
    }
    Shape sq = x->type.shape;
    sq.push_back(n);
    if (!checkTileSize(sq, loc)) return PyVal::poison();
    return PyVal::value(sortedPrefix(x, descending, k, loc));
  }

  if (f == "flip") {
    if (!bindArgs(e, f, {"x", "dim"}, 1, a)) return PyVal::poison();
    Value* x = tile(a.vals[0], a.locs[0], "input");
    if (!x) return PyVal::poison();
    auto dim = dimOf(1, x->type.rank(), false);
    if (!dim) return PyVal::poison();
    Shape sq = x->type.shape;
    sq.push_back(sq[static_cast<size_t>(*dim)]);
    if (!checkTileSize(sq, loc)) return PyVal::poison();
    return alongDim(x, *dim, [&](Value* v) {
      const int64_t n = v->type.shape.back();
      Shape idxShape = v->type.shape;
      Value* ks = broadcastTo(axisIndex(n, v->type.rank() - 1, v->type.rank(), loc), idxShape, loc);
      Value* last = materialize(PyVal::integer(n - 1), DType::I32, idxShape, loc);
      return gatherLast(v, at(loc).binary(OpKind::Sub, last, ks), loc);
    });
  }

  if (f == "gather") {
    if (!bindArgs(e, f, {"src", "index", "axis"}, 3, a)) return PyVal::poison();
    Value* src = tile(a.vals[0], a.locs[0], "src");
    Value* idx = src ? tile(a.vals[1], a.locs[1], "index") : nullptr;
    if (!idx) return PyVal::poison();
    if (!isInt(idx->type.dtype) || idx->type.dtype == DType::I1)
      return fail(a.locs[1], "gather() index must be an i32 or i64 tile, got " + idx->type.str());
    const int rank = src->type.rank();
    if (idx->type.rank() != rank)
      return fail(a.locs[1], "gather() index must have src's rank (" + std::to_string(rank) + "), got " + idx->type.str());
    auto axis = dimOf(2, rank, false);
    if (!axis) return PyVal::poison();
    for (int d = 0; d < rank; ++d)
      if (d != *axis && idx->type.shape[static_cast<size_t>(d)] != src->type.shape[static_cast<size_t>(d)])
        return fail(a.locs[1], "gather() index " + idx->type.str() + " must match src " + src->type.str() +
                                   " on every dimension but axis " + std::to_string(*axis));
    Shape sq = idx->type.shape;
    sq.push_back(src->type.shape[static_cast<size_t>(*axis)]);
    if (!checkTileSize(sq, loc)) return PyVal::poison();
    if (*axis == rank - 1) return PyVal::value(gatherLast(src, idx, loc));
    PyVal s = transpose(PyVal::value(src), loc, loc, "gather() along axis 0");
    PyVal i = s.isValue() ? transpose(PyVal::value(idx), loc, loc, "gather() along axis 0") : PyVal::poison();
    if (!i.isValue()) return PyVal::poison();
    return transpose(PyVal::value(gatherLast(s.v, i.v, loc)), loc, loc, "gather() along axis 0");
  }

  if (f == "histogram") {
    if (!bindArgs(e, f, {"input", "num_bins", "mask"}, 2, a)) return PyVal::poison();
    Value* x = tile(a.vals[0], a.locs[0], "input");
    if (!x) return PyVal::poison();
    if (x->type.rank() != 1 || !isInt(x->type.dtype) || x->type.dtype == DType::I1)
      return fail(a.locs[0], "histogram() input must be a 1-D i32 or i64 tile, got " + x->type.str());
    auto bins = constInt(a.vals[1], a.exprs[1], a.locs[1], "histogram() num_bins");
    if (!bins) return PyVal::poison();
    if (*bins < 1 || (*bins & (*bins - 1)))
      return fail(a.locs[1], "histogram() num_bins must be a power of two, got " + std::to_string(*bins));
    const int64_t n = x->type.shape[0];
    Shape sq{n, *bins};
    if (!checkTileSize(sq, loc)) return PyVal::poison();
    Value* xi = broadcastTo(at(loc).expandDims(x, 1), sq, loc);
    Value* b = broadcastTo(convert(axisIndex(*bins, 1, 2, loc), x->type.dtype, loc), sq, loc);
    Value* hit = at(loc).cmp("eq", xi, b);
    if (a.has(2) && a.vals[2].kind != PyVal::Kind::None) {
      const PyVal& m = a.vals[2];
      if (!m.isValue() || m.v->type.dtype != DType::I1 || m.v->type.shape != x->type.shape)
        return fail(a.locs[2], "histogram() mask must be an i1 tile of the input's shape " + x->type.str() + ", got " + describe(m));
      hit = at(loc).binary(OpKind::And, hit, broadcastTo(at(loc).expandDims(m.v, 1), sq, loc));
    }
    return PyVal::value(at(loc).reduce("sum", convert(hit, DType::I32, loc), 0));
  }

  // swizzle2d(i, j, size_i, size_j, size_g), as triton/language/standard.py computes it.
  if (!bindArgs(e, f, {"i", "j", "size_i", "size_j", "size_g"}, 5, a)) return PyVal::poison();
  auto op = [&](BinOp o, const PyVal& l, const PyVal& r) { return binary(o, l, r, loc); };
  const PyVal &i = a.vals[0], &j = a.vals[1], &si = a.vals[2], &sj = a.vals[3], &sg = a.vals[4];
  PyVal ij = op(BinOp::Add, op(BinOp::Mul, i, sj), j);                // linear index
  PyVal sizeGj = op(BinOp::Mul, sg, sj);                              // programs per group
  PyVal group = op(BinOp::FloorDiv, ij, sizeGj);
  PyVal off = op(BinOp::Mul, group, sg);                              // first row of the group
  PyVal rows = op(BinOp::Sub, si, off);
  PyVal rowsHere = rows;                                              // min(rows, size_g): the last
  if (rows.isConst() && sg.isConst()) {                               // group may be short
    if (sg.asDouble() < rows.asDouble()) rowsHere = sg;
  } else if (!rows.isPoison()) {
    Value *va = nullptr, *vb = nullptr;
    if (!unify(rows, sg, loc, va, vb)) return PyVal::poison();
    rowsHere = PyVal::value(at(loc).binary(OpKind::Minimum, va, vb));
  }
  PyVal k = op(BinOp::Mod, ij, sizeGj);
  PyVal newI = op(BinOp::Add, off, op(BinOp::Mod, k, rowsHere));
  PyVal newJ = op(BinOp::FloorDiv, k, rowsHere);
  for (const PyVal* v : {&newI, &newJ})
    if (v->isPoison()) return PyVal::poison();
  PyVal t;
  t.kind = PyVal::Kind::Tuple;
  t.items = {newI, newJ};
  return t;
}

}  // namespace tl
