// Lowering of leaves, elementwise ops and broadcasts: the ops that never move data between
// threads (in the common case).
//
// Expects: the op's tile operands and result carry layouts; elementwise operands share the
// result's layout (the verifier's rule), so register k of every operand is the same element.
// Guarantees:
//   program_id / num_programs -> block_id / num_blocks (same axis);
//   constant (tile)           -> a constant register vector (every register the same value);
//   splat                     -> splat of the scalar to the thread's registers;
//   arange(start, end)        -> the coordinate of each register (index math) + start;
//   elementwise, cmp, select, convert, addptr -> the same op, register by register;
//   broadcast / expand_dims / trans -> a static `permute`: target register r takes the register
//     of the SAME thread holding the source element (computed once at compile time and checked
//     to be the same for every thread); if no such static permutation exists, the tile goes
//     through shared memory (LowerConvert.cpp). trans's result layout is its operand's with the
//     dims permuted (the verifier's rule), so its permutation is the identity: no instruction.
#include "ir/Verifier.h"  // transOrder
#include "thread/LowerCommon.h"

namespace tl::lower {

void Lowerer::lowerLeafOrElementwise(const Op& op) {
  switch (op.kind) {
    case OpKind::ProgramId:
    case OpKind::NumPrograms: {
      OpKind k = op.kind == OpKind::ProgramId ? OpKind::BlockId : OpKind::NumBlocks;
      set(op.result(), b_.create(k, {}, {Type::scalar(DType::I32)}, {{"axis", op.intAttr("axis")}})->result());
      return;
    }
    case OpKind::Constant:
      set(op.result(), b_.create(OpKind::Constant, {}, {lowerType(op.result()->type)}, op.attrs)->result());
      return;
    case OpKind::Splat: {
      int64_t n = lowerType(op.result()->type).numel();
      Value* s = get(op.operand(0));
      set(op.result(), n == 1 ? s : b_.splat(s, {n}));
      return;
    }
    default:
      break;
  }
  if (op.info().category != OpCategory::Elementwise || !op.regions.empty())
    fail("no thread-level lowering for this op");
  std::vector<Value*> operands;
  for (Value* v : op.operands) operands.push_back(get(v));
  set(op.result(), b_.create(op.kind, operands, {lowerType(op.result()->type)}, op.attrs)->result());
}

void Lowerer::lowerArange(const Op& op) {
  const Type& t = op.result()->type;
  LayoutGeom g = LayoutGeom::of(*t.layout, t.shape);
  Value* v = addC(coord(g, 0), op.intAttr("start"));
  set(op.result(), v);
}

void Lowerer::lowerBroadcastLike(const Op& op) {
  const Type &srcT = op.operand(0)->type, &dstT = op.result()->type;
  std::vector<int> srcDimOfDst;
  CoordMap toSrc;
  if (op.kind == OpKind::Broadcast) {
    for (int j = 0; j < dstT.rank(); ++j) srcDimOfDst.push_back(j);
    toSrc = [&srcT](const std::vector<int64_t>& c) {
      std::vector<int64_t> s = c;
      for (size_t j = 0; j < s.size(); ++j)
        if (srcT.shape[j] == 1) s[j] = 0;
      return s;
    };
  } else if (op.kind == OpKind::Trans) {  // result dim j is operand dim order[j]
    const std::vector<int> order = transOrder(op);
    srcDimOfDst = order;
    toSrc = [order](const std::vector<int64_t>& c) {
      std::vector<int64_t> s(c.size());
      for (size_t j = 0; j < c.size(); ++j) s[static_cast<size_t>(order[j])] = c[j];
      return s;
    };
  } else {
    int axis = static_cast<int>(op.intAttr("axis"));
    for (int j = 0; j < dstT.rank(); ++j) srcDimOfDst.push_back(j < axis ? j : j == axis ? -1 : j - 1);
    toSrc = [axis](const std::vector<int64_t>& c) {
      std::vector<int64_t> s = c;
      s.erase(s.begin() + axis);
      return s;
    };
  }
  Value* x = get(op.operand(0));
  if (auto perm = staticRegisterMap(srcT, dstT, toSrc)) {
    set(op.result(), permuteRegs(x, *perm));
    return;
  }
  set(op.result(), exchangeViaShared(x, srcT, dstT, srcDimOfDst, std::string(mnemonic(op.kind)) + " (threads differ)"));
}

}  // namespace tl::lower
