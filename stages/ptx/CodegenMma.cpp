// Tensor cores in tl-ptx: the thread-IR `mma` as one mma.sync.aligned instruction, `ldmatrix`
// as ldmatrix.sync.aligned, in inline PTX (what Triton and CUTLASS emit), and `cvt_tf32` as an
// integer mask of the low 13 mantissa bits (inf and NaN kept):
//
//   mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {d0,d1,d2,d3}, {a0,a1,a2,a3}, {b0,b1}, {c0,c1,c2,c3};
//
// Expects: a verified thread-IR mma (ir/MmaLayout.h: A, B fragments of one input dtype, C of
// 4 f32, or 4 f16 for f16 inputs: mma...f16.f16.f16.f16, c and d two .b32 words of two halves,
// low half first) or cvt_tf32 of f32 registers.
// Guarantees: each .b32 operand register packs consecutive fragment elements low to high (a0
// in bits 15..0 and a1 in bits 31..16 for f16 / bf16; four fp8 bytes; one tf32), the order the
// PTX ISA's fragment tables number them; d is tied to c (the accumulator is updated in place).
// A target below the instruction's (sm_80; fp8 sm_89) is a RuntimeError at the op naming it.
#include <llvm/IR/InlineAsm.h>

#include "ir/MmaLayout.h"
#include "ptx/CodegenInternal.h"

namespace tl::ptx {

llvm::Value* KernelEmitter::packB32(const std::vector<llvm::Value*>& elems, size_t first, int count) {
  llvm::Type* i32 = b_.getInt32Ty();
  const int bits = 32 / count;
  llvm::Value* word = nullptr;
  for (int i = 0; i < count; ++i) {
    llvm::Value* e = elems[first + size_t(i)];
    llvm::Value* asInt = b_.CreateBitCast(e, b_.getIntNTy(static_cast<unsigned>(e->getType()->getPrimitiveSizeInBits())));
    llvm::Value* wide = b_.CreateZExt(asInt, i32);
    if (i) wide = b_.CreateShl(wide, static_cast<uint64_t>(i * bits));
    word = word ? b_.CreateOr(word, wide) : wide;
  }
  return word;
}

llvm::Value* KernelEmitter::emitMma(const Op& op) {
  const Type& aT = op.operand(0)->type;
  auto instr = mmaInstrOf(aT.dtype, static_cast<int>(aT.numel()));
  if (!instr) fail(op, "unknown mma fragment type " + aT.str());
  if (smNumber(opts_.arch) < instr->minArch())
    throw RuntimeError(op.loc, "dot on tensor cores (" + instr->ptx() + ") needs sm_" + std::to_string(instr->minArch()) +
                                   " or newer, but the target is " + opts_.arch + ": choose --arch sm_" +
                                   std::to_string(instr->minArch()) + " or sm_90");
  const int perWord = instr->kRun();  // elements per .b32 register
  std::vector<llvm::Value*> a = regs(get(op.operand(0))), b = regs(get(op.operand(1))), c = regs(get(op.operand(2)));
  std::vector<llvm::Value*> args;
  for (size_t i = 0; i < a.size(); i += size_t(perWord)) args.push_back(packB32(a, i, perWord));
  for (size_t i = 0; i < b.size(); i += size_t(perWord)) args.push_back(packB32(b, i, perWord));
  const int nA = static_cast<int>(a.size()) / perWord, nB = static_cast<int>(b.size()) / perWord;
  // An f16 accumulator (mma ...f16.f16.f16.f16) is two .b32 words of two halves, else four f32.
  const bool f16Acc = op.operand(2)->type.dtype == DType::F16;
  const int nC = f16Acc ? 2 : 4;
  for (size_t i = 0; i < c.size(); i += f16Acc ? 2 : 1) args.push_back(f16Acc ? packB32(c, i, 2) : c[i]);

  // {$0..} = d, then a's words, b's words, then c tied to d.
  std::string text = instr->ptx(op.operand(2)->type.dtype) + " {", constraints;
  for (int i = 0; i < nC; ++i) {
    text += (i ? ", $" : "$") + std::to_string(i);
    constraints += std::string(i ? "," : "") + (f16Acc ? "=r" : "=f");
  }
  text += "}, {";
  int n = nC;
  auto list = [&](int count) {
    for (int i = 0; i < count; ++i) {
      text += (i ? ", $" : "$") + std::to_string(n++);
      constraints += ",r";
    }
  };
  list(nA);
  text += "}, {";
  list(nB);
  text += "}, {";
  for (int i = 0; i < nC; ++i) {
    text += (i ? ", $" : "$") + std::to_string(i);
    constraints += "," + std::to_string(i);
  }
  text += "};";
  std::vector<llvm::Type*> argTys;
  for (llvm::Value* x : args) argTys.push_back(x->getType());
  llvm::StructType* ret = llvm::StructType::get(
      b_.getContext(), std::vector<llvm::Type*>(size_t(nC), f16Acc ? b_.getInt32Ty() : b_.getFloatTy()));
  auto* asmFn = llvm::InlineAsm::get(llvm::FunctionType::get(ret, argTys, false), text, constraints, /*sideEffects=*/false);
  llvm::Value* d = b_.CreateCall(asmFn, args);
  std::vector<llvm::Value*> out;
  for (unsigned i = 0; i < unsigned(nC); ++i) {
    llvm::Value* word = b_.CreateExtractValue(d, {i});
    if (!f16Acc) out.push_back(word);
    else
      for (llvm::Value* h : halvesOf(word, b_.getHalfTy())) out.push_back(h);
  }
  return join(out, op.result()->type);
}

std::vector<llvm::Value*> KernelEmitter::halvesOf(llvm::Value* word, llvm::Type* elem) {
  std::vector<llvm::Value*> out;
  for (int h = 0; h < 2; ++h) {
    llvm::Value* bits = b_.CreateTrunc(h ? b_.CreateLShr(word, 16) : word, b_.getInt16Ty());
    out.push_back(b_.CreateBitCast(bits, elem));
  }
  return out;
}

// ldmatrix.sync.aligned.m8n8.x{1,2,4}{.trans}.shared.b16 {r0..}, [addr]: each .b32 result is two
// 16-bit elements, low half first; the address is the lane's row in the shared window (a 32-bit
// shared-space address: ptrtoint of the addrspace(3) pointer).
llvm::Value* KernelEmitter::emitLdmatrix(const Op& op) {
  const int64_t count = op.intAttr("count");
  const bool trans = op.intAttr("trans") != 0;
  llvm::Type* i32 = b_.getInt32Ty();
  llvm::Value* addr = b_.CreatePtrToInt(sharedAddress(op, get(op.operand(0))), i32);
  std::string text = "ldmatrix.sync.aligned.m8n8.x" + std::to_string(count) + (trans ? ".trans" : "") + ".shared.b16 {";
  std::string constraints;
  for (int64_t i = 0; i < count; ++i) {
    text += (i ? ", $" : "$") + std::to_string(i);
    constraints += "=r,";
  }
  text += "}, [$" + std::to_string(count) + "];";
  constraints += "r,~{memory}";
  std::vector<llvm::Type*> rets(size_t(count), i32);
  llvm::Type* ret = count == 1 ? static_cast<llvm::Type*>(i32) : llvm::StructType::get(b_.getContext(), rets);
  auto* asmFn = llvm::InlineAsm::get(llvm::FunctionType::get(ret, {i32}, false), text, constraints, /*sideEffects=*/true);
  llvm::Value* words = b_.CreateCall(asmFn, {addr});
  llvm::Type* elem = llvmType(op.result()->type.scalarType());
  std::vector<llvm::Value*> out;
  for (int64_t i = 0; i < count; ++i)
    for (llvm::Value* h : halvesOf(count == 1 ? words : b_.CreateExtractValue(words, {unsigned(i)}), elem)) out.push_back(h);
  return join(out, op.result()->type);
}

llvm::Value* KernelEmitter::emitCvtTf32(const Op& op) {
  // truncToTf32: the low 13 mantissa bits cleared, inf and NaN (exponent all ones) kept.
  llvm::Type* f32 = b_.getFloatTy();
  return perRegister(get(op.operand(0)), [&](llvm::Value* x) {
    llvm::Value* bits = b_.CreateBitCast(x, b_.getInt32Ty());
    llvm::Value* special = b_.CreateICmpEQ(b_.CreateAnd(bits, 0x7f800000u), b_.getInt32(0x7f800000u));
    llvm::Value* cut = b_.CreateAnd(bits, ~0x1fffu);
    return b_.CreateBitCast(b_.CreateSelect(special, bits, cut), f32);
  });
}

// wgmma (ThreadOps.def): the descriptors of a and b built from their shared-memory addresses
// (ir/MmaLayout.h wgmmaDescriptor: (address & 0x3FFFF) >> 4 in bits 0-13, LBO, SBO, swizzle),
// then
//   wgmma.mma_async.sync.aligned.m64n{N}k16.f32.bf16.bf16 {d0..}, descA, descB, p, 1, 1, 0, transB;
// or, with a in registers, {d0..}, {a0..a3}, descB, p, 1, 1, transB; for tf32 (k8) and fp8 (k32,
// .e4m3 / .e5m2), which are K-major only, {d0..}, descA, descB, p, 1, 1; with p = true (D = A B + D)
// and d tied to c; an f16 accumulator (f16 inputs, out_dtype=tl.float16) is ...k16.f16.f16.f16 with
// d the n/4 .b32 words of its halves. sm_90a only (a RuntimeError at the op otherwise).
llvm::Value* KernelEmitter::emitWgmma(const Op& op) {
  if (opts_.arch != "sm_90a")
    throw RuntimeError(op.loc, "wgmma needs the sm_90a target (Hopper's arch-specific instructions), but it is " +
                                   opts_.arch + ": choose --arch sm_90a");
  llvm::Type* i32 = b_.getInt32Ty();
  llvm::Type* i64 = b_.getInt64Ty();
  auto descriptor = [&](const Value* addr, const char* swizzle, int64_t lbo, int64_t sbo, bool mnMajor) {
    WgmmaOperandLayout l;
    l.swizzle = static_cast<int>(op.intAttr(swizzle));
    l.lbo = lbo;
    l.sbo = sbo;
    l.mnMajor = mnMajor;
    llvm::Value* a = b_.CreateZExt(b_.CreatePtrToInt(sharedAddress(op, get(addr)), i32), i64);
    llvm::Value* start = b_.CreateLShr(b_.CreateAnd(a, b_.getInt64(0x3FFFF)), b_.getInt64(4));
    return b_.CreateOr(start, b_.getInt64(wgmmaDescriptor(l, 0)));  // the constant fields
  };
  const bool transB = op.intAttr("trans_b") != 0;
  // a from registers (the RS form): its A fragment as 4 .b32 words, a0 in the low half of the
  // first; the form has no transpose of a.
  const bool aRegs = op.operand(0)->type.isTile();
  std::vector<llvm::Value*> aWords;
  if (aRegs) {
    std::vector<llvm::Value*> a = regs(get(op.operand(0)));
    for (size_t i = 0; i < a.size(); i += 2) aWords.push_back(packB32(a, i, 2));
  } else {
    aWords.push_back(descriptor(op.operand(0), "a_swizzle", 16, op.intAttr("a_sbo"), false));
  }
  llvm::Value* descB = descriptor(op.operand(1), "b_swizzle", op.intAttr("b_lbo"), op.intAttr("b_sbo"), transB);
  // The accumulator: n/2 f32 registers, or (f16, out_dtype=tl.float16) n/4 .b32 words of two
  // halves, low half first.
  const bool f16Acc = op.operand(2)->type.dtype == DType::F16;
  std::vector<llvm::Value*> c = accumulatorWords(regs(get(op.operand(2))), f16Acc);
  const int R = static_cast<int>(c.size()), nA = static_cast<int>(aWords.size());
  const MmaInstr instr = *mmaInstrFor(*parseDType(op.strAttr("dtype")), true);  // its k and PTX type are wgmma's
  const std::string dt = instr.typeName();
  const bool half = instr.k == 16;  // tf32 and fp8 forms have no transpose operands
  std::string text = "{\n.reg .pred p;\nsetp.ne.b32 p, $" + std::to_string(R + nA + 1) + ", 0;\nwgmma.mma_async.sync.aligned.m64n" +
                     std::to_string(op.intAttr("n")) + "k" + std::to_string(instr.k) + (f16Acc ? ".f16." : ".f32.") + dt + "." + dt + " {";
  std::string constraints;
  for (int i = 0; i < R; ++i) {
    text += (i ? ", $" : "$") + std::to_string(i);
    constraints += f16Acc ? "=r," : "=f,";
  }
  text += "}, ";
  if (aRegs) {
    text += "{";
    for (int i = 0; i < nA; ++i) {
      text += (i ? ", $" : "$") + std::to_string(R + i);
      constraints += "r,";
    }
    text += "}";
  } else {
    text += "$" + std::to_string(R);
    constraints += "l,";
  }
  text += ", $" + std::to_string(R + nA) + ", p, 1, 1" + (!half ? "" : aRegs ? ", " : ", 0, ") + (!half ? "" : transB ? "1" : "0") + ";\n}";
  constraints += "l,r";
  std::vector<llvm::Value*> args = aWords;
  args.push_back(descB);
  args.push_back(b_.getInt32(1));
  for (int i = 0; i < R; ++i) {
    constraints += "," + std::to_string(i);
    args.push_back(c[size_t(i)]);
  }
  constraints += ",~{memory}";
  std::vector<llvm::Type*> argTys;
  for (llvm::Value* x : args) argTys.push_back(x->getType());
  std::vector<llvm::Type*> rets(size_t(R), c[0]->getType());
  auto* asmFn = llvm::InlineAsm::get(llvm::FunctionType::get(llvm::StructType::get(b_.getContext(), rets), argTys, false),
                                     text, constraints, /*sideEffects=*/true);
  llvm::Value* d = b_.CreateCall(asmFn, args);
  std::vector<llvm::Value*> out;
  for (int i = 0; i < R; ++i) out.push_back(b_.CreateExtractValue(d, {unsigned(i)}));
  return join(accumulatorElements(out, f16Acc), op.result()->type);
}

// f16 pairs go through <2 x half> and a bitcast, not shifts: LLVM folds a word unpacked and
// packed again back into the word itself, so an accumulator a loop carries from one wgmma to
// the next (one group left in flight, LowerRing.cpp) is read by no other instruction on the way;
// ptxas would serialize the wgmmas otherwise (C7514).
std::vector<llvm::Value*> KernelEmitter::accumulatorWords(const std::vector<llvm::Value*>& elems, bool f16) {
  if (!f16) return elems;
  llvm::Type* pair = llvm::FixedVectorType::get(b_.getHalfTy(), 2);
  std::vector<llvm::Value*> words;
  for (size_t i = 0; i < elems.size(); i += 2) {
    llvm::Value* v = b_.CreateInsertElement(llvm::PoisonValue::get(pair), elems[i], uint64_t(0));
    v = b_.CreateInsertElement(v, elems[i + 1], uint64_t(1));
    words.push_back(b_.CreateBitCast(v, b_.getInt32Ty()));
  }
  return words;
}

std::vector<llvm::Value*> KernelEmitter::accumulatorElements(const std::vector<llvm::Value*>& words, bool f16) {
  if (!f16) return words;
  llvm::Type* pair = llvm::FixedVectorType::get(b_.getHalfTy(), 2);
  std::vector<llvm::Value*> elems;
  for (llvm::Value* w : words) {
    llvm::Value* v = b_.CreateBitCast(w, pair);
    elems.push_back(b_.CreateExtractElement(v, uint64_t(0)));
    elems.push_back(b_.CreateExtractElement(v, uint64_t(1)));
  }
  return elems;
}

// wgmma_wait on accumulators: wgmma.wait_group.sync.aligned with every register an in-out
// operand ("=f" tied to its input), so LLVM places no read of them before the wait. ptxas
// serializes the wgmmas (C7514) when anything but a wgmma reads such a register in flight.
void KernelEmitter::emitWgmmaWait(const Op& op) {
  if (opts_.arch != "sm_90a")
    throw RuntimeError(op.loc, "wgmma_wait needs the sm_90a target, but it is " + opts_.arch + ": choose --arch sm_90a");
  // f16 accumulators (out_dtype=tl.float16) go as .b32 words of two halves, as the wgmma has them.
  std::vector<llvm::Value*> in;
  std::vector<size_t> counts;
  for (const Value* v : op.operands) {
    std::vector<llvm::Value*> r = accumulatorWords(regs(get(v)), v->type.dtype == DType::F16);
    counts.push_back(r.size());
    in.insert(in.end(), r.begin(), r.end());
  }
  std::string constraints;
  std::vector<llvm::Type*> argTys;
  for (llvm::Value* x : in) {
    constraints += x->getType()->isFloatTy() ? "=f," : "=r,";
    argTys.push_back(x->getType());
  }
  for (size_t i = 0; i < in.size(); ++i) constraints += std::to_string(i) + ",";
  constraints += "~{memory}";
  llvm::Type* ret = in.size() == 1 ? argTys[0] : llvm::StructType::get(b_.getContext(), argTys);
  auto* asmFn = llvm::InlineAsm::get(llvm::FunctionType::get(ret, argTys, false),
                                     "wgmma.wait_group.sync.aligned " + std::to_string(op.intAttr("pending")) + ";", constraints,
                                     /*sideEffects=*/true);
  llvm::Value* out = b_.CreateCall(asmFn, in);
  size_t next = 0;
  for (size_t k = 0; k < op.numResults(); ++k) {
    std::vector<llvm::Value*> r;
    for (size_t i = 0; i < counts[k]; ++i, ++next) r.push_back(in.size() == 1 ? out : b_.CreateExtractValue(out, {unsigned(next)}));
    set(op.result(k), join(accumulatorElements(r, op.result(k)->type.dtype == DType::F16), op.result(k)->type));
  }
}

// wgmma_fence, wgmma_commit, wgmma_wait (on no registers), fence_proxy_async: one instruction
// each, ordered with every memory access around them (~{memory}).
void KernelEmitter::emitAsyncFence(const Op& op) {
  std::string text;
  switch (op.kind) {
    case OpKind::WgmmaFence: text = "wgmma.fence.sync.aligned;"; break;
    case OpKind::WgmmaCommit: text = "wgmma.commit_group.sync.aligned;"; break;
    case OpKind::WgmmaWait: text = "wgmma.wait_group.sync.aligned " + std::to_string(op.intAttr("pending")) + ";"; break;
    default: text = "fence.proxy.async.shared::cta;"; break;
  }
  if (op.kind != OpKind::FenceProxyAsync && opts_.arch != "sm_90a")
    throw RuntimeError(op.loc, std::string(mnemonic(op.kind)) + " needs the sm_90a target, but it is " + opts_.arch +
                                   ": choose --arch sm_90a");
  auto* asmFn = llvm::InlineAsm::get(llvm::FunctionType::get(b_.getVoidTy(), {}, false), text, "~{memory}", /*sideEffects=*/true);
  b_.CreateCall(asmFn, {});
}

}  // namespace tl::ptx
