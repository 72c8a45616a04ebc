// fp8 in tl-ptx: registers hold the 8-bit pattern as an LLVM i8 (LLVM 19 has no fp8 type and no
// NVVM intrinsic for these conversions), memory holds the same byte, and `convert` goes through
// the PTX instructions sm_89 (Ada) and sm_90 (Hopper) have, in inline asm, two registers at a
// time — what Triton's `.to(tl.float8e4nv)` emits:
//
//   f32 -> fp8:  cvt.rn.satfinite.e4m3x2.f32 d, a, b;   (e5m2x2 for f8e5m2)
//                d (.b16) = {fp8(a) in bits 15..8, fp8(b) in bits 7..0}: round to nearest even,
//                finite overflow and inf -> the largest finite value, NaN -> NaN
//   fp8 -> f16:  cvt.rn.f16x2.e4m3x2 d, a;              (e5m2x2 for f8e5m2)
//                a (.b16) holds two fp8 values, d (.b32) their f16 values in the same halves
//                (exact: every fp8 value is an f16 value); then cvt.f32.f16 (exact)
//
// Expects: a verified thread-IR convert whose source or result dtype is fp8 (the verifier keeps
// fp8 out of arithmetic, so convert, loads/stores, selects, moves and dot operands converted by
// the lowering are the only fp8 values). Sources other than f32 are widened to f32 first (f16,
// bf16 exactly; integers by sitofp/uitofp, as the executor's convertSlot), results other than
// f32 are made from the f32 value — so every conversion equals the executor's (runtime/Fp8.h).
// Guarantees: a RuntimeError at the op for a target below sm_89, naming the requirement; the PTX
// of every other target contains exactly the instructions above for fp8 conversions.
#include <llvm/IR/InlineAsm.h>

#include "ptx/CodegenInternal.h"

namespace tl::ptx {

namespace {

const char* fp8Name(DType d) { return d == DType::F8E4M3 ? "e4m3" : "e5m2"; }

}  // namespace

void KernelEmitter::requireFp8Arch(const Op& op) const {
  if (smNumber(opts_.arch) >= 89) return;
  const DType d = isFp8(op.result()->type.dtype) ? op.result()->type.dtype : op.operand(0)->type.dtype;
  throw RuntimeError(op.loc, std::string("converting ") + (isFp8(op.result()->type.dtype) ? "to " : "from ") +
                                 dtypeName(d) + " needs sm_89 or newer (PTX cvt." + fp8Name(d) +
                                 "x2, Ada and Hopper GPUs), but the target is " + opts_.arch +
                                 ": choose --arch sm_89 or sm_90");
}

llvm::Value* KernelEmitter::fp8ToF32(llvm::Value* x, DType d) {
  llvm::Type* i16 = b_.getInt16Ty();
  llvm::Type* i32 = b_.getInt32Ty();
  const std::string text = std::string("cvt.rn.f16x2.") + fp8Name(d) + "x2 $0, $1;";
  auto* asmFn = llvm::InlineAsm::get(llvm::FunctionType::get(i32, {i16}, false), text, "=r,h", /*sideEffects=*/false);
  std::vector<llvm::Value*> in = regs(x), out;
  for (size_t i = 0; i < in.size(); i += 2) {
    llvm::Value* pair = b_.CreateZExt(in[i], i16);
    if (i + 1 < in.size()) pair = b_.CreateOr(pair, b_.CreateShl(b_.CreateZExt(in[i + 1], i16), 8));
    llvm::Value* halves = b_.CreateCall(asmFn, {pair});
    for (size_t k = 0; k < 2 && i + k < in.size(); ++k) {
      llvm::Value* bits = b_.CreateTrunc(k == 0 ? halves : b_.CreateLShr(halves, 16), i16);
      out.push_back(b_.CreateFPExt(b_.CreateBitCast(bits, b_.getHalfTy()), b_.getFloatTy()));
    }
  }
  return join(out, b_.getFloatTy(), x->getType()->isVectorTy());
}

llvm::Value* KernelEmitter::f32ToFp8(llvm::Value* x, DType d) {
  llvm::Type* f32 = b_.getFloatTy();
  llvm::Type* i8 = b_.getInt8Ty();
  const std::string text = std::string("cvt.rn.satfinite.") + fp8Name(d) + "x2.f32 $0, $1, $2;";
  auto* asmFn = llvm::InlineAsm::get(llvm::FunctionType::get(b_.getInt16Ty(), {f32, f32}, false), text, "=h,f,f", false);
  std::vector<llvm::Value*> in = regs(x), out;
  for (size_t i = 0; i < in.size(); i += 2) {
    llvm::Value* hi = i + 1 < in.size() ? in[i + 1] : llvm::ConstantFP::get(f32, 0.0);
    llvm::Value* pair = b_.CreateCall(asmFn, {hi, in[i]});  // a -> bits 15..8, b -> bits 7..0
    out.push_back(b_.CreateTrunc(pair, i8));
    if (i + 1 < in.size()) out.push_back(b_.CreateTrunc(b_.CreateLShr(pair, 8), i8));
  }
  return join(out, i8, x->getType()->isVectorTy());
}

llvm::Value* KernelEmitter::convertFp8(const Op& op, llvm::Value* x) {
  requireFp8Arch(op);
  const Type& from = op.operand(0)->type;
  const Type& to = op.result()->type;
  const bool vector = x->getType()->isVectorTy();
  llvm::Type* f32 = vector ? static_cast<llvm::Type*>(llvm::FixedVectorType::get(b_.getFloatTy(), numRegs(from)))
                           : b_.getFloatTy();
  // The source as f32.
  llvm::Value* f = nullptr;
  if (isFp8(from.dtype)) f = fp8ToF32(x, from.dtype);
  else if (from.dtype == DType::I1) f = b_.CreateUIToFP(x, f32);
  else if (isInt(from.dtype)) f = b_.CreateSIToFP(x, f32);
  else f = toF32(x);
  if (isFp8(to.dtype)) return f32ToFp8(f, to.dtype);
  // From fp8 to a non-fp8 dtype: the f32 value, then as any f32 source converts.
  llvm::Type* dst = llvmType(to);
  if (to.dtype == DType::I1) return b_.CreateFCmpUNE(f, llvm::Constant::getNullValue(f->getType()));  // NaN -> true
  if (isInt(to.dtype)) return b_.CreateIntrinsic(llvm::Intrinsic::fptosi_sat, {dst, f->getType()}, {f});
  return fromF32(f, to.dtype);
}

}  // namespace tl::ptx
