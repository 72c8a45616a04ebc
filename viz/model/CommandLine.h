// tl-viz's command line as data: the options, their checks and the default kernel, without a
// window (so tests/viz checks them). viz/app/main.cpp parses with parseCommandLine and hands the
// VizOptions to the app.
//
//   tl-viz                                   # kernels/softmax.tl, found from any directory
//   tl-viz kernels/matmul.tl --set M=256 --num-warps 8 --gpu a100
//   tl-viz k.tl --grid '(64,)' --input x_ptr=x.npy --measured results/   # as the stage tools
//   tl-viz --screenshot out.png --panel memory --instr 57 --warp 1        # one panel, one view
//
// Expects: any argv.
// Guarantees: repeatable options (--set, --input) take one value per occurrence and never eat
// the kernel path (`--set N=30 k.tl` opens k.tl); option names and meanings are the project's
// (docs: COMMON option names): --set, --input, --grid, --num-warps, --measured (an INPUT folder
// of tl-ptx results files), --version. parseCommandLine never throws: bad options print CLI11's
// message and give exit code 1 (or 0 for --help / --version).
#pragma once

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "viz/model/Selection.h"

namespace tl::viz {

struct VizOptions {
  std::string kernelPath;          // the .tl file (default: defaultKernelPath())
  std::vector<std::string> sets;   // --set NAME=EXPR
  std::vector<std::string> inputs; // --input PARAM=FILE.npy
  std::string grid;                // --grid EXPR
  int numWarps = 0;                // --num-warps (0: the launch's)
  bool keepLayouts = false;        // --keep-layouts: no automatic convert_layout (as tl-thread)
  bool wgmma = false;              // --wgmma: dots as warpgroup MMAs where they fit (as tl-thread)
  std::string gpu = "h200";        // --gpu
  std::string measuredDir;         // --measured DIR ("": bench/results/gpu next to kernels/)
  bool predictTimings = true;      // --no-timings turns it off
  int64_t sampleBlocks = 0;        // --sample-blocks
  SelectionRequest selection;      // --instr, --value, --block, --warp (checked once simulated)
  std::string screenshot;          // --screenshot FILE.png (or a directory / pattern with --panel all)
  std::string panel;               // --panel NAME|all ("": the whole app)
  int width = 1600, height = 1000; // window (and screenshot) size in pixels
  int frames = 0;                  // --frames N: measure frames per second
  int line = 0;                    // --line: the source line selected at start (Stages highlights it)
  double timeoutSeconds = 600;     // --timeout: how long --screenshot / --frames wait for the session
};

// The kernel tl-viz opens without a path: kernels/softmax.tl in the working directory, else in
// the source tree (TL_SOURCE_DIR), as the stage tools find kernels/ (runtime/Driver.h).
std::string defaultKernelPath();

// Parses argv into `options`. Returns std::nullopt to go on, or the exit code to end with
// (after printing help, the version or the error to `out` / `err`).
std::optional<int> parseCommandLine(int argc, const char* const* argv, VizOptions& options, std::ostream& out,
                                    std::ostream& err);

}  // namespace tl::viz
