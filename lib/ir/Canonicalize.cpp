// canonicalize: local algebraic simplifications that preserve every value exactly, plus one
// normal form (constants on the right of commutative ops) so that CSE sees `a+1` and `1+a` as
// the same op.
//
// Expects: verified block IR.
// Guarantees: each rewrite below gives bit-for-bit the same values as the op it replaces, for
// every input (NaN and -0.0 included); the result verifies. A "constant" operand may be a
// `constant` op or a splat/broadcast/expand_dims of one (every element is the same value).
//
// Each rewrite is a small named function that looks at one op and returns
//   - nullptr: it does not apply;
//   - another value: every use of the op's result is replaced by it and the op is erased;
//   - the op's own result: it changed the op in place.
// The driver applies the table to every op, again and again, until nothing changes.
//
// Compiler hints (the attributes `multiple_of`, `max_contiguous`, `max_constancy` that
// tl.multiple_of & co. put on the op making a value, read by stages/thread/AxisAnalysis.cpp) are
// claims about the op's values. A rewrite that replaces the op by a value made by another op
// moves the hints there (the values are the same, so the claims hold; both ops' hints are kept,
// the larger per dimension); where the replacement has no single-result op to carry them (a
// parameter, a region argument, a loop's result), the rewrite is not applied.
#include <algorithm>

#include "ir/Pass.h"
#include "ir/PassUtils.h"

namespace tl {

namespace {

using RewriteFn = Value* (*)(Op&);

struct Rewrite {
  const char* name;  // shown in docs/passes.md
  RewriteFn apply;
};

bool isIntType(const Value* v) { return !v->type.isPtr && isInt(v->type.dtype); }
bool isFloatType(const Value* v) { return !v->type.isPtr && isFloat(v->type.dtype); }
bool isConst(const Value* v) { return constantOf(v, /*lookThroughShapes=*/true).has_value(); }
Value* lhs(Op& op) { return op.operand(0); }
Value* rhs(Op& op) { return op.operand(1); }
// The single operand of `v`'s defining op when that op has kind `k`, else nullptr.
Value* operandIf(Value* v, OpKind k) {
  return v->def && v->def->kind == k && v->def->numOperands() == 1 ? v->def->operand(0) : nullptr;
}

// --- compiler hints (see the top of the file) -----------------------------------------------

bool isHint(const std::string& name) {
  return name == "multiple_of" || name == "max_contiguous" || name == "max_constancy";
}
bool hasHints(const Op& op) {
  return std::any_of(op.attrs.begin(), op.attrs.end(), [](const NamedAttr& a) { return isHint(a.name); });
}
// Moves op's hints to the op defining `to`; false (nothing moved) when no op can carry them.
bool moveHints(const Op& op, Value* to) {
  Op* d = to->def;
  if (!d || d->numResults() != 1 || !d->regions.empty()) return false;
  for (const NamedAttr& a : op.attrs) {
    if (!isHint(a.name)) continue;
    const auto* mine = std::get_if<std::vector<int64_t>>(&a.value);
    if (!mine) continue;
    std::vector<int64_t> merged = *mine;
    const Attr* old = d->attr(a.name);
    if (const auto* theirs = old ? std::get_if<std::vector<int64_t>>(old) : nullptr)
      for (size_t k = 0; k < merged.size() && k < theirs->size(); ++k) merged[k] = std::max(merged[k], (*theirs)[k]);
    d->setAttr(a.name, Attr(std::move(merged)));
  }
  return true;
}

// --- normal form ------------------------------------------------------------------------------

// c + x -> x + c for add, mul, and, or, xor (and int maximum/minimum). Float max/min are not
// swapped: which zero max(+0, -0) returns may depend on the operand order.
Value* constantToRight(Op& op) {
  bool commutative = op.kind == OpKind::Add || op.kind == OpKind::Mul || op.kind == OpKind::And ||
                     op.kind == OpKind::Or || op.kind == OpKind::Xor ||
                     ((op.kind == OpKind::Maximum || op.kind == OpKind::Minimum) && isIntType(lhs(op)));
  if (!commutative || !isConst(lhs(op)) || isConst(rhs(op))) return nullptr;
  std::swap(op.operands[0], op.operands[1]);
  return op.result();
}

// cmp lt(c, x) -> cmp gt(x, c): a < b is exactly b > a (both false on NaN).
Value* cmpConstantToRight(Op& op) {
  if (op.kind != OpKind::Cmp || !isConst(lhs(op)) || isConst(rhs(op))) return nullptr;
  static const std::pair<const char*, const char*> kSwapped[] = {
      {"lt", "gt"}, {"le", "ge"}, {"gt", "lt"}, {"ge", "le"}, {"eq", "eq"}, {"ne", "ne"}};
  for (auto [from, to] : kSwapped)
    if (op.strAttr("pred") == from) {
      std::swap(op.operands[0], op.operands[1]);
      op.setAttr("pred", std::string(to));
      return op.result();
    }
  return nullptr;
}

// --- identities -------------------------------------------------------------------------------

// x + 0 -> x (ints). For floats only x + (-0.0) is the identity: (-0.0) + 0.0 is +0.0.
Value* addZero(Op& op) {
  if (op.kind != OpKind::Add) return nullptr;
  if (isIntType(lhs(op)) && isIntConstant(rhs(op), 0)) return lhs(op);
  if (isFloatType(lhs(op)) && isFloatConstant(rhs(op), -0.0)) return lhs(op);
  return nullptr;
}

// x - 0 -> x (ints; floats too: x - (+0.0) is x for every x, -0.0 included).
Value* subZero(Op& op) {
  if (op.kind != OpKind::Sub) return nullptr;
  if (isIntType(lhs(op)) && isIntConstant(rhs(op), 0)) return lhs(op);
  if (isFloatType(lhs(op)) && isFloatConstant(rhs(op), 0.0)) return lhs(op);
  return nullptr;
}

// x * 1 -> x (ints and floats).
Value* mulOne(Op& op) {
  if (op.kind != OpKind::Mul) return nullptr;
  if (isIntType(lhs(op)) && isIntConstant(rhs(op), 1)) return lhs(op);
  if (isFloatType(lhs(op)) && isFloatConstant(rhs(op), 1.0)) return lhs(op);
  return nullptr;
}

// x * 0 -> 0, ints only (float: NaN * 0 is NaN, -1 * 0 is -0). The zero operand has the result's
// type already, so it is the replacement.
Value* mulZero(Op& op) {
  if (op.kind == OpKind::Mul && isIntType(lhs(op)) && isIntConstant(rhs(op), 0)) return rhs(op);
  return nullptr;
}

// x // 1 -> x (ints). Float x / 1.0 is x too, but kept: it is rare and not worth a rule.
Value* divOne(Op& op) {
  if (op.kind == OpKind::Div && isIntType(lhs(op)) && isIntConstant(rhs(op), 1)) return lhs(op);
  return nullptr;
}

// and/or/xor with all-zeros or all-ones (i1: false/true; ints: 0 / -1).
//   x & 0 -> 0    x & ~0 -> x    x | 0 -> x    x | ~0 -> ~0    x ^ 0 -> x
Value* bitwiseIdentity(Op& op) {
  if (op.kind != OpKind::And && op.kind != OpKind::Or && op.kind != OpKind::Xor) return nullptr;
  bool zero = isIntConstant(rhs(op), 0), ones = isIntConstant(rhs(op), -1);  // i1: -1 wraps to 1
  if (op.kind == OpKind::And) return zero ? rhs(op) : ones ? lhs(op) : nullptr;
  if (op.kind == OpKind::Or) return zero ? lhs(op) : ones ? rhs(op) : nullptr;
  return zero ? lhs(op) : nullptr;
}

// convert x to x's own dtype -> x.
Value* convertSameType(Op& op) {
  return op.kind == OpKind::Convert && lhs(op)->type == op.result()->type ? lhs(op) : nullptr;
}

// broadcast x to x's own shape -> x.
Value* broadcastSameShape(Op& op) {
  return op.kind == OpKind::Broadcast && lhs(op)->type == op.result()->type ? lhs(op) : nullptr;
}

// broadcast(splat(s)) -> splat(s) and expand_dims(splat(s)) -> splat(s), to the outer shape.
Value* shapeOfSplat(Op& op) {
  if (op.kind != OpKind::Broadcast && op.kind != OpKind::ExpandDims) return nullptr;
  Value* s = operandIf(lhs(op), OpKind::Splat);
  if (!s) return nullptr;
  op.kind = OpKind::Splat;  // same result type, now made directly from the scalar
  op.operands = {s};
  std::erase_if(op.attrs, [](const NamedAttr& a) { return !isHint(a.name); });
  return op.result();
}

// neg(neg(x)) -> x (ints wrap, so -(-INT_MIN) is INT_MIN; floats only flip the sign bit).
Value* doubleNeg(Op& op) {
  return op.kind == OpKind::Neg ? operandIf(lhs(op), OpKind::Neg) : nullptr;
}

// not(not(x)) -> x.
Value* doubleNot(Op& op) {
  return op.kind == OpKind::Not ? operandIf(lhs(op), OpKind::Not) : nullptr;
}

// select(c, x, x) -> x.
Value* selectSame(Op& op) {
  return op.kind == OpKind::Select && op.operand(1) == op.operand(2) ? op.operand(1) : nullptr;
}

// addptr(p, 0) -> p.
Value* addptrZero(Op& op) {
  return op.kind == OpKind::AddPtr && isIntConstant(rhs(op), 0) ? lhs(op) : nullptr;
}

// The table, in the order tried. The normal-form rules come first so that the identities only
// need to look at the right operand.
const Rewrite kRewrites[] = {
    {"constant-to-right", constantToRight},
    {"cmp-constant-to-right", cmpConstantToRight},
    {"add-zero", addZero},
    {"sub-zero", subZero},
    {"mul-one", mulOne},
    {"mul-zero", mulZero},
    {"div-one", divOne},
    {"bitwise-identity", bitwiseIdentity},
    {"convert-same-type", convertSameType},
    {"broadcast-same-shape", broadcastSameShape},
    {"shape-of-splat", shapeOfSplat},
    {"double-neg", doubleNeg},
    {"double-not", doubleNot},
    {"select-same", selectSame},
    {"addptr-zero", addptrZero},
};

// Applies the first matching rewrite to `op`. Returns true when something changed.
bool rewriteOp(Op& op, DeferredEdits& edits) {
  if (op.numResults() != 1 || !op.regions.empty()) return false;
  for (const Rewrite& rw : kRewrites) {
    Value* r = rw.apply(op);
    if (!r) continue;
    if (r != op.result()) {  // (a replacing rewrite leaves op as it was)
      if (hasHints(op) && !moveHints(op, r)) continue;
      edits.replaceOp(op, r);  // later uses read r; op is erased
    }
    return true;
  }
  return false;
}

// One forward sweep over `region` and the regions nested in it.
bool canonicalizeRegion(Region& region, DeferredEdits& edits) {
  bool changed = false;
  for (auto& op : region.ops) {
    edits.remapOperands(*op);
    for (auto& r : op->regions) changed |= canonicalizeRegion(*r, edits);
    changed |= rewriteOp(*op, edits);
  }
  edits.compact(region);
  return changed;
}

}  // namespace

bool canonicalize(Function& fn) {
  bool changed = false;
  // Each sweep rewrites ops in order; a rewrite can expose another one (neg(neg(neg(neg x)))),
  // so sweep until one changes nothing. Every rewrite removes an op or moves toward the normal
  // form (constants right, splats innermost), so this terminates.
  for (;;) {
    DeferredEdits edits;
    if (!canonicalizeRegion(fn.body, edits)) break;
    changed = true;
  }
  return changed;
}

}  // namespace tl
