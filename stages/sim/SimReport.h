// The simulator's report: one kernel through every model of sim/ — the warp-level executor,
// the memory model (coalescing, bank conflicts, L1/L2/DRAM), occupancy, the timing model and
// the unfused (eager) version of the same kernel — gathered into one JSON document and a
// readable text summary. `tl-sim` (stages/sim/main.cpp) prints the summary and writes the JSON;
// docs/sim.md, section "The report", documents every field of the JSON (schema_version below).
//
//   SimOptions o; o.gpu = "h200"; o.sourcePath = compiled.path;   // the report hashes the source
//   SimReport r = simulateKernel(*compiled.ir, compiled.launch, o);
//   std::cout << r.summary;   r.json.dump(1);   r.chromeTrace
//   formatSimReport(r.json, {.ncu = true, .full = true})          // the summary with everything
//
// What a grader reads (docs/sim.md, "Schema"): memory.instructions[] / memory.lines[] with
// counters.sectors_per_ideal, sectors_per_128B, efficiency and buffers; occupancy.theoretical
// and occupancy.achieved; launch, source.sha256, gpu.file, tool_version; timing.time_us.
//
// Sampling: the executor runs at most `sampleBlocks` blocks (default: every block up to
// kDefaultBlockBudget), always the FIRST blocks in grid order. Memory counts are scaled by
// grid / blocks run (the report says so: "sampling" object, "scale"); the timing model replays
// the sampled blocks on the busiest SM. Ratios (sectors/request, hit rates) are not scaled.
//
// Expects: verified block IR straight from the front end (or after the block pipeline) and the
// launch it was compiled for. Guarantees: plain data out, deterministic; the outputs the kernel
// writes are computed but not checked (tl-thread does that). Throws what the stages throw:
// IRError for IR the pipeline cannot lower, RuntimeError for a fault during the run,
// std::runtime_error for an unknown GPU, std::invalid_argument for bad options.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "frontend/Launch.h"
#include "ir/IR.h"
#include "sim/Gpu.h"
#include "sim/MemoryModel.h"
#include "sim/Occupancy.h"
#include "sim/ThreadExecutor.h"
#include "sim/Timing.h"
#include "thread/Pipeline.h"

namespace tl {

// Bumped whenever a field of the JSON report changes meaning or disappears (docs/sim.md lists
// what each version changed). 2: measured.* numbers the results file lacks are null, not 0.
constexpr int kSimReportSchemaVersion = 2;

// Blocks the executor runs by default before it starts sampling (seconds on one core).
constexpr int64_t kDefaultBlockBudget = 512;
// The most unfused kernels the fusion section simulates; a kernel whose unfused version has
// more (a generated body of thousands of statements) gets "fusion_skipped" with the reason.
constexpr int64_t kMaxUnfusedKernels = 256;

// The default cap on the executor's records (SimOptions::maxTraceBytes): 1 GiB (the vectors'
// spare capacity can take the process to about twice that).
constexpr int64_t kDefaultTraceBytes = int64_t(1) << 30;

struct SimOptions {
  std::string gpu = "h200";        // a sim/gpus/<key>.json
  // The kernel's source, recorded in the report's "source" (path as given, SHA-256 of the text,
  // the same hash tl-ptx's results files carry). Empty text: read from sourcePath when it names
  // a file; both empty: "source" has null fields.
  std::string sourcePath;
  std::string sourceText;
  int numWarps = 0;                // <= 0: the launch's
  bool keepLayouts = false;        // compile keeping the layouts the source implies (--keep-layouts)
  bool wgmma = false;              // dots as warpgroup MMAs where they fit (--wgmma)
  int64_t sampleBlocks = 0;        // run the first N blocks (> 0); 0: all, up to kDefaultBlockBudget
  bool unfused = true;             // also build and simulate the unfused version (section "fusion")
  bool detectRaces = false;        // shared-memory race detection during the run (slower)
  int64_t timelineBlocks = 8;      // blocks whose warps appear in the Chrome trace
  // Registers per thread for the occupancy. When set, called for every kernel simulated (the
  // fused one and each unfused one) with its thread IR; it returns what a compiler says
  // (RegisterEstimate::estimate false, e.g. ptxas -v) or falls back to estimateRegisters(),
  // with `source` saying which. Unset: estimateRegisters (labelled an estimate).
  std::function<RegisterEstimate(const Function& threadIR)> registers;
  // Measured results for this launch (a tl-ptx results JSON, stages/ptx/Results.h); when not
  // null the report gains a "measured" section: the GPU's time, registers and blocks per SM
  // beside the prediction.
  const nlohmann::json* measured = nullptr;
  bool keepDetail = false;         // fill SimReport::detail (the visualizer)
  int64_t detailBlocks = 4;        // blocks whose accesses SimDetail keeps
  // The most the executor's records (memory accesses and warp traces, which grow with the
  // instructions run) may take: it runs fewer blocks when they would not fit, and the report's
  // sampling.limited_by says so (--trace-memory MiB). Block 0 must fit alone.
  int64_t maxTraceBytes = kDefaultTraceBytes;
};

// What the report is made of, for tools that draw it (viz/): the compiled kernel, the first
// blocks' accesses and the timing model's input, so a caller can re-run the timing model
// (other resident-block counts) or look at single warps.
struct SimDetail {
  GpuSpec gpu;
  ThreadCompilation compilation;          // block IR, layouts, thread IR (fused kernel)
  std::vector<const Op*> instrs;          // instructionTable(*compilation.threadIR)
  std::vector<WarpAccess> accesses;       // every access of the first detailBlocks blocks
  RegisterEstimate registers;
  OccupancyResult occupancy;
  MemoryReport memory;                    // scaled to the grid
  TimingInput timingInput;
  TimingOptions timingOptions;            // as used; .memory points at `memory` above
  TimingResult timing;
};

struct SimReport {
  nlohmann::ordered_json json;     // the whole report (docs/sim.md, "The report")
  std::string summary;             // the readable text tl-sim prints
  std::string chromeTrace;         // the fused kernel's timeline, Chrome trace-event JSON
  std::shared_ptr<SimDetail> detail;  // SimOptions::keepDetail only
};

SimReport simulateKernel(const Function& frontEndIR, const LaunchConfig& launch, const SimOptions& options = {});

// What the summary shows beyond its one screen (tl-sim --ncu, --full).
struct SummaryOptions {
  bool ncu = false;   // the kernel totals under their Nsight Compute names
  bool full = false;  // one row per memory instruction (not merged per line), with its buffers
};

// The readable summary of a report's JSON (what SimReport::summary holds, with the default
// options): about 25 lines; a student can also rebuild it from a saved report.
// stages/sim/SimSummary.cpp.
std::string formatSimReport(const nlohmann::ordered_json& report, const SummaryOptions& options = {});

// Whether a tl-ptx results file holds a GPU run with a time ("gpu.ran" and a positive
// "time.median_ms"); when not, *why says what it holds instead.
bool measuredHasTiming(const nlohmann::json& results, std::string* why = nullptr);

}  // namespace tl
