// What every stage executable shares: the command line, finding kernels, the front end run,
// the launch, located error reporting, output summaries and .npy output.
//
// A stage's main() fills a StageOptions with addStageOptions(), then calls runStage() with a
// function that does the stage's own work on one compiled kernel:
//
//   tl-scalar kernels/softmax.tl --set N=4096 --out-dir out/
//     -> for each kernel: parse, evaluate @launch with the overrides, compile to block IR
//        (errors: file:line:col with a caret, exit 1), then the stage callback.
//
// With no kernel paths, runStage() runs every kernels/*.tl (the stage's "demo" mode).
#pragma once

#include <chrono>
#include <functional>
#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

#include "frontend/Frontend.h"
#include "ir/IR.h"
#include "runtime/Checks.h"
#include "runtime/DevicePrint.h"
#include "runtime/Memory.h"

namespace CLI {
class App;
}

namespace tl {

struct StageOptions {
  std::vector<std::string> kernels;    // .tl paths; empty: every kernel in kernels/
  std::vector<std::string> sets;       // --set NAME=EXPR
  std::string kernel;                  // --kernel NAME: the function to run (default: the one with @launch)
  std::vector<std::string> inputs;     // --input PARAM=FILE.npy (sugar for --set PARAM=file("FILE"))
  std::string grid;                    // --grid EXPR (sugar for --set grid=EXPR)
  int numWarps = 0;                    // --num-warps N (0: the launch's)
  std::string outDir;                  // --out-dir DIR: write every output as DIR/<kernel>.<param>.npy
  bool printIR = false;                // --print-ir
  bool quiet = false;                  // --quiet: only PASS/FAIL and errors
  bool noCheck = false;                // --no-check: skip the stage-agreement check
  int64_t maxPrintLines = kDefaultMaxPrintLines;  // --max-print-lines N: device_print's cap
  IntentOptions intent;                // --expect, --reference, --atol / --rtol
  // Counted by checkStageOutputs: runs whose only check was stage agreement (runStage's closing
  // note says what such a PASS means).
  mutable int stageAgreementOnly = 0;
};

// Which groups of common options a tool has (a tool lists only options that do something).
struct StageFeatures {
  bool outputs = true;  // the tool runs the kernel and has outputs: --out-dir and the checks
                        // (--expect, --reference, --atol, --rtol)
  bool stageCheck = true;  // it checks itself against a reference stage: --no-check
  bool printIR = true;     // --print-ir
};

// Parses the command line. A usage error (an unknown option, a missing value, a value out of
// range) prints CLI11's message and returns 1, the exit status of every bad input; --help and
// --version return 0; -1 means go on:  if (int rc = parseCommandLine(app, argc, argv); rc >= 0) return rc;
int parseCommandLine(CLI::App& app, int argc, char** argv);

// Registers the options every stage has (and --version), the work budget's among them.
void addStageOptions(CLI::App& app, StageOptions& opts, StageFeatures features = {});

// --max-steps N and, with `progressFlag`, --no-progress (runtime/Budget.h's workLimits()); also
// for a tool that runs kernels on the CPU without the other stage options (tl-viz).
void addWorkBudgetOptions(CLI::App& app, bool progressFlag = true);

// One kernel after the front end: what a stage callback works on.
struct CompiledKernel {
  std::string path;
  std::unique_ptr<ParsedKernel> parsed;
  LaunchConfig launch;
  Specialization spec;
  std::unique_ptr<Function> ir;  // block IR straight from the front end (no passes yet)
  std::vector<std::string> staticPrints;  // tl.static_print's lines (runStage prints them)
  double compileMs = 0;          // parse + launch + IR generation
};

// The overrides a StageOptions asks for, in the order they apply.
std::vector<LaunchOverride> overridesFrom(const StageOptions& opts);

// Parses, evaluates the launch and compiles one kernel file (its function `kernelName`, or the
// default entry: ParsedKernel's rule). On errors prints them (located,
// with the source line and a caret) to `err` and returns nullptr.
std::unique_ptr<CompiledKernel> compileKernelFile(const std::string& path,
                                                  const std::vector<LaunchOverride>& overrides,
                                                  std::ostream& err, const std::string& kernelName = "");

// Every kernels/*.tl, sorted (looks in ./kernels, then the source tree's kernels/).
std::vector<std::string> defaultKernelPaths();

// Runs `stage` on each kernel of `opts` (or every default kernel). Returns the process exit
// code: 0 when every kernel compiled, ran and passed; 1 otherwise. RuntimeErrors thrown by the
// stage are rendered at their source line.
using StageFn = std::function<bool(CompiledKernel&, std::ostream& out)>;
int runStage(const std::string& stageName, const StageOptions& opts, const StageFn& stage);

// device_print's destination for one stage run: `out`, capped at --max-print-lines. Call
// finish() on it after the run (it says how many lines the cap dropped).
DeviceOutput deviceOutput(const StageOptions& opts, std::ostream& out);

// "softmax_kernel  grid=(256,1,1)  num_warps=4  M=256 N=781 ..."
std::string describeLaunch(const CompiledKernel& k);
std::string describeLaunch(const std::string& kernel, const LaunchConfig& launch);
// One line per output buffer: name, shape, dtype, min/max/mean and a checksum.
void printOutputSummary(const Memory& memory, std::ostream& out);
// Writes every output buffer as DIR/<kernel>.<param>.npy (creating DIR).
void writeOutputs(const CompiledKernel& k, const Memory& memory, const std::string& dir, std::ostream& out);
// Compares every output of `got` with `reference` (stage agreement: `against` names the engine),
// one PASS/FAIL line each; true when all pass.
bool compareOutputs(const Memory& reference, const Memory& got, const std::string& against,
                    std::ostream& out, const ToleranceOverride& tol = {});
// The stage's checks (Checks.h, runChecks) with the options of the command line: the
// --expect files, the --reference kernel on tl-scalar (`scalar`), and, unless --no-check or
// `stage` is null, stage agreement. Returns whether every comparison passed; `report` gets the data.
bool checkStageOutputs(const CompiledKernel& k, const Memory& got, const StageOptions& opts, const Engine& scalar,
                       const Engine* stage, const Function* stageIR, std::ostream& out, CheckReport* report = nullptr);
// "1 kernel", "3 kernels".
std::string plural(int64_t n, const std::string& noun);
// Renders a RuntimeError at its location in the kernel's source.
std::string renderRuntimeError(const CompiledKernel& k, const RuntimeError& e);

double msSince(const std::chrono::steady_clock::time_point& start);
// Median of the samples (the mean of the two middle ones for an even count); 0 when empty.
double medianOf(std::vector<double> samples);
// "83.5 ms", "0.31 ms": three significant digits.
std::string formatMs(double ms);

}  // namespace tl
