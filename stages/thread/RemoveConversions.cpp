// remove-conversions: drop the layout conversions that are not needed (Triton's
// RemoveLayoutConversions, simplified).
//
// Expects: verified block IR with layouts (assign-layouts' output).
// Guarantees: the same values are computed; every remaining convert_layout converts a value that
// is expensive to recompute (a load, a reduction, a dot, a loop-carried value, or arithmetic on
// those) into a layout it does not already have, at most once per (value, layout), placed right
// after the value's definition (so a conversion of a loop-invariant value is not repeated every
// iteration); the IR verifies.
//
// For each convert_layout x -> L, in program order:
//   1. chains: convert(convert(y)) reads y directly;
//   2. identity: x already has layout L -> uses read x;
//   3. rematerialization: if x is computed only from cheap ops — arange, constants, splats of
//      scalars, broadcast / expand_dims / trans of those, elementwise ops on those — the whole slice is
//      recomputed in layout L (each cloned op right after its original), instead of moving the
//      elements through shared memory;
//   4. otherwise one conversion per (x, L) remains, hoisted next to x's definition.
// Ops left unused by this (the originals of rematerialized slices, merged conversions) are
// erased. Triton also moves conversions forward past elementwise ops and out of loops in more
// cases; the conversions left in kernels/ are where two memory anchors genuinely disagree.
#include <functional>
#include <unordered_map>
#include <unordered_set>

#include "ir/Builder.h"
#include "ir/Verifier.h"  // transOrder
#include "thread/Layouts.h"

namespace tl {

namespace {

bool sameLayout(const LayoutPtr& a, const LayoutPtr& b) { return a && b && *a == *b; }

// The ops rematerialization may clone.
bool isCheapKind(const Op& op) {
  switch (op.kind) {
    case OpKind::Arange: case OpKind::Constant: case OpKind::Splat: case OpKind::Broadcast:
    case OpKind::ExpandDims: case OpKind::ConvertLayout: case OpKind::Trans:
      return true;
    case OpKind::AddPtr:
      return true;
    default:
      return op.info().category == OpCategory::Elementwise && op.numResults() == 1;
  }
}

constexpr int kMaxRematOps = 64;  // a slice larger than this is converted, not recomputed

class Remover {
 public:
  explicit Remover(Function& fn) : fn_(fn) {}

  bool run() {
    std::vector<Op*> converts;
    walk(fn_.body, [&](Op& op) {
      if (op.kind == OpKind::ConvertLayout) converts.push_back(&op);
    });
    for (Op* c : converts) process(*c);
    if (!replaced_.empty()) {
      // Uses of removed conversions read their replacements (following chains).
      walk(fn_.body, [&](Op& op) {
        for (auto& v : op.operands) v = resolve(v);
      });
    }
    changed_ |= eraseDead();
    return changed_;
  }

 private:
  Function& fn_;
  bool changed_ = false;
  std::unordered_map<const Value*, Value*> replaced_;                 // convert result -> value
  std::map<std::pair<const Value*, std::string>, Value*> inLayout_;  // (value, layout) -> value in it
  std::unordered_map<const Value*, Value*> cloneOf_;                  // rematerialized clone -> original

  Value* resolve(Value* v) const {
    for (auto it = replaced_.find(v); it != replaced_.end(); it = replaced_.find(v)) v = it->second;
    return v;
  }
  Value* resolve(const Value* v) const { return resolve(const_cast<Value*>(v)); }

  // The original value `v` holds the elements of, in whatever layout: through removed
  // conversions, clones and conversion chains (convert(convert(y)) holds y's elements).
  Value* origin(const Value* cv) const {
    Value* v = const_cast<Value*>(cv);
    for (;;) {
      if (auto it = replaced_.find(v); it != replaced_.end()) v = it->second;
      else if (auto jt = cloneOf_.find(v); jt != cloneOf_.end()) v = jt->second;
      else if (v->def && v->def->kind == OpKind::ConvertLayout) v = v->def->operand(0);
      else return v;
    }
  }

  void process(Op& c) {
    Value* src = origin(c.operand(0));  // 1. chains
    const LayoutPtr& target = c.result()->type.layout;
    Value* to = nullptr;
    if (sameLayout(src->type.layout, target)) {
      to = src;  // 2. identity
    } else if (auto it = inLayout_.find({src, target->str()}); it != inLayout_.end()) {
      to = it->second;  // already available (an earlier conversion or rematerialization)
    } else if (int n = 0; cheap(src, n) && rematOk(src, target)) {
      to = rematerialize(src, target);  // 3.
    } else {
      keepConversion(c, src);  // 4.
      inLayout_[{src, target->str()}] = c.result();
      return;
    }
    replaced_[c.result()] = to;
    changed_ = true;
  }

  // Can rematerialize(v, l) give every cloned op a layout? A trans needs a blocked one (its
  // operand's is the inverse permutation of it), e.g. not the slice of a rank-3 reduction.
  bool rematOk(const Value* v, const LayoutPtr& l) const {
    if (!v->type.isTile() || sameLayout(v->type.layout, l)) return true;
    const Op& d = *v->def;
    if (d.kind == OpKind::Trans && l->kind() != Layout::Kind::Blocked) return false;
    for (const Value* o : d.operands) {
      const Value* src = origin(o);
      if (!src->type.isTile()) continue;
      LayoutPtr lo = d.kind == OpKind::ExpandDims ? Layout::slice(static_cast<int>(d.intAttr("axis")), l)
                     : d.kind == OpKind::Trans   ? permutedLayout(*l, inversePermutation(transOrder(d)))
                                                 : l;
      if (!rematOk(src, lo)) return false;
    }
    return true;
  }

  static std::vector<int> inversePermutation(const std::vector<int>& order) {
    std::vector<int> inv(order.size());
    for (size_t j = 0; j < order.size(); ++j) inv[static_cast<size_t>(order[j])] = static_cast<int>(j);
    return inv;
  }

  // Is `v` computed from cheap ops only (counting them in `n`)? Scalars are free.
  bool cheap(const Value* v, int& n) const {
    if (!v->type.isTile()) return true;
    if (!v->def || !isCheapKind(*v->def) || ++n > kMaxRematOps) return false;
    for (const Value* o : v->def->operands)
      if (!cheap(origin(o), n)) return false;
    return true;
  }

  // Clones the cheap slice computing `v` so that it produces layout `l`.
  Value* rematerialize(Value* v, const LayoutPtr& l) {
    if (sameLayout(v->type.layout, l)) return v;
    auto key = std::make_pair(static_cast<const Value*>(v), l->str());
    if (auto it = inLayout_.find(key); it != inLayout_.end()) return it->second;
    Op& d = *v->def;
    std::vector<Value*> operands;
    for (Value* o : d.operands) {
      o = o->type.isTile() ? origin(o) : resolve(o);
      if (!o->type.isTile()) operands.push_back(o);
      else if (d.kind == OpKind::ExpandDims)
        operands.push_back(rematerialize(o, Layout::slice(static_cast<int>(d.intAttr("axis")), l)));
      else if (d.kind == OpKind::Trans)
        operands.push_back(rematerialize(o, permutedLayout(*l, inversePermutation(transOrder(d)))));  // l: blocked (rematOk)
      else
        operands.push_back(rematerialize(o, l));  // broadcast and elementwise keep the layout
    }
    Region* region = d.parent;
    size_t at = indexOf(*region, d) + 1;
    Builder b(region);
    b.setInsertionPoint(region, at);
    b.setLoc(d.loc);
    Value* clone = b.create(d.kind, operands, {v->type.withLayout(l)}, d.attrs)->result();
    clone->name = v->name;
    cloneOf_[clone] = v;
    return inLayout_[key] = clone;
  }

  static size_t indexOf(const Region& r, const Op& op) {
    size_t i = 0;
    while (r.ops[i].get() != &op) ++i;
    return i;
  }

  // Keeps conversion `c` of `src`, hoisting it next to src's definition when it sits in a
  // region nested deeper (e.g. a loop body converting a value computed before the loop).
  void keepConversion(Op& c, Value* src) {
    if (c.operand(0) != src) {
      c.operands[0] = src;
      changed_ = true;
    }
    Region* home = src->def ? src->def->parent : src->owner;
    if (c.parent == home) return;
    size_t at = src->def ? indexOf(*home, *src->def) + 1 : 0;
    Region* from = c.parent;
    size_t i = indexOf(*from, c);
    std::unique_ptr<Op> moved = std::move(from->ops[i]);
    from->ops.erase(from->ops.begin() + static_cast<std::ptrdiff_t>(i));
    moved->parent = home;
    home->ops.insert(home->ops.begin() + static_cast<std::ptrdiff_t>(at), std::move(moved));
    changed_ = true;
  }

  // Erases cheap ops and conversions nobody uses any more, until none is left.
  bool eraseDead() {
    bool any = false;
    for (bool again = true; again;) {
      again = false;
      std::unordered_map<const Value*, size_t> uses;
      walk(fn_.body, [&](Op& op) {
        for (const Value* v : op.operands) ++uses[v];
      });
      std::function<void(Region&)> sweep = [&](Region& r) {
        for (size_t i = r.ops.size(); i-- > 0;) {
          Op& op = *r.ops[i];
          for (auto& sub : op.regions) sweep(*sub);
          if (isCheapKind(op) && op.numResults() == 1 && uses[op.result()] == 0) {
            r.ops.erase(r.ops.begin() + static_cast<std::ptrdiff_t>(i));
            again = any = true;
          }
        }
      };
      sweep(fn_.body);
    }
    return any;
  }
};

}  // namespace

bool removeConversions(Function& fn) { return Remover(fn).run(); }

}  // namespace tl
