// Fuzz harness: the three CPU engines must agree. Bytes are a .tl kernel with its @launch; one
// that compiles, runs at most 64 programs and holds at most 1 MiB of buffers (no file() or empty() inputs)
// runs on tl-scalar (the front end's IR), tl-block (after the block pipeline) and the thread
// executor (after layouts and lowering), each within a work budget. tl-scalar also runs the
// IR after the block pipeline, so a pass is judged on its own. Findings (abort):
//   - the block pipeline makes a run that ran fault, or changes an output beyond its dtype's
//     tolerance (tl-scalar before vs after the passes); a fault before the passes that they
//     remove is not one: dead code is removed, and a load nothing uses may be out of bounds;
//   - tl-scalar and tl-block on the same IR disagree on whether the run faults (a RuntimeError:
//     out of bounds, division by zero, a write conflict), or on an output;
//   - the executor faults where tl-scalar ran (other than a shared-memory race, which only it
//     can see), or runs and an output differs from tl-scalar's.
// Not findings: front-end errors, an IRError from the thread pipeline (a construct it does not
// lower is reported as one; the front-end fuzzer and the tests cover those), budget stops, and
// outputs an ill-conditioned computation makes sensitive to rounding: engines that sum in
// another order may then differ by far more than a dtype's tolerance (a variance that cancels
// to about 0 under 1/sqrt(var + eps)). A disagreement counts only when tl-scalar's own outputs
// stay within tolerance when every float input is nudged by 2^-20 of itself; when they move
// beyond it, the rounding of the engines' different orders explains the difference.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include "block/BlockInterpreter.h"
#include "frontend/Frontend.h"
#include "ir/Pass.h"
#include "runtime/Budget.h"
#include "runtime/Checks.h"
#include "runtime/Memory.h"
#include "scalar/ScalarInterpreter.h"
#include "sim/ThreadExecutor.h"
#include "thread/Pipeline.h"

namespace {

constexpr int64_t kMaxPrograms = 64;
constexpr uint64_t kMaxBytes = 1 << 20;

enum class Outcome { Ran, Faulted, Skipped };

// Runs `run` over a fresh memory; what happened, and the message of a fault.
template <class F>
Outcome attempt(F&& run, std::string& message) {
  try {
    run();
    return Outcome::Ran;
  } catch (const tl::RuntimeError& e) {
    message = e.what();
    // A resource limit (the work budget, a record cap, the target GPU's shared memory per block)
    // is a located error the stage gives on purpose, not a finding.
    return message.find("work budget") != std::string::npos || message.find("outgrew its cap") != std::string::npos ||
                   message.find("of shared memory per block") != std::string::npos
               ? Outcome::Skipped
               : Outcome::Faulted;
  } catch (const tl::IRError&) {
    return Outcome::Skipped;
  } catch (const std::runtime_error& e) {  // a launch the engine cannot bind (reported, not a crash)
    message = e.what();
    return Outcome::Skipped;
  }
}

// TL_FUZZ_VERBOSE=1: one line per input saying how far it got (to check a corpus reaches the
// engines, not only the front end).
void note(const char* what) {
  static const bool verbose = std::getenv("TL_FUZZ_VERBOSE") != nullptr;
  if (verbose) std::fprintf(stderr, "differential: %s\n", what);
}

bool agree(const tl::Memory& reference, const tl::Memory& got) {
  for (const tl::CheckedOutput& c : tl::compareAllOutputs(reference, got, tl::CheckAgainst::Stage, "tl-scalar", {}))
    if (!c.cmp.pass) return false;
  return true;
}

// Whether tl-scalar's outputs for `fn` move beyond tolerance when every element of every float
// input buffer is scaled by 1 +- 2^-20 (the sign from the element's index): an ill-conditioned
// kernel, whose engines may disagree on rounding alone.
bool illConditioned(const tl::Function& fn, const tl::LaunchConfig& launch, const tl::Memory& inputs,
                    const tl::Memory& reference) {
  tl::Memory nudged = inputs;
  for (tl::Buffer& b : nudged.buffers()) {
    if (b.output || !tl::isFloat(b.dtype)) continue;
    for (int64_t i = 0; i < b.numel(); ++i)
      b.setF(i, b.getF(i) * (1.0 + (((i * 2654435761u) >> 7) & 1 ? 1.0 : -1.0) * std::ldexp(1.0, -20)));
  }
  try {
    tl::runScalar(fn, launch, nudged);
  } catch (const std::exception&) {
    return true;  // nudging the inputs changes whether it faults: as sensitive as can be
  }
  return !agree(reference, nudged);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  tl::workLimits().maxSteps = 2'000'000;
  tl::workLimits().progress = false;
  auto file = std::make_shared<tl::SourceFile>("fuzz.tl", std::string(reinterpret_cast<const char*>(data), size));
  tl::DiagEngine diag(file);
  auto parsed = tl::parseKernelFile(file, diag);
  if (!parsed || diag.hasErrors()) return note("front-end error"), 0;
  tl::LaunchConfig launch = tl::evalLaunch(*parsed, {}, diag);
  if (diag.hasErrors()) return note("launch error"), 0;
  if (launch.grid[0] * launch.grid[1] * launch.grid[2] > kMaxPrograms) return note("grid too large"), 0;
  uint64_t bytes = 0;
  for (const tl::BufferSpec& b : launch.buffers) {
    if (b.fill == tl::Fill::File) return note("file() input"), 0;
    // empty(): uninitialized on purpose; the executor's initcheck reports a read of it where the
    // CPU stages read the fill bytes, which is a finding of the kernel, not of tilelab.
    if (b.fill == tl::Fill::Empty) return note("empty() input"), 0;
    uint64_t n = uint64_t(tl::dtypeBytes(b.dtype));
    for (int64_t d : b.shape) n *= uint64_t(d > 0 ? d : 1);
    bytes += n;
    if (bytes > kMaxBytes) return note("buffers too large"), 0;
  }
  auto ir = tl::compileKernel(*parsed, tl::specializationFor(*parsed, launch), diag);
  if (!ir || diag.hasErrors()) return note("compile error"), 0;

  std::string why;
  tl::Memory inputs;
  try {
    inputs = tl::Memory::fromLaunch(launch);
  } catch (const std::exception&) {
    return 0;
  }
  tl::Memory scalar = inputs, passed = inputs, block = inputs, thread = inputs;
  std::string scalarMsg, passedMsg, blockMsg, threadMsg;
  Outcome s = attempt([&] { tl::runScalar(*ir, launch, scalar); }, scalarMsg);
  if (s == Outcome::Skipped) return note("tl-scalar skipped"), 0;
  std::unique_ptr<tl::Function> blockIR = tl::cloneFunction(*ir);
  try {
    tl::PassManager pm = tl::blockPipeline();
    pm.run(*blockIR);
  } catch (const tl::IRError&) {
    return note("the block pipeline rejected the IR"), 0;
  }
  Outcome sp = attempt([&] { tl::runScalar(*blockIR, launch, passed); }, passedMsg);
  if (sp == Outcome::Skipped) return note("tl-scalar after the passes skipped"), 0;
  auto differ = [&](const tl::Memory& a, const tl::Memory& b) {
    return !agree(a, b) && !illConditioned(*ir, launch, inputs, scalar);
  };
  if (s == Outcome::Ran && (sp == Outcome::Faulted || differ(scalar, passed))) std::abort();
  Outcome b = attempt([&] { tl::runBlock(*blockIR, launch, block); }, blockMsg);
  if (b != Outcome::Skipped) {
    if ((sp == Outcome::Faulted) != (b == Outcome::Faulted)) std::abort();  // one faulted, the other ran
    if (sp == Outcome::Ran && differ(passed, block)) std::abort();
  }
  if (s == Outcome::Faulted && sp == Outcome::Ran) return note("a fault in code the passes removed"), 0;
  if (s == Outcome::Faulted) return note("tl-scalar and tl-block faulted alike"), 0;
  Outcome t = attempt([&] {
    tl::ThreadCompilation tc = tl::compileToThreadIR(*ir, launch);
    tl::runThreadIR(*tc.threadIR, launch, thread);
  }, threadMsg);
  if (t == Outcome::Faulted && threadMsg.find("race") == std::string::npos) std::abort();
  if (t == Outcome::Ran && differ(scalar, thread)) std::abort();
  note(t == Outcome::Ran ? "all three ran and agree" : "tl-scalar and tl-block agree; the executor skipped or raced");
  return 0;
}
