// The results file's work estimate (stages/ptx/Results.cpp, WorkCounter: estimateScalarOps)
// counts a while loop's condition and body once each.
#include <sstream>

#include "codegen_util.h"
#include "ptx/Results.h"

namespace tl::ptxtest {
namespace {

// The results file's work estimate (Results.cpp, WorkCounter) counts a while's condition and
// body once each (its trip count is only known at run time): for a kernel without for or if
// (while_data.tl), every op counted once, per program.
TEST(LibdevicePtx, WorkEstimateCountsAWhilesRegionsOnce) {
  std::ostringstream err;
  auto k = compileKernelFile(std::string(TL_SOURCE_DIR) + "/tests/thread/kernels/while_data.tl", {}, err);
  ASSERT_TRUE(k) << err.str();
  double perProgram = 0;
  int whiles = 0;
  walk(k->ir->body, [&](Op& op) {
    ASSERT_NE(op.kind, OpKind::For);
    ASSERT_NE(op.kind, OpKind::If);
    whiles += op.kind == OpKind::While;
    if (op.kind != OpKind::While) perProgram += op.numResults() ? double(op.result(0)->type.numel()) : 1.0;
  });
  ASSERT_EQ(whiles, 2);
  const double programs = double(k->launch.grid[0]) * k->launch.grid[1] * k->launch.grid[2];
  EXPECT_DOUBLE_EQ(estimateScalarOps(*k->ir, k->launch), perProgram * programs);
}

}  // namespace
}  // namespace tl::ptxtest
