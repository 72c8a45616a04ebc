// The Occupancy panel: how many blocks of the kernel one SM holds, and what stops it holding
// more, as NVIDIA's occupancy calculator shows it. Three sliders (threads per block, registers
// per thread, shared memory per block) start at the compiled kernel's own values (the report's
// "occupancy" and "registers": ptxas, a given count or the driver's from a results file, else
// the thread-IR ESTIMATE — the report's registers.source says which); beside them the result
// (blocks and warps per SM, occupancy, the limiter and every limit), and below three curves of
// active warps per SM as one input varies, with the sliders' point and the kernel's point marked.
//
// Expects: a simulated SessionData (report["occupancy"], data.gpu). Guarantees: every number
// drawn comes from viz/model/OccupancyCurves.h (i.e. from sim/Occupancy.h occupancy()), computed
// once per (snapshot, slider values, GPU) and cached, not every frame; the panel only changes
// UiState::occThreads/occRegisters/occSharedBytes.
#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "viz/model/Format.h"
#include "viz/model/OccupancyCurves.h"
#include "viz/model/TimelineView.h"
#include "viz/panels/Panels.h"

namespace tl::viz {
namespace {

constexpr Rgba kSliderMarker = rgba(255, 255, 255);
constexpr Rgba kKernelMarker = rgba(255, 214, 0);
constexpr Rgba kAxis = rgba(170, 170, 180);
constexpr Rgba kGrid = rgba(70, 70, 80);
constexpr Rgba kPlotBg = rgba(28, 28, 34);

// The compiled kernel's inputs and where its register count came from.
struct KernelPoint {
  OccInputs in;
  std::string registerSource;  // "ESTIMATE: ..." / the report's registers.source ("ptxas -v ...")
  std::string sourceText;      // the report's registers.source as written ("" when absent)
  bool estimate = true;
};

KernelPoint kernelPoint(const SessionData& data) {
  KernelPoint k;
  const ReportJson* occ = jsonMember(&data.report, "occupancy");
  k.in.threads = jsonInt(occ, "threads_per_block");
  k.in.registers = jsonInt(occ, "registers_per_thread");
  k.in.shared = jsonInt(occ, "shared_bytes_per_block");
  const ReportJson* r = jsonMember(&data.report, "registers");
  if (r && r->is_object()) {
    k.estimate = jsonBool(r, "estimate", true);
    k.sourceText = jsonString(r, "source");
    const std::string& src = k.sourceText;
    k.registerSource = k.estimate ? "ESTIMATE" + (src.empty() ? "" : ": " + src) : (src.empty() ? "compiler" : src);
  }
  return k;
}

// The curves and results of the panel, kept between frames (about 2,100 occupancy() calls):
// recomputed when the snapshot, a slider or the GPU changes.
struct CurvesCache {
  const SessionData* data = nullptr;
  uint64_t generation = 0;
  OccInputs sliders, kernel;
  std::string gpuKey;
  bool valid = false;
  OccupancyCurves curves;
};

const OccupancyCurves& cachedCurves(const SessionData& data, const OccInputs& sliders, const OccInputs& kernel) {
  static CurvesCache c;
  if (!c.valid || c.data != &data || c.generation != data.generation || !(c.sliders == sliders) ||
      !(c.kernel == kernel) || c.gpuKey != data.gpu.key) {
    c.data = &data;
    c.generation = data.generation;
    c.sliders = sliders;
    c.kernel = kernel;
    c.gpuKey = data.gpu.key;
    c.curves = occupancyCurves(data.gpu, sliders, kernel);
    c.valid = true;
  }
  return c.curves;
}

std::string limitText(int blocks) { return blocks == kOccUnlimited ? "no limit" : std::to_string(blocks); }

ImVec2 lerp2(ImVec2 a, ImVec2 b, float tx, float ty) { return ImVec2(a.x + (b.x - a.x) * tx, a.y + (b.y - a.y) * ty); }

// ---------------------------------------------------------------------------------------------
// Controls and the result.

// The sliders move UiState; `kernel` is the compiled kernel's point, already clamped to `r`.
void drawSliders(const OccSliderRanges& r, const OccInputs& kernel, const KernelPoint& k, const GpuSpec& gpu,
                 UiState& ui) {
  ImGui::PushItemWidth(260);
  int threads = ui.occThreads;
  if (ImGui::SliderInt("threads per block", &threads, r.threads.min, r.threads.max, "%d", ImGuiSliderFlags_AlwaysClamp))
    ui.occThreads = r.threads.clamp(threads);
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip("Whole warps only (steps of 32).\nThe kernel: num_warps x 32 = %d.", kernel.threads);
  ImGui::SliderInt("registers per thread", &ui.occRegisters, r.registers.min, r.registers.max, "%d",
                   ImGuiSliderFlags_AlwaysClamp);
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip("The kernel: %d (%s).\nAllocated per warp in units of %d registers per thread (x 32 lanes).",
                      kernel.registers, k.registerSource.c_str(), gpu.registerAllocUnit / 32);
  ImGui::SliderInt("shared bytes per block", &ui.occSharedBytes, r.shared.min, r.shared.max, "%d",
                   ImGuiSliderFlags_AlwaysClamp | ImGuiSliderFlags_Logarithmic);
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip(
        "Static + dynamic shared memory; up to %s B per block (opt-in maximum).\n"
        "Ctrl+click to type a value.",
        withCommas(r.shared.max).c_str());
  ImGui::PopItemWidth();
  ui.occRegisters = r.registers.clamp(ui.occRegisters);
  ui.occSharedBytes = r.shared.clamp(ui.occSharedBytes);

  if (ImGui::Button("reset to the kernel")) {
    ui.occThreads = kernel.threads;
    ui.occRegisters = kernel.registers;
    ui.occSharedBytes = kernel.shared;
  }
  ImGui::SameLine();
  ImGui::TextDisabled("%d threads, %d registers, %s B shared", kernel.threads, kernel.registers,
                      withCommas(kernel.shared).c_str());
  if (k.estimate)
    ImGui::TextColored(ImVec4(1.0f, 0.75f, 0.3f, 1), "kernel's registers: %s", k.registerSource.c_str());
  else
    ImGui::Text("kernel's registers: %d from %s", kernel.registers, k.registerSource.c_str());
  if (ImGui::IsItemHovered()) {
    // Not an estimate: the count is ptxas', a given one or the driver's from a results file;
    // the report's registers.source says which (docs/sim.md, "Registers").
    if (k.estimate)
      ImGui::SetTooltip("No compiler count (tilelab built without LLVM 19, or the PTX stage failed):\n"
                        "the count is the peak of live 32-bit values in the thread IR + overhead.");
    else
      ImGui::SetTooltip("Where the count comes from (the report's registers.source):\n%s",
                        k.sourceText.empty() ? "not said" : k.sourceText.c_str());
  }
}

void drawResult(const OccupancyResult& o, const GpuSpec& gpu) {
  ImGui::Text("%s/SM", countOf(o.activeBlocksPerSM, "block").c_str());
  ImGui::SameLine(0, 18);
  ImGui::Text("%d of %d warps/SM", o.activeWarpsPerSM, gpu.maxWarpsPerSM);
  ImGui::SameLine(0, 18);
  ImGui::Text("occupancy %s", formatPercent(o.occupancy, kOccupancyPercentDecimals).c_str());
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip("active warps / max warps per SM = %d / %d\n(Nsight Compute: Theoretical Occupancy)",
                      o.activeWarpsPerSM, gpu.maxWarpsPerSM);
  ImGui::SameLine(0, 18);
  Rgba lc = limiterColor(o.limiter);
  ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(lc), "limited by %s", limiterName(o.limiter));
  if (!o.reason.empty()) ImGui::TextColored(ImVec4(1, 0.4f, 0.4f, 1), "%s", o.reason.c_str());

  struct Row {
    OccLimiter l;
    const char* name;
    std::string perBlock, perSM, tip;
    int blocks;
  };
  const Row rows[] = {
      {OccLimiter::Warps, "warps", std::to_string(o.warpsPerBlock) + " warps",
       std::to_string(gpu.maxWarpsPerSM) + " warps",
       "ceil(threads / 32) = " + std::to_string(o.warpsPerBlock) + " warps per block;\nblocks = floor(" +
           std::to_string(gpu.maxWarpsPerSM) + " / " + std::to_string(o.warpsPerBlock) + ")",
       o.blocksByWarps},
      {OccLimiter::Registers, "registers", withCommas(o.registersPerBlock) + " regs",
       withCommas(gpu.registersPerSM) + " regs",
       "registers x 32 rounded up to " + std::to_string(gpu.registerAllocUnit) + " = " +
           withCommas(o.registersPerWarp) + " per warp;\neach of the " + std::to_string(gpu.warpSchedulersPerSM) +
           " sub-partitions holds " + limitText(o.warpsPerSubPartition) +
           " such warps;\nblocks = warps the register file holds / warps per block",
       o.blocksByRegisters},
      {OccLimiter::SharedMemory, "shared memory", withCommas(o.sharedAllocatedPerBlock) + " B",
       withCommas(o.sharedCarveoutBytes) + " B",
       "(" + withCommas(o.sharedBytesPerBlock) + " B + " + withCommas(gpu.reservedSharedPerBlock) +
           " B reserved) rounded up to " + std::to_string(gpu.sharedAllocUnit) + " B;\nout of the " +
           withCommas(o.sharedCarveoutBytes) + " B carve-out the SM is assumed set to",
       o.blocksByShared},
      {OccLimiter::Blocks, "block slots", "1 slot", std::to_string(gpu.maxBlocksPerSM) + " slots",
       "an SM holds at most " + std::to_string(gpu.maxBlocksPerSM) + " blocks", o.blocksBySlots},
  };
  ImGuiTableFlags flags = ImGuiTableFlags_Borders | ImGuiTableFlags_RowBg | ImGuiTableFlags_SizingFixedFit;
  if (!ImGui::BeginTable("limits", 5, flags)) return;
  ImGui::TableSetupColumn("resource");
  ImGui::TableSetupColumn("one block takes");
  ImGui::TableSetupColumn("the SM has");
  ImGui::TableSetupColumn("blocks it allows");
  ImGui::TableSetupColumn("");
  ImGui::TableHeadersRow();
  for (const Row& r : rows) {
    ImGui::TableNextRow();
    bool limiting = o.limitedBy(r.l) && o.activeBlocksPerSM > 0;
    ImGui::TableNextColumn();
    ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(limiterColor(r.l)), "%s", r.name);
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(r.perBlock.c_str());
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", r.tip.c_str());
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(r.perSM.c_str());
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(limitText(r.blocks).c_str());
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", r.tip.c_str());
    ImGui::TableNextColumn();
    if (limiting) ImGui::TextColored(ImVec4(1, 0.85f, 0.2f, 1), "<- limiter");
  }
  ImGui::EndTable();
}

// ---------------------------------------------------------------------------------------------
// One curve.

// Data -> pixels for one chart.
struct Frame {
  ImVec2 lo, hi;  // plot area (top-left, bottom-right)
  double x0 = 0, x1 = 1, y0 = 0, y1 = 1;
  ImVec2 at(double x, double y) const {
    float tx = float((x - x0) / (x1 - x0)), ty = float((y - y0) / (y1 - y0));
    return lerp2(ImVec2(lo.x, hi.y), ImVec2(hi.x, lo.y), std::clamp(tx, 0.f, 1.f), std::clamp(ty, 0.f, 1.f));
  }
  double xAt(float px) const { return x0 + (x1 - x0) * double((px - lo.x) / (hi.x - lo.x)); }
};

void drawAxes(ImDrawList* dl, const Frame& f, const char* xLabel, bool sharedKB) {
  dl->AddRectFilled(f.lo, f.hi, kPlotBg);
  char buf[32];
  for (double y : niceTicks(f.y0, f.y1, 5).values) {
    ImVec2 p = f.at(f.x0, y);
    dl->AddLine(ImVec2(f.lo.x, p.y), ImVec2(f.hi.x, p.y), kGrid);
    std::snprintf(buf, sizeof buf, "%g", y);
    ImVec2 ts = ImGui::CalcTextSize(buf);
    dl->AddText(ImVec2(f.lo.x - ts.x - 4, p.y - ts.y / 2), kAxis, buf);
  }
  // Shared memory ticks fall on whole KB (1024 B) steps, labelled "64K".
  double unit = sharedKB ? 1024.0 : 1.0;
  for (double xu : niceTicks(f.x0 / unit, f.x1 / unit, 6).values) {
    double x = xu * unit;
    ImVec2 p = f.at(x, f.y0);
    dl->AddLine(ImVec2(p.x, f.lo.y), ImVec2(p.x, f.hi.y), kGrid);
    std::snprintf(buf, sizeof buf, sharedKB ? "%gK" : "%g", xu);
    ImVec2 ts = ImGui::CalcTextSize(buf);
    dl->AddText(ImVec2(p.x - ts.x / 2, f.hi.y + 3), kAxis, buf);
  }
  dl->AddRect(f.lo, f.hi, kAxis);
  ImVec2 ls = ImGui::CalcTextSize(xLabel);
  dl->AddText(ImVec2((f.lo.x + f.hi.x - ls.x) / 2, f.hi.y + 3 + ls.y), kAxis, xLabel);
}

void drawDiamond(ImDrawList* dl, ImVec2 c, float r, Rgba fill) {
  dl->AddQuadFilled(ImVec2(c.x, c.y - r), ImVec2(c.x + r, c.y), ImVec2(c.x, c.y + r), ImVec2(c.x - r, c.y), fill);
  dl->AddQuad(ImVec2(c.x, c.y - r), ImVec2(c.x + r, c.y), ImVec2(c.x, c.y + r), ImVec2(c.x - r, c.y), rgba(0, 0, 0),
              1.5f);
}

// A ring, so the kernel's diamond stays visible under it when the two points coincide.
void drawSliderMarker(ImDrawList* dl, ImVec2 c) {
  dl->AddCircle(c, 6.0f, rgba(0, 0, 0), 0, 4.5f);
  dl->AddCircle(c, 6.0f, kSliderMarker, 0, 2.5f);
}

// Sets the slider this curve varies to x (a click on the curve).
void setSlider(OccCurveKind kind, int x, const OccSliderRanges& r, UiState& ui) {
  switch (kind) {
    case OccCurveKind::Threads:
      ui.occThreads = r.threads.clamp(x);
      break;
    case OccCurveKind::Registers:
      ui.occRegisters = r.registers.clamp(x);
      break;
    case OccCurveKind::Shared:
      ui.occSharedBytes = r.shared.clamp(x);
      break;
  }
}

std::string xText(OccCurveKind kind, int x) {
  switch (kind) {
    case OccCurveKind::Threads:
      return std::to_string(x) + " threads/block";
    case OccCurveKind::Registers:
      return std::to_string(x) + " registers/thread";
    case OccCurveKind::Shared:
      return withCommas(x) + " B shared/block";
  }
  return "";
}

void drawCurve(const OccCurve& c, const OccupancyCurves& all, const KernelPoint& k, ImVec2 size, UiState& ui) {
  ImDrawList* dl = ImGui::GetWindowDrawList();
  ImVec2 origin = ImGui::GetCursorScreenPos();
  ImGui::PushID(static_cast<int>(c.kind));
  ImGui::InvisibleButton("curve", size);
  bool hovered = ImGui::IsItemHovered();
  bool clicked = ImGui::IsItemClicked();
  ImGui::PopID();

  ImGui::PushClipRect(origin, ImVec2(origin.x + size.x, origin.y + size.y), true);
  float lineH = ImGui::GetTextLineHeight();
  dl->AddText(origin, rgba(230, 230, 235), c.title.c_str());
  if (c.points.empty()) {
    dl->AddText(ImVec2(origin.x, origin.y + lineH * 2), kAxis, "no points (the GPU description is inconsistent)");
    ImGui::PopClipRect();
    return;
  }
  Frame f;
  f.lo = ImVec2(origin.x + 34, origin.y + 2 * lineH + 8);
  f.hi = ImVec2(origin.x + size.x - 10, origin.y + size.y - 2 * lineH - 8);
  f.x0 = c.xMin;
  f.x1 = std::max(c.xMax, c.xMin + 1);
  f.y0 = 0;
  f.y1 = std::max(all.maxWarpsPerSM, 1) * 1.08;  // headroom: a marker at the maximum stays whole
  bool shared = c.kind == OccCurveKind::Shared;
  drawAxes(dl, f, c.xLabel.c_str(), shared);
  // The SM's maximum, dashed: 100% occupancy.
  float yMax = f.at(f.x0, all.maxWarpsPerSM).y;
  for (float x = f.lo.x; x < f.hi.x; x += 10)
    dl->AddLine(ImVec2(x, yMax), ImVec2(std::min(x + 5, f.hi.x), yMax), kAxis);
  dl->AddText(ImVec2(origin.x, origin.y + lineH + 2), kAxis, "active warps per SM");

  // The curve: threads per block is defined at multiples of 32 only (a line through dots);
  // registers and shared memory are step functions (each value holds until the next point).
  if (c.kind == OccCurveKind::Threads) {
    for (size_t i = 1; i < c.points.size(); ++i)
      dl->AddLine(f.at(c.points[i - 1].x, c.points[i - 1].warpsPerSM), f.at(c.points[i].x, c.points[i].warpsPerSM),
                  limiterColor(c.points[i].limiter), 2.0f);
    for (const OccupancyPoint& p : c.points)
      dl->AddCircleFilled(f.at(p.x, p.warpsPerSM), 2.5f, limiterColor(p.limiter));
  } else {
    for (size_t i = 0; i < c.steps.size(); ++i) {
      const OccStep& s = c.steps[i];
      double xEnd = i + 1 < c.steps.size() ? c.steps[i + 1].x0 : s.x1;
      ImVec2 a = f.at(s.x0, s.warpsPerSM), b = f.at(xEnd, s.warpsPerSM);
      dl->AddLine(a, b, limiterColor(s.limiter), 2.0f);
      if (i + 1 < c.steps.size()) dl->AddLine(b, f.at(xEnd, c.steps[i + 1].warpsPerSM), rgba(120, 120, 130), 1.0f);
    }
  }

  // The kernel's own point and the sliders' point.
  ImVec2 kp = f.at(c.kernelX, c.kernel.warpsPerSM), sp = f.at(c.currentX, c.current.warpsPerSM);
  drawDiamond(dl, kp, 9.0f, kKernelMarker);
  drawSliderMarker(dl, sp);

  // Hover: the nearest point (or a marker) explained; click: move this slider there.
  if (hovered) {
    ImVec2 m = ImGui::GetIO().MousePos;
    auto near = [&](ImVec2 p) { return std::hypot(m.x - p.x, m.y - p.y) < 9.0; };
    if (near(sp)) {
      ImGui::SetTooltip(
          "sliders: %d threads, %d registers, %s B shared\n-> %s/SM, %s/SM (%s), "
          "limited by %s",
          all.current.threads, all.current.registers, withCommas(all.current.shared).c_str(),
          countOf(all.atCurrent.activeBlocksPerSM, "block").c_str(), countOf(all.atCurrent.activeWarpsPerSM, "warp").c_str(),
          formatPercent(all.atCurrent.occupancy, kOccupancyPercentDecimals).c_str(),
          limiterName(all.atCurrent.limiter));
    } else if (near(kp)) {
      ImGui::SetTooltip(
          "the compiled kernel: %d threads, %d registers (%s), %s B shared\n"
          "-> %s/SM, %s/SM (%s), limited by %s",
          all.kernel.threads, all.kernel.registers, k.registerSource.c_str(), withCommas(all.kernel.shared).c_str(),
          countOf(all.atKernel.activeBlocksPerSM, "block").c_str(), countOf(all.atKernel.activeWarpsPerSM, "warp").c_str(),
          formatPercent(all.atKernel.occupancy, kOccupancyPercentDecimals).c_str(),
          limiterName(all.atKernel.limiter));
    } else if (m.x >= f.lo.x && m.x <= f.hi.x) {
      const OccupancyPoint& p = nearestPoint(c, f.xAt(m.x));
      ImVec2 pp = f.at(p.x, p.warpsPerSM);
      dl->AddLine(ImVec2(pp.x, f.lo.y), ImVec2(pp.x, f.hi.y), rgba(255, 255, 255, 90));
      dl->AddCircle(pp, 5.0f, rgba(255, 255, 255), 0, 1.5f);
      ImGui::SetTooltip(
          "%s: %s/SM = %s/SM (%s), limited by %s\n(other inputs at the sliders; "
          "click to move the slider here)",
          xText(c.kind, p.x).c_str(), countOf(p.blocksPerSM, "block").c_str(), countOf(p.warpsPerSM, "warp").c_str(),
          formatPercent(double(p.warpsPerSM) / std::max(all.maxWarpsPerSM, 1), kOccupancyPercentDecimals).c_str(),
          limiterName(p.limiter));
      if (clicked) setSlider(c.kind, p.x, all.ranges, ui);
    }
  }
  ImGui::PopClipRect();
}

void drawLegend() {
  ImDrawList* dl = ImGui::GetWindowDrawList();
  float h = ImGui::GetTextLineHeight();
  auto marker = [&](auto drawFn, const char* label) {
    ImVec2 p = ImGui::GetCursorScreenPos();
    drawFn(ImVec2(p.x + 8, p.y + h / 2));
    ImGui::Dummy(ImVec2(18, h));
    ImGui::SameLine();
    ImGui::TextUnformatted(label);
    ImGui::SameLine(0, 20);
  };
  marker([&](ImVec2 c) { drawSliderMarker(dl, c); }, "sliders");
  marker([&](ImVec2 c) { drawDiamond(dl, c, 8.0f, kKernelMarker); }, "compiled kernel");
  ImGui::TextDisabled("curve colored by the limiter:");
  ImGui::SameLine();
  for (OccLimiter l : {OccLimiter::Warps, OccLimiter::Registers, OccLimiter::SharedMemory, OccLimiter::Blocks}) {
    ImVec2 p = ImGui::GetCursorScreenPos();
    dl->AddLine(ImVec2(p.x, p.y + h / 2), ImVec2(p.x + 18, p.y + h / 2), limiterColor(l), 3.0f);
    ImGui::Dummy(ImVec2(20, h));
    ImGui::SameLine();
    ImGui::TextUnformatted(limiterName(l));
    ImGui::SameLine(0, 14);
  }
  ImGui::NewLine();
}

}  // namespace

void drawOccupancyPanel(const SessionData& data, UiState& ui) {
  if (drawNotReady(data, true)) return;
  if (!data.report.contains("occupancy")) {
    ImGui::TextWrapped("The simulator report has no \"occupancy\" section.");
    return;
  }
  KernelPoint k = kernelPoint(data);
  // Start at the kernel's own point the first time and whenever a new compilation arrives
  // (another kernel, other sizes, num_warps or GPU); the sliders then stay where the user puts them.
  if (ui.occThreads <= 0 || ui.occGeneration != data.generation) {
    ui.occGeneration = data.generation;
    OccInputs start = clampInputs(occupancySliderRanges(data.gpu), k.in);
    ui.occThreads = start.threads;
    ui.occRegisters = start.registers;
    ui.occSharedBytes = start.shared;
  }
  OccSliderRanges ranges = occupancySliderRanges(data.gpu);

  ImGui::Text("%s on %s: %d warp slots, %s registers, %s B shared memory, %d block slots per SM",
              data.kernelName.c_str(), data.gpu.name.c_str(), data.gpu.maxWarpsPerSM,
              withCommas(data.gpu.registersPerSM).c_str(), withCommas(data.gpu.sharedPerSM).c_str(),
              data.gpu.maxBlocksPerSM);
  ImGui::Separator();
  const OccupancyCurves* curves = nullptr;
  if (ImGui::BeginTable("occ_top", 2, ImGuiTableFlags_SizingStretchProp)) {
    ImGui::TableSetupColumn("controls", ImGuiTableColumnFlags_WidthFixed, 470);
    ImGui::TableSetupColumn("result", ImGuiTableColumnFlags_WidthStretch);
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    drawSliders(ranges, clampInputs(ranges, k.in), k, data.gpu, ui);
    ImGui::TableNextColumn();
    // After the sliders (which may have moved this frame), so the result never lags a frame.
    curves = &cachedCurves(data, {ui.occThreads, ui.occRegisters, ui.occSharedBytes}, k.in);
    drawResult(curves->atCurrent, data.gpu);
    ImGui::EndTable();
  } else {
    curves = &cachedCurves(data, {ui.occThreads, ui.occRegisters, ui.occSharedBytes}, k.in);
  }
  const OccupancyCurves& c = *curves;
  ImGui::Separator();
  drawLegend();

  ImVec2 avail = ImGui::GetContentRegionAvail();
  float spacing = ImGui::GetStyle().ItemSpacing.x;
  float w = std::max(200.0f, (avail.x - 2 * spacing) / 3);
  float h = std::max(avail.y - 4, 180.0f);
  for (int i = 0; i < kOccCurves; ++i) {
    if (i) ImGui::SameLine();
    drawCurve(c.curves[i], c, k, ImVec2(w, h), ui);
  }
}

}  // namespace tl::viz
