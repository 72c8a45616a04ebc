// The Latency panel's timeline, without a window: the SM model's warp segments
// (TimingResult::timeline, sim/SmModel.h WarpSegment) turned into what is drawn — one row per
// (block, warp), the segments clipped to the visible cycles and, where many are narrower than a
// pixel, merged into one bar that keeps the state holding most of its cycles — plus the time
// axis' ticks (1-2-5 steps) and the share of warp-cycles per state.
//
//   TimelineView v = timelineView(result.timeline, {0, 5000}, /*min cycles per bar*/ 5000.0 / 800);
//   for (const TimelineBar& b : v.bars[row]) draw(b.start, b.end, warpStateColor(b.state));
//   AxisTicks t = niceTicks(0, 5000, 8);   // step 1000: 0, 1000, ..., 5000
//   tickLabel(0.15, 0.05)                  // "0.15" (tick labels are round numbers)
//
// Expects: segments as simulateSm records them (each warp's segments contiguous, no overlap);
// any order, any window (an empty or inverted window gives rows without bars).
// Guarantees: rows in (block, warp) order; within a row, bars in time order, inside the window,
// never overlapping; merging only joins segments that touch, so the cycles a row's bars cover
// equal the cycles its clipped segments cover; a bar's state is its dominant state (most
// cycles; ties go to the earlier WarpState) and `cycles[s]` keeps every state's share; every
// bar narrower than `minCycles` is followed by a bar at least that wide or ends its row, so a
// row has at most 2 x (window / minCycles) + 1 bars.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "sim/SmModel.h"
#include "sim/Timing.h"

namespace tl::viz {

// One row of the timeline: a warp of one block of the simulated SM.
struct TimelineRow {
  int64_t block = 0;           // the block's index on the SM (launch order)
  int32_t warp = 0;            // warp within the block
  int32_t slot = 0;            // the resident-block slot it ran in (of its first segment)
  int64_t start = 0, end = 0;  // first and last cycle the row's segments cover (whole run)
};

// A visible cycle window [start, end).
struct CycleWindow {
  int64_t start = 0, end = 0;
};

// What one drawn rectangle stands for: one segment, or several touching ones merged.
struct TimelineBar {
  int64_t start = 0, end = 0;                 // clipped to the window
  WarpState state = WarpState::Idle;          // the dominant state
  int32_t instr = -1;                         // the longest merged segment's instruction
  Loc loc;                                    // and its source line
  int merged = 1;                             // segments it stands for
  std::array<int64_t, kWarpStates> cycles{};  // visible cycles per state
};

struct TimelineView {
  std::vector<TimelineRow> rows;               // (block, warp) order
  std::vector<std::vector<TimelineBar>> bars;  // bars[i] for rows[i]
  int64_t endCycle = 0;                        // the latest segment end (the run's length)
  size_t segments = 0;                         // segments in the input
  size_t drawn = 0;                            // bars over all rows
};

// The rows of a timeline, in (block, warp) order, each with its whole extent.
std::vector<TimelineRow> timelineRows(const std::vector<WarpSegment>& segments);

// Clips and merges (see the file comment). minCycles <= 0: no merging.
TimelineView timelineView(const std::vector<WarpSegment>& segments, CycleWindow window, double minCycles);

// Axis ticks: the multiples of `step` inside [lo, hi]; step is 1, 2 or 5 x 10^k, the smallest
// such step that gives at most maxTicks ticks (maxTicks >= 2).
struct AxisTicks {
  double step = 1;
  std::vector<double> values;
};
AxisTicks niceTicks(double lo, double hi, int maxTicks);
// A tick's label with the decimals its step needs, no more: step 500 -> "1,500", step 0.05 ->
// "0.15", step 0.2 -> "0.6"; never "-0" nor a rounding tail ("0.30000000000000004").
std::string tickLabel(double value, double step);

// The cycles the Latency panel's "fit" shows: the whole simulated run of the SM (the last
// segment's end, or TimingResult::simulatedCycles when the run went on past the recorded
// blocks), at least 1.
int64_t wholeRunCycles(const TimingResult& t);

// Where the time-against-resident-warps curve goes flat and why ("" when it still falls at the
// last setting). byResident[i] is i + 1 resident blocks; the curve is flat from the first
// setting after which no time differs from its own by more than `flatFraction`. The cause is
// the one the results show: a single setting; one wave (the busiest SM runs no more blocks than
// fit on it at once, so more resident blocks change nothing); DRAM (or L2) bandwidth saturated;
// or the limiter at that setting.
std::string flatCurveReason(const std::vector<TimingResult>& byResident, double flatFraction = 0.05);

// Share of warp-cycles per state over the segments inside `window` (sums to 1 when any cycle is
// covered; all 0 otherwise). `includeDone` false leaves Done out, as TimingResult::warpStateShare
// does (the share of a warp's life before it exits).
std::array<double, kWarpStates> warpStateShares(const std::vector<WarpSegment>& segments, CycleWindow window,
                                                bool includeDone = false);

// A window of `width` cycles (at least 1) that starts at `start`, kept inside [0, total].
CycleWindow clampWindow(int64_t start, int64_t width, int64_t total);

}  // namespace tl::viz
