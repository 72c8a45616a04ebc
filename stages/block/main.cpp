// tl-block: the block-IR stage. Prints the block IR (after each pass on request), runs it with
// the tile-at-a-time interpreter and checks every output against tl-scalar's.
//
//   tl-block                                   # every kernel in kernels/, PASS/FAIL per output
//   tl-block kernels/softmax.tl --print-after-all
//   tl-block kernels/matmul.tl --set M=512 --no-check --out-dir out/
//   tl-block my_softmax.tl --reference solution.tl   # against what it should compute
#include <CLI/CLI.hpp>
#include <iostream>

#include "block/BlockInterpreter.h"
#include "ir/Pass.h"
#include "ir/Printer.h"
#include "runtime/Driver.h"
#include "scalar/ScalarInterpreter.h"

int main(int argc, char** argv) {
  CLI::App app{"tl-block: optimize block IR and run it a tile at a time, checked against tl-scalar"};
  tl::StageOptions opts;
  tl::addStageOptions(app, opts);
  bool printAfterAll = false, noRun = false;
  app.add_flag("--print-after-all", printAfterAll, "Print the block IR after every pass");
  app.add_flag("--no-run", noRun, "Only compile (with --print-ir / --print-after-all)");
  if (int rc = tl::parseCommandLine(app, argc, argv); rc >= 0) return rc;

  return tl::runStage("tl-block", opts, [&](tl::CompiledKernel& k, std::ostream& out) {
    // The reference runs the IR exactly as the front end produced it, before any pass.
    std::unique_ptr<tl::Function> reference = tl::cloneFunction(*k.ir);

    tl::PassManager pm = tl::blockPipeline();
    if (printAfterAll) pm.setPrintAfterAll(&out);
    auto start = std::chrono::steady_clock::now();
    pm.run(*k.ir);
    double passMs = tl::msSince(start);
    if (opts.printIR) out << tl::printFunction(*k.ir);
    if (noRun) return true;

    tl::Memory memory = tl::Memory::fromLaunch(k.launch);
    start = std::chrono::steady_clock::now();
    tl::DeviceOutput print = tl::deviceOutput(opts, out);
    tl::BlockRunStats stats;
    try {
      stats = tl::runBlock(*k.ir, k.launch, memory, &print);
    } catch (...) {
      print.finish();  // the cap's note (if any) before the run's error
      throw;
    }
    print.finish();
    double ms = tl::msSince(start);
    if (!opts.quiet)
      out << "   tl-block: " << tl::plural(stats.programs, "program") << ", " << stats.tileOps << " tile ops in "
          << tl::formatMs(ms) << " (compile " << tl::formatMs(k.compileMs) << ", passes " << tl::formatMs(passMs)
          << ")\n";
    if (!opts.outDir.empty()) tl::writeOutputs(k, memory, opts.outDir, out);
    if (opts.noCheck && !opts.quiet) tl::printOutputSummary(memory, out);
    const tl::Engine scalar = tl::scalarEngine();
    return tl::checkStageOutputs(k, memory, opts, scalar, &scalar, reference.get(), out);
  });
}
