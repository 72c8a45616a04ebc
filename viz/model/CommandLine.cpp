// tl-viz's options (see CommandLine.h), with CLI11 as every tilelab tool.
#include "viz/model/CommandLine.h"

#include <CLI/CLI.hpp>
#include <filesystem>
#include <ostream>

#include "runtime/Budget.h"
#include "runtime/Driver.h"
#include "runtime/Hash.h"

namespace tl::viz {

std::string defaultKernelPath() {
  namespace fs = std::filesystem;
  std::error_code ec;
  for (fs::path p : {fs::path("kernels") / "softmax.tl", fs::path(TL_SOURCE_DIR) / "kernels" / "softmax.tl"})
    if (fs::is_regular_file(p, ec)) return p.string();
  return "kernels/softmax.tl";  // found nowhere: the error then names the usual place
}

std::optional<int> parseCommandLine(int argc, const char* const* argv, VizOptions& o, std::ostream& out,
                                    std::ostream& err) {
  bool noTimings = false;
  int64_t instr = -1, block = -1, warp = -1;
  CLI::App cli{"tl-viz: the stages, memory transactions, occupancy, latency hiding and fusion of a tilelab kernel, "
               "beside measured GPU timings",
               "tl-viz"};
  cli.set_version_flag("--version", releaseVersion());
  cli.add_option("kernel", o.kernelPath, "the .tl kernel file (default: kernels/softmax.tl of the source tree)");
  // Repeatable options take one value per occurrence, so `--set N=30 k.tl` never eats the path.
  cli.add_option("--set", o.sets, "override a @launch keyword: NAME=EXPR; repeatable")
      ->type_name("NAME=EXPR")
      ->allow_extra_args(false);
  cli.add_option("--input", o.inputs, "read a pointer parameter's buffer from a .npy file: PARAM=FILE; repeatable")
      ->type_name("PARAM=FILE")
      ->allow_extra_args(false);
  cli.add_option("--grid", o.grid, "override the grid: an expression such as '(64,)' or 'cdiv(N, 128)'");
  cli.add_option("--num-warps", o.numWarps, "warps per block (default: the launch's)")->check(CLI::Range(1, 32));
  cli.add_flag("--keep-layouts", o.keepLayouts,
               "keep the layouts the source implies: no automatic convert_layout through shared memory");
  cli.add_flag("--wgmma", o.wgmma, "f16 / bf16 / fp8 / tf32 dots that fit as warpgroup MMAs (wgmma.mma_async, sm_90a), as tl-thread --wgmma");
  cli.add_option("--gpu", o.gpu, "the GPU simulated (sim/gpus/<key>.json)")->capture_default_str();
  cli.add_option("--measured", o.measuredDir,
                 "a folder of tl-ptx results files measured on a GPU, paired with this source by its SHA-256 and "
                 "the launch (default: bench/results/gpu next to kernels/)")
      ->type_name("DIR")
      ->check(CLI::ExistingDirectory);
  cli.add_flag("--no-timings", noTimings, "do not simulate the measured shapes of the comparison rows (faster)");
  cli.add_option("--sample-blocks", o.sampleBlocks, "blocks the simulator runs (default: its budget)")
      ->check(CLI::Range(int64_t(0), int64_t(1) << 30));
  addWorkBudgetOptions(cli, /*progressFlag=*/false);  // the window shows its own progress
  cli.add_option("--instr", instr, "the memory instruction (its thread-IR id, as the Memory panel lists it) to show")
      ->type_name("ID")
      ->check(CLI::NonNegativeNumber);
  cli.add_option("--value", o.selection.value, "the value of the layout snapshot the Threads panel shows (%x or x)")
      ->type_name("NAME");
  cli.add_option("--block", block, "the block the Memory and Threads panels show")->type_name("N")->check(CLI::NonNegativeNumber);
  cli.add_option("--warp", warp, "the warp the Memory and Threads panels show")->type_name("N")->check(CLI::NonNegativeNumber);
  cli.add_option("--screenshot", o.screenshot,
                 "render offscreen once simulated, write a PNG and exit (with --panel all: a directory, or a "
                 "pattern with {key})");
  cli.add_option("--panel", o.panel, "with --screenshot or --frames: stages, threads, memory, occupancy, latency, "
                                     "fusion, timings, or all (screenshots)");
  cli.add_option("--width", o.width, "window width in pixels")->capture_default_str()->check(CLI::Range(200, 16384));
  cli.add_option("--height", o.height, "window height in pixels")->capture_default_str()->check(CLI::Range(200, 16384));
  cli.add_option("--frames", o.frames, "render N frames and print the median frames per second")->check(CLI::Range(0, 1000000));
  cli.add_option("--line", o.line, "select this source line at start (highlighted in every stage)")->check(CLI::Range(0, 1000000));
  cli.add_option("--timeout", o.timeoutSeconds, "seconds --screenshot and --frames wait for the simulation")
      ->capture_default_str()
      ->check(CLI::Range(1.0, 86400.0));
  try {
    cli.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int code = cli.exit(e, out, err);
    return code == 0 ? 0 : 1;
  }
  o.predictTimings = !noTimings;
  workLimits().progress = false;  // a long simulation shows in the window, not on stderr
  if (o.kernelPath.empty()) o.kernelPath = defaultKernelPath();
  if (instr >= 0) o.selection.instr = instr;
  if (block >= 0) o.selection.block = block;
  if (warp >= 0) o.selection.warp = warp;
  return std::nullopt;
}

}  // namespace tl::viz
