// The pipeline-loads pass (ir/PipelineLoads.cpp) on every kernel in kernels/*.tl, at its default
// and its ragged size: every `for` of the front end's IR is given num_stages = 3 (as tl.range's
// hint would), then tl-block on the block pipeline's output and the thread executor at 4 warps
// must agree with tl-scalar on the unpipelined IR. A loop the pass cannot pipeline (a store in
// its body) stays as it was and must agree too; the last test checks that the pass did move
// loads in the kernels whose loops only read.
#include <gtest/gtest.h>

#include <tuple>

#include "Harness.h"
#include "ir/Pass.h"
#include "sim/ThreadExecutor.h"
#include "thread/Pipeline.h"

namespace tl::e2e {
namespace {

using Param = std::tuple<KernelCase, Size>;

std::string paramName(const testing::TestParamInfo<Param>& info) {
  return std::get<0>(info.param).stem + "_" + sizeName(std::get<1>(info.param));
}

std::unique_ptr<Function> withStages(const Function& fn, int64_t stages) {
  std::unique_ptr<Function> copy = cloneFunction(fn);
  walk(copy->body, [&](Op& op) {
    if (op.kind == OpKind::For) op.setAttr("num_stages", Attr(stages));
  });
  return copy;
}

// Loads the pass moved in `fn` (after the block pipeline).
int64_t pipelinedLoads(const Function& fn) {
  int64_t n = 0;
  walk(fn.body, [&](Op& op) {
    if (op.kind == OpKind::For && op.hasAttr("pipelined_loads")) n += op.intAttr("pipelined_loads");
  });
  return n;
}

class Pipelined : public testing::TestWithParam<Param> {};

TEST_P(Pipelined, BlockAndThreadMatchScalar) {
  const auto& [kernel, size] = GetParam();
  const ScalarRun& ref = scalarRun(kernel, size);
  ASSERT_TRUE(ref.error.empty()) << ref.error;
  std::unique_ptr<Function> staged = withStages(*ref.compiled.fn, 3);

  std::string error;
  std::unique_ptr<Function> opt = optimizedCopy(*staged, error);
  ASSERT_NE(opt, nullptr) << kernel.stem << ": " << error;
  Memory blockMemory = Memory::fromLaunch(ref.compiled.launch);
  ASSERT_TRUE(runBlockChecked(ref.compiled, *opt, blockMemory, error)) << error;
  expectOutputsMatch(ref, blockMemory, "tl-block, pipelined");

  ThreadCompilation tc;
  try {
    tc = compileToThreadIR(*staged, ref.compiled.launch, ThreadCompileOptions{4, false});
  } catch (const IRError& e) {
    FAIL() << kernel.stem << ": internal compiler error at " << e.loc.line << ":" << e.loc.col << ": " << e.what();
  }
  EXPECT_EQ(pipelinedLoads(*tc.blockIR), pipelinedLoads(*opt));
  Memory memory = Memory::fromLaunch(ref.compiled.launch);
  try {
    runThreadIR(*tc.threadIR, ref.compiled.launch, memory);
  } catch (const RuntimeError& e) {
    FAIL() << renderDiagnostic(ref.compiled.file.get(), Severity::Error, e.loc, e.what());
  }
  expectOutputsMatch(ref, memory, "tl-thread, pipelined, 4 warps");
}

INSTANTIATE_TEST_SUITE_P(Kernels, Pipelined,
                         testing::Combine(testing::ValuesIn(discoverKernels()),
                                          testing::Values(Size::Default, Size::Ragged)),
                         paramName);

// The kernels with a loop that only reads get loads moved (tests/passes/PipelineLoadsTest.cpp
// has the loops the pass must leave alone).
TEST(Pipelined, MovesTheLoadsOfReadOnlyLoops) {
  for (const std::string stem : {"matmul", "matmul_tc", "softmax_online", "layernorm", "row_sum"}) {
    KernelCase k{stem, std::string(TL_SOURCE_DIR) + "/kernels/" + stem + ".tl"};
    Compiled compiled;
    std::string error;
    ASSERT_TRUE(compileCase(k, Size::Default, compiled, error)) << error;
    std::unique_ptr<Function> opt = optimizedCopy(*withStages(*compiled.fn, 2), error);
    ASSERT_NE(opt, nullptr) << error;
    EXPECT_GT(pipelinedLoads(*opt), 0) << stem;
    std::unique_ptr<Function> off = optimizedCopy(*withStages(*compiled.fn, 1), error);
    EXPECT_EQ(pipelinedLoads(*off), 0) << stem << " at num_stages = 1";
  }
}

}  // namespace
}  // namespace tl::e2e
