// The SM cycle model (sim/SmModel.h) and the chip extrapolation (sim/Timing.h) on hand-written
// instruction streams: issue-bound arithmetic, latency-bound loads that speed up with more warps
// until the bandwidth ceiling, barriers waiting for the slowest warp, a timeline without gaps or
// overlaps, the Chrome trace export, the extrapolation's error against a full simulation, and the
// errors for malformed input.
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>

#include "sim/SmModel.h"
#include "sim/Timing.h"

namespace tl::test {
namespace {

TimedInstr alu(std::vector<int32_t> deps = {}, int issue = 1, int latency = 4) {
  TimedInstr t;
  t.kind = TimedKind::Alu;
  t.issueCycles = issue;
  t.latency = latency;
  t.deps = std::move(deps);
  t.instr = 1;
  t.loc = Loc{3, 5};
  return t;
}

TimedInstr load(double dramBytes, int latency, std::vector<int32_t> deps = {}) {
  TimedInstr t;
  t.kind = TimedKind::GlobalLoad;
  t.latency = latency;
  t.dramBytes = dramBytes;
  t.l2Bytes = dramBytes;
  t.pipeCycles = int(dramBytes / 128);
  t.deps = std::move(deps);
  t.instr = 2;
  t.loc = Loc{7, 9};
  return t;
}

TimedInstr kind(TimedKind k) {
  TimedInstr t;
  t.kind = k;
  t.instr = k == TimedKind::Barrier ? 3 : 4;
  t.loc = Loc{k == TimedKind::Barrier ? 11u : 12u, 1};
  return t;
}

SmConfig config(int residentBlocks, int64_t blocks, double dramBytesPerCycle = 16) {
  SmConfig c;
  c.schedulers = 4;
  c.residentBlocks = residentBlocks;
  c.blocks = blocks;
  c.dramBytesPerCycle = dramBytesPerCycle;
  c.l2BytesPerCycle = 1e9;  // not the limit in these tests
  c.barrierLatency = 20;
  return c;
}

// `n` iterations of: a load of `bytes` and an add that needs it (a streaming loop).
std::vector<TimedInstr> loadUseLoop(int n, double bytes, int latency) {
  std::vector<TimedInstr> w;
  for (int i = 0; i < n; ++i) {
    w.push_back(load(bytes, latency));
    w.push_back(alu({int32_t(w.size() - 1)}));
  }
  w.push_back(kind(TimedKind::Exit));
  return w;
}

TEST(TimingSm, IndependentArithmeticIsIssueBound) {
  // 16 warps x 1000 independent one-cycle instructions on 4 schedulers: 4000 cycles of issue.
  BlockStream b;
  for (int w = 0; w < 16; ++w) {
    std::vector<TimedInstr> s(1000, alu());
    s.push_back(kind(TimedKind::Exit));
    b.warps.push_back(s);
  }
  SmResult r = simulateSm({b}, config(1, 1));
  const double ideal = 16.0 * 1001 / 4;
  EXPECT_GE(double(r.cycles), ideal);
  EXPECT_LE(double(r.cycles), ideal * 1.01);
  EXPECT_EQ(r.instructions, 16 * 1001);
  // Multi-cycle instructions (an op on 8 registers) take their scheduler 8 cycles each.
  BlockStream wide;
  for (int w = 0; w < 4; ++w) wide.warps.push_back({alu({}, 8), alu({}, 8), kind(TimedKind::Exit)});
  EXPECT_EQ(simulateSm({wide}, config(1, 1)).cycles, 17);
}

TEST(TimingSm, DependentChainWaitsForLatencyUntilWarpsHideIt) {
  // One warp, a chain of 100 dependent adds of latency 4: 4 cycles each.
  std::vector<TimedInstr> chain;
  for (int i = 0; i < 100; ++i) chain.push_back(alu(i ? std::vector<int32_t>{i - 1} : std::vector<int32_t>{}));
  chain.push_back(kind(TimedKind::Exit));
  SmResult one = simulateSm({BlockStream{{chain}}}, config(1, 1));
  EXPECT_NEAR(double(one.cycles), 400, 5);
  EXPECT_GT(one.warpCycles[size_t(WarpState::WaitingDependency)], 250);
  // Sixteen such warps (4 per scheduler) fill each other's gaps: issue-bound again.
  BlockStream sixteen;
  for (int w = 0; w < 16; ++w) sixteen.warps.push_back(chain);
  SmResult many = simulateSm({sixteen}, config(1, 1));
  EXPECT_NEAR(double(many.cycles), 16.0 * 101 / 4, 10);
}

TEST(TimingSm, LoadsAreLatencyBoundThenBandwidthBound) {
  // 256 one-warp blocks, each 8 x (512-byte load, use), latency 600, 16 B/cycle of DRAM.
  const int latency = 600, blocks = 256;
  const double bytes = 512, bw = 16;
  BlockStream b{{loadUseLoop(8, bytes, latency)}};
  const double bandwidthBound = blocks * 8 * bytes / bw;  // 65536 cycles
  std::vector<int64_t> cycles;
  for (int resident : {1, 2, 4, 8, 16, 24, 32, 48, 64}) {
    SmResult r = simulateSm({b}, config(resident, blocks, bw));
    cycles.push_back(r.cycles);
    EXPECT_GE(double(r.cycles), bandwidthBound) << resident << " resident";
    // Little's law holds on the model's own numbers.
    EXPECT_NEAR(r.dramBytesInFlight(), r.dramBytes / double(r.cycles) * r.dramMeanLatency(), 1e-6 * r.dramBytes);
  }
  // One warp at a time: every load waits its full latency.
  EXPECT_NEAR(double(cycles[0]), blocks * 8 * (latency + 5), blocks * 8 * 10);
  // More warps: faster, never slower (within 3%: the last round of blocks may not fill the SM).
  for (size_t i = 1; i < cycles.size(); ++i) EXPECT_LE(double(cycles[i]), double(cycles[i - 1]) * 1.03) << i;
  // From latency x bandwidth / bytes = 19 warps on, the bandwidth decides: flat within 6%.
  for (size_t i = 5; i < cycles.size(); ++i) EXPECT_LE(double(cycles[i]), bandwidthBound * 1.06) << i;
  // Below it, latency decides: 16 warps are ~16/19 of the bandwidth.
  EXPECT_GT(double(cycles[4]), bandwidthBound * 1.1);
  // With 2 warps it is still latency-bound: about half the 1-warp time, far above the bound.
  EXPECT_NEAR(double(cycles[1]), double(cycles[0]) / 2, double(cycles[0]) * 0.05);
}

TEST(TimingSm, BarrierWaitsForTheSlowestWarp) {
  // Warp 0 computes a 100-long chain before the barrier; warps 1-3 arrive at once.
  BlockStream b;
  for (int w = 0; w < 4; ++w) {
    std::vector<TimedInstr> s;
    const int n = w == 0 ? 100 : 2;
    for (int i = 0; i < n; ++i) s.push_back(alu(i ? std::vector<int32_t>{i - 1} : std::vector<int32_t>{}));
    s.push_back(kind(TimedKind::Barrier));
    s.push_back(alu());
    s.push_back(kind(TimedKind::Exit));
    b.warps.push_back(s);
  }
  SmConfig c = config(1, 1);
  c.timelineBlocks = -1;
  SmResult r = simulateSm({b}, c);
  // Warp 0 reaches the barrier after ~400 cycles; everyone leaves 20 cycles later.
  EXPECT_NEAR(double(r.cycles), 400 + 20 + 2, 6);
  std::map<int, int64_t> barrierEnd, barrierLen;
  for (const WarpSegment& s : r.timeline)
    if (s.state == WarpState::WaitingBarrier) {
      barrierEnd[s.warp] = s.end;
      barrierLen[s.warp] += s.end - s.start;
      EXPECT_EQ(s.instr, 3);
      EXPECT_EQ(s.loc.line, 11u);
    }
  ASSERT_EQ(barrierEnd.size(), 4u);
  for (int w = 1; w < 4; ++w) {
    EXPECT_EQ(barrierEnd[w], barrierEnd[0]);
    EXPECT_GT(barrierLen[w], 380);  // the fast warps waited for warp 0
  }
  EXPECT_EQ(barrierLen[0], 20);     // warp 0 only waited for the release
}

TEST(TimingSm, TimelineCoversEveryCycleOfEveryWarp) {
  // Mixed streams, 5 blocks through 2 resident slots, a barrier, loads and arithmetic.
  BlockStream b;
  for (int w = 0; w < 3; ++w) {
    std::vector<TimedInstr> s = {load(256, 300), alu({0}), alu({1}, 4), kind(TimedKind::Barrier), load(128, 300),
                                 alu({4}), kind(TimedKind::Exit)};
    if (w == 1) s.insert(s.begin(), 5, alu());
    b.warps.push_back(s);
  }
  SmConfig c = config(2, 5, 4);
  c.timelineBlocks = -1;
  c.blockLaunchCycles = 7;
  SmResult r = simulateSm({b}, c);
  std::map<std::pair<int64_t, int>, std::vector<WarpSegment>> perWarp;
  for (const WarpSegment& s : r.timeline) perWarp[{s.block, s.warp}].push_back(s);
  ASSERT_EQ(perWarp.size(), 15u);
  std::array<int64_t, kWarpStates> byState{};
  for (auto& [key, segs] : perWarp) {
    EXPECT_EQ(segs.front().start, r.blockStart[size_t(key.first)]) << "block " << key.first;
    EXPECT_EQ(segs.back().end, r.cycles);
    for (size_t i = 0; i < segs.size(); ++i) {
      EXPECT_LT(segs[i].start, segs[i].end);
      if (segs[i].state == WarpState::Done) {
        EXPECT_EQ(i + 1, segs.size()) << "Done is the last state";
      }
      if (i > 0) {
        EXPECT_EQ(segs[i].start, segs[i - 1].end) << "gap or overlap in block " << key.first << " warp " << key.second;
      }
      byState[size_t(segs[i].state)] += segs[i].end - segs[i].start;
    }
  }
  EXPECT_EQ(byState, r.warpCycles);  // the counters and the timeline agree
  // Blocks 2-4 start 7 cycles after the block they replace retired.
  for (size_t j = 2; j < 5; ++j) {
    bool follows = false;
    for (size_t k = 0; k < j; ++k) follows |= r.blockStart[j] == r.blockDone[k] + 7;
    EXPECT_TRUE(follows) << "block " << j;
  }
  // Waits on the loads are blamed on the load's source line.
  bool blamed = false;
  for (const WarpSegment& s : r.timeline) blamed |= s.state == WarpState::WaitingMemory && s.loc.line == 7u;
  EXPECT_TRUE(blamed);
}

TEST(TimingSm, ChromeTraceHasOneEventPerSegment) {
  TimingInput in;
  in.kernel = "k";
  in.warpsPerBlock = 2;
  in.registersPerThread = 32;
  in.sample = {BlockStream{{loadUseLoop(3, 512, 400), loadUseLoop(2, 512, 400)}}};
  in.tracedBlocks = 1;
  GpuSpec gpu;
  gpu.key = "test";
  gpu.name = "test";
  gpu.smCount = 2;
  gpu.smClockGHz = 2.0;
  gpu.dramBandwidthGBs = 64;
  gpu.l2BandwidthBytesPerCycle = 1000;
  gpu.dramLatencyCycles = 400;
  TimingOptions o;
  o.gridBlocks = 12;
  o.residentBlocksPerSM = 2;
  o.timelineBlocks = -1;
  TimingResult r = predictTime(in, gpu, o);
  ASSERT_FALSE(r.timeline.empty());
  nlohmann::json doc = nlohmann::json::parse(chromeTraceJson(r));
  ASSERT_TRUE(doc.contains("traceEvents"));
  size_t complete = 0;
  for (const auto& e : doc["traceEvents"]) {
    if (e["ph"] != "X") continue;
    const WarpSegment& s = r.timeline[complete++];
    EXPECT_EQ(e["name"], warpStateName(s.state));
    EXPECT_TRUE(e["ts"].is_number());
    EXPECT_TRUE(e["dur"].is_number());
    EXPECT_DOUBLE_EQ(e["ts"].get<double>(), double(s.start) / 2000.0);  // 2 GHz: 2000 cycles per us
    EXPECT_DOUBLE_EQ(e["dur"].get<double>(), double(s.end - s.start) / 2000.0);
    EXPECT_EQ(e["tid"], s.block * 2 + s.warp);
    EXPECT_EQ(e["pid"], 0);
  }
  EXPECT_EQ(complete, r.timeline.size());
}

TEST(TimingSm, ExtrapolationMatchesFullSimulation) {
  // A streaming kernel on a small chip: 4 SMs, 4 x 300 blocks of 4 warps.
  TimingInput in;
  in.kernel = "stream";
  in.warpsPerBlock = 4;
  in.registersPerThread = 32;
  BlockStream b;
  for (int w = 0; w < 4; ++w) b.warps.push_back(loadUseLoop(4, 512, 600));
  in.sample = {b};
  in.tracedBlocks = 1;
  in.dramBytesPerBlock = 4 * 4 * 512;
  GpuSpec gpu;
  gpu.key = "small";
  gpu.name = "small";
  gpu.smCount = 4;
  gpu.smClockGHz = 1.5;
  gpu.warpSchedulersPerSM = 4;
  gpu.maxWarpsPerSM = 64;
  gpu.dramLatencyCycles = 600;
  gpu.l2BandwidthBytesPerCycle = 10000;
  for (double gbs : {24.0, 96.0, 400.0}) {  // bandwidth-bound, in between, latency-bound
    gpu.dramBandwidthGBs = gbs;
    for (int resident : {2, 8}) {
      TimingOptions full;
      full.gridBlocks = 1200;
      full.residentBlocksPerSM = resident;
      full.maxSimulatedBlocks = 1 << 20;
      TimingOptions sampled = full;
      sampled.maxSimulatedBlocks = 40;
      TimingResult a = predictTime(in, gpu, full), e = predictTime(in, gpu, sampled);
      EXPECT_FALSE(a.extrapolated);
      EXPECT_TRUE(e.extrapolated);
      EXPECT_EQ(e.blocksSimulated, 40);
      EXPECT_NEAR(double(e.cycles), double(a.cycles), 0.02 * double(a.cycles)) << gbs << " GB/s, " << resident;
    }
  }
  // A bandwidth-bound kernel takes bytes / bandwidth (plus the launch overhead), whatever the SM count.
  gpu.dramBandwidthGBs = 24;
  TimingOptions o;
  o.gridBlocks = 1201;  // uneven: the busiest SM runs 301 blocks
  o.residentBlocksPerSM = 8;
  TimingResult r = predictTime(in, gpu, o);
  EXPECT_EQ(r.limiter, TimeLimiter::DramBandwidth);
  EXPECT_NEAR(r.timeUs - r.launchOverheadUs, r.bandwidthBoundUs, 0.03 * r.bandwidthBoundUs);
}

TEST(TimingSm, MalformedInputIsRejected) {
  BlockStream forward{{{alu({1}), alu(), kind(TimedKind::Exit)}}};
  EXPECT_THROW(simulateSm({forward}, config(1, 1)), std::invalid_argument);
  EXPECT_THROW(simulateSm({}, config(1, 1)), std::invalid_argument);
  EXPECT_THROW(simulateSm({BlockStream{{{alu()}}}}, config(1, 1, 0)), std::invalid_argument);
  // Warp 1 exits while warp 0 waits at a barrier: an error, not a hang.
  BlockStream b{{{kind(TimedKind::Barrier), kind(TimedKind::Exit)}, {alu(), kind(TimedKind::Exit)}}};
  EXPECT_THROW(simulateSm({b}, config(1, 1)), std::runtime_error);
  // A stream without an Exit ends when it runs out; an empty one at once.
  BlockStream open{{{alu(), alu({0})}, {}}};
  SmResult r = simulateSm({open}, config(1, 3));
  EXPECT_EQ(r.blockDone.size(), 3u);
  EXPECT_GT(r.cycles, 0);
}

}  // namespace
}  // namespace tl::test

namespace tl::test {
namespace {

TimedInstr mma(std::vector<int32_t> deps, int pipeCycles = 6, int latency = 24) {
  TimedInstr t;
  t.kind = TimedKind::Tensor;
  t.pipeCycles = pipeCycles;
  t.latency = latency;
  t.deps = std::move(deps);
  t.instr = 5;
  t.loc = Loc{13, 1};
  return t;
}

// The tensor core of each sub-partition: a dependent chain of mma waits the latency each time,
// independent mma are limited by the pipe (6 cycles each), warps on different schedulers use
// different tensor cores, and the busy cycles give the utilization.
TEST(TimingSm, TensorCoresChainsWaitThePipeLimitsIndependentOnes) {
  constexpr int n = 200;
  std::vector<TimedInstr> chain, indep;
  for (int i = 0; i < n; ++i) {
    chain.push_back(mma(i ? std::vector<int32_t>{i - 1} : std::vector<int32_t>{}));
    indep.push_back(mma({}));
  }
  chain.push_back(kind(TimedKind::Exit));
  indep.push_back(kind(TimedKind::Exit));
  SmResult c = simulateSm({BlockStream{{chain}}}, config(1, 1));
  EXPECT_NEAR(double(c.cycles), 24.0 * n, 24.0 * 2);
  EXPECT_EQ(c.mmaInstructions, n);
  SmResult one = simulateSm({BlockStream{{indep}}}, config(1, 1));
  EXPECT_NEAR(double(one.cycles), 6.0 * n, 30);
  EXPECT_NEAR(one.tensorBusyCycles, 6.0 * n, 1e-9);
  // Two warps on one scheduler share its tensor core (warps 0 and 4 of 5 on 4 schedulers): twice
  // the time; four warps on four schedulers run side by side.
  SmResult shared = simulateSm({BlockStream{{indep, {kind(TimedKind::Exit)}, {kind(TimedKind::Exit)},
                                             {kind(TimedKind::Exit)}, indep}}}, config(1, 1));
  EXPECT_NEAR(double(shared.cycles), 12.0 * n, 40);
  SmResult spread = simulateSm({BlockStream{{indep, indep, indep, indep}}}, config(1, 1));
  EXPECT_NEAR(double(spread.cycles), 6.0 * n, 30);
  EXPECT_NEAR(spread.tensorBusyCycles / (double(spread.cycles) * 4), 1.0, 0.05);
}

}  // namespace
}  // namespace tl::test
