// The work budget of every engine that runs a kernel on the CPU — tl-scalar, tl-block and the
// simulator's warp-level executor (tl-thread, tl-sim, tl-viz, tl-grade) — and the progress
// line a long run prints.
//
// A run is charged steps as it goes:
//   tl-scalar, tl-block   one step per element an op computes (a 1024-element add is 1024)
//   thread executor       one step per warp instruction (a warp executing one op)
// When the charge passes the budget the engine throws RuntimeError at the op it was running
// ("the run exceeded its work budget ..."), so a `range(0, 2**31)` loop or a grid of 1e9
// programs ends with a located error, exit 1, instead of running for hours.
//
//   workLimits().maxSteps = 1'000'000;        // --max-steps (0: each engine's default below)
//   WorkMeter meter("tl-scalar", "program", programs, kScalarDefaultSteps, "one element an op computes");
//   meter.startUnit(i);  ...  meter.charge(elements, op.loc);
//
// Progress: a run still going after kProgressAfterSeconds prints, on stderr, which unit
// (program, block) it is on, of how many, and the steps used of the budget; every
// kProgressEverySeconds after that (one line rewritten in place on a terminal). A tool turns it
// off with workLimits().progress = false (tl-grade's workers; tl-viz, which shows its own).
//
// The defaults are about ten minutes of one core of the development machine for each engine
// (docs/reliability.md has the measured rates). Guarantees: the budget check is one add and one
// compare per charge; the clock is read once per 2^20 steps (or per unit), never per op.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include "ir/Diagnostics.h"
#include "ir/IR.h"

namespace tl {

constexpr int64_t kScalarDefaultSteps = 100'000'000'000;     // 2e8 element ops/s on an add
constexpr int64_t kBlockDefaultSteps = 1'000'000'000'000;    // 1e10 on an add, far less on loads
constexpr int64_t kExecutorDefaultSteps = 10'000'000'000;    // 1.3e7 warp instructions/s
constexpr double kProgressAfterSeconds = 3.0;
constexpr double kProgressEverySeconds = 2.0;

struct WorkLimits {
  int64_t maxSteps = 0;  // > 0: every engine's budget; 0: each engine's default
  bool progress = true;  // print progress lines on stderr
};

// The process's limits: set once by the tool from its command line, read by every WorkMeter.
WorkLimits& workLimits();

class WorkMeter {
 public:
  // `engine` names the run in messages ("tl-scalar"), `unitName` what it iterates over
  // ("program", "block"), `units` how many there are, `step` what one step is.
  WorkMeter(std::string engine, std::string unitName, int64_t units, int64_t defaultSteps, std::string step);
  ~WorkMeter();  // ends a progress line left on a terminal
  WorkMeter(const WorkMeter&) = delete;
  WorkMeter& operator=(const WorkMeter&) = delete;

  void startUnit(int64_t index);
  void charge(int64_t steps, Loc loc) {
    steps_ += steps;
    if (steps_ >= nextCheck_) check(loc);
  }
  int64_t steps() const { return steps_; }
  int64_t budget() const { return budget_; }

 private:
  void check(Loc loc);
  void progress();

  std::string engine_, unitName_, step_;
  int64_t units_ = 0, unit_ = 0;
  int64_t budget_ = 0, steps_ = 0, nextCheck_ = 0;
  std::chrono::steady_clock::time_point start_, lastPrint_;
  bool printed_ = false, tty_ = false;
};

// What an interpreter charges for one op: the elements of its largest operand or result (1 for
// scalars and for ops without values, such as a yield, so an empty loop still costs a step).
int64_t elementSteps(const Op& op);

// "1.5e+10"-style short count for messages ("20000000000" -> "2e10").
std::string shortCount(int64_t n);

}  // namespace tl
