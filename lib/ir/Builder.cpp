#include "ir/Builder.h"

#include "ir/Verifier.h"

namespace tl {

Shape reducedShape(const Shape& shape, int axis) {
  Shape out;
  for (int i = 0; i < static_cast<int>(shape.size()); ++i)
    if (i != axis) out.push_back(shape[i]);
  return out;
}

Op* Builder::create(OpKind kind, std::vector<Value*> operands, std::vector<Type> resultTypes,
                    std::vector<NamedAttr> attrs, size_t numRegions) {
  if (!region_) throw IRError(loc_, std::string("builder has no insertion point for ") + mnemonic(kind));
  auto op = std::make_unique<Op>(kind, loc_);
  op->operands = std::move(operands);
  for (auto& t : resultTypes) op->addResult(std::move(t));
  op->attrs = std::move(attrs);
  for (size_t i = 0; i < numRegions; ++i) op->addRegion();
  op->parent = region_;
  // Regions are filled by the caller, so only ops without regions are checked here; the
  // function verifier checks for/if once they are complete.
  if (numRegions == 0)
    if (auto err = verifyOp(*op)) throw IRError(loc_, *err);
  Op* raw = op.get();
  region_->ops.insert(region_->ops.begin() + static_cast<std::ptrdiff_t>(index_), std::move(op));
  ++index_;
  return raw;
}

Value* Builder::programId(int axis) {
  return create(OpKind::ProgramId, {}, {Type::scalar(DType::I32)}, {{"axis", int64_t(axis)}})->result();
}

Value* Builder::numPrograms(int axis) {
  return create(OpKind::NumPrograms, {}, {Type::scalar(DType::I32)}, {{"axis", int64_t(axis)}})->result();
}

Value* Builder::constInt(Type type, int64_t value) {
  return create(OpKind::Constant, {}, {type}, {{"value", value}})->result();
}

Value* Builder::constFloat(Type type, double value) {
  return create(OpKind::Constant, {}, {type}, {{"value", value}})->result();
}

Value* Builder::arange(int64_t start, int64_t end) {
  return create(OpKind::Arange, {}, {Type::tile(DType::I32, {end - start})},
                {{"start", start}, {"end", end}})
      ->result();
}

Value* Builder::splat(Value* scalar, Shape shape) {
  return create(OpKind::Splat, {scalar}, {scalar->type.withShape(std::move(shape))})->result();
}

Value* Builder::broadcast(Value* tile, Shape shape) {
  return create(OpKind::Broadcast, {tile}, {tile->type.withShape(std::move(shape))})->result();
}

Value* Builder::expandDims(Value* tile, int axis) {
  Shape s = tile->type.shape;
  if (axis >= 0 && axis <= static_cast<int>(s.size())) s.insert(s.begin() + axis, 1);
  return create(OpKind::ExpandDims, {tile}, {tile->type.withShape(std::move(s))},
                {{"axis", int64_t(axis)}})
      ->result();
}

Value* Builder::convert(Value* x, DType to) {
  return create(OpKind::Convert, {x}, {x->type.withDType(to)})->result();
}

Value* Builder::unary(OpKind kind, Value* x) { return create(kind, {x}, {x->type})->result(); }

Value* Builder::binary(OpKind kind, Value* a, Value* b) {
  return create(kind, {a, b}, {a->type})->result();
}

Value* Builder::cmp(const std::string& pred, Value* a, Value* b) {
  return create(OpKind::Cmp, {a, b}, {a->type.withDType(DType::I1)}, {{"pred", pred}})->result();
}

Value* Builder::select(Value* cond, Value* a, Value* b) {
  return create(OpKind::Select, {cond, a, b}, {a->type})->result();
}

Value* Builder::addptr(Value* ptr, Value* offset) {
  return create(OpKind::AddPtr, {ptr, offset}, {ptr->type})->result();
}

Value* Builder::ptrcast(Value* x, bool toPtr, DType pointee) {
  Type t = x->type.withDType(toPtr ? pointee : DType::I64);
  t.isPtr = toPtr;
  return create(OpKind::PtrCast, {x}, {t})->result();
}

Value* Builder::load(Value* ptr, Value* mask, Value* other) {
  std::vector<Value*> ops{ptr};
  if (mask) ops.push_back(mask);
  if (mask && other) ops.push_back(other);
  Type t = ptr->type;
  t.isPtr = false;
  return create(OpKind::Load, std::move(ops), {t})->result();
}

void Builder::store(Value* ptr, Value* value, Value* mask) {
  std::vector<Value*> ops{ptr, value};
  if (mask) ops.push_back(mask);
  create(OpKind::Store, std::move(ops), {});
}

Value* Builder::atomicRMW(const std::string& kind, Value* ptr, Value* val, Value* mask, const std::string& sem,
                          const std::string& scope) {
  std::vector<Value*> ops{ptr, val};
  if (mask) ops.push_back(mask);
  return create(OpKind::AtomicRMW, std::move(ops), {val->type}, {{"kind", kind}, {"sem", sem}, {"scope", scope}})
      ->result();
}

Value* Builder::atomicCAS(Value* ptr, Value* cmp, Value* val, Value* mask, const std::string& sem,
                          const std::string& scope) {
  std::vector<Value*> ops{ptr, cmp, val};
  if (mask) ops.push_back(mask);
  return create(OpKind::AtomicCAS, std::move(ops), {val->type}, {{"sem", sem}, {"scope", scope}})->result();
}

void Builder::debugBarrier() { create(OpKind::DebugBarrier, {}, {}); }

Value* Builder::fma(Value* a, Value* b, Value* c) { return create(OpKind::Fma, {a, b, c}, {a->type})->result(); }

Value* Builder::reduce(const std::string& kind, Value* x, int axis) {
  return create(OpKind::Reduce, {x}, {x->type.withShape(reducedShape(x->type.shape, axis))},
                {{"kind", kind}, {"axis", int64_t(axis)}})
      ->result();
}

Value* Builder::argmax(Value* x, int axis) {
  Type t = Type::tile(DType::I32, reducedShape(x->type.shape, axis));
  return create(OpKind::Argmax, {x}, {t}, {{"axis", int64_t(axis)}})->result();
}

Value* Builder::scan(const std::string& kind, Value* x, int axis, bool reverse) {
  return create(OpKind::Scan, {x}, {x->type}, {{"kind", kind}, {"axis", int64_t(axis)}, {"reverse", int64_t(reverse)}})
      ->result();
}

Value* Builder::dot(Value* a, Value* b, Value* acc, const std::string& precision, int64_t maxImpreciseAcc) {
  std::vector<NamedAttr> attrs;
  if (!precision.empty()) attrs.push_back({"precision", precision});
  if (maxImpreciseAcc > 0) attrs.push_back({"max_imprecise_acc", maxImpreciseAcc});
  return create(OpKind::Dot, {a, b, acc}, {acc->type}, std::move(attrs))->result();
}

Op* Builder::forOp(Value* lo, Value* hi, Value* step, const std::vector<Value*>& inits) {
  std::vector<Value*> operands{lo, hi, step};
  std::vector<Type> types;
  for (Value* v : inits) {
    operands.push_back(v);
    types.push_back(v->type);
  }
  Op* op = create(OpKind::For, std::move(operands), types, {}, 1);
  Region& body = op->region(0);
  body.addArg(lo->type, "iv");
  for (Value* v : inits) body.addArg(v->type, v->name);
  return op;
}

Op* Builder::ifOp(Value* cond, const std::vector<Type>& resultTypes) {
  return create(OpKind::If, {cond}, resultTypes, {}, 2);
}

Op* Builder::whileOp(const std::vector<Value*>& inits) {
  std::vector<Type> types;
  for (Value* v : inits) types.push_back(v->type);
  Op* op = create(OpKind::While, inits, types, {}, 2);
  for (auto& r : op->regions)
    for (Value* v : inits) r->addArg(v->type, v->name);
  return op;
}

void Builder::condition(Value* cond) { create(OpKind::Condition, {cond}, {}); }

void Builder::yield(const std::vector<Value*>& values) { create(OpKind::Yield, values, {}); }

void Builder::ret() { create(OpKind::Return, {}, {}); }

}  // namespace tl
