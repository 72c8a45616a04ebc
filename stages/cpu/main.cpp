// tl-cpu: the CPU stage. Compiles each kernel's block IR for this machine's CPU with LLVM
// (vectors of its widest ISA, ORC's JIT in process), runs the grid's programs in parallel on
// every core, and checks every output against tl-scalar.
//
//   tl-cpu                                          # every kernel in kernels/, PASS/FAIL per output
//   tl-cpu kernels/softmax.tl --threads 1 --runs 20 # timed: median of 20 runs on one thread
//   tl-cpu kernels/matmul.tl --print-llvm           # the optimized LLVM IR (--print-asm: x86 assembly)
//   tl-cpu kernels/softmax.tl --isa avx2            # a narrower ISA than the host's
//   tl-cpu my_softmax.tl --reference solution.tl    # against what it should compute
//
// Per kernel: front end -> block pipeline -> LLVM IR (stages/cpu/CpuCodegen.cpp) -> O3 -> JIT
// (CpuJit.cpp) -> run over a host copy of the launch's memory (CpuRuntime.cpp) -> check. With
// --runs N the kernel is compiled a second time without store tracking and timed N times.
#include <CLI/CLI.hpp>
#include <iomanip>
#include <iostream>

#include "block/BlockInterpreter.h"
#include "cpu/CpuCache.h"
#include "cpu/CpuResults.h"
#include "cpu/CpuRuntime.h"
#include "ir/Pass.h"
#include "ir/Printer.h"
#include "runtime/Work.h"
#include "runtime/AtomicFile.h"
#include "runtime/Driver.h"
#include "scalar/ScalarInterpreter.h"
#include "thread/Unfuse.h"

namespace {

struct CpuStageOptions {
  int threads = 0;
  std::string isa;
  bool printLLVM = false, printAsm = false, noRun = false;
  int runs = 10;
  double budgetMs = 2000;
  std::string checkStage = "scalar";
  std::string resultsDir = "out/results-cpu";
  int optLevel = 3;
  bool noCache = false;
  bool unfused = false;
};

// --unfused: the kernel unfused (one kernel per block op, stages/thread/Unfuse.h), each kernel
// compiled like the fused one, run in order over one memory, checked against the fused run's
// outputs, and timed: each kernel's median, summed (what one pass of the sequence costs).
void runUnfused(const tl::CompiledKernel& k, const tl::cpu::CpuTarget& target, const tl::cpu::JitOptions& jo,
                const CpuStageOptions& o, const tl::Memory& fused, tl::cpu::CpuResults& r, std::ostream& out) {
  tl::UnfusedKernels u = tl::unfuse(*k.ir, k.launch);
  tl::Memory memory = tl::Memory::fromLaunch(u.launch);
  tl::cpu::CodegenOptions untracked;
  untracked.trackStores = false;
  tl::cpu::JitOptions cjo;
  cjo.optLevel = jo.optLevel;
  cjo.cache = jo.cache;
  double total = 0;
  for (size_t i = 0; i < u.kernels.size(); ++i) {
    const tl::Function& fn = *u.kernels[i];
    tl::cpu::CpuKernel kernel = tl::cpu::compileKernel(fn, target, untracked, cjo);
    tl::cpu::RunOptions ro;
    ro.threads = o.threads;
    tl::cpu::runKernel(kernel, fn, u.launch, memory, ro);  // the sequence's one real pass
    if (o.runs > 0) {
      tl::Memory scratch = memory;
      ro.repeat = o.runs + 1;
      ro.budgetMs = o.budgetMs / double(u.kernels.size());
      tl::cpu::RunStats t = tl::cpu::runKernel(kernel, fn, u.launch, scratch, ro);
      if (t.ms.size() > 1) t.ms.erase(t.ms.begin());
      total += tl::medianOf(t.ms);
    }
    out << "   unfused " << (i + 1) << ": " << u.descriptions[i] << "\n";
  }
  r.unfusedKernels = static_cast<int>(u.kernels.size());
  r.unfusedMedianMs = total;
  const bool same = tl::compareOutputs(fused, memory, "tl-cpu fused (the unfused sequence; stage agreement)", out);
  r.unfusedCheck = same ? "PASS" : "FAIL";
  if (o.runs > 0 && r.medianMs > 0)
    out << "   unfused: " << tl::plural(int64_t(u.kernels.size()), "kernel") << ", " << tl::formatMs(total)
        << " (each kernel's median, summed) against " << tl::formatMs(r.medianMs) << " fused: fusion saves "
        << std::setprecision(3) << total / r.medianMs << "x\n";
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"tl-cpu: compile block IR for this CPU (LLVM, vectorized, every core) and run it, checked against tl-scalar"};
  tl::StageOptions opts;
  tl::addStageOptions(app, opts);
  CpuStageOptions o;
  app.add_option("--threads", o.threads, "Threads that run the grid's programs (default: every core)")->check(CLI::Range(1, 1024));
  app.add_option("--isa", o.isa, "Vector ISA: avx512, avx2 or sse4.2 (default: the widest this CPU has)")
      ->check(CLI::IsMember({"avx512", "avx2", "sse4.2"}));
  app.add_flag("--print-llvm", o.printLLVM, "Print the optimized LLVM IR");
  app.add_flag("--print-asm", o.printAsm, "Print the x86 assembly");
  app.add_flag("--no-run", o.noRun, "Only compile (with --print-ir / --print-llvm / --print-asm)");
  app.add_option("--runs", o.runs,
                 "Time the kernel this many times, or fewer once 2 s have passed (median and min; store tracking off; 0: no timing)")
      ->check(CLI::Range(0, 100000));
  app.add_option("--results-dir", o.resultsDir, "Where the results JSON goes (DIR/<kernel>.json)");
  app.add_flag("--unfused", o.unfused,
               "Also run and time the unfused kernels (one per block op, intermediates in memory: stages/thread/Unfuse.h)");
  app.add_flag("--no-cache", o.noCache, "Compile even when the JIT cache has the kernel (and do not store it)");
  app.add_option("-O,--opt-level", o.optLevel, "LLVM's optimization level, 0-3")->check(CLI::Range(0, 3));
  app.add_option("--check-stage", o.checkStage, "The stage-agreement reference: scalar or block (faster, for big launches)")
      ->check(CLI::IsMember({"scalar", "block"}));
  if (int rc = tl::parseCommandLine(app, argc, argv); rc >= 0) return rc;

  tl::cpu::CpuTarget target;
  try {
    target = tl::cpu::hostTarget(o.isa);
  } catch (const std::exception& e) {
    std::cerr << "tl-cpu: error: " << e.what() << "\n";
    return 1;
  }

  const tl::cpu::CpuCache cache(tl::defaultCacheRoot());
  return tl::runStage("tl-cpu", opts, [&](tl::CompiledKernel& k, std::ostream& out) {
    std::unique_ptr<tl::Function> reference = tl::cloneFunction(*k.ir);
    tl::PassManager pm = tl::blockPipeline();
    auto start = std::chrono::steady_clock::now();
    pm.run(*k.ir);
    const double passMs = tl::msSince(start);
    if (opts.printIR) out << tl::printFunction(*k.ir);

    tl::cpu::JitOptions jo;
    jo.keepIR = o.printLLVM;
    jo.keepAssembly = o.printAsm;
    jo.optLevel = o.optLevel;
    jo.cache = o.noCache ? nullptr : &cache;
    tl::cpu::CpuKernel kernel = tl::cpu::compileKernel(*k.ir, target, {}, jo);
    if (o.printLLVM) out << kernel.llvmIR;
    if (o.printAsm) out << kernel.assembly;
    const tl::cpu::CompileTimes& ct = kernel.times;
    if (!opts.quiet) {
      out << "   tl-cpu: " << target.str() << "; ";
      if (ct.cacheHit)
        out << "cache hit, linked in " << tl::formatMs(ct.totalMs()) << " (lookup " << tl::formatMs(ct.cacheMs) << ", JIT "
            << tl::formatMs(ct.jitMs) << ")";
      else
        out << "compiled in " << tl::formatMs(ct.totalMs()) << " (LLVM IR " << tl::formatMs(ct.codegenMs) << ", O"
            << o.optLevel << " " << tl::formatMs(ct.optimizeMs) << ", x86 " << tl::formatMs(ct.objectMs) << ", JIT "
            << tl::formatMs(ct.jitMs) << (ct.cacheKey.empty() ? "" : ", cache " + tl::formatMs(ct.cacheMs) + ": " + ct.cacheMiss) << ")";
      out << ", " << kernel.scratchBytes / 1024 << " KiB of tiles per thread\n";
    }
    if (o.noRun) return true;

    tl::Memory memory = tl::Memory::fromLaunch(k.launch);
    tl::DeviceOutput print = tl::deviceOutput(opts, out);
    tl::cpu::RunOptions ro;
    ro.threads = o.threads;
    ro.print = &print;
    tl::cpu::RunStats stats;
    try {
      stats = tl::cpu::runKernel(kernel, *k.ir, k.launch, memory, ro);
    } catch (...) {
      print.finish();
      throw;
    }
    print.finish();
    if (!opts.quiet)
      out << "   tl-cpu: " << tl::plural(stats.programs, "program") << " on " << tl::plural(stats.threads, "thread") << " in "
          << tl::formatMs(stats.ms.at(0)) << " (checked run: store tracking on)\n";

    tl::cpu::CpuResults r = tl::cpu::describeRun(*k.ir, k.launch, k.spec, *k.parsed->file, target, kernel, stats.threads, memory);
    r.frontEndMs = k.compileMs;
    r.passesMs = passMs;

    if (o.runs > 0 && !kernel.prints) {
      tl::cpu::CodegenOptions untracked;
      untracked.trackStores = false;
      tl::cpu::JitOptions timedJit;
      timedJit.optLevel = o.optLevel;
      timedJit.cache = jo.cache;
      tl::cpu::CpuKernel timed = tl::cpu::compileKernel(*k.ir, target, untracked, timedJit);
      tl::Memory scratch = tl::Memory::fromLaunch(k.launch);
      tl::cpu::RunOptions to = ro;
      to.print = nullptr;
      to.repeat = o.runs + 1;  // the first run warms caches and pages
      to.budgetMs = o.budgetMs;
      tl::cpu::RunStats t = tl::cpu::runKernel(timed, *k.ir, k.launch, scratch, to);
      if (t.ms.size() > 1) t.ms.erase(t.ms.begin());
      tl::cpu::setTiming(r, t.ms);
      if (!opts.quiet) {
        out << "   tl-cpu: median " << tl::formatMs(r.medianMs) << ", min " << tl::formatMs(r.minMs) << " over "
            << r.runs << " runs on " << tl::plural(t.threads, "thread") << ": " << std::setprecision(3) << r.gbps
            << " GB/s of compulsory traffic";
        if (r.flops > 0) out << ", " << r.gflops << " GFLOP/s";
        out << "\n";
      }
    }
    if (o.unfused) runUnfused(k, target, jo, o, memory, r, out);
    if (!opts.outDir.empty()) tl::writeOutputs(k, memory, opts.outDir, out);
    if (opts.noCheck && !opts.quiet) tl::printOutputSummary(memory, out);
    const tl::Engine scalar = tl::scalarEngine();
    tl::Engine block{"tl-block", [](const tl::Function& fn, const tl::LaunchConfig& launch, tl::Memory& mem) {
                       tl::runBlock(fn, launch, mem);
                     }};
    const tl::Engine& against = o.checkStage == "block" ? block : scalar;
    tl::CheckReport report;
    tl::StageOptions checking = opts;  // the dots' FMAs get their tolerance (runtime/Memory.h markFmaDots)
    tl::markFmaDots(*k.ir, checking.intent.tolerance);
    tl::markReorderedSums(*k.ir, checking.intent.tolerance);
    const bool pass = tl::checkStageOutputs(k, memory, checking, scalar, &against, reference.get(), out, &report);
    opts.stageAgreementOnly += checking.stageAgreementOnly;
    for (const tl::CheckedOutput& c : report.outputs) {
      if (c.kind != tl::CheckAgainst::Stage) continue;
      r.reference = against.name;
      r.outputs.push_back({c.output, c.cmp.pass, c.cmp.maxAbsErr, c.cmp.maxRelErr, c.cmp.mismatches});
    }
    if (!opts.noCheck || !report.outputs.empty()) r.check = pass ? "PASS" : "FAIL";
    const std::string file = tl::cpu::writeResults(r, o.resultsDir);
    if (!opts.quiet) out << "   results: " << file << "\n";
    return pass;
  });
}
