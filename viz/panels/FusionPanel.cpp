// The Fusion panel: the kernel as written (fused: one launch, intermediates in registers) against
// the eager version an op-by-op framework would run (one kernel per op, intermediates through
// DRAM; stages/thread/Unfuse.h), as the simulator predicts them: launches, DRAM bytes (simulated
// and the compulsory count), predicted time, each unfused kernel; and, where tl-ptx measured
// the unfused sequence on a GPU, the measured times — with their sizes, which may not be this
// launch's (then the panel compares ratios, never a measured time with this launch's prediction).
//
// Expects: SessionData with report["fusion"] (docs/sim.md, "The report"), optionally measured
// and measuredUnfused. Guarantees: every number comes from viz/model/Comparisons.h; the panel
// changes no UiState (it only reads the data).
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

constexpr Rgba kFused = rgba(215, 215, 222);     // the fused kernel (the unfused ones take hues)
constexpr Rgba kMeasured = rgba(120, 144, 156);  // measured on the GPU
const ImVec4 kWarn(1.0f, 0.75f, 0.3f, 1.0f);

std::string ratioText(const std::optional<double>& r) {
  if (!r) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2fx", *r);
  return buf;
}

std::string us(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f us", v);
  return buf;
}

// The unfused kernel's short name: "softmax_kernel.3_exp" -> "3_exp".
std::string shortName(const std::string& name) {
  size_t dot = name.rfind('.');
  return dot == std::string::npos ? name : name.substr(dot + 1);
}

void summaryTable(const FusionComparison& f) {
  ImGuiTableFlags flags = ImGuiTableFlags_Borders | ImGuiTableFlags_RowBg | ImGuiTableFlags_SizingFixedFit;
  if (!ImGui::BeginTable("fusion_summary", 4, flags)) return;
  ImGui::TableSetupColumn("simulated");
  ImGui::TableSetupColumn("fused");
  ImGui::TableSetupColumn("unfused");
  ImGui::TableSetupColumn("unfused / fused");
  ImGui::TableHeadersRow();
  auto row = [](const char* what, const std::string& a, const std::string& b, const std::string& r, const char* tip) {
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(what);
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", tip);
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(a.c_str());
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(b.c_str());
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(r.c_str());
  };
  row("launches", std::to_string(f.launchesFused), std::to_string(f.launchesUnfused),
      ratioText(ratio(double(f.launchesUnfused), double(f.launchesFused))),
      "kernels launched: each pays its own launch latency, pipeline fill and drain");
  row("DRAM bytes (simulated)", withCommas(f.dramFused), withCommas(f.dramUnfused), ratioText(f.dramRatio),
      "DRAM reads + writes from the cache model, summed over the unfused kernels\n(each unfused kernel starts with "
      "cold caches)");
  row("compulsory bytes", withCommas(f.compulsoryFused), withCommas(f.compulsoryUnfused),
      ratioText(f.compulsoryRatio) + (f.compulsoryEstimated ? " (est.)" : ""),
      "the bytes each kernel must move with an ideal cache (static count, docs/sim.md \"Compulsory bytes\")");
  row("predicted time", us(f.timeFusedUs), us(f.timeUnfusedUs), ratioText(f.timeRatio),
      "the timing model's time, each kernel with its launch overhead, summed");
  ImGui::EndTable();
}

// One horizontal bar: a fused part or unfused kernels stacked; tooltips per part.
struct Part {
  double value;
  Rgba color;
  std::string tip;
};

void stackedBar(const char* label, const std::vector<Part>& parts, double scaleMax, float width,
                const std::string& total) {
  ImDrawList* dl = ImGui::GetWindowDrawList();
  float lineH = ImGui::GetTextLineHeight();
  ImVec2 p = ImGui::GetCursorScreenPos();
  float labelW = 150, h = lineH + 8, barW = std::max(50.0f, width - labelW - 200);
  ImGui::PushID(label);
  ImGui::InvisibleButton("bar", ImVec2(width, h));
  bool hovered = ImGui::IsItemHovered();
  ImGui::PopID();
  dl->AddText(ImVec2(p.x, p.y + 4), rgba(220, 220, 225), label);
  float x = p.x + labelW;
  float mx = ImGui::GetIO().MousePos.x;
  for (const Part& part : parts) {
    float w = scaleMax > 0 ? float(part.value / scaleMax) * barW : 0;
    if (w <= 0) continue;
    dl->AddRectFilled(ImVec2(x, p.y + 2), ImVec2(x + w, p.y + h - 2), part.color);
    dl->AddRect(ImVec2(x, p.y + 2), ImVec2(x + w, p.y + h - 2), rgba(20, 20, 24));
    if (hovered && mx >= x && mx < x + w) ImGui::SetTooltip("%s", part.tip.c_str());
    x += w;
  }
  dl->AddText(ImVec2(x + 6, p.y + 4), rgba(200, 200, 205), total.c_str());
}

Rgba kernelColor(size_t i) { return warpColor(int(i) + 3); }

void barCharts(const FusionComparison& f, const std::optional<MeasuredFusion>& sameLaunch) {
  float width = ImGui::GetContentRegionAvail().x;
  // DRAM bytes.
  ImGui::TextDisabled("DRAM bytes, simulated (each colour: one unfused kernel)");
  double bytesMax = std::max(f.dramFused, f.dramUnfused);
  stackedBar("fused", {{f.dramFused, kFused, "fused kernel: " + withCommas(f.dramFused) + " B"}}, bytesMax, width,
             withCommas(f.dramFused) + " B");
  std::vector<Part> bytes, time;
  for (size_t i = 0; i < f.kernels.size(); ++i) {
    const FusionKernelRow& k = f.kernels[i];
    bytes.push_back({k.readBytes + k.writeBytes, kernelColor(i),
                     k.name + "\n" + withCommas(k.readBytes) + " B read, " + withCommas(k.writeBytes) + " B written"});
    time.push_back({k.timeUs, kernelColor(i), k.name + "\n" + us(k.timeUs) + " predicted, limited by " + k.limiter});
  }
  stackedBar("unfused", bytes, bytesMax, width, withCommas(f.dramUnfused) + " B (" + ratioText(f.dramRatio) + ")");
  ImGui::Spacing();
  // Time: predicted, and measured when it was measured at this launch.
  ImGui::TextDisabled("time, predicted%s", sameLaunch ? " and measured at this launch" : "");
  double timeMax = std::max(f.timeFusedUs, f.timeUnfusedUs);
  if (sameLaunch && sameLaunch->gpuRan)
    timeMax = std::max({timeMax, sameLaunch->unfusedMs * 1000, sameLaunch->fusedMs * 1000});
  stackedBar("fused, predicted", {{f.timeFusedUs, kFused, "fused kernel: " + us(f.timeFusedUs)}}, timeMax, width,
             us(f.timeFusedUs));
  stackedBar("unfused, predicted", time, timeMax, width, us(f.timeUnfusedUs) + " (" + ratioText(f.timeRatio) + ")");
  if (sameLaunch && sameLaunch->gpuRan) {
    stackedBar("fused, measured", {{sameLaunch->fusedMs * 1000, kMeasured, "measured on " + sameLaunch->device}},
               timeMax, width, us(sameLaunch->fusedMs * 1000));
    stackedBar("unfused, measured",
               {{sameLaunch->unfusedMs * 1000, kMeasured,
                 "the whole sequence of " + countOf(sameLaunch->launches, "launch", "launches") + ", measured"}},
               timeMax, width, us(sameLaunch->unfusedMs * 1000) + " (" + ratioText(sameLaunch->timeRatio) + ")");
  }
}

// Unfused / fused as bars: the ratios are what stays comparable across sizes, so measurements
// made at other sizes stand beside this launch's predictions here.
void ratioChart(const FusionComparison& f, const std::vector<MeasuredFusion>& measured) {
  struct Bar {
    std::string label;
    std::optional<double> value;
    Rgba color;
    std::string tip;
  };
  std::vector<Bar> bars = {
      {"bytes, simulated", f.dramRatio, rgba(66, 165, 245), "simulated DRAM bytes, unfused / fused, this launch"},
      {"bytes, compulsory", f.compulsoryRatio, rgba(100, 181, 246), "static compulsory bytes, unfused / fused"},
      {"time, predicted", f.timeRatio, rgba(255, 152, 0), "predicted time, unfused / fused, this launch"}};
  for (const MeasuredFusion& m : measured)
    if (m.gpuRan && m.timeRatio)
      bars.push_back({"time, measured", m.timeRatio, kMeasured,
                      "measured on " + m.device + "\nat " + (m.differences.empty() ? "this launch" : m.sizes)});
  double maxRatio = 1;
  for (const Bar& b : bars)
    if (b.value) maxRatio = std::max(maxRatio, *b.value);
  ImGui::TextUnformatted("unfused / fused");
  ImGui::SameLine();
  ImGui::TextDisabled("(ratios compare across sizes; times do not)");
  float width = ImGui::GetContentRegionAvail().x;
  for (size_t i = 0; i < bars.size(); ++i) {
    const Bar& b = bars[i];
    if (!b.value) continue;
    std::string label = b.label;
    if (i >= 3) label += " " + std::to_string(i - 2);
    ImGui::PushID(int(i));
    stackedBar(label.c_str(), {{*b.value, b.color, b.tip}}, maxRatio, std::min(width, 900.0f), ratioText(b.value));
    ImGui::PopID();
  }
}

void kernelsTable(const FusionComparison& f) {
  // A long list scrolls (the header stays); a short one takes its own height.
  bool scroll = f.kernels.size() > 10;
  ImGuiTableFlags flags = ImGuiTableFlags_Borders | ImGuiTableFlags_RowBg | ImGuiTableFlags_SizingFixedFit |
                          (scroll ? ImGuiTableFlags_ScrollY : 0);
  float h = scroll ? ImGui::GetTextLineHeightWithSpacing() * 11 : 0.0f;
  if (!ImGui::BeginTable("fusion_kernels", 6, flags, ImVec2(0, h))) return;
  ImGui::TableSetupScrollFreeze(0, 1);
  ImGui::TableSetupColumn("unfused kernel");
  ImGui::TableSetupColumn("computes, reads, writes", ImGuiTableColumnFlags_WidthStretch);
  ImGui::TableSetupColumn("DRAM read");
  ImGui::TableSetupColumn("DRAM written");
  ImGui::TableSetupColumn("time");
  ImGui::TableSetupColumn("limited by");
  ImGui::TableHeadersRow();
  for (size_t i = 0; i < f.kernels.size(); ++i) {
    const FusionKernelRow& k = f.kernels[i];
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(kernelColor(i)), "%s", shortName(k.name).c_str());
    if (ImGui::IsItemHovered())
      ImGui::SetTooltip("%s (%s run)", k.name.c_str(), countOf(k.blocksRun, "block").c_str());
    ImGui::TableNextColumn();
    // The description repeats the name before ": "; the rest says what it computes and moves.
    std::string d = k.description;
    if (size_t c = d.find(": "); c != std::string::npos && d.compare(0, c, k.name) == 0) d = d.substr(c + 2);
    ImGui::TextUnformatted(d.c_str());
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(withCommas(k.readBytes).c_str());
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(withCommas(k.writeBytes).c_str());
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(us(k.timeUs).c_str());
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(k.limiter.c_str());
  }
  ImGui::EndTable();
}

void measuredSection(const SessionData& data, const std::vector<MeasuredFusion>& runs) {
  ImGui::TextUnformatted("Measured on a GPU (tl-ptx --unfused)");
  if (runs.empty()) {
    ImGui::TextDisabled(
        "No unfused measurement of this source of %s: run `tl-ptx %s --unfused --results-dir DIR` on a GPU "
        "machine (bench/gpu/run_h200.sh does) and open the folder with --measured DIR.",
        data.kernelName.c_str(), data.inputs.path.c_str());
    return;
  }
  ImGuiTableFlags flags = ImGuiTableFlags_Borders | ImGuiTableFlags_RowBg | ImGuiTableFlags_SizingFixedFit;
  if (!ImGui::BeginTable("fusion_measured", 7, flags)) return;
  ImGui::TableSetupColumn("sizes");
  ImGui::TableSetupColumn("launches");
  ImGui::TableSetupColumn("fused");
  ImGui::TableSetupColumn("unfused");
  ImGui::TableSetupColumn("measured ratio");
  ImGui::TableSetupColumn("traffic ratio (tl-ptx)");
  ImGui::TableSetupColumn("check");
  ImGui::TableHeadersRow();
  for (const MeasuredFusion& m : runs) {
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    if (m.differences.empty())
      ImGui::TextUnformatted("this launch");
    else
      ImGui::TextColored(kWarn, "%s", m.sizes.c_str());
    if (ImGui::IsItemHovered()) {
      std::string tip = m.file + "\n" + m.device;
      if (!m.differences.empty()) {
        tip += "\nmeasured at other sizes than this launch:";
        for (const std::string& d : m.differences) tip += "\n  " + d;
        tip += "\ncompare its ratios with the simulated ones, not its times";
      }
      ImGui::SetTooltip("%s", tip.c_str());
    }
    if (!m.problem.empty()) {
      ImGui::TableNextColumn();
      ImGui::TextColored(kWarn, "%s", m.problem.c_str());
      continue;
    }
    ImGui::TableNextColumn();
    ImGui::Text("1 vs %lld", static_cast<long long>(m.launches));
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(m.gpuRan && m.fusedMs > 0 ? us(m.fusedMs * 1000).c_str() : "-");
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(m.gpuRan ? us(m.unfusedMs * 1000).c_str() : "not run");
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(ratioText(m.timeRatio).c_str());
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(ratioText(m.trafficRatio).c_str());
    if (ImGui::IsItemHovered())
      ImGui::SetTooltip("tl-ptx's compulsory count at the measured sizes:\n%s B fused, %s B unfused",
                        withCommas(m.predictedFusedBytes).c_str(), withCommas(m.predictedUnfusedBytes).c_str());
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(m.check.c_str());
  }
  ImGui::EndTable();
  bool other = std::any_of(runs.begin(), runs.end(), [](const MeasuredFusion& m) { return !m.differences.empty(); });
  if (other) {
    ImGui::PushStyleColor(ImGuiCol_Text, kWarn);
    ImGui::TextWrapped(
        "Sizes in orange differ from this launch (%s): their times are not comparable with the "
        "predictions above; their ratios are (below).",
        data.launchText.c_str());
    ImGui::PopStyleColor();
  }
}

}  // namespace

void drawFusionPanel(const SessionData& data, UiState& ui) {
  (void)ui;
  if (drawNotReady(data, true)) return;
  FusionComparison f = fusionComparison(data.report);
  if (!f.present) {
    ImGui::TextWrapped("Nothing to compare: %s.", f.missing.c_str());
    return;
  }
  std::vector<MeasuredFusion> measured;
  for (const MeasuredRun& r : data.measuredUnfused) measured.push_back(measuredFusion(r, data.launch, data.numWarps));
  std::optional<MeasuredFusion> sameLaunch;
  for (const MeasuredFusion& m : measured)
    if (m.differences.empty() && m.problem.empty()) sameLaunch = m;

  ImGui::Text("%s: fused (1 kernel) against unfused (%s, one per op, intermediates through DRAM)",
              data.kernelName.c_str(), countOf(f.launchesUnfused, "kernel").c_str());
  if (f.launchesUnfused <= 1)
    ImGui::TextDisabled("This kernel is already one op (or one loop): fusion saves nothing here.");
  ImGui::Separator();
  if (ImGui::BeginTable("fusion_top", 2, ImGuiTableFlags_SizingStretchProp)) {
    ImGui::TableSetupColumn("table", ImGuiTableColumnFlags_WidthFixed, 560);
    ImGui::TableSetupColumn("bars", ImGuiTableColumnFlags_WidthStretch);
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    summaryTable(f);
    if (data.measured) {
      MeasuredVsPredicted mv = measuredVsPredicted(*data.measured, data.report, data.launch, data.numWarps);
      if (mv.differences.empty() && mv.errorPct)
        ImGui::Text("fused, measured at this launch: %s (predicted %s, %+.0f%%)", us(mv.measuredMs * 1000).c_str(),
                    us(mv.predictedMs * 1000).c_str(), *mv.errorPct);
      else if (mv.differences.empty())
        ImGui::Text("fused, measured at this launch: %s", us(mv.measuredMs * 1000).c_str());
      else
        ImGui::TextColored(kWarn, "fused measured %s at other sizes (see GPU timings)",
                           us(mv.measuredMs * 1000).c_str());
    }
    ImGui::TableNextColumn();
    barCharts(f, sameLaunch);
    ImGui::EndTable();
  }
  ImGui::Spacing();
  kernelsTable(f);
  ImGui::Spacing();
  ImGui::Separator();
  measuredSection(data, measured);
  ImGui::Spacing();
  ImGui::Separator();
  ratioChart(f, measured);
  ImGui::Spacing();
  ImGui::Separator();
  ImGui::TextDisabled(
      "Why: each unfused kernel reads its inputs from DRAM and writes its result back, so every "
      "intermediate tile crosses DRAM twice;");
  ImGui::TextDisabled(
      "the fused kernel keeps them in registers and shared memory. Each launch also pays its own "
      "launch latency, fill and drain (docs/sim.md, \"Fusion\").");
}

}  // namespace tl::viz
