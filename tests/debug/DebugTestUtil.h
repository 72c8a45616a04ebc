// Helpers for the debugging tests (tests/debug/*_test.cpp): a kernel of tests/debug/kernels/
// compiled by the front end, run on tl-scalar, tl-block (after the block pipeline) or the thread
// executor (after the thread pipeline) with device_print going to a string; and the stage tools
// run as a user runs them (exit status and everything they wrote).
#pragma once

#include <gtest/gtest.h>

#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <unistd.h>
#include <vector>

#include "block/BlockInterpreter.h"
#include "ir/Pass.h"
#include "ir/Printer.h"
#include "runtime/DevicePrint.h"
#include "runtime/Driver.h"
#include "scalar/ScalarInterpreter.h"
#include "sim/ThreadExecutor.h"
#include "thread/Pipeline.h"

namespace tl::debugtest {

inline std::string kernelPath(const std::string& stem) {
  return std::string(TL_SOURCE_DIR) + "/tests/debug/kernels/" + stem + ".tl";
}

inline std::unique_ptr<CompiledKernel> compile(const std::string& stem, const std::vector<LaunchOverride>& overrides = {}) {
  std::ostringstream err;
  auto k = compileKernelFile(kernelPath(stem), overrides, err);
  EXPECT_TRUE(k) << err.str();
  return k;
}

enum class Stage { Scalar, Block, Thread };

// What one run printed (device_print's lines, the cap's note), with `maxLines`; the run's
// RuntimeError propagates.
inline std::string runPrinting(const CompiledKernel& k, Stage stage, int numWarps = 1,
                               int64_t maxLines = kDefaultMaxPrintLines) {
  std::ostringstream os;
  DeviceOutput print(&os, maxLines);
  Memory m = Memory::fromLaunch(k.launch);
  if (stage == Stage::Scalar) {
    runScalar(*k.ir, k.launch, m, &print);
  } else if (stage == Stage::Block) {
    auto opt = cloneFunction(*k.ir);
    blockPipeline().run(*opt);
    runBlock(*opt, k.launch, m, &print);
  } else {
    ThreadCompilation tc = compileToThreadIR(*k.ir, k.launch, numWarps);
    ExecOptions eo;
    eo.print = &print;
    runThreadIR(*tc.threadIR, k.launch, m, eo);
  }
  print.finish();
  return os.str();
}

inline std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

struct ToolRun {
  int status = -1;
  std::string out;  // stdout
  std::string err;  // stderr
};

// Runs build/stages/<tool> with `args` from the source tree.
inline ToolRun runTool(const std::string& tool, const std::string& args) {
  namespace fs = std::filesystem;
  const std::string base = (fs::temp_directory_path() / ("tl-debug-" + std::to_string(::getpid()))).string();
  std::string cmd = "cd " + std::string(TL_SOURCE_DIR) + " && " + std::string(TL_BINARY_DIR) + "/stages/" + tool +
                    " " + args + " > " + base + ".out 2> " + base + ".err";
  ToolRun r;
  int st = std::system(cmd.c_str());
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  auto slurp = [](const std::string& p) {
    std::ifstream f(p);
    return std::string(std::istreambuf_iterator<char>(f), {});
  };
  r.out = slurp(base + ".out");
  r.err = slurp(base + ".err");
  fs::remove(base + ".out");
  fs::remove(base + ".err");
  return r;
}

}  // namespace tl::debugtest
