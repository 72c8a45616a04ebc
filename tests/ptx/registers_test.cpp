// Registers for the simulator from ptxas (stages/ptx/Registers.h): the count is what `ptxas -v`
// reports for the same PTX, labelled as compiled; without a usable code generator or ptxas the
// thread-IR estimate comes back, still labelled an estimate, with the reason.
#include <gtest/gtest.h>

#include "codegen_util.h"
#include "ptx/Ptxas.h"
#include "ptx/Registers.h"

namespace tl {
namespace {

TEST(PtxasRegisters, MatchPtxasForEveryKernel) {
  std::string why;
  if (findPtxas(&why).empty()) GTEST_SKIP() << why;
  for (const std::string& stem : ptxtest::kernelStems()) {
    ThreadCompilation tc = ptxtest::kernelToThreadIR(stem, 4);
    RegisterEstimate r = ptxasRegisters(*tc.threadIR, "sm_90");
    PtxOptions po;
    PtxasInfo info = runPtxas(compileToPTX(*tc.threadIR, po).ptx, "sm_90");
    ASSERT_TRUE(info.ok) << stem << ": " << info.log;
    EXPECT_FALSE(r.estimate) << stem << ": " << r.source;
    EXPECT_EQ(r.registers, info.registers) << stem;
    EXPECT_EQ(r.source, "ptxas -v (sm_90)");
  }
}

TEST(PtxasRegisters, FallsBackToTheLabelledEstimate) {
  ThreadCompilation tc = ptxtest::kernelToThreadIR("softmax", 4);
  RegisterEstimate r = ptxasRegisters(*tc.threadIR, "sm_70");
  EXPECT_TRUE(r.estimate);
  EXPECT_EQ(r.registers, estimateRegisters(*tc.threadIR).registers);
  EXPECT_NE(r.source.find("ptxas: no code generator for sm_70"), std::string::npos) << r.source;
}

}  // namespace
}  // namespace tl
