// Correctness against intent: what a stage's outputs are checked against, shared by every stage
// tool and by tl-grade.
//
// Stage agreement (tl-block == tl-scalar of the same kernel) cannot see a bug that the kernel
// itself has: tl-scalar runs the same bug. So a stage can also check its outputs against what
// they should be:
//   --expect PARAM=FILE.npy   the output PARAM against a file of the expected result;
//   --reference KERNEL.tl     every output against another kernel (an instructor's solution) run
//                             on tl-scalar with the same launch and the very same input bytes.
// Every stage also reports outputs that no program ever stored to (like compute-sanitizer's
// initcheck, from Buffer::stored): "673 of 100001 elements of out_ptr were never stored (first
// at [99328])". A stage warns about them; tl-grade fails its "written" check.
//
// Each PASS/FAIL line says what it compared against, so a student never reads stage agreement
// as "correct":
//   PASS out_ptr    vs tl-scalar (stage agreement)    ...
//   PASS out_ptr    vs expected out.npy               ...
//   FAIL out_ptr    vs reference solution.tl (tl-scalar)  ...  worst element [3, 17]
#pragma once

#include <functional>
#include <iosfwd>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ir/IR.h"
#include "runtime/Memory.h"

namespace tl {

struct CompiledKernel;  // runtime/Driver.h

// What an output was compared with.
enum class CheckAgainst {
  Stage,      // the same kernel on the stage's reference engine (stage agreement)
  Expected,   // an --expect file
  Reference,  // a --reference kernel
};
const char* checkAgainstName(CheckAgainst a);  // "stage", "expected", "reference"

struct CheckedOutput {
  std::string output;   // the buffer (pointer parameter)
  CheckAgainst kind = CheckAgainst::Stage;
  std::string against;  // "tl-scalar (stage agreement)", "expected out.npy", ...
  Shape shape;
  DType dtype = DType::F32;
  Comparison cmp;
};

struct UnwrittenOutput {
  std::string output;
  Shape shape;
  int64_t numel = 0;
  Unwritten unwritten;
};

// Everything one stage run checked.
struct CheckReport {
  std::vector<CheckedOutput> outputs;
  std::vector<UnwrittenOutput> unwritten;  // only outputs with at least one unwritten element
  bool intentChecked = false;              // an --expect or --reference check ran
  bool pass() const;                       // every comparison passed (unwritten elements only warn)
};
nlohmann::json toJson(const CheckReport& r);

// Compares got's output `name` with `expected`; the check's line is printed by printCheck.
CheckedOutput compareOutput(const Buffer& expected, const Memory& got, const std::string& name, CheckAgainst kind,
                          const std::string& against, const ToleranceOverride& tol);
// Every output of `reference` against `got`.
std::vector<CheckedOutput> compareAllOutputs(const Memory& reference, const Memory& got, CheckAgainst kind,
                                           const std::string& against, const ToleranceOverride& tol);
// The outputs of `memory` with elements no store wrote.
std::vector<UnwrittenOutput> findUnwritten(const Memory& memory);

// "  PASS out_ptr    vs tl-scalar (stage agreement)  256x781 f32  max_abs_err=... tol: ...".
void printCheck(const CheckedOutput& c, std::ostream& out);
// "  warning: 673 of 100001 elements of out_ptr were never stored (first at [99328])".
std::string describeUnwritten(const UnwrittenOutput& u);

// What to check a stage run against, from the command line.
struct IntentOptions {
  std::vector<std::string> expects;  // --expect PARAM=FILE.npy
  std::string reference;             // --reference KERNEL.tl
  ToleranceOverride tolerance;
};

// An engine that runs a kernel over a memory: tl-scalar for --reference kernels and for stage
// agreement (the stages pass their own; tl_runtime cannot depend on them).
struct Engine {
  std::string name;  // "tl-scalar"
  std::function<void(const Function&, const LaunchConfig&, Memory&)> run;
};

// Runs every check of a stage's outputs `got`:
//   1. each --expect file against its output;
//   2. the --reference kernel (compiled with `overrides`) on `referenceEngine`, over a memory made
//      from k's launch: the very inputs the stage ran with, the reference's own scalars and grid;
//   3. unless `stage` is null, the same kernel (`stageIR`, e.g. the IR before any pass) on the
//      stage reference engine (stage agreement).
// Prints one line per comparison and a warning per output with unwritten elements. Throws
// std::runtime_error for unusable options (a missing file, an --expect naming no output, a
// reference kernel whose buffers or scalars differ from the kernel's), with the reason.
CheckReport runChecks(const CompiledKernel& k, const Memory& got, const IntentOptions& intent,
                         const std::vector<LaunchOverride>& overrides, const Engine& referenceEngine,
                         const Engine* stage, const Function* stageIR, std::ostream& out);

}  // namespace tl
