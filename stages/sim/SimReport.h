// The simulator's report: one kernel through every model of sim/ — the warp-level executor,
// the memory model (coalescing, bank conflicts, L1/L2/DRAM), occupancy, the timing model and
// the unfused (eager) version of the same kernel — gathered into one JSON document and a
// readable text summary. `tl-sim` (stages/sim/main.cpp) prints the summary and writes the JSON;
// docs/sim.md, section "The report", documents every field of the JSON (schema_version below).
//
//   SimOptions o; o.gpu = "h200";
//   SimReport r = simulateKernel(*compiled.ir, compiled.launch, o);
//   std::cout << r.summary;   r.json.dump(1);   r.chromeTrace
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
#include <string>

#include <nlohmann/json.hpp>

#include "frontend/Launch.h"
#include "ir/IR.h"

namespace tl {

// Bumped whenever a field of the JSON report changes meaning or disappears.
constexpr int kSimReportSchemaVersion = 1;

// Blocks the executor runs by default before it starts sampling (seconds on one core).
constexpr int64_t kDefaultBlockBudget = 512;

struct SimOptions {
  std::string gpu = "h200";        // a sim/gpus/<key>.json
  int numWarps = 0;                // <= 0: the launch's
  int64_t sampleBlocks = 0;        // run the first N blocks (> 0); 0: all, up to kDefaultBlockBudget
  bool unfused = true;             // also build and simulate the unfused version (section "fusion")
  bool detectRaces = false;        // shared-memory race detection during the run (slower)
  int64_t timelineBlocks = 8;      // blocks whose warps appear in the Chrome trace
};

struct SimReport {
  nlohmann::ordered_json json;     // the whole report (docs/sim.md, "The report")
  std::string summary;             // the readable text tl-sim prints
  std::string chromeTrace;         // the fused kernel's timeline, Chrome trace-event JSON
};

SimReport simulateKernel(const Function& frontEndIR, const LaunchConfig& launch, const SimOptions& options = {});

// The readable summary of a report's JSON (what SimReport::summary holds): a student can also
// rebuild it from a saved report.
std::string formatSimReport(const nlohmann::ordered_json& report);

}  // namespace tl
