// Thread IR memory ops -> LLVM IR: global loads and stores in vector groups, shared memory,
// barriers.
//
// Expects: verified thread IR whose `vec` groups were proven contiguous and aligned by the
// layout pass (the executor checks the same at run time) and whose masks are constant within a
// group — the layout pass only picks vec > 1 where the mask's constancy allows it. The group's
// predicate is its first register's mask bit (what Triton does); this code trusts that.
// Guarantees:
//   - a group of `vec` registers is ONE access of vec x bytes (<4 x float> -> ld.global.v4.f32)
//     with alignment vec x bytes;
//   - an unmasked group (no mask, or a constant-true bit) is a plain LLVM load/store, which the
//     optimizer understands; a masked global group is one predicated PTX instruction in inline
//     asm, `@%p ld.global.v4.b32 {...}, [%rd];`, whose destination registers start out holding
//     `other` (0 without one) — so masked-off lanes never touch memory, as in the executor;
//     the asm is marked as having side effects, so it is never reordered with other memory ops;
//   - shared memory is one `addrspace(3)` array of Function::sharedBytes bytes, aligned to 16;
//     addresses are i32 byte offsets into it; masked shared accesses branch around the access
//     (masked-off loads give 0, as in the executor);
//   - in memory an i1 is one byte (0 or 1); a loaded byte is true when non-zero;
//   - atom_global / atom_cas_global: one inline-PTX atom.<sem>.<scope>.global per register
//     (red.global when the old value is unused and the ordering is relaxed or release),
//     predicated on the mask bit; a masked-off register's old value is 0;
//   - barrier is bar.sync 0 (llvm.nvvm.barrier0).
#include <llvm/IR/InlineAsm.h>

#include "ptx/CodegenInternal.h"

namespace tl::ptx {

unsigned KernelEmitter::vecAttr(const Op& op) const {
  const int64_t vec = op.hasAttr("vec") ? op.intAttr("vec") : 1;
  const bool valueOperand = op.kind == OpKind::StGlobal || op.kind == OpKind::StShared || op.kind == OpKind::CpAsync;
  const Type& data = valueOperand ? op.operand(1)->type : op.result()->type;
  const int64_t n = data.numel();
  if (vec < 1 || !isPowerOfTwo(vec) || n % vec != 0 || vec * dtypeBytes(data.dtype) > 16)
    fail(op, "vec = " + std::to_string(vec) + " must be a power of two dividing the " + std::to_string(n) +
                 " registers, at most 16 bytes per access");
  return static_cast<unsigned>(vec);
}

llvm::Value* KernelEmitter::toMemory(llvm::Value* v, DType d) {
  if (d != DType::I1) return v;
  llvm::Type* i8 = b_.getInt8Ty();
  if (auto* vt = llvm::dyn_cast<llvm::FixedVectorType>(v->getType())) i8 = llvm::FixedVectorType::get(i8, vt->getNumElements());
  return b_.CreateZExt(v, i8);
}

llvm::Value* KernelEmitter::fromMemory(llvm::Value* v, DType d) {
  if (d != DType::I1) return v;
  return b_.CreateICmpNE(v, llvm::Constant::getNullValue(v->getType()));
}

// Registers [first, first + vec) as one value: a scalar when vec = 1, else <vec x elem>.
llvm::Value* KernelEmitter::groupOf(const std::vector<llvm::Value*>& rs, size_t first, unsigned vec, llvm::Type* elem) {
  std::vector<llvm::Value*> part(rs.begin() + static_cast<std::ptrdiff_t>(first),
                                 rs.begin() + static_cast<std::ptrdiff_t>(first + vec));
  return join(part, elem, vec > 1);
}

llvm::Value* KernelEmitter::loadGroup(llvm::Value* addr, DType d, unsigned vec) {
  llvm::Type* e = memType(d);
  llvm::Type* t = vec > 1 ? static_cast<llvm::Type*>(llvm::FixedVectorType::get(e, vec)) : e;
  return b_.CreateAlignedLoad(t, addr, llvm::Align(vec * static_cast<unsigned>(dtypeBytes(d))));
}

void KernelEmitter::storeGroup(llvm::Value* addr, llvm::Value* group, DType d, unsigned vec) {
  b_.CreateAlignedStore(group, addr, llvm::Align(vec * static_cast<unsigned>(dtypeBytes(d))));
}

namespace {

// How a group travels through inline PTX: as `words` registers of type `wordTy`, with the
// PTX type suffix and the asm constraint letter for one register. f32 and i32 groups keep their
// type (`ld.global.v4.f32`); narrower elements are packed into 32-bit words (f16 x 8 ->
// `ld.global.v4.b32`), or a 16-bit register when the group is smaller than 4 bytes.
struct AsmWords {
  unsigned words;       // 1, 2 or 4
  llvm::Type* wordTy;   // float, i32, i64 or i16
  const char* suffix;   // ".f32", ".b32", ".b64", ".b16", ".u8"
  const char* letter;   // "f", "r", "l", "h"
};

AsmWords asmWords(llvm::IRBuilder<>& b, DType d, unsigned vec) {
  const unsigned bytes = vec * static_cast<unsigned>(dtypeBytes(d));
  if (d == DType::F32) return {vec, b.getFloatTy(), ".f32", "f"};
  if (d == DType::I64) return {vec, b.getInt64Ty(), ".b64", "l"};
  if (bytes >= 4) return {bytes / 4, b.getInt32Ty(), ".b32", "r"};
  if (bytes == 2) return {1, b.getInt16Ty(), ".b16", "h"};
  return {1, b.getInt16Ty(), ".u8", "h"};  // one byte in a 16-bit register (ld/st.u8 allow a wider register)
}

std::string vectorSuffix(unsigned words) { return words == 1 ? "" : ".v" + std::to_string(words); }

std::string registerList(unsigned first, unsigned n) {
  std::string s = n > 1 ? "{" : "";
  for (unsigned i = 0; i < n; ++i) s += (i ? ", $" : "$") + std::to_string(first + i);
  return s + (n > 1 ? "}" : "");
}

}  // namespace

// The words of a memory-form group, for inline asm: a vector of i32 / one i32 / one i16.
static std::vector<llvm::Value*> toWords(llvm::IRBuilder<>& b, llvm::Value* group, const AsmWords& w) {
  llvm::Type* wordTy = w.wordTy;
  const unsigned bits = static_cast<unsigned>(group->getType()->getPrimitiveSizeInBits().getFixedValue());
  if (bits == 8) return {b.CreateZExt(b.CreateBitCast(group, b.getInt8Ty()), wordTy)};
  if (w.words == 1) return {b.CreateBitCast(group, wordTy)};
  llvm::Value* v = b.CreateBitCast(group, llvm::FixedVectorType::get(wordTy, w.words));
  std::vector<llvm::Value*> out;
  for (unsigned i = 0; i < w.words; ++i) out.push_back(b.CreateExtractElement(v, b.getInt32(i)));
  return out;
}

static llvm::Value* fromWords(llvm::IRBuilder<>& b, const std::vector<llvm::Value*>& words, llvm::Type* groupTy) {
  const unsigned bits = static_cast<unsigned>(groupTy->getPrimitiveSizeInBits().getFixedValue());
  if (bits == 8) return b.CreateBitCast(b.CreateTrunc(words[0], b.getInt8Ty()), groupTy);
  if (words.size() == 1) return b.CreateBitCast(words[0], groupTy);
  llvm::Value* v = llvm::PoisonValue::get(llvm::FixedVectorType::get(words[0]->getType(), static_cast<unsigned>(words.size())));
  for (size_t i = 0; i < words.size(); ++i) v = b.CreateInsertElement(v, words[i], b.getInt32(static_cast<uint32_t>(i)));
  return b.CreateBitCast(v, groupTy);
}

// @p ld.global.v4.b32 {$0, $1, $2, $3}, [$4];   with $0..$3 tied to `other` (kept when !p)
llvm::Value* KernelEmitter::predicatedGlobalLoad(llvm::Value* addr, llvm::Value* pred, llvm::Value* other, DType d, unsigned vec) {
  const AsmWords w = asmWords(b_, d, vec);
  std::vector<llvm::Value*> args{addr, pred};
  for (llvm::Value* word : toWords(b_, other, w)) args.push_back(word);
  std::string constraints;
  for (unsigned i = 0; i < w.words; ++i) constraints += std::string("=") + w.letter + ",";
  constraints += "l,b";
  for (unsigned i = 0; i < w.words; ++i) constraints += "," + std::to_string(i);
  const std::string text = "@$" + std::to_string(w.words + 1) + " ld.global" + vectorSuffix(w.words) + w.suffix + " " +
                           registerList(0, w.words) + ", [$" + std::to_string(w.words) + "];";
  llvm::Type* wordTy = w.wordTy;
  llvm::Type* retTy = wordTy;
  if (w.words > 1) retTy = llvm::StructType::get(ctx_, std::vector<llvm::Type*>(w.words, wordTy));
  std::vector<llvm::Type*> argTys;
  for (llvm::Value* a : args) argTys.push_back(a->getType());
  auto* asmFn = llvm::InlineAsm::get(llvm::FunctionType::get(retTy, argTys, false), text, constraints, /*sideEffects=*/true);
  llvm::Value* r = b_.CreateCall(asmFn, args);
  std::vector<llvm::Value*> words;
  if (w.words == 1) words.push_back(r);
  for (unsigned i = 0; w.words > 1 && i < w.words; ++i) words.push_back(b_.CreateExtractValue(r, i));
  return fromWords(b_, words, other->getType());
}

// @p st.global.v4.b32 [$0], {$2, $3, $4, $5};
void KernelEmitter::predicatedGlobalStore(llvm::Value* addr, llvm::Value* pred, llvm::Value* group, DType d, unsigned vec) {
  const AsmWords w = asmWords(b_, d, vec);
  std::vector<llvm::Value*> args{addr, pred};
  for (llvm::Value* word : toWords(b_, group, w)) args.push_back(word);
  std::string constraints = "l,b";
  for (unsigned i = 0; i < w.words; ++i) constraints += std::string(",") + w.letter;
  constraints += ",~{memory}";
  const std::string text = "@$1 st.global" + vectorSuffix(w.words) + w.suffix + " [$0], " + registerList(2, w.words) + ";";
  std::vector<llvm::Type*> argTys;
  for (llvm::Value* a : args) argTys.push_back(a->getType());
  auto* asmFn = llvm::InlineAsm::get(llvm::FunctionType::get(b_.getVoidTy(), argTys, false), text, constraints, true);
  b_.CreateCall(asmFn, args);
}

llvm::Value* KernelEmitter::ifThen(llvm::Value* pred, const std::function<llvm::Value*()>& body, llvm::Value* otherwise) {
  llvm::BasicBlock* from = b_.GetInsertBlock();
  llvm::BasicBlock* thenBB = llvm::BasicBlock::Create(ctx_, "masked", kernel_);
  llvm::BasicBlock* joinBB = llvm::BasicBlock::Create(ctx_, "masked.end", kernel_);
  b_.CreateCondBr(pred, thenBB, joinBB);
  b_.SetInsertPoint(thenBB);
  llvm::Value* v = body();
  llvm::BasicBlock* thenEnd = b_.GetInsertBlock();
  b_.CreateBr(joinBB);
  b_.SetInsertPoint(joinBB);
  if (!v) return nullptr;
  llvm::PHINode* phi = b_.CreatePHI(v->getType(), 2);
  phi->addIncoming(v, thenEnd);
  phi->addIncoming(otherwise, from);
  return phi;
}

// A mask bit that is known at compile time: 1 (true), 0 (false), -1 (unknown).
static int knownBit(llvm::Value* bit) {
  if (auto* c = llvm::dyn_cast<llvm::ConstantInt>(bit)) return c->isOne() ? 1 : 0;
  return -1;
}

void KernelEmitter::emitLdGlobal(const Op& op) {
  const Type& rt = op.result()->type;
  const DType d = rt.dtype;
  const unsigned vec = vecAttr(op);
  std::vector<llvm::Value*> ptrs = regs(get(op.operand(0)));
  std::vector<llvm::Value*> mask, other;
  if (op.numOperands() > 1) mask = regs(get(op.operand(1)));
  if (op.numOperands() > 2) other = regs(toMemory(get(op.operand(2)), d));
  llvm::Type* e = memType(d);
  if (other.empty()) other.assign(ptrs.size(), llvm::Constant::getNullValue(e));  // masked-off -> 0

  std::vector<llvm::Value*> out;
  for (size_t g = 0; g < ptrs.size(); g += vec) {
    const int bit = mask.empty() ? 1 : knownBit(mask[g]);
    llvm::Value* group = bit == 1   ? loadGroup(ptrs[g], d, vec)
                         : bit == 0 ? groupOf(other, g, vec, e)
                                    : predicatedGlobalLoad(ptrs[g], mask[g], groupOf(other, g, vec, e), d, vec);
    for (llvm::Value* r : regs(group)) out.push_back(fromMemory(r, d));
  }
  set(op.result(), join(out, rt));
  if (!op.result()->name.empty() && !llvm::isa<llvm::Constant>(get(op.result()))) get(op.result())->setName(op.result()->name);
}

void KernelEmitter::emitStGlobal(const Op& op) {
  const DType d = op.operand(1)->type.dtype;
  const unsigned vec = vecAttr(op);
  std::vector<llvm::Value*> ptrs = regs(get(op.operand(0)));
  std::vector<llvm::Value*> vals = regs(toMemory(get(op.operand(1)), d));
  std::vector<llvm::Value*> mask;
  if (op.numOperands() > 2) mask = regs(get(op.operand(2)));
  for (size_t g = 0; g < ptrs.size(); g += vec) {
    const int bit = mask.empty() ? 1 : knownBit(mask[g]);
    if (bit == 0) continue;
    llvm::Value* group = groupOf(vals, g, vec, memType(d));
    if (bit == 1) storeGroup(ptrs[g], group, d, vec);
    else predicatedGlobalStore(ptrs[g], mask[g], group, d, vec);
  }
}

// One PTX atomic per register, in inline asm so the ordering and scope are exactly the op's:
//   atom.<sem>.<scope>.global.<op>.<type> $0, [$1], $3;        (cas: ..., $3, $4;)
// predicated `@$2` on the register's mask bit, with $0 tied to a 0 input (a masked-off register
// gives 0, as in the executor). When nothing uses the old values and the ordering is relaxed or
// release (the only ones `red` has), it is `red.<sem>.<scope>.global.<op>.<type> [$0], $2;`.
// f32 xchg travels as .b32 bits; i64 min/max are .s64, add .u64 (the same bits as .s64).
void KernelEmitter::emitAtom(const Op& op) {
  const bool cas = op.kind == OpKind::AtomCasGlobal;
  const size_t values = cas ? 2 : 1;
  const DType d = op.result()->type.dtype;
  const std::string kind = cas ? "cas" : op.strAttr("kind");
  const std::string& sem = op.strAttr("sem");
  const std::string& scope = op.strAttr("scope");
  const bool i64 = d == DType::I64, f32 = d == DType::F32;
  if (d != DType::I32 && !i64 && !f32) fail(op, "atomics need i32, i64 or f32 values");
  std::string opName = kind == "xchg" ? "exch" : kind;
  std::string type;
  if (kind == "add") type = f32 ? ".f32" : i64 ? ".u64" : ".u32";
  else if (kind == "max" || kind == "min") type = i64 ? ".s64" : ".s32";
  else type = i64 ? ".b64" : ".b32";  // and, or, xor, exch, cas
  const bool asFloat = f32 && kind == "add";
  llvm::Type* regTy = asFloat ? b_.getFloatTy() : i64 ? b_.getInt64Ty() : b_.getInt32Ty();
  const char* letter = asFloat ? "f" : i64 ? "l" : "r";
  const bool useRed = countUses(fn_.body, op.result()) == 0 && (sem == "relaxed" || sem == "release") && !cas;
  // PTX's order: atom{.sem}{.scope}{.space}.op.type (the same for red)
  const std::string quals = "." + sem + "." + scope + ".global." + opName + type;

  std::vector<llvm::Value*> ptrs = regs(get(op.operand(0)));
  std::vector<llvm::Value*> vals = regs(get(op.operand(values)));
  std::vector<llvm::Value*> cmps;
  if (cas) cmps = regs(get(op.operand(1)));
  std::vector<llvm::Value*> mask;
  if (op.numOperands() > values + 1) mask = regs(get(op.operand(values + 1)));
  auto toReg = [&](llvm::Value* v) { return f32 && !asFloat ? b_.CreateBitCast(v, regTy) : v; };
  auto fromReg = [&](llvm::Value* v) { return f32 && !asFloat ? b_.CreateBitCast(v, b_.getFloatTy()) : v; };
  llvm::Value* zero = llvm::Constant::getNullValue(regTy);

  std::vector<llvm::Value*> out;
  for (size_t i = 0; i < ptrs.size(); ++i) {
    const int bit = mask.empty() ? 1 : knownBit(mask[i]);
    if (bit == 0) {  // never runs
      out.push_back(fromReg(zero));
      continue;
    }
    const std::string pred = bit == 1 ? "" : "@$P ";
    std::vector<llvm::Value*> args;
    std::string text, constraints;
    llvm::Type* retTy = b_.getVoidTy();
    if (useRed) {  // red [$0], $1 (predicate $2)
      args = {ptrs[i], toReg(vals[i])};
      constraints = std::string("l,") + letter;
      if (bit != 1) {
        args.push_back(mask[i]);
        constraints += ",b";
      }
      text = pred + "red" + quals + " [$0], $1;";
      if (bit != 1) text.replace(text.find("$P"), 2, "$2");
    } else {  // atom $0, [$1], $2 [, $3] (predicate next), $0 tied to a 0
      args = {ptrs[i]};
      if (cas) args.push_back(toReg(cmps[i]));
      args.push_back(toReg(vals[i]));
      constraints = std::string("=") + letter + ",l," + letter + (cas ? std::string(",") + letter : std::string());
      const std::string predIdx = "$" + std::to_string(args.size() + 1);
      if (bit != 1) {
        args.push_back(mask[i]);
        constraints += ",b";
      }
      args.push_back(zero);
      constraints += ",0";
      text = pred + "atom" + quals + " $0, [$1], $2" + (cas ? ", $3" : "") + ";";
      if (bit != 1) text.replace(text.find("$P"), 2, predIdx);
      retTy = regTy;
    }
    constraints += ",~{memory}";
    std::vector<llvm::Type*> argTys;
    for (llvm::Value* a : args) argTys.push_back(a->getType());
    auto* asmFn = llvm::InlineAsm::get(llvm::FunctionType::get(retTy, argTys, false), text, constraints, /*sideEffects=*/true);
    llvm::Value* r = b_.CreateCall(asmFn, args);
    out.push_back(useRed ? fromReg(zero) : fromReg(r));
  }
  set(op.result(), join(out, op.result()->type));
}

// cp_async, per group of `vec` registers (cp.async.cg for 16 bytes, which goes around L1, .ca
// for 4 and 8):
//   cp.async.cg.shared.global [$0], [$1], 16, $2;
// with $2, the source size, 16 where the group's mask (its first register's) is on and 0 where
// it is off (nothing read, zeros written). cp_async_commit / cp_async_wait: cp.async.commit_group,
// cp.async.wait_group N. All ordered with the memory accesses around them (~{memory}).
void KernelEmitter::emitCpAsync(const Op& op) {
  llvm::Type* i32 = b_.getInt32Ty();
  if (op.kind != OpKind::CpAsync) {
    const std::string text = op.kind == OpKind::CpAsyncCommit
                                 ? std::string("cp.async.commit_group;")
                                 : "cp.async.wait_group " + std::to_string(op.intAttr("pending")) + ";";
    auto* asmFn = llvm::InlineAsm::get(llvm::FunctionType::get(b_.getVoidTy(), {}, false), text, "~{memory}", true);
    b_.CreateCall(asmFn, {});
    return;
  }
  const DType d = op.operand(1)->type.dtype;
  const unsigned vec = vecAttr(op);
  const int64_t bytes = int64_t(vec) * dtypeBytes(d);
  std::vector<llvm::Value*> dsts = regs(get(op.operand(0)));
  std::vector<llvm::Value*> srcs = regs(get(op.operand(1)));
  std::vector<llvm::Value*> mask;
  if (op.numOperands() > 2) mask = regs(get(op.operand(2)));
  const std::string text = std::string("cp.async.") + (bytes == 16 ? "cg" : "ca") + ".shared.global [$0], [$1], " +
                           std::to_string(bytes) + ", $2;";
  for (size_t g = 0; g < srcs.size(); g += vec) {
    llvm::Value* dst = b_.CreatePtrToInt(sharedAddress(op, dsts[g]), i32);
    llvm::Value* size = b_.getInt32(uint32_t(bytes));
    if (!mask.empty()) size = b_.CreateSelect(mask[g], size, b_.getInt32(0));
    auto* asmFn = llvm::InlineAsm::get(llvm::FunctionType::get(b_.getVoidTy(), {i32, srcs[g]->getType(), i32}, false), text,
                                       "r,l,r,~{memory}", /*sideEffects=*/true);
    b_.CreateCall(asmFn, {dst, srcs[g], size});
  }
}

llvm::Value* KernelEmitter::sharedAddress(const Op& op, llvm::Value* byteOffset) {
  if (!shared_) fail(op, "the function uses shared memory but declares shared_bytes(0)");
  return b_.CreateGEP(b_.getInt8Ty(), shared_, byteOffset);  // an i32 offset, sign-extended
}

void KernelEmitter::emitLdShared(const Op& op) {
  const Type& rt = op.result()->type;
  const DType d = rt.dtype;
  const unsigned vec = vecAttr(op);
  std::vector<llvm::Value*> addrs = regs(get(op.operand(0)));
  std::vector<llvm::Value*> mask;
  if (op.numOperands() > 1) mask = regs(get(op.operand(1)));
  llvm::Type* e = memType(d);
  std::vector<llvm::Value*> out;
  for (size_t g = 0; g < addrs.size(); g += vec) {
    const int bit = mask.empty() ? 1 : knownBit(mask[g]);
    llvm::Value* zero = llvm::Constant::getNullValue(vec > 1 ? static_cast<llvm::Type*>(llvm::FixedVectorType::get(e, vec)) : e);
    llvm::Value* group = zero;
    if (bit == 1) group = loadGroup(sharedAddress(op, addrs[g]), d, vec);
    if (bit == -1) group = ifThen(mask[g], [&] { return loadGroup(sharedAddress(op, addrs[g]), d, vec); }, zero);
    for (llvm::Value* r : regs(group)) out.push_back(fromMemory(r, d));
  }
  set(op.result(), join(out, rt));
}

void KernelEmitter::emitStShared(const Op& op) {
  const DType d = op.operand(1)->type.dtype;
  const unsigned vec = vecAttr(op);
  std::vector<llvm::Value*> addrs = regs(get(op.operand(0)));
  std::vector<llvm::Value*> vals = regs(toMemory(get(op.operand(1)), d));
  std::vector<llvm::Value*> mask;
  if (op.numOperands() > 2) mask = regs(get(op.operand(2)));
  for (size_t g = 0; g < addrs.size(); g += vec) {
    const int bit = mask.empty() ? 1 : knownBit(mask[g]);
    if (bit == 0) continue;
    llvm::Value* group = groupOf(vals, g, vec, memType(d));
    auto store = [&]() -> llvm::Value* {
      storeGroup(sharedAddress(op, addrs[g]), group, d, vec);
      return nullptr;
    };
    if (bit == 1) store();
    else ifThen(mask[g], store, nullptr);
  }
}

}  // namespace tl::ptx
