// Tests of the report's optional inputs and outputs (stages/sim/SimReport.h): the register
// source is asked for every kernel simulated and drives the occupancy; a measured results file
// adds the "measured" section with the driver's figures beside the model's; keepDetail hands
// back the first blocks' accesses and a timing input that reproduces the reported time.
#include <gtest/gtest.h>

#include <set>
#include <sstream>

#include "runtime/Driver.h"
#include "sim/SimReport.h"

namespace tl {
namespace {

std::unique_ptr<CompiledKernel> compileStem(const std::string& stem) {
  std::ostringstream err;
  auto k = compileKernelFile(std::string(TL_SOURCE_DIR) + "/kernels/" + stem + ".tl", {}, err);
  EXPECT_TRUE(k) << err.str();
  return k;
}

TEST(SimDetail, RegisterSourceDrivesOccupancyForEveryKernel) {
  auto k = compileStem("softmax");
  ASSERT_TRUE(k);
  int calls = 0;
  SimOptions o;
  o.registers = [&](const Function&) {
    ++calls;
    return compiledRegisters(128, "test");
  };
  SimReport r = simulateKernel(*k->ir, k->launch, o);
  // 128 registers x 128 threads = 16 K of the 64 K register file: 4 blocks, limited by registers.
  EXPECT_EQ(r.json["registers"]["per_thread"], 128);
  EXPECT_EQ(r.json["registers"]["estimate"], false);
  EXPECT_EQ(r.json["occupancy"]["blocks_per_sm"], 4);
  EXPECT_EQ(r.json["occupancy"]["limiter"], "registers");
  // The fused kernel and each unfused one.
  EXPECT_EQ(calls, 1 + r.json["fusion"]["launches_unfused"].get<int>());
}

TEST(SimDetail, MeasuredSectionComparesWithTheDriver) {
  auto k = compileStem("vector_add");
  ASSERT_TRUE(k);
  nlohmann::json m = {{"source", "kernels/vector_add.tl"},
                      {"gpu", {{"ran", true}, {"device", "test GPU"}}},
                      {"time", {{"median_ms", 0.010}}},
                      {"resources", {{"registers", 64}, {"blocks_per_sm", 8}}}};
  SimOptions o;
  o.unfused = false;
  o.measured = &m;
  SimReport r = simulateKernel(*k->ir, k->launch, o);
  const auto& j = r.json["measured"];
  // No register source given: the driver's count is used, and 64 x 128 threads gives 8 blocks.
  EXPECT_EQ(r.json["registers"]["per_thread"], 64);
  EXPECT_EQ(j["blocks_per_sm_predicted"], 8);
  EXPECT_EQ(j["occupancy_agrees"], true);
  EXPECT_DOUBLE_EQ(j["median_us"].get<double>(), 10.0);
  double predicted = r.json["timing"]["time_us"].get<double>();
  EXPECT_NEAR(j["time_error"].get<double>(), (predicted - 10.0) / 10.0, 1e-12);
  EXPECT_NE(r.summary.find("blocks/SM: driver 8, model 8 (equal)"), std::string::npos) << r.summary;
}

TEST(SimDetail, KeepsFirstBlocksAndAReplayableTimingInput) {
  auto k = compileStem("softmax");
  ASSERT_TRUE(k);
  SimOptions o;
  o.unfused = false;
  o.keepDetail = true;
  o.detailBlocks = 2;
  SimReport r = simulateKernel(*k->ir, k->launch, o);
  ASSERT_TRUE(r.detail);
  const SimDetail& d = *r.detail;
  ASSERT_TRUE(d.compilation.threadIR);
  EXPECT_EQ(d.instrs.size(), instructionTable(*d.compilation.threadIR).size());
  std::set<int64_t> blocks;
  for (const WarpAccess& a : d.accesses) blocks.insert(a.block);
  EXPECT_EQ(blocks, (std::set<int64_t>{0, 1}));
  EXPECT_EQ(d.timingOptions.memory, &d.memory);
  TimingResult again = predictTime(d.timingInput, d.gpu, d.timingOptions);
  EXPECT_EQ(again.cycles, d.timing.cycles);
  EXPECT_DOUBLE_EQ(again.timeUs, r.json["timing"]["time_us"].get<double>());
  // Without keepDetail there is none.
  o.keepDetail = false;
  EXPECT_FALSE(simulateKernel(*k->ir, k->launch, o).detail);
}

}  // namespace
}  // namespace tl
