// The results JSON tl-ptx writes for every kernel it runs: what ran (kernel, sizes, grid, dtypes,
// arch, device), how fast (median/min time, GB/s, TFLOP/s), with which resources (registers,
// shared memory, spills, occupancy), what compiling cost (per step, cache hit or miss) and
// whether the outputs matched the reference. The simulator and the visualizer read these files;
// docs/gpu.md ("Results JSON") documents every field. Also the small measurements that go into
// it: compulsory traffic, the FLOP count of dot kernels, and the size estimate that picks the
// reference interpreter.
//
// Guarantees: resultsToJson/resultsFromJson round-trip every field; resultsFromJson throws
// std::runtime_error naming the first missing or mistyped field (or a schema version it does
// not know), never crashes on any JSON value. "source_sha256" is written only when known
// (RunResults::sourceSha256 non-empty) and read as "" when absent (files measured before it
// existed): a reader pairs a measurement with a kernel only by this hash and the launch.
// resources.dynamic_shared_bytes likewise: written always, read as 0 when absent (files written
// before dynamic shared memory existed had none); "assembler" written always, read as "" when
// absent.
#pragma once

#include <nlohmann/json.hpp>

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "frontend/Launch.h"
#include "ir/IR.h"
#include "ptx/Ptxas.h"
#include "runtime/Memory.h"
#include "runtime/Work.h"  // dotFlops, estimateScalarOps, utcTimestamp

namespace tl {

inline constexpr int kResultsSchemaVersion = 1;

// One output compared against the reference.
struct OutputCheck {
  std::string name;
  bool pass = false;
  double maxAbsErr = 0, maxRelErr = 0;
  int64_t mismatches = 0;
  std::string reason;  // set when shapes/dtypes differ or the output is missing
  bool operator==(const OutputCheck&) const = default;
};

// Where compile time went for this run, in milliseconds. Steps a cache hit skipped are 0.
struct CompileTimes {
  double frontEndMs = 0;    // parse + @launch + block IR
  double threadMs = 0;      // block passes + layouts + lowering to thread IR
  double codegenMs = 0;     // LLVM IR + optimization + NVPTX -> PTX
  double ptxasMs = 0;       // the assembler, PTX -> cubin (nvJitLink in process, or the ptxas -v process)
  double cacheMs = 0;       // cache lookup (+ store on a miss)
  double moduleLoadMs = 0;  // cuModuleLoadData(Ex) + attributes (0 without a GPU)
  bool cacheHit = false;
  std::string cacheKey;     // the entry's SHA-256 ("" with --no-cache)
  double totalMs() const { return frontEndMs + threadMs + codegenMs + ptxasMs + cacheMs + moduleLoadMs; }
  bool operator==(const CompileTimes&) const = default;
};

struct RunResults {
  int schemaVersion = kResultsSchemaVersion;
  std::string toolVersion;
  std::string timestamp;          // UTC, ISO 8601
  // What ran.
  std::string kernel;             // the kernel's name
  std::string source;             // the .tl path
  std::string sourceSha256;       // SHA-256 (sha256Hex) of the exact source bytes compiled; "" unknown
  std::vector<std::pair<std::string, std::string>> sizes;  // the launch's names (not buffers/grid/num_warps)
  std::array<int64_t, 3> grid{1, 1, 1};
  int numWarps = 0;
  std::map<std::string, std::string> dtypes;  // parameter -> type ("ptr<f32>", "i32")
  std::string arch;               // the --arch compiled for
  std::string ptxPath;
  std::string assembler;          // what made the cubin: "nvJitLink 13.0", a ptxas path; "" none (or unknown)
  // The GPU run ("" device and gpuSkipped set when it did not run).
  bool gpuRan = false;
  std::string gpuSkipped;         // why not
  std::string device;             // DeviceInfo::str()
  int smCount = 0;
  int runs = 0;
  double medianMs = 0, minMs = 0;
  bool l2Flushed = false;
  double bytes = 0;               // compulsory traffic: inputs read + outputs written once
  double gbps = 0;                // bytes / median time
  double flops = 0;               // 0 when unknown (kernels without dot)
  double tflops = 0;
  // Resources: from ptxas (registers, spills) and from the driver (shared, local, occupancy).
  int registers = 0;
  int64_t sharedBytes = 0;        // static shared memory (ptxas' smem, the driver's SHARED_SIZE_BYTES)
  int64_t dynamicSharedBytes = 0; // dynamic shared memory every launch passes (over 48 KB; ptx/DynamicShared.h)
  int64_t localBytes = 0;
  int spillStoreBytes = 0, spillLoadBytes = 0;
  int blocksPerSM = 0, warpsPerSM = 0;
  CompileTimes compile;
  // The check against the reference.
  std::string check = "skipped";  // "PASS", "FAIL" or "skipped"
  std::string reference;          // "tl-scalar" or "tl-block" ("" when skipped)
  std::vector<OutputCheck> outputs;

  bool operator==(const RunResults&) const = default;
};

// ordered_json: the file keeps the documented field order and the launch's order of `sizes`.
nlohmann::ordered_json resultsToJson(const RunResults& r);
RunResults resultsFromJson(const nlohmann::ordered_json& j);
// Writes DIR/<stem of source>.json (creating DIR) atomically; returns the path. Throws
// std::runtime_error when the file cannot be written.
std::string writeResults(const RunResults& r, const std::string& dir);

// ptxas' report as JSON (for the cache manifest) and back; missing fields read as 0/"".
nlohmann::json ptxasToJson(const PtxasInfo& p);
PtxasInfo ptxasFromJson(const nlohmann::json& j);

// Fills OutputCheck per output of `reference` (what compareOutputs prints, as data).
std::vector<OutputCheck> checkOutputs(const Memory& reference, const Memory& got, const ToleranceOverride& tol = {});


}  // namespace tl
