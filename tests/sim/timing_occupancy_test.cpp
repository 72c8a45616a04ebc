// Achieved occupancy from the timing model (sim/Timing.h, TimingResult::achievedOccupancy): the
// warps active on the SMs that run blocks, averaged over their active cycles, against the
// theoretical figure (the resident warps the occupancy model allows).
#include <gtest/gtest.h>

#include <functional>

#include "sim/SmModel.h"
#include "sim/Timing.h"

namespace tl::test {
namespace {

TimedInstr instr(TimedKind kind, int latency = 4, std::vector<int32_t> deps = {}) {
  TimedInstr t;
  t.kind = kind;
  t.latency = latency;
  t.deps = std::move(deps);
  if (kind == TimedKind::GlobalLoad) {
    t.dramBytes = 512;
    t.l2Bytes = 512;
    t.pipeCycles = 4;
  }
  return t;
}

// A block of `warps` warps; warp w runs `loads(w)` dependent load-use pairs.
BlockStream block(int warps, const std::function<int(int)>& loads) {
  BlockStream b;
  for (int w = 0; w < warps; ++w) {
    std::vector<TimedInstr> s;
    for (int i = 0; i < loads(w); ++i) {
      s.push_back(instr(TimedKind::GlobalLoad, 600));
      s.push_back(instr(TimedKind::Alu, 4, {int32_t(s.size() - 1)}));
    }
    s.push_back(instr(TimedKind::Exit));
    b.warps.push_back(std::move(s));
  }
  return b;
}

GpuSpec chip(int sms) {
  GpuSpec g;
  g.key = g.name = "small";
  g.smCount = sms;
  g.smClockGHz = 1.5;
  g.warpSchedulersPerSM = 4;
  g.maxWarpsPerSM = 64;
  g.dramLatencyCycles = 600;
  g.dramBandwidthGBs = 4000;
  g.l2BandwidthBytesPerCycle = 1e6;
  return g;
}

TimingInput input(const BlockStream& b) {
  TimingInput in;
  in.kernel = "k";
  in.warpsPerBlock = int(b.warps.size());
  in.registersPerThread = 32;
  in.sample = {b};
  in.tracedBlocks = 1;
  in.dramBytesPerBlock = 4096;
  return in;
}

// Warps that all live equally long: one block of 8 warps per SM fills 8 of 64 slots for the
// whole run (12.5%), while 8 blocks could be resident (theoretical 100%).
TEST(TimingOccupancy, UniformBlocksFillTheirSlots) {
  const TimingInput in = input(block(8, [](int) { return 4; }));
  TimingOptions o;
  o.gridBlocks = 4;
  o.residentBlocksPerSM = 8;
  const TimingResult r = predictTime(in, chip(4), o);
  EXPECT_EQ(r.residentWarpsPerSM, 64);
  EXPECT_GT(r.activeCyclesPerSM, 0);
  EXPECT_NEAR(r.achievedWarpsPerSM, 8.0, 0.3);
  EXPECT_NEAR(r.achievedOccupancy, 8.0 / 64, 0.3 / 64);
  // 64 blocks on 4 SMs: 16 per SM, 8 resident at a time: close to the theoretical figure.
  o.gridBlocks = 64;
  const TimingResult full = predictTime(in, chip(4), o);
  EXPECT_GT(full.achievedOccupancy, 0.8);
  EXPECT_LE(full.achievedOccupancy, double(full.residentWarpsPerSM) / 64 + 1e-12);
}

// Warps that exit early leave their slots empty: warp w of 4 runs w + 1 loads, so the mean is
// (1 + 2 + 3 + 4) / 4 = 2.5 warps over the 4-load run, near 2.5 / 64.
TEST(TimingOccupancy, EarlyExitsLowerTheMean) {
  const TimingInput in = input(block(4, [](int w) { return w + 1; }));
  TimingOptions o;
  o.gridBlocks = 1;
  o.residentBlocksPerSM = 1;
  const TimingResult r = predictTime(in, chip(1), o);
  EXPECT_NEAR(r.achievedWarpsPerSM, 2.5, 0.15);
  EXPECT_LT(r.achievedWarpsPerSM, 4.0);
}

// The SMs with one block less count with their own, lower mean: 5 blocks on 4 SMs, one resident
// at a time, gives 1 SM of 2 blocks and 3 of 1 block; all of them hold 4 warps while active.
// With 2 resident, the busy SM holds 8 warps while its two blocks overlap and the light ones 4.
TEST(TimingOccupancy, LighterSmsAverageIn) {
  const TimingInput in = input(block(4, [](int) { return 4; }));
  TimingOptions o;
  o.gridBlocks = 5;
  o.residentBlocksPerSM = 1;
  const TimingResult serial = predictTime(in, chip(4), o);
  EXPECT_EQ(serial.blocksPerSM, 2);
  EXPECT_NEAR(serial.achievedWarpsPerSM, 4.0, 0.2);
  o.residentBlocksPerSM = 2;
  const TimingResult overlapped = predictTime(in, chip(4), o);
  // One SM near 8 warps for a run as long as the others' 4-warp runs: (8 + 3 x 4) / 4 = 5.
  EXPECT_NEAR(overlapped.achievedWarpsPerSM, 5.0, 0.5);
  EXPECT_LT(overlapped.achievedWarpsPerSM, 8.0);
}

// Achieved never exceeds theoretical, for any resident-block count and grid.
TEST(TimingOccupancy, AchievedIsAtMostTheoretical) {
  const TimingInput in = input(block(4, [](int w) { return 2 + w % 3; }));
  for (int resident : {1, 3, 16})
    for (int64_t grid : {1, 7, 33, 400}) {
      TimingOptions o;
      o.gridBlocks = grid;
      o.residentBlocksPerSM = resident;
      o.maxSimulatedBlocks = 64;
      const TimingResult r = predictTime(in, chip(8), o);
      const double theoretical = double(r.residentWarpsPerSM) / 64;
      EXPECT_GT(r.achievedOccupancy, 0) << resident << " resident, grid " << grid;
      EXPECT_LE(r.achievedOccupancy, theoretical + 1e-12) << resident << " resident, grid " << grid;
    }
}

}  // namespace
}  // namespace tl::test
