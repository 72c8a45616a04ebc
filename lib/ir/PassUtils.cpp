// Helpers shared by the block-IR passes; see PassUtils.h for the contract.
#include "ir/PassUtils.h"

#include <cmath>
#include <functional>

namespace tl {

int64_t wrapInt(DType d, int64_t v) {
  switch (d) {
    case DType::I1: return v != 0 ? 1 : 0;
    case DType::I32: return static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint64_t>(v)));
    default: return v;
  }
}

std::optional<ConstValue> constantOf(const Value* v, bool lookThroughShapes) {
  if (!v || !v->def || v->type.isPtr) return std::nullopt;
  const Op* op = v->def;
  if (lookThroughShapes && op->info().category == OpCategory::Shape && op->numOperands() == 1)
    return constantOf(op->operand(0), true);
  if (op->kind != OpKind::Constant) return std::nullopt;
  const Attr* a = op->attr("value");
  if (!a) return std::nullopt;
  ConstValue c;
  c.dtype = v->type.dtype;
  if (isInt(c.dtype)) {
    if (!std::holds_alternative<int64_t>(*a)) return std::nullopt;
    c.i = wrapInt(c.dtype, std::get<int64_t>(*a));
  } else {
    if (std::holds_alternative<int64_t>(*a)) c.f = static_cast<double>(std::get<int64_t>(*a));
    else if (std::holds_alternative<double>(*a)) c.f = std::get<double>(*a);
    else return std::nullopt;
  }
  return c;
}

bool isIntConstant(const Value* v, int64_t k) {
  auto c = constantOf(v, /*lookThroughShapes=*/true);
  return c && isInt(c->dtype) && c->i == wrapInt(c->dtype, k);
}

bool isFloatConstant(const Value* v, double k) {
  auto c = constantOf(v, /*lookThroughShapes=*/true);
  if (!c || !isFloat(c->dtype)) return false;
  // f32 constants are compared as the f32 the interpreters compute with. For f16/bf16 only an
  // attribute exactly equal to k matches (the callers' k: 0, -0, 1 are exact in every float
  // dtype, and f16 rounding is not modelled here). The sign is compared, so -0.0 != +0.0.
  double x = c->dtype == DType::F32 ? static_cast<double>(static_cast<float>(c->f)) : c->f;
  return x == k && std::signbit(x) == std::signbit(k);
}

void DeferredEdits::replaceOp(Op& op, Value* v) {
  for (const auto& r : op.results) subst_[r.get()] = v;  // (callers pass single-result ops)
  dead_.insert(&op);
}

void DeferredEdits::remapOperands(Op& op) const {
  if (subst_.empty()) return;
  for (Value*& v : op.operands)
    for (auto it = subst_.find(v); it != subst_.end(); it = subst_.find(v)) v = it->second;
}

size_t DeferredEdits::compact(Region& region) {
  size_t n = 0;
  std::erase_if(region.ops, [&](const std::unique_ptr<Op>& op) {
    if (dead_.erase(op.get()) == 0) return false;
    ++n;
    return true;
  });
  return n;
}

bool isRemovableWhenUnused(const Op& op) { return !hasSideEffects(op); }

std::vector<Op*> forLoopsInnermostFirst(Region& region) {
  std::vector<Op*> loops;
  std::function<void(Region&)> collect = [&](Region& r) {
    for (auto& op : r.ops) {
      for (auto& inner : op->regions) collect(*inner);
      if (op->kind == OpKind::For) loops.push_back(op.get());
    }
  };
  collect(region);
  return loops;
}

}  // namespace tl
