// tl-thread: the thread-mapped stage. Decides a layout for every tile (which thread of which
// warp owns which element), lowers block IR to the program one thread runs — reductions become
// shuffles and shared memory with barriers, dots become mma on tensor cores where they fit — runs it on
// the warp-level executor (sim/) and checks every output against tl-scalar.
//
//   tl-thread                                   # every kernel in kernels/, PASS/FAIL per output
//   tl-thread kernels/softmax.tl --print-ir     # the layout snapshot, then the thread IR
//   tl-thread kernels/softmax.tl --show-map x   # who owns which element of %x
//   tl-thread kernels/matmul.tl --num-warps 8
//   tl-thread --show-fragments bf16             # which lane holds which element of an mma's A, B, C
//   tl-thread my.tl --no-race-check             # skip the race checks (in a block, between programs)
#include <CLI/CLI.hpp>
#include <iostream>

#include "ir/Printer.h"
#include "runtime/Driver.h"
#include "scalar/ScalarInterpreter.h"
#include "sim/ThreadExecutor.h"
#include "thread/OwnershipMap.h"
#include "thread/Pipeline.h"

int main(int argc, char** argv) {
  CLI::App app{"tl-thread: assign layouts, lower to thread IR and run it warp by warp, checked against tl-scalar"};
  tl::StageOptions opts;
  tl::addStageOptions(app, opts);
  bool printLayouts = false, printThread = false, printAfterAll = false, noRun = false;
  bool raceCheck = true, keepLayouts = false, wgmma = false;
  std::vector<std::string> maps;
  app.add_flag("--print-layouts", printLayouts, "Print the block IR with layouts (what was decided)");
  app.add_flag("--print-thread-ir", printThread, "Print the thread IR (how it is done)");
  app.add_flag("--print-after-all", printAfterAll, "Print the IR after every pass and after lowering");
  app.add_option("--show-map", maps, "Print which thread of which warp owns which element of VALUE "
                                     "(a name in the layout snapshot, e.g. x or %x.1); repeatable")
      ->type_name("VALUE")
      ->allow_extra_args(false);
  std::string fragments;
  app.add_option("--show-fragments", fragments,
                 "Print which lane holds which element of the tensor-core (mma.sync) fragments for the "
                 "inputs' DTYPE (the PTX ISA's tables), and exit")
      ->check(CLI::IsMember({"f16", "bf16", "tf32", "e4m3", "e5m2"}))
      ->type_name("DTYPE");
  app.add_flag("--keep-layouts", keepLayouts,
               "Keep the layouts the source implies: no automatic convert_layout through shared memory "
               "(data moves between threads only at trans and reductions)");
  app.add_flag("--wgmma", wgmma,
               "Run f16 / bf16 / fp8 / tf32 dots that fit as warpgroup MMAs (wgmma.mma_async, Hopper's sm_90a; tl-ptx --arch sm_90a) "
               "instead of mma.sync");
  app.add_flag("--no-run", noRun, "Only compile (with the print options)");
  app.add_flag("--race-check,!--no-race-check", raceCheck,
               "Check for races during the run: shared memory between warps of a block, global memory between "
               "programs (blocks) that no atomic release/acquire orders (default: on; --no-race-check is faster)");
  if (int rc = tl::parseCommandLine(app, argc, argv); rc >= 0) return rc;
  // --print-ir is the stage's whole story: the layout snapshot, then the thread IR.
  if (opts.printIR) printLayouts = printThread = true;
  if (!fragments.empty()) {
    const tl::DType d = fragments == "f16" ? tl::DType::F16 : fragments == "bf16" ? tl::DType::BF16
                        : fragments == "tf32" ? tl::DType::F32 : fragments == "e4m3" ? tl::DType::F8E4M3 : tl::DType::F8E5M2;
    std::cout << tl::renderMmaFragments(*tl::mmaInstrFor(d, true));
    return 0;
  }

  return tl::runStage("tl-thread", opts, [&](tl::CompiledKernel& k, std::ostream& out) {
    auto start = std::chrono::steady_clock::now();
    tl::ThreadCompileOptions tco;
    tco.numWarps = opts.numWarps;
    tco.keepLayouts = keepLayouts;
    tco.wgmma = wgmma;
    tco.printAfterAll = printAfterAll ? &out : nullptr;
    tl::ThreadCompilation tc = tl::compileToThreadIR(*k.ir, k.launch, tco);
    double lowerMs = tl::msSince(start);
    if (printLayouts) out << "// ----- block IR with layouts -----\n" << tl::printFunction(*tc.withLayouts);
    if (printThread) out << "// ----- thread IR -----\n" << tl::printFunction(*tc.threadIR);
    for (const auto& name : maps) {
      const tl::Value* v = tl::findValueByName(*tc.withLayouts, name);
      if (!v) {
        std::cerr << k.path << ": error: --show-map: no value named '" << name
                  << "' in the layout snapshot (see --print-layouts for the names)\n";
        return false;
      }
      out << tl::renderOwnershipMap(*v, name);
    }
    if (!opts.quiet) {
      out << "   layouts (num_warps " << tc.numWarps << "; assuming " << tl::describeHints(tc.hints) << "):\n"
          << tl::explainMemoryLayouts(tc) << tl::explainDots(*tc.blockIR, tc.numWarps, tc.wgmma);
      if (tc.shared.buffers.empty()) out << "   shared memory: none\n";
      else out << tc.shared.str();
    }
    if (noRun) return true;

    tl::Memory memory = tl::Memory::fromLaunch(k.launch);
    tl::ExecOptions eo;
    eo.recordAccesses = false;
    eo.detectRaces = raceCheck;
    tl::DeviceOutput print = tl::deviceOutput(opts, out);
    eo.print = &print;
    start = std::chrono::steady_clock::now();
    tl::ExecResult res;
    try {
      res = tl::runThreadIR(*tc.threadIR, k.launch, memory, eo);
    } catch (...) {
      print.finish();  // the cap's note (if any) before the run's error
      throw;
    }
    print.finish();
    double ms = tl::msSince(start);
    if (!opts.quiet)
      out << "   tl-thread: " << tl::plural(res.stats.blocks, "block") << " x " << tl::plural(tc.numWarps, "warp") << ", "
          << res.stats.warpInstructions << " warp instructions, " << res.stats.barriers << " barriers in "
          << tl::formatMs(ms) << " (compile " << tl::formatMs(k.compileMs + lowerMs) << ")\n";
    for (const std::string& note : res.notes) out << "   note: " << note << "\n";
    if (!opts.outDir.empty()) tl::writeOutputs(k, memory, opts.outDir, out);
    if (opts.noCheck && !opts.quiet) tl::printOutputSummary(memory, out);
    const tl::Engine scalar = tl::scalarEngine();
    return tl::checkStageOutputs(k, memory, opts, scalar, &scalar, k.ir.get(), out);
  });
}
