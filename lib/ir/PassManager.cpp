// The pass manager: runs a list of named passes over one function, in order, once.
//
// Expects: a function that verifies (the front end's output or parsed IR).
// Guarantees: after every pass the function is verified; a pass whose output does not verify
// (or that throws IRError itself) is reported as an IRError naming it. With setPrintAfterAll the
// IR is logged after each pass, Halide style:
//
//   // ----- IR after canonicalize -----
//   func @k(...) { ... }
//   // ----- IR after fold-constants (unchanged) -----
//
// and with setKeepSnapshots one PassSnapshot is kept for the input and one per pass.
//
// The sequence runs once, not to a fixed point: see docs/passes.md ("Why run once").
#include <ostream>

#include "ir/Pass.h"
#include "ir/Printer.h"
#include "ir/Verifier.h"

namespace tl {

void PassManager::run(Function& fn) {
  snapshots_.clear();
  std::string lastIR;  // the printed IR after the last pass (only kept when snapshotting)
  if (keepSnapshots_) {
    lastIR = printFunction(fn);
    snapshots_.push_back({"input", false, lastIR});
  }
  for (const Pass& pass : passes_) {
    bool changed = false;
    try {
      changed = pass.run(fn);
    } catch (const IRError& e) {
      throw IRError(e.loc, "pass '" + pass.name + "' failed: " + e.what());
    } catch (const std::exception& e) {  // a bug in the pass (std::out_of_range from .at(), ...)
      throw IRError(fn.loc, "pass '" + pass.name + "' failed: " + e.what());
    }
    std::string problems = verifyFunction(fn);
    if (!problems.empty())
      throw IRError(fn.loc, "IR after pass '" + pass.name + "' does not verify:\n" + problems);

    if (changed && (printTo_ || keepSnapshots_)) lastIR = printFunction(fn);
    if (printTo_) {
      *printTo_ << "// ----- IR after " << pass.name << (changed ? "" : " (unchanged)") << " -----\n";
      if (changed) *printTo_ << lastIR;
    }
    if (keepSnapshots_) snapshots_.push_back({pass.name, changed, lastIR});
  }
}

PassManager blockPipeline() {
  PassManager pm;
  pm.add({"canonicalize", "local exact simplifications (x+0, x*1, not(not x), ...); constants to the right", canonicalize});
  pm.add({"fold-constants", "evaluate ops whose operands are all constants, with the interpreters' semantics", foldConstants});
  pm.add({"pipeline-loads", "in loops with num_stages >= 2, each load issued one iteration ahead and carried to its use", pipelineLoads});
  pm.add({"cse", "merge identical side-effect-free ops (an op may reuse one from an enclosing region)", cse});
  pm.add({"dce", "remove unused ops without effects (unused loads too) and dead loop-carried values", dce});
  return pm;
}

}  // namespace tl
