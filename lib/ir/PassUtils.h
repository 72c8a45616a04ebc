// Small helpers shared by the block-IR passes (Canonicalize, FoldConstants, CSE, DCE).
//
// Expects: verified IR (operands dominate their uses, so every use of an op's result lies in
// the op's own region, after it, or in regions nested there).
// Guarantees: DeferredEdits never leaves a dangling operand as long as the pass visits every op
// of a region (in order, nested regions included) between two compact() calls of that region.
#pragma once

#include <cstdint>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "ir/IR.h"

namespace tl {

// The value of a `constant` op, read the way the interpreters read it: ints normalized to their
// dtype's width (i1 -> 0/1, i32 -> sign-extended low 32 bits), floats as the attribute's double.
struct ConstValue {
  DType dtype = DType::I32;
  int64_t i = 0;    // int dtypes (I1, I32, I64)
  double f = 0.0;   // float dtypes (F16, BF16, F32); the raw attribute, not yet rounded
};

// Wraps `v` to the width of int dtype `d` (two's complement): i1 keeps bit 0 semantics as
// "nonzero is true" -> 0/1, i32 keeps the low 32 bits sign-extended, i64 is unchanged.
int64_t wrapInt(DType d, int64_t v);

// The constant a value holds, if it is the result of a `constant` op. With `lookThroughShapes`,
// also when it is a splat / broadcast / expand_dims of one (these keep every element equal to
// the constant, so "is this tile all zeros?" has the same answer).
std::optional<ConstValue> constantOf(const Value* v, bool lookThroughShapes = false);

// True when `v` is a constant (see constantOf) whose every element equals the integer `k`
// (int dtypes) or the float `k` (float dtypes; with the exact sign: isConstant(v, -0.0) is only
// true for negative zero).
bool isIntConstant(const Value* v, int64_t k);
bool isFloatConstant(const Value* v, double k);

// Edits made during one forward sweep over a function, applied cheaply (the IR has no use
// lists, so replacing a value's uses one by one would cost a walk of the region each time):
//   - replaceOp(op, v): every later use of op's result reads v instead, and op is erased;
//   - erase(op): op (whose results must have no remaining uses) is erased.
// The sweep calls remapOperands(op) on each op before looking at it — uses always come after
// their definition in a forward walk, so this catches every use — and compact(region) once it
// has finished a region, which erases that region's marked ops in one pass. Use one object per
// sweep (it holds pointers to values and ops that the sweep frees).
class DeferredEdits {
 public:
  void replaceOp(Op& op, Value* v);
  void replaceValue(Value* from, Value* to) { subst_[from] = to; }
  void erase(Op& op) { dead_.insert(&op); }
  bool isErased(const Op& op) const { return dead_.count(&op) != 0; }
  // Rewrites op's operands through the substitutions (following chains a -> b -> c).
  void remapOperands(Op& op) const;
  // Removes the erased ops of `region`; returns how many.
  size_t compact(Region& region);

 private:
  std::unordered_map<const Value*, Value*> subst_;
  std::unordered_set<const Op*> dead_;
};

// Every `for` in `region` and the regions nested in it, each inner loop before the loops around
// it (post-order): what pipeline-loads and licm visit.
std::vector<Op*> forLoopsInnermostFirst(Region& region);

// True for ops that may be removed when their results are unused: those without side effects
// (see hasSideEffects in ir/IR.h: stores, barriers, terminators, and for/if containing them).
bool isRemovableWhenUnused(const Op& op);

}  // namespace tl
