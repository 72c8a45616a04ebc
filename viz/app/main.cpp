// tl-viz: the visualizer's command line.
//
//   tl-viz                                   # kernels/softmax.tl in a window
//   tl-viz kernels/matmul.tl --set M=256 --num-warps 8 --gpu a100
//   tl-viz --screenshot out.png --panel memory            # one panel, offscreen, then exit
//   tl-viz --screenshot docs/img/viz --panel all          # every panel: docs/img/viz/<key>.png
//   tl-viz --frames 300                                   # measure frames per second
//
// Headless (CI, these machines): xvfb-run -a -s "-screen 0 1600x1000x24" tl-viz ...
#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstdlib>
#include <iostream>

#include "viz/app/App.h"

int main(int argc, char** argv) {
  tl::viz::AppOptions o;
  bool noTimings = false;
  CLI::App cli{"tl-viz: the stages, memory transactions, occupancy, latency hiding and fusion of a tilelab kernel, "
               "beside measured GPU timings"};
  cli.add_option("kernel", o.kernelPath, "the .tl kernel file")->capture_default_str();
  cli.add_option("--set", o.sets, "override a @launch keyword: NAME=EXPR (repeatable)");
  cli.add_option("--num-warps", o.numWarps, "warps per block (default: the launch's)")->check(CLI::Range(0, 32));
  cli.add_option("--gpu", o.gpu, "the GPU simulated (sim/gpus/<key>.json)")->capture_default_str();
  cli.add_option("--results", o.resultsDir, "measured results folder (default: bench/results/gpu next to kernels/)");
  cli.add_flag("--no-timings", noTimings, "do not simulate the measured shapes of compare.json (faster)");
  cli.add_option("--sample-blocks", o.sampleBlocks, "blocks the simulator runs (default: its budget)")->check(CLI::Range(0, 1 << 30));
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
  CLI11_PARSE(cli, argc, argv);
  o.predictTimings = !noTimings;
  int rc = tl::viz::runApp(o);
  // The Session's worker may still be finishing a simulation step (App abandons it at exit,
  // Session::abandonOnDestroy): end the process without running static destructors under it.
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);
  std::_Exit(rc);
}
