// The Occupancy panel's data, without a window: the three curves NVIDIA's occupancy calculator
// draws (active warps per SM as threads per block, registers per thread or shared memory per
// block varies, the other two held at the sliders' values), the slider ranges, and the two
// marked points (the sliders' and the compiled kernel's own).
//
//   OccInputs kernel{128, 32, 16};                        // from the report's "occupancy"
//   OccupancyCurves c = occupancyCurves(gpu, /*sliders*/ kernel, kernel);
//   c.curves[int(OccCurveKind::Registers)].points[40]     // x = 40 registers: blocks, warps, limiter
//
// Expects: a GpuSpec that passed loadGpu's checks; any inputs (they are clamped to the slider
// ranges first, so occupancy() never sees a meaningless value).
// Guarantees: every point is exactly what sim/Occupancy.h occupancy() answers for that x (this
// file never re-derives the rules: it calls occupancy() or its occupancyVs* sweeps); points are in
// increasing x; `steps` splits each curve into runs of equal warps and limiter, so a plateau is
// one horizontal segment; nothing throws.
#pragma once

#include <array>
#include <string>
#include <vector>

#include "sim/Gpu.h"
#include "sim/Occupancy.h"
#include "viz/model/Palette.h"

namespace tl::viz {

// Which input a curve varies.
enum class OccCurveKind {
  Threads,    // threads per block (32, 64, ..., maxThreadsPerBlock)
  Registers,  // registers per thread (0 .. maxRegistersPerThread)
  Shared,     // shared memory per block in bytes, 0 .. maxSharedPerBlock: the slider moves by 1 byte,
              // the curve has a point every sharedAllocUnit bytes (occupancy only changes there)
};
constexpr int kOccCurves = 3;

// The three inputs of occupancy().
struct OccInputs {
  int threads = 0;    // threads per block
  int registers = 0;  // registers per thread
  int shared = 0;     // bytes of shared memory per block (static + dynamic)
  bool operator==(const OccInputs&) const = default;
};

// One slider: [min, max] in steps of `step` (the value is snapped to min + k * step).
struct SliderRange {
  int min = 0, max = 0, step = 1;
  int clamp(int v) const;  // into [min, max], snapped to the step grid
};

struct OccSliderRanges {
  SliderRange threads;    // 32 .. maxThreadsPerBlock, step 32 (whole warps)
  SliderRange registers;  // 1 .. maxRegistersPerThread
  SliderRange shared;     // 0 .. maxSharedPerBlock, step 1 (any byte count a kernel may declare)
};
OccSliderRanges occupancySliderRanges(const GpuSpec& gpu);
// Each input clamped into its slider range.
OccInputs clampInputs(const OccSliderRanges& ranges, const OccInputs& in);

// A run of consecutive curve points with the same warps per SM and the same limiter:
// x in [x0, x1] (both are points of the curve).
struct OccStep {
  int x0 = 0, x1 = 0;
  int blocksPerSM = 0, warpsPerSM = 0;
  OccLimiter limiter = OccLimiter::Warps;
};

struct OccCurve {
  OccCurveKind kind = OccCurveKind::Threads;
  std::string title;                   // "Impact of varying block size"
  std::string xLabel;                  // "threads per block"
  std::vector<OccupancyPoint> points;  // increasing x
  std::vector<OccStep> steps;          // runs of `points`
  int xMin = 0, xMax = 0;              // the axis (= first and last point's x)
  int currentX = 0;                    // the sliders' value of this input
  int kernelX = 0;                     // the compiled kernel's value of this input
  OccupancyPoint current;              // occupancy at the sliders (lies on the curve)
  OccupancyPoint kernel;               // occupancy of the compiled kernel at its own three inputs
                                       // (on the curve only where the other two sliders agree)
};

struct OccupancyCurves {
  OccSliderRanges ranges;
  OccInputs current;          // the sliders, clamped
  OccInputs kernel;           // the compiled kernel, clamped
  OccupancyResult atCurrent;  // occupancy() at the sliders: every limit, the limiter
  OccupancyResult atKernel;   // occupancy() at the compiled kernel's inputs
  int maxWarpsPerSM = 0;      // the y axis' top
  std::array<OccCurve, kOccCurves> curves;
};

// The whole panel's data. Cost: about 2,100 occupancy() calls on an H200 (the shared-memory
// curve has one point per 128-byte allocation unit).
OccupancyCurves occupancyCurves(const GpuSpec& gpu, const OccInputs& sliders, const OccInputs& kernel);

// The curve point nearest to x (for tooltips); the curve must have points.
const OccupancyPoint& nearestPoint(const OccCurve& curve, double x);
// Runs of equal (warpsPerSM, limiter) over `points` (in order).
std::vector<OccStep> occupancySteps(const std::vector<OccupancyPoint>& points);

// The color a curve segment takes for the resource that limits it (legend of the panel).
Rgba limiterColor(OccLimiter l);

}  // namespace tl::viz
