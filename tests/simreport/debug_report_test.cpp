// device_print and device_assert in tl-sim (issue 12, "Debugging"): the executor runs them and
// the report counts them (execution.printed_lines, asserts_checked) without printing; the timing
// model ignores them (no instruction, no crash), the fused/unfused comparison still runs, and a
// failing assertion stops the simulation with the located error every stage gives.
#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include "runtime/Driver.h"
#include "sim/SimReport.h"

namespace tl {
namespace {

std::unique_ptr<CompiledKernel> debugKernel(const std::string& stem, const std::vector<LaunchOverride>& overrides = {}) {
  std::ostringstream err;
  auto k = compileKernelFile(std::string(TL_SOURCE_DIR) + "/tests/debug/kernels/" + stem + ".tl", overrides, err);
  EXPECT_TRUE(k) << err.str();
  return k;
}

TEST(SimReportDebug, PrintsAreCountedNotShownAndTheModelsRun) {
  auto k = debugKernel("print_tile");
  ASSERT_TRUE(k);
  SimReport r = simulateKernel(*k->ir, k->launch);  // with the unfused comparison
  EXPECT_EQ(r.json["execution"]["printed_lines"], 10);  // 2 programs x (4 elements + 1 scalar)
  EXPECT_EQ(r.json["execution"]["asserts_checked"], 0);
  EXPECT_GT(r.json["timing"]["time_us"].get<double>(), 0.0) << r.json["timing"].dump();
  EXPECT_TRUE(r.json.contains("fusion")) << "the unfused comparison ran";
  EXPECT_EQ(r.summary.find("pid ("), std::string::npos) << r.summary;
}

TEST(SimReportDebug, AssertionsAreCheckedAndAFailureStopsTheSimulation) {
  auto k = debugKernel("assert_limit");
  ASSERT_TRUE(k);
  SimReport r = simulateKernel(*k->ir, k->launch);
  EXPECT_GT(r.json["execution"]["asserts_checked"].get<int64_t>(), 0);
  auto bad = debugKernel("assert_limit", {{"LIMIT", "6"}});
  ASSERT_TRUE(bad);
  try {
    simulateKernel(*bad->ir, bad->launch);
    ADD_FAILURE() << "the failing assertion did not stop tl-sim";
  } catch (const RuntimeError& e) {
    EXPECT_NE(std::string(e.what()).find("device assertion failed: x must stay below LIMIT (pid (1, 0, 0) warp"),
              std::string::npos)
        << e.what();
    EXPECT_EQ(e.loc, (Loc{14, 5}));
  }
}

}  // namespace
}  // namespace tl
