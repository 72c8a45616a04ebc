// Helpers for the rank-3 tests (tests/thread/rank3_*_test.cpp): a kernel of tests/thread/kernels/
// at one size, run on ONE engine — tl-scalar (the front end's IR), tl-block (after the block
// pipeline) or the thread executor (the real thread pipeline at a num_warps, with or without
// --keep-layouts, shared-memory race detection on) — and every output compared with a C++
// reference computed from the run's own input buffers.
//
//   Outputs want = reference(inputs);                // name -> expected elements (row-major)
//   runOn(Engine::Thread, "rank3_shape", overrides, 4, false, refFn, tolerance);
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "block/BlockInterpreter.h"
#include "ir/Pass.h"
#include "runtime/Driver.h"
#include "scalar/ScalarInterpreter.h"
#include "sim/ThreadExecutor.h"
#include "thread/Pipeline.h"

namespace tl::rank3 {

enum class Engine { Scalar, Block, Thread };

using Outputs = std::map<std::string, std::vector<double>>;
// The expected outputs, from the launch's (filled) input buffers and its sizes.
using Reference = std::function<Outputs(const Memory& inputs, const LaunchConfig& launch)>;

// A stem of tests/thread/kernels/, or a path from the repository root ("kernels/triton/x.tl").
inline std::string kernelFile(const std::string& stem) {
  if (stem.find('/') != std::string::npos) return std::string(TL_SOURCE_DIR) + "/" + stem;
  return std::string(TL_SOURCE_DIR) + "/tests/thread/kernels/" + stem + ".tl";
}

// An integer of the launch (a size or a constexpr); fails the test when it is missing.
inline int64_t launchInt(const LaunchConfig& launch, const std::string& name) {
  if (auto it = launch.constexprs.find(name); it != launch.constexprs.end()) return it->second;
  if (auto it = launch.scalars.find(name); it != launch.scalars.end() && isInt(it->second.dtype)) return it->second.i;
  ADD_FAILURE() << "launch has no integer " << name;
  return 1;
}

// Runs `stem` on `engine` and compares every output with `ref` within atol + rtol * |want|.
inline void runOn(Engine engine, const std::string& stem, const std::vector<LaunchOverride>& overrides, int numWarps,
                  bool keepLayouts, const Reference& ref, double atol, double rtol) {
  std::ostringstream err;
  auto k = compileKernelFile(kernelFile(stem), overrides, err);
  ASSERT_TRUE(k) << err.str();
  Memory m = Memory::fromLaunch(k->launch);
  const Outputs want = ref(m, k->launch);
  std::string what;
  try {
    if (engine == Engine::Scalar) {
      what = "tl-scalar";
      runScalar(*k->ir, k->launch, m);
    } else if (engine == Engine::Block) {
      what = "tl-block";
      auto opt = cloneFunction(*k->ir);
      blockPipeline().run(*opt);
      runBlock(*opt, k->launch, m);
    } else {
      what = "executor, num_warps " + std::to_string(numWarps) + (keepLayouts ? ", keep-layouts" : "");
      ThreadCompileOptions o;
      o.numWarps = numWarps;
      o.keepLayouts = keepLayouts;
      ThreadCompilation tc = compileToThreadIR(*k->ir, k->launch, o);
      runThreadIR(*tc.threadIR, k->launch, m);
    }
  } catch (const std::exception& e) {
    FAIL() << stem << " on " << what << ": " << e.what();
  }
  for (const auto& [name, values] : want) {
    const Buffer* b = m.find(name);
    ASSERT_TRUE(b) << name;
    ASSERT_EQ(b->numel(), static_cast<int64_t>(values.size())) << name;
    int64_t bad = 0, first = -1;
    for (size_t i = 0; i < values.size(); ++i) {
      const double got = isFloat(b->dtype) ? b->getF(static_cast<int64_t>(i)) : double(b->getI(static_cast<int64_t>(i)));
      if (!(std::fabs(got - values[i]) <= atol + rtol * std::fabs(values[i]))) {
        if (first < 0) first = static_cast<int64_t>(i);
        ++bad;
      }
    }
    EXPECT_EQ(bad, 0) << stem << " on " << what << ": " << name << " has " << bad << " of " << values.size()
                      << " elements wrong; first at " << first << ": expected " << (first >= 0 ? values[first] : 0) << ", got "
                      << (first >= 0 ? (isFloat(b->dtype) ? b->getF(first) : double(b->getI(first))) : 0);
  }
}

}  // namespace tl::rank3
