// licm: loop-invariant code motion over `for` bodies (run on thread IR after the lowering).
//
// Expects: verified IR of either level.
// Guarantees: the result verifies and computes what the input did. An op at the top level of a
// `for` body moves to just before the loop when it is pure — a leaf, shape or elementwise op
// without regions, not a division or remainder by a value that is not a nonzero constant (moved
// out of a loop that runs no iteration it must not trap) — and every operand is defined outside
// the body or by an op that moves. Inner loops go first, so an op invariant in two nested loops
// leaves both. The moved ops keep their order and their source locations.
//
// Why: the lowerings build each block op's index math where the op is (the thread's coordinates,
// a dot's staging addresses), so inside a loop it is rebuilt every iteration. LLVM hoists it on
// the GPU; doing it here makes the thread IR — what tl-thread prints, the executor runs and
// tl-sim times — do the same work per iteration as the PTX.
#include <unordered_set>

#include "ir/Pass.h"
#include "ir/PassUtils.h"

namespace tl {

namespace {

bool hoistable(const Op& op) {
  const OpCategory c = op.info().category;
  if (!op.regions.empty() || (c != OpCategory::Leaf && c != OpCategory::Shape && c != OpCategory::Elementwise)) return false;
  if (op.kind == OpKind::Div || op.kind == OpKind::Rem) {
    auto d = constantOf(op.operand(1), true);
    return d && (isFloat(d->dtype) ? d->f != 0.0 : d->i != 0);
  }
  return true;
}

bool hoistFrom(Op& loop) {
  Region& body = loop.region(0);
  std::unordered_set<const Value*> inside;  // the body's arguments and the results of ops that stay
  for (const auto& a : body.args) inside.insert(a.get());
  std::vector<std::unique_ptr<Op>> kept, moved;
  for (auto& op : body.ops) {
    bool invariant = hoistable(*op);
    for (const Value* v : op->operands) invariant = invariant && !inside.count(v);
    if (!invariant)
      for (const auto& r : op->results) inside.insert(r.get());
    (invariant ? moved : kept).push_back(std::move(op));
  }
  body.ops = std::move(kept);
  if (moved.empty()) return false;
  Region& outer = *loop.parent;
  size_t at = 0;
  while (outer.ops[at].get() != &loop) ++at;
  for (auto& op : moved) op->parent = &outer;
  outer.ops.insert(outer.ops.begin() + static_cast<std::ptrdiff_t>(at), std::make_move_iterator(moved.begin()),
                   std::make_move_iterator(moved.end()));
  return true;
}

}  // namespace

bool hoistLoopInvariants(Function& fn) {
  bool changed = false;
  for (Op* loop : forLoopsInnermostFirst(fn.body)) changed |= hoistFrom(*loop);
  return changed;
}

}  // namespace tl
