// tl-sim: the simulator's front door. Compiles a kernel to thread IR, runs it warp by warp with
// every memory access recorded, and prints what a profiler would: theoretical and achieved
// occupancy, each source line's coalescing (sectors per ideal) and bank conflicts, DRAM
// traffic, the predicted time and its limiter, and what fusion saves. The full numbers go to a
// JSON report (docs/sim.md, "The report", is its schema).
//
//   tl-sim                                          # every kernel in kernels/
//   tl-sim kernels/softmax.tl --gpu a100 --report softmax.json --trace softmax.trace.json
//   tl-sim kernels/matmul.tl --sample-blocks 64     # run 64 blocks, scale the counts to the grid
//   tl-sim kernels/softmax.tl --measured bench/results/gpu/res/warm/softmax.json  # beside the H200
//   tl-sim kernels/softmax.tl --full --ncu          # every instruction, the Nsight Compute names
//
// The summary fits one screen (stages/sim/SimSummary.cpp); --full adds one row per memory
// instruction and the unfused kernels, --ncu the kernel totals under their Nsight Compute names;
// the JSON report (--report) always has everything.
//
// Registers per thread (for the occupancy): from ptxas when tl-sim was built with the PTX stage
// and ptxas is installed (--registers-from ptxas, the default then), from the driver when a
// results file is given (--measured), or the thread-IR estimate (labelled so); --registers N
// fixes them. A --measured file without a GPU run (tl-ptx on a machine without a driver) has no
// time: the summary says so instead of printing empty numbers.
//
// With several kernels, --report and --trace name one file per kernel: FILE's stem plus the
// kernel file's stem ("r.json" -> "r.softmax.json").
#include <CLI/CLI.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>

#include <nlohmann/json.hpp>

#include "runtime/Driver.h"
#include "ir/FileRead.h"
#include "sim/Gpu.h"
#include "sim/SimReport.h"
#if TL_SIM_HAVE_PTX
#include "ptx/Registers.h"
#endif

namespace {

// FILE for one kernel of a run over `kernelCount` kernels (see the header comment).
std::string outputPath(const std::string& file, const std::string& kernelPath, size_t kernelCount) {
  if (kernelCount == 1) return file;
  std::filesystem::path p(file);
  std::string stem = std::filesystem::path(kernelPath).stem().string();
  return (p.parent_path() / (p.stem().string() + "." + stem + p.extension().string())).string();
}

bool writeFile(const std::string& path, const std::string& text, std::ostream& out) {
  std::ofstream f(path);
  if (!(f << text)) {
    std::cerr << "tl-sim: error: cannot write '" << path << "'\n";
    return false;
  }
  out << "  wrote " << path << "\n";
  return true;
}

// Reads a tl-ptx results file into `out`; on failure says why and returns false.
bool readResults(const std::string& path, nlohmann::json& out) {
  tl::ReadFailure failure;
  std::optional<std::string> text = tl::tryReadFileBounded(path, tl::FileKind::Results, &failure);
  if (!text) {
    std::cerr << "tl-sim: error: --measured " << path << ": " << failure.reason << "\n";
    return false;
  }
  out = nlohmann::json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (out.is_discarded() || !out.is_object() || !out.contains("gpu")) {
    std::cerr << "tl-sim: error: --measured " << path << " is not a tl-ptx results file (a JSON object with \"gpu\")\n";
    return false;
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"tl-sim: simulate a kernel on a GPU model: coalescing, bank conflicts, caches, occupancy, time, fusion"};
  tl::StageOptions opts;
  // tl-sim checks no outputs and prints no IR: only the launch options (and --version, --quiet).
  tl::StageFeatures features;
  features.outputs = false;
  features.stageCheck = false;
  features.printIR = false;
  tl::addStageOptions(app, opts, features);
  tl::SimOptions sim;
  std::string reportFile, traceFile;
  bool noUnfused = false;
  app.add_option("--gpu", sim.gpu, "GPU description (sim/gpus/<key>.json)")
      ->check(CLI::IsMember(tl::listGpus()))
      ->capture_default_str();
  app.add_option("--report", reportFile, "Write the JSON report here")->type_name("FILE.json");
  app.add_option("--trace", traceFile, "Write the timeline as a Chrome trace (Perfetto, chrome://tracing)")
      ->type_name("FILE.json");
  app.add_option("--sample-blocks", sim.sampleBlocks,
                 "Run only the first N blocks and scale the counts to the grid (default: every block, up to " +
                     std::to_string(tl::kDefaultBlockBudget) + ")")
      ->check(CLI::PositiveNumber);
  int64_t traceMiB = tl::kDefaultTraceBytes >> 20;
  app.add_option("--trace-memory", traceMiB,
                 "Cap on the simulator's records (every warp instruction and memory access) in MiB; fewer blocks run "
                 "when they would not fit, and the report says so")
      ->check(CLI::Range(int64_t(1), int64_t(1) << 20))
      ->capture_default_str()
      ->type_name("MiB");
  app.add_flag("--no-unfused", noUnfused, "Skip the unfused comparison (faster)");
  app.add_flag("--wgmma", sim.wgmma,
               "Run f16 / bf16 / fp8 / tf32 dots that fit as warpgroup MMAs (wgmma.mma_async, sm_90a; tl-ptx --arch sm_90a)");
  app.add_flag("--keep-layouts", sim.keepLayouts,
               "Compile keeping the layouts the source implies (no automatic convert_layout through shared memory)");
  app.add_flag("--race-check,!--no-race-check", sim.detectRaces,
               "Check shared memory for races during the run (slower; default off)");
  tl::SummaryOptions summary;
  app.add_flag("--full", summary.full, "Also print every memory instruction (with its buffers) and the unfused kernels");
  app.add_flag("--ncu", summary.ncu, "Also print the kernel totals under their Nsight Compute metric names");
#if TL_SIM_HAVE_PTX
  std::string registersFrom = "ptxas";
#else
  std::string registersFrom = "estimate";
#endif
  int fixedRegisters = 0;
  std::string measuredPath;
  app.add_option("--registers-from", registersFrom,
                 "Registers per thread: ptxas (compile and assemble the kernel) or estimate (from the thread IR)")
      ->check(CLI::IsMember({"ptxas", "estimate"}))
      ->capture_default_str();
  app.add_option("--registers", fixedRegisters, "Registers per thread, given (overrides --registers-from)")
      ->check(CLI::Range(1, 255));
  app.add_option("--measured", measuredPath,
                 "A tl-ptx results file (input) of the same launch, or a folder of them (DIR/<kernel file stem>.json): "
                 "the measured time, registers and blocks/SM go beside the prediction")
      ->check(CLI::ExistingPath)
      ->type_name("PATH");
  if (int rc = tl::parseCommandLine(app, argc, argv); rc >= 0) return rc;
  sim.maxTraceBytes = traceMiB << 20;
  const bool measuredDir = !measuredPath.empty() && std::filesystem::is_directory(measuredPath);
  nlohmann::json measured;  // --measured FILE: read once, before any kernel runs
  if (!measuredPath.empty() && !measuredDir && !readResults(measuredPath, measured)) return 1;
  try {  // the GPU whose limits (shared memory per block) the thread pipeline checks
    tl::setTargetGpu(tl::loadGpu(sim.gpu));
  } catch (const std::exception& e) {
    std::cerr << "tl-sim: error: --gpu " << sim.gpu << ": " << e.what() << "\n";
    return 1;
  }
  if (sim.wgmma && !(tl::targetGpu().wgmmaCyclesF16 > 0)) {
    std::cerr << "tl-sim: error: --wgmma: " << sim.gpu << " (" << tl::targetGpu().name
              << ") has no warpgroup MMAs (wgmmaCyclesF16 is 0 in its GPU file; wgmma is Hopper's, sm_90a)\n";
    return 1;
  }
  if (fixedRegisters > 0) {
    sim.registers = [fixedRegisters](const tl::Function&) {
      return tl::compiledRegisters(fixedRegisters, "given (--registers)");
    };
  } else if (registersFrom == "ptxas") {
#if TL_SIM_HAVE_PTX
    sim.registers = tl::ptxasRegisterSource(tl::loadGpu(sim.gpu).arch);
#else
    std::cerr << "tl-sim: error: --registers-from ptxas needs the PTX stage (built with LLVM 19)\n";
    return 1;
#endif
  }
  sim.numWarps = opts.numWarps;
  sim.unfused = !noUnfused;
  size_t kernelCount = opts.kernels.empty() ? tl::defaultKernelPaths().size() : opts.kernels.size();

  return tl::runStage("tl-sim", opts, [&](tl::CompiledKernel& k, std::ostream& out) {
    auto start = std::chrono::steady_clock::now();
    tl::SimOptions o = sim;
    o.sourcePath = k.path;
    o.sourceText = k.parsed->file->text();
    nlohmann::json fromDir;
    if (measuredDir) {
      const auto file = std::filesystem::path(measuredPath) / (std::filesystem::path(k.path).stem().string() + ".json");
      if (!std::filesystem::is_regular_file(file))
        out << "  measured: none: no " << file.string() << " in --measured " << measuredPath << "\n";
      else if (!readResults(file.string(), fromDir))
        return false;
      else
        o.measured = &fromDir;
    } else if (!measuredPath.empty()) {
      o.measured = &measured;
    }
    std::string why;
    if (o.measured && opts.quiet && !tl::measuredHasTiming(*o.measured, &why)) out << "  measured: none: " << why << "\n";
    tl::SimReport r = tl::simulateKernel(*k.ir, k.launch, o);
    if (!opts.quiet)
      out << tl::formatSimReport(r.json, summary) << "  simulated in " << tl::formatMs(tl::msSince(start)) << "\n";
    bool ok = true;
    if (!reportFile.empty()) ok &= writeFile(outputPath(reportFile, k.path, kernelCount), r.json.dump(1) + "\n", out);
    if (!traceFile.empty()) ok &= writeFile(outputPath(traceFile, k.path, kernelCount), r.chromeTrace + "\n", out);
    return ok;
  });
}
