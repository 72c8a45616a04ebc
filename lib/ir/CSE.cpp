// cse: common-subexpression elimination. Two side-effect-free ops of the same kind, with the
// same operands (the same Value*s), the same attributes and the same result types compute the
// same values, so the later one is replaced by the earlier one.
//
// Expects: verified block IR.
// Guarantees: an op is only replaced by one that dominates it: an earlier op of the same region,
// or an op of an enclosing region (a scoped hash table: entering a for body or an if branch
// pushes a scope, leaving it pops the scope, so ops are never shared between sibling regions
// and an op inside a loop is never reused outside it). load, store, for, if, yield and return
// are never merged: a load may read memory that a store changed in between.
//
// Attributes are compared bit for bit, so the constants 0.0 and -0.0 stay two constants.
#include <cstring>
#include <unordered_map>

#include "ir/Pass.h"
#include "ir/PassUtils.h"

namespace tl {

namespace {

// Ops CSE may merge: everything with no memory effect, no regions and no control role.
bool isMergeable(const Op& op) {
  OpCategory c = op.info().category;
  return c != OpCategory::Memory && c != OpCategory::Control && c != OpCategory::Terminator &&
         op.regions.empty() && op.numResults() > 0;
}

// Exact equality of attributes: doubles compare by bit pattern (0.0 vs -0.0, NaN == NaN).
bool sameAttr(const Attr& a, const Attr& b) {
  if (a.index() != b.index()) return false;
  if (const double* x = std::get_if<double>(&a)) {
    double y = std::get<double>(b);
    return std::memcmp(x, &y, sizeof(double)) == 0;
  }
  return a == b;
}

bool sameOp(const Op& a, const Op& b) {
  if (a.kind != b.kind || a.operands != b.operands || a.attrs.size() != b.attrs.size() ||
      a.numResults() != b.numResults())
    return false;
  for (size_t i = 0; i < a.attrs.size(); ++i)
    if (a.attrs[i].name != b.attrs[i].name || !sameAttr(a.attrs[i].value, b.attrs[i].value)) return false;
  for (size_t i = 0; i < a.numResults(); ++i)
    if (a.result(i)->type != b.result(i)->type) return false;
  return true;
}

// A hash consistent with sameOp (it may collide; sameOp decides).
size_t hashOp(const Op& op) {
  size_t h = std::hash<int>()(static_cast<int>(op.kind));
  auto mix = [&](size_t v) { h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2); };
  for (const Value* v : op.operands) mix(std::hash<const void*>()(v));
  for (const auto& a : op.attrs) mix(std::hash<std::string>()(a.name));
  return h;
}

class ScopedCSE {
 public:
  bool run(Region& region) {
    scopes_.emplace_back();
    bool changed = false;
    for (auto& opPtr : region.ops) {
      Op& op = *opPtr;
      edits_.remapOperands(op);  // uses of merged ops now read the earlier op
      for (auto& r : op.regions) changed |= run(*r);  // one scope per nested region
      if (!isMergeable(op)) continue;
      size_t h = hashOp(op);
      if (Op* earlier = lookup(op, h)) {
        for (size_t k = 0; k < op.numResults(); ++k) edits_.replaceValue(op.result(k), earlier->result(k));
        edits_.erase(op);
        changed = true;
      } else {
        scopes_.back().emplace(h, &op);
      }
    }
    edits_.compact(region);
    scopes_.pop_back();
    return changed;
  }

 private:
  // An earlier op equal to `op` in this scope or an enclosing one (innermost first).
  Op* lookup(const Op& op, size_t h) const {
    for (auto s = scopes_.rbegin(); s != scopes_.rend(); ++s) {
      auto [lo, hi] = s->equal_range(h);
      for (auto it = lo; it != hi; ++it)
        if (sameOp(*it->second, op)) return it->second;
    }
    return nullptr;
  }

  std::vector<std::unordered_multimap<size_t, Op*>> scopes_;
  DeferredEdits edits_;
};

}  // namespace

bool cse(Function& fn) {
  // One pass suffices: ops are visited in order, so when an op is looked up its operands have
  // already been merged into their first occurrence.
  return ScopedCSE().run(fn.body);
}

}  // namespace tl
