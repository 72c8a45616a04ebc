// tl-scalar: the scalar CPU reference. Runs a kernel's whole grid one program and one element
// at a time and prints a summary of its outputs. Every later stage is checked against it; it can
// itself be checked against what the kernel should compute (--expect, --reference).
//
//   tl-scalar                                  # every kernel in kernels/
//   tl-scalar kernels/softmax.tl --set N=4096 --set BLOCK_N=4096 --out-dir out/
//   tl-scalar my_transpose.tl --reference labs/01-coalescing/solution.tl
#include <CLI/CLI.hpp>
#include <iostream>

#include "ir/Printer.h"
#include "runtime/Driver.h"
#include "scalar/ScalarInterpreter.h"

int main(int argc, char** argv) {
  CLI::App app{"tl-scalar: run .tl kernels on the scalar CPU reference (the ground truth)"};
  tl::StageOptions opts;
  tl::addStageOptions(app, opts, {.outputs = true, .stageCheck = false});
  if (int rc = tl::parseCommandLine(app, argc, argv); rc >= 0) return rc;

  return tl::runStage("tl-scalar", opts, [&](tl::CompiledKernel& k, std::ostream& out) {
    if (opts.printIR) out << tl::printFunction(*k.ir);
    tl::Memory memory = tl::Memory::fromLaunch(k.launch);
    auto start = std::chrono::steady_clock::now();
    tl::DeviceOutput print = tl::deviceOutput(opts, out);
    tl::ScalarRunStats stats;
    try {
      stats = tl::runScalar(*k.ir, k.launch, memory, &print);
    } catch (...) {
      print.finish();  // the cap's note (if any) before the run's error
      throw;
    }
    print.finish();
    double ms = tl::msSince(start);
    if (!opts.quiet) {
      out << "   tl-scalar: " << tl::plural(stats.programs, "program") << ", " << stats.elementOps
          << " element ops in " << tl::formatMs(ms) << " (compile " << tl::formatMs(k.compileMs) << ")\n";
      tl::printOutputSummary(memory, out);
    }
    if (!opts.outDir.empty()) tl::writeOutputs(k, memory, opts.outDir, out);
    // No stage to agree with: tl-scalar is the reference. The intent checks and unwritten outputs.
    return tl::checkStageOutputs(k, memory, opts, tl::scalarEngine(), nullptr, nullptr, out);
  });
}
