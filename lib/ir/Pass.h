// Passes over block IR and the pass manager that runs them as one linear pipeline.
//
// A pass is a named function that rewrites a Function in place and says whether it changed
// anything. The manager verifies the IR after every pass (a pass that breaks the IR is reported
// by name), can print the IR after each one (`--print-after-all`, marking "(unchanged)"), and
// keeps a snapshot per pass for the visualizer.
#pragma once

#include <functional>
#include <iosfwd>
#include <string>
#include <vector>

#include "ir/IR.h"

namespace tl {

struct Pass {
  std::string name;                       // "cse"
  std::string summary;                    // one line, shown by --help and in docs
  std::function<bool(Function&)> run;     // returns true when it changed the function
};

struct PassSnapshot {
  std::string pass;  // the pass that just ran ("input" for the IR before the first pass)
  bool changed = false;
  std::string ir;    // the printed IR after it
};

class PassManager {
 public:
  void add(Pass pass) { passes_.push_back(std::move(pass)); }
  const std::vector<Pass>& passes() const { return passes_; }

  // Print the IR after each pass to `os` (nullptr: don't).
  void setPrintAfterAll(std::ostream* os) { printTo_ = os; }
  // Keep a PassSnapshot per pass (the visualizer's stage view).
  void setKeepSnapshots(bool keep) { keepSnapshots_ = keep; }
  const std::vector<PassSnapshot>& snapshots() const { return snapshots_; }

  // Runs every pass in order, once, verifying after each. Throws IRError naming the pass whose
  // output failed verification (or that threw). Snapshots: "input" first, then one per pass.
  void run(Function& fn);

 private:
  std::vector<Pass> passes_;
  std::ostream* printTo_ = nullptr;
  bool keepSnapshots_ = false;
  std::vector<PassSnapshot> snapshots_;
};

// --- the block-IR passes (lib/ir/{Canonicalize,FoldConstants,PipelineLoads,CSE,DCE}.cpp; docs/passes.md) ---
// Each expects verified IR, returns true when it changed the function and leaves it verified.
bool canonicalize(Function& fn);   // exact local simplifications (x+0, x*1, neg(neg x), ...) and
                                   // constants moved to the right of commutative ops
bool foldConstants(Function& fn);  // evaluate ops whose operands are all constants (splat(c),
                                   // c1+c2, ...) exactly as the interpreters would
bool cse(Function& fn);            // merge identical side-effect-free ops (scoped to regions)
bool pipelineLoads(Function& fn); // loads of loops with num_stages >= 2 issued one iteration
                                   // ahead, carried to the iteration that uses them
bool dce(Function& fn);            // remove ops whose results are unused and have no effects
                                   // (unused loads too), and dead loop-carried values

// loop-invariant code motion out of `for` bodies (lib/ir/Licm.cpp); the thread stage runs it
// after the lowering, so the thread IR does per iteration what the PTX does.
bool hoistLoopInvariants(Function& fn);

// The standard block-IR pipeline: canonicalize, fold-constants, pipeline-loads, cse, dce.
PassManager blockPipeline();

}  // namespace tl
