// pipeline-loads: software pipelining of a loop's loads, one iteration ahead (num_stages).
//
// Expects: verified block IR. Loops to pipeline carry the attribute num_stages >= 2: tl.range's
// hint, or the launch's num_stages, which the front end puts on every loop with a dot in its body.
// Guarantees: the result verifies and computes what the input did. In each such `for` whose step
// is a constant and whose body has no store, atomic, barrier, print or assertion (nothing a load
// moved earlier could pass), every load at the top level of the body whose pointer, mask and
// `other` are computed from the loop variable, the carried values and values from outside the
// loop by leaf, shape and elementwise ops only (no load, nothing with a region), and depend on the
// loop variable or a carried value, becomes a carried value:
//   1. before the loop: the load of the first iteration (loop variable lo, carried values their
//      inits), masked by lo < hi (a loop that runs no iteration reads nothing);
//   2. at the top of the body: the load of the next iteration (loop variable iv + step, carried
//      values this iteration's yielded ones, whose pure computations are moved up to it), masked
//      by iv + step < hi (> for a negative step), yielded to the next iteration;
//   3. the body reads the carried value where it read the load, and the load goes.
// So iteration i+1's global loads are in flight while iteration i computes (a GPU issues the
// loads and only waits at the first use). The loop gains one result per load, never used (DCE
// keeps it: the body reads the carried value). The loop's attribute pipelined_loads says how
// many loads were moved. num_stages > 2 is run as 2: one iteration ahead, in registers; a ring
// of num_stages - 1 shared-memory buffers filled by cp.async is not built (docs/performance.md).
#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "ir/Builder.h"
#include "ir/Pass.h"
#include "ir/PassUtils.h"

namespace tl {

namespace {

bool pureAddressOp(const Op& op) {
  const OpCategory c = op.info().category;
  return op.regions.empty() && (c == OpCategory::Leaf || c == OpCategory::Shape || c == OpCategory::Elementwise);
}

// Ops a load may not be moved across: anything that writes memory or orders it, or is seen.
bool blocksPipelining(const Op& op) {
  switch (op.kind) {
    case OpKind::Store:
    case OpKind::AtomicRMW:
    case OpKind::AtomicCAS:
    case OpKind::DebugBarrier:
    case OpKind::DevicePrint:
    case OpKind::DeviceAssert:
      return true;
    default:
      return false;
  }
}

class LoopPipeliner {
 public:
  explicit LoopPipeliner(Op& loop) : loop_(loop), body_(loop.region(0)), yield_(*body_.terminator()) {}

  bool run() {
    const auto stages = loop_.attr("num_stages");
    if (!stages || !std::holds_alternative<int64_t>(*stages) || std::get<int64_t>(*stages) < 2) return false;
    if (loop_.hasAttr("pipelined_loads")) return false;
    auto step = constantOf(loop_.operand(2));
    if (!step || step->i == 0) return false;
    bool blocked = false;
    walk(body_, [&](Op& op) { blocked |= blocksPipelining(op); });
    if (blocked) return false;

    std::vector<Op*> loads;
    for (const auto& op : body_.ops)
      if (op->kind == OpKind::Load && candidate(*op)) loads.push_back(op.get());
    if (loads.empty()) return false;

    hoistNextValues(loads);
    Region& outer = *loop_.parent;
    size_t at = 0;
    while (outer.ops[at].get() != &loop_) ++at;

    // 1. the first iteration's loads, before the loop.
    Builder pre;
    pre.setInsertionPoint(&outer, at);
    pre.setLoc(loop_.loc);
    Value* runsAtAll = pre.cmp(step->i > 0 ? "lt" : "gt", loop_.operand(0), loop_.operand(1));
    std::unordered_map<const Value*, Value*> first{{body_.arg(0), loop_.operand(0)}};
    for (size_t j = 1; j < body_.args.size(); ++j) first[body_.arg(j)] = loop_.operand(j + 2);
    std::vector<Value*> firstLoads;
    for (Op* l : loads) firstLoads.push_back(cloneLoad(pre, *l, first, runsAtAll));

    // 2. the next iteration's loads, at the top of the body after the hoisted values.
    Builder in;
    in.setInsertionPoint(&body_, hoisted_);
    in.setLoc(loop_.loc);
    Value* ivNext = in.binary(OpKind::Add, body_.arg(0), loop_.operand(2));
    Value* hasNext = in.cmp(step->i > 0 ? "lt" : "gt", ivNext, loop_.operand(1));
    std::unordered_map<const Value*, Value*> next{{body_.arg(0), ivNext}};
    for (size_t j = 1; j < body_.args.size(); ++j) next[body_.arg(j)] = yield_.operand(j - 1);
    std::vector<Value*> nextLoads;
    for (Op* l : loads) nextLoads.push_back(cloneLoad(in, *l, next, hasNext));

    // 3. carried: the body reads the carried value, the loop yields the next one.
    DeferredEdits edits;
    for (size_t k = 0; k < loads.size(); ++k) {
      Value* carried = body_.addArg(loads[k]->result()->type, loads[k]->result()->name);
      loop_.operands.push_back(firstLoads[k]);
      loop_.addResult(loads[k]->result()->type, loads[k]->result()->name);
      yield_.operands.push_back(nextLoads[k]);
      edits.replaceOp(*loads[k], carried);
    }
    walk(body_, [&](Op& op) { edits.remapOperands(op); });
    edits.compact(body_);
    loop_.setAttr("pipelined_loads", Attr(int64_t(loads.size())));
    return true;
  }

 private:
  // A body value computable from the loop variable, carried values and outside values by pure
  // ops; `varies` is set when it depends on the loop variable or a carried value. Memoized: the
  // operands form a DAG, which a plain recursion could walk exponentially often.
  bool pure(const Value* v, bool& varies) {
    if (auto it = pureMemo_.find(v); it != pureMemo_.end()) {
      varies |= it->second.second;
      return it->second.first;
    }
    bool own = false, ok = true;
    if (v->isRegionArg()) {
      own = v->owner == &body_;
    } else if (v->def->parent != &body_) {
      ok = !inBody(v->def);  // outside the loop, or nested inside it
    } else if (!pureAddressOp(*v->def)) {
      ok = false;
    } else {
      for (const Value* o : v->def->operands)
        if (!(ok = pure(o, own))) break;
    }
    pureMemo_[v] = {ok, own};
    varies |= own;
    return ok;
  }

  bool inBody(const Op* op) const {
    for (const Region* r = op->parent; r; r = r->parentOp ? r->parentOp->parent : nullptr)
      if (r == &body_) return true;
    return false;
  }

  // The load can be issued one iteration early: its operands are pure and vary, and every
  // carried value they read has a pure next value.
  bool candidate(const Op& load) {
    bool varies = false;
    for (const Value* o : load.operands)
      if (!pure(o, varies)) return false;
    if (!varies) return false;
    std::unordered_set<const Value*> args;
    visited_.clear();
    for (const Value* o : load.operands) argsReadBy(o, args);
    for (const Value* a : args) {
      if (a == body_.arg(0)) continue;
      bool unused = false;
      if (!pure(yield_.operand(a->index - 1), unused)) return false;
    }
    return true;
  }

  void argsReadBy(const Value* v, std::unordered_set<const Value*>& args) {
    if (v->isRegionArg()) {
      if (v->owner == &body_) args.insert(v);
      return;
    }
    if (v->def->parent != &body_ || !visited_.insert(v).second) return;
    for (const Value* o : v->def->operands) argsReadBy(o, args);
  }

  // Marks the body ops that compute `v` (pure ones: candidate() checked).
  void markSlice(const Value* v, std::unordered_set<const Op*>& marked) const {
    if (v->isRegionArg() || v->def->parent != &body_ || !marked.insert(v->def).second) return;
    for (const Value* o : v->def->operands) markSlice(o, marked);
  }

  // Moves the ops computing the next values of the carried values the loads read to the top of
  // the body, in their order (pure ops over the body's arguments: moving them up is exact).
  void hoistNextValues(const std::vector<Op*>& loads) {
    std::unordered_set<const Value*> args;
    visited_.clear();
    for (const Op* l : loads)
      for (const Value* o : l->operands) argsReadBy(o, args);
    std::unordered_set<const Op*> marked;
    for (const Value* a : args)
      if (a != body_.arg(0)) markSlice(yield_.operand(a->index - 1), marked);
    std::stable_partition(body_.ops.begin(), body_.ops.end(), [&](const std::unique_ptr<Op>& op) { return marked.count(op.get()) != 0; });
    hoisted_ = marked.size();
  }

  // The load (and the pure ops computing its operands) with the body's arguments read through
  // `map`, masked by `cond`, built at `b`'s insertion point.
  Value* cloneLoad(Builder& b, const Op& load, std::unordered_map<const Value*, Value*> map, Value* cond) {
    std::vector<Value*> ops;
    for (const Value* o : load.operands) ops.push_back(cloneValue(b, o, map));
    b.setLoc(load.loc);
    Value* ptr = ops[0];
    Value* guard = ptr->type.isTile() ? b.splat(cond, ptr->type.shape) : cond;
    Value* mask = ops.size() > 1 ? b.binary(OpKind::And, ops[1], guard) : guard;
    Value* v = ops.size() > 2 ? b.load(ptr, mask, ops[2]) : b.load(ptr, mask);
    v->def->attrs = load.attrs;
    v->name = load.result()->name;
    return v;
  }

  Value* cloneValue(Builder& b, const Value* v, std::unordered_map<const Value*, Value*>& map) {
    if (auto it = map.find(v); it != map.end()) return it->second;
    if (v->isRegionArg() || v->def->parent != &body_) return const_cast<Value*>(v);
    const Op& op = *v->def;
    std::vector<Value*> operands;
    for (const Value* o : op.operands) operands.push_back(cloneValue(b, o, map));
    std::vector<Type> types;
    for (const auto& r : op.results) types.push_back(r->type);
    b.setLoc(op.loc);
    Op* c = b.create(op.kind, operands, types, op.attrs);
    for (size_t i = 0; i < op.results.size(); ++i) {
      c->result(i)->name = op.result(i)->name;
      map[op.result(i)] = c->result(i);
    }
    return map.at(v);
  }

  Op& loop_;
  Region& body_;
  Op& yield_;
  std::unordered_map<const Value*, std::pair<bool, bool>> pureMemo_;  // pure(v), and whether it varies
  std::unordered_set<const Value*> visited_;                         // one argsReadBy walk's values
  size_t hoisted_ = 0;
};

}  // namespace

bool pipelineLoads(Function& fn) {
  // Inner loops first: an outer loop then sees an inner loop's first-iteration loads as its own.
  bool changed = false;
  for (Op* loop : forLoopsInnermostFirst(fn.body)) changed |= LoopPipeliner(*loop).run();
  return changed;
}

}  // namespace tl
