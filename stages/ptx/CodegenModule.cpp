// Thread IR -> LLVM module -> optimized LLVM IR -> PTX: the kernel's shape (signature,
// annotations, ids, structured control flow) and the driver function compileToPTX.
//
// Expects: a thread-level Function that passes the verifier.
// Guarantees (see Codegen.h): one module per kernel for nvptx64-nvidia-cuda with the target
// machine's data layout; the kernel is a PTX entry (nvvm.annotations "kernel", and "maxntidx" =
// 32 * numWarps, and "maxnreg" = maxRegisters when the launch gave maxnreg); parameters in order, pointers as `ptr addrspace(1)`, scalars by value (an i1
// parameter is passed as one byte, `.param .u8`, as NVPTX does for Triton); `for` becomes a loop
// with phi nodes for the induction variable and carried values that iterates while
// (step > 0 ? iv < hi : iv > hi) and stops where iv + step would overflow, exactly as the
// executor does (a zero step runs no iteration: the executor reports it as an error);
// `if` becomes branches that merge the yielded values with phi nodes.
// Source lines (PtxOptions::lineInfo): a compile unit of emission kind DebugDirectivesOnly, one
// DIFile (sourcePath()), a DISubprogram for the kernel and, while an op is emitted, the IRBuilder's
// debug location = the op's Loc; the latch and exit of a `for` and the merge of an `if` carry the
// for/if's own line. NVPTX turns these into `.loc 1 <line> <col>` lines and one `.file 1 "<path>"`.
#include <algorithm>
#include <chrono>
#include <mutex>
#include <stdexcept>

#include <llvm/Analysis/CGSCCPassManager.h>
#include <llvm/Analysis/LoopAnalysisManager.h>
#include <llvm/BinaryFormat/Dwarf.h>
#include <llvm/IR/DebugInfoMetadata.h>
#include <llvm/IR/IntrinsicsNVPTX.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/Verifier.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/Target/TargetOptions.h>

#include "ir/Verifier.h"
#include "ptx/CodegenInternal.h"

namespace tl {

bool isSupportedArch(const std::string& arch) {
  return arch == "sm_80" || arch == "sm_86" || arch == "sm_89" || arch == "sm_90" || arch == "sm_90a";
}

std::string describePtxOptions(const PtxOptions& o) {
  std::string s = "O" + std::to_string(o.optLevel) + (o.fastMath ? " fast-math" : " precise-math");
  s += o.lineInfo ? " line-info" : " no-line-info";
  if (o.lineInfo && !o.sourcePath.empty()) s += " file=" + o.sourcePath;
  return s;
}

namespace ptx {

// The PTX ISA version requested from LLVM: 8.4 is understood by CUDA 12.4+ and 13 drivers and
// ptxas, covers sm_80 .. sm_90, and is the first with fp8 (e4m3 / e5m2) mma.sync.
static constexpr const char* kPtxFeatures = "+ptx84";
static constexpr const char* kTriple = "nvptx64-nvidia-cuda";

std::unique_ptr<llvm::TargetMachine> makeTargetMachine(const PtxOptions& opts) {
  if (!isSupportedArch(opts.arch))
    throw std::invalid_argument("unsupported GPU architecture '" + opts.arch + "' (expected sm_80, sm_86, sm_89, sm_90 or sm_90a)");
  static std::once_flag once;
  std::call_once(once, [] {
    LLVMInitializeNVPTXTargetInfo();
    LLVMInitializeNVPTXTarget();
    LLVMInitializeNVPTXTargetMC();
    LLVMInitializeNVPTXAsmPrinter();
  });
  std::string error;
  const llvm::Target* target = llvm::TargetRegistry::lookupTarget(kTriple, error);
  if (!target) throw std::runtime_error("LLVM has no NVPTX target: " + error);
  llvm::TargetOptions to;  // AllowFPOpFusion stays Standard: no a*b+c contraction (see docs/gpu.md)
  const llvm::CodeGenOptLevel level = opts.optLevel <= 0   ? llvm::CodeGenOptLevel::None
                                      : opts.optLevel == 1 ? llvm::CodeGenOptLevel::Less
                                      : opts.optLevel == 2 ? llvm::CodeGenOptLevel::Default
                                                           : llvm::CodeGenOptLevel::Aggressive;
  return std::unique_ptr<llvm::TargetMachine>(
      target->createTargetMachine(kTriple, opts.arch, kPtxFeatures, to, std::nullopt, std::nullopt, level));
}

// ---------------------------------------------------------------------------------------------
// Types and values

KernelEmitter::KernelEmitter(const Function& fn, llvm::Module& module, const PtxOptions& opts)
    : fn_(fn), module_(module), ctx_(module.getContext()), b_(module.getContext()), opts_(opts) {}

llvm::Type* KernelEmitter::dtypeType(DType d) {
  switch (d) {
    case DType::I1: return b_.getInt1Ty();
    case DType::I32: return b_.getInt32Ty();
    case DType::I64: return b_.getInt64Ty();
    case DType::F16: return b_.getHalfTy();
    case DType::BF16: return b_.getBFloatTy();
    case DType::F32: return b_.getFloatTy();
    case DType::F8E4M3:
    case DType::F8E5M2: return b_.getInt8Ty();  // the bit pattern (LLVM has no fp8 type): CodegenFp8.cpp
  }
  return b_.getInt32Ty();
}

llvm::Type* KernelEmitter::memType(DType d) { return d == DType::I1 ? b_.getInt8Ty() : dtypeType(d); }

llvm::Type* KernelEmitter::elemType(const Type& t) {
  return t.isPtr ? static_cast<llvm::Type*>(llvm::PointerType::get(ctx_, kGlobal)) : dtypeType(t.dtype);
}

llvm::Type* KernelEmitter::llvmType(const Type& t) {
  llvm::Type* e = elemType(t);
  return t.isScalar() ? e : static_cast<llvm::Type*>(llvm::FixedVectorType::get(e, numRegs(t)));
}

llvm::Value* KernelEmitter::get(const Value* v) const {
  auto it = values_.find(v);
  if (it == values_.end()) throw IRError(v->def ? v->def->loc : fn_.loc, "codegen: value '%" + v->name + "' used before it was emitted");
  return it->second;
}

void KernelEmitter::set(const Value* v, llvm::Value* x) { values_[v] = x; }

std::vector<llvm::Value*> KernelEmitter::regs(llvm::Value* v) {
  auto* vt = llvm::dyn_cast<llvm::FixedVectorType>(v->getType());
  if (!vt) return {v};
  std::vector<llvm::Value*> out;
  for (unsigned i = 0; i < vt->getNumElements(); ++i) out.push_back(b_.CreateExtractElement(v, b_.getInt32(i)));
  return out;
}

llvm::Value* KernelEmitter::join(const std::vector<llvm::Value*>& rs, llvm::Type* elem, bool vector) {
  if (!vector) return rs.at(0);
  llvm::Value* v = llvm::PoisonValue::get(llvm::FixedVectorType::get(elem, static_cast<unsigned>(rs.size())));
  for (size_t i = 0; i < rs.size(); ++i) v = b_.CreateInsertElement(v, rs[i], b_.getInt32(static_cast<uint32_t>(i)));
  return v;
}

llvm::Value* KernelEmitter::join(const std::vector<llvm::Value*>& rs, const Type& t) {
  return join(rs, elemType(t), t.isTile());
}

void KernelEmitter::fail(const Op& op, const std::string& msg) const {
  throw IRError(op.loc, std::string("PTX code generation: ") + mnemonic(op.kind) + ": " + msg);
}

// ---------------------------------------------------------------------------------------------
// The kernel

llvm::Function* KernelEmitter::emit() {
  std::vector<llvm::Type*> params;
  for (const auto& arg : fn_.body.args) {
    if (arg->type.isTile()) throw IRError(fn_.loc, "PTX code generation: kernel parameter '" + arg->name + "' is a tile");
    params.push_back(llvmType(arg->type));
  }
  auto* fty = llvm::FunctionType::get(b_.getVoidTy(), params, false);
  kernel_ = llvm::Function::Create(fty, llvm::Function::ExternalLinkage, fn_.name, module_);
  kernel_->setCallingConv(llvm::CallingConv::PTX_Kernel);
  for (size_t i = 0; i < fn_.body.args.size(); ++i) {
    kernel_->getArg(static_cast<unsigned>(i))->setName(fn_.body.args[i]->name);
    set(fn_.body.args[i].get(), kernel_->getArg(static_cast<unsigned>(i)));
  }

  // nvvm.annotations: this function is a kernel entry, launched with at most 32*numWarps threads
  // (NVVMIntrRange then knows tid.x < 32*numWarps, and ptxas gets .maxntid).
  auto annotate = [&](const char* key, int value) {
    llvm::Metadata* md[] = {llvm::ValueAsMetadata::get(kernel_), llvm::MDString::get(ctx_, key),
                            llvm::ValueAsMetadata::get(b_.getInt32(static_cast<uint32_t>(value)))};
    module_.getOrInsertNamedMetadata("nvvm.annotations")->addOperand(llvm::MDNode::get(ctx_, md));
  };
  annotate("kernel", 1);
  annotate("maxntidx", 32 * std::max(1, fn_.numWarps));
  if (fn_.maxRegisters > 0) annotate("maxnreg", fn_.maxRegisters);  // .maxnreg (the launch's maxnreg)

  // Source lines: the compile unit and the kernel's scope, before any instruction is built.
  llvm::DIBuilder dib(module_);
  if (opts_.lineInfo) beginLineInfo(dib);

  declareShared();

  b_.SetInsertPoint(llvm::BasicBlock::Create(ctx_, "entry", kernel_));
  const Op* term = emitRegion(fn_.body);
  if (!term || term->kind != OpKind::Return) throw IRError(fn_.loc, "PTX code generation: the kernel body does not end in return");
  if (subprogram_) dib.finalizeSubprogram(subprogram_);
  dib.finalize();  // resolves the debug metadata and lists the compile unit in llvm.dbg.cu
  return kernel_;
}

// Each op's instructions carry its Loc. When the region ends, the location goes back to the
// enclosing op's, so what a `for`/`if` builds after its body (the latch, the phis, the branch
// to the merge block) carries the `for`/`if` line.
const Op* KernelEmitter::emitRegion(const Region& r) {
  const llvm::DebugLoc outer = b_.getCurrentDebugLocation();
  const Op* term = nullptr;
  for (const auto& op : r.ops) {
    setLoc(*op);
    if (op->kind == OpKind::Yield || op->kind == OpKind::Condition) {
      term = op.get();
      break;
    }
    if (op->kind == OpKind::Return) {
      b_.CreateRetVoid();
      term = op.get();
      break;
    }
    emitOp(*op);
  }
  b_.SetCurrentDebugLocation(outer);
  return term;
}

// ---------------------------------------------------------------------------------------------
// Source lines

// LLVM prints the path as a quoted string with C escapes (\\, \t, \303 for non-ASCII bytes);
// ptxas reads all of them except \", so a double quote in the path becomes '_'.
std::string KernelEmitter::sourcePath() const {
  std::string path = fn_.name + ".tl";  // IR parsed from text has no source file
  if (fn_.source && !fn_.source->path().empty()) path = fn_.source->path();
  if (!opts_.sourcePath.empty()) path = opts_.sourcePath;
  std::replace(path.begin(), path.end(), '"', '_');
  return path;
}

// DebugDirectivesOnly, not LineTablesOnly: with LineTablesOnly LLVM 19's NVPTX also prints
// .debug_abbrev/.debug_info sections and `.target sm_90, debug`, a debug compilation for ptxas;
// DebugDirectivesOnly prints only `.file`/`.loc` (and an empty `.section .debug_loc {}`), so the
// PTX assembles to the same code as without line info. DWARF version 2 is what clang uses for
// NVPTX; the version flags are required by LLVM for any debug metadata.
void KernelEmitter::beginLineInfo(llvm::DIBuilder& dib) {
  llvm::DIFile* file = dib.createFile(sourcePath(), "");
  const bool optimized = opts_.optLevel > 0;
  dib.createCompileUnit(llvm::dwarf::DW_LANG_C, file, "tilelab", optimized, /*Flags=*/"", /*RV=*/0,
                        /*SplitName=*/"", llvm::DICompileUnit::DebugDirectivesOnly);
  llvm::DISubroutineType* type = dib.createSubroutineType(dib.getOrCreateTypeArray({}));
  const auto spFlags = llvm::DISubprogram::SPFlagDefinition |
                       (optimized ? llvm::DISubprogram::SPFlagOptimized : llvm::DISubprogram::SPFlagZero);
  subprogram_ = dib.createFunction(file, fn_.name, /*LinkageName=*/"", file, fn_.loc.line, type, fn_.loc.line,
                                   llvm::DINode::FlagPrototyped, spFlags);
  kernel_->setSubprogram(subprogram_);
  module_.addModuleFlag(llvm::Module::Warning, "Debug Info Version", llvm::DEBUG_METADATA_VERSION);
  module_.addModuleFlag(llvm::Module::Warning, "Dwarf Version", 2);
}

void KernelEmitter::setLoc(const Op& op) {
  if (!subprogram_ || !op.loc.known()) {
    b_.SetCurrentDebugLocation(llvm::DebugLoc());
    return;
  }
  b_.SetCurrentDebugLocation(llvm::DILocation::get(ctx_, op.loc.line, op.loc.col, subprogram_));
}

llvm::Value* KernelEmitter::emitId(const Op& op) {
  using namespace llvm;
  auto sreg = [&](Intrinsic::ID id) { return b_.CreateIntrinsic(id, {}, {}); };
  switch (op.kind) {
    case OpKind::ThreadId: return sreg(Intrinsic::nvvm_read_ptx_sreg_tid_x);
    case OpKind::LaneId: return b_.CreateAnd(sreg(Intrinsic::nvvm_read_ptx_sreg_tid_x), 31, "lane");
    case OpKind::WarpId: return b_.CreateLShr(sreg(Intrinsic::nvvm_read_ptx_sreg_tid_x), 5, "warp");
    case OpKind::BlockId:
    case OpKind::NumBlocks: {
      static const Intrinsic::ID ctaid[] = {Intrinsic::nvvm_read_ptx_sreg_ctaid_x, Intrinsic::nvvm_read_ptx_sreg_ctaid_y,
                                            Intrinsic::nvvm_read_ptx_sreg_ctaid_z};
      static const Intrinsic::ID nctaid[] = {Intrinsic::nvvm_read_ptx_sreg_nctaid_x, Intrinsic::nvvm_read_ptx_sreg_nctaid_y,
                                             Intrinsic::nvvm_read_ptx_sreg_nctaid_z};
      const int64_t axis = op.intAttr("axis");
      if (axis < 0 || axis > 2) fail(op, "axis must be 0, 1 or 2");
      return sreg(op.kind == OpKind::BlockId ? ctaid[axis] : nctaid[axis]);
    }
    default: fail(op, "not an id");
  }
}

void KernelEmitter::emitOp(const Op& op) {
  llvm::Value* result = nullptr;
  switch (op.kind) {
    case OpKind::ThreadId: case OpKind::LaneId: case OpKind::WarpId: case OpKind::BlockId: case OpKind::NumBlocks:
      result = emitId(op);
      break;
    case OpKind::Constant: result = emitConstant(op); break;
    case OpKind::Splat: {
      llvm::Value* s = get(op.operand(0));
      const Type& t = op.result()->type;
      result = t.isTile() ? b_.CreateVectorSplat(numRegs(t), s) : s;
      break;
    }
    case OpKind::RegIndex: case OpKind::Extract: case OpKind::Pack: case OpKind::Permute: case OpKind::RegReduce:
      result = emitRegisterOp(op);
      break;
    case OpKind::Neg: case OpKind::Not: case OpKind::Exp: case OpKind::Exp2: case OpKind::Log: case OpKind::Sqrt:
    case OpKind::Rsqrt: case OpKind::Abs: case OpKind::Sigmoid: case OpKind::Log2: case OpKind::Cos: case OpKind::Sin:
    case OpKind::Floor: case OpKind::Ceil: case OpKind::Erf:
    case OpKind::Asin: case OpKind::Acos: case OpKind::Atan: case OpKind::Tan: case OpKind::Sinh: case OpKind::Cosh:
    case OpKind::Tanh: case OpKind::Log10: case OpKind::Log1p: case OpKind::Expm1: case OpKind::Exp10:
    case OpKind::Cbrt: case OpKind::Rcp: case OpKind::Trunc: case OpKind::Round: case OpKind::Rint:
      result = emitUnary(op);
      break;
    case OpKind::Add: case OpKind::Sub: case OpKind::Mul: case OpKind::Div: case OpKind::Rem: case OpKind::Maximum:
    case OpKind::Minimum: case OpKind::And: case OpKind::Or: case OpKind::Xor: case OpKind::Fma:
    case OpKind::Shl: case OpKind::Shr: case OpKind::Umulhi: case OpKind::Atan2: case OpKind::Pow: case OpKind::Hypot:
      result = emitBinary(op);
      break;
    case OpKind::Cmp: result = emitCmp(op); break;
    case OpKind::Convert: result = emitConvert(op); break;
    case OpKind::Select: result = b_.CreateSelect(get(op.operand(0)), get(op.operand(1)), get(op.operand(2))); break;
    case OpKind::AddPtr: {
      // p + off elements; a plain (wrapping) getelementptr, as the executor wraps modulo 2^64.
      result = b_.CreateGEP(memType(op.result()->type.dtype), get(op.operand(0)), get(op.operand(1)));
      break;
    }
    case OpKind::PtrCast: {  // i64 <-> ptr addrspace(1); pointer to pointer is the same (opaque) pointer
      llvm::Value* x = get(op.operand(0));
      const bool fromPtr = op.operand(0)->type.isPtr, toPtr = op.result()->type.isPtr;
      result = fromPtr == toPtr ? x : toPtr ? b_.CreateIntToPtr(x, llvmType(op.result()->type))
                                            : b_.CreatePtrToInt(x, llvmType(op.result()->type));
      break;
    }
    case OpKind::ShflXor: case OpKind::ShflIdx: result = emitShuffle(op); break;
    case OpKind::Mma: result = emitMma(op); break;
    case OpKind::CvtTf32: result = emitCvtTf32(op); break;
    case OpKind::Ldmatrix: result = emitLdmatrix(op); break;
    case OpKind::Wgmma: result = emitWgmma(op); break;
    case OpKind::WgmmaWait:
      if (op.numOperands() == 0) emitAsyncFence(op);
      else emitWgmmaWait(op);
      return;
    case OpKind::WgmmaFence: case OpKind::WgmmaCommit: case OpKind::FenceProxyAsync:
      emitAsyncFence(op);
      return;
    case OpKind::CpAsync: case OpKind::CpAsyncCommit: case OpKind::CpAsyncWait: emitCpAsync(op); return;
    case OpKind::LdGlobal: emitLdGlobal(op); return;
    case OpKind::StGlobal: emitStGlobal(op); return;
    case OpKind::LdShared: emitLdShared(op); return;
    case OpKind::StShared: emitStShared(op); return;
    case OpKind::AtomGlobal: case OpKind::AtomCasGlobal: emitAtom(op); return;
    case OpKind::Barrier: b_.CreateIntrinsic(llvm::Intrinsic::nvvm_barrier0, {}, {}); return;
    case OpKind::PrintRegs: emitPrint(op); return;
    case OpKind::AssertRegs: emitAssert(op); return;
    case OpKind::For: emitFor(op); return;
    case OpKind::If: emitIf(op); return;
    case OpKind::While: emitWhile(op); return;
    default: fail(op, "this op is not part of thread IR (run the thread pipeline first)");
  }
  if (op.numResults() != 1) fail(op, "expected one result");
  if (!result->hasName() && !op.result()->name.empty() && !llvm::isa<llvm::Constant>(result))
    result->setName(op.result()->name);
  set(op.result(), result);
}

// for %iv = lo to hi step s iter_args(...):
//
//   pre:    br continues(lo) ? body : exit
//   body:   %iv = phi [lo, pre], [next, latch];  %c_k = phi [init_k, pre], [yield_k, latch]
//           ... the region's ops (may add blocks; the last one is `latch') ...
//   latch:  next = iv + s; br continues(next) && no overflow ? body : exit
//   exit:   %r_k = phi [init_k, pre], [yield_k, latch]
void KernelEmitter::emitFor(const Op& op) {
  const Region& body = op.region(0);
  llvm::Value* lo = get(op.operand(0));
  llvm::Value* hi = get(op.operand(1));
  llvm::Value* step = get(op.operand(2));
  llvm::Type* ivTy = lo->getType();
  if (!ivTy->isIntegerTy() || ivTy->getIntegerBitWidth() < 32) fail(op, "the loop bounds must be i32 or i64 scalars");

  llvm::Value* zero = llvm::ConstantInt::get(ivTy, 0);
  llvm::Value* up = b_.CreateICmpSGT(step, zero);
  llvm::Value* down = b_.CreateICmpSLT(step, zero);
  // continues(v) = step > 0 ? v < hi : (step < 0 && v > hi)
  auto continues = [&](llvm::Value* v) {
    return b_.CreateSelect(up, b_.CreateICmpSLT(v, hi), b_.CreateAnd(down, b_.CreateICmpSGT(v, hi)));
  };

  llvm::BasicBlock* pre = b_.GetInsertBlock();
  llvm::BasicBlock* bodyBB = llvm::BasicBlock::Create(ctx_, "for.body", kernel_);
  llvm::BasicBlock* exitBB = llvm::BasicBlock::Create(ctx_, "for.exit", kernel_);
  b_.CreateCondBr(continues(lo), bodyBB, exitBB);

  b_.SetInsertPoint(bodyBB);
  llvm::PHINode* iv = b_.CreatePHI(ivTy, 2, body.arg(0)->name.empty() ? "iv" : body.arg(0)->name);
  iv->addIncoming(lo, pre);
  set(body.arg(0), iv);
  std::vector<llvm::PHINode*> carried;
  for (size_t k = 0; k + 1 < body.args.size(); ++k) {
    llvm::Value* init = get(op.operand(3 + k));
    llvm::PHINode* phi = b_.CreatePHI(init->getType(), 2, body.arg(k + 1)->name);
    phi->addIncoming(init, pre);
    set(body.arg(k + 1), phi);
    carried.push_back(phi);
  }

  const Op* yield = emitRegion(body);
  if (!yield || yield->kind != OpKind::Yield || yield->numOperands() != carried.size())
    fail(op, "the loop body must end in a yield of every carried value");
  std::vector<llvm::Value*> next;
  for (size_t k = 0; k < carried.size(); ++k) next.push_back(get(yield->operand(k)));

  // next iv: an i32 loop steps in i64, so an overflowing step fails the bound test exactly as
  // the executor's __builtin_add_overflow does; an i64 loop checks the overflow bit.
  llvm::Value* stay;
  llvm::Value* ivNext;
  if (ivTy->getIntegerBitWidth() == 32) {
    llvm::Value* wide = b_.CreateAdd(b_.CreateSExt(iv, b_.getInt64Ty()), b_.CreateSExt(step, b_.getInt64Ty()), "", false, true);
    llvm::Value* hi64 = b_.CreateSExt(hi, b_.getInt64Ty());
    stay = b_.CreateSelect(up, b_.CreateICmpSLT(wide, hi64), b_.CreateAnd(down, b_.CreateICmpSGT(wide, hi64)));
    ivNext = b_.CreateTrunc(wide, ivTy, "iv.next");
  } else {
    llvm::Value* sum = b_.CreateBinaryIntrinsic(llvm::Intrinsic::sadd_with_overflow, iv, step);
    ivNext = b_.CreateExtractValue(sum, 0, "iv.next");
    stay = b_.CreateAnd(b_.CreateNot(b_.CreateExtractValue(sum, 1)), continues(ivNext));
  }
  llvm::BasicBlock* latch = b_.GetInsertBlock();
  llvm::BranchInst* back = b_.CreateCondBr(stay, bodyBB, exitBB);
  if (op.hasAttr("unroll") && op.intAttr("unroll") == 1) {
    // llvm.loop (distinct, self-referential) with llvm.loop.unroll.full: LLVM's loop unroller
    // replicates the body for every iteration of a constant trip count.
    llvm::MDNode* full = llvm::MDNode::get(ctx_, llvm::MDString::get(ctx_, "llvm.loop.unroll.full"));
    llvm::MDNode* loopId = llvm::MDNode::getDistinct(ctx_, {nullptr, full});
    loopId->replaceOperandWith(0, loopId);
    back->setMetadata(llvm::LLVMContext::MD_loop, loopId);
  }
  iv->addIncoming(ivNext, latch);
  for (size_t k = 0; k < carried.size(); ++k) carried[k]->addIncoming(next[k], latch);

  b_.SetInsertPoint(exitBB);
  for (size_t k = 0; k < op.numResults(); ++k) {
    llvm::PHINode* r = b_.CreatePHI(carried[k]->getType(), 2, op.result(k)->name);
    r->addIncoming(get(op.operand(3 + k)), pre);
    r->addIncoming(next[k], latch);
    set(op.result(k), r);
  }
}

// while iter_args(inits): cond-region ending in `condition %c`, body-region yielding the next values:
//
//   pre:    br head
//   head:   %a_k = phi [init_k, pre], [yield_k, latch]
//           ... the cond region's ops (may add blocks) ...;  br c ? body : exit
//   body:   the body region's ops on the same values (its arguments are the head's phis);
//   latch:  (the block the body ends in) br head
//   exit:   the results are the head's phis: the values the last condition saw
// The condition is uniform across the block (the lowering's contract), so no thread leaves
// early and a barrier in the body is reached by every thread.
void KernelEmitter::emitWhile(const Op& op) {
  const Region &cond = op.region(0), &body = op.region(1);
  llvm::BasicBlock* pre = b_.GetInsertBlock();
  llvm::BasicBlock* headBB = llvm::BasicBlock::Create(ctx_, "while.cond", kernel_);
  llvm::BasicBlock* bodyBB = llvm::BasicBlock::Create(ctx_, "while.body", kernel_);
  llvm::BasicBlock* exitBB = llvm::BasicBlock::Create(ctx_, "while.exit", kernel_);
  b_.CreateBr(headBB);
  b_.SetInsertPoint(headBB);
  std::vector<llvm::PHINode*> carried;
  for (size_t k = 0; k < op.numOperands(); ++k) {
    llvm::Value* init = get(op.operand(k));
    llvm::PHINode* phi = b_.CreatePHI(init->getType(), 2, cond.arg(k)->name);
    phi->addIncoming(init, pre);
    set(cond.arg(k), phi);
    carried.push_back(phi);
  }
  const Op* c = emitRegion(cond);
  if (!c || c->kind != OpKind::Condition) fail(op, "the cond region must end in a condition");
  llvm::Value* go = get(c->operand(0));
  if (!go->getType()->isIntegerTy(1)) fail(op, "the condition must be a scalar i1");
  b_.CreateCondBr(go, bodyBB, exitBB);

  b_.SetInsertPoint(bodyBB);
  for (size_t k = 0; k < carried.size(); ++k) set(body.arg(k), carried[k]);
  const Op* yield = emitRegion(body);
  if (!yield || yield->kind != OpKind::Yield || yield->numOperands() != carried.size())
    fail(op, "the loop body must end in a yield of every carried value");
  std::vector<llvm::Value*> next;
  for (size_t k = 0; k < carried.size(); ++k) next.push_back(get(yield->operand(k)));
  llvm::BasicBlock* latch = b_.GetInsertBlock();
  b_.CreateBr(headBB);
  for (size_t k = 0; k < carried.size(); ++k) carried[k]->addIncoming(next[k], latch);

  b_.SetInsertPoint(exitBB);
  for (size_t k = 0; k < op.numResults(); ++k) set(op.result(k), carried[k]);
}

// if %c: then-region / else-region, each ending in a yield; results merge with phi nodes.
// The condition may differ between the lanes of a warp: the GPU runs both sides, masked.
void KernelEmitter::emitIf(const Op& op) {
  llvm::Value* cond = get(op.operand(0));
  if (!cond->getType()->isIntegerTy(1)) fail(op, "the condition must be a scalar i1");
  llvm::BasicBlock* thenBB = llvm::BasicBlock::Create(ctx_, "if.then", kernel_);
  llvm::BasicBlock* elseBB = llvm::BasicBlock::Create(ctx_, "if.else", kernel_);
  llvm::BasicBlock* mergeBB = llvm::BasicBlock::Create(ctx_, "if.end", kernel_);
  b_.CreateCondBr(cond, thenBB, elseBB);

  auto side = [&](size_t i, llvm::BasicBlock* bb, std::vector<llvm::Value*>& out) {
    b_.SetInsertPoint(bb);
    const Op* yield = op.regions.size() > i ? emitRegion(op.region(i)) : nullptr;
    if (op.numResults() > 0 && (!yield || yield->numOperands() != op.numResults()))
      fail(op, "each branch must yield every result");
    for (size_t k = 0; k < op.numResults(); ++k) out.push_back(get(yield->operand(k)));
    llvm::BasicBlock* end = b_.GetInsertBlock();
    b_.CreateBr(mergeBB);
    return end;
  };
  std::vector<llvm::Value*> thenVals, elseVals;
  llvm::BasicBlock* thenEnd = side(0, thenBB, thenVals);
  llvm::BasicBlock* elseEnd = side(1, elseBB, elseVals);

  b_.SetInsertPoint(mergeBB);
  for (size_t k = 0; k < op.numResults(); ++k) {
    llvm::PHINode* r = b_.CreatePHI(thenVals[k]->getType(), 2, op.result(k)->name);
    r->addIncoming(thenVals[k], thenEnd);
    r->addIncoming(elseVals[k], elseEnd);
    set(op.result(k), r);
  }
}

// ---------------------------------------------------------------------------------------------
// Optimization and PTX emission

namespace {

void optimize(llvm::Module& m, llvm::TargetMachine& tm, int optLevel) {
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PassBuilder pb(&tm);  // registers NVPTX's own passes (NVVMReflect, NVVMIntrRange, ...)
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  const llvm::OptimizationLevel level = optLevel <= 0   ? llvm::OptimizationLevel::O0
                                        : optLevel == 1 ? llvm::OptimizationLevel::O1
                                        : optLevel == 2 ? llvm::OptimizationLevel::O2
                                                        : llvm::OptimizationLevel::O3;
  llvm::ModulePassManager mpm =
      optLevel <= 0 ? pb.buildO0DefaultPipeline(level) : pb.buildPerModuleDefaultPipeline(level);
  mpm.run(m, mam);
}

std::string emitPTX(llvm::Module& m, llvm::TargetMachine& tm) {
  llvm::SmallString<0> buffer;
  llvm::raw_svector_ostream os(buffer);
  llvm::legacy::PassManager pm;
  if (tm.addPassesToEmitFile(pm, os, nullptr, llvm::CodeGenFileType::AssemblyFile))
    throw std::runtime_error("LLVM's NVPTX target cannot emit assembly");
  pm.run(m);
  return std::string(buffer.str());
}

std::string moduleText(const llvm::Module& m) {
  std::string text;
  llvm::raw_string_ostream os(text);
  m.print(os, nullptr);
  return text;
}

}  // namespace

// The work limit (Codegen.h, kMaxElemsPerThread / kMaxUnrolledElements): the code generator
// unrolls every op over the elements each thread holds, so LLVM's and ptxas' work grows with
// their sum, and faster than linearly with the elements of one value (a softmax row of 2^20
// f32 over 128 threads kept tl-ptx in LLVM and ptxas for over 400 s at 2.2 GB).
void checkUnrolledSize(const Function& fn) {
  int64_t total = 0;
  const Op* widest = nullptr;
  int64_t widestElems = 0;
  walk(fn.body, [&](Op& op) {
    int64_t n = 1;
    for (const auto& r : op.results) n = std::max(n, r->type.numel());  // <Nxf32>: a thread's N registers
    total += n;
    if (n > widestElems) widestElems = n, widest = &op;
  });
  const int threads = fn.numWarps * 32;
  if (widest && widestElems > kMaxElemsPerThread) {
    throw RuntimeError(widest->loc,
                       "the tile computed here gives each of the " + std::to_string(threads) +
                           " threads " + std::to_string(widestElems) + " elements of one tile; tl-ptx compiles at most " +
                           std::to_string(kMaxElemsPerThread) + " per thread per tile. A thread has at most 255 "
                           "registers, so such a tile spills to local memory, and LLVM and ptxas take minutes on it: "
                           "use a smaller block (--set) or more warps (--num-warps)");
  }
  if (total > kMaxUnrolledElements)
    throw RuntimeError(fn.loc, "the kernel unrolls to " + std::to_string(total) +
                                   " element operations per thread (every op times the elements each thread holds); "
                                   "tl-ptx compiles at most " + std::to_string(kMaxUnrolledElements) +
                                   ": use smaller blocks or fewer statements");
}

}  // namespace ptx

PtxResult compileToPTX(const Function& fn, const PtxOptions& opts) {
  const auto start = std::chrono::steady_clock::now();
  if (fn.level != IRLevel::Thread)
    throw IRError(fn.loc, "PTX code generation needs thread IR (run the thread pipeline first), got block IR of '" + fn.name + "'");
  if (std::string problems = verifyFunction(fn); !problems.empty())
    throw IRError(fn.loc, "PTX code generation: the thread IR of '" + fn.name + "' does not verify:\n" + problems);
  if (!isSupportedArch(opts.arch))
    throw IRError(fn.loc, "PTX code generation: unsupported GPU architecture '" + opts.arch +
                              "' (expected sm_80, sm_86, sm_89, sm_90 or sm_90a)");

  ptx::checkUnrolledSize(fn);

  std::unique_ptr<llvm::TargetMachine> tm = ptx::makeTargetMachine(opts);
  llvm::LLVMContext ctx;
  llvm::Module module(fn.name, ctx);
  module.setTargetTriple(tm->getTargetTriple().str());
  module.setDataLayout(tm->createDataLayout());
  ptx::KernelEmitter(fn, module, opts).emit();

  std::string broken;
  llvm::raw_string_ostream err(broken);
  if (llvm::verifyModule(module, &err))
    throw IRError(fn.loc, "PTX code generation produced invalid LLVM IR (an internal error): " + broken);

  auto msSince = [](std::chrono::steady_clock::time_point t) {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t).count();
  };
  PtxResult result;
  result.kernelName = fn.name;
  const auto optStart = std::chrono::steady_clock::now();
  ptx::optimize(module, *tm, opts.optLevel);
  result.optimizeMs = msSince(optStart);
  result.llvmIR = ptx::moduleText(module);
  const auto emitStart = std::chrono::steady_clock::now();
  result.ptx = ptx::emitPTX(module, *tm);
  result.emitMs = msSince(emitStart);
  result.codegenMs = msSince(start);
  return result;
}

}  // namespace tl
