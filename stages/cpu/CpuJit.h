// Compiling tl-cpu's module in process: LLVM's O3 pipeline for the host target, then ORC's
// LLJIT (X86 only, LLVM linked statically), and the callable it gives.
//
// Expects: a CpuModule from generateModule for the same CpuTarget.
// Guarantees: the program function resolved, the runtime's helpers (CpuAbi.h) and libm /
// libmvec bound by name in the process; the JIT lives as long as the CpuKernel. Throws
// std::runtime_error with LLVM's message if the JIT fails (a bug, never the user's input).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "cpu/CpuAbi.h"
#include "cpu/CpuCodegen.h"

namespace llvm::orc {
class LLJIT;
}

namespace tl::cpu {

using ProgramFn = int32_t (*)(const uint64_t* args, const CpuContext* ctx, int64_t pid0, int64_t pid1, int64_t pid2,
                              uint8_t* scratch);

struct CompileTimes {
  double cacheMs = 0;     // the cache's lookup (and store, on a miss)
  double codegenMs = 0;   // block IR -> LLVM IR (0 on a cache hit)
  double optimizeMs = 0;  // LLVM's optimization pipeline (0 on a hit)
  double objectMs = 0;    // x86 code generation into an object file (0 on a hit)
  double jitMs = 0;       // the JIT: linking the object into the process
  bool cacheHit = false;
  std::string cacheKey;   // "" without a cache
  std::string cacheMiss;  // why a lookup missed
  double totalMs() const { return cacheMs + codegenMs + optimizeMs + objectMs + jitMs; }
};

struct CpuKernel {
  std::shared_ptr<llvm::orc::LLJIT> jit;
  ProgramFn program = nullptr;
  int64_t scratchBytes = 0;
  std::vector<const Op*> ops;
  bool prints = false;
  bool tracksStores = false;  // compiled with CodegenOptions::trackStores
  CompileTimes times;
  std::string llvmIR;  // the optimized module, when compileKernel was asked for it
  std::string assembly;  // the x86 assembly, when asked
};

class CpuCache;

struct JitOptions {
  int optLevel = 3;
  const CpuCache* cache = nullptr;  // look the kernel up first, store it after a miss (not with keepIR / keepAssembly)
  bool keepIR = false;        // fill CpuKernel::llvmIR
  bool keepAssembly = false;  // fill CpuKernel::assembly
};

CpuKernel compileKernel(const Function& fn, const CpuTarget& target, const CodegenOptions& cg = {},
                        const JitOptions& jo = {});

}  // namespace tl::cpu
