// tl-grade's engine: one submission against one lab, with no GPU.
//
// The grader does not simulate or compare anything itself. It drives the stage libraries and
// reads what they already produce:
//   - the front end (compile errors, rendered at their line; the signature);
//   - tl-block for the reference solution's outputs, tl-thread (the warp-level executor, with
//     race detection) for the submission's, compared by runtime/Checks.h (the same comparison
//     every stage prints) and the never-written report (Buffer::stored);
//   - tl-sim's JSON report (stages/sim/SimReport.h) for every metric check and the predicted
//     time, read by dotted paths (docs/sim.md is its schema).
//
//   - at a "cpu" launch, tl-cpu (stages/cpu) instead of tl-thread: the submission compiled for this
//     CPU, its outputs, its never-written elements and its results JSON (CpuResults.h); and for
//     "cpu_performance", the reference and the submission timed in turns on this machine.
//
// It cannot be gamed: the submission's @launch keeps only the keywords the lab lets it choose,
// the problem (sizes, buffers) and a fresh SEED come from the lab, the signature is checked, and
// every pass/fail figure comes from the deterministic simulator or tl-cpu's report of the launch,
// never from the submission. Measured CPU time earns points only, never a check.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "grader/LabSpec.h"
#include "runtime/Memory.h"

namespace tl::grade {

struct CheckOutcome {
  std::string id;
  std::string kind;      // checkKindName, or "compiles" / "signature" for the gates
  bool pass = false;
  double points = 0;     // what it is worth
  std::string detail;    // what was found (one or more lines)
  std::string hint;      // the spec's hint, shown when it fails
  std::optional<double> value;  // metric checks: the figure compared with the bounds
};

// "performance": tl-sim's predicted times in us; "cpu_performance": tl-cpu's measured medians in ms.
struct PerformanceOutcome {
  bool graded = false;
  double submission = 0, reference = 0, ratio = 0;
  double points = 0, earned = 0;
  std::string detail;
};

struct GradeResult {
  std::string submission;  // the path as given
  std::string sourceSha256;
  uint64_t seed = 0;
  std::vector<std::string> notes;     // e.g. @launch keywords the lab replaced
  std::vector<CheckOutcome> checks;   // the gates (compiles, signature), then the spec's checks
  PerformanceOutcome performance;
  PerformanceOutcome cpuPerformance;
  double score = 0, maxScore = 0;
  double seconds = 0;                 // wall time of this grading
  std::string infrastructureError;    // set when the grader itself failed (exit 2)
  bool allPass() const;
};

// What the reference solution produced at every launch of one grading seed: computed once and
// shared by every submission of a class.
struct ReferenceRuns {
  uint64_t seed = 0;
  std::map<std::string, Memory> outputs;               // launch -> memory after its last step
  std::map<std::string, nlohmann::json> reports;       // simulated launch -> tl-sim report
  std::map<std::string, nlohmann::json> cpuReports;    // tl-cpu launch -> tl-cpu results JSON
};

// Runs the reference at every launch. Throws std::runtime_error when the lab's own solution does
// not compile or run (an infrastructure error: the lab is broken, not the submission).
ReferenceRuns runReference(const LabSpec& spec, uint64_t seed);

// Grades one submission. Never throws for anything the submission does; a grader failure is
// reported in GradeResult::infrastructureError.
GradeResult gradeSubmission(const LabSpec& spec, const std::string& path, const ReferenceRuns& reference);

// How long and how large one grading may get. Each submission is graded in a child process
// (labs/grader/Pool.cpp) that is killed at the time limit and cannot allocate past the memory
// limit, so a kernel that loops for ever, or a crash, costs one submission, never the class.
struct GradeLimits {
  double seconds = 60;                      // wall time per submission; 0: none
  uint64_t memoryBytes = uint64_t(8) << 30;  // address space per submission; 0: none
};

// Grades every file, `jobs` at a time, each in its own child process sharing one reference;
// `onDone(done, total)` is called after each submission (e.g. for a progress bar). Results are
// in `files`' order. The calling process must not be running other threads (it forks).
std::vector<GradeResult> gradeClass(const LabSpec& spec, const std::vector<std::string>& files,
                                    const ReferenceRuns& reference, unsigned jobs, const GradeLimits& limits = {},
                                    const std::function<void(size_t done, size_t total)>& onDone = {});

// Every file of a lab graded as CI grades it: the solution passes every check, the starter fails
// at least one (and those its first line names), each wrong/*.tl fails the checks its first line
// names (`# expect-fail: id[, id...]`). One line per file; `ok` is false when any expectation fails.
struct LabFileVerdict {
  std::string file;
  bool ok = false;
  std::string line;  // "ok   wrong/floor_grid.tl fails written", or what went wrong
};
std::vector<LabFileVerdict> checkLab(const LabSpec& spec, const ReferenceRuns& reference);
// The ids a kernel's first line names after "# expect-fail:".
std::vector<std::string> expectedFailures(const std::string& path);

// The whole result back from toJson (the child processes hand their results over as JSON).
GradeResult resultFromJson(const nlohmann::json& j);

// The whole result as JSON (tl-grade --json), and as a JUnit XML test suite (--junit).
nlohmann::ordered_json toJson(const GradeResult& r);
std::string toJUnit(const std::vector<GradeResult>& results, const std::string& labTitle);
// The readable report a student sees; hidden launches are not described.
std::string formatResult(const GradeResult& r, const LabSpec& spec);

}  // namespace tl::grade
