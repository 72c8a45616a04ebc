// The Latency panel's timeline (TimelineView.h): rows, clipping, merging of sub-pixel segments,
// 1-2-5 axis ticks and warp-state shares.
#include "viz/model/TimelineView.h"

#include "viz/model/Format.h"

#include <algorithm>
#include <cmath>
#include <utility>

namespace tl::viz {
namespace {

bool rowLess(const TimelineRow& a, const TimelineRow& b) {
  return a.block != b.block ? a.block < b.block : a.warp < b.warp;
}

// Index of the row of (block, warp) in sorted `rows` (it is there: rows come from the segments).
size_t rowIndex(const std::vector<TimelineRow>& rows, int64_t block, int32_t warp) {
  TimelineRow key;
  key.block = block;
  key.warp = warp;
  return size_t(std::lower_bound(rows.begin(), rows.end(), key, rowLess) - rows.begin());
}

// The bar being built from touching narrow segments.
struct Pending {
  bool active = false;
  TimelineBar bar;
  int64_t longest = -1;  // the longest merged segment's visible cycles (its instr/loc win)

  int64_t width() const { return bar.end - bar.start; }

  void start(const WarpSegment& s, int64_t a, int64_t b) {
    active = true;
    bar = TimelineBar{};
    bar.start = a;
    bar.end = b;
    bar.merged = 0;
    longest = -1;
    add(s, a, b);
  }
  void add(const WarpSegment& s, int64_t a, int64_t b) {
    bar.end = b;
    bar.merged += 1;
    bar.cycles[static_cast<int>(s.state)] += b - a;
    if (b - a > longest) {
      longest = b - a;
      bar.instr = s.instr;
      bar.loc = s.loc;
    }
  }
  void flushInto(std::vector<TimelineBar>& out) {
    if (!active) return;
    int best = 0;
    for (int st = 1; st < kWarpStates; ++st)
      if (bar.cycles[st] > bar.cycles[best]) best = st;
    bar.state = static_cast<WarpState>(best);
    out.push_back(bar);
    active = false;
  }
};

}  // namespace

std::vector<TimelineRow> timelineRows(const std::vector<WarpSegment>& segments) {
  std::vector<TimelineRow> rows;
  for (const WarpSegment& s : segments) rows.push_back({s.block, s.warp, s.slot, s.start, s.end});
  std::stable_sort(rows.begin(), rows.end(), rowLess);
  // Merge duplicates: the first segment (in input order) of a row gives its slot.
  std::vector<TimelineRow> out;
  for (const TimelineRow& r : rows) {
    if (!out.empty() && out.back().block == r.block && out.back().warp == r.warp) {
      out.back().start = std::min(out.back().start, r.start);
      out.back().end = std::max(out.back().end, r.end);
      continue;
    }
    out.push_back(r);
  }
  return out;
}

TimelineView timelineView(const std::vector<WarpSegment>& segments, CycleWindow window, double minCycles) {
  TimelineView v;
  v.rows = timelineRows(segments);
  v.bars.resize(v.rows.size());
  v.segments = segments.size();
  for (const WarpSegment& s : segments) v.endCycle = std::max(v.endCycle, s.end);

  // Each row's visible segments, clipped: (segment, clipped start, clipped end).
  struct Clip {
    const WarpSegment* seg;
    int64_t a, b;
  };
  std::vector<std::vector<Clip>> perRow(v.rows.size());
  for (const WarpSegment& s : segments) {
    int64_t a = std::max(s.start, window.start), b = std::min(s.end, window.end);
    if (b <= a) continue;
    perRow[rowIndex(v.rows, s.block, s.warp)].push_back({&s, a, b});
  }

  for (size_t r = 0; r < perRow.size(); ++r) {
    std::vector<Clip>& clips = perRow[r];
    // simulateSm records each warp's segments in time order; sort only if an input was not.
    auto byStart = [](const Clip& x, const Clip& y) { return x.a < y.a; };
    if (!std::is_sorted(clips.begin(), clips.end(), byStart)) std::stable_sort(clips.begin(), clips.end(), byStart);

    std::vector<TimelineBar>& out = v.bars[r];
    Pending p;
    for (const Clip& c : clips) {
      int64_t len = c.b - c.a;
      bool wide = double(len) >= minCycles;
      if (p.active && (p.bar.end != c.a || double(p.width()) >= minCycles || wide)) p.flushInto(out);
      if (p.active)
        p.add(*c.seg, c.a, c.b);  // narrow, touching a narrow pending bar: merge
      else
        p.start(*c.seg, c.a, c.b);
    }
    p.flushInto(out);
    v.drawn += out.size();
  }
  return v;
}

AxisTicks niceTicks(double lo, double hi, int maxTicks) {
  AxisTicks t;
  maxTicks = std::max(maxTicks, 2);
  if (!(hi > lo) || !std::isfinite(lo) || !std::isfinite(hi)) {
    t.step = 1;
    if (std::isfinite(lo)) t.values.push_back(lo);
    return t;
  }
  // The smallest 1-2-5 x 10^k step giving at most maxTicks ticks in [lo, hi].
  double raw = (hi - lo) / double(maxTicks - 1);
  double p = std::pow(10.0, std::floor(std::log10(raw)));
  const double mult[] = {1, 2, 5, 10, 20};
  for (double m : mult) {
    t.step = m * p;
    double first = std::ceil(lo / t.step), last = std::floor(hi / t.step);
    if (last - first + 1 <= maxTicks) break;
  }
  // (10 and 20 x 10^k are 1 and 2 x 10^(k+1): still 1-2-5 steps.) A small tolerance keeps an
  // end that is a multiple of the step despite rounding.
  double first = std::ceil(lo / t.step - 1e-9), last = std::floor(hi / t.step + 1e-9);
  for (double k = first; k <= last; k += 1) t.values.push_back(k * t.step + 0.0);  // + 0.0: no "-0" label
  return t;
}

std::array<double, kWarpStates> warpStateShares(const std::vector<WarpSegment>& segments, CycleWindow window,
                                                bool includeDone) {
  std::array<double, kWarpStates> cycles{};
  double total = 0;
  for (const WarpSegment& s : segments) {
    if (!includeDone && s.state == WarpState::Done) continue;
    int64_t a = std::max(s.start, window.start), b = std::min(s.end, window.end);
    if (b <= a) continue;
    cycles[static_cast<int>(s.state)] += double(b - a);
    total += double(b - a);
  }
  if (total > 0)
    for (double& c : cycles) c /= total;
  return cycles;
}

CycleWindow clampWindow(int64_t start, int64_t width, int64_t total) {
  total = std::max<int64_t>(total, 1);
  width = std::clamp<int64_t>(width, 1, total);
  start = std::clamp<int64_t>(start, 0, total - width);
  return {start, start + width};
}

}  // namespace tl::viz

namespace tl::viz {

std::string tickLabel(double value, double step) {
  if (!std::isfinite(value)) return formatNumber(value);
  if (value == 0) return "0";
  int decimals = 0;
  if (step > 0 && std::isfinite(step)) {
    // The decimals of the step's leading digit: 0.05 -> 2, 0.2 -> 1, 500 -> 0.
    decimals = std::clamp(static_cast<int>(-std::floor(std::log10(step) + 1e-9)), 0, 9);
  }
  return formatNumber(value, decimals);
}

int64_t wholeRunCycles(const TimingResult& t) {
  int64_t end = t.simulatedCycles;
  for (const WarpSegment& s : t.timeline) end = std::max(end, s.end);
  return std::max<int64_t>(end, 1);
}

std::string flatCurveReason(const std::vector<TimingResult>& rs, double flatFraction) {
  if (rs.empty()) return "";
  if (rs.size() == 1)
    return "the occupancy allows only 1 resident block per SM, so there is one point (" +
           countOf(rs[0].residentWarpsPerSM, "warp") + ")";
  // The first setting from which every later one is within flatFraction of it.
  size_t from = rs.size() - 1;
  for (size_t i = rs.size() - 1; i-- > 0;) {
    bool flat = true;
    for (size_t j = i + 1; j < rs.size() && flat; ++j)
      flat = std::fabs(rs[j].timeUs - rs[i].timeUs) <= flatFraction * rs[i].timeUs;
    if (!flat) break;
    from = i;
  }
  if (from + 1 >= rs.size()) return "";  // still falling at the last setting
  const TimingResult& t = rs[from];
  const int r = static_cast<int>(from) + 1;  // rs[i] is i + 1 resident blocks
  std::string where = (from == 0 ? std::string("flat at every setting") : "flat from " + countOf(r, "resident block") +
                                                                             " (" + countOf(t.residentWarpsPerSM, "warp") + ") on") +
                      ": ";
  const int64_t blocks = t.blocksPerSM;
  if (blocks <= static_cast<int64_t>(r))
    return where + "one wave: the busiest SM runs only " + countOf(blocks, "block") +
           (blocks == 1 ? ", so no second block can overlap with it"
                        : ", which all fit on it at once, so more resident blocks change nothing") +
           " (a larger grid gives the SM more blocks to overlap)";
  if (t.limiter == TimeLimiter::DramBandwidth || t.limiter == TimeLimiter::L2Bandwidth)
    return where + (t.limiter == TimeLimiter::DramBandwidth ? "DRAM" : "L2") + " bandwidth is saturated at " +
           countOf(t.residentWarpsPerSM, "warp") + " per SM: more warps cannot move the bytes faster";
  return where + "limited by " + timeLimiterName(t.limiter) + ", which more resident warps do not relieve";
}

}  // namespace tl::viz
