// Measured results for one kernel source: every tl-ptx (and tl-cpu) results file in a folder
// (`tl-viz --measured DIR`), paired with the session's source by SHA-256 and launch, never by
// kernel name or file name.
//
//   DIR/**/<anything>.json   a tl-ptx results JSON (stages/ptx/Results.h, docs/gpu.md), with or
//                            without an "unfused" section (tl-ptx --unfused); a tl-cpu results
//                            JSON (stages/cpu/CpuResults.h: the CPU column); or a comparison
//                            file {"rows": [{"shape", "tilelab_ms", "triton_ms", "torch_ms",
//                            "tilelab": {results JSON}}]} (bench/gpu/compare.py's compare.json)
//
// Pairing (pairMeasurement): a results document belongs to the session when its
// "source_sha256" equals the SHA-256 of the exact text compiled AND, for the default-launch
// measurement, its launch as recorded (sizes, grid, num_warps) equals the session's. A document
// without "source_sha256" (measured before tl-ptx recorded it) is never paired: nothing proves
// which source ran. Per-size comparison rows and unfused runs need the hash only (the panels
// show their own launch beside this one).
//
// Expects: any folder, any files (missing, empty, truncated, wrong types, other kernels').
// Guarantees: never throws; every file that exists but cannot be used is named in `problems`
// with the reason; when nothing is paired for this launch, `note` says why in one sentence
// ("no measurement for this source: ...").
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "frontend/Launch.h"
#include "viz/model/Session.h"

namespace tl::viz {

struct MeasuredSet {
  std::string dir;                        // the folder searched ("" : none found)
  std::optional<MeasuredRun> run;         // this source at this launch (a warm-cache run preferred)
  std::optional<MeasuredRun> cpuRun;      // tl-cpu, this source at this launch (the most threads)
  std::vector<MeasuredRun> unfused;       // tl-ptx --unfused runs of this source, by file name
  std::vector<TimingRow> timings;         // comparison rows of this source, in file order
  std::vector<nlohmann::json> timingDocs; // each row's "tilelab" results JSON, per timings[i]
  std::vector<std::string> problems;      // "DIR/compare.json: not valid JSON"
  std::string note;                       // why `run` is empty ("" when it is set)
};

// The default measured-results folder for a kernel file: `explicitDir` when non-empty (""
// when it is not a folder); else the first existing of <kernel's folder>/../bench/results/gpu,
// ./bench/results/gpu and the source tree's bench/results/gpu. "" when none exists.
std::string findResultsDir(const std::string& kernelPath, const std::string& explicitDir = "");

// "kernels/softmax.tl" -> "softmax".
std::string kernelStem(const std::string& kernelPath);

// One results JSON document as a MeasuredRun. Returns false (with *error set) when a required
// field (kernel, time.median_ms) is missing or mistyped; optional fields default to 0 / "".
bool measuredFromJson(const nlohmann::json& doc, const std::string& file, MeasuredRun& out, std::string* error);

// Whether `run` was measured from the source whose SHA-256 is `sourceSha256` (hex, as
// sha256Hex) at `launch`. `reason` says why not ("" when paired); with `checkLaunch` false only
// the source is compared.
struct Pairing {
  bool paired = false;
  bool sameSource = false;  // the hashes agree (the launch may still differ)
  std::string reason;       // "measured another source (SHA-256 1a2b3c4d..., this source 5e6f...)"
};
Pairing pairMeasurement(const MeasuredRun& run, const std::string& sourceSha256, const LaunchConfig& launch,
                        bool checkLaunch = true);

// The launch differences between a measurement and `launch`, one readable line each
// ("N: 4096 measured, 781 here", "grid: (4096,1,1) measured, (256,1,1) here"); empty: the same.
std::vector<std::string> launchDifferences(const MeasuredRun& run, const LaunchConfig& launch);
// True when launchDifferences is empty.
bool measuredMatchesLaunch(const MeasuredRun& run, const LaunchConfig& launch);

// Everything in `dir` measured from the source with SHA-256 `sourceSha256` (read recursively,
// files in path order). `sourcePath` only words the notes. An empty `sourceSha256` pairs
// nothing (the note says the hash is unknown).
MeasuredSet loadMeasured(const std::string& dir, const std::string& sourceSha256, const std::string& sourcePath,
                         const LaunchConfig& launch);

}  // namespace tl::viz
