// Lowering of global loads, stores and atomics, and of debug_barrier.
//
// Expects: load/store with the pointer, mask, other and value tiles in one layout (the
// verifier's rule); an optional integer attribute `vec` (registers per access, default 1)
// chosen by the layout pass.
// Guarantees:
//   load  -> ld_global {vec} of the thread's pointer registers, with the per-register mask and
//            `other` (masked-off registers get `other`, or 0);
//   store -> st_global {vec}; only the first owner of each element stores it: registers a
//            thread holds as a replica (a wrapped-around layout, a slice layout's duplicate
//            lanes and warps, or a scalar, which every thread holds) are masked off, so each
//            element is written once per program (as Triton does).
//   atomic_rmw / atomic_cas -> atom_global / atom_cas_global, one atomic per register (no vec),
//            masked like a store: only the first owner of each element does the atomic (a
//            scalar's: thread 0), so each element is updated once per program. When the old
//            values are used and some thread holds a replica, the owners write them to shared
//            memory, barrier, every thread reads its registers back, barrier (a scalar: thread
//            0 writes one slot that every thread reads), so every thread sees the old value.
//   debug_barrier -> barrier.
//   `vec` is checked against the layout: a power of two, vec x element bytes <= 16, and at
//   most the run of registers that hold consecutive elements of the fastest dimension (the
//   size per thread along it, capped by the tile's extent). A bad `vec` is an IRError at the op.
#include "thread/LowerCommon.h"

namespace tl::lower {

int64_t Lowerer::checkedVec(const Op& op, const Type& valueType) {
  int64_t vec = op.hasAttr("vec") ? op.intAttr("vec") : 1;
  auto bad = [&](const std::string& why) { fail("vec = " + std::to_string(vec) + " " + why); };
  if (vec < 1 || !isPowerOfTwo(vec)) bad("must be a power of two");
  if (vec * dtypeBytes(valueType.dtype) > 16) bad("makes an access wider than 16 bytes");
  if (vec == 1) return 1;
  if (valueType.isScalar()) bad("on a scalar access (must be 1)");
  LayoutGeom g = LayoutGeom::of(*valueType.layout, valueType.shape);
  // The fastest kept root dim: its registers are consecutive (sliced dims have one register).
  int fast = -1;
  for (int d : g.order)
    if (g.isKept(d)) {
      fast = d;
      break;
    }
  int64_t run = std::min<int64_t>(g.spt[fast], g.full[fast]);
  if (vec > run)
    bad("exceeds the " + std::to_string(run) + " consecutive elements each thread holds along the fastest dimension");
  return vec;
}

void Lowerer::lowerLoad(const Op& op) {
  if (lowerRingLoad(op)) return;  // cp_async into a ring's slot (LowerRing.cpp)
  const Type& t = op.result()->type;
  int64_t vec = checkedVec(op, t);
  std::vector<Value*> operands;
  for (Value* v : op.operands) operands.push_back(get(v));
  std::vector<NamedAttr> attrs{{"vec", vec}};
  if (const std::string* u = op.strAttrIf("unchecked")) attrs.push_back({"unchecked", *u});  // for error messages
  Value* r = b_.create(OpKind::LdGlobal, operands, {lowerType(t)}, attrs)->result();
  set(op.result(), r);
}

void Lowerer::lowerStore(const Op& op) {
  const Type& t = op.operand(1)->type;
  int64_t vec = checkedVec(op, t);
  Value* mask = op.numOperands() == 3 ? get(op.operand(2)) : nullptr;
  Value* owner = t.isScalar() ? cmpC("eq", threadId_, 0) : ownerMask(LayoutGeom::of(*t.layout, t.shape));
  mask = andMask(mask, owner);
  std::vector<Value*> operands{get(op.operand(0)), get(op.operand(1))};
  if (mask) operands.push_back(mask);
  std::vector<NamedAttr> attrs{{"vec", vec}};
  if (const std::string* u = op.strAttrIf("unchecked")) attrs.push_back({"unchecked", *u});
  b_.create(OpKind::StGlobal, operands, {}, attrs);
}

void Lowerer::lowerAtomic(const Op& op) {
  const bool cas = op.kind == OpKind::AtomicCAS;
  const size_t values = cas ? 2 : 1;
  const Type& t = op.result()->type;
  Value* mask = op.numOperands() > values + 1 ? get(op.operand(values + 1)) : nullptr;
  Value* owner = t.isScalar() ? cmpC("eq", threadId_, 0) : ownerMask(LayoutGeom::of(*t.layout, t.shape));
  mask = andMask(mask, owner);
  std::vector<Value*> operands;
  for (size_t k = 0; k <= values; ++k) operands.push_back(get(op.operand(k)));
  if (mask) operands.push_back(mask);
  std::vector<NamedAttr> attrs;
  if (!cas) attrs.push_back({"kind", op.strAttr("kind")});
  attrs.push_back({"sem", op.strAttr("sem")});
  attrs.push_back({"scope", op.strAttr("scope")});
  Value* old = b_.create(cas ? OpKind::AtomCasGlobal : OpKind::AtomGlobal, operands, {lowerType(t)}, attrs)->result();
  if (!owner || countUses(src_.body, op.result()) == 0) {
    set(op.result(), old);
    return;
  }
  if (!t.isScalar()) {  // the owners' old values to every replica
    std::vector<int> dims;
    for (int j = 0; j < t.rank(); ++j) dims.push_back(j);
    set(op.result(), exchangeViaShared(old, t, t, dims, "atomic old values to the replicas"));
    return;
  }
  const int bytes = dtypeBytes(t.dtype);
  Value* base = sharedBase(bytes, "atomic old value to every thread");
  Value* addr = sharedAddr(constI32(0), bytes, base);
  stShared(addr, old, owner);
  barrier();
  Value* r = ldShared(addr, t.dtype);
  barrier();
  set(op.result(), r);
}

void Lowerer::lowerDebugBarrier(const Op&) {
  barrier();
  userBarriers_.insert(b_.region()->ops.back().get());  // kept by dropTrailingBarriers
}

}  // namespace tl::lower
