// The Occupancy panel's curves (OccupancyCurves.h): sweeps of sim/Occupancy.h's occupancy() over
// one input with the other two at the sliders, plus the slider ranges from the GpuSpec.
#include "viz/model/OccupancyCurves.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace tl::viz {

int SliderRange::clamp(int v) const {
  if (max <= min) return min;
  v = std::clamp(v, min, max);
  int s = std::max(step, 1);
  int k = (v - min + s / 2) / s;  // nearest grid point
  return std::min(min + k * s, max);
}

OccSliderRanges occupancySliderRanges(const GpuSpec& gpu) {
  OccSliderRanges r;
  r.threads = {32, std::max(32, gpu.maxThreadsPerBlock), 32};
  r.registers = {1, std::max(1, gpu.maxRegistersPerThread), 1};
  r.shared = {0, std::max(0, gpu.maxSharedPerBlock), 1};
  return r;
}

OccInputs clampInputs(const OccSliderRanges& ranges, const OccInputs& in) {
  return {ranges.threads.clamp(in.threads), ranges.registers.clamp(in.registers), ranges.shared.clamp(in.shared)};
}

std::vector<OccStep> occupancySteps(const std::vector<OccupancyPoint>& points) {
  std::vector<OccStep> steps;
  for (const OccupancyPoint& p : points) {
    if (!steps.empty() && steps.back().warpsPerSM == p.warpsPerSM && steps.back().limiter == p.limiter) {
      steps.back().x1 = p.x;
      continue;
    }
    steps.push_back({p.x, p.x, p.blocksPerSM, p.warpsPerSM, p.limiter});
  }
  return steps;
}

const OccupancyPoint& nearestPoint(const OccCurve& curve, double x) {
  // Points are in increasing x: binary search, then pick the closer neighbour.
  const auto& pts = curve.points;
  auto it = std::lower_bound(pts.begin(), pts.end(), x, [](const OccupancyPoint& p, double v) { return p.x < v; });
  if (it == pts.end()) return pts.back();
  if (it != pts.begin() && std::fabs(double(std::prev(it)->x) - x) <= std::fabs(double(it->x) - x))
    return *std::prev(it);
  return *it;
}

namespace {

OccupancyPoint toPoint(int x, const OccupancyResult& r) {
  return {x, r.activeBlocksPerSM, r.activeWarpsPerSM, r.limiter};
}

// occupancy() for inputs already inside the slider ranges (so it cannot throw for them); a
// GpuSpec that is itself inconsistent still must not take the UI down.
OccupancyResult safeOccupancy(const GpuSpec& gpu, const OccInputs& in) {
  try {
    return occupancy(gpu, in.threads, in.registers, in.shared);
  } catch (const std::exception& e) {
    OccupancyResult r;
    r.threadsPerBlock = in.threads;
    r.registersPerThread = in.registers;
    r.sharedBytesPerBlock = in.shared;
    r.reason = e.what();
    return r;
  }
}

OccCurve makeCurve(OccCurveKind kind, const GpuSpec& gpu, const OccInputs& cur, const OccInputs& ker,
                   const OccupancyResult& atCur, const OccupancyResult& atKer) {
  OccCurve c;
  c.kind = kind;
  switch (kind) {
    case OccCurveKind::Threads:
      c.title = "Impact of varying block size";
      c.xLabel = "threads per block";
      c.points = occupancyVsThreads(gpu, cur.registers, cur.shared);
      c.currentX = cur.threads;
      c.kernelX = ker.threads;
      break;
    case OccCurveKind::Registers:
      c.title = "Impact of varying register count per thread";
      c.xLabel = "registers per thread";
      c.points = occupancyVsRegisters(gpu, cur.threads, cur.shared);
      c.currentX = cur.registers;
      c.kernelX = ker.registers;
      break;
    case OccCurveKind::Shared:
      c.title = "Impact of varying shared memory per block";
      c.xLabel = "shared memory per block (bytes)";
      c.points = occupancyVsShared(gpu, cur.threads, cur.registers);
      c.currentX = cur.shared;
      c.kernelX = ker.shared;
      break;
  }
  c.steps = occupancySteps(c.points);
  if (!c.points.empty()) {
    c.xMin = c.points.front().x;
    c.xMax = c.points.back().x;
  }
  c.current = toPoint(c.currentX, atCur);
  c.kernel = toPoint(c.kernelX, atKer);
  return c;
}

}  // namespace

OccupancyCurves occupancyCurves(const GpuSpec& gpu, const OccInputs& sliders, const OccInputs& kernel) {
  OccupancyCurves out;
  out.ranges = occupancySliderRanges(gpu);
  out.current = clampInputs(out.ranges, sliders);
  out.kernel = clampInputs(out.ranges, kernel);
  out.atCurrent = safeOccupancy(gpu, out.current);
  out.atKernel = safeOccupancy(gpu, out.kernel);
  out.maxWarpsPerSM = gpu.maxWarpsPerSM;
  const OccCurveKind kinds[kOccCurves] = {OccCurveKind::Threads, OccCurveKind::Registers, OccCurveKind::Shared};
  for (int i = 0; i < kOccCurves; ++i) {
    try {
      out.curves[i] = makeCurve(kinds[i], gpu, out.current, out.kernel, out.atCurrent, out.atKernel);
    } catch (const std::exception&) {
      out.curves[i] = OccCurve{};  // an inconsistent GpuSpec: an empty curve (the panel says so)
      out.curves[i].kind = kinds[i];
    }
  }
  return out;
}

Rgba limiterColor(OccLimiter l) {
  switch (l) {
    case OccLimiter::Warps:
      return rgba(66, 165, 245);  // blue
    case OccLimiter::Registers:
      return rgba(239, 83, 80);  // red
    case OccLimiter::SharedMemory:
      return rgba(255, 167, 38);  // orange
    case OccLimiter::Blocks:
      return rgba(171, 71, 188);  // purple
  }
  return rgba(200, 200, 200);
}

}  // namespace tl::viz
