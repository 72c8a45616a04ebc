// The Occupancy panel's curves (viz/model/OccupancyCurves.h): every point is occupancy() at its
// x, plateaus follow the allocation granularities, the marked points and slider ranges.
#include "viz/model/OccupancyCurves.h"

#include <gtest/gtest.h>

#include "sim/Gpu.h"
#include "sim/Occupancy.h"

namespace tl::viz {
namespace {

const GpuSpec& h200() {
  static const GpuSpec g = loadGpu("h200");
  return g;
}

const OccCurve& curve(const OccupancyCurves& c, OccCurveKind k) { return c.curves[static_cast<int>(k)]; }

TEST(OccupancyCurves, SliderRangesComeFromTheGpu) {
  OccSliderRanges r = occupancySliderRanges(h200());
  EXPECT_EQ(r.threads.min, 32);
  EXPECT_EQ(r.threads.max, h200().maxThreadsPerBlock);
  EXPECT_EQ(r.threads.step, 32);
  EXPECT_EQ(r.registers.min, 1);
  EXPECT_EQ(r.registers.max, h200().maxRegistersPerThread);
  EXPECT_EQ(r.shared.min, 0);
  EXPECT_EQ(r.shared.max, h200().maxSharedPerBlock);

  GpuSpec ada = loadGpu("rtx4090");
  EXPECT_EQ(occupancySliderRanges(ada).shared.max, ada.maxSharedPerBlock);
  EXPECT_LT(occupancySliderRanges(ada).shared.max, r.shared.max);
}

TEST(OccupancyCurves, ClampSnapsToWholeWarpsAndRange) {
  OccSliderRanges r = occupancySliderRanges(h200());
  EXPECT_EQ(r.threads.clamp(0), 32);
  EXPECT_EQ(r.threads.clamp(100), 96);  // nearest multiple of 32
  EXPECT_EQ(r.threads.clamp(112), 128);
  EXPECT_EQ(r.threads.clamp(5000), 1024);
  EXPECT_EQ(r.registers.clamp(0), 1);
  EXPECT_EQ(r.registers.clamp(300), 255);
  EXPECT_EQ(r.shared.clamp(-5), 0);
  EXPECT_EQ(r.shared.clamp(16), 16);
  OccInputs in = clampInputs(r, {2000, 999, 1 << 30});
  EXPECT_EQ(in, (OccInputs{1024, 255, h200().maxSharedPerBlock}));
}

TEST(OccupancyCurves, EveryPointIsOccupancyAtItsX) {
  OccInputs sliders{256, 40, 20000};
  OccupancyCurves c = occupancyCurves(h200(), sliders, {128, 32, 16});
  const OccCurve& t = curve(c, OccCurveKind::Threads);
  ASSERT_EQ(t.points.size(), 32u);  // 32 .. 1024 step 32
  for (const OccupancyPoint& p : t.points) {
    OccupancyResult r = occupancy(h200(), p.x, 40, 20000);
    EXPECT_EQ(p.blocksPerSM, r.activeBlocksPerSM) << "threads " << p.x;
    EXPECT_EQ(p.warpsPerSM, r.activeWarpsPerSM) << "threads " << p.x;
    EXPECT_EQ(p.limiter, r.limiter) << "threads " << p.x;
  }
  const OccCurve& g = curve(c, OccCurveKind::Registers);
  ASSERT_EQ(g.points.size(), 256u);  // 0 .. 255
  for (const OccupancyPoint& p : g.points) {
    OccupancyResult r = occupancy(h200(), 256, p.x, 20000);
    EXPECT_EQ(p.warpsPerSM, r.activeWarpsPerSM) << "registers " << p.x;
    EXPECT_EQ(p.limiter, r.limiter) << "registers " << p.x;
  }
  const OccCurve& s = curve(c, OccCurveKind::Shared);
  EXPECT_EQ(s.xMin, 0);
  EXPECT_EQ(s.xMax % h200().sharedAllocUnit, 0);
  EXPECT_LE(s.xMax, h200().maxSharedPerBlock);
  for (size_t i = 0; i < s.points.size(); i += 37) {
    OccupancyResult r = occupancy(h200(), 256, 40, s.points[i].x);
    EXPECT_EQ(s.points[i].blocksPerSM, r.activeBlocksPerSM) << "shared " << s.points[i].x;
  }
}

TEST(OccupancyCurves, RegisterPlateausFollowTheAllocationUnit) {
  // 256 threads = 8 warps. Registers are allocated per warp in units of 256 = 8 registers x 32
  // lanes, so warps per SM can only change when registers per thread crosses a multiple of 8.
  OccupancyCurves c = occupancyCurves(h200(), {256, 32, 0}, {256, 32, 0});
  const OccCurve& g = curve(c, OccCurveKind::Registers);
  ASSERT_GT(g.steps.size(), 3u);
  for (size_t i = 1; i < g.steps.size(); ++i) {
    if (g.steps[i].warpsPerSM == g.steps[i - 1].warpsPerSM) continue;  // only the limiter changed
    EXPECT_EQ((g.steps[i].x0 - 1) % 8, 0) << "a step at " << g.steps[i].x0 << " registers";
  }
  // The classic numbers: 32 registers -> the full 64 warps, 64 -> 32 warps, 128 -> 16 warps.
  EXPECT_EQ(g.points[32].warpsPerSM, 64);
  EXPECT_EQ(g.points[64].warpsPerSM, 32);
  EXPECT_EQ(g.points[64].limiter, OccLimiter::Registers);
  EXPECT_EQ(g.points[128].warpsPerSM, 16);
  // Monotone: more registers never give more warps.
  for (size_t i = 1; i < g.points.size(); ++i) EXPECT_LE(g.points[i].warpsPerSM, g.points[i - 1].warpsPerSM);
}

TEST(OccupancyCurves, StepsCoverTheCurveWithoutGaps) {
  OccupancyCurves c = occupancyCurves(h200(), {384, 72, 50000}, {128, 32, 16});
  for (const OccCurve& k : c.curves) {
    ASSERT_FALSE(k.steps.empty());
    EXPECT_EQ(k.steps.front().x0, k.points.front().x);
    EXPECT_EQ(k.steps.back().x1, k.points.back().x);
    size_t covered = 0;
    for (const OccStep& st : k.steps)
      for (const OccupancyPoint& p : k.points)
        if (p.x >= st.x0 && p.x <= st.x1) {
          EXPECT_EQ(p.warpsPerSM, st.warpsPerSM);
          EXPECT_EQ(p.limiter, st.limiter);
          ++covered;
        }
    EXPECT_EQ(covered, k.points.size());
  }
}

TEST(OccupancyCurves, MarkedPointsAreTheSlidersAndTheKernel) {
  OccInputs kernel{128, 32, 16};
  OccInputs sliders{512, 100, 4096};
  OccupancyCurves c = occupancyCurves(h200(), sliders, kernel);
  OccupancyResult atK = occupancy(h200(), 128, 32, 16);
  OccupancyResult atS = occupancy(h200(), 512, 100, 4096);
  EXPECT_EQ(c.atKernel.activeWarpsPerSM, atK.activeWarpsPerSM);
  EXPECT_EQ(c.atCurrent.activeWarpsPerSM, atS.activeWarpsPerSM);
  EXPECT_EQ(c.atCurrent.limiter, atS.limiter);
  for (const OccCurve& k : c.curves) {
    EXPECT_EQ(k.current.warpsPerSM, atS.activeWarpsPerSM);
    EXPECT_EQ(k.kernel.warpsPerSM, atK.activeWarpsPerSM);
  }
  EXPECT_EQ(curve(c, OccCurveKind::Threads).currentX, 512);
  EXPECT_EQ(curve(c, OccCurveKind::Threads).kernelX, 128);
  EXPECT_EQ(curve(c, OccCurveKind::Registers).kernelX, 32);
  EXPECT_EQ(curve(c, OccCurveKind::Shared).currentX, 4096);
  // The slider point lies on its curve (its x is a curve point for threads and registers).
  const OccCurve& t = curve(c, OccCurveKind::Threads);
  EXPECT_EQ(nearestPoint(t, 512).warpsPerSM, t.current.warpsPerSM);
  const OccCurve& g = curve(c, OccCurveKind::Registers);
  EXPECT_EQ(nearestPoint(g, 100).warpsPerSM, g.current.warpsPerSM);
  EXPECT_EQ(c.maxWarpsPerSM, 64);
}

TEST(OccupancyCurves, NearestPointAndBadInputs) {
  OccupancyCurves c = occupancyCurves(h200(), {-7, -1, -100}, {0, 0, 0});  // clamped, no throw
  EXPECT_EQ(c.current, (OccInputs{32, 1, 0}));
  const OccCurve& t = curve(c, OccCurveKind::Threads);
  EXPECT_EQ(nearestPoint(t, -1000).x, 32);
  EXPECT_EQ(nearestPoint(t, 1e9).x, 1024);
  EXPECT_EQ(nearestPoint(t, 70).x, 64);
  EXPECT_EQ(nearestPoint(t, 90).x, 96);
}

TEST(OccupancyCurves, SharedMemoryLimitsAtLargeBlocks) {
  // 100 KB per block: two fit in 228 KB (with the 1 KB reserve each), so shared memory limits.
  OccupancyCurves c = occupancyCurves(h200(), {128, 32, 100 * 1024}, {128, 32, 16});
  EXPECT_EQ(c.atCurrent.activeBlocksPerSM, 2);
  EXPECT_EQ(c.atCurrent.limiter, OccLimiter::SharedMemory);
  EXPECT_NE(limiterColor(OccLimiter::SharedMemory), limiterColor(OccLimiter::Warps));
  EXPECT_NE(limiterColor(OccLimiter::Registers), limiterColor(OccLimiter::Blocks));
}

}  // namespace
}  // namespace tl::viz
