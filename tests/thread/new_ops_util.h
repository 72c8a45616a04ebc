// Helpers for the tests of issue 12's new ops (tests/thread/new_ops_*_test.cpp): a kernel of
// tests/thread/kernels/ compiled by the front end and run on every CPU engine — tl-scalar (the
// front end's IR), tl-block (after the block pipeline) and the thread executor after the real
// thread pipeline at num_warps 1, 2, 4 and 8 — each on a fresh Memory that `prepare` may fill
// with chosen inputs; `check` then compares that engine's outputs with a C++ reference.
//
//   forEachEngine("new_intops", {}, prepare, [&](const Memory& m, const std::string& engine) { ... });
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "block/BlockInterpreter.h"
#include "ir/Pass.h"
#include "runtime/Budget.h"
#include "runtime/Driver.h"
#include "scalar/ScalarInterpreter.h"
#include "sim/ThreadExecutor.h"
#include "thread/Pipeline.h"

namespace tl::newops {

inline std::string newOpsKernel(const std::string& stem) {
  return std::string(TL_SOURCE_DIR) + "/tests/thread/kernels/" + stem + ".tl";
}

inline std::unique_ptr<CompiledKernel> compileNewOpsKernel(const std::string& stem,
                                                           const std::vector<LaunchOverride>& overrides = {}) {
  std::ostringstream err;
  auto k = compileKernelFile(newOpsKernel(stem), overrides, err);
  EXPECT_TRUE(k) << err.str();
  return k;
}

using Prepare = std::function<void(Memory&)>;
using Check = std::function<void(const Memory&, const std::string& engine)>;

// Runs the kernel on every CPU engine; returns false (after failing the test) when one threw.
inline bool forEachEngine(const std::string& stem, const std::vector<LaunchOverride>& overrides, const Prepare& prepare,
                          const Check& check, std::vector<int> warps = {1, 2, 4, 8}) {
  auto k = compileNewOpsKernel(stem, overrides);
  if (!k) return false;
  auto fresh = [&] {
    Memory m = Memory::fromLaunch(k->launch);
    if (prepare) prepare(m);
    return m;
  };
  try {
    Memory s = fresh();
    runScalar(*k->ir, k->launch, s);
    check(s, "tl-scalar");
    auto opt = cloneFunction(*k->ir);
    blockPipeline().run(*opt);
    Memory b = fresh();
    runBlock(*opt, k->launch, b);
    check(b, "tl-block");
    for (int nw : warps) {
      ThreadCompilation tc = compileToThreadIR(*k->ir, k->launch, nw);
      Memory t = fresh();
      runThreadIR(*tc.threadIR, k->launch, t);
      check(t, "executor, num_warps " + std::to_string(nw));
    }
  } catch (const std::exception& e) {
    ADD_FAILURE() << stem << ": " << e.what();
    return false;
  }
  return true;
}

}  // namespace tl::newops
