// The Latency panel's timeline (viz/model/TimelineView.h): rows, clipping, merging of narrow
// segments (covered cycles kept, dominant state), 1-2-5 ticks, state shares; and the same on a
// real SM model run.
#include "viz/model/TimelineView.h"

#include <gtest/gtest.h>

#include <cmath>
#include <numeric>

#include "sim/SmModel.h"

namespace tl::viz {
namespace {

WarpSegment seg(int64_t block, int32_t warp, int64_t start, int64_t end, WarpState s, int32_t instr = -1) {
  WarpSegment w;
  w.block = block;
  w.warp = warp;
  w.start = start;
  w.end = end;
  w.state = s;
  w.instr = instr;
  w.loc = {uint32_t(instr > 0 ? instr : 1), 1};
  return w;
}

int64_t covered(const std::vector<TimelineBar>& bars) {
  int64_t c = 0;
  for (const TimelineBar& b : bars) c += b.end - b.start;
  return c;
}

// A warp alternating 1-cycle issues and 3-cycle memory waits, then a long wait and done.
std::vector<WarpSegment> busyWarp(int64_t block, int32_t warp) {
  std::vector<WarpSegment> s;
  int64_t t = 0;
  for (int i = 0; i < 50; ++i) {
    s.push_back(seg(block, warp, t, t + 1, WarpState::Issuing, i + 1));
    s.push_back(seg(block, warp, t + 1, t + 4, WarpState::WaitingMemory, i + 1));
    t += 4;
  }
  s.push_back(seg(block, warp, t, t + 300, WarpState::WaitingBarrier, 99));
  s.push_back(seg(block, warp, t + 300, t + 310, WarpState::Done));
  return s;
}

TEST(TimelineView, RowsInBlockWarpOrder) {
  std::vector<WarpSegment> s = {seg(1, 0, 0, 5, WarpState::Idle), seg(0, 2, 0, 5, WarpState::Idle),
                                seg(0, 0, 0, 5, WarpState::Idle), seg(1, 0, 5, 9, WarpState::Done),
                                seg(0, 1, 2, 7, WarpState::Issuing)};
  std::vector<TimelineRow> rows = timelineRows(s);
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_EQ(rows[0].block, 0);
  EXPECT_EQ(rows[0].warp, 0);
  EXPECT_EQ(rows[1].warp, 1);
  EXPECT_EQ(rows[1].start, 2);
  EXPECT_EQ(rows[2].warp, 2);
  EXPECT_EQ(rows[3].block, 1);
  EXPECT_EQ(rows[3].end, 9);
}

TEST(TimelineView, NoMergingKeepsEverySegmentClipped) {
  std::vector<WarpSegment> s = busyWarp(0, 0);
  TimelineView v = timelineView(s, {10, 150}, 0);
  ASSERT_EQ(v.rows.size(), 1u);
  EXPECT_EQ(covered(v.bars[0]), 140);
  EXPECT_EQ(v.bars[0].front().start, 10);
  EXPECT_EQ(v.bars[0].back().end, 150);
  for (const TimelineBar& b : v.bars[0]) EXPECT_EQ(b.merged, 1);
  EXPECT_EQ(v.endCycle, 510);
}

TEST(TimelineView, MergingKeepsCoveredCyclesAndTheDominantState) {
  std::vector<WarpSegment> s = busyWarp(0, 0);
  auto more = busyWarp(0, 1);
  s.insert(s.end(), more.begin(), more.end());
  for (double minCycles : {2.0, 5.0, 16.0, 64.0, 1000.0}) {
    TimelineView v = timelineView(s, {0, 510}, minCycles);
    ASSERT_EQ(v.bars.size(), 2u);
    for (const auto& bars : v.bars) {
      EXPECT_EQ(covered(bars), 510) << "minCycles " << minCycles;
      for (size_t i = 1; i < bars.size(); ++i) EXPECT_EQ(bars[i].start, bars[i - 1].end);  // no gap, no overlap
      // A narrow bar is followed by a wide one or ends the row; so the count is bounded.
      for (size_t i = 0; i + 1 < bars.size(); ++i) {
        if (double(bars[i].end - bars[i].start) < minCycles) {
          EXPECT_GE(double(bars[i + 1].end - bars[i + 1].start), minCycles);
        }
      }
      EXPECT_LE(double(bars.size()), 2 * 510 / minCycles + 1);
      for (const TimelineBar& b : bars) {
        EXPECT_EQ(std::accumulate(b.cycles.begin(), b.cycles.end(), int64_t(0)), b.end - b.start);
        // the drawn state holds the most cycles of the bar
        for (int st = 0; st < kWarpStates; ++st) EXPECT_LE(b.cycles[st], b.cycles[int(b.state)]);
      }
    }
  }
  // At 16 cycles per pixel the issue/wait pattern (1 + 3 cycles) becomes orange bars standing for
  // several segments each, 3/4 of them waiting on memory.
  TimelineView v = timelineView(s, {0, 510}, 16);
  const TimelineBar& first = v.bars[0].front();
  EXPECT_EQ(first.state, WarpState::WaitingMemory);
  EXPECT_GT(first.merged, 1);
  EXPECT_EQ(first.cycles[int(WarpState::WaitingMemory)], 3 * first.cycles[int(WarpState::Issuing)]);
  EXPECT_LT(v.drawn, timelineView(s, {0, 510}, 0).drawn);
}

TEST(TimelineView, MergingNeverCrossesGaps) {
  std::vector<WarpSegment> s = {seg(0, 0, 0, 2, WarpState::Issuing), seg(0, 0, 10, 12, WarpState::Issuing)};
  TimelineView v = timelineView(s, {0, 100}, 50);
  ASSERT_EQ(v.bars[0].size(), 2u);
  EXPECT_EQ(covered(v.bars[0]), 4);
}

TEST(TimelineView, EmptyAndInvertedWindows) {
  std::vector<WarpSegment> s = busyWarp(0, 0);
  EXPECT_TRUE(timelineView(s, {600, 700}, 1).bars[0].empty());
  EXPECT_TRUE(timelineView(s, {100, 50}, 1).bars[0].empty());
  TimelineView none = timelineView({}, {0, 10}, 1);
  EXPECT_TRUE(none.rows.empty());
  EXPECT_EQ(none.drawn, 0u);
}

bool isOneTwoFive(double step) {
  double p = std::pow(10.0, std::floor(std::log10(step)));
  double m = step / p;
  return std::fabs(m - 1) < 1e-9 || std::fabs(m - 2) < 1e-9 || std::fabs(m - 5) < 1e-9;
}

TEST(TimelineView, TicksAreOneTwoFiveAndCoverTheWindow) {
  const double windows[][2] = {{0, 5000}, {0, 1}, {12, 987}, {1234, 1299}, {0, 2081}, {0.25, 0.9}, {-40, 3e6}};
  for (const auto& w : windows)
    for (int maxTicks : {2, 5, 8, 12}) {
      AxisTicks t = niceTicks(w[0], w[1], maxTicks);
      EXPECT_TRUE(isOneTwoFive(t.step)) << t.step;
      ASSERT_FALSE(t.values.empty());
      EXPECT_LE(int(t.values.size()), maxTicks);
      EXPECT_GE(t.values.front(), w[0] - 1e-9);
      EXPECT_LE(t.values.back(), w[1] + 1e-9);
      EXPECT_LT(t.values.front() - w[0], t.step + 1e-9);  // cover: no more than a step left out
      EXPECT_LT(w[1] - t.values.back(), t.step + 1e-9);
      // the smallest such step: the next smaller 1-2-5 step would give too many ticks
      for (size_t i = 1; i < t.values.size(); ++i) EXPECT_NEAR(t.values[i] - t.values[i - 1], t.step, 1e-9 * t.step);
    }
  AxisTicks t = niceTicks(0, 5000, 8);
  EXPECT_EQ(t.step, 1000);
  EXPECT_EQ(t.values.size(), 6u);
  EXPECT_EQ(niceTicks(0, 2081, 8).step, 500);
  EXPECT_FALSE(niceTicks(5, 5, 8).values.empty());  // a zero-width window: one tick, no loop
}

TEST(TimelineView, SharesSumToOne) {
  std::vector<WarpSegment> s = busyWarp(0, 0);
  auto sh = warpStateShares(s, {0, 200}, false);
  EXPECT_NEAR(sh[int(WarpState::Issuing)], 0.25, 1e-12);
  EXPECT_NEAR(sh[int(WarpState::WaitingMemory)], 0.75, 1e-12);
  auto all = warpStateShares(s, {0, 1000}, true);
  EXPECT_NEAR(std::accumulate(all.begin(), all.end(), 0.0), 1.0, 1e-12);
  EXPECT_NEAR(all[int(WarpState::Done)], 10.0 / 510, 1e-12);
  auto noDone = warpStateShares(s, {0, 1000}, false);
  EXPECT_EQ(noDone[int(WarpState::Done)], 0);
  auto none = warpStateShares(s, {2000, 3000}, false);
  EXPECT_EQ(std::accumulate(none.begin(), none.end(), 0.0), 0.0);
}

TEST(TimelineView, ClampWindow) {
  EXPECT_EQ(clampWindow(-5, 100, 1000).start, 0);
  EXPECT_EQ(clampWindow(950, 100, 1000).start, 900);
  EXPECT_EQ(clampWindow(950, 100, 1000).end, 1000);
  EXPECT_EQ(clampWindow(0, 5000, 1000).end, 1000);
  EXPECT_EQ(clampWindow(10, 0, 1000).end - clampWindow(10, 0, 1000).start, 1);
  EXPECT_EQ(clampWindow(0, 10, 0).end, 1);
}

TEST(TimelineView, RealSmRunMergesAndKeepsCycles) {
  // Two blocks of two warps: load -> dependent adds -> barrier -> store -> exit.
  BlockStream b;
  for (int w = 0; w < 2; ++w) {
    std::vector<TimedInstr> ins;
    TimedInstr ld;
    ld.kind = TimedKind::GlobalLoad;
    ld.latency = 600;
    ld.dramBytes = 512;
    ld.l2Bytes = 512;
    ld.pipeCycles = 4;
    ins.push_back(ld);
    for (int i = 0; i < 20; ++i) {
      TimedInstr a;
      a.deps = {int32_t(ins.size() - 1)};
      ins.push_back(a);
    }
    TimedInstr bar;
    bar.kind = TimedKind::Barrier;
    ins.push_back(bar);
    TimedInstr ex;
    ex.kind = TimedKind::Exit;
    ins.push_back(ex);
    b.warps.push_back(ins);
  }
  SmConfig cfg;
  cfg.residentBlocks = 2;
  cfg.blocks = 4;
  cfg.dramBytesPerCycle = 32;
  cfg.l2BytesPerCycle = 64;
  cfg.timelineBlocks = -1;
  SmResult r = simulateSm({b}, cfg);
  ASSERT_FALSE(r.timeline.empty());
  TimelineView exact = timelineView(r.timeline, {0, r.cycles}, 0);
  TimelineView merged = timelineView(r.timeline, {0, r.cycles}, double(r.cycles) / 50);
  ASSERT_EQ(exact.rows.size(), 8u);  // 4 blocks x 2 warps
  EXPECT_LT(merged.drawn, exact.drawn);
  for (size_t i = 0; i < exact.rows.size(); ++i) EXPECT_EQ(covered(exact.bars[i]), covered(merged.bars[i]));
}

// Tick labels are round numbers with the decimals their step needs (the issue: 0.0505, 0.101).
TEST(TimelineView, TickLabelsAreRound) {
  AxisTicks us = niceTicks(0, 0.33, 7);  // the microseconds row of a 660-cycle window at 2 GHz
  EXPECT_DOUBLE_EQ(us.step, 0.05);
  std::vector<std::string> labels;
  for (double v : us.values) labels.push_back(tickLabel(v, us.step));
  EXPECT_EQ(labels, (std::vector<std::string>{"0", "0.05", "0.10", "0.15", "0.20", "0.25", "0.30"}));
  EXPECT_EQ(tickLabel(0.30000000000000004, 0.1), "0.3");
  EXPECT_EQ(tickLabel(1500, 500), "1,500");
  EXPECT_EQ(tickLabel(0.6000000000000001, 0.2), "0.6");
  EXPECT_EQ(tickLabel(-0.0, 1), "0");
  EXPECT_EQ(tickLabel(2e-6, 1e-6), "0.000002");
}

TimingResult timed(int resident, double us, int64_t blocksPerSM, TimeLimiter limiter) {
  TimingResult t;
  t.residentBlocksPerSM = resident;
  t.residentWarpsPerSM = 4 * resident;
  t.timeUs = us;
  t.blocksPerSM = blocksPerSM;
  t.limiter = limiter;
  return t;
}

// "fit" shows the whole run: past the recorded blocks to the SM's last simulated cycle.
TEST(TimelineView, WholeRunCycles) {
  TimingResult t;
  t.simulatedCycles = 47456;
  WarpSegment seg;
  seg.end = 3300;
  seg.state = WarpState::Issuing;
  t.timeline = {seg};
  EXPECT_EQ(wholeRunCycles(t), 47456);
  t.simulatedCycles = 0;
  EXPECT_EQ(wholeRunCycles(t), 3300);
  EXPECT_EQ(wholeRunCycles(TimingResult{}), 1);
}

TEST(TimelineView, FlatCurveSaysWhy) {
  // Falling to the last setting: not flat.
  EXPECT_EQ(flatCurveReason({timed(1, 90, 125, TimeLimiter::Latency), timed(2, 50, 125, TimeLimiter::Latency),
                             timed(3, 30, 125, TimeLimiter::Latency)}),
            "");
  // One setting.
  EXPECT_NE(flatCurveReason({timed(1, 5, 2, TimeLimiter::Latency)}).find("only 1 resident block"), std::string::npos);
  // The default softmax: 2 blocks on the busiest SM, flat from 2 resident blocks on.
  std::string oneWave = flatCurveReason({timed(1, 4.3, 2, TimeLimiter::Latency), timed(2, 3.74, 2, TimeLimiter::Latency),
                                         timed(3, 3.74, 2, TimeLimiter::Latency), timed(4, 3.74, 2, TimeLimiter::Latency)});
  EXPECT_NE(oneWave.find("flat from 2 resident blocks (8 warps) on"), std::string::npos) << oneWave;
  EXPECT_NE(oneWave.find("one wave"), std::string::npos) << oneWave;
  // Bandwidth-bound already at few warps.
  std::string dram = flatCurveReason({timed(1, 27, 125, TimeLimiter::DramBandwidth), timed(2, 26.6, 125, TimeLimiter::DramBandwidth),
                                      timed(3, 26.5, 125, TimeLimiter::DramBandwidth)});
  EXPECT_NE(dram.find("flat at every setting"), std::string::npos) << dram;
  EXPECT_NE(dram.find("DRAM bandwidth is saturated at 4 warps per SM"), std::string::npos) << dram;
  // Falling, then saturating: flat from where DRAM saturates.
  std::string later = flatCurveReason({timed(1, 90, 125, TimeLimiter::Latency), timed(2, 48, 125, TimeLimiter::Latency),
                                       timed(3, 27, 125, TimeLimiter::DramBandwidth), timed(4, 26.6, 125, TimeLimiter::DramBandwidth)});
  EXPECT_NE(later.find("flat from 3 resident blocks (12 warps) on: DRAM bandwidth"), std::string::npos) << later;
}

}  // namespace
}  // namespace tl::viz
