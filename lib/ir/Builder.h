// Builder: the only way ops are made. Each helper computes the result type, creates the op at
// the insertion point and runs the verifier's per-op check on it, throwing IRError (with the
// op's location) on a malformed op — so a bad op is reported where it was built.
//
// Binary ops need operands of identical type: broadcasting and dtype promotion are the front
// end's job (it calls splat/broadcast/convert explicitly, so the IR shows them).
#pragma once

#include <string>
#include <vector>

#include "ir/IR.h"

namespace tl {

class Builder {
 public:
  explicit Builder(Region* region = nullptr) { setInsertionPointToEnd(region); }

  // Insertion point: new ops go into `region` before position `index` (end by default).
  void setInsertionPointToEnd(Region* region) { region_ = region; index_ = region ? region->ops.size() : 0; }
  void setInsertionPoint(Region* region, size_t index) { region_ = region; index_ = index; }
  Region* region() const { return region_; }
  size_t index() const { return index_; }

  // The location given to ops built from now on.
  void setLoc(Loc loc) { loc_ = loc; }
  Loc loc() const { return loc_; }

  // Generic creation: verifies with verifyOp (after adding `numRegions` empty regions).
  Op* create(OpKind kind, std::vector<Value*> operands, std::vector<Type> resultTypes,
             std::vector<NamedAttr> attrs = {}, size_t numRegions = 0);

  // --- leaves
  Value* programId(int axis);
  Value* numPrograms(int axis);
  Value* constInt(Type type, int64_t value);    // int dtype, scalar or splat tile
  Value* constFloat(Type type, double value);   // float dtype, scalar or splat tile (inf ok)
  Value* arange(int64_t start, int64_t end);

  // --- shapes and dtypes
  Value* splat(Value* scalar, Shape shape);
  Value* broadcast(Value* tile, Shape shape);
  Value* expandDims(Value* tile, int axis);
  Value* convert(Value* x, DType to);

  // --- elementwise
  Value* unary(OpKind kind, Value* x);               // Neg, Not, Exp, ..., Sigmoid
  Value* binary(OpKind kind, Value* a, Value* b);    // Add, ..., Xor
  Value* cmp(const std::string& pred, Value* a, Value* b);
  Value* select(Value* cond, Value* a, Value* b);
  Value* addptr(Value* ptr, Value* offset);
  // ptrcast: i64 -> pointer to `pointee` when toPtr, else pointer -> i64 (same shape and layout).
  Value* ptrcast(Value* x, bool toPtr, DType pointee = DType::I64);

  // --- memory
  Value* load(Value* ptr, Value* mask = nullptr, Value* other = nullptr);
  void store(Value* ptr, Value* value, Value* mask = nullptr);

  // --- atomics (BlockOps.def): the old values. kind: "add|max|min|and|or|xor|xchg";
  // sem: "acq_rel|acquire|release|relaxed"; scope: "gpu|cta|sys".
  Value* atomicRMW(const std::string& kind, Value* ptr, Value* val, Value* mask = nullptr,
                   const std::string& sem = "acq_rel", const std::string& scope = "gpu");
  Value* atomicCAS(Value* ptr, Value* cmp, Value* val, Value* mask = nullptr, const std::string& sem = "acq_rel",
                   const std::string& scope = "gpu");
  void debugBarrier();

  // --- elementwise with three operands
  Value* fma(Value* a, Value* b, Value* c);  // a*b + c, one rounding

  // --- reductions
  Value* reduce(const std::string& kind, Value* x, int axis);  // "sum" | "max" | "min"
  Value* argmax(Value* x, int axis);
  Value* scan(const std::string& kind, Value* x, int axis, bool reverse);  // "sum" | "prod" | "max" | "min"
  // precision: "" (none: IEEE), "ieee", "tf32" or "tf32x3" (f32 inputs; BlockOps.def)
  // maxImpreciseAcc > 0 (fp8 inputs; at most K): the dot's products reach an f32 add every that
  // many k (Triton's max_num_imprecise_acc; BlockOps.def).
  Value* dot(Value* a, Value* b, Value* acc, const std::string& precision = "", int64_t maxImpreciseAcc = 0);

  // --- structure. forOp/ifOp create the op with empty regions; the caller fills them (the for
  // body's arguments — iv then one per init — are created here) and ends them with yield().
  Op* forOp(Value* lo, Value* hi, Value* step, const std::vector<Value*>& inits);
  Op* ifOp(Value* cond, const std::vector<Type>& resultTypes);
  // while (BlockOps.def): the op with its two regions, each given one argument per init (named
  // as the init); the caller fills region 0 ("cond", ending in condition()) and region 1
  // ("body", ending in yield() of the next values). Results: the final carried values.
  Op* whileOp(const std::vector<Value*>& inits);
  void condition(Value* cond);  // ends a while's cond region; cond is an i1 scalar
  void yield(const std::vector<Value*>& values);
  void ret();

 private:
  Region* region_ = nullptr;
  size_t index_ = 0;
  Loc loc_;
};

// Result shape of reducing `shape` along `axis`.
Shape reducedShape(const Shape& shape, int axis);

}  // namespace tl
