// Measured GPU results for one kernel, as tl-ptx and bench/gpu/compare.py left them on disk:
//
//   <resultsDir>/res/warm/<stem>.json     tl-ptx at the kernel's default launch (warm cache)
//   <resultsDir>/unfused/<stem>*.json     tl-ptx --unfused runs (the "unfused" section)
//   <resultsDir>/compare.json             {"rows": [{"kernel": <stem>, "shape", "tilelab_ms",
//                                          "triton_ms", "torch_ms", "tilelab": {results JSON}}]}
//
// where <stem> is the kernel file's name without ".tl" (kernels/softmax.tl -> softmax). The
// results JSON is documented in docs/gpu.md ("Results JSON", stages/ptx/Results.h).
//
// Expects: any folder, any files (missing, empty, truncated, wrong types).
// Guarantees: never throws; every file that exists but cannot be used is named in `problems`
// with the reason, and what could be read is still returned. A results file is only taken for a
// kernel when its "source" names the same .tl file (softmax_rows.json is not softmax's).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "frontend/Launch.h"
#include "viz/model/Session.h"

namespace tl::viz {

struct MeasuredSet {
  std::string dir;                        // the results folder searched ("" : none found)
  std::optional<MeasuredRun> run;         // res/warm/<stem>.json
  std::vector<MeasuredRun> unfused;       // unfused/<stem>*.json, sorted by file name
  std::vector<TimingRow> timings;         // compare.json rows of this kernel, in file order
  std::vector<nlohmann::json> timingDocs; // the row's "tilelab" results JSON (null when absent), per timings[i]
  std::vector<std::string> problems;      // "bench/results/gpu/compare.json: not valid JSON (...)"
};

// The results folder for a kernel file: `explicitDir` when non-empty; else the first existing
// of <kernel's folder>/../bench/results/gpu, ./bench/results/gpu and the source tree's
// bench/results/gpu. "" when none exists.
std::string findResultsDir(const std::string& kernelPath, const std::string& explicitDir = "");

// "kernels/softmax.tl" -> "softmax".
std::string kernelStem(const std::string& kernelPath);

// One results JSON document as a MeasuredRun. Returns false (with *error set) when a required
// field (kernel, time.median_ms) is missing or mistyped; optional fields default to 0 / "".
bool measuredFromJson(const nlohmann::json& doc, const std::string& file, MeasuredRun& out, std::string* error);

// Everything measured for the kernel file `kernelPath` in `resultsDir` (see above).
MeasuredSet loadMeasured(const std::string& resultsDir, const std::string& kernelPath);

// True when a measured run used exactly this launch: every size it lists has the same value in
// the launch's names (numbers compared as numbers: "1e-05" == "0.00001"), and the same
// num_warps when it gives one.
bool measuredMatchesLaunch(const MeasuredRun& run, const LaunchConfig& launch);

}  // namespace tl::viz
