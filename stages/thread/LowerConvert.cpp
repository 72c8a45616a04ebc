// Lowering of convert_layout (and of broadcasts whose data must change threads): moving a tile
// from one assignment of elements to threads to another, through shared memory.
//
// Expects: a tile with a layout in, the same tile with another layout out. Pointer tiles
// cannot go through shared memory (it holds no pointers): the layout pass must not convert
// them (it can recompute the pointers in the new layout instead); this is an IRError.
// Guarantees:
//   - equal layouts: nothing; a layout change where every thread already holds each element it
//     needs (the same static register mapping for every thread): one `permute`, no memory;
//   - otherwise: every thread st_shared's the registers it is the FIRST OWNER of at the
//     element's row-major offset (replicas are masked off, so no two threads write one address
//     and the race detector has nothing to flag), barrier, every thread ld_shared's the
//     elements of its new registers, barrier (before the buffer may be reused).
#include "thread/LowerCommon.h"

namespace tl::lower {

void Lowerer::lowerConvertLayout(const Op& op) {
  const Type &srcT = op.operand(0)->type, &dstT = op.result()->type;
  Value* x = get(op.operand(0));
  if (*srcT.layout == *dstT.layout) {
    set(op.result(), x);
    return;
  }
  auto same = [](const std::vector<int64_t>& c) { return c; };
  if (auto perm = staticRegisterMap(srcT, dstT, same)) {
    set(op.result(), permuteRegs(x, *perm));
    return;
  }
  std::vector<int> dims;
  for (int j = 0; j < srcT.rank(); ++j) dims.push_back(j);
  set(op.result(), exchangeViaShared(x, srcT, dstT, dims, "convert_layout"));
}

Value* Lowerer::exchangeViaShared(Value* regs, const Type& srcT, const Type& dstT,
                                  const std::vector<int>& srcDimOfDst, const std::string& purpose) {
  // Destination dim j advances the source's row-major index by the stride of srcDimOfDst[j].
  auto strides = rowMajorStrides(srcT.shape);
  std::vector<int64_t> read;
  for (int j = 0; j < dstT.rank(); ++j) {
    int s = srcDimOfDst[j];
    read.push_back(s < 0 || srcT.shape[s] == 1 ? 0 : strides[s]);
  }
  return exchangeLinear(regs, srcT, dstT, read, 0, purpose);
}

Value* Lowerer::exchangeLinear(Value* regs, const Type& srcT, const Type& dstT, const std::vector<int64_t>& readStrides,
                               int64_t readOffset, const std::string& purpose) {
  if (srcT.isPtr)
    fail("cannot move a pointer tile " + srcT.str() + " between threads (shared memory holds no pointers); "
         "the layout pass should recompute the pointers in the new layout");
  int bytes = dtypeBytes(srcT.dtype);
  Value* base = sharedBase(srcT.numel() * bytes, purpose);
  LayoutGeom gs = LayoutGeom::of(*srcT.layout, srcT.shape);
  // (One op-making call per statement: C++ leaves the order of arguments open, and the IR must
  // not depend on the compiler.)
  Value* mask = ownerMask(gs);
  stShared(sharedAddr(linearIndex(gs, srcT.shape), bytes, base), regs, mask);
  barrier();
  return readExchanged(base, dstT, readStrides, readOffset);
}

Value* Lowerer::readExchanged(Value* base, const Type& dstT, const std::vector<int64_t>& readStrides, int64_t readOffset) {
  int bytes = dtypeBytes(dstT.dtype);
  LayoutGeom gd = LayoutGeom::of(*dstT.layout, dstT.shape);
  Value* lin = nullptr;
  for (int j = 0; j < dstT.rank(); ++j) {
    if (readStrides[j] == 0 || dstT.shape[j] == 1) continue;
    Value* term = mulC(coord(gd, j), readStrides[j]);
    lin = lin ? bin(OpKind::Add, lin, term) : term;
  }
  lin = lin ? addC(lin, readOffset) : constI32(readOffset, gd.numRegs);
  Value* r = ldShared(sharedAddr(splatTo(lin, gd.numRegs), bytes, base), dstT.dtype);
  barrier();
  return r;
}

}  // namespace tl::lower
