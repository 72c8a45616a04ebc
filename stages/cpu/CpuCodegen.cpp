// Block IR -> LLVM IR for the host CPU, one op at a time (contract in CpuCodegen.h).
//
// Storage. A scalar is an SSA value (i1, i32, i64, float, or i64 for a pointer). A tile is an
// array in the program's scratch memory at an offset fixed here (tileSlot): float for every
// float dtype (f16, bf16 and fp8 values kept rounded to their dtype, as tl-block keeps them),
// i32, i64, i8 (0 or 1) for i1, i64 virtual addresses for pointers. A `for`'s results share
// its carried values' arrays, a while's share its cond region's; every other op writes its own.
//
// Loops. An op on a tile of n elements runs over it in chunks of L = min(lanes, n) elements as
// LLVM vectors <L x T> (lanes = vectorBytes / 4), and a scalar tail when L does not divide n
// (tiles are powers of two: only when n < lanes does L shrink). Reductions keep L partial
// results; reductions across rows, scans and argmax run along the reduced dimension in order.
//
// Memory. Each load, store and atomic first computes the smallest and largest active address
// and the OR of their low bits and has tl_cpu_check_access approve them (CpuAbi.h), then: a
// chunk whose addresses are consecutive is one masked vector load/store, any other a masked
// gather/scatter. Addresses are virtual (runtime/Memory.h); the host's is + ctx->hostDelta.
//
// Control flow. for: iv runs lo, lo + step, ... while (step > 0 ? iv < hi : iv > hi), stopping
// where iv + step overflows; a zero step is an error at the op. Every loop iteration (for and
// while) counts against ctx->maxIterations, so no program runs forever. Carried scalars are
// phi nodes; carried tiles are copied into the loop's arrays at yield (through a temporary when
// a yielded value is another carried array of the same loop).
#include "cpu/CpuCodegen.h"

#include <algorithm>
#include <array>
#include <functional>
#include <unordered_set>
#include <stdexcept>
#include <unordered_map>

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/MDBuilder.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Support/raw_ostream.h>

#include "cpu/CpuAbi.h"
#include "ir/Diagnostics.h"
#include "ir/Verifier.h"
#include "runtime/Memory.h"

namespace tl::cpu {

namespace {

using LV = llvm::Value;

int64_t rowMajorStride(const Shape& s, size_t d) {
  int64_t r = 1;
  for (size_t k = d + 1; k < s.size(); ++k) r *= s[k];
  return r;
}

class ProgramEmitter {
 public:
  ProgramEmitter(const Function& fn, const CpuTarget& target, const CodegenOptions& opts, llvm::Module& m)
      : fn_(fn), target_(target), opts_(opts), C_(m.getContext()), M_(m), B_(m.getContext()),
        lanes_(std::max(1, target.vectorBytes / 4)) {}

  void emit();
  int64_t scratchBytes() const { return scratchTop_; }
  std::vector<const Op*> ops;
  bool prints = false;

 private:
  const Function& fn_;
  const CpuTarget& target_;
  const CodegenOptions& opts_;
  llvm::LLVMContext& C_;
  llvm::Module& M_;
  llvm::IRBuilder<> B_;
  const int lanes_;
  llvm::Function* F_ = nullptr;
  LV *args_ = nullptr, *ctx_ = nullptr, *scratch_ = nullptr;
  LV* pid_[3] = {nullptr, nullptr, nullptr};
  LV* iterations_ = nullptr;  // alloca i64: loop iterations so far
  llvm::BasicBlock* entry_ = nullptr;
  std::unordered_map<const tl::Value*, LV*> ssa_;
  std::unordered_map<const tl::Value*, int64_t> slot_;
  int64_t scratchTop_ = 0;
  std::vector<std::pair<int64_t, const tl::Value*>> largest_;  // for the scratch limit's message

  // --- types -------------------------------------------------------------------------------
  llvm::Type* i1() { return B_.getInt1Ty(); }
  llvm::Type* i8() { return B_.getInt8Ty(); }
  llvm::Type* i32() { return B_.getInt32Ty(); }
  llvm::Type* i64() { return B_.getInt64Ty(); }
  llvm::Type* f32() { return B_.getFloatTy(); }
  llvm::Type* ptrTy() { return B_.getPtrTy(); }

  // The element as a tile stores it.
  llvm::Type* storeTy(const Type& t) {
    if (t.isPtr) return i64();
    switch (t.dtype) {
      case DType::I1: return i8();
      case DType::I32: return i32();
      case DType::I64: return i64();
      default: return f32();
    }
  }
  // The element as the code computes with it (i1 for I1, else the storage type).
  llvm::Type* compTy(const Type& t) { return !t.isPtr && t.dtype == DType::I1 ? i1() : storeTy(t); }
  static int storeBytes(const Type& t) { return t.isPtr || t.dtype == DType::I64 ? 8 : t.dtype == DType::I1 ? 1 : 4; }
  llvm::Type* vecOf(llvm::Type* e, int L) { return llvm::FixedVectorType::get(e, static_cast<unsigned>(L)); }
  LV* c64(int64_t v) { return B_.getInt64(static_cast<uint64_t>(v)); }
  LV* c32(int64_t v) { return B_.getInt32(static_cast<uint32_t>(v)); }

  // A constant of `ty` (scalar or vector: splat) with value v.
  LV* constOf(llvm::Type* ty, double v) {
    llvm::Type* e = ty->getScalarType();
    if (e->isFloatTy()) return llvm::ConstantFP::get(ty, v);
    return llvm::ConstantInt::get(ty, static_cast<uint64_t>(static_cast<int64_t>(v)), true);
  }
  LV* intConst(llvm::Type* ty, int64_t v) { return llvm::ConstantInt::get(ty, static_cast<uint64_t>(v), true); }
  LV* splat(LV* scalar, int L) { return B_.CreateVectorSplat(static_cast<unsigned>(L), scalar); }

  // --- tiles in scratch ----------------------------------------------------------------------
  int64_t tileSlot(const tl::Value* v) {
    auto it = slot_.find(v);
    if (it != slot_.end()) return it->second;
    const int64_t bytes = v->type.numel() * storeBytes(v->type);
    const int64_t off = (scratchTop_ + kScratchAlignment - 1) / kScratchAlignment * kScratchAlignment;
    scratchTop_ = off + bytes;
    largest_.push_back({bytes, v});
    slot_[v] = off;
    return off;
  }
  void shareSlot(const tl::Value* v, const tl::Value* with) { slot_[v] = tileSlot(with); }
  LV* base(const tl::Value* v) { return B_.CreateConstInBoundsGEP1_64(i8(), scratch_, static_cast<uint64_t>(tileSlot(v))); }
  LV* elemPtr(const tl::Value* v, LV* idx) { return B_.CreateInBoundsGEP(storeTy(v->type), base(v), idx); }

  // Elements [idx, idx + L) of tile v, in compute types.
  LV* load(const tl::Value* v, LV* idx, int L) {
    llvm::Type* st = storeTy(v->type);
    LV* x = B_.CreateAlignedLoad(vecOf(st, L), elemPtr(v, idx), llvm::Align(static_cast<uint64_t>(storeBytes(v->type))));
    if (compTy(v->type) == i1()) x = B_.CreateICmpNE(x, llvm::Constant::getNullValue(x->getType()));
    return x;
  }
  void store(const tl::Value* v, LV* idx, LV* x) {
    if (x->getType()->getScalarType() == i1()) x = B_.CreateZExt(x, vecOf(i8(), vecWidth(x)));
    B_.CreateAlignedStore(x, elemPtr(v, idx), llvm::Align(static_cast<uint64_t>(storeBytes(v->type))));
  }
  static int vecWidth(LV* x) {
    auto* vt = llvm::dyn_cast<llvm::FixedVectorType>(x->getType());
    return vt ? static_cast<int>(vt->getNumElements()) : 1;
  }
  LV* scalarOf(const tl::Value* v) {
    auto it = ssa_.find(v);
    if (it == ssa_.end()) throw IRError(v->def ? v->def->loc : fn_.loc, "tl-cpu: scalar used before it is defined");
    return it->second;
  }
  // A scalar element of tile v at a dynamic index, in compute type.
  LV* loadElem(const tl::Value* v, LV* idx) {
    LV* x = B_.CreateAlignedLoad(storeTy(v->type), elemPtr(v, idx), llvm::Align(static_cast<uint64_t>(storeBytes(v->type))));
    if (compTy(v->type) == i1()) x = B_.CreateICmpNE(x, llvm::Constant::getNullValue(x->getType()));
    return x;
  }
  void storeElem(const tl::Value* v, LV* idx, LV* x) {
    if (x->getType() == i1()) x = B_.CreateZExt(x, i8());
    B_.CreateAlignedStore(x, elemPtr(v, idx), llvm::Align(static_cast<uint64_t>(storeBytes(v->type))));
  }

  // --- loops ---------------------------------------------------------------------------------
  // for (i = begin; i < end; i += step) body(i), i64; no loop for a single iteration.
  void loop(int64_t begin, int64_t end, int64_t step, const std::function<void(LV*)>& body) {
    if (end <= begin) return;
    if (end - begin <= step) {
      body(c64(begin));
      return;
    }
    llvm::BasicBlock* pre = B_.GetInsertBlock();
    llvm::BasicBlock* head = llvm::BasicBlock::Create(C_, "loop", F_);
    llvm::BasicBlock* exit = llvm::BasicBlock::Create(C_, "loop.end", F_);
    B_.CreateBr(head);
    B_.SetInsertPoint(head);
    llvm::PHINode* i = B_.CreatePHI(i64(), 2, "i");
    i->addIncoming(c64(begin), pre);
    body(i);
    LV* next = B_.CreateAdd(i, c64(step), "", true, true);
    i->addIncoming(next, B_.GetInsertBlock());
    B_.CreateCondBr(B_.CreateICmpSLT(next, c64(end)), head, exit);
    B_.SetInsertPoint(exit);
  }
  // The chunks of an n-element tile: body(index, width).
  void chunks(int64_t n, const std::function<void(LV*, int)>& body) {
    const int L = static_cast<int>(std::min<int64_t>(lanes_, n));
    const int64_t main = n / L * L;
    loop(0, main, L, [&](LV* i) { body(i, L); });
    loop(main, n, 1, [&](LV* i) { body(i, 1); });
  }
  // An alloca in the entry block (promoted to registers by LLVM).
  LV* local(llvm::Type* ty, const char* name = "") {
    llvm::IRBuilder<> eb(entry_, entry_->begin());
    return eb.CreateAlloca(ty, nullptr, name);
  }

  // --- errors --------------------------------------------------------------------------------
  int32_t opIndex(const Op& op) {
    for (size_t k = 0; k < ops.size(); ++k)
      if (ops[k] == &op) return static_cast<int32_t>(k);
    ops.push_back(&op);
    return static_cast<int32_t>(ops.size() - 1);
  }
  llvm::FunctionCallee helper(const char* name, llvm::Type* ret, std::vector<llvm::Type*> params) {
    return M_.getOrInsertFunction(name, llvm::FunctionType::get(ret, params, false));
  }
  // if (status != 0) return 1;
  void returnIfFailed(LV* status) {
    llvm::BasicBlock* fail = llvm::BasicBlock::Create(C_, "fail", F_);
    llvm::BasicBlock* ok = llvm::BasicBlock::Create(C_, "ok", F_);
    B_.CreateCondBr(B_.CreateICmpNE(status, c32(0)), fail, ok, llvm::MDBuilder(C_).createBranchWeights(1, 1 << 20));
    B_.SetInsertPoint(fail);
    B_.CreateRet(c32(1));
    B_.SetInsertPoint(ok);
  }
  // if (cond) { tl_cpu_fail(op, fault, element); return 1; }
  void failIf(LV* cond, const Op& op, CpuFault fault, LV* element) {
    llvm::BasicBlock* fail = llvm::BasicBlock::Create(C_, "fault", F_);
    llvm::BasicBlock* ok = llvm::BasicBlock::Create(C_, "ok", F_);
    B_.CreateCondBr(cond, fail, ok, llvm::MDBuilder(C_).createBranchWeights(1, 1 << 20));
    B_.SetInsertPoint(fail);
    auto f = helper("tl_cpu_fail", i32(), {ptrTy(), i32(), i32(), i64(), i64(), i64(), i64()});
    B_.CreateCall(f, {ctx_, c32(opIndex(op)), c32(static_cast<int32_t>(fault)), element, pid_[0], pid_[1], pid_[2]});
    B_.CreateRet(c32(1));
    B_.SetInsertPoint(ok);
  }
  // The first set lane of an <L x i1> (L >= 1) as an i64 offset.
  LV* firstLane(LV* bits) {
    const int L = vecWidth(bits);
    LV* word = B_.CreateBitCast(bits, B_.getIntNTy(static_cast<unsigned>(L)));
    LV* tz = B_.CreateBinaryIntrinsic(llvm::Intrinsic::cttz, word, B_.getTrue());
    return B_.CreateZExtOrTrunc(tz, i64());
  }
  LV* anyLane(LV* bits) { return vecWidth(bits) == 1 && !bits->getType()->isVectorTy() ? bits : B_.CreateOrReduce(bits); }
  void countIteration(const Op& op) {
    LV* n = B_.CreateAdd(B_.CreateLoad(i64(), iterations_), c64(1));
    B_.CreateStore(n, iterations_);
    LV* limit = B_.CreateLoad(i64(), B_.CreateConstInBoundsGEP1_64(i64(), ctx_, 5));
    failIf(B_.CreateICmpSGT(n, limit), op, CpuFault::Budget, c64(-1));
  }
  LV* ctxField(int k) { return B_.CreateLoad(i64(), B_.CreateConstInBoundsGEP1_64(i64(), ctx_, static_cast<uint64_t>(k))); }

  // --- dtypes --------------------------------------------------------------------------------
  // A float (scalar or vector) rounded to `d` (f16 / bf16 / fp8; others unchanged).
  LV* roundTo(LV* x, DType d) {
    llvm::Type* ty = x->getType();
    if (d == DType::F16) {
      llvm::Type* h = ty->isVectorTy() ? vecOf(B_.getHalfTy(), vecWidth(x)) : B_.getHalfTy();
      return B_.CreateFPExt(B_.CreateFPTrunc(x, h), ty);
    }
    if (d == DType::BF16) return bf16Bits(x, true);
    if (isFp8(d)) return perLane(x, [&](LV* e) {
        auto enc = helper("tl_cpu_float_to_fp8", i8(), {f32(), i32()});
        auto dec = helper("tl_cpu_fp8_to_float", f32(), {i8(), i32()});
        return B_.CreateCall(dec, {B_.CreateCall(enc, {e, c32(static_cast<int>(d))}), c32(static_cast<int>(d))});
      });
    return x;
  }
  // bf16 rounding to nearest even (runtime/Memory.cpp floatToBf16): as a float when `asFloat`,
  // else the 16 bits (i16 lanes).
  LV* bf16Bits(LV* x, bool asFloat) {
    llvm::Type* it = x->getType()->isVectorTy() ? vecOf(i32(), vecWidth(x)) : i32();
    LV* bits = B_.CreateBitCast(x, it);
    LV* lsb = B_.CreateAnd(B_.CreateLShr(bits, intConst(it, 16)), intConst(it, 1));
    LV* rounded = B_.CreateAdd(B_.CreateAdd(bits, intConst(it, 0x7fff)), lsb);
    LV* nan = B_.CreateICmpUGT(B_.CreateAnd(bits, intConst(it, 0x7fffffff)), intConst(it, 0x7f800000));
    LV* quiet = B_.CreateOr(bits, intConst(it, 0x00400000));
    LV* r = B_.CreateAnd(B_.CreateSelect(nan, quiet, rounded), intConst(it, static_cast<int64_t>(0xffff0000u)));
    if (asFloat) return B_.CreateBitCast(r, x->getType());
    llvm::Type* i16t = x->getType()->isVectorTy() ? vecOf(B_.getInt16Ty(), vecWidth(x)) : B_.getInt16Ty();
    return B_.CreateTrunc(B_.CreateLShr(r, intConst(it, 16)), i16t);
  }
  // f(element) for each lane of x (or x itself when it is a scalar).
  LV* perLane(LV* x, const std::function<LV*(LV*)>& f) {
    if (!x->getType()->isVectorTy()) return f(x);
    const int L = vecWidth(x);
    LV* out = nullptr;
    for (int k = 0; k < L; ++k) {
      LV* e = f(B_.CreateExtractElement(x, static_cast<uint64_t>(k)));
      if (!out) out = llvm::PoisonValue::get(vecOf(e->getType(), L));
      out = B_.CreateInsertElement(out, e, static_cast<uint64_t>(k));
    }
    return out;
  }
  LV* perLane2(LV* x, LV* y, const std::function<LV*(LV*, LV*)>& f) {
    if (!x->getType()->isVectorTy()) return f(x, y);
    const int L = vecWidth(x);
    LV* out = nullptr;
    for (int k = 0; k < L; ++k) {
      LV* e = f(B_.CreateExtractElement(x, static_cast<uint64_t>(k)), B_.CreateExtractElement(y, static_cast<uint64_t>(k)));
      if (!out) out = llvm::PoisonValue::get(vecOf(e->getType(), L));
      out = B_.CreateInsertElement(out, e, static_cast<uint64_t>(k));
    }
    return out;
  }

  // convert: x of type `from` to `to` (both element types), tl-block's rules.
  LV* convert(LV* x, const Type& from, const Type& to) {
    llvm::Type* dst = compTy(to);
    if (x->getType()->isVectorTy()) dst = vecOf(dst, vecWidth(x));
    const DType a = from.dtype, b = to.dtype;
    if (from.isPtr || to.isPtr) return x;  // ptrcast-like: the same 64 bits
    if (b == DType::I1) {
      if (a == DType::I1) return x;
      if (isFloat(a)) return B_.CreateFCmpUNE(x, llvm::Constant::getNullValue(x->getType()));
      return B_.CreateICmpNE(x, llvm::Constant::getNullValue(x->getType()));
    }
    if (isFloat(b)) {
      LV* f = x;
      if (a == DType::I1) f = B_.CreateUIToFP(x, dst);
      else if (isInt(a)) f = B_.CreateSIToFP(x, dst);
      return roundTo(f, b);
    }
    // b is i32 / i64
    if (isFloat(a)) {
      auto id = llvm::Intrinsic::fptosi_sat;
      return B_.CreateIntrinsic(id, {dst, x->getType()}, {x});
    }
    if (a == DType::I1) return B_.CreateZExt(x, dst);
    return B_.CreateSExtOrTrunc(x, dst);
  }

  // --- math ----------------------------------------------------------------------------------
  // Whether libmvec has the float function `name` (glibc 2.35+).
  static bool inLibmvec(const std::string& name) {
    static const char* kNames[] = {"expf",  "exp2f", "exp10f", "logf",  "log2f",  "log10f", "log1pf", "expm1f",
                                   "sinf",  "cosf",  "tanf",   "asinf", "acosf",  "atanf",  "sinhf",  "coshf",
                                   "tanhf", "erff",  "cbrtf",  "powf",  "atan2f", "hypotf"};
    for (const char* n : kNames)
      if (name == n) return true;
    return false;
  }
  // libm's float function `name` of x (and y): libmvec on a full vector where it has it, an
  // LLVM intrinsic where there is one (lowered to the same libm call or an instruction), else a
  // call per lane.
  LV* libm(const char* name, LV* x, LV* y = nullptr, llvm::Intrinsic::ID id = llvm::Intrinsic::not_intrinsic) {
    const int L = vecWidth(x);
    if (target_.vectorMath && inLibmvec(name) && x->getType()->isVectorTy() && L == lanes_) {
      const char isa = target_.isa == "avx512" ? 'e' : target_.isa == "avx2" ? 'd' : 'b';
      std::string mangled = std::string("_ZGV") + isa + "N" + std::to_string(L) + (y ? "vv_" : "v_") + name;
      std::vector<llvm::Type*> params(y ? 2 : 1, x->getType());
      auto f = helper(mangled.c_str(), x->getType(), params);
      return y ? B_.CreateCall(f, {x, y}) : B_.CreateCall(f, {x});
    }
    if (id != llvm::Intrinsic::not_intrinsic)
      return y ? B_.CreateBinaryIntrinsic(id, x, y) : B_.CreateUnaryIntrinsic(id, x);
    if (y) return perLane2(x, y, [&](LV* a, LV* b) { return B_.CreateCall(helper(name, f32(), {f32(), f32()}), {a, b}); });
    return perLane(x, [&](LV* a) { return B_.CreateCall(helper(name, f32(), {f32()}), {a}); });
  }

  LV* floatUnary(OpKind k, LV* x) {
    const llvm::Intrinsic::ID none = llvm::Intrinsic::not_intrinsic;
    LV* one = constOf(x->getType(), 1.0);
    switch (k) {
      case OpKind::Neg: return B_.CreateFNeg(x);
      case OpKind::Abs: return B_.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x);
      case OpKind::Exp: return libm("expf", x, nullptr, llvm::Intrinsic::exp);
      case OpKind::Exp2: return libm("exp2f", x, nullptr, llvm::Intrinsic::exp2);
      case OpKind::Log: return libm("logf", x, nullptr, llvm::Intrinsic::log);
      case OpKind::Log2: return libm("log2f", x, nullptr, llvm::Intrinsic::log2);
      case OpKind::Log10: return libm("log10f", x, nullptr, llvm::Intrinsic::log10);
      case OpKind::Sqrt: return B_.CreateUnaryIntrinsic(llvm::Intrinsic::sqrt, x);
      case OpKind::Rsqrt: return B_.CreateFDiv(one, B_.CreateUnaryIntrinsic(llvm::Intrinsic::sqrt, x));
      case OpKind::Sigmoid: return B_.CreateFDiv(one, B_.CreateFAdd(one, libm("expf", B_.CreateFNeg(x), nullptr, llvm::Intrinsic::exp)));
      case OpKind::Cos: return libm("cosf", x, nullptr, llvm::Intrinsic::cos);
      case OpKind::Sin: return libm("sinf", x, nullptr, llvm::Intrinsic::sin);
      case OpKind::Floor: return B_.CreateUnaryIntrinsic(llvm::Intrinsic::floor, x);
      case OpKind::Ceil: return B_.CreateUnaryIntrinsic(llvm::Intrinsic::ceil, x);
      case OpKind::Trunc: return B_.CreateUnaryIntrinsic(llvm::Intrinsic::trunc, x);
      case OpKind::Round: return B_.CreateUnaryIntrinsic(llvm::Intrinsic::round, x);
      case OpKind::Rint: return B_.CreateUnaryIntrinsic(llvm::Intrinsic::nearbyint, x);
      case OpKind::Rcp: return B_.CreateFDiv(one, x);
      case OpKind::Erf: return libm("erff", x, nullptr, none);
      case OpKind::Asin: return libm("asinf", x, nullptr, none);
      case OpKind::Acos: return libm("acosf", x, nullptr, none);
      case OpKind::Atan: return libm("atanf", x, nullptr, none);
      case OpKind::Tan: return libm("tanf", x, nullptr, none);
      case OpKind::Sinh: return libm("sinhf", x, nullptr, none);
      case OpKind::Cosh: return libm("coshf", x, nullptr, none);
      case OpKind::Tanh: return libm("tanhf", x, nullptr, none);
      case OpKind::Log1p: return libm("log1pf", x, nullptr, none);
      case OpKind::Expm1: return libm("expm1f", x, nullptr, none);
      case OpKind::Exp10: return libm("exp10f", x, nullptr, none);
      case OpKind::Cbrt: return libm("cbrtf", x, nullptr, none);
      default: return nullptr;
    }
  }

  LV* intUnary(OpKind k, LV* x) {
    switch (k) {
      case OpKind::Neg: return B_.CreateNeg(x);
      case OpKind::Abs: {
        LV* neg = B_.CreateICmpSLT(x, llvm::Constant::getNullValue(x->getType()));
        return B_.CreateSelect(neg, B_.CreateNeg(x), x);
      }
      case OpKind::Not: return B_.CreateNot(x);
      default: return nullptr;
    }
  }

  // Elementwise binary op on compute-typed a, b (scalars or vectors) of dtype d. `element`: the
  // chunk's first index (for a division by zero's message; -1 for scalars).
  LV* binary(const Op& op, DType d, LV* a, LV* b, LV* element) {
    const OpKind k = op.kind;
    if (isFloat(d)) {
      switch (k) {
        case OpKind::Add: return B_.CreateFAdd(a, b);
        case OpKind::Sub: return B_.CreateFSub(a, b);
        case OpKind::Mul: return B_.CreateFMul(a, b);
        case OpKind::Div: return B_.CreateFDiv(a, b);
        case OpKind::Rem: return B_.CreateFRem(a, b);
        case OpKind::Maximum: return B_.CreateBinaryIntrinsic(llvm::Intrinsic::maximum, a, b);
        case OpKind::Minimum: return B_.CreateBinaryIntrinsic(llvm::Intrinsic::minimum, a, b);
        case OpKind::Atan2: return libm("atan2f", a, b);
        case OpKind::Pow: return libm("powf", a, b, llvm::Intrinsic::pow);
        case OpKind::Hypot: return libm("hypotf", a, b);
        default: break;
      }
      throw RuntimeError(op.loc, std::string("tl-cpu: ") + mnemonic(k) + " of " + dtypeName(d) + " is not compiled");
    }
    llvm::Type* ty = a->getType();
    const unsigned bits = ty->getScalarSizeInBits();
    switch (k) {
      case OpKind::Add: return B_.CreateAdd(a, b);
      case OpKind::Sub: return B_.CreateSub(a, b);
      case OpKind::Mul: return B_.CreateMul(a, b);
      case OpKind::And: return B_.CreateAnd(a, b);
      case OpKind::Or: return B_.CreateOr(a, b);
      case OpKind::Xor: return B_.CreateXor(a, b);
      case OpKind::Maximum: return bits == 1 ? B_.CreateOr(a, b) : B_.CreateBinaryIntrinsic(llvm::Intrinsic::smax, a, b);
      case OpKind::Minimum: return bits == 1 ? B_.CreateAnd(a, b) : B_.CreateBinaryIntrinsic(llvm::Intrinsic::smin, a, b);
      case OpKind::Div:
      case OpKind::Rem: {
        LV* zero = llvm::Constant::getNullValue(ty);
        LV* isZero = B_.CreateICmpEQ(b, zero);
        failIf(anyLane(isZero), op, CpuFault::DivByZero,
               ty->isVectorTy() ? B_.CreateAdd(element, firstLane(isZero)) : element);
        LV* minusOne = B_.CreateICmpEQ(b, llvm::Constant::getAllOnesValue(ty));
        LV* safe = B_.CreateSelect(minusOne, intConst(ty, 1), b);
        if (k == OpKind::Div) return B_.CreateSelect(minusOne, B_.CreateNeg(a), B_.CreateSDiv(a, safe));
        return B_.CreateSelect(minusOne, zero, B_.CreateSRem(a, safe));
      }
      case OpKind::Shl:
      case OpKind::Shr: {
        // An amount outside [0, bits) gives 0 (shl) or the sign fill (shr): runtime/FloatOps.h.
        LV* out = B_.CreateICmpUGE(b, intConst(ty, bits));
        LV* amt = B_.CreateSelect(out, llvm::Constant::getNullValue(ty), b);
        if (k == OpKind::Shl) return B_.CreateSelect(out, llvm::Constant::getNullValue(ty), B_.CreateShl(a, amt));
        LV* fill = B_.CreateAShr(a, intConst(ty, bits - 1));
        return B_.CreateSelect(out, fill, B_.CreateAShr(a, amt));
      }
      case OpKind::Umulhi: {
        llvm::Type* wide = ty->isVectorTy() ? vecOf(B_.getIntNTy(2 * bits), vecWidth(a)) : B_.getIntNTy(2 * bits);
        LV* p = B_.CreateMul(B_.CreateZExt(a, wide), B_.CreateZExt(b, wide));
        return B_.CreateTrunc(B_.CreateLShr(p, intConst(wide, bits)), ty);
      }
      default: break;
    }
    throw RuntimeError(op.loc, std::string("tl-cpu: ") + mnemonic(k) + " of " + dtypeName(d) + " is not compiled");
  }

  LV* compare(const std::string& pred, bool fp, LV* a, LV* b) {
    if (fp) {
      if (pred == "lt") return B_.CreateFCmpOLT(a, b);
      if (pred == "le") return B_.CreateFCmpOLE(a, b);
      if (pred == "gt") return B_.CreateFCmpOGT(a, b);
      if (pred == "ge") return B_.CreateFCmpOGE(a, b);
      if (pred == "eq") return B_.CreateFCmpOEQ(a, b);
      return B_.CreateFCmpUNE(a, b);
    }
    if (pred == "lt") return B_.CreateICmpSLT(a, b);
    if (pred == "le") return B_.CreateICmpSLE(a, b);
    if (pred == "gt") return B_.CreateICmpSGT(a, b);
    if (pred == "ge") return B_.CreateICmpSGE(a, b);
    if (pred == "eq") return B_.CreateICmpEQ(a, b);
    return B_.CreateICmpNE(a, b);
  }

  // One elementwise op on its operands' values (scalars, or chunks of L lanes).
  LV* elementwise(const Op& op, const std::vector<LV*>& x, LV* element) {
    const Type& rt = op.result()->type;
    const Type& t0 = op.operand(0)->type;
    const DType d = t0.dtype;
    switch (op.kind) {
      case OpKind::Convert: return convert(x[0], t0, rt);
      case OpKind::PtrCast: return x[0];
      case OpKind::Cmp: return compare(op.strAttr("pred"), isFloat(d) && !t0.isPtr, x[0], x[1]);
      case OpKind::Select: return B_.CreateSelect(x[0], x[1], x[2]);
      case OpKind::AddPtr: {
        LV* off = B_.CreateSExtOrTrunc(x[1], x[0]->getType());
        return B_.CreateAdd(x[0], B_.CreateMul(off, intConst(x[0]->getType(), dtypeBytes(d))));
      }
      case OpKind::Fma: return roundTo(B_.CreateIntrinsic(llvm::Intrinsic::fma, {x[0]->getType()}, {x[0], x[1], x[2]}), rt.dtype);
      default: break;
    }
    if (x.size() == 1) {
      LV* r = isFloat(d) ? floatUnary(op.kind, x[0]) : intUnary(op.kind, x[0]);
      if (!r) throw RuntimeError(op.loc, std::string("tl-cpu: ") + mnemonic(op.kind) + " of " + dtypeName(d) + " is not compiled");
      return isFloat(d) ? roundTo(r, rt.dtype) : r;
    }
    LV* r = binary(op, d, x[0], x[1], element);
    return isFloat(rt.dtype) ? roundTo(r, rt.dtype) : r;
  }

  // --- ops -----------------------------------------------------------------------------------
  void emitRegion(const Region& r);
  void emitOp(const Op& op);
  void emitConstant(const Op& op);
  void emitElementwise(const Op& op);
  void emitCopy(const tl::Value* dst, const tl::Value* src, const Shape& dims, const std::vector<int64_t>& dstStrides,
                int64_t dstOffset, const std::vector<int64_t>& srcStrides, int64_t srcOffset);
  void emitShape(const Op& op);
  void copyTile(const tl::Value* dst, const tl::Value* src);
  void checkAccess(const Op& op, const tl::Value* ptrs, const tl::Value* mask, int64_t esize);
  // A memory op's range check being accumulated over its chunks (allocas of `lanes` lanes).
  struct AccessRange {
    LV *lo = nullptr, *hi = nullptr, *mis = nullptr;
    int lanes = 1;
    int64_t esize = 1;
  };
  AccessRange newRange(int64_t n, int64_t esize);
  void accumulateRange(const AccessRange& r, LV* p, LV* on, int W);
  std::array<LV*, 3> rangeOf(const AccessRange& r);
  // Fusion (emitCluster).
  bool pureScalar(const Op& op) const;
  const Shape* fusibleTile(const Op& op) const;
  size_t clusterEnd(const Region& r, size_t begin) const;
  void emitCluster(const Region& r, size_t begin, size_t end);
  LV* fusedValue(const Op& op, std::unordered_map<const tl::Value*, LV*>& vals, LV* i, int W);
  LV* constantOf(const Op& op);
  void collectUsers(const Region& r);
  std::unordered_map<const tl::Value*, std::vector<const Op*>> users_;
  LV* memToStore(LV* m, DType d);
  LV* storeToMem(LV* x, DType d);
  llvm::Type* memTy(DType d, int L);
  void emitLoad(const Op& op);
  void emitStore(const Op& op);
  // contiguousAt: the chunk's first virtual address when its addresses are known to be
  // consecutive (then p is not read, and may be null).
  LV* loadChunk(const Op& op, LV* p, LV* on, LV* other, int L, LV* contiguousAt = nullptr);
  void storeChunk(const Op& op, LV* p, LV* on, LV* x, int L, LV* contiguousAt = nullptr);
  // A tile value known at compile time to be affine in its flat index: element i = base +
  // stride * i (exact, in i64; `narrow`: the value is i32, so it equals that only while no
  // element leaves i32's range, which the cluster checks at run time).
  struct Affine {
    LV* base = nullptr;  // i64, computed before the cluster's loops
    int64_t stride = 0;
    bool narrow = false;
  };
  std::unordered_map<const tl::Value*, Affine> affine_;  // the current cluster's
  void analyzeAffine(const std::vector<const Op*>& tiles, int64_t n, std::vector<LV*>& guards);
  LV* consecutive(LV* host, LV* first, int64_t esize, int L);
  LV* allOn(int L);
  void emitAtomic(const Op& op);
  void emitPrint(const Op& op);
  void emitAssert(const Op& op);
  void emitReduce(const Op& op);
  void emitArgmax(const Op& op);
  void emitScan(const Op& op);
  void emitDot(const Op& op);
  void emitFor(const Op& op);
  void emitIf(const Op& op);
  void emitWhile(const Op& op);
  void assign(const std::vector<const tl::Value*>& dst, const std::vector<const tl::Value*>& src, const Op& at);
  void updateInPlace(const Region& body, const std::vector<const tl::Value*>& args);
  LV* spill(const tl::Value* v);
};

// ---------------------------------------------------------------------------------------------

void ProgramEmitter::emit() {
  llvm::FunctionType* ft = llvm::FunctionType::get(i32(), {ptrTy(), ptrTy(), i64(), i64(), i64(), ptrTy()}, false);
  F_ = llvm::Function::Create(ft, llvm::Function::ExternalLinkage, "tl_cpu_program", M_);
  F_->addFnAttr(llvm::Attribute::NoUnwind);
  args_ = F_->getArg(0);
  ctx_ = F_->getArg(1);
  for (int k = 0; k < 3; ++k) pid_[k] = F_->getArg(2 + static_cast<unsigned>(k));
  scratch_ = F_->getArg(5);
  F_->addParamAttr(5, llvm::Attribute::NoAlias);
  F_->addParamAttr(5, llvm::Attribute::getWithAlignment(C_, llvm::Align(kScratchAlignment)));
  entry_ = llvm::BasicBlock::Create(C_, "entry", F_);
  B_.SetInsertPoint(entry_);
  iterations_ = local(i64(), "iterations");
  B_.CreateStore(c64(0), iterations_);
  // Parameters: pointers are their virtual address; scalars their bits (CpuAbi.h).
  for (size_t k = 0; k < fn_.params.size(); ++k) {
    const tl::Value* p = fn_.param(k);
    LV* word = B_.CreateLoad(i64(), B_.CreateConstInBoundsGEP1_64(i64(), args_, k));
    LV* v = word;
    if (!p->type.isPtr) {
      switch (p->type.dtype) {
        case DType::I1: v = B_.CreateICmpNE(word, c64(0)); break;
        case DType::I32: v = B_.CreateTrunc(word, i32()); break;
        case DType::I64: break;
        default: v = B_.CreateBitCast(B_.CreateTrunc(word, i32()), f32()); break;
      }
    }
    if (p->type.isTile()) throw RuntimeError(p->def ? p->def->loc : fn_.loc, "tl-cpu: tile parameters are not compiled");
    ssa_[p] = v;
  }
  collectUsers(fn_.body);
  emitRegion(fn_.body);
  if (!B_.GetInsertBlock()->getTerminator()) B_.CreateRet(c32(0));
  if (scratchTop_ > kMaxScratchBytes) {
    std::sort(largest_.begin(), largest_.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
    std::string top;
    for (size_t k = 0; k < std::min<size_t>(3, largest_.size()); ++k)
      top += (k ? ", " : "") + largest_[k].second->type.str() + (largest_[k].second->name.empty() ? "" : " " + largest_[k].second->name);
    throw RuntimeError(fn_.loc, "tl-cpu: one program's tiles need " + std::to_string(scratchTop_ >> 20) +
                                    " MiB, more than tl-cpu's limit of " + std::to_string(kMaxScratchBytes >> 20) +
                                    " MiB (largest: " + top + "); use smaller blocks");
  }
}

void ProgramEmitter::emitRegion(const Region& r) {
  for (size_t i = 0; i < r.ops.size();) {
    if (B_.GetInsertBlock()->getTerminator()) return;
    const size_t end = clusterEnd(r, i);
    if (end > i) {
      emitCluster(r, i, end);
      i = end;
    } else {
      emitOp(*r.ops[i++]);
    }
  }
}

void ProgramEmitter::collectUsers(const Region& r) {
  for (const auto& op : r.ops) {
    for (const tl::Value* v : op->operands) users_[v].push_back(op.get());
    for (const auto& sub : op->regions) collectUsers(*sub);
  }
}

// --- fusion --------------------------------------------------------------------------------------
//
// A cluster is a run of consecutive ops of one region that all make (or, a store, take) tiles of
// one shape and compute element i from elements i of their operands: constants, arange, splat,
// elementwise ops (not integer div/rem, whose errors must come in op order), loads and stores.
// Scalar ops among them (pure, no division) are emitted before it. A store ends a cluster (a
// later load might read what it wrote); a load or store whose address or mask depends on a load
// of the cluster starts the next one. The cluster runs as ONE loop over chunks, its values in
// registers; only values used outside it go to their arrays. Its memory ops are first
// range-checked together (a loop over what their addresses and masks need); if any check fails,
// the ops run one by one instead (emitOp: exact errors, in op order, and accesses spanning
// buffers), so fusing never changes a result or a message.

bool ProgramEmitter::pureScalar(const Op& op) const {
  if (op.numResults() != 1 || !op.result()->type.isScalar() || !op.regions.empty()) return false;
  const OpCategory c = op.info().category;
  if (c != OpCategory::Elementwise && c != OpCategory::Leaf) return false;
  return !((op.kind == OpKind::Div || op.kind == OpKind::Rem) && !isFloat(op.result()->type.dtype));
}

const Shape* ProgramEmitter::fusibleTile(const Op& op) const {
  switch (op.kind) {
    case OpKind::Store: return op.operand(0)->type.isTile() ? &op.operand(0)->type.shape : nullptr;
    case OpKind::Broadcast: {
      // A read of its (smaller, materialized) operand: each chunk must lie in one row.
      const Type& t = op.result()->type;
      if (!t.isTile() || !op.operand(0)->type.isTile()) return nullptr;
      const int64_t width = std::min<int64_t>(lanes_, t.numel());
      return t.shape.back() % width == 0 ? &t.shape : nullptr;
    }
    case OpKind::Constant:
    case OpKind::Arange:
    case OpKind::Splat:
    case OpKind::ConvertLayout:
    case OpKind::Load: break;
    case OpKind::Div:
    case OpKind::Rem:
      if (!isFloat(op.result()->type.dtype)) return nullptr;
      break;
    default:
      if (op.info().category != OpCategory::Elementwise) return nullptr;
  }
  if (op.numResults() != 1 || !op.result()->type.isTile()) return nullptr;
  return &op.result()->type.shape;
}

size_t ProgramEmitter::clusterEnd(const Region& r, size_t begin) const {
  const Shape* shape = fusibleTile(*r.ops[begin]);
  if (!shape) return begin;
  std::unordered_set<const tl::Value*> fromLoad;  // cluster values computed from a cluster load
  size_t end = begin, tiles = 0;
  for (size_t i = begin; i < r.ops.size(); ++i) {
    const Op& op = *r.ops[i];
    if (pureScalar(op)) continue;
    const Shape* s = fusibleTile(op);
    if (!s || *s != *shape) break;
    if (op.kind == OpKind::Load || op.kind == OpKind::Store) {
      const size_t maskAt = op.kind == OpKind::Load ? 1 : 2;
      if (fromLoad.count(op.operand(0)) || (op.numOperands() > maskAt && fromLoad.count(op.operand(maskAt)))) break;
    }
    ++tiles;
    end = i + 1;
    if (op.kind == OpKind::Store) break;
    bool dep = op.kind == OpKind::Load;
    for (const tl::Value* v : op.operands) dep |= fromLoad.count(v) > 0;
    if (dep) fromLoad.insert(op.result());
  }
  return tiles >= 2 ? end : begin;
}

LV* ProgramEmitter::constantOf(const Op& op) {
  const Type& t = op.result()->type;
  llvm::Type* ct = compTy(t);
  if (isFloat(t.dtype)) return llvm::ConstantFP::get(ct, roundToDType(op.floatAttr("value"), t.dtype));
  if (t.dtype == DType::I1) return B_.getInt1(op.intAttr("value") != 0);
  return llvm::ConstantInt::get(ct, static_cast<uint64_t>(op.intAttr("value")), true);
}

// Chunk i (W lanes) of a cluster op's result, from its operands' chunks in `vals` (or their
// arrays); a store stores its chunk and gives nullptr.
LV* ProgramEmitter::fusedValue(const Op& op, std::unordered_map<const tl::Value*, LV*>& vals, LV* i, int W) {
  auto in = [&](size_t k) -> LV* {
    const tl::Value* v = op.operand(k);
    auto it = vals.find(v);
    return it != vals.end() ? it->second : load(v, i, W);
  };
  switch (op.kind) {
    case OpKind::Constant: return splat(constantOf(op), W);
    case OpKind::Arange: {
      std::vector<llvm::Constant*> iota;
      for (int k = 0; k < W; ++k) iota.push_back(B_.getInt32(static_cast<uint32_t>(k)));
      LV* start = B_.CreateTrunc(B_.CreateAdd(i, c64(op.intAttr("start"))), i32());
      return B_.CreateAdd(splat(start, W), llvm::ConstantVector::get(iota));
    }
    case OpKind::Splat: return splat(scalarOf(op.operand(0)), W);
    case OpKind::ConvertLayout: return in(0);
    case OpKind::Broadcast: {
      // Chunk i lies in one row of the result: the operand's element for its leading indices,
      // and along the last dimension either the same W elements or one element splatted.
      const Shape& out = op.result()->type.shape;
      const Shape& src = op.operand(0)->type.shape;
      const int64_t cols = out.back();
      LV* row = B_.CreateUDiv(i, c64(cols));
      LV* col = B_.CreateURem(i, c64(cols));
      LV* at = c64(0);
      for (size_t d = out.size() - 1; d-- > 0;) {
        LV* idx = B_.CreateURem(row, c64(out[d]));
        row = B_.CreateUDiv(row, c64(out[d]));
        if (src[d] != 1) at = B_.CreateAdd(at, B_.CreateMul(idx, c64(rowMajorStride(src, d))));
      }
      const tl::Value* x = op.operand(0);
      if (src.back() == 1) return splat(loadElem(x, at), W);
      return load(x, B_.CreateAdd(at, col), W);
    }
    case OpKind::Load:
    case OpKind::Store: {
      // Consecutive addresses known at compile time: one masked vector access at base + i * esize.
      LV* at = nullptr;
      auto a = affine_.find(op.operand(0));
      if (a != affine_.end() && a->second.stride == dtypeBytes(op.operand(0)->type.dtype))
        at = B_.CreateAdd(a->second.base, B_.CreateMul(i, c64(a->second.stride)));
      if (op.kind == OpKind::Load)
        return loadChunk(op, at ? nullptr : in(0), op.numOperands() > 1 ? in(1) : allOn(W), op.numOperands() > 2 ? in(2) : nullptr,
                         W, at);
      storeChunk(op, at ? nullptr : in(0), op.numOperands() > 2 ? in(2) : allOn(W), in(1), W, at);
      return nullptr;
    }
    default: {
      std::vector<LV*> xs;
      for (size_t k = 0; k < op.numOperands(); ++k) xs.push_back(in(k));
      return elementwise(op, xs, i);
    }
  }
}

// Which cluster values are affine in their flat index (Affine): arange, splats and integer
// constants, and + - * (by a constant), addptr, integer converts and convert_layout of them.
// `guards` gets, for each narrow (i32) one, that its first and last elements stay in i32.
void ProgramEmitter::analyzeAffine(const std::vector<const Op*>& tiles, int64_t n, std::vector<LV*>& guards) {
  affine_.clear();
  auto of = [&](const tl::Value* v) -> const Affine* {
    auto it = affine_.find(v);
    return it == affine_.end() ? nullptr : &it->second;
  };
  for (const Op* op : tiles) {
    if (op->numResults() != 1) continue;
    const Type& t = op->result()->type;
    if (!t.isPtr && t.dtype != DType::I32 && t.dtype != DType::I64) continue;
    const bool narrow = !t.isPtr && t.dtype == DType::I32;
    Affine a;
    switch (op->kind) {
      case OpKind::Arange:
        if (t.rank() != 1) continue;
        a = {c64(op->intAttr("start")), 1, narrow};
        break;
      case OpKind::Constant: a = {c64(op->intAttr("value")), 0, narrow}; break;
      case OpKind::Splat: {
        LV* s = scalarOf(op->operand(0));
        a = {s->getType() == i64() ? s : B_.CreateSExt(s, i64()), 0, narrow};
        break;
      }
      case OpKind::ConvertLayout:
      case OpKind::Convert: {
        const Affine* x = of(op->operand(0));
        if (!x || op->operand(0)->type.dtype == DType::I1) continue;
        a = {x->base, x->stride, narrow};
        break;
      }
      case OpKind::Add:
      case OpKind::Sub: {
        const Affine *x = of(op->operand(0)), *y = of(op->operand(1));
        if (!x || !y) continue;
        const bool add = op->kind == OpKind::Add;
        a = {add ? B_.CreateAdd(x->base, y->base) : B_.CreateSub(x->base, y->base), add ? x->stride + y->stride : x->stride - y->stride,
             narrow};
        break;
      }
      case OpKind::Mul: {
        const Affine *x = of(op->operand(0)), *y = of(op->operand(1));
        if (!x || !y) continue;
        if (x->stride != 0) std::swap(x, y);  // x: the factor that is the same in every element
        if (x->stride != 0) continue;
        if (y->stride == 0) {
          a = {B_.CreateMul(x->base, y->base), 0, narrow};
        } else if (auto* c = llvm::dyn_cast<llvm::ConstantInt>(x->base)) {
          a = {B_.CreateMul(y->base, x->base), y->stride * c->getSExtValue(), narrow};
        } else {
          continue;
        }
        break;
      }
      case OpKind::AddPtr: {
        const Affine *p = of(op->operand(0)), *o = of(op->operand(1));
        if (!p || !o) continue;
        const int64_t esize = dtypeBytes(t.dtype);
        a = {B_.CreateAdd(p->base, B_.CreateMul(o->base, c64(esize))), p->stride + o->stride * esize, false};
        break;
      }
      default: continue;
    }
    if (a.narrow) {
      LV* last = B_.CreateAdd(a.base, c64(a.stride * (n - 1)));
      for (LV* e : {a.base, last})
        guards.push_back(B_.CreateAnd(B_.CreateICmpSGE(e, c64(INT32_MIN)), B_.CreateICmpSLE(e, c64(INT32_MAX))));
    }
    affine_[op->result()] = a;
  }
}

void ProgramEmitter::emitCluster(const Region& r, size_t begin, size_t end) {
  std::vector<const Op*> tiles, mem;
  for (size_t k = begin; k < end; ++k) {
    const Op& op = *r.ops[k];
    if (pureScalar(op)) emitOp(op);
    else tiles.push_back(&op);
  }
  const std::unordered_set<const Op*> inside(tiles.begin(), tiles.end());
  for (const Op* op : tiles)
    if (op->kind == OpKind::Load || op->kind == OpKind::Store) mem.push_back(op);
  const int64_t n = Type::tile(DType::I32, *fusibleTile(*tiles[0])).numel();
  auto escapes = [&](const tl::Value* v) {
    for (const Op* u : users_[v])
      if (!inside.count(u)) return true;
    return false;
  };
  auto fusedLoop = [&] {
    chunks(n, [&](LV* i, int W) {
      std::unordered_map<const tl::Value*, LV*> vals;
      for (const Op* op : tiles) {
        LV* v = fusedValue(*op, vals, i, W);
        if (!v) continue;
        vals[op->result()] = v;
        if (escapes(op->result())) store(op->result(), i, v);
      }
    });
  };
  affine_.clear();
  if (mem.empty()) return fusedLoop();

  std::vector<LV*> guards;
  analyzeAffine(tiles, n, guards);
  // An affine pointer's range is known before the loop: every element of the tile, masked or
  // not (a conservative range: when masked-off elements lie outside the buffer, the ops run one
  // by one, exactly). Other memory ops accumulate their active addresses in a checking loop
  // over just what their addresses and masks need.
  auto affinePtr = [&](const Op* m) { return affine_.count(m->operand(0)) > 0; };
  std::unordered_set<const Op*> slice;
  std::vector<const tl::Value*> work;
  for (const Op* m : mem) {
    if (affinePtr(m)) continue;
    work.push_back(m->operand(0));
    const size_t maskAt = m->kind == OpKind::Load ? 1 : 2;
    if (m->numOperands() > maskAt) work.push_back(m->operand(maskAt));
  }
  while (!work.empty()) {
    const tl::Value* v = work.back();
    work.pop_back();
    if (!v->def || !inside.count(v->def) || !slice.insert(v->def).second) continue;
    for (const tl::Value* o : v->def->operands) work.push_back(o);
  }
  std::vector<AccessRange> ranges;
  bool loopNeeded = false;
  for (const Op* m : mem) {
    ranges.push_back(affinePtr(m) ? AccessRange{} : newRange(n, dtypeBytes(m->operand(0)->type.dtype)));
    loopNeeded |= !affinePtr(m);
  }
  if (loopNeeded) chunks(n, [&](LV* i, int W) {
    std::unordered_map<const tl::Value*, LV*> vals;
    for (const Op* op : tiles)
      if (slice.count(op)) vals[op->result()] = fusedValue(*op, vals, i, W);
    for (size_t k = 0; k < mem.size(); ++k) {
      const Op& m = *mem[k];
      if (affinePtr(&m)) continue;
      auto in = [&](const tl::Value* v) {
        auto it = vals.find(v);
        return it != vals.end() ? it->second : load(v, i, W);
      };
      const size_t maskAt = m.kind == OpKind::Load ? 1 : 2;
      accumulateRange(ranges[k], in(m.operand(0)), m.numOperands() > maskAt ? in(m.operand(maskAt)) : allOn(W), W);
    }
  });
  auto quick = helper("tl_cpu_quick_check", i32(), {ptrTy(), i32(), i64(), i64(), i64()});
  LV* fine = B_.getTrue();
  for (LV* g : guards) fine = B_.CreateAnd(fine, g);
  for (size_t k = 0; k < mem.size(); ++k) {
    std::array<LV*, 3> range;
    if (affinePtr(mem[k])) {
      const Affine& a = affine_.at(mem[k]->operand(0));
      const int64_t esize = dtypeBytes(mem[k]->operand(0)->type.dtype);
      LV* last = B_.CreateAdd(a.base, c64(a.stride * (n - 1)));
      LV* lo = a.stride >= 0 ? a.base : last;
      LV* hi = B_.CreateAdd(a.stride >= 0 ? last : a.base, c64(esize));
      range = {lo, hi, B_.CreateOr(B_.CreateAnd(a.base, c64(esize - 1)), c64(a.stride & (esize - 1)))};
    } else {
      range = rangeOf(ranges[k]);
    }
    fine = B_.CreateAnd(fine, B_.CreateICmpEQ(B_.CreateCall(quick, {ctx_, c32(opIndex(*mem[k])), range[0], range[1], range[2]}), c32(0)));
  }
  llvm::BasicBlock* fused = llvm::BasicBlock::Create(C_, "fused", F_);
  llvm::BasicBlock* oneByOne = llvm::BasicBlock::Create(C_, "op.by.op", F_);
  llvm::BasicBlock* join = llvm::BasicBlock::Create(C_, "cluster.end", F_);
  B_.CreateCondBr(fine, fused, oneByOne, llvm::MDBuilder(C_).createBranchWeights(1 << 20, 1));
  B_.SetInsertPoint(oneByOne);
  for (const Op* op : tiles) emitOp(*op);
  B_.CreateBr(join);
  B_.SetInsertPoint(fused);
  fusedLoop();
  B_.CreateBr(join);
  B_.SetInsertPoint(join);
  affine_.clear();
}

void ProgramEmitter::emitOp(const Op& op) {
  switch (op.kind) {
    case OpKind::ProgramId:
      ssa_[op.result()] = B_.CreateTrunc(pid_[op.intAttr("axis")], i32());
      return;
    case OpKind::NumPrograms:
      ssa_[op.result()] = B_.CreateTrunc(ctxField(2 + static_cast<int>(op.intAttr("axis"))), i32());
      return;
    case OpKind::Constant: return emitConstant(op);
    case OpKind::Arange: {
      const tl::Value* r = op.result();
      const int64_t start = op.intAttr("start");
      chunks(r->type.numel(), [&](LV* i, int L) {
        std::vector<llvm::Constant*> iota;
        for (int k = 0; k < L; ++k) iota.push_back(B_.getInt32(static_cast<uint32_t>(k)));
        LV* base = splat(B_.CreateTrunc(B_.CreateAdd(i, c64(start)), i32()), L);
        store(r, i, B_.CreateAdd(base, llvm::ConstantVector::get(iota)));
      });
      return;
    }
    case OpKind::Splat: {
      LV* s = scalarOf(op.operand(0));
      const tl::Value* r = op.result();
      chunks(r->type.numel(), [&](LV* i, int L) { store(r, i, splat(s, L)); });
      return;
    }
    case OpKind::Broadcast:
    case OpKind::ExpandDims:
    case OpKind::ConvertLayout:
    case OpKind::Trans:
    case OpKind::Reshape:
    case OpKind::Join:
    case OpKind::Split: return emitShape(op);
    case OpKind::Load: return emitLoad(op);
    case OpKind::Store: return emitStore(op);
    case OpKind::AtomicRMW:
    case OpKind::AtomicCAS: return emitAtomic(op);
    case OpKind::DebugBarrier: return;  // one program runs as one thread
    case OpKind::DevicePrint: return emitPrint(op);
    case OpKind::DeviceAssert: return emitAssert(op);
    case OpKind::Reduce: return emitReduce(op);
    case OpKind::Argmax: return emitArgmax(op);
    case OpKind::Scan: return emitScan(op);
    case OpKind::Dot: return emitDot(op);
    case OpKind::For: return emitFor(op);
    case OpKind::If: return emitIf(op);
    case OpKind::While: return emitWhile(op);
    case OpKind::Return: B_.CreateRet(c32(0)); return;
    case OpKind::Yield:
    case OpKind::Condition: return;  // handled by the enclosing op
    default: break;
  }
  if (op.info().category == OpCategory::Elementwise) return emitElementwise(op);
  throw RuntimeError(op.loc, std::string("tl-cpu: op '") + mnemonic(op.kind) + "' is not compiled for the CPU");
}

void ProgramEmitter::emitConstant(const Op& op) {
  const tl::Value* r = op.result();
  const Type& t = r->type;
  LV* c = constantOf(op);
  if (t.isScalar()) {
    ssa_[r] = c;
    return;
  }
  chunks(t.numel(), [&](LV* i, int L) { store(r, i, splat(c, L)); });
}

void ProgramEmitter::emitElementwise(const Op& op) {
  const tl::Value* r = op.result();
  if (r->type.isScalar()) {
    std::vector<LV*> x;
    for (const tl::Value* v : op.operands) x.push_back(scalarOf(v));
    ssa_[r] = elementwise(op, x, c64(-1));
    return;
  }
  chunks(r->type.numel(), [&](LV* i, int L) {
    std::vector<LV*> x;
    for (const tl::Value* v : op.operands) x.push_back(load(v, i, L));
    store(r, i, elementwise(op, x, i));
  });
}

// dst[dstOffset + sum idx_d * dstStrides[d]] = src[srcOffset + sum idx_d * srcStrides[d]] over
// the index space `dims`; the innermost dimension as vectors when both strides are 1 (a copy) or
// the source's is 0 (a broadcast), else element by element.
void ProgramEmitter::emitCopy(const tl::Value* dst, const tl::Value* src, const Shape& dims,
                              const std::vector<int64_t>& dstStrides, int64_t dstOffset,
                              const std::vector<int64_t>& srcStrides, int64_t srcOffset) {
  const size_t rank = dims.size();
  std::function<void(size_t, LV*, LV*)> rec = [&](size_t d, LV* dOff, LV* sOff) {
    if (d + 1 == rank) {
      const int64_t n = dims[d], ds = dstStrides[d], ss = srcStrides[d];
      if (ds == 1 && (ss == 1 || ss == 0)) {
        LV* one = ss == 0 ? loadElem(src, sOff) : nullptr;
        chunks(n, [&](LV* i, int L) {
          store(dst, B_.CreateAdd(dOff, i), ss == 0 ? splat(one, L) : load(src, B_.CreateAdd(sOff, i), L));
        });
        return;
      }
      loop(0, n, 1, [&](LV* i) {
        storeElem(dst, B_.CreateAdd(dOff, B_.CreateMul(i, c64(ds))), loadElem(src, B_.CreateAdd(sOff, B_.CreateMul(i, c64(ss)))));
      });
      return;
    }
    loop(0, dims[d], 1, [&](LV* i) {
      rec(d + 1, B_.CreateAdd(dOff, B_.CreateMul(i, c64(dstStrides[d]))), B_.CreateAdd(sOff, B_.CreateMul(i, c64(srcStrides[d]))));
    });
  };
  if (rank == 0) {
    storeElem(dst, c64(dstOffset), loadElem(src, c64(srcOffset)));
    return;
  }
  rec(0, c64(dstOffset), c64(srcOffset));
}

void ProgramEmitter::copyTile(const tl::Value* dst, const tl::Value* src) {
  const int64_t bytes = src->type.numel() * storeBytes(src->type);
  B_.CreateMemCpy(base(dst), llvm::Align(kScratchAlignment), base(src), llvm::Align(kScratchAlignment), static_cast<uint64_t>(bytes));
}

void ProgramEmitter::emitShape(const Op& op) {
  const tl::Value* r = op.result();
  const tl::Value* x = op.operand(0);
  const Shape& out = r->type.shape;
  const Shape& in = x->type.shape;
  auto strides = [](const Shape& s) {
    std::vector<int64_t> st(s.size());
    for (size_t d = 0; d < s.size(); ++d) st[d] = rowMajorStride(s, d);
    return st;
  };
  switch (op.kind) {
    case OpKind::ExpandDims:
    case OpKind::ConvertLayout:
    case OpKind::Reshape:
      if (x->type.isScalar()) {  // expand_dims of a scalar: a one-element tile
        storeElem(r, c64(0), scalarOf(x));
        return;
      }
      return copyTile(r, x);
    case OpKind::Broadcast: {
      if (x->type.isScalar()) {
        LV* s = scalarOf(x);
        chunks(r->type.numel(), [&](LV* i, int L) { store(r, i, splat(s, L)); });
        return;
      }
      std::vector<int64_t> ss = strides(in);
      for (size_t d = 0; d < out.size(); ++d)
        if (in[d] == 1 && out[d] != 1) ss[d] = 0;
      return emitCopy(r, x, out, strides(out), 0, ss, 0);
    }
    case OpKind::Trans: {
      const std::vector<int> order = transOrder(op);
      const std::vector<int64_t> is = strides(in);
      std::vector<int64_t> ss(out.size());
      for (size_t j = 0; j < out.size(); ++j) ss[j] = is[static_cast<size_t>(order[j])];
      return emitCopy(r, x, out, strides(out), 0, ss, 0);
    }
    case OpKind::Join: {
      std::vector<int64_t> ds = strides(in);
      for (auto& s : ds) s *= 2;
      for (int k = 0; k < 2; ++k) {
        const tl::Value* src = op.operand(static_cast<size_t>(k));
        if (src->type.isScalar()) {
          storeElem(r, c64(k), scalarOf(src));
          continue;
        }
        emitCopy(r, src, in, ds, k, strides(in), 0);
      }
      return;
    }
    case OpKind::Split: {
      const int64_t index = op.intAttr("index");
      if (r->type.isScalar()) {
        ssa_[r] = loadElem(x, c64(index));
        return;
      }
      std::vector<int64_t> ss = strides(in);
      ss.pop_back();
      return emitCopy(r, x, out, strides(out), 0, ss, index);
    }
    default: break;
  }
}

// --- memory ------------------------------------------------------------------------------------

llvm::Type* ProgramEmitter::memTy(DType d, int L) {
  llvm::Type* e = nullptr;
  switch (d) {
    case DType::F32: e = f32(); break;
    case DType::F16: e = B_.getHalfTy(); break;
    case DType::BF16: e = B_.getInt16Ty(); break;
    case DType::I32: e = i32(); break;
    case DType::I64: e = i64(); break;
    case DType::I1:
    case DType::F8E4M3:
    case DType::F8E5M2: e = i8(); break;
  }
  return vecOf(e, L);
}

// Memory's element (vector) -> the tile's storage: f16 widened, bf16 shifted, fp8 decoded, i1 as 0/1.
LV* ProgramEmitter::memToStore(LV* m, DType d) {
  const int L = vecWidth(m);
  switch (d) {
    case DType::F16: return B_.CreateFPExt(m, vecOf(f32(), L));
    case DType::BF16: return B_.CreateBitCast(B_.CreateShl(B_.CreateZExt(m, vecOf(i32(), L)), intConst(vecOf(i32(), L), 16)), vecOf(f32(), L));
    case DType::F8E4M3:
    case DType::F8E5M2: {
      auto dec = helper("tl_cpu_fp8_to_float", f32(), {i8(), i32()});
      return perLane(m, [&](LV* e) { return B_.CreateCall(dec, {e, c32(static_cast<int>(d))}); });
    }
    case DType::I1: return B_.CreateZExt(B_.CreateICmpNE(m, llvm::Constant::getNullValue(m->getType())), m->getType());
    default: return m;
  }
}

// The tile's storage (vector) -> memory's element.
LV* ProgramEmitter::storeToMem(LV* x, DType d) {
  const int L = vecWidth(x);
  switch (d) {
    case DType::F16: return B_.CreateFPTrunc(x, vecOf(B_.getHalfTy(), L));
    case DType::BF16: return bf16Bits(x, false);
    case DType::F8E4M3:
    case DType::F8E5M2: {
      auto enc = helper("tl_cpu_float_to_fp8", i8(), {f32(), i32()});
      return perLane(x, [&](LV* e) { return B_.CreateCall(enc, {e, c32(static_cast<int>(d))}); });
    }
    default: return x;
  }
}

// A scalar's value in a stack slot (for helpers that take arrays).
LV* ProgramEmitter::spill(const tl::Value* v) {
  LV* x = scalarOf(v);
  if (x->getType() == i1()) x = B_.CreateZExt(x, i8());
  LV* slot = local(x->getType());
  B_.CreateStore(x, slot);
  return slot;
}

// Accumulates the active addresses of one chunk (p, on: W lanes) into the L-lane minimum, end
// and low-bit OR of a memory op's range check (W < L: the scalar tail, folded into every lane).
void ProgramEmitter::accumulateRange(const AccessRange& r, LV* p, LV* on, int W) {
  llvm::Type* wt = vecOf(i64(), W);
  LV* lo = B_.CreateSelect(on, p, llvm::Constant::getAllOnesValue(wt));
  LV* hi = B_.CreateSelect(on, B_.CreateAdd(p, intConst(wt, r.esize)), llvm::Constant::getNullValue(wt));
  LV* mis = B_.CreateSelect(on, B_.CreateAnd(p, intConst(wt, r.esize - 1)), llvm::Constant::getNullValue(wt));
  if (W != r.lanes) {
    lo = B_.CreateVectorSplat(static_cast<unsigned>(r.lanes), B_.CreateExtractElement(lo, uint64_t(0)));
    hi = B_.CreateVectorSplat(static_cast<unsigned>(r.lanes), B_.CreateExtractElement(hi, uint64_t(0)));
    mis = B_.CreateVectorSplat(static_cast<unsigned>(r.lanes), B_.CreateExtractElement(mis, uint64_t(0)));
  }
  llvm::Type* vt = vecOf(i64(), r.lanes);
  B_.CreateStore(B_.CreateBinaryIntrinsic(llvm::Intrinsic::umin, B_.CreateLoad(vt, r.lo), lo), r.lo);
  B_.CreateStore(B_.CreateBinaryIntrinsic(llvm::Intrinsic::umax, B_.CreateLoad(vt, r.hi), hi), r.hi);
  B_.CreateStore(B_.CreateOr(B_.CreateLoad(vt, r.mis), mis), r.mis);
}

ProgramEmitter::AccessRange ProgramEmitter::newRange(int64_t n, int64_t esize) {
  AccessRange r;
  r.lanes = static_cast<int>(std::min<int64_t>(lanes_, n));
  r.esize = esize;
  llvm::Type* vt = vecOf(i64(), r.lanes);
  r.lo = local(vt);
  r.hi = local(vt);
  r.mis = local(vt);
  B_.CreateStore(llvm::Constant::getAllOnesValue(vt), r.lo);
  B_.CreateStore(llvm::Constant::getNullValue(vt), r.hi);
  B_.CreateStore(llvm::Constant::getNullValue(vt), r.mis);
  return r;
}

// {lo, hiEnd, misaligned} of an accumulated range, as i64 scalars.
std::array<LV*, 3> ProgramEmitter::rangeOf(const AccessRange& r) {
  llvm::Type* vt = vecOf(i64(), r.lanes);
  return {B_.CreateUnaryIntrinsic(llvm::Intrinsic::vector_reduce_umin, B_.CreateLoad(vt, r.lo)),
          B_.CreateUnaryIntrinsic(llvm::Intrinsic::vector_reduce_umax, B_.CreateLoad(vt, r.hi)),
          B_.CreateOrReduce(B_.CreateLoad(vt, r.mis))};
}

void ProgramEmitter::checkAccess(const Op& op, const tl::Value* ptrs, const tl::Value* mask, int64_t esize) {
  auto check = helper("tl_cpu_check_access", i32(),
                      {ptrTy(), i32(), i64(), i64(), i64(), ptrTy(), ptrTy(), i64(), i64(), i64(), i64()});
  if (ptrs->type.isScalar()) {
    LV* p = scalarOf(ptrs);
    LV* on = mask ? scalarOf(mask) : B_.getTrue();
    LV* lo = B_.CreateSelect(on, p, c64(-1));
    LV* hi = B_.CreateSelect(on, B_.CreateAdd(p, c64(esize)), c64(0));
    LV* mis = B_.CreateSelect(on, B_.CreateAnd(p, c64(esize - 1)), c64(0));
    LV* maskSlot = mask ? spill(mask) : llvm::ConstantPointerNull::get(B_.getPtrTy());
    LV* st = B_.CreateCall(check, {ctx_, c32(opIndex(op)), lo, hi, mis, spill(ptrs), maskSlot, c64(1), pid_[0], pid_[1], pid_[2]});
    returnIfFailed(st);
    return;
  }
  const int64_t n = ptrs->type.numel();
  const AccessRange range = newRange(n, esize);
  chunks(n, [&](LV* i, int W) { accumulateRange(range, load(ptrs, i, W), mask ? load(mask, i, W) : allOn(W), W); });
  const auto [lo, hi, mis] = rangeOf(range);
  LV* maskPtr = mask ? base(mask) : llvm::ConstantPointerNull::get(B_.getPtrTy());
  LV* st = B_.CreateCall(check, {ctx_, c32(opIndex(op)), lo, hi, mis, base(ptrs), maskPtr, c64(n), pid_[0], pid_[1], pid_[2]});
  returnIfFailed(st);
}

// The L-lane chunk of a load at addresses p (virtual) where `on`: consecutive addresses are one
// masked vector load, any others a gather; lanes that are off give `other` (or 0). The
// addresses were checked.
LV* ProgramEmitter::loadChunk(const Op& op, LV* p, LV* on, LV* other, int L, LV* contiguousAt) {
  const DType d = op.operand(0)->type.dtype;
  const int64_t esize = dtypeBytes(d);
  const llvm::Align align(static_cast<uint64_t>(esize));
  llvm::Type* mt = memTy(d, L);
  LV* zero = llvm::Constant::getNullValue(mt);
  LV* m;
  LV* host = contiguousAt ? nullptr : B_.CreateAdd(p, splat(ctxField(0), L));
  if (contiguousAt) {
    m = B_.CreateMaskedLoad(mt, B_.CreateIntToPtr(B_.CreateAdd(contiguousAt, ctxField(0)), ptrTy()), align, on, zero);
  } else if (L == 1) {
    m = B_.CreateMaskedLoad(mt, B_.CreateIntToPtr(B_.CreateExtractElement(host, uint64_t(0)), ptrTy()), align, on, zero);
  } else {
    LV* first = B_.CreateExtractElement(host, uint64_t(0));
    llvm::BasicBlock* vec = llvm::BasicBlock::Create(C_, "contiguous", F_);
    llvm::BasicBlock* gat = llvm::BasicBlock::Create(C_, "gather", F_);
    llvm::BasicBlock* join = llvm::BasicBlock::Create(C_, "loaded", F_);
    B_.CreateCondBr(consecutive(host, first, esize, L), vec, gat);
    B_.SetInsertPoint(vec);
    LV* a = B_.CreateMaskedLoad(mt, B_.CreateIntToPtr(first, ptrTy()), align, on, zero);
    B_.CreateBr(join);
    B_.SetInsertPoint(gat);
    LV* g = B_.CreateMaskedGather(mt, B_.CreateIntToPtr(host, vecOf(ptrTy(), L)), align, on, zero);
    B_.CreateBr(join);
    B_.SetInsertPoint(join);
    llvm::PHINode* phi = B_.CreatePHI(mt, 2);
    phi->addIncoming(a, vec);
    phi->addIncoming(g, gat);
    m = phi;
  }
  LV* v = memToStore(m, d);
  if (d == DType::I1) v = B_.CreateICmpNE(v, llvm::Constant::getNullValue(v->getType()));
  return other ? B_.CreateSelect(on, v, other) : v;
}

// Whether the L addresses in `host` are first, first + esize, ... (one vector access).
LV* ProgramEmitter::consecutive(LV* host, LV* first, int64_t esize, int L) {
  std::vector<llvm::Constant*> step;
  for (int k = 0; k < L; ++k) step.push_back(B_.getInt64(static_cast<uint64_t>(k * esize)));
  return B_.CreateAndReduce(B_.CreateICmpEQ(host, B_.CreateAdd(splat(first, L), llvm::ConstantVector::get(step))));
}

// The L-lane chunk of a store of x (compute type) at addresses p where `on` (checked), and with
// trackStores the shadow byte of every element written.
void ProgramEmitter::storeChunk(const Op& op, LV* p, LV* on, LV* x, int L, LV* contiguousAt) {
  const DType d = op.operand(0)->type.dtype;
  const int64_t esize = dtypeBytes(d);
  const llvm::Align align(static_cast<uint64_t>(esize));
  if (x->getType()->getScalarType() == i1()) x = B_.CreateZExt(x, vecOf(i8(), L));
  LV* m = storeToMem(x, d);
  if (contiguousAt) {
    B_.CreateMaskedStore(m, B_.CreateIntToPtr(B_.CreateAdd(contiguousAt, ctxField(0)), ptrTy()), align, on);
    if (opts_.trackStores) {
      std::vector<llvm::Constant*> step;
      for (int k = 0; k < L; ++k) step.push_back(B_.getInt64(static_cast<uint64_t>(k * esize)));
      p = B_.CreateAdd(splat(contiguousAt, L), llvm::ConstantVector::get(step));
    }
  } else if (L == 1) {
    LV* host = B_.CreateAdd(p, splat(ctxField(0), L));
    B_.CreateMaskedStore(m, B_.CreateIntToPtr(B_.CreateExtractElement(host, uint64_t(0)), ptrTy()), align, on);
  } else {
    LV* host = B_.CreateAdd(p, splat(ctxField(0), L));
    LV* first = B_.CreateExtractElement(host, uint64_t(0));
    llvm::BasicBlock* vec = llvm::BasicBlock::Create(C_, "contiguous", F_);
    llvm::BasicBlock* sca = llvm::BasicBlock::Create(C_, "scatter", F_);
    llvm::BasicBlock* join = llvm::BasicBlock::Create(C_, "stored", F_);
    B_.CreateCondBr(consecutive(host, first, esize, L), vec, sca);
    B_.SetInsertPoint(vec);
    B_.CreateMaskedStore(m, B_.CreateIntToPtr(first, ptrTy()), align, on);
    B_.CreateBr(join);
    B_.SetInsertPoint(sca);
    B_.CreateMaskedScatter(m, B_.CreateIntToPtr(host, vecOf(ptrTy(), L)), align, on);
    B_.CreateBr(join);
    B_.SetInsertPoint(join);
  }
  if (opts_.trackStores) {
    LV* at = B_.CreateIntToPtr(B_.CreateAdd(p, splat(ctxField(1), L)), vecOf(ptrTy(), L));
    B_.CreateMaskedScatter(llvm::ConstantInt::get(vecOf(i8(), L), 1), at, llvm::Align(1), on);
  }
}

LV* ProgramEmitter::allOn(int L) { return llvm::Constant::getAllOnesValue(vecOf(i1(), L)); }

void ProgramEmitter::emitLoad(const Op& op) {
  const tl::Value* ptrs = op.operand(0);
  const tl::Value* mask = op.numOperands() > 1 ? op.operand(1) : nullptr;
  const tl::Value* other = op.numOperands() > 2 ? op.operand(2) : nullptr;
  const tl::Value* r = op.result();
  checkAccess(op, ptrs, mask, dtypeBytes(ptrs->type.dtype));
  if (ptrs->type.isScalar()) {
    LV* on = mask ? scalarOf(mask) : B_.getTrue();
    LV* v = B_.CreateExtractElement(loadChunk(op, B_.CreateVectorSplat(1, scalarOf(ptrs)), B_.CreateVectorSplat(1, on), nullptr, 1),
                                    uint64_t(0));
    ssa_[r] = other ? B_.CreateSelect(on, v, scalarOf(other)) : v;
    return;
  }
  chunks(r->type.numel(), [&](LV* i, int L) {
    store(r, i, loadChunk(op, load(ptrs, i, L), mask ? load(mask, i, L) : allOn(L), other ? load(other, i, L) : nullptr, L));
  });
}

void ProgramEmitter::emitStore(const Op& op) {
  const tl::Value* ptrs = op.operand(0);
  const tl::Value* val = op.operand(1);
  const tl::Value* mask = op.numOperands() > 2 ? op.operand(2) : nullptr;
  checkAccess(op, ptrs, mask, dtypeBytes(ptrs->type.dtype));
  if (ptrs->type.isScalar()) {
    storeChunk(op, B_.CreateVectorSplat(1, scalarOf(ptrs)), B_.CreateVectorSplat(1, mask ? scalarOf(mask) : B_.getTrue()),
               B_.CreateVectorSplat(1, scalarOf(val)), 1);
    return;
  }
  chunks(ptrs->type.numel(), [&](LV* i, int L) {
    storeChunk(op, load(ptrs, i, L), mask ? load(mask, i, L) : allOn(L), load(val, i, L), L);
  });
}

void ProgramEmitter::emitAtomic(const Op& op) {
  const bool cas = op.kind == OpKind::AtomicCAS;
  const size_t values = cas ? 2 : 1;
  const tl::Value* ptrs = op.operand(0);
  const tl::Value* val = op.operand(values);
  const tl::Value* cmp = cas ? op.operand(1) : nullptr;
  const tl::Value* mask = op.numOperands() > values + 1 ? op.operand(values + 1) : nullptr;
  const tl::Value* r = op.result();
  checkAccess(op, ptrs, mask, dtypeBytes(ptrs->type.dtype));
  auto f = helper("tl_cpu_atomic", B_.getVoidTy(), {ptrTy(), i32(), ptrTy(), ptrTy(), ptrTy(), ptrTy(), ptrTy(), i64()});
  LV* null = llvm::ConstantPointerNull::get(B_.getPtrTy());
  if (ptrs->type.isScalar()) {
    LV* out = local(storeTy(r->type));
    B_.CreateCall(f, {ctx_, c32(opIndex(op)), spill(ptrs), spill(val), cmp ? spill(cmp) : null, mask ? spill(mask) : null, out, c64(1)});
    ssa_[r] = B_.CreateLoad(storeTy(r->type), out);
    return;
  }
  B_.CreateCall(f, {ctx_, c32(opIndex(op)), base(ptrs), base(val), cmp ? base(cmp) : null, mask ? base(mask) : null, base(r),
                    c64(ptrs->type.numel())});
}

void ProgramEmitter::emitPrint(const Op& op) {
  prints = true;
  llvm::Type* arr = llvm::ArrayType::get(ptrTy(), std::max<size_t>(1, op.numOperands()));
  LV* table = local(arr);
  for (size_t k = 0; k < op.numOperands(); ++k) {
    const tl::Value* v = op.operand(k);
    B_.CreateStore(v->type.isScalar() ? spill(v) : base(v), B_.CreateConstInBoundsGEP2_64(arr, table, 0, k));
  }
  auto f = helper("tl_cpu_print", B_.getVoidTy(), {ptrTy(), i32(), ptrTy(), i64(), i64(), i64()});
  B_.CreateCall(f, {ctx_, c32(opIndex(op)), table, pid_[0], pid_[1], pid_[2]});
}

void ProgramEmitter::emitAssert(const Op& op) {
  const tl::Value* c = op.operand(0);
  if (c->type.isScalar()) {
    failIf(B_.CreateNot(scalarOf(c)), op, CpuFault::AssertFailed, c64(-1));
    return;
  }
  chunks(c->type.numel(), [&](LV* i, int L) {
    LV* bad = B_.CreateNot(load(c, i, L));
    failIf(anyLane(bad), op, CpuFault::AssertFailed, B_.CreateAdd(i, firstLane(bad)));
  });
}

// --- reductions --------------------------------------------------------------------------------

void ProgramEmitter::emitReduce(const Op& op) {
  const tl::Value* x = op.operand(0);
  const tl::Value* r = op.result();
  const Shape& s = x->type.shape;
  const size_t axis = static_cast<size_t>(op.intAttr("axis"));
  const std::string& kind = op.strAttr("kind");
  int64_t outer = 1, inner = 1;
  for (size_t d = 0; d < axis; ++d) outer *= s[d];
  for (size_t d = axis + 1; d < s.size(); ++d) inner *= s[d];
  const int64_t R = s[axis];
  const DType dt = x->type.dtype;
  const bool fp = isFloat(dt);
  llvm::Type* et = compTy(x->type);
  auto identity = [&](llvm::Type* ty) -> LV* {
    if (kind == "sum") return fp ? llvm::ConstantFP::getNegativeZero(ty) : llvm::Constant::getNullValue(ty);
    if (fp) return llvm::ConstantFP::getInfinity(ty, kind == "max");
    if (et == i1()) return kind == "max" ? llvm::Constant::getNullValue(ty) : llvm::Constant::getAllOnesValue(ty);
    const unsigned bits = et->getScalarSizeInBits();
    return kind == "max" ? llvm::ConstantInt::get(ty, llvm::APInt::getSignedMinValue(bits))
                         : llvm::ConstantInt::get(ty, llvm::APInt::getSignedMaxValue(bits));
  };
  auto combine = [&](LV* a, LV* b) -> LV* {
    if (kind == "sum") return fp ? B_.CreateFAdd(a, b) : B_.CreateAdd(a, b);
    if (fp) return B_.CreateBinaryIntrinsic(kind == "max" ? llvm::Intrinsic::maximum : llvm::Intrinsic::minimum, a, b);
    if (et == i1()) return kind == "max" ? B_.CreateOr(a, b) : B_.CreateAnd(a, b);
    return B_.CreateBinaryIntrinsic(kind == "max" ? llvm::Intrinsic::smax : llvm::Intrinsic::smin, a, b);
  };
  auto horizontal = [&](LV* v) -> LV* {
    if (!v->getType()->isVectorTy()) return v;
    if (kind == "sum") return fp ? B_.CreateFAddReduce(llvm::ConstantFP::getNegativeZero(et), v) : B_.CreateAddReduce(v);
    if (fp) return B_.CreateUnaryIntrinsic(kind == "max" ? llvm::Intrinsic::vector_reduce_fmaximum : llvm::Intrinsic::vector_reduce_fminimum, v);
    if (et == i1()) return kind == "max" ? B_.CreateOrReduce(v) : B_.CreateAndReduce(v);
    return kind == "max" ? B_.CreateIntMaxReduce(v, true) : B_.CreateIntMinReduce(v, true);
  };
  auto finish = [&](LV* v) { return fp ? roundTo(v, r->type.dtype) : v; };
  auto put = [&](LV* outIdx, LV* v) {
    if (r->type.isScalar()) ssa_[r] = v;
    else storeElem(r, outIdx, v);
  };
  if (inner == 1) {
    // Along a contiguous row: L partial results, then across the lanes.
    const int L = static_cast<int>(std::min<int64_t>(lanes_, R));
    llvm::Type* vt = vecOf(et, L);
    LV* acc = local(vt);
    LV* tail = local(et);
    loop(0, outer, 1, [&](LV* o) {
      B_.CreateStore(identity(vt), acc);
      B_.CreateStore(identity(et), tail);
      LV* row = B_.CreateMul(o, c64(R));
      const int64_t main = R / L * L;
      loop(0, main, L, [&](LV* i) { B_.CreateStore(combine(B_.CreateLoad(vt, acc), load(x, B_.CreateAdd(row, i), L)), acc); });
      loop(main, R, 1, [&](LV* i) { B_.CreateStore(combine(B_.CreateLoad(et, tail), loadElem(x, B_.CreateAdd(row, i))), tail); });
      put(o, finish(combine(horizontal(B_.CreateLoad(vt, acc)), B_.CreateLoad(et, tail))));
    });
    return;
  }
  // Across rows: vectors along the inner dimension, the rows in order.
  loop(0, outer, 1, [&](LV* o) {
    chunks(inner, [&](LV* j, int L) {
      llvm::Type* vt = vecOf(et, L);
      LV* acc = local(vt);
      B_.CreateStore(identity(vt), acc);
      LV* first = B_.CreateAdd(B_.CreateMul(o, c64(R * inner)), j);
      loop(0, R, 1, [&](LV* k) {
        B_.CreateStore(combine(B_.CreateLoad(vt, acc), load(x, B_.CreateAdd(first, B_.CreateMul(k, c64(inner))), L)), acc);
      });
      LV* v = B_.CreateLoad(vt, acc);
      if (fp) v = roundTo(v, r->type.dtype);
      if (r->type.isScalar()) {
        ssa_[r] = B_.CreateExtractElement(v, uint64_t(0));
        return;
      }
      store(r, B_.CreateAdd(B_.CreateMul(o, c64(inner)), j), v);
    });
  });
}

void ProgramEmitter::emitArgmax(const Op& op) {
  const tl::Value* x = op.operand(0);
  const tl::Value* r = op.result();
  const Shape& s = x->type.shape;
  const size_t axis = static_cast<size_t>(op.intAttr("axis"));
  int64_t outer = 1, inner = 1;
  for (size_t d = 0; d < axis; ++d) outer *= s[d];
  for (size_t d = axis + 1; d < s.size(); ++d) inner *= s[d];
  const int64_t R = s[axis];
  const bool fp = isFloat(x->type.dtype);
  llvm::Type* et = compTy(x->type);
  LV* best = local(et);
  LV* at = local(i32());
  loop(0, outer * inner, 1, [&](LV* oi) {
    LV* o = B_.CreateSDiv(oi, c64(inner));
    LV* j = B_.CreateSRem(oi, c64(inner));
    LV* first = B_.CreateAdd(B_.CreateMul(o, c64(R * inner)), j);
    B_.CreateStore(loadElem(x, first), best);
    B_.CreateStore(c32(0), at);
    loop(1, R, 1, [&](LV* k) {
      LV* v = loadElem(x, B_.CreateAdd(first, B_.CreateMul(k, c64(inner))));
      LV* b = B_.CreateLoad(et, best);
      // The first maximum; a NaN is the maximum (the first NaN wins).
      LV* better = fp ? B_.CreateAnd(B_.CreateFCmpORD(b, b), B_.CreateOr(B_.CreateFCmpUNO(v, v), B_.CreateFCmpOGT(v, b)))
                      : (et == i1() ? B_.CreateAnd(v, B_.CreateNot(b)) : B_.CreateICmpSGT(v, b));
      B_.CreateStore(B_.CreateSelect(better, v, b), best);
      B_.CreateStore(B_.CreateSelect(better, B_.CreateTrunc(k, i32()), B_.CreateLoad(i32(), at)), at);
    });
    LV* idx = B_.CreateLoad(i32(), at);
    if (r->type.isScalar()) ssa_[r] = idx;
    else storeElem(r, oi, idx);
  });
}

void ProgramEmitter::emitScan(const Op& op) {
  const tl::Value* x = op.operand(0);
  const tl::Value* r = op.result();
  const Shape& s = x->type.shape;
  const size_t axis = static_cast<size_t>(op.intAttr("axis"));
  const bool reverse = op.intAttr("reverse") != 0;
  const std::string& kind = op.strAttr("kind");
  int64_t outer = 1, inner = 1;
  for (size_t d = 0; d < axis; ++d) outer *= s[d];
  for (size_t d = axis + 1; d < s.size(); ++d) inner *= s[d];
  const int64_t R = s[axis];
  const DType dt = x->type.dtype;
  const bool fp = isFloat(dt);
  llvm::Type* et = compTy(x->type);
  LV* acc = local(et);
  loop(0, outer * inner, 1, [&](LV* oi) {
    LV* o = B_.CreateSDiv(oi, c64(inner));
    LV* j = B_.CreateSRem(oi, c64(inner));
    LV* first = B_.CreateAdd(B_.CreateMul(o, c64(R * inner)), j);
    auto at = [&](LV* k) {
      LV* kk = reverse ? B_.CreateSub(c64(R - 1), k) : k;
      return B_.CreateAdd(first, B_.CreateMul(kk, c64(inner)));
    };
    LV* x0 = loadElem(x, at(c64(0)));
    B_.CreateStore(x0, acc);
    storeElem(r, at(c64(0)), x0);
    loop(1, R, 1, [&](LV* k) {
      LV* a = B_.CreateLoad(et, acc);
      LV* v = loadElem(x, at(k));
      LV* n;
      if (kind == "sum") n = fp ? B_.CreateFAdd(a, v) : B_.CreateAdd(a, v);
      else if (kind == "prod") n = fp ? B_.CreateFMul(a, v) : B_.CreateMul(a, v);
      else if (fp) n = B_.CreateBinaryIntrinsic(kind == "max" ? llvm::Intrinsic::maximum : llvm::Intrinsic::minimum, a, v);
      else n = B_.CreateBinaryIntrinsic(kind == "max" ? llvm::Intrinsic::smax : llvm::Intrinsic::smin, a, v);
      if (fp) n = roundTo(n, dt);
      B_.CreateStore(n, acc);
      storeElem(r, at(k), n);
    });
  });
}

// out = acc + a @ b as a register-blocked micro-kernel: out is cut into blocks of MR rows by NV
// vectors of W lanes (8 x 2 x 16 on AVX-512: 16 accumulators of the 32 zmm registers; 4 x 2
// vectors below it); for each block the accumulators stay in registers over the whole k loop,
// each k loading NV vectors of b's row k once and broadcasting MR elements of a's column k into
// FMAs. The k terms are added in k order with one rounding per term (fma), as the GPU's FMA path
// does: within tolerance of tl-scalar's separately rounded products.
void ProgramEmitter::emitDot(const Op& op) {
  const tl::Value* a = op.operand(0);
  const tl::Value* b = op.operand(1);
  const tl::Value* acc = op.operand(2);
  const tl::Value* r = op.result();
  const Shape& as = a->type.shape;
  const Shape& bs = b->type.shape;
  const bool batched = as.size() == 3;
  const int64_t batch = batched ? as[0] : 1;
  const int64_t M = as[as.size() - 2], K = as.back(), N = bs.back();
  const std::string* prec = op.strAttrIf("precision");
  const bool tf32 = prec && *prec == "tf32";
  // truncToTf32 (runtime/FloatOps.h): the low 13 mantissa bits cleared, inf and NaN kept.
  auto toTf32 = [&](LV* v) {
    if (!tf32) return v;
    llvm::Type* it = v->getType()->isVectorTy() ? vecOf(i32(), vecWidth(v)) : i32();
    LV* bits = B_.CreateBitCast(v, it);
    LV* special = B_.CreateICmpEQ(B_.CreateAnd(bits, intConst(it, 0x7f800000)), intConst(it, 0x7f800000));
    return B_.CreateBitCast(B_.CreateSelect(special, bits, B_.CreateAnd(bits, intConst(it, ~0x1fff))), v->getType());
  };
  const bool roundOut = r->type.dtype == DType::F16;
  const int W = static_cast<int>(std::min<int64_t>(lanes_, N));
  const int NV = N % (2 * W) == 0 ? 2 : 1;
  const int64_t MR = std::min<int64_t>(M, lanes_ >= 16 ? 8 : 4);
  const int64_t rowBlocks = M / MR, rowTail = M % MR, colBlocks = N / (W * NV);
  const int64_t colTail = N % (W * NV);
  llvm::Type* vt = vecOf(f32(), W);
  // One block: rows [i0, i0 + rows), columns [j0, j0 + nv * width).
  auto block = [&](LV* aBase, LV* bBase, LV* cBase, LV* i0, int64_t rows, LV* j0, int nv, int width) {
    llvm::Type* bt = vecOf(f32(), width);
    std::vector<LV*> sums;
    for (int64_t rr = 0; rr < rows; ++rr)
      for (int v = 0; v < nv; ++v) {
        LV* slot = local(bt);
        LV* at = B_.CreateAdd(cBase, B_.CreateAdd(B_.CreateMul(B_.CreateAdd(i0, c64(rr)), c64(N)), B_.CreateAdd(j0, c64(v * width))));
        B_.CreateStore(load(acc, at, width), slot);
        sums.push_back(slot);
      }
    loop(0, K, 1, [&](LV* k) {
      std::vector<LV*> bv;
      for (int v = 0; v < nv; ++v)
        bv.push_back(toTf32(load(b, B_.CreateAdd(bBase, B_.CreateAdd(B_.CreateMul(k, c64(N)), B_.CreateAdd(j0, c64(v * width)))), width)));
      for (int64_t rr = 0; rr < rows; ++rr) {
        LV* ai = splat(toTf32(loadElem(a, B_.CreateAdd(aBase, B_.CreateAdd(B_.CreateMul(B_.CreateAdd(i0, c64(rr)), c64(K)), k)))), width);
        for (int v = 0; v < nv; ++v) {
          LV* slot = sums[static_cast<size_t>(rr * nv + v)];
          B_.CreateStore(B_.CreateIntrinsic(llvm::Intrinsic::fma, {bt}, {ai, bv[static_cast<size_t>(v)], B_.CreateLoad(bt, slot)}), slot);
        }
      }
    });
    for (int64_t rr = 0; rr < rows; ++rr)
      for (int v = 0; v < nv; ++v) {
        LV* x = B_.CreateLoad(bt, sums[static_cast<size_t>(rr * nv + v)]);
        LV* at = B_.CreateAdd(cBase, B_.CreateAdd(B_.CreateMul(B_.CreateAdd(i0, c64(rr)), c64(N)), B_.CreateAdd(j0, c64(v * width))));
        store(r, at, roundOut ? roundTo(x, DType::F16) : x);
      }
  };
  (void)vt;
  loop(0, batch, 1, [&](LV* bi) {
    LV* aBase = B_.CreateMul(bi, c64(M * K));
    LV* bBase = B_.CreateMul(bi, c64(K * N));
    LV* cBase = B_.CreateMul(bi, c64(M * N));
    auto rowsFrom = [&](LV* i0, int64_t rows) {
      loop(0, colBlocks, 1, [&](LV* jb) { block(aBase, bBase, cBase, i0, rows, B_.CreateMul(jb, c64(W * NV)), NV, W); });
      if (colTail) loop(N - colTail, N, 1, [&](LV* j) { block(aBase, bBase, cBase, i0, rows, j, 1, 1); });
    };
    loop(0, rowBlocks, 1, [&](LV* ib) { rowsFrom(B_.CreateMul(ib, c64(MR)), MR); });
    if (rowTail) rowsFrom(c64(M - rowTail), rowTail);
  });
}

// --- control flow ------------------------------------------------------------------------------

// dst_k = src_k for every k (tiles copied, through a temporary when src_k is another dst array).
void ProgramEmitter::assign(const std::vector<const tl::Value*>& dst, const std::vector<const tl::Value*>& src, const Op& at) {
  std::vector<const tl::Value*> from = src;
  std::vector<std::unique_ptr<tl::Value>> temps;
  for (size_t k = 0; k < dst.size(); ++k) {
    if (!dst[k]->type.isTile() || tileSlot(dst[k]) == tileSlot(src[k])) continue;
    bool clobbered = false;
    for (size_t j = 0; j < dst.size(); ++j)
      clobbered |= j != k && dst[j]->type.isTile() && tileSlot(dst[j]) == tileSlot(src[k]);
    if (!clobbered) continue;
    auto t = std::make_unique<tl::Value>();
    t->type = src[k]->type;
    copyTile(t.get(), src[k]);
    from[k] = t.get();
    temps.push_back(std::move(t));
  }
  for (size_t k = 0; k < dst.size(); ++k)
    if (dst[k]->type.isTile() && tileSlot(dst[k]) != tileSlot(from[k])) copyTile(dst[k], from[k]);
  (void)at;
  for (auto& t : temps) slot_.erase(t.get());
}

// A carried tile the body reads once, in the op that makes the value yielded in its place (acc
// = tl.dot(a, b, acc), acc += x): that op writes the carried array itself, and the yield copies
// nothing. Safe because such an op reads each chunk of the carried value before it writes the
// same chunk (elementwise ops; dot: each block's accumulators are loaded before they are
// stored, and blocks are disjoint), and nothing else reads it.
void ProgramEmitter::updateInPlace(const Region& body, const std::vector<const tl::Value*>& args) {
  const Op* y = body.terminator();
  if (!y || y->kind != OpKind::Yield) return;
  for (size_t k = 0; k < args.size() && k < y->numOperands(); ++k) {
    const tl::Value* arg = args[k];
    const tl::Value* v = y->operand(k);
    if (!arg->type.isTile() || !v->def || v->def->parent != &body || users_[arg].size() != 1 || users_[v].size() != 1) continue;
    const Op& def = *v->def;
    const bool dot = def.kind == OpKind::Dot && def.operand(2) == arg && def.operand(0) != arg && def.operand(1) != arg;
    bool elementwise = def.info().category == OpCategory::Elementwise && def.numResults() == 1 && v->type == arg->type;
    if (elementwise) {
      int reads = 0;
      for (const tl::Value* o : def.operands) reads += o == arg;
      elementwise = reads == 1;
    }
    if ((dot || elementwise) && !slot_.count(v)) shareSlot(v, arg);
  }
}

void ProgramEmitter::emitFor(const Op& op) {
  const Region& body = op.region(0);
  const size_t carried = op.numResults();
  LV* lo = scalarOf(op.operand(0));
  LV* hi = scalarOf(op.operand(1));
  LV* step = scalarOf(op.operand(2));
  llvm::Type* ivTy = lo->getType();
  LV* lo64 = B_.CreateSExt(lo, i64());
  LV* hi64 = B_.CreateSExt(hi, i64());
  LV* step64 = B_.CreateSExt(step, i64());
  failIf(B_.CreateICmpEQ(step64, c64(0)), op, CpuFault::StepZero, c64(-1));
  // Tiles: the carried values' arrays are the region arguments'; the results share them.
  std::vector<const tl::Value*> args, inits;
  for (size_t k = 0; k < carried; ++k) {
    args.push_back(body.arg(k + 1));
    inits.push_back(op.operand(3 + k));
    if (body.arg(k + 1)->type.isTile()) shareSlot(op.result(k), body.arg(k + 1));
  }
  assign(args, inits, op);
  updateInPlace(body, args);
  llvm::BasicBlock* pre = B_.GetInsertBlock();
  llvm::BasicBlock* head = llvm::BasicBlock::Create(C_, "for", F_);
  llvm::BasicBlock* bodyBB = llvm::BasicBlock::Create(C_, "for.body", F_);
  llvm::BasicBlock* exit = llvm::BasicBlock::Create(C_, "for.end", F_);
  B_.CreateBr(head);
  B_.SetInsertPoint(head);
  llvm::PHINode* iv = B_.CreatePHI(i64(), 2, "iv");
  iv->addIncoming(lo64, pre);
  std::vector<llvm::PHINode*> phis(carried, nullptr);
  for (size_t k = 0; k < carried; ++k) {
    if (!args[k]->type.isScalar()) continue;
    phis[k] = B_.CreatePHI(compTy(args[k]->type), 2);
    phis[k]->addIncoming(scalarOf(inits[k]), pre);
    ssa_[args[k]] = phis[k];
  }
  LV* up = B_.CreateICmpSGT(step64, c64(0));
  LV* more = B_.CreateSelect(up, B_.CreateICmpSLT(iv, hi64), B_.CreateICmpSGT(iv, hi64));
  B_.CreateCondBr(more, bodyBB, exit);
  B_.SetInsertPoint(bodyBB);
  countIteration(op);
  ssa_[body.arg(0)] = B_.CreateTrunc(iv, ivTy);
  emitRegion(body);
  const Op* y = body.terminator();
  std::vector<const tl::Value*> yielded(y->operands.begin(), y->operands.end());
  std::vector<LV*> next(carried, nullptr);
  for (size_t k = 0; k < carried; ++k)
    if (phis[k]) next[k] = scalarOf(yielded[k]);
  assign(args, yielded, *y);
  LV* sum = B_.CreateBinaryIntrinsic(llvm::Intrinsic::sadd_with_overflow, iv, step64);
  LV* nextIv = B_.CreateExtractValue(sum, 0);
  LV* overflow = B_.CreateExtractValue(sum, 1);
  llvm::BasicBlock* latch = B_.GetInsertBlock();
  iv->addIncoming(nextIv, latch);
  for (size_t k = 0; k < carried; ++k)
    if (phis[k]) phis[k]->addIncoming(next[k], latch);
  B_.CreateCondBr(overflow, exit, head);
  // After the loop: the carried scalars as they were when it ended (from the header, or from
  // the latch when iv + step overflowed).
  B_.SetInsertPoint(exit);
  for (size_t k = 0; k < carried; ++k) {
    if (!phis[k]) continue;
    llvm::PHINode* out = B_.CreatePHI(phis[k]->getType(), 2);
    out->addIncoming(phis[k], head);
    out->addIncoming(next[k], latch);
    ssa_[op.result(k)] = out;
  }
}

void ProgramEmitter::emitIf(const Op& op) {
  LV* cond = scalarOf(op.operand(0));
  llvm::BasicBlock* thenBB = llvm::BasicBlock::Create(C_, "then", F_);
  llvm::BasicBlock* elseBB = llvm::BasicBlock::Create(C_, "else", F_);
  llvm::BasicBlock* join = llvm::BasicBlock::Create(C_, "endif", F_);
  B_.CreateCondBr(cond, thenBB, elseBB);
  std::vector<const tl::Value*> results;
  for (size_t k = 0; k < op.numResults(); ++k) results.push_back(op.result(k));
  std::vector<std::pair<llvm::BasicBlock*, std::vector<LV*>>> incoming;
  for (size_t r = 0; r < 2; ++r) {
    B_.SetInsertPoint(r == 0 ? thenBB : elseBB);
    if (r < op.regions.size()) {
      const Region& region = op.region(r);
      emitRegion(region);
      if (B_.GetInsertBlock()->getTerminator()) continue;  // returned
      const Op* y = region.terminator();
      if (y && y->kind == OpKind::Yield && !results.empty()) {
        std::vector<const tl::Value*> yielded(y->operands.begin(), y->operands.end());
        std::vector<LV*> scal(results.size(), nullptr);
        for (size_t k = 0; k < results.size(); ++k)
          if (results[k]->type.isScalar()) scal[k] = scalarOf(yielded[k]);
        assign(results, yielded, *y);
        incoming.push_back({B_.GetInsertBlock(), scal});
      } else {
        incoming.push_back({B_.GetInsertBlock(), {}});
      }
    } else {
      incoming.push_back({B_.GetInsertBlock(), {}});
    }
    B_.CreateBr(join);
  }
  B_.SetInsertPoint(join);
  if (incoming.empty()) {
    B_.CreateUnreachable();
    return;
  }
  for (size_t k = 0; k < results.size(); ++k) {
    if (!results[k]->type.isScalar()) continue;
    llvm::PHINode* phi = B_.CreatePHI(compTy(results[k]->type), static_cast<unsigned>(incoming.size()));
    for (auto& [bb, vals] : incoming) phi->addIncoming(vals.empty() ? llvm::PoisonValue::get(phi->getType()) : vals[k], bb);
    ssa_[results[k]] = phi;
  }
}

void ProgramEmitter::emitWhile(const Op& op) {
  const Region& cond = op.region(0);
  const Region& body = op.region(1);
  const size_t carried = op.numResults();
  std::vector<const tl::Value*> cargs, inits;
  for (size_t k = 0; k < carried; ++k) {
    cargs.push_back(cond.arg(k));
    inits.push_back(op.operand(k));
    if (cond.arg(k)->type.isTile()) {
      shareSlot(body.arg(k), cond.arg(k));
      shareSlot(op.result(k), cond.arg(k));
    }
  }
  assign(cargs, inits, op);
  llvm::BasicBlock* pre = B_.GetInsertBlock();
  llvm::BasicBlock* head = llvm::BasicBlock::Create(C_, "while", F_);
  llvm::BasicBlock* bodyBB = llvm::BasicBlock::Create(C_, "while.body", F_);
  llvm::BasicBlock* exit = llvm::BasicBlock::Create(C_, "while.end", F_);
  B_.CreateBr(head);
  B_.SetInsertPoint(head);
  std::vector<llvm::PHINode*> phis(carried, nullptr);
  for (size_t k = 0; k < carried; ++k) {
    if (!cargs[k]->type.isScalar()) continue;
    phis[k] = B_.CreatePHI(compTy(cargs[k]->type), 2);
    phis[k]->addIncoming(scalarOf(inits[k]), pre);
    ssa_[cargs[k]] = phis[k];
  }
  emitRegion(cond);
  const Op* c = cond.terminator();
  LV* go = scalarOf(c->operand(0));
  llvm::BasicBlock* condEnd = B_.GetInsertBlock();
  B_.CreateCondBr(go, bodyBB, exit);
  B_.SetInsertPoint(bodyBB);
  countIteration(op);
  for (size_t k = 0; k < carried; ++k)
    if (phis[k]) ssa_[body.arg(k)] = phis[k];
  emitRegion(body);
  const Op* y = body.terminator();
  std::vector<const tl::Value*> yielded(y->operands.begin(), y->operands.end());
  std::vector<LV*> next(carried, nullptr);
  for (size_t k = 0; k < carried; ++k)
    if (phis[k]) next[k] = scalarOf(yielded[k]);
  assign(cargs, yielded, *y);
  for (size_t k = 0; k < carried; ++k)
    if (phis[k]) phis[k]->addIncoming(next[k], B_.GetInsertBlock());
  B_.CreateBr(head);
  B_.SetInsertPoint(exit);
  (void)condEnd;
  for (size_t k = 0; k < carried; ++k)
    if (phis[k]) ssa_[op.result(k)] = phis[k];
}

}  // namespace

CpuModule generateModule(const Function& fn, const CpuTarget& target, const CodegenOptions& opts) {
  if (std::string err = verifyFunction(fn); !err.empty()) throw IRError(fn.loc, "tl-cpu: the block IR does not verify: " + err);
  CpuModule out;
  out.context = std::make_unique<llvm::LLVMContext>();
  out.module = std::make_unique<llvm::Module>("tl_cpu." + fn.name, *out.context);
  ProgramEmitter e(fn, target, opts, *out.module);
  e.emit();
  std::string err;
  llvm::raw_string_ostream os(err);
  if (llvm::verifyFunction(*out.module->getFunction("tl_cpu_program"), &os))
    throw IRError(fn.loc, "tl-cpu generated invalid LLVM IR: " + os.str());
  out.scratchBytes = std::max<int64_t>(e.scratchBytes(), kScratchAlignment);
  out.ops = e.ops;
  out.prints = e.prints;
  return out;
}

}  // namespace tl::cpu
