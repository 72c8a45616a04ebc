// dce: dead-code elimination. Removes ops whose results are unused and that have no effect,
// and the values a `for` carries only to compute themselves.
//
// Expects: verified block IR.
// Guarantees: every store (and every for/if that contains one), return and yield is kept with
// everything it depends on; the result verifies. Everything else whose result is unused goes,
// including an unused `load` (as in Triton: a load has no effect the program can observe, so a
// load whose value is never used is removed — even one that would have read out of bounds), and
// an unused for/if without stores.
//
// Two steps, repeated until neither changes anything:
//   1. sweep: each region is walked backward (users before their operands), removing unused
//      removable ops and updating use counts, so a whole dead chain goes in one sweep;
//   2. dead carried values: in a `for`, carried value i is dead when result i is unused and the
//      body needs body argument i only to compute yield operand i (directly or through other
//      dead carried values). Found by a liveness fixpoint over the body's top-level ops; the
//      dead ops, yield operands, body arguments, init operands and results are then removed.
//
// Erasures are batched per region (PassUtils.h, DeferredEdits), so a sweep is linear.
#include <unordered_map>
#include <unordered_set>

#include "ir/Pass.h"
#include "ir/PassUtils.h"

namespace tl {

namespace {

using UseCounts = std::unordered_map<const Value*, size_t>;

UseCounts countAllUses(const Region& region) {
  UseCounts uses;
  walk(region, [&](Op& op) {
    for (const Value* v : op.operands) ++uses[v];
  });
  return uses;
}

bool unused(const Op& op, const UseCounts& uses) {
  for (const auto& r : op.results) {
    auto it = uses.find(r.get());
    if (it != uses.end() && it->second != 0) return false;
  }
  return true;
}

// Step 1. Walks `region` backward, erasing unused removable ops (and recursing into the regions
// of the ops it keeps). `uses` is kept up to date.
bool sweep(Region& region, UseCounts& uses) {
  bool changed = false;
  DeferredEdits edits;  // erasures only, applied once the region is done
  for (size_t i = region.ops.size(); i-- > 0;) {
    Op& op = *region.ops[i];
    if (isRemovableWhenUnused(op) && unused(op, uses)) {
      // The op and everything nested in it stop using their operands.
      for (const Value* v : op.operands) --uses[v];
      for (const auto& r : op.regions)
        walk(*r, [&](Op& inner) {
          for (const Value* v : inner.operands) --uses[v];
        });
      edits.erase(op);
      changed = true;
      continue;
    }
    for (auto& r : op.regions) changed |= sweep(*r, uses);
  }
  edits.compact(region);
  return changed;
}

// Every value `op` reads from outside itself: its operands and those of its nested ops.
void forEachUsedValue(const Op& op, const std::function<void(Value*)>& fn) {
  for (Value* v : op.operands) fn(v);
  for (const auto& r : op.regions) walk(*r, [&](Op& inner) {
    for (Value* v : inner.operands) fn(v);
  });
}

// Renumbers the `index` fields after values were removed from a list.
template <typename List>
void renumber(List& values) {
  for (size_t i = 0; i < values.size(); ++i) values[i]->index = static_cast<unsigned>(i);
}

// Step 2 for one `for` op: removes its dead carried values. Returns true when it removed any.
bool removeDeadCarried(Op& forOp, const UseCounts& uses) {
  Region& body = forOp.region(0);
  Op* yield = body.terminator();
  size_t n = forOp.numResults();
  if (n == 0 || !yield || yield->kind != OpKind::Yield || yield->numOperands() != n) return false;

  // Which body ops define which values (to go from a live value to its op).
  std::unordered_map<const Value*, size_t> definer;
  for (size_t i = 0; i < body.ops.size(); ++i)
    for (const auto& r : body.ops[i]->results) definer[r.get()] = i;

  // Liveness fixpoint. Roots: ops with effects (the yield is handled per operand). A live op
  // makes what it reads live; a live body argument i makes carried value i live, hence yield
  // operand i.
  std::vector<bool> liveCarried(n, false), liveOp(body.ops.size(), false);
  std::vector<Value*> work;
  auto markCarried = [&](size_t i) {
    if (liveCarried[i]) return;
    liveCarried[i] = true;
    work.push_back(yield->operand(i));
  };
  for (size_t i = 0; i < n; ++i) {
    auto it = uses.find(forOp.result(i));
    if (it != uses.end() && it->second > 0) markCarried(i);  // used after the loop
  }
  for (size_t i = 0; i + 1 < body.ops.size(); ++i)
    if (!isRemovableWhenUnused(*body.ops[i])) {
      liveOp[i] = true;
      forEachUsedValue(*body.ops[i], [&](Value* v) { work.push_back(v); });
    }
  while (!work.empty()) {
    Value* v = work.back();
    work.pop_back();
    if (v->owner == &body && v->index >= 1) {  // body argument: iv is 0, carried i is i+1
      markCarried(v->index - 1);
      continue;
    }
    auto it = definer.find(v);
    if (it == definer.end() || liveOp[it->second]) continue;  // defined outside, or done
    liveOp[it->second] = true;
    forEachUsedValue(*body.ops[it->second], [&](Value* u) { work.push_back(u); });
  }
  bool anyDead = false;
  for (size_t i = 0; i < n; ++i) anyDead |= !liveCarried[i];
  if (!anyDead) return false;

  // Remove the dead body ops (backward: users first), then the dead carried values.
  DeferredEdits edits;
  for (size_t i = 0; i + 1 < body.ops.size(); ++i)
    if (!liveOp[i]) edits.erase(*body.ops[i]);
  edits.compact(body);
  for (size_t i = n; i-- > 0;) {
    if (liveCarried[i]) continue;
    yield->operands.erase(yield->operands.begin() + static_cast<std::ptrdiff_t>(i));
    body.args.erase(body.args.begin() + static_cast<std::ptrdiff_t>(i + 1));
    forOp.operands.erase(forOp.operands.begin() + static_cast<std::ptrdiff_t>(3 + i));
    forOp.results.erase(forOp.results.begin() + static_cast<std::ptrdiff_t>(i));
  }
  renumber(body.args);
  renumber(forOp.results);
  return true;
}

// Step 2 over every `for` in `region` (inner loops first).
bool removeDeadCarriedAll(Region& region, const UseCounts& uses) {
  bool changed = false;
  for (auto& op : region.ops) {
    for (auto& r : op->regions) changed |= removeDeadCarriedAll(*r, uses);
    if (op->kind == OpKind::For && op->regions.size() == 1) changed |= removeDeadCarried(*op, uses);
  }
  return changed;
}

}  // namespace

bool dce(Function& fn) {
  bool changed = false;
  for (;;) {
    UseCounts uses = countAllUses(fn.body);
    bool swept = sweep(fn.body, uses);
    uses = countAllUses(fn.body);
    bool carried = removeDeadCarriedAll(fn.body, uses);
    if (!swept && !carried) break;
    changed = true;
  }
  return changed;
}

}  // namespace tl
