// Private to the code generator (stages/ptx/Codegen*.cpp): the object that turns ONE thread-IR
// function into ONE LLVM function, op by op.
//
//   CodegenModule.cpp   the kernel signature, ids, control flow (for/if/while), the walk over ops,
//                       the optimization pipeline and PTX emission (compileToPTX)
//   CodegenOps.cpp      constants, registers (reg_index/extract/pack/permute/reg_reduce),
//                       elementwise math with the executor's semantics, convert, shuffles
//   CodegenFp8.cpp      fp8 <-> f32 conversions (cvt.rn.satfinite.e4m3x2.f32, cvt.rn.f16x2.e4m3x2
//                       and their e5m2 twins, sm_89+), the arch check
//   CodegenDebug.cpp    print_regs (vprintf) and assert_regs (__assertfail)
//   CodegenMemory.cpp   ld/st_global (vector accesses, predicated with inline PTX), atomics
//                       (atom/red.global in inline PTX), ld/st_shared (one addrspace(3) array), barrier
//
// Expects: verified thread IR (compileToPTX runs the verifier first).
// Guarantees: every IR value maps to one LLVM value of type llvmType(value.type): a scalar, or
// an LLVM vector <N x T> for N registers; element types: i1/i32/i64, half/bfloat/float, i8 for
// fp8 (the bit pattern), and `ptr addrspace(1)` for pointers. In memory an i1 is one byte (i8), as lib/runtime/Memory.h
// stores it.
// Source lines (PtxOptions::lineInfo): the module gets a compile unit (emission kind
// DebugDirectivesOnly), the kernel a DISubprogram, and the IRBuilder's current debug location is
// the op being emitted (setLoc), so every instruction built for an op carries its line/column.
#pragma once

#include <cctype>

#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include <llvm/IR/DIBuilder.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Module.h>
#include <llvm/Target/TargetMachine.h>

#include "ir/IR.h"
#include "ptx/Codegen.h"

namespace tl::ptx {

// "sm_90" -> 90, "sm_90a" -> 90; 0 when the arch is not of that form.
inline int smNumber(const std::string& arch) {
  if (arch.rfind("sm_", 0) != 0) return 0;
  int n = 0;
  for (size_t i = 3; i < arch.size() && std::isdigit(static_cast<unsigned char>(arch[i])); ++i) n = n * 10 + (arch[i] - '0');
  return n;
}

// The address spaces of NVPTX that the generated code uses.
enum AddrSpace : unsigned {
  kGeneric = 0,  // generic addresses (unused: every access names its space)
  kGlobal = 1,   // device memory: the kernel's buffers (ld.global / st.global)
  kShared = 3,   // the block's shared memory (ld.shared / st.shared)
};

class KernelEmitter {
 public:
  KernelEmitter(const Function& fn, llvm::Module& module, const PtxOptions& opts);

  // Builds the kernel (signature, annotations, body) into the module; returns it.
  llvm::Function* emit();

 private:
  // ----- types (CodegenModule.cpp) -----
  llvm::Type* elemType(const Type& t);           // register element: i32, float, ptr addrspace(1), ...
  llvm::Type* dtypeType(DType d);                // i1, i32, i64, half, bfloat, float
  llvm::Type* memType(DType d);                  // in memory: i1 -> i8, others as dtypeType
  llvm::Type* llvmType(const Type& t);           // scalar, or <N x elem> for a register vector
  static unsigned numRegs(const Type& t) { return static_cast<unsigned>(t.numel()); }

  // ----- values -----
  llvm::Value* get(const Value* v) const;
  void set(const Value* v, llvm::Value* x);
  // The registers of an LLVM value as scalars (a scalar is one register), and back.
  std::vector<llvm::Value*> regs(llvm::Value* v);
  llvm::Value* join(const std::vector<llvm::Value*>& regs, const Type& t);
  llvm::Value* join(const std::vector<llvm::Value*>& regs, llvm::Type* elem, bool vector);

  // ----- walking the IR (CodegenModule.cpp) -----
  const Op* emitRegion(const Region& r);  // emits every op; returns the terminator (or null)
  void emitOp(const Op& op);
  void emitFor(const Op& op);
  void emitIf(const Op& op);
  void emitWhile(const Op& op);
  llvm::Value* emitId(const Op& op);
  [[noreturn]] void fail(const Op& op, const std::string& msg) const;

  // ----- source lines (CodegenModule.cpp) -----
  // The compile unit, the file and the kernel's DISubprogram (only with opts_.lineInfo).
  void beginLineInfo(llvm::DIBuilder& dib);
  // Instructions built from now on carry op's line and column (none when unknown or when
  // line info is off).
  void setLoc(const Op& op);
  std::string sourcePath() const;  // the path `.file` names

  // ----- ops (CodegenOps.cpp) -----
  llvm::Value* emitConstant(const Op& op);
  llvm::Value* emitRegisterOp(const Op& op);  // reg_index, extract, pack, permute, reg_reduce
  llvm::Value* emitUnary(const Op& op);
  llvm::Value* emitBinary(const Op& op);
  llvm::Value* emitCmp(const Op& op);
  llvm::Value* emitConvert(const Op& op);
  llvm::Value* emitShuffle(const Op& op);
  // a `kind` b with the executor's semantics for dtype d (scalars or vectors alike).
  llvm::Value* binary(const Op& at, OpKind kind, DType d, llvm::Value* a, llvm::Value* b);
  llvm::Value* intBinary(const Op& at, OpKind kind, DType d, llvm::Value* a, llvm::Value* b);
  llvm::Value* floatUnary(const Op& at, OpKind kind, llvm::Value* x);  // x: f32 (scalar or vector)
  llvm::Value* exp(llvm::Value* x);    // e^x of an f32 scalar
  llvm::Value* exp2(llvm::Value* x);   // 2^x of an f32 scalar
  llvm::Value* sinCos(llvm::Value* x, bool cosine);  // sin/cos of an f32 scalar (range-reduced .approx)
  llvm::Value* erf(llvm::Value* x);    // erf of an f32 scalar (|error| < 1e-6)
  llvm::Value* toF32(llvm::Value* x);  // f16/bf16 -> f32 (exact); f32 unchanged
  llvm::Value* fromF32(llvm::Value* x, DType d);  // f32 -> d, round to nearest even
  llvm::Value* perRegister(llvm::Value* x, const std::function<llvm::Value*(llvm::Value*)>& fn);
  llvm::Value* shuffleScalar(llvm::Value* x, llvm::Value* laneOrOffset, bool xorMode);

  // ----- fp8 (CodegenFp8.cpp) -----
  llvm::Value* convertFp8(const Op& op, llvm::Value* x);  // a convert whose source or result is fp8
  llvm::Value* fp8ToF32(llvm::Value* x, DType d);         // i8 (or <N x i8>) bits -> f32, exact
  llvm::Value* f32ToFp8(llvm::Value* x, DType d);         // f32 -> fp8 bits: RTNE, satfinite
  void requireFp8Arch(const Op& op) const;                // RuntimeError below sm_89

  // ----- tensor cores (CodegenMma.cpp): mma.sync, wgmma, ldmatrix, cvt_tf32 -----
  llvm::Value* emitMma(const Op& op);
  llvm::Value* emitCvtTf32(const Op& op);
  llvm::Value* emitLdmatrix(const Op& op);
  llvm::Value* emitWgmma(const Op& op);     // CodegenMma.cpp: wgmma.mma_async (sm_90a)
  void emitAsyncFence(const Op& op);         // wgmma_fence / _commit / _wait, fence_proxy_async
  void emitWgmmaWait(const Op& op);          // wgmma_wait on accumulators: tied in-out registers
  void emitCpAsync(const Op& op);            // cp_async, cp_async_commit, cp_async_wait (CodegenMemory.cpp)
  llvm::Value* packB32(const std::vector<llvm::Value*>& elems, size_t first, int count);  // elements -> one .b32
  std::vector<llvm::Value*> halvesOf(llvm::Value* word, llvm::Type* elem);  // one .b32 -> its two 16-bit elements, low first
  // A wgmma's accumulator registers as the instruction takes them: f32 as they are, f16 as .b32
  // words of two halves (and back).
  std::vector<llvm::Value*> accumulatorWords(const std::vector<llvm::Value*>& elems, bool f16);
  std::vector<llvm::Value*> accumulatorElements(const std::vector<llvm::Value*>& words, bool f16);

  // ----- print_regs / assert_regs (CodegenDebug.cpp): vprintf and __assertfail -----
  void emitPrint(const Op& op);
  void emitAssert(const Op& op);
  void callVprintf(llvm::Value* format, const std::vector<llvm::Value*>& args);
  llvm::Value* printfArg(llvm::Value* x, const Type& t, bool hex);

  // ----- memory (CodegenMemory.cpp) -----
  void emitLdGlobal(const Op& op);
  void emitStGlobal(const Op& op);
  void emitLdShared(const Op& op);
  void emitStShared(const Op& op);
  // atom_global / atom_cas_global: one atom.global (red.global when the old value is unused
  // and the ordering allows it) per register, predicated on its mask bit, in inline PTX.
  void emitAtom(const Op& op);
  // One access group: `vec` registers of dtype d at `addr` (alignment vec * bytes).
  llvm::Value* loadGroup(llvm::Value* addr, DType d, unsigned vec);
  void storeGroup(llvm::Value* addr, llvm::Value* group, DType d, unsigned vec);
  llvm::Value* predicatedGlobalLoad(llvm::Value* addr, llvm::Value* pred, llvm::Value* other, DType d, unsigned vec);
  void predicatedGlobalStore(llvm::Value* addr, llvm::Value* pred, llvm::Value* group, DType d, unsigned vec);
  // Runs `body` only when `pred` holds (a branch); body may return a value merged with `otherwise`.
  llvm::Value* ifThen(llvm::Value* pred, const std::function<llvm::Value*()>& body, llvm::Value* otherwise);
  void declareShared();  // shared_, when the function uses shared memory
  llvm::Value* sharedAddress(const Op& op, llvm::Value* byteOffset);
  llvm::Value* toMemory(llvm::Value* v, DType d);    // register -> memory form (i1 -> i8)
  llvm::Value* fromMemory(llvm::Value* v, DType d);  // memory -> register form (i8 -> i1)
  llvm::Value* groupOf(const std::vector<llvm::Value*>& regs, size_t first, unsigned vec, llvm::Type* elem);
  unsigned vecAttr(const Op& op) const;

  const Function& fn_;
  llvm::Module& module_;
  llvm::LLVMContext& ctx_;
  llvm::IRBuilder<> b_;
  PtxOptions opts_;
  llvm::Function* kernel_ = nullptr;
  llvm::GlobalVariable* shared_ = nullptr;  // the block's shared memory, when sharedBytes > 0
  llvm::DISubprogram* subprogram_ = nullptr;  // the kernel's debug scope, when opts_.lineInfo
  std::unordered_map<const Value*, llvm::Value*> values_;
};

// A new NVPTX target machine for opts.arch (the NVPTX target is registered once per process,
// thread-safely). Throws std::invalid_argument for an unsupported arch.
std::unique_ptr<llvm::TargetMachine> makeTargetMachine(const PtxOptions& opts);

}  // namespace tl::ptx
