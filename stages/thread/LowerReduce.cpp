// Lowering of reduce (sum, max, min) and argmax along an axis: within a thread, across the
// lanes of a warp, across the warps of the block.
//
// Expects: a tile operand with a layout L; the result (a tile) has #slice<dim=axis, L>, or is a
// scalar when the operand is 1-D.
// Guarantees: every thread ends with the reduced value of each element its result registers
// hold (the slice layout's registers; a scalar result is the same in every thread), in three
// steps (ad = the root dimension of the axis):
//   1. in-thread: `permute` groups the e[ad] registers that share the other coordinates, then
//      `reg_reduce {group = e[ad]}` combines each group in register order (increasing
//      coordinate along the axis);
//   2. across lanes, when threadsPerWarp[ad] > 1: a butterfly, `shfl_xor` with offsets
//      laneStride x 1, 2, 4, ... < laneStride x threadsPerWarp[ad], combining (mine, partner's);
//      the combine is commutative, so every lane of the group ends with the same bits;
//   3. across warps, when warpsPerCTA[ad] > 1: the lanes whose lane digit along ad is 0 (and
//      that are the first owner of their outputs) `st_shared` their partial to the slot
//      [warp digit along ad][output element, row-major]; barrier; every thread `ld_shared`s the
//      warpsPerCTA[ad] partials of its outputs and combines them in order 0, 1, 2, ...; barrier
//      (so the buffer may be reused, by the next iteration too). With one output element (a
//      scalar result, W = warpsPerCTA[ad] <= 32 partials), lane l reads only partial l % W and a
//      butterfly of shfl_xor 1, 2, .. W/2 combines them: every lane of every warp ends with the
//      same bits, in 1 + 2 log2(W) instructions where the loop takes 2W - 1 (W = 16: 9 for 31).
//      Such a reduce at the function's top level keeps its buffer to the end and takes no
//      barrier after the reads (nothing can overwrite them).
//   sum: where the layout wraps around along the axis (threads holding a replica), replicas
//   are replaced by -0.0 / 0 (the identity) before step 1 so nothing is counted twice. f16 and
//   bf16 sums accumulate in f32 and round once at the end, as tl-scalar does. Integer sums,
//   max and min are exact; f32 sums differ from tl-scalar's sequential order by rounding only.
//   argmax: (value, index) pairs go through the same three steps with explicit cmp/select:
//   the larger value wins, a NaN beats every number, ties (and two NaNs) go to the smaller
//   index — a total order, so the result is exactly tl-scalar's "first index of the maximum".
#include "thread/LowerCommon.h"

namespace tl::lower {

namespace {

OpKind combineKind(const std::string& kind) {
  return kind == "sum" ? OpKind::Add : kind == "max" ? OpKind::Maximum : OpKind::Minimum;
}

}  // namespace

Value* Lowerer::combine(const std::string& kind, Value* a, Value* b) { return bin(combineKind(kind), a, b); }

// The operand registers with digit j along root dim `ad`, one per result register (in the
// result's register order: the same digits with e[ad] = 1).
std::vector<int64_t> Lowerer::groupedOrder(const LayoutGeom& g, int ad, int64_t j) const {
  std::vector<int64_t> regs;
  int64_t q = g.numRegs / g.e[ad];
  for (int64_t k = 0; k < q; ++k) {
    std::vector<int64_t> dig(g.rootRank(), 0);
    int64_t rest = k;
    for (int d : g.order) {
      if (d == ad) continue;
      dig[d] = rest % g.e[d];
      rest /= g.e[d];
    }
    dig[ad] = j;
    regs.push_back(g.regOf(dig));
  }
  return regs;
}

void Lowerer::lowerReduce(const Op& op) {
  const Type& inT = op.operand(0)->type;
  const std::string& kind = op.strAttr("kind");
  int axis = static_cast<int>(op.intAttr("axis"));
  LayoutGeom g = LayoutGeom::of(*inT.layout, inT.shape);
  int ad = g.kept[axis];
  Shape outShape = reducedShape(inT.shape, axis);
  LayoutGeom out = LayoutGeom::of(*Layout::slice(axis, inT.layout), outShape);

  Value* x = get(op.operand(0));
  DType acc = inT.dtype;
  if (kind == "sum" && (acc == DType::F16 || acc == DType::BF16)) {
    acc = DType::F32;
    x = b_.convert(x, acc);
  }
  Type accScalar = Type::scalar(acc);
  if (kind == "sum" && g.wraps(ad)) {  // replicas along the axis must not be counted twice
    Value* own = cmpC("lt", unwrapped(g, ad), g.full[ad]);
    Value* zero = constOf(accScalar, -0.0, 0, g.numRegs);  // first: the IR must not depend on argument order
    x = b_.select(splatTo(own, g.numRegs), x, zero);
  }
  // 1. in-thread
  if (g.e[ad] > 1) {
    std::vector<std::vector<int64_t>> column;  // column[j][k]: digit j of result register k
    for (int64_t j = 0; j < g.e[ad]; ++j) column.push_back(groupedOrder(g, ad, j));
    std::vector<int64_t> perm;
    for (int64_t k = 0, q = g.numRegs / g.e[ad]; k < q; ++k)
      for (int64_t j = 0; j < g.e[ad]; ++j) perm.push_back(column[j][k]);
    x = permuteRegs(x, perm);
    Type t = out.numRegs == 1 ? accScalar : accScalar.withShape({out.numRegs});
    x = b_.create(OpKind::RegReduce, {x}, {t}, {{"kind", kind}, {"group", g.e[ad]}})->result();
  }
  // 2. across lanes
  for (int64_t k = 1; k < g.tpw[ad]; k *= 2) {
    Value* other = b_.create(OpKind::ShflXor, {x}, {x->type}, {{"offset", g.laneStride[ad] * k}})->result();
    x = combine(kind, x, other);
  }
  // 3. across warps
  if (g.wpc[ad] > 1) {
    int64_t numOut = 1;
    for (int64_t s : outShape) numOut *= s;
    int bytes = dtypeBytes(acc);
    // A scalar result at the function's top level runs once: its few bytes stay reserved to the
    // end, so no later op reuses them and no barrier is needed after the reads.
    const bool once = numOut == 1 && op.parent == &src_.body;
    Value* base = sharedBase(g.wpc[ad] * numOut * bytes, once ? "reduce across warps (kept to the end: no barrier after)"
                                                              : "reduce across warps");
    if (once) buffers_.back().lastOp = lastOpIndex();
    Value* lin = linearIndex(out, outShape);
    Value* slot = bin(OpKind::Add, splatTo(mulC(warpDigit(g, ad), numOut), out.numRegs), lin);
    Value* mask = ownerMask(out, /*freeWarpDim=*/ad);  // first: the IR must not depend on argument order
    stShared(sharedAddr(slot, bytes, base), x, mask);
    barrier();
    Value* r;
    if (numOut == 1) {  // one output: lane l reads partial l % W, then a butterfly over the W
      r = ldShared(sharedAddr(andC(lane_, g.wpc[ad] - 1), bytes, base), acc);
      for (int64_t k = 1; k < g.wpc[ad]; k *= 2)
        r = combine(kind, r, b_.create(OpKind::ShflXor, {r}, {r->type}, {{"offset", k}})->result());
    } else {
      r = ldShared(sharedAddr(lin, bytes, base), acc);
      for (int64_t w = 1; w < g.wpc[ad]; ++w)
        r = combine(kind, r, ldShared(sharedAddr(addC(lin, w * numOut), bytes, base), acc));
    }
    if (!once) barrier();
    x = r;
  }
  if (acc != inT.dtype) x = b_.convert(x, inT.dtype);
  set(op.result(), x);
}

void Lowerer::lowerArgmax(const Op& op) {
  const Type& inT = op.operand(0)->type;
  int axis = static_cast<int>(op.intAttr("axis"));
  LayoutGeom g = LayoutGeom::of(*inT.layout, inT.shape);
  int ad = g.kept[axis];
  Shape outShape = reducedShape(inT.shape, axis);
  LayoutGeom out = LayoutGeom::of(*Layout::slice(axis, inT.layout), outShape);
  bool isF = isFloat(inT.dtype);

  // (v1, i1) vs (v2, i2): take the second when it is larger, or a NaN against a number, or
  // equal (or both NaN) with a smaller index.
  auto pick = [&](Value*& v1, Value*& i1, Value* v2, Value* i2) {
    Value* gt = b_.cmp("gt", v2, v1);
    Value* eq = b_.cmp("eq", v2, v1);
    Value* lt = b_.cmp("lt", i2, i1);
    Value* take;
    if (isF) {
      Value* nan1 = b_.cmp("ne", v1, v1);
      Value* nan2 = b_.cmp("ne", v2, v2);
      Value* tie = b_.binary(OpKind::And, lt, b_.binary(OpKind::Or, eq, nan2));
      Value* nanWins = b_.binary(OpKind::And, nan2, b_.unary(OpKind::Not, nan1));
      take = b_.binary(OpKind::Or, b_.binary(OpKind::Or, gt, tie), nanWins);
    } else {
      take = b_.binary(OpKind::Or, gt, b_.binary(OpKind::And, eq, lt));
    }
    v1 = b_.select(take, v2, v1);
    i1 = b_.select(take, i2, i1);
  };

  Value* v = get(op.operand(0));
  Value* idx = coord(g, axis);  // each register's index along the axis
  // 1. in-thread: column j = the registers with digit j along the axis, in result order.
  if (g.e[ad] > 1) {
    Value* v0 = v;
    Value* i0 = idx;
    v = permuteRegs(v0, groupedOrder(g, ad, 0));
    idx = permuteRegs(i0, groupedOrder(g, ad, 0));
    for (int64_t j = 1; j < g.e[ad]; ++j)
      pick(v, idx, permuteRegs(v0, groupedOrder(g, ad, j)), permuteRegs(i0, groupedOrder(g, ad, j)));
  }
  // 2. across lanes
  for (int64_t k = 1; k < g.tpw[ad]; k *= 2) {
    int64_t off = g.laneStride[ad] * k;
    Value* ov = b_.create(OpKind::ShflXor, {v}, {v->type}, {{"offset", off}})->result();
    Value* oi = b_.create(OpKind::ShflXor, {idx}, {idx->type}, {{"offset", off}})->result();
    pick(v, idx, ov, oi);
  }
  // 3. across warps: values and indices in two buffers.
  if (g.wpc[ad] > 1) {
    int64_t numOut = 1;
    for (int64_t s : outShape) numOut *= s;
    int vb = dtypeBytes(inT.dtype);
    Value* vbase = sharedBase(g.wpc[ad] * numOut * vb, "argmax values across warps");
    Value* ibase = sharedBase(g.wpc[ad] * numOut * 4, "argmax indices across warps");
    Value* lin = linearIndex(out, outShape);
    Value* slot = bin(OpKind::Add, splatTo(mulC(warpDigit(g, ad), numOut), out.numRegs), lin);
    Value* writer = ownerMask(out, /*freeWarpDim=*/ad);
    stShared(sharedAddr(slot, vb, vbase), v, writer);
    stShared(sharedAddr(slot, 4, ibase), idx, writer);
    barrier();
    Value* rv = ldShared(sharedAddr(lin, vb, vbase), inT.dtype);
    Value* ri = ldShared(sharedAddr(lin, 4, ibase), DType::I32);
    for (int64_t w = 1; w < g.wpc[ad]; ++w) {
      Value* s = addC(lin, w * numOut);
      Value* index = ldShared(sharedAddr(s, 4, ibase), DType::I32);  // first: argument order is open in C++
      pick(rv, ri, ldShared(sharedAddr(s, vb, vbase), inT.dtype), index);
    }
    barrier();
    idx = ri;
  }
  set(op.result(), idx);
}

}  // namespace tl::lower
