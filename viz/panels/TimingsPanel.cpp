// The GPU timings panel: what the GPU measured against what the simulator predicts, per kernel
// size (compare.json rows measured from this source: tilelab's kernel, Triton's and PyTorch's,
// each size re-simulated by the Session), and the kernel's default launch (tl-ptx's results, paired
// by source SHA-256 and launch, viz/model/Measured.h) against this session's report; the error of
// each prediction and whether it is within the 20% target; a dot chart of predicted against
// measured on a log scale. The CPU column: tl-cpu's results for this source at this launch
// (paired the same way), beside the GPU's, with the GPU's lead over the CPU.
//
// Expects: SessionData with timings, measured (either may be empty), measuredNote and the report.
// Guarantees: the numbers come from viz/model/Comparisons.h; with nothing paired the panel says
// why (measuredNote: another source, another launch, no recorded hash) and where measurements
// come from; it changes no UiState.
#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "viz/model/Comparisons.h"
#include "viz/model/Format.h"
#include "viz/model/Palette.h"
#include "viz/panels/Panels.h"

namespace tl::viz {
namespace {

constexpr Rgba kMeasuredColor = rgba(66, 165, 245);  // tilelab, measured
constexpr Rgba kPredictedColor = rgba(255, 152, 0);  // the simulator
constexpr Rgba kTritonColor = rgba(200, 200, 205);
constexpr Rgba kTorchColor = rgba(171, 71, 188);
constexpr Rgba kAxis = rgba(170, 170, 180);
const ImVec4 kGood(0.45f, 0.85f, 0.45f, 1), kBad(1.0f, 0.45f, 0.4f, 1), kWarn(1.0f, 0.75f, 0.3f, 1);

std::string ms(double v) {
  if (!(v > 0)) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, v < 0.1 ? "%.4f" : "%.3f", v);
  return buf;
}

std::string pct(const std::optional<double>& e) {
  if (!e) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%+.1f%%", *e);
  return buf;
}

void where(const SessionData& data) {
  ImGui::TextWrapped(
      "Measurements come from a GPU machine: `tl-ptx %s --results-dir DIR` writes a results JSON for "
      "one launch, with the SHA-256 of the source it compiled, and bench/gpu/run_h200.sh runs every kernel "
      "against Triton and PyTorch (bench/results/gpu/compare.json). tl-viz pairs a measurement with this "
      "source only when that hash and the launch match. Results folder: %s.",
      data.inputs.path.c_str(),
      data.measuredDir.empty() ? "none found (--measured DIR)" : data.measuredDir.c_str());
}

// GB/s as the table shows it.
std::string gbText(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, v >= 100 ? "%.0f" : "%.1f", v);
  return buf;
}

// Without a GPU measurement: the CPU's alone, or where to get one.
void cpuOnly(const SessionData& data) {
  if (!data.measuredCpu) {
    ImGui::TextDisabled("CPU: no tl-cpu results for this source at this launch (tl-cpu %s --results-dir DIR).",
                        data.inputs.path.c_str());
    return;
  }
  const MeasuredRun& c = *data.measuredCpu;
  ImGui::Text("CPU, measured by tl-cpu (%d threads, %s): %s ms (min %s), %s GB/s of compulsory bytes", c.threads,
              c.isa.c_str(), ms(c.medianMs).c_str(), ms(c.minMs).c_str(), gbText(c.gbPerS).c_str());
  ImGui::TextDisabled("%s  %s", c.device.c_str(), c.file.c_str());
}

void defaultLaunch(const SessionData& data) {
  ImGui::TextUnformatted("Default launch");
  ImGui::SameLine();
  ImGui::TextDisabled("(%s)", data.launchText.c_str());
  if (!data.measured) {
    ImGui::PushTextWrapPos(0.0f);
    ImGui::TextColored(kWarn, "%s.", data.measuredNote.empty() ? "no measurement for this source" : data.measuredNote.c_str());
    ImGui::PopTextWrapPos();
    if (!data.sourceSha256.empty()) ImGui::TextDisabled("this source: SHA-256 %s", data.sourceSha256.c_str());
    cpuOnly(data);
    return;
  }
  MeasuredVsPredicted m = measuredVsPredicted(*data.measured, data.report, data.launch, data.numWarps);
  const MeasuredRun* cpu = data.measuredCpu ? &*data.measuredCpu : nullptr;
  ImGuiTableFlags flags = ImGuiTableFlags_Borders | ImGuiTableFlags_RowBg | ImGuiTableFlags_SizingFixedFit;
  if (ImGui::BeginTable("default_launch", cpu ? 4 : 3, flags)) {
    ImGui::TableSetupColumn("");
    ImGui::TableSetupColumn("GPU measured");
    ImGui::TableSetupColumn("simulated");
    if (cpu) ImGui::TableSetupColumn(("CPU measured (tl-cpu, " + std::to_string(cpu->threads) + " threads)").c_str());
    ImGui::TableHeadersRow();
    auto row = [&](const char* what, const std::string& a, const std::string& b, const std::string& c) {
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(what);
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(a.c_str());
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(b.c_str());
      if (!cpu) return;
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(c.c_str());
    };
    row("time (ms)", ms(m.measuredMs) + " (min " + ms(m.minMs) + ")", ms(m.predictedMs),
        cpu ? ms(cpu->medianMs) + " (min " + ms(cpu->minMs) + ")" : "");
    row("registers", m.registersMeasured ? std::to_string(m.registersMeasured) : "-",
        std::to_string(m.registersModel) + (m.registersModelEstimated ? " (estimate)" : ""), "-");
    row("blocks per SM", m.blocksPerSMMeasured ? std::to_string(m.blocksPerSMMeasured) : "-",
        std::to_string(m.blocksPerSMModel), "-");
    row("GB/s", gbText(m.gbPerSMeasured) + " (compulsory bytes)", gbText(m.gbPerSPredicted) + " (DRAM bytes)",
        cpu ? gbText(cpu->gbPerS) + " (compulsory bytes, " + cpu->isa + ")" : "");
    ImGui::EndTable();
  }
  if (cpu && cpu->medianMs > 0 && m.measuredMs > 0)
    ImGui::Text("the GPU's kernel is %.1fx the CPU's at this launch (kernel times: a GPU call adds its launch)",
                cpu->medianMs / m.measuredMs);
  if (!m.differences.empty()) {
    ImGui::TextColored(kWarn, "Measured at other sizes than this launch, so no error is given:");
    for (const std::string& d : m.differences) ImGui::BulletText("%s", d.c_str());
  } else if (m.errorPct) {
    ImGui::TextColored(m.within ? kGood : kBad, "prediction %s vs measured: %s the %.0f%% target",
                       pct(m.errorPct).c_str(), m.within ? "within" : "outside", kTimingTargetPercent);
  }
  ImGui::TextDisabled("%s  %s", m.device.c_str(), m.file.c_str());
  if (cpu) ImGui::TextDisabled("%s  %s", cpu->device.c_str(), cpu->file.c_str());
}

void timingsTableUi(const std::vector<TimingsTableRow>& rows) {
  // A long table scrolls in at most 45% of the panel (the header stays); a short one takes its height.
  float maxH = std::max(120.0f, ImGui::GetContentRegionAvail().y * 0.45f);
  bool scroll = ImGui::GetTextLineHeightWithSpacing() * float(rows.size() + 1) > maxH;
  ImGuiTableFlags flags = ImGuiTableFlags_Borders | ImGuiTableFlags_RowBg | ImGuiTableFlags_SizingFixedFit |
                          (scroll ? ImGuiTableFlags_ScrollY : 0);
  if (!ImGui::BeginTable("timings", 8, flags, ImVec2(0, scroll ? maxH : 0.0f))) return;
  ImGui::TableSetupScrollFreeze(0, 1);
  ImGui::TableSetupColumn("shape");
  ImGui::TableSetupColumn("tilelab ms");
  ImGui::TableSetupColumn("Triton ms");
  ImGui::TableSetupColumn("PyTorch ms");
  ImGui::TableSetupColumn("predicted ms");
  ImGui::TableSetupColumn("error");
  ImGui::TableSetupColumn("within 20%");
  ImGui::TableSetupColumn("note", ImGuiTableColumnFlags_WidthStretch);
  ImGui::TableHeadersRow();
  for (const TimingsTableRow& r : rows) {
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(r.shape.c_str());
    if (ImGui::IsItemHovered() && !r.sets.empty()) ImGui::SetTooltip("simulated with --set %s", r.sets.c_str());
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(ms(r.measuredMs).c_str());
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(ms(r.tritonMs).c_str());
    if (ImGui::IsItemHovered() && r.vsTriton) ImGui::SetTooltip("tilelab / Triton = %.2fx", *r.vsTriton);
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(ms(r.torchMs).c_str());
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(ms(r.predictedMs).c_str());
    ImGui::TableNextColumn();
    if (r.errorPct)
      ImGui::TextColored(r.within ? kGood : kBad, "%s", pct(r.errorPct).c_str());
    else
      ImGui::TextDisabled("-");
    if (ImGui::IsItemHovered() && r.errorPct)
      ImGui::SetTooltip("100 x (predicted - measured) / measured = 100 x (%s - %s) / %s", ms(r.predictedMs).c_str(),
                        ms(r.measuredMs).c_str(), ms(r.measuredMs).c_str());
    ImGui::TableNextColumn();
    if (r.errorPct) ImGui::TextColored(r.within ? kGood : kBad, "%s", r.within ? "yes" : "no");
    ImGui::TableNextColumn();
    ImGui::TextDisabled("%s", r.note.c_str());
  }
  ImGui::EndTable();
}

// Log-scale ticks: 1, 2, 5 x 10^k inside [lo, hi]; every 1..9 x 10^k when that gives fewer than 4.
std::vector<double> logTicks(double lo, double hi) {
  for (bool all : {false, true}) {
    std::vector<double> t;
    for (int k = int(std::floor(std::log10(lo))); k <= int(std::ceil(std::log10(hi))); ++k)
      for (int m = 1; m <= 9; ++m) {
        if (!all && m != 1 && m != 2 && m != 5) continue;
        double v = m * std::pow(10.0, k);
        if (v >= lo * 0.999 && v <= hi * 1.001) t.push_back(v);
      }
    if (t.size() >= 4 || all) return t;
  }
  return {};
}

// One line per row: measured and predicted dots joined (the error), Triton and PyTorch beside.
void dotChart(const std::vector<TimingsTableRow>& rows) {
  double lo = INFINITY, hi = 0;
  for (const TimingsTableRow& r : rows)
    for (double v : {r.measuredMs, r.predictedMs, r.tritonMs, r.torchMs})
      if (v > 0) lo = std::min(lo, v), hi = std::max(hi, v);
  if (!(hi > 0)) return;
  lo /= 1.5;
  hi *= 1.5;
  ImDrawList* dl = ImGui::GetWindowDrawList();
  float lineH = ImGui::GetTextLineHeight();
  float width = ImGui::GetContentRegionAvail().x;
  float rowH = std::clamp((ImGui::GetContentRegionAvail().y - 3 * lineH) / float(std::max<size_t>(rows.size(), 1)),
                          lineH + 2, 3 * lineH);
  ImVec2 o = ImGui::GetCursorScreenPos();
  float labelW = 150;
  ImVec2 plo(o.x + labelW, o.y), phi(o.x + width - 20, o.y + rowH * float(rows.size()));
  ImGui::InvisibleButton("dots", ImVec2(width, phi.y - o.y + 2 * lineH + 4));
  bool hovered = ImGui::IsItemHovered();
  ImVec2 m = ImGui::GetIO().MousePos;
  auto xAt = [&](double v) {
    return plo.x + float((std::log10(v) - std::log10(lo)) / (std::log10(hi) - std::log10(lo))) * (phi.x - plo.x);
  };
  dl->AddRectFilled(plo, phi, rgba(24, 24, 30));
  for (double t : logTicks(lo, hi)) {
    float x = xAt(t);
    dl->AddLine(ImVec2(x, plo.y), ImVec2(x, phi.y), rgba(255, 255, 255, 30));
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", t);
    dl->AddText(ImVec2(x - ImGui::CalcTextSize(buf).x / 2, phi.y + 2), kAxis, buf);
  }
  dl->AddText(ImVec2(plo.x, phi.y + lineH + 2), kAxis, "ms (log scale)");
  for (size_t i = 0; i < rows.size(); ++i) {
    const TimingsTableRow& r = rows[i];
    float y = plo.y + rowH * (float(i) + 0.5f);
    dl->AddText(ImVec2(o.x, y - lineH / 2), rgba(220, 220, 225), r.shape.c_str());
    if (r.measuredMs > 0 && r.predictedMs > 0)
      dl->AddLine(ImVec2(xAt(r.measuredMs), y), ImVec2(xAt(r.predictedMs), y),
                  ImGui::ColorConvertFloat4ToU32(r.within ? kGood : kBad), 3.0f);
    struct Dot {
      double v;
      Rgba c;
      float radius;
      const char* who;
    };
    const Dot dots[] = {{r.torchMs, kTorchColor, 3.5f, "PyTorch"},
                        {r.tritonMs, kTritonColor, 3.5f, "Triton"},
                        {r.measuredMs, kMeasuredColor, 5.5f, "tilelab, measured"},
                        {r.predictedMs, kPredictedColor, 5.5f, "tilelab, predicted"}};
    for (const Dot& d : dots) {
      if (!(d.v > 0)) continue;
      ImVec2 p(xAt(d.v), y);
      dl->AddCircleFilled(p, d.radius, d.c);
      if (hovered && std::hypot(m.x - p.x, m.y - p.y) < d.radius + 3)
        ImGui::SetTooltip("%s: %s\n%s ms%s%s", r.shape.c_str(), d.who, ms(d.v).c_str(),
                          d.c == kPredictedColor && r.errorPct ? "\nerror " : "",
                          d.c == kPredictedColor && r.errorPct ? pct(r.errorPct).c_str() : "");
    }
  }
  // Legend.
  float x = o.x;
  float ly = phi.y + lineH + 2;
  x = plo.x + 120;
  const std::pair<Rgba, const char*> legend[] = {{kMeasuredColor, "tilelab measured"},
                                                 {kPredictedColor, "predicted"},
                                                 {kTritonColor, "Triton"},
                                                 {kTorchColor, "PyTorch"}};
  for (const auto& [c, name] : legend) {
    dl->AddCircleFilled(ImVec2(x + 5, ly + lineH / 2), 4.5f, c);
    dl->AddText(ImVec2(x + 13, ly), kAxis, name);
    x += 26 + ImGui::CalcTextSize(name).x;
  }
}

}  // namespace

void drawTimingsPanel(const SessionData& data, UiState& ui) {
  (void)ui;
  // The measured numbers do not need the simulation; the predictions do.
  if (drawNotReady(data, false)) return;
  if (data.phase != Phase::Simulated) {
    // Measured results are read with the simulation (they need the GPU description).
    ImGui::TextDisabled("simulating...");
    return;
  }
  defaultLaunch(data);
  ImGui::Separator();
  std::vector<TimingsTableRow> rows = timingsTable(data.timings);
  if (rows.empty()) {
    ImGui::TextDisabled("No per-size comparison rows (compare.json) for this source.");
    where(data);
    return;
  }
  TimingsSummary s = summarizeTimings(rows);
  ImGui::Text("Measured against simulated, per size (%s):", countOf(s.rows, "row").c_str());
  ImGui::SameLine();
  if (s.compared)
    ImGui::TextColored(s.within == s.compared ? kGood : kWarn,
                       "%d of %d within %.0f%%, mean |error| %.1f%%, max %.1f%%", s.within, s.compared,
                       kTimingTargetPercent, s.meanAbsErrorPct, s.maxAbsErrorPct);
  else
    ImGui::TextDisabled(data.timingsPending ? "predicting..." : "no row could be predicted");
  timingsTableUi(rows);
  ImGui::Spacing();
  dotChart(rows);
}

}  // namespace tl::viz
