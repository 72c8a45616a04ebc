// Lowering of reshape, join and split: the shape ops that may change which thread owns an
// element (trans, broadcast and expand_dims are in LowerElementwise.cpp).
//
// Expects: the operand(s) and the result carry layouts (any layouts: assign-layouts gives join
// and split register-only layouts when it can, joinedLayout / splitLayout, and reshape the
// layout its users want); no pointer tiles (the front end refuses them: shared memory holds
// no pointers).
// Guarantees, for each op, the cheapest of:
//   - every thread already holds, in its own registers, each element its result registers need
//     (the same register mapping for every thread): one `permute` per operand, no memory and no
//     barrier. join then takes register r from a or b by the new dim's coordinate of r (a
//     `select`, folded when that coordinate is the same in every thread: joinedLayout);
//   - otherwise through shared memory (cost: one st_shared of the tile, a barrier, one
//     ld_shared per result register, a barrier; a buffer of the tile's bytes): every thread
//     writes the registers it is the first owner of at the element's row-major index, then
//     reads its result registers:
//       reshape  the same row-major index (reshape keeps row-major order);
//       split    index 2 * (row-major index of the result element) + index;
//       join     a at 2 * i, b at 2 * i + 1 (i: the element's row-major index in a), then the
//                result's row-major index.
#include "thread/LowerCommon.h"

namespace tl::lower {

namespace {

// Row-major index of `c` in `shape`, and its inverse.
int64_t flatIndex(const std::vector<int64_t>& c, const Shape& shape) {
  int64_t e = 0;
  for (size_t k = 0; k < shape.size(); ++k) e = e * shape[k] + c[k];
  return e;
}

std::vector<int64_t> unflatIndex(int64_t e, const Shape& shape) {
  std::vector<int64_t> c(shape.size());
  for (size_t k = shape.size(); k-- > 0;) {
    c[k] = e % shape[k];
    e /= shape[k];
  }
  return c;
}

}  // namespace

void Lowerer::lowerReshape(const Op& op) {
  const Type &srcT = op.operand(0)->type, &dstT = op.result()->type;
  Value* x = get(op.operand(0));
  const Shape &from = srcT.shape, &to = dstT.shape;
  auto toSrc = [&from, &to](const std::vector<int64_t>& c) { return unflatIndex(flatIndex(c, to), from); };
  if (auto perm = staticRegisterMap(srcT, dstT, toSrc)) {
    set(op.result(), permuteRegs(x, *perm));
    return;
  }
  set(op.result(), exchangeLinear(x, srcT, dstT, rowMajorStrides(to), 0, "reshape (threads differ)"));
}

void Lowerer::lowerSplit(const Op& op) {
  const Type &srcT = op.operand(0)->type, &dstT = op.result()->type;
  const int64_t index = op.intAttr("index");
  Value* x = get(op.operand(0));
  auto toSrc = [index](const std::vector<int64_t>& c) {
    std::vector<int64_t> s = c;
    s.push_back(index);
    return s;
  };
  if (auto perm = staticRegisterMap(srcT, dstT, toSrc)) {
    set(op.result(), permuteRegs(x, *perm));
    return;
  }
  std::vector<int64_t> read = rowMajorStrides(dstT.shape);
  for (int64_t& s : read) s *= 2;
  set(op.result(), exchangeLinear(x, srcT, dstT, read, index, "split (threads differ)"));
}

void Lowerer::lowerJoin(const Op& op) {
  const Type &aT = op.operand(0)->type, &bT = op.operand(1)->type, &dstT = op.result()->type;
  Value* a = get(op.operand(0));
  Value* b = get(op.operand(1));
  auto dropLast = [](const std::vector<int64_t>& c) { return std::vector<int64_t>(c.begin(), c.end() - 1); };
  auto permA = staticRegisterMap(aT, dstT, dropLast);
  auto permB = permA ? staticRegisterMap(bT, dstT, dropLast) : std::nullopt;
  if (permA && permB) {
    LayoutGeom gd = LayoutGeom::of(*dstT.layout, dstT.shape);
    Value* fromA = permuteRegs(a, *permA);
    Value* fromB = permuteRegs(b, *permB);
    Value* isA = cmpC("eq", splatTo(coord(gd, dstT.rank() - 1), gd.numRegs), 0);
    set(op.result(), b_.select(isA, fromA, fromB));
    return;
  }
  // Through shared memory: a and b interleaved at the result's row-major index.
  if (aT.isPtr) fail("cannot move a pointer tile " + aT.str() + " between threads (shared memory holds no pointers)");
  const int bytes = dtypeBytes(aT.dtype);
  Value* base = sharedBase(dstT.numel() * bytes, "join (threads differ)");
  for (int k = 0; k < 2; ++k) {
    const Type& t = k == 0 ? aT : bT;
    LayoutGeom g = LayoutGeom::of(*t.layout, t.shape);
    Value* mask = ownerMask(g);
    Value* lin = linearIndex(g, t.shape);
    Value* at = addC(mulC(lin, 2), k);
    stShared(sharedAddr(at, bytes, base), k == 0 ? a : b, mask);
  }
  barrier();
  set(op.result(), readExchanged(base, dstT, rowMajorStrides(dstT.shape), 0));
}

}  // namespace tl::lower
