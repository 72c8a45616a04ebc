// tl-ptx --unfused: the unfused version of a kernel (stages/thread/Unfuse.h: one kernel per
// block-level op, intermediates in global memory, as an eager framework runs it) compiled to
// PTX, so the GPU can measure what fusion saves next to what the traffic model predicts.
//
// Expects: a kernel straight from the front end (CompiledKernel::ir is front-end block IR).
// Guarantees: compileUnfused() runs the block pipeline on a copy, unfuses it, and compiles every
// unfused kernel through the JIT cache (each has its own key: it has no source file, so the key
// hashes its printed IR). Unfused kernels are named `<kernel>.<k>_<op>`; '.' is not allowed in a
// PTX identifier (ptxas rejects `.entry softmax_kernel.3_exp`), so each kernel is compiled under
// ptxIdentifier(name) (`softmax_kernel_3_exp`), which is also its CacheEntry::kernelName, the
// name the runtime looks up. Throws what unfuse() and jitCompile() throw.
#pragma once

#include <nlohmann/json.hpp>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ptx/CudaRuntime.h"
#include "ptx/JitCache.h"
#include "runtime/Driver.h"
#include "thread/Unfuse.h"

namespace tl {

// `name` with every character a PTX identifier may not hold ([A-Za-z0-9_$] only) replaced by
// '_', and a leading digit prefixed by '_': "softmax_kernel.3_exp" -> "softmax_kernel_3_exp".
std::string ptxIdentifier(const std::string& name);

// One compiled unfused kernel.
struct UnfusedKernelBuild {
  std::string name;                         // as unfuse() named it: "softmax_kernel.3_exp"
  std::string suffix;                       // the part after "<kernel>.": "3_exp"
  std::string description;                  // what it computes, reads, writes
  std::unique_ptr<CompiledKernel> kernel;   // its block IR (renamed to the PTX entry), the unfused launch
  JitResult jit;                            // jit.entry.kernelName is the PTX .entry
  std::string ptxPath;                      // where its PTX was written ("" until written)
};

// The unfused version of one kernel, compiled.
struct UnfusedBuild {
  LaunchConfig launch;                      // the fused launch + the scratch buffers
  std::vector<UnfusedKernelBuild> kernels;  // run in this order over one set of buffers
  FusionTraffic traffic;                    // the model's prediction (fused vs unfused bytes)
};

// Block pipeline, unfuse, jitCompile each kernel (cache may be null).
UnfusedBuild compileUnfused(const CompiledKernel& k, const JitOptions& opts, const JitCache* cache);

// Writes each kernel's PTX as DIR/<stem of the source>.unfused.<suffix>.ptx and records the path.
// Throws std::runtime_error when a file cannot be written.
void writeUnfusedPTX(UnfusedBuild& b, const std::string& source, const std::string& dir);

// What the GPU measured for the unfused sequence (absent when the GPU step was skipped).
struct UnfusedRun {
  GpuTiming timing;                         // the whole sequence, events around all launches
  double fusedMedianMs = 0;                 // the fused kernel, same policy (0: not timed)
  std::vector<int> registers;               // per kernel, from the driver
  std::string check = "skipped";            // "PASS", "FAIL" or "skipped"
  double ratioVsFused() const { return fusedMedianMs > 0 ? timing.medianMs / fusedMedianMs : 0; }
};

// The results JSON's "unfused" object (docs/gpu.md, "Measuring fusion on the GPU"): kernels
// (name, entry, description, registers, ptx), launches, the predicted traffic (bytes and
// ratio), and when `run` is given the measured median/min time, runs and the ratio vs fused
// (null otherwise).
nlohmann::ordered_json unfusedToJson(const UnfusedBuild& b, const UnfusedRun* run);

}  // namespace tl
