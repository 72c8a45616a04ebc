// The PTX stage's code generator: thread IR -> LLVM IR -> PTX, with LLVM 19's NVPTX backend.
//
// Expects: a verified thread-level Function (Function::level == Thread), as produced by
// compileToThreadIR (stages/thread/Pipeline.h): ids, register vectors, ld/st_global with `vec`,
// shared memory with byte offsets, shuffles, barriers, structured `for`/`if`.
// Guarantees: one LLVM module per kernel (triple nvptx64-nvidia-cuda), a kernel entry named as
// the Function with its parameters in order (pointers as `ptr addrspace(1)`, scalars by value),
// launched with 32 * numWarps threads per block and Function::sharedBytes of shared memory
// (static up to 48 KB, dynamic above: ptx/DynamicShared.h); every op computes exactly what the warp-level executor (sim/ElementOps.cpp) computes,
// except the gaps documented in docs/gpu.md (division by zero, approximate exp/log/sqrt).
// With PtxOptions::lineInfo, every instruction made for an op with a known Loc carries that
// source line and column (LLVM `!dbg`, PTX `.loc`); ops with no location carry none.
// Throws IRError (located at the op) on IR this generator does not support.
//
// The mapping of each op family to LLVM IR / PTX is documented in docs/gpu.md.
#pragma once

#include <string>

#include "ir/IR.h"

namespace tl {

// The code generator's work limit: compileToPTX throws RuntimeError (at the op) for thread IR
// in which one tile value gives a thread more than kMaxElemsPerThread elements, or whose ops
// unroll to more than kMaxUnrolledElements element operations per thread in all. Measured on
// the 2-core development machine: softmax with 1024 elements per thread compiles in 9 s,
// 200000 one-element statements in 19 s.
constexpr int64_t kMaxElemsPerThread = 1024;
constexpr int64_t kMaxUnrolledElements = 1'000'000;

struct PtxOptions {
  std::string arch = "sm_90";  // target GPU: sm_80, sm_86, sm_89, sm_90 or sm_90a (wgmma)
  int optLevel = 3;            // LLVM optimization level, 0..3 (the new pass manager's O0..O3)
  bool fastMath = true;        // approximate exp/exp2/log/sqrt/rsqrt (ex2.approx, lg2.approx, ...)
  // Source lines, as nvcc -lineinfo: each LLVM instruction gets a `!dbg !DILocation(line, col)`
  // of the .tl op it came from, and the PTX a `.file 1 "<path>"` and `.loc 1 <line> <col>`
  // before the instructions (no DWARF sections: ptxas and the driver compile the same code).
  bool lineInfo = true;
  // The path `.file` names; empty: the Function's source file, else "<kernel name>.tl".
  // (A double quote in it becomes '_': ptxas cannot read \" in a string.)
  std::string sourcePath;
};

// The options as a short text for cache keys and reports, e.g. "O3 fast-math line-info": all of
// them but `arch` (a cache key holds it on its own); sourcePath appears when line info uses it.
std::string describePtxOptions(const PtxOptions& opts);

struct PtxResult {
  std::string kernelName;  // the .entry name in the PTX (= the Function's name)
  std::string llvmIR;      // the optimized LLVM module, as text
  std::string ptx;         // the PTX assembly
  double codegenMs = 0;    // wall time of compileToPTX (IR build + optimization + PTX emission)
  double optimizeMs = 0;   //   of which: the LLVM optimization pipeline
  double emitMs = 0;       //   of which: NVPTX instruction selection and PTX printing
};

// The architectures compileToPTX accepts.
bool isSupportedArch(const std::string& arch);

// Thread IR -> PTX. Thread-safe: each call builds its own LLVMContext and TargetMachine.
PtxResult compileToPTX(const Function& threadIR, const PtxOptions& opts = {});

}  // namespace tl
