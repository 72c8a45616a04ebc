// The numbers the Fusion and GPU timings panels show, without a window: error of a prediction
// against a measurement, the 20% target, ratios, and the rows of their tables, read from the
// simulator's report (docs/sim.md, "The report": "timing", "fusion") and from measured GPU
// results (viz/model/Session.h MeasuredRun, TimingRow; docs/gpu.md).
//
//   FusionComparison f = fusionComparison(data.report);            // fused vs unfused, simulated
//   MeasuredFusion m = measuredFusion(data.measuredUnfused[0], data.launch, data.numWarps);
//   std::vector<TimingsTableRow> rows = timingsTable(data.timings);
//   errorPercent(3.05, 2.5)   // +22%: the prediction is 22% slower than the GPU
//
// Expects: any JSON (a report with fields missing or of the wrong type reads as 0 / "" with
// `missing` saying what was absent); any MeasuredRun (its `raw` may be anything).
// Guarantees: nothing throws; an error or ratio whose denominator is not positive is empty
// (std::nullopt), never inf or NaN; a measurement made at other sizes than the session's launch
// is flagged (sizeDifferences) so a panel does not compare it with a prediction for this launch.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "viz/model/Session.h"

namespace tl::viz {

// The accuracy the simulator aims for against the H200 (docs/sim.md): within 20%.
constexpr double kTimingTargetPercent = 20.0;

// 100 x (predicted - measured) / measured: positive when the model predicts slower than the GPU.
// Empty when either time is not positive (not measured, not predicted).
std::optional<double> errorPercent(double predicted, double measured);
// |errorPercent| <= targetPercent; false when there is no error to judge.
bool withinTarget(double predicted, double measured, double targetPercent = kTimingTargetPercent);
// numerator / denominator; empty when the denominator is not positive or either is not finite.
std::optional<double> ratio(double numerator, double denominator);

// The differences between the sizes a measurement ran with and the session's launch, one
// readable line each ("N: 4096 measured, 781 here"); empty: same sizes. Values are compared as
// numbers where both parse as numbers ("1e-05" equals "0.00001"), else as text. numWarps 0 on
// either side is not compared.
std::vector<std::string> sizeDifferences(const std::map<std::string, std::string>& measuredSizes, int measuredNumWarps,
                                         const LaunchConfig& launch, int numWarps);
// "M=16384 N=4096 BLOCK_N=4096" (map order).
std::string sizesText(const std::map<std::string, std::string>& sizes);

// ---------------------------------------------------------------------------------------------
// Fusion (report["fusion"]).

struct FusionKernelRow {
  std::string name;                      // "softmax_kernel.3_exp"
  std::string description;               // what it computes, reads and writes
  double readBytes = 0, writeBytes = 0;  // simulated DRAM traffic
  double timeUs = 0;                     // predicted, with its launch overhead
  std::string limiter;                   // "memory latency", "DRAM bandwidth", ...
  int64_t blocksRun = 0;
};

struct FusionComparison {
  bool present = false;  // the report has a "fusion" section
  std::string missing;   // why not (when !present)
  int64_t launchesFused = 0, launchesUnfused = 0;
  double dramFused = 0, dramUnfused = 0;      // bytes, simulated
  std::optional<double> dramRatio;            // unfused / fused
  double timeFusedUs = 0, timeUnfusedUs = 0;  // predicted
  std::optional<double> timeRatio;
  double compulsoryFused = 0, compulsoryUnfused = 0;  // static count with an ideal cache
  std::optional<double> compulsoryRatio;
  bool compulsoryEstimated = false;      // a loop trip count or an if was guessed
  std::vector<FusionKernelRow> kernels;  // the unfused kernels, in launch order
};
FusionComparison fusionComparison(const nlohmann::ordered_json& report);

// One tl-ptx --unfused measurement (MeasuredRun with unfused = true; its raw "unfused" object,
// docs/gpu.md "Measuring fusion on the GPU").
struct MeasuredFusionKernel {
  std::string name;
  int registers = 0;
  double readBytes = 0, writeBytes = 0;  // tl-ptx's compulsory count for that kernel
};
struct MeasuredFusion {
  std::string file;  // where it was read from
  std::string device;
  std::string sizes;                     // "M=16384 N=4096 ..."
  std::vector<std::string> differences;  // vs the session's launch (empty: same launch)
  bool gpuRan = false;                   // false: compiled only, no times
  double unfusedMs = 0;                  // the whole unfused sequence (median)
  double fusedMs = 0;                    // the fused kernel, same timing policy (0: not timed)
  std::optional<double> timeRatio;       // unfused / fused, measured
  int64_t launches = 0;
  double predictedFusedBytes = 0, predictedUnfusedBytes = 0;  // at the measured sizes
  std::optional<double> trafficRatio;
  std::string check;  // "PASS", "FAIL", "skipped"
  std::vector<MeasuredFusionKernel> kernels;
  std::string problem;  // non-empty: the file lacks the "unfused" object
};
MeasuredFusion measuredFusion(const MeasuredRun& run, const LaunchConfig& launch, int numWarps);

// ---------------------------------------------------------------------------------------------
// GPU timings.

// The default-launch measurement against the report's prediction.
struct MeasuredVsPredicted {
  double measuredMs = 0, minMs = 0;
  double predictedMs = 0;          // report timing.time_us / 1000
  std::optional<double> errorPct;  // only meaningful when `differences` is empty
  bool within = false;
  std::vector<std::string> differences;           // sizes the measurement ran with that differ
  int registersMeasured = 0, registersModel = 0;  // ptxas/driver vs the report's
  bool registersModelEstimated = true;
  int blocksPerSMMeasured = 0, blocksPerSMModel = 0;
  double gbPerSMeasured = 0, gbPerSPredicted = 0;
  std::string device, file;
};
MeasuredVsPredicted measuredVsPredicted(const MeasuredRun& run, const nlohmann::ordered_json& report,
                                        const LaunchConfig& launch, int numWarps);

struct TimingsTableRow {
  std::string shape;
  std::string sets;                                                   // "M=4096 N=781" (TimingRow::sets joined)
  double measuredMs = 0, tritonMs = 0, torchMs = 0, predictedMs = 0;  // 0: none
  std::optional<double> errorPct;                                     // predicted vs tilelab's measured
  bool within = false;
  std::optional<double> vsTriton;  // tilelab measured / Triton measured
  std::string note;                // why there is no prediction
};
std::vector<TimingsTableRow> timingsTable(const std::vector<TimingRow>& rows);

struct TimingsSummary {
  int rows = 0;                                    // all rows
  int compared = 0;                                // rows with both a measurement and a prediction
  int within = 0;                                  // of those, within the target
  double meanAbsErrorPct = 0, maxAbsErrorPct = 0;  // over the compared rows
};
TimingsSummary summarizeTimings(const std::vector<TimingsTableRow>& rows);

}  // namespace tl::viz
