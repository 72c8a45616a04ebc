// The list of panels (menu order, --panel keys) and the "nothing to show yet" line they share.
// Each panel's drawing lives in its own <Name>Panel.cpp; this file only ties them together.
//
// Expects: an ImGui context inside a window (drawNotReady). Guarantees: allPanels() is the same
// list on every call; findPanel never throws; drawNotReady says why a panel is empty (the
// located errors, or which phase is still running).
#include <imgui.h>

#include "viz/model/Palette.h"
#include "viz/panels/Panels.h"

namespace tl::viz {

const std::vector<PanelInfo>& allPanels() {
  static const std::vector<PanelInfo> panels = {
      {PanelId::Stages, "stages", "Stages", drawStagesPanel},
      {PanelId::Threads, "threads", "Threads", drawThreadsPanel},
      {PanelId::Memory, "memory", "Memory", drawMemoryPanel},
      {PanelId::Occupancy, "occupancy", "Occupancy", drawOccupancyPanel},
      {PanelId::Latency, "latency", "Latency hiding", drawLatencyPanel},
      {PanelId::Fusion, "fusion", "Fusion", drawFusionPanel},
      {PanelId::Timings, "timings", "GPU timings", drawTimingsPanel},
  };
  return panels;
}

const PanelInfo* findPanel(const std::string& key) {
  for (const auto& p : allPanels())
    if (key == p.key) return &p;
  return nullptr;
}

bool drawNotReady(const SessionData& data, bool needsSimulation) {
  if (data.phase == Phase::Empty) {
    ImGui::TextDisabled("compiling...");
    return true;
  }
  if (!data.errors.empty()) {
    ImGui::TextColored(ImVec4(0.95f, 0.35f, 0.3f, 1.0f), "%d error%s: nothing to show until the kernel %s",
                       static_cast<int>(data.errors.size()), data.errors.size() == 1 ? "" : "s",
                       data.kernelName.empty() ? "compiles" : "runs");
    for (const auto& e : data.errors) {
      // The rendered form has the file:line:col, the source line and the caret; monospace
      // (ImGui's default font) keeps the caret under the column.
      ImGui::TextUnformatted(e.rendered.empty() ? e.message.c_str() : e.rendered.c_str());
    }
    return true;
  }
  if (needsSimulation && data.phase != Phase::Simulated) {
    ImGui::TextDisabled("simulating...");
    return true;
  }
  if (needsSimulation && !data.detail) {
    ImGui::TextDisabled("the simulation finished without its detail: nothing to draw");
    return true;
  }
  return false;
}

}  // namespace tl::viz
