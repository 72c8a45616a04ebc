// A lab's spec (labs/NN-name/lab.json): what the submission must be, where it is graded, and the
// checks. docs/labs.md is the reference for every field; this file is its parser.
//
// Expects: a lab folder holding lab.json (JSON, read with nlohmann::json in file order).
// Guarantees: loadLabSpec() returns a spec whose every field was validated (kinds known, launch
// names unique, every check's launches exist, the performance launch is simulated, a "cpu" metric
// reads a tl-cpu launch, the reference file exists), or throws SpecError naming the JSON path of the first problem
// ("labs/01-coalescing/lab.json: /checks/3/kind: unknown check kind 'corect'; ...").
#pragma once

#include <filesystem>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "runtime/Memory.h"

namespace tl::grade {

struct SpecError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// NAME=EXPR pairs in the file's order (@launch expressions as text).
using Assignments = std::vector<std::pair<std::string, std::string>>;

struct ParamSpec {
  std::string name;
  bool isConstexpr = false;
};

// One launch of the kernel inside a graded launch (most launches have exactly one).
struct LabStep {
  Assignments set;                                   // after the launch's own "set"
  std::vector<std::pair<std::string, std::string>> feed;  // (input param, previous step's output)
};

struct LabLaunch {
  std::string name;
  Assignments set;
  bool hidden = false;    // never described in detail to the student
  bool simulate = false;  // also run through tl-sim (metric checks and performance)
  bool cpu = false;       // run compiled on tl-cpu instead of tl-thread (its results JSON: metric checks, cpu_performance)
  std::vector<LabStep> steps;  // at least one
};

enum class CheckKind {
  Correct,   // the outputs equal the reference solution's at every launch
  Written,   // every output element was stored at every launch (every step)
  InBounds,  // no out-of-bounds access
  RaceFree,  // no shared-memory race
  Metric,    // a predicate over the tl-sim report of one launch
};
const char* checkKindName(CheckKind k);

struct LabCheck {
  std::string id;
  CheckKind kind = CheckKind::Correct;
  std::string hint;
  double points = 1;
  std::vector<std::string> launches;  // correctness kinds: where it is checked (empty: every launch)
  // Metric checks:
  std::string report = "sim";  // which report it reads: "sim" (tl-sim's) or "cpu" (tl-cpu's results JSON)
  std::string launch;     // the simulated (or, for "cpu", the tl-cpu) launch
  std::string value;      // optional dotted path to an array in the report
  std::vector<std::pair<std::string, nlohmann::json>> where;  // equality filters on its elements
  std::string field;      // dotted path (in each element, or in the report)
  std::string aggregate = "max";  // max | min | sum | mean | count
  std::string divideBy;   // optional dotted path in the same report
  bool relativeToReference = false;
  std::optional<double> min, max;
};

// Points for speed: the submission's time at one launch over the reference's. "performance" reads
// tl-sim's predicted time; "cpu_performance" tl-cpu's measured median (reference and submission
// timed in turns on the grading machine, so it is points, never a pass/fail check).
struct LabPerformance {
  bool enabled = false;
  std::string launch;
  double points = 0;
  double fullWithin = 1.2;     // full points at or below this ratio to the reference's time
  double minimalBeyond = 10;   // minimalPoints at or beyond this ratio
  double minimalPoints = 0;    // what a correct but very slow kernel still earns
};

// How "cpu" launches run on tl-cpu. The thread count is the lab's, not the grading machine's, so
// a check on programs per thread grades the same everywhere.
struct LabCpu {
  int threads = 16;
  int runs = 15;  // timed runs of each of the reference and the submission, in turns
};

struct LabSpec {
  std::filesystem::path dir;
  std::string title;
  std::string kernelName;              // empty: any name
  std::vector<ParamSpec> params;       // the required signature
  std::filesystem::path reference;     // the solution (absolute)
  std::filesystem::path starter;       // may be empty
  bool keepLayouts = false;            // "compile": {"keep_layouts": true}
  Assignments problem;
  std::set<std::string> submissionChooses;
  ToleranceOverride tolerance;
  std::vector<LabLaunch> launches;
  std::vector<LabCheck> checks;
  LabPerformance performance;
  LabCpu cpu;
  LabPerformance cpuPerformance;

  bool hasCpuLaunches() const;

  const LabLaunch* findLaunch(const std::string& name) const;
  // True when some check reads the report's "fusion" section (the unfused simulation is slow).
  bool needsFusion() const;
};

LabSpec loadLabSpec(const std::filesystem::path& labDir);

// "2 x 3" style path lookups into a report: "memory.totals.dram_read_bytes", "a.0.b".
const nlohmann::json* lookup(const nlohmann::json& j, const std::string& dottedPath);

}  // namespace tl::grade
