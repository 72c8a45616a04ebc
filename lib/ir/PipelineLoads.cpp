// pipeline-loads: software pipelining of a loop's loads, issued iterations ahead (num_stages).
//
// Expects: verified block IR. Loops to pipeline carry the attribute num_stages >= 2: tl.range's
// hint, or the launch's num_stages, which the front end puts on every loop with a dot in its body.
// Guarantees: the result verifies and computes what the input did. In each such `for` whose step
// is a constant and whose body has no store, atomic, barrier, print or assertion (nothing a load
// moved earlier could pass), every load at the top level of the body whose pointer, mask and
// `other` are computed from the loop variable, the carried values and values from outside the
// loop by leaf, shape and elementwise ops only (no load, nothing with a region), and depend on the
// loop variable or a carried value, is issued A iterations ahead: A = num_stages - 1 for a load
// whose only uses are operand a or b of a dot on tensor cores (16-bit floats, fp8, or f32 in
// precision tf32) or of a 2-D f32 dot on FMAs (the thread lowering copies it into a ring of
// shared-memory slots, stages/thread/LowerRing.cpp), else 1.
// The load becomes A carried values:
//   1. before the loop: the loads of iterations 0 .. A-1 (loop variable lo + s step, the
//      carried values as s iterations' yields make them, cloned), each masked by its
//      iteration's lo + s step < hi (a loop that runs fewer iterations reads nothing more),
//      iteration by iteration;
//   2. at the top of the body: the load of iteration i + A (loop variable iv + A step, carried
//      values A yields on, whose pure computations are moved up to it or cloned), masked by
//      iv + A step < hi (> for a negative step);
//   3. the body reads the first carried value where it read the load, yields the second ..
//      the A-th, and last the new load; the load goes.
// So the next iterations' global loads are in flight while iteration i computes (a GPU issues the
// loads and only waits at the first use). The loop gains A results per load, never used (DCE
// keeps them: the body reads the carried values). The loop's attribute pipelined_loads says how
// many loads were moved.
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
    const int64_t S = std::get<int64_t>(*stages);
    std::vector<int64_t> ahead;  // per load: how many iterations ahead it is issued
    int64_t maxAhead = 1;
    for (const Op* l : loads) {
      ahead.push_back(feedsRingDot(*l) ? S - 1 : 1);
      maxAhead = std::max(maxAhead, ahead.back());
    }
    Region& outer = *loop_.parent;
    size_t at = 0;
    while (outer.ops[at].get() != &loop_) ++at;

    // 1. the first iterations' loads, before the loop: iteration s (s = 0 .. ahead - 1) with the
    // loop variable lo + s step and the carried values as the yields of s iterations make them.
    Builder pre;
    pre.setInsertionPoint(&outer, at);
    pre.setLoc(loop_.loc);
    std::vector<std::vector<Value*>> firstLoads(loads.size());
    std::unordered_map<const Value*, Value*> first{{body_.arg(0), loop_.operand(0)}};
    for (size_t j = 1; j < body_.args.size(); ++j) first[body_.arg(j)] = loop_.operand(j + 2);
    for (int64_t s = 0; s < maxAhead; ++s) {
      if (s > 0) {
        first = advance(pre, first);
        first[body_.arg(0)] = pre.binary(OpKind::Add, first.at(body_.arg(0)), loop_.operand(2));
      }
      Value* runs = pre.cmp(step->i > 0 ? "lt" : "gt", first.at(body_.arg(0)), loop_.operand(1));
      for (size_t k = 0; k < loads.size(); ++k)
        if (s < ahead[k]) firstLoads[k].push_back(cloneLoad(pre, *loads[k], first, runs));
    }

    // 2. the loads of iteration i + ahead, at the top of the body after the hoisted values.
    Builder in;
    in.setInsertionPoint(&body_, hoisted_);
    in.setLoc(loop_.loc);
    std::vector<Value*> nextLoads(loads.size());
    std::unordered_map<const Value*, Value*> next{{body_.arg(0), body_.arg(0)}};
    for (size_t j = 1; j < body_.args.size(); ++j) next[body_.arg(j)] = body_.arg(j);
    for (int64_t s = 1; s <= maxAhead; ++s) {
      if (s == 1) {
        for (size_t j = 1; j < body_.args.size(); ++j) next[body_.arg(j)] = yield_.operand(j - 1);
      } else {
        next = advance(in, next);
      }
      next[body_.arg(0)] = in.binary(OpKind::Add, next.at(body_.arg(0)), loop_.operand(2));
      Value* has = in.cmp(step->i > 0 ? "lt" : "gt", next.at(body_.arg(0)), loop_.operand(1));
      for (size_t k = 0; k < loads.size(); ++k)
        if (s == ahead[k]) nextLoads[k] = cloneLoad(in, *loads[k], next, has);
    }

    // 3. carried: a load issued `ahead` iterations early is `ahead` carried values, the first
    // read by the body; each yields the next, the last the new load.
    DeferredEdits edits;
    for (size_t k = 0; k < loads.size(); ++k) {
      std::vector<Value*> chain;
      for (int64_t s = 0; s < ahead[k]; ++s) {
        chain.push_back(body_.addArg(loads[k]->result()->type, loads[k]->result()->name));
        loop_.operands.push_back(firstLoads[k][size_t(s)]);
        loop_.addResult(loads[k]->result()->type, loads[k]->result()->name);
      }
      for (int64_t s = 1; s < ahead[k]; ++s) yield_.operands.push_back(chain[size_t(s)]);
      yield_.operands.push_back(nextLoads[k]);
      edits.replaceOp(*loads[k], chain[0]);
    }
    walk(body_, [&](Op& op) { edits.remapOperands(op); });
    edits.compact(body_);
    loop_.setAttr("pipelined_loads", Attr(int64_t(loads.size())));
    return true;
  }

 private:
  // Each use of the load is a or b of a dot on tensor cores (16-bit floats, fp8, or f32 in
  // precision tf32 or tf32x3) or a 2-D f32 dot on FMAs, where the thread lowering can copy such a
  // load straight to shared memory (LowerRing.cpp).
  bool feedsRingDot(const Op& load) const {
    bool any = false, other = false;
    const Value* v = load.result();
    walk(loop_.region(0), [&](Op& op) {
      for (size_t i = 0; i < op.operands.size(); ++i) {
        if (op.operand(i) != v) continue;
        const bool dotOperand = op.kind == OpKind::Dot && i < 2 && op.parent == &body_;
        const DType d = v->type.dtype;
        const std::string* precision = dotOperand ? op.strAttrIf("precision") : nullptr;
        const bool tf32 = d == DType::F32 && precision && (*precision == "tf32" || *precision == "tf32x3");
        const bool fma2d = d == DType::F32 && v->type.rank() == 2;
        if (dotOperand && (d == DType::F16 || d == DType::BF16 || isFp8(d) || tf32 || fma2d)) any = true;
        else other = true;
      }
    });
    return any && !other;
  }

  // The carried values one iteration on: each body argument the loads read mapped through its
  // yield (pure ops, cloned at `b` over `map`); the loop variable is left to the caller.
  std::unordered_map<const Value*, Value*> advance(Builder& b, std::unordered_map<const Value*, Value*> map) {
    std::unordered_map<const Value*, Value*> out{{body_.arg(0), map.at(body_.arg(0))}};
    for (const Value* a : readArgs_)
      if (a != body_.arg(0)) out[a] = cloneValue(b, yield_.operand(a->index - 1), map);
    for (size_t j = 1; j < body_.args.size(); ++j)
      if (!out.count(body_.arg(j))) out[body_.arg(j)] = map.at(body_.arg(j));  // not read by a load: unchanged
    return out;
  }

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
    std::unordered_set<const Value*>& args = readArgs_;
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
  std::unordered_set<const Value*> readArgs_;                        // the body arguments the loads read
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
