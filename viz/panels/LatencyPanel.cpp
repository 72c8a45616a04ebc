// The Latency hiding panel: the per-warp timeline of one simulated SM (sim/SmModel.h) with the
// number of resident blocks as a slider, so a student watches memory waits get covered by other
// warps' work as more warps share the SM; beside it the predicted time and why, the DRAM
// bandwidth reached, Little's law (bytes in flight against the bytes that would saturate DRAM),
// where warps spent their cycles, and the time against resident warps over every setting.
//
// Expects: a simulated SessionData with byResident (TimingResult per resident-block count,
// byResident[r - 1]) and defaultResident. Guarantees: draws from viz/model/TimelineView.h (bars
// merged below one pixel, so draw calls stay bounded at any zoom); hovering explains, only a
// click changes UiState (sourceLine: the clicked segment's source line; residentBlocks: the
// slider or a click on the curve). Zoom and scroll live in ImGui's per-window state storage.
#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "viz/model/Format.h"
#include "viz/model/Palette.h"
#include "viz/model/TimelineView.h"
#include "viz/panels/Panels.h"

namespace tl::viz {
namespace {

constexpr Rgba kAxis = rgba(170, 170, 180);
constexpr Rgba kGrid = rgba(255, 255, 255, 28);
constexpr Rgba kPlotBg = rgba(24, 24, 30);
constexpr float kLabelWidth = 64;
constexpr float kStatsWidth = 400;

// The thread-IR instruction's mnemonic ("ld_global"), when the detail has it.
std::string instrText(const SessionData& data, int32_t instr) {
  if (instr < 0) return "";
  if (data.detail && size_t(instr) < data.detail->instrs.size() && data.detail->instrs[size_t(instr)])
    return std::string(mnemonic(data.detail->instrs[size_t(instr)]->kind)) + " (#" + std::to_string(instr) + ")";
  return "#" + std::to_string(instr);
}

// ---------------------------------------------------------------------------------------------
// The timeline.

// Where the bars go and how cycles map to pixels.
struct TimeAxis {
  float x0 = 0, x1 = 1;  // screen x of the window's first and last cycle
  CycleWindow window;
  double clockGHz = 1;
  float px(double cycle) const {
    return x0 + float((cycle - double(window.start)) / double(window.end - window.start)) * (x1 - x0);
  }
  double cycleAt(float x) const {
    return double(window.start) + double((x - x0) / (x1 - x0)) * double(window.end - window.start);
  }
  double cyclesPerPixel() const { return double(window.end - window.start) / std::max(1.0f, x1 - x0); }
};

// Two rows of round ticks: cycles (with grid lines into the plot) and microseconds (short marks
// at their own positions), so neither row reads 0.0505, 0.101, ...
void drawTimeAxis(ImDrawList* dl, const TimeAxis& ax, ImVec2 topLeft, float height) {
  float lineH = ImGui::GetTextLineHeight();
  int maxTicks = std::max(2, int((ax.x1 - ax.x0) / 90));
  dl->AddText(ImVec2(topLeft.x, topLeft.y), kAxis, "cycles");
  dl->AddText(ImVec2(topLeft.x, topLeft.y + lineH), kAxis, "us");
  AxisTicks cycles = niceTicks(double(ax.window.start), double(ax.window.end), maxTicks);
  for (double c : cycles.values) {
    float x = ax.px(c);
    dl->AddLine(ImVec2(x, topLeft.y + 2 * lineH), ImVec2(x, topLeft.y + height), kAxis);
    std::string label = tickLabel(c, cycles.step);
    float w = ImGui::CalcTextSize(label.c_str()).x;
    dl->AddText(ImVec2(x - w / 2, topLeft.y), rgba(220, 220, 225), label.c_str());
  }
  const double toUs = 1.0 / (ax.clockGHz * 1000.0);
  AxisTicks us = niceTicks(double(ax.window.start) * toUs, double(ax.window.end) * toUs, maxTicks);
  for (double u : us.values) {
    float x = ax.px(u / toUs);
    dl->AddLine(ImVec2(x, topLeft.y + 2 * lineH - 3), ImVec2(x, topLeft.y + 2 * lineH + 2), kAxis);
    std::string label = tickLabel(u, us.step);
    float w = ImGui::CalcTextSize(label.c_str()).x;
    dl->AddText(ImVec2(x - w / 2, topLeft.y + lineH), kAxis, label.c_str());
  }
}

// Zoom and scroll: visible width = total / zoom, starting at `start`. Kept per window in
// ImGui's state storage, so two windows on two kernels keep their own.
struct ZoomState {
  float* zoom;
  int* start;
};

ZoomState zoomState() {
  ImGuiStorage* s = ImGui::GetStateStorage();
  return {s->GetFloatRef(ImGui::GetID("timeline_zoom"), 1.0f), s->GetIntRef(ImGui::GetID("timeline_start"), 0)};
}

void drawBarTooltip(const SessionData& data, const TimelineRow& row, const TimelineBar& b, double clockGHz) {
  ImGui::BeginTooltip();
  Rgba c = warpStateColor(b.state);
  ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(c), "%s", warpStateName(b.state));
  ImGui::SameLine();
  ImGui::Text(" block %lld, warp %d (slot %d)", static_cast<long long>(row.block), row.warp, row.slot);
  ImGui::Text("cycles %s .. %s: %s cycles (%.3f us)", withCommas(b.start).c_str(),
              withCommas(b.end).c_str(), withCommas(b.end - b.start).c_str(),
              double(b.end - b.start) / clockGHz / 1000.0);
  if (b.merged > 1) {
    ImGui::TextDisabled("%s narrower than a pixel, drawn as one:", countOf(b.merged, "segment").c_str());
    double total = double(b.end - b.start);
    for (int s = 0; s < kWarpStates; ++s)
      if (b.cycles[s] > 0)
        ImGui::BulletText("%s %.0f%% (%s cycles)", warpStateName(static_cast<WarpState>(s)),
                          100.0 * double(b.cycles[s]) / total, withCommas(b.cycles[s]).c_str());
  }
  std::string ins = instrText(data, b.instr);
  if (!ins.empty()) {
    const char* what = b.state == WarpState::Issuing ? "issuing"
                       : b.state == WarpState::Idle  ? "ready to issue"
                                                     : "waiting for";
    ImGui::Text("%s %s%s", what, ins.c_str(), b.merged > 1 ? "  (the longest segment's)" : "");
  }
  if (b.loc.known()) {
    ImGui::Text("source line %u:%u", b.loc.line, b.loc.col);
    std::string text = sourceLineText(data.source, b.loc.line);
    if (!text.empty()) ImGui::TextColored(ImVec4(0.6f, 0.85f, 1, 1), "  %s", text.c_str());
    ImGui::TextDisabled("click: select this line in every panel");
  }
  ImGui::EndTooltip();
}

// What the timeline draws, kept between frames: timelineView sorts and merges every segment,
// too much to redo each frame. Rebuilt when the snapshot, the resident-blocks setting, the
// visible window or the plot's width in pixels changes.
struct TimelineCache {
  const SessionData* data = nullptr;
  uint64_t generation = 0;
  int resident = 0;
  int64_t total = 0;  // the time axis' extent (see timelineTotal), for (data, resident)
  bool hasView = false;
  CycleWindow window;
  float pixelWidth = 0;
  TimelineView view;
};

TimelineCache& timelineCache() {
  static TimelineCache c;
  return c;
}

// The cache for (data, resident): a new snapshot or setting drops the view.
TimelineCache& cachedTimeline(const SessionData& data, const TimingResult& t, int resident) {
  TimelineCache& c = timelineCache();
  if (c.data != &data || c.generation != data.generation || c.resident != resident) {
    c = TimelineCache{};
    c.data = &data;
    c.generation = data.generation;
    c.resident = resident;
    c.total = wholeRunCycles(t);  // "fit" shows the whole simulated run
  }
  return c;
}

// The bars of `window` at `pixelWidth` pixels, recomputed only when one of them changed.
const TimelineView& cachedView(TimelineCache& c, const TimingResult& t, CycleWindow window, float pixelWidth,
                               double cyclesPerPixel) {
  if (!c.hasView || c.window.start != window.start || c.window.end != window.end || c.pixelWidth != pixelWidth) {
    c.view = timelineView(t.timeline, window, cyclesPerPixel);
    c.hasView = true;
    c.window = window;
    c.pixelWidth = pixelWidth;
  }
  return c.view;
}

// `resident`: the resident-blocks setting `t` is for (t = data.byResident[resident - 1]).
void drawTimeline(const SessionData& data, const TimingResult& t, int resident, UiState& ui) {
  if (t.timeline.empty()) {
    ImGui::TextWrapped("No timeline segments were recorded for this run (timelineBlocks was 0).");
    return;
  }
  if (t.timelineTruncated)
    ImGui::TextWrapped("The timeline shows the run's beginning only: it stopped at %zu segments (kMaxTimelineSegments); "
                       "the counts and the predicted time cover the whole run.", kMaxTimelineSegments);
  ZoomState z = zoomState();
  TimelineCache& cache = cachedTimeline(data, t, resident);
  const int64_t total = cache.total;
  float maxZoom = std::max(1.0f, float(total) / 40.0f);  // at most zoom in to 40 cycles
  *z.zoom = std::clamp(*z.zoom, 1.0f, maxZoom);

  // Controls: zoom, scroll, fit.
  ImGui::PushItemWidth(200);
  ImGui::SliderFloat("zoom", z.zoom, 1.0f, maxZoom, "%.1fx",
                     ImGuiSliderFlags_Logarithmic | ImGuiSliderFlags_AlwaysClamp);
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip(
        "Mouse wheel over the timeline zooms around the mouse;\n"
        "shift + wheel or right-drag scrolls.");
  ImGui::SameLine();
  int64_t width = std::max<int64_t>(1, int64_t(double(total) / double(*z.zoom)));
  int maxStart = int(std::max<int64_t>(0, total - width));
  ImGui::SliderInt("from cycle", z.start, 0, std::max(maxStart, 1), "%d", ImGuiSliderFlags_AlwaysClamp);
  ImGui::PopItemWidth();
  ImGui::SameLine();
  if (ImGui::Button("fit")) *z.zoom = 1, *z.start = 0;
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("show the whole run: cycles 0 to %s", withCommas(total).c_str());
  CycleWindow win = clampWindow(*z.start, width, total);
  *z.start = int(win.start);

  // Geometry: an axis strip, then the rows (scrolling vertically when they do not fit).
  ImDrawList* dl = ImGui::GetWindowDrawList();
  float lineH = ImGui::GetTextLineHeight();
  ImVec2 avail = ImGui::GetContentRegionAvail();
  float scrollbar = ImGui::GetStyle().ScrollbarSize;
  TimeAxis ax;
  ImVec2 axisPos = ImGui::GetCursorScreenPos();
  ax.x0 = axisPos.x + kLabelWidth;
  ax.x1 = axisPos.x + std::max(avail.x - scrollbar - 4, kLabelWidth + 100);
  ax.window = win;
  ax.clockGHz = t.clockGHz > 0 ? t.clockGHz : 1.0;
  float axisH = 2 * lineH + 6;
  ImGui::Dummy(ImVec2(avail.x, axisH));

  const TimelineView& v = cachedView(cache, t, win, ax.x1 - ax.x0, ax.cyclesPerPixel());
  // Rows share the height (4 to 30 px each); when they need less, the legend follows them.
  float rowsAvail = std::max(ImGui::GetContentRegionAvail().y - 3.5f * ImGui::GetTextLineHeightWithSpacing() - 8, 60.0f);
  // Rows share the height, 1 to 30 px each (a long run's hundreds of warps still fit: at under
  // 4 px a row is a strip of color and the labels name every few blocks).
  float rowH = std::clamp(rowsAvail / float(std::max<size_t>(v.rows.size(), 1)), 1.0f, 30.0f);
  if (rowH >= 4) rowH = std::floor(rowH);
  float rowsH = std::min(rowsAvail, rowH * float(v.rows.size()) + 4);
  drawTimeAxis(dl, ax, axisPos, axisH + rowsH);

  bool overflow = rowH * float(v.rows.size()) > rowsAvail + 0.5f;
  ImGui::BeginChild("timeline_rows", ImVec2(avail.x, rowsH), false,
                    ImGuiWindowFlags_NoScrollWithMouse | (overflow ? ImGuiWindowFlags_AlwaysVerticalScrollbar : 0));
  ImDrawList* cl = ImGui::GetWindowDrawList();
  ImVec2 top = ImGui::GetCursorScreenPos();  // already shifted by the vertical scroll
  ImVec2 clipLo = ImGui::GetWindowPos();
  float clipHi = clipLo.y + ImGui::GetWindowHeight();
  cl->AddRectFilled(ImVec2(ax.x0, std::max(top.y, clipLo.y)), ImVec2(ax.x1, clipHi), kPlotBg);
  float barH = rowH >= 8 ? rowH - 2.0f : rowH >= 3 ? rowH - 1.0f : rowH;
  bool smallFont = rowH < lineH;
  // With rows thinner than the font, one label per `labelEvery` blocks (at their first warp).
  const int warpsPerBlock = std::max(t.warpsPerBlock, 1);
  const int64_t labelEvery = std::max<int64_t>(1, int64_t(std::ceil(lineH / (rowH * float(warpsPerBlock)))));
  for (size_t r = 0; r < v.rows.size(); ++r) {
    float y = top.y + float(r) * rowH;
    if (y + rowH < clipLo.y || y > clipHi) continue;  // off screen
    const TimelineRow& row = v.rows[r];
    // Label: "b0 w1" in the block's hue (every row when they fit, else each block's first).
    if (!smallFont || (row.warp == 0 && row.block % labelEvery == 0)) {
      char label[32];
      std::snprintf(label, sizeof label, "b%lld w%d", static_cast<long long>(row.block), row.warp);
      cl->AddText(ImVec2(top.x, smallFont ? y : y + (rowH - lineH) / 2), warpColor(int(row.block)), label);
    }
    if (row.warp == 0 && r > 0 && rowH >= 3) cl->AddLine(ImVec2(top.x, y), ImVec2(ax.x1, y), rgba(255, 255, 255, 40));
    for (const TimelineBar& b : v.bars[r]) {
      float a = std::floor(ax.px(double(b.start))), e = std::max(a + 1.0f, std::floor(ax.px(double(b.end))));
      cl->AddRectFilled(ImVec2(a, y), ImVec2(e, y + barH), warpStateColor(b.state));
      if (ui.sourceLine > 0 && b.loc.line == uint32_t(ui.sourceLine) && b.state != WarpState::Done)
        cl->AddRect(ImVec2(a, y), ImVec2(e, y + barH), rgba(255, 255, 0), 0, 0, 1.5f);
    }
  }
  for (double c : niceTicks(double(win.start), double(win.end), std::max(2, int((ax.x1 - ax.x0) / 90))).values)
    cl->AddLine(ImVec2(ax.px(c), clipLo.y), ImVec2(ax.px(c), clipHi), kGrid);
  ImGui::Dummy(ImVec2(avail.x - scrollbar, float(v.rows.size()) * rowH));

  // Mouse: wheel zooms around the cursor, shift+wheel and right-drag scroll, hover explains,
  // a click selects the segment's source line.
  if (ImGui::IsWindowHovered()) {
    ImGuiIO& io = ImGui::GetIO();
    ImVec2 m = io.MousePos;
    bool inBars = m.x >= ax.x0 && m.x < ax.x1;
    if (io.MouseWheel != 0 && inBars) {
      if (io.KeyShift) {
        *z.start = int(clampWindow(win.start - int64_t(io.MouseWheel * double(width) / 10), width, total).start);
      } else {
        double at = ax.cycleAt(m.x);
        float newZoom = std::clamp(*z.zoom * std::pow(1.25f, io.MouseWheel), 1.0f, maxZoom);
        int64_t newWidth = std::max<int64_t>(1, int64_t(double(total) / double(newZoom)));
        double frac = double(m.x - ax.x0) / double(ax.x1 - ax.x0);
        *z.zoom = newZoom;
        *z.start = int(clampWindow(int64_t(at - frac * double(newWidth)), newWidth, total).start);
      }
    }
    if (ImGui::IsMouseDragging(ImGuiMouseButton_Right)) {
      double dc = double(io.MouseDelta.x) * ax.cyclesPerPixel();
      *z.start = int(clampWindow(win.start - int64_t(dc), width, total).start);
    }
    size_t r = m.y >= top.y ? size_t((m.y - top.y) / rowH) : v.rows.size();
    if (inBars && r < v.rows.size() && m.y - top.y - float(r) * rowH <= barH) {
      double c = ax.cycleAt(m.x);
      const auto& bars = v.bars[r];
      auto it = std::upper_bound(bars.begin(), bars.end(), c,
                                 [](double x, const TimelineBar& b) { return x < double(b.start); });
      // The bar under the mouse; a bar drawn 1 px wide may extend past its end cycle.
      if (it != bars.begin()) {
        const TimelineBar& b = *std::prev(it);
        if (c < double(b.end) + ax.cyclesPerPixel()) {
          drawBarTooltip(data, v.rows[r], b, ax.clockGHz);
          if (ImGui::IsMouseClicked(ImGuiMouseButton_Left) && b.loc.known()) ui.sourceLine = int(b.loc.line);
        }
      }
    }
  }
  ImGui::EndChild();

  // Legend and what is drawn.
  for (int s = 0; s < kWarpStates; ++s) {
    ImVec2 p = ImGui::GetCursorScreenPos();
    dl->AddRectFilled(ImVec2(p.x, p.y + 2), ImVec2(p.x + 14, p.y + lineH - 2),
                      warpStateColor(static_cast<WarpState>(s)));
    ImGui::Dummy(ImVec2(16, lineH));
    ImGui::SameLine();
    ImGui::TextUnformatted(warpStateName(static_cast<WarpState>(s)));
    ImGui::SameLine(0, 14);
  }
  ImGui::NewLine();
  ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyle().Colors[ImGuiCol_TextDisabled]);
  const long long recorded = v.rows.empty() ? 0 : static_cast<long long>(v.rows.back().block + 1);
  std::string what = countOf(static_cast<long long>(v.rows.size()), "warp") + " of the SM's " +
                     (recorded < t.blocksSimulated ? "first " + withCommas(recorded) + " of " : "") +
                     countOf(t.blocksSimulated, "block") + " simulated";
  if (recorded < t.blocksSimulated) what += " (the later blocks are not recorded: their rows would be alike)";
  if (t.extrapolated)
    what += "; the SM runs " + countOf(t.blocksPerSM, "block") + " in all, extrapolated to " + withCommas(t.cycles) +
            " cycles from the simulated " + withCommas(t.simulatedCycles);
  ImGui::TextWrapped("%s; %s drawn as %s (those narrower than a pixel merged); the simulated run ends at cycle %s",
                     what.c_str(), countOf(static_cast<long long>(v.segments), "segment").c_str(),
                     countOf(static_cast<long long>(v.drawn), "bar").c_str(), withCommas(wholeRunCycles(t)).c_str());
  ImGui::PopStyleColor();
}

// ---------------------------------------------------------------------------------------------
// Beside the timeline.

// A horizontal bar filled to `fraction`, its text on the line above (never over the bar).
void meter(float fraction, Rgba color, const std::string& text, float width) {
  ImGui::TextUnformatted(text.c_str());
  ImDrawList* dl = ImGui::GetWindowDrawList();
  ImVec2 p = ImGui::GetCursorScreenPos();
  float h = 10;
  dl->AddRectFilled(p, ImVec2(p.x + width, p.y + h), rgba(45, 45, 52));
  dl->AddRectFilled(p, ImVec2(p.x + width * std::clamp(fraction, 0.0f, 1.0f), p.y + h), color);
  if (fraction > 1) {  // past the end: an arrow head in the margin-free last pixels
    dl->AddTriangleFilled(ImVec2(p.x + width - 8, p.y), ImVec2(p.x + width, p.y + h / 2), ImVec2(p.x + width - 8, p.y + h),
                          rgba(255, 255, 255));
  }
  ImGui::Dummy(ImVec2(width, h));
}

// Where warps spent their cycles: a stacked bar (no text on it) and the shares as a legend below.
void drawStateBar(const TimingResult& t, float width) {
  ImDrawList* dl = ImGui::GetWindowDrawList();
  ImVec2 p = ImGui::GetCursorScreenPos();
  float h = 14, x = p.x;
  ImGui::InvisibleButton("states", ImVec2(width, h));
  bool hovered = ImGui::IsItemHovered();
  float mx = ImGui::GetIO().MousePos.x;
  for (int s = 0; s < kWarpStates; ++s) {
    float w = float(t.warpStateShare[size_t(s)]) * width;
    if (w <= 0) continue;
    dl->AddRectFilled(ImVec2(x, p.y), ImVec2(x + w, p.y + h), warpStateColor(static_cast<WarpState>(s)));
    if (hovered && mx >= x && mx < x + w)
      ImGui::SetTooltip(
          "%s: %s of the warp-cycles before each warp exits\n(Nsight Compute: warp state "
          "statistics)",
          warpStateName(static_cast<WarpState>(s)), formatPercent(t.warpStateShare[size_t(s)], 1).c_str());
    x += w;
  }
  // The legend: each state with a share of at least 0.5%, in the bar's order.
  const float lineH = ImGui::GetTextLineHeight();
  float used = 0;
  bool first = true;
  for (int s = 0; s < kWarpStates; ++s) {
    double share = t.warpStateShare[size_t(s)];
    if (share < 0.005) continue;
    std::string label = std::string(warpStateName(static_cast<WarpState>(s))) + " " + formatPercent(share, 0);
    float itemW = 14 + ImGui::CalcTextSize(label.c_str()).x + 12;
    if (!first && used + itemW < width)
      ImGui::SameLine(0, 8);
    else
      used = 0;
    first = false;
    used += itemW;
    ImVec2 q = ImGui::GetCursorScreenPos();
    dl->AddRectFilled(ImVec2(q.x, q.y + 3), ImVec2(q.x + 10, q.y + lineH - 3), warpStateColor(static_cast<WarpState>(s)));
    ImGui::Dummy(ImVec2(12, lineH));
    ImGui::SameLine(0, 2);
    ImGui::TextUnformatted(label.c_str());
  }
}

// Predicted time against resident warps, every r; the current one marked; DRAM's floor dashed.
void drawResidentCurve(const SessionData& data, int current, UiState& ui, ImVec2 size) {
  const auto& rs = data.byResident;
  ImDrawList* dl = ImGui::GetWindowDrawList();
  ImVec2 o = ImGui::GetCursorScreenPos();
  ImGui::InvisibleButton("resident_curve", size);
  bool hovered = ImGui::IsItemHovered(), clicked = ImGui::IsItemClicked();
  float lineH = ImGui::GetTextLineHeight();
  ImVec2 lo(o.x + 40, o.y + 6), hi(o.x + size.x - 8, o.y + size.y - 3 * lineH - 6);
  double xMax = 1, yMax = 0;
  for (const TimingResult& t : rs) {
    xMax = std::max(xMax, double(t.residentWarpsPerSM));
    yMax = std::max(yMax, t.timeUs);
  }
  yMax = yMax > 0 ? yMax * 1.1 : 1;
  auto at = [&](double x, double y) {
    return ImVec2(lo.x + float(x / xMax) * (hi.x - lo.x), hi.y - float(y / yMax) * (hi.y - lo.y));
  };
  dl->AddRectFilled(lo, hi, kPlotBg);
  char buf[32];
  AxisTicks yTicks = niceTicks(0, yMax, 4), xTicks = niceTicks(0, xMax, 6);
  for (double y : yTicks.values) {
    ImVec2 p = at(0, y);
    dl->AddLine(ImVec2(lo.x, p.y), ImVec2(hi.x, p.y), kGrid);
    std::snprintf(buf, sizeof buf, "%s", tickLabel(y, yTicks.step).c_str());
    dl->AddText(ImVec2(lo.x - ImGui::CalcTextSize(buf).x - 4, p.y - lineH / 2), kAxis, buf);
  }
  for (double x : xTicks.values) {
    ImVec2 p = at(x, 0);
    std::snprintf(buf, sizeof buf, "%s", tickLabel(x, xTicks.step).c_str());
    dl->AddText(ImVec2(p.x - ImGui::CalcTextSize(buf).x / 2, hi.y + 2), kAxis, buf);
  }
  dl->AddRect(lo, hi, kAxis);
  // The floor no number of warps beats: every byte at the DRAM bandwidth, plus the launch. Its
  // label goes under the plot (with the axis' caption), never over the curve.
  const Rgba kFloor = rgba(66, 165, 245);
  std::string caption = "resident warps per SM   (y: predicted us)";
  if (!rs.empty() && rs.back().bandwidthBoundUs > 0) {
    double floorUs = rs.back().bandwidthBoundUs + (rs.back().timeUs - rs.back().smTimeUs);
    for (float x = lo.x; x < hi.x; x += 10)
      dl->AddLine(ImVec2(x, at(0, floorUs).y), ImVec2(std::min(x + 5, hi.x), at(0, floorUs).y), kFloor);
    const float ly = hi.y + 2 * lineH + 4 + lineH / 2;
    for (float x = lo.x; x < lo.x + 18; x += 10) dl->AddLine(ImVec2(x, ly), ImVec2(x + 5, ly), kFloor);
    std::string floorText = "DRAM bound " + formatNumber(floorUs, 2) + " us";
    dl->AddText(ImVec2(lo.x + 24, hi.y + 2 * lineH + 4), kFloor, floorText.c_str());
  }
  dl->AddText(ImVec2(lo.x, hi.y + lineH + 2), kAxis, caption.c_str());
  for (size_t i = 1; i < rs.size(); ++i)
    dl->AddLine(at(rs[i - 1].residentWarpsPerSM, rs[i - 1].timeUs), at(rs[i].residentWarpsPerSM, rs[i].timeUs),
                rgba(220, 220, 230), 1.5f);
  int hoverIdx = -1;
  for (size_t i = 0; i < rs.size(); ++i) {
    ImVec2 p = at(rs[i].residentWarpsPerSM, rs[i].timeUs);
    bool cur = int(i) + 1 == current;
    dl->AddCircleFilled(p, cur ? 6.0f : 3.0f, cur ? rgba(255, 214, 0) : rgba(220, 220, 230));
    if (int(i) + 1 == data.defaultResident) dl->AddCircle(p, 9.0f, rgba(255, 255, 255), 0, 1.0f);
    ImVec2 m = ImGui::GetIO().MousePos;
    if (hovered && std::fabs(m.x - p.x) < 6 && (hoverIdx < 0 || std::fabs(m.y - p.y) < 40)) hoverIdx = int(i);
  }
  if (hoverIdx >= 0) {
    const TimingResult& t = rs[size_t(hoverIdx)];
    ImGui::SetTooltip(
        "%s = %s per SM%s\npredicted %.2f us, limited by %s\nDRAM %.0f GB/s "
        "achieved\nclick: show this timeline",
        countOf(hoverIdx + 1, "resident block").c_str(), countOf(t.residentWarpsPerSM, "warp").c_str(), hoverIdx + 1 == data.defaultResident ? " (the occupancy's)" : "", t.timeUs,
        timeLimiterName(t.limiter), t.achievedDramGBs);
    if (clicked) ui.residentBlocks = hoverIdx + 1;
  }
}

void drawStats(const SessionData& data, const TimingResult& t, int r, UiState& ui) {
  float w = ImGui::GetContentRegionAvail().x;
  ImGui::Text("predicted time  %.2f us", t.timeUs);
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip(
        "SM %.2f us (%s cycles at %.2f GHz) + launch %.2f us\n%s on the "
        "busiest SM of %s%s",
        t.smTimeUs, withCommas(t.cycles).c_str(), t.clockGHz, t.timeUs - t.smTimeUs,
        countOf(t.blocksPerSM, "block").c_str(), countOf(t.activeSMs, "active SM").c_str(),
        t.extrapolated ? "\n(extrapolated from the simulated blocks' steady state)" : "");
  ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyle().Colors[ImGuiCol_TextDisabled]);
  ImGui::TextWrapped("%s cycles on the busiest SM (%s of %s), %s = %s", withCommas(t.cycles).c_str(),
                     countOf(t.blocksPerSM, "block").c_str(), data.kernelName.c_str(),
                     countOf(r, "resident block").c_str(), countOf(t.residentWarpsPerSM, "warp").c_str());
  ImGui::PopStyleColor();
  ImGui::Text("limited by ");
  ImGui::SameLine(0, 0);
  ImGui::TextColored(ImVec4(1.0f, 0.8f, 0.3f, 1), "%s", timeLimiterName(t.limiter));
  ImGui::PushTextWrapPos(ImGui::GetCursorPosX() + w);
  ImGui::TextWrapped("%s", t.limiterWhy.c_str());
  ImGui::PopTextWrapPos();
  ImGui::Spacing();

  ImGui::TextUnformatted("DRAM bandwidth achieved");
  double bw = data.gpu.dramBandwidthGBs;
  char buf[128];
  std::snprintf(buf, sizeof buf, "%.0f of %.0f GB/s (%.0f%%)", t.achievedDramGBs, bw,
                bw > 0 ? 100 * t.achievedDramGBs / bw : 0.0);
  meter(bw > 0 ? float(t.achievedDramGBs / bw) : 0, rgba(66, 165, 245), buf, w);
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip(
        "whole-kernel DRAM bytes / predicted time (%s B / %.2f us);\nthe SM's DRAM share was busy "
        "%.0f%% of its cycles",
        withCommas(t.dramBytes).c_str(), t.timeUs, 100 * t.dramUtilization);
  ImGui::TextUnformatted("bytes in flight (Little's law)");
  std::snprintf(buf, sizeof buf, "%s of %s B to saturate", withCommas(t.dramBytesInFlight).c_str(),
                withCommas(t.littleBytesToSaturate).c_str());
  meter(t.littleBytesToSaturate > 0 ? float(t.dramBytesInFlight / t.littleBytesToSaturate) : 0, rgba(255, 152, 0), buf,
        w);
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip(
        "in flight: the SM's average DRAM bytes outstanding (mean latency %.0f cycles)\n"
        "to saturate = the SM's DRAM share x DRAM latency = %.1f B/cycle x %d cycles\n"
        "more warps (or more bytes per warp) in flight until the bar is full",
        t.dramMeanLatency, t.dramBytesPerCycleSM, data.gpu.dramLatencyCycles);
  ImGui::Spacing();
  ImGui::TextUnformatted("where warps spent their cycles");
  drawStateBar(t, w);
  ImGui::Spacing();
  ImGui::TextUnformatted("time falls until bandwidth saturates");
  std::string flat = flatCurveReason(data.byResident);
  if (!flat.empty()) {
    ImGui::PushTextWrapPos(ImGui::GetCursorPosX() + w);
    ImGui::TextColored(ImVec4(1.0f, 0.8f, 0.3f, 1), "The curve is %s.", flat.c_str());
    ImGui::PopTextWrapPos();
  }
  drawResidentCurve(data, r, ui, ImVec2(w, std::clamp(ImGui::GetContentRegionAvail().y, 140.0f, 260.0f)));
}

}  // namespace

void drawLatencyPanel(const SessionData& data, UiState& ui) {
  if (drawNotReady(data, true)) return;
  if (data.byResident.empty()) {
    ImGui::TextWrapped(
        "No timing results: the timing model did not run for this kernel (see the errors, or "
        "the report's \"timing\" section).");
    return;
  }
  int maxR = int(data.byResident.size());
  if (ui.residentBlocks <= 0) ui.residentBlocks = std::clamp(data.defaultResident, 1, maxR);
  ui.residentBlocks = std::clamp(ui.residentBlocks, 1, maxR);

  ImGui::PushItemWidth(260);
  ImGui::SliderInt("resident blocks per SM", &ui.residentBlocks, 1, maxR, "%d", ImGuiSliderFlags_AlwaysClamp);
  ImGui::PopItemWidth();
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip(
        "How many blocks share the SM at once. The occupancy allows %d (the default);\n"
        "fewer shows what happens with less latency hiding.",
        data.defaultResident);
  const TimingResult& t = data.byResident[size_t(ui.residentBlocks - 1)];
  ImGui::SameLine();
  ImGui::Text("= %s per SM%s", countOf(t.residentWarpsPerSM, "warp").c_str(),
              ui.residentBlocks == data.defaultResident ? " (the occupancy's)" : "");

  ImVec2 avail = ImGui::GetContentRegionAvail();
  float left = std::max(300.0f, avail.x - kStatsWidth - ImGui::GetStyle().ItemSpacing.x);
  ImGui::BeginChild("latency_timeline", ImVec2(left, 0));
  drawTimeline(data, t, ui.residentBlocks, ui);
  ImGui::EndChild();
  ImGui::SameLine();
  ImGui::BeginChild("latency_stats", ImVec2(0, 0));
  drawStats(data, t, ui.residentBlocks, ui);
  ImGui::EndChild();
}

}  // namespace tl::viz
