// Lowering of structured control flow: for, if and while keep their structure; the values they
// carry become the thread's registers.
//
// Expects: for (lo, hi, step: uniform scalars; inits), if (uniform i1 condition) and while
// (inits; a cond region ending in a uniform i1 `condition`, a body yielding the next values), with
// carried / yielded tiles in layouts that agree (the verifier's rule: types are equal).
// Guarantees: the same op at thread level, with every carried tile's type lowered to its
// register vector; the body / branches are lowered in place. Bounds and conditions are
// uniform (block-IR scalars are the same in every thread), so the threads of a block never
// diverge on these and every barrier inside is reached by all of them. A while's condition is
// a block-IR scalar too: every thread leaves the loop at the same iteration.
#include <algorithm>

#include "thread/LowerCommon.h"

namespace tl::lower {

void Lowerer::lowerFor(const Op& op) {
  // A loop with load rings (LowerRing.cpp) carries a slot counter in place of the rings' values.
  LoopRings* rings = ringsOf(op);
  std::vector<char> inRing(op.region(0).args.size(), 0);
  if (rings)
    for (const Ring& r : rings->rings)
      for (size_t c : r.chain) inRing[c] = 1;
  std::vector<Value*> inits;
  for (size_t i = 3; i < op.numOperands(); ++i)
    if (!inRing[i - 2]) inits.push_back(get(op.operand(i)));
  if (rings) inits.push_back(constI32(0));
  Op* loop = b_.forOp(get(op.operand(0)), get(op.operand(1)), get(op.operand(2)), inits);
  const Region& from = op.region(0);
  Region& to = loop->region(0);
  size_t t = 0;
  for (size_t i = 0; i < from.args.size(); ++i)
    if (!inRing[i]) set(from.arg(i), to.arg(t++));
  if (rings) {
    rings->slot = to.arg(t);
    rings->slot->name = "slot";
    rings->deferred.clear();
    rings->issued = false;
  }
  int64_t nested = 0;
  walk(from, [&](Op&) { ++nested; });
  loops_.push_back({&op, loop, curIndex_, curIndex_ + nested});
  lowerRegion(from, to);
  loops_.pop_back();
  t = 0;
  for (size_t i = 0; i < op.numResults(); ++i)
    if (!inRing[i + 1]) set(op.result(i), loop->result(t++));
  if (rings) {  // LowerRing.cpp's 5: nothing in flight after the loop
    if (!rings->inFlightDots.empty()) {  // the wait hands on the accumulators the loop's last wgmmas write
      std::vector<Value*> accs;
      std::vector<Type> types;
      for (const Op* dot : rings->inFlightDots) {
        accs.push_back(get(op.result(dot->operand(2)->index - 1)));
        types.push_back(accs.back()->type);
      }
      Op* wait = b_.create(OpKind::WgmmaWait, accs, types, {{"pending", int64_t(0)}});
      for (size_t k = 0; k < accs.size(); ++k) set(op.result(rings->inFlightDots[k]->operand(2)->index - 1), wait->result(k));
    }
    b_.create(OpKind::CpAsyncWait, {}, {}, {{"pending", int64_t(0)}});
    barrier();
    for (const Ring& r : rings->rings)
      if (r.base) buffers_[r.buffer].lastOp = std::max(buffers_[r.buffer].lastOp, curIndex_ + nested);
  }
}

void Lowerer::lowerYield(const Op& op) {
  const Op* owner = op.parent ? op.parent->parentOp : nullptr;
  LoopRings* rings = owner && owner->kind == OpKind::For ? ringsOf(*owner) : nullptr;
  std::vector<Value*> vals;
  for (size_t k = 0; k < op.numOperands(); ++k) {
    bool ring = false;
    if (rings)
      for (const Ring& r : rings->rings) ring = ring || std::count(r.chain.begin(), r.chain.end(), k + 1);
    if (!ring) vals.push_back(get(op.operand(k)));
  }
  if (rings) vals.push_back(slotIndexAhead(*rings, 1));
  b_.yield(vals);
}

const Lowerer::LoopFrame* Lowerer::enclosingLoop(const Op& op) const {
  if (loops_.empty() || op.parent != &loops_.back().blockFor->region(0)) return nullptr;
  return &loops_.back();
}

bool Lowerer::definedOutside(const Value* v, const Op& loop) {
  for (const Region* r = v->isRegionArg() ? v->owner : v->def->parent; r; r = r->parentOp ? r->parentOp->parent : nullptr)
    if (r->parentOp == &loop) return false;
  return true;
}

void Lowerer::lowerIf(const Op& op) {
  std::vector<Type> types;
  for (const auto& r : op.results) types.push_back(lowerType(r->type));
  Op* branch = b_.ifOp(get(op.operand(0)), types);
  lowerRegion(op.region(0), branch->region(0));
  lowerRegion(op.region(1), branch->region(1));
  for (size_t i = 0; i < op.numResults(); ++i) set(op.result(i), branch->result(i));
}

void Lowerer::lowerWhile(const Op& op) {
  std::vector<Value*> inits;
  for (Value* v : op.operands) inits.push_back(get(v));
  Op* loop = b_.whileOp(inits);
  for (size_t r = 0; r < 2; ++r) {
    const Region& from = op.region(r);
    Region& to = loop->region(r);
    for (size_t i = 0; i < from.args.size(); ++i) {
      to.arg(i)->name = from.arg(i)->name;
      set(from.arg(i), to.arg(i));
    }
    lowerRegion(from, to);
  }
  for (size_t i = 0; i < op.numResults(); ++i) set(op.result(i), loop->result(i));
}

}  // namespace tl::lower
