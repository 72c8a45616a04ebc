// Helpers shared by the layout tests (tests/thread/layout_*.cpp): compile a kernel of kernels/
// with its default launch (plus overrides), run the block pipeline, then the layout pipeline.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "ir/IR.h"
#include "ir/Pass.h"
#include "runtime/Driver.h"
#include "thread/Layouts.h"

namespace tl::layout_test {

inline std::string kernelPath(const std::string& name) { return std::string(TL_SOURCE_DIR) + "/kernels/" + name + ".tl"; }

// The kernel's block IR after the block pipeline (nullptr + test failure on errors); the
// launch's hints go to `hints` when given.
inline std::unique_ptr<CompiledKernel> compileBlock(const std::string& name, const std::vector<std::string>& sets = {}) {
  std::vector<LaunchOverride> overrides;
  for (const auto& s : sets) {
    LaunchOverride o;
    EXPECT_TRUE(parseOverride(s, o)) << s;
    overrides.push_back(o);
  }
  std::ostringstream err;
  auto k = compileKernelFile(kernelPath(name), overrides, err);
  EXPECT_TRUE(k) << err.str();
  if (!k) return nullptr;
  blockPipeline().run(*k->ir);
  return k;
}

// Compiles and runs the layout pipeline at `numWarps` (0: the launch's), keeping the source's
// layouts when `keepLayouts`.
inline std::unique_ptr<CompiledKernel> compileWithLayouts(const std::string& name, int numWarps = 0,
                                                          const std::vector<std::string>& sets = {},
                                                          bool keepLayouts = false) {
  auto k = compileBlock(name, sets);
  if (!k) return nullptr;
  int warps = numWarps ? numWarps : k->launch.numWarps;
  layoutPipeline(warps, paramHintsFromLaunch(k->launch), keepLayouts).run(*k->ir);
  return k;
}

inline std::vector<std::string> allKernels() {
  return {"bias_gelu", "layernorm", "matmul", "rmsnorm", "row_sum", "softmax", "softmax_online",
          "strided_copy", "transpose", "transpose_tiled", "vector_add"};
}

// Every op of a kind, in program order.
inline std::vector<Op*> opsOfKind(const Function& fn, OpKind kind) {
  std::vector<Op*> out;
  walk(fn.body, [&](Op& op) {
    if (op.kind == kind) out.push_back(&op);
  });
  return out;
}

// The element count of a shape, and the row-major index of a coordinate in it.
inline int64_t numel(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

inline int64_t flat(const Shape& s, const std::vector<int64_t>& c) {
  int64_t i = 0;
  for (size_t d = 0; d < s.size(); ++d) i = i * s[d] + c[d];
  return i;
}

}  // namespace tl::layout_test
