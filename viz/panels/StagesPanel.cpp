// The Stages panel: the kernel's source and what each stage made of it (block IR, layouts,
// thread IR, LLVM IR, PTX) side by side, linked line by line. Clicking a line anywhere selects
// its source line (UiState::sourceLine); every stage then highlights the lines that came from
// it and scrolls the first of them into view.
//
// Expects: SessionData::stages (from the Compiled phase on), each with its per-line
// `sourceLine` links (viz/model/LineLinks.h computes them in the Session).
// Guarantees: no line is clipped: each column is as wide as its longest line (up to
// kMaxColumnWidth, then it scrolls sideways) and the table scrolls sideways when the columns do
// not fit; draws only the visible lines of each stage (a clipper), so long PTX costs nothing
// off screen; a stage without text says why (`unavailable`); never blocks or throws.
#include <imgui.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "viz/model/Format.h"
#include "viz/model/LineLinks.h"
#include "viz/model/Palette.h"
#include "viz/panels/Panels.h"

namespace tl::viz {

namespace {

// Column widths: each stage as wide as its longest line within these bounds (pixels).
constexpr float kMinColumnWidth = 220.0f;
constexpr float kMaxColumnWidth = 1100.0f;

// One stage's text split into lines, tabs expanded (the font has no tab glyph).
struct StageLines {
  std::vector<std::string> lines;
  float maxWidth = 0;  // widest line in pixels (the horizontal scroll extent)
};

// What this panel remembers between frames (the panels keep their own view state; the
// selection itself lives in UiState so other panels can follow it).
struct StagesState {
  // Stage name -> column visible, for the stages the user ticked or unticked; the others follow
  // defaultShown() (so PTX appears once a later snapshot has it).
  std::map<std::string, bool> chosen;
  // The split text, rebuilt when a new snapshot arrives.
  const SessionData* cachedData = nullptr;
  uint64_t cachedGeneration = 0;
  Phase cachedPhase = Phase::Empty;
  std::vector<StageLines> text;
  // Scrolling to the selection: once per change of UiState::sourceLine, in every stage but the
  // one the click came from.
  int scrolledFor = -1;
  std::vector<bool> pendingScroll;
  int clickedStage = -1;
};

StagesState& state() {
  static StagesState s;
  return s;
}

std::string expandTabs(std::string_view line) {
  std::string out;
  out.reserve(line.size());
  for (char c : line) {
    if (c == '\t') out.append(4 - out.size() % 4, ' ');
    else if (c != '\r') out.push_back(c);
  }
  return out;
}

void refreshCache(const SessionData& data, StagesState& s) {
  if (s.cachedData == &data && s.cachedGeneration == data.generation && s.cachedPhase == data.phase) return;
  s.cachedData = &data;
  s.cachedGeneration = data.generation;
  s.cachedPhase = data.phase;
  s.text.clear();
  for (const StageText& st : data.stages) {
    StageLines sl;
    size_t longest = 0;
    for (std::string_view l : splitLines(st.text)) {
      sl.lines.push_back(expandTabs(l));
      if (sl.lines.back().size() > sl.lines[longest].size()) longest = sl.lines.size() - 1;
    }
    if (!sl.lines.empty()) sl.maxWidth = ImGui::CalcTextSize(sl.lines[longest].c_str()).x;
    s.text.push_back(std::move(sl));
  }
  s.pendingScroll.assign(data.stages.size(), false);
  s.scrolledFor = -1;  // re-scroll the new text to the selection
}

bool defaultShown(const StageText& st) {
  if (st.name == "PTX") return st.unavailable.empty();
  return st.name == "source" || st.name == "block IR" || st.name == "thread IR";
}

// The source line stage line `i` came from (0: none).
int linkOf(const StageText& st, int i) {
  return i >= 0 && static_cast<size_t>(i) < st.sourceLine.size() ? st.sourceLine[static_cast<size_t>(i)] : 0;
}

// The column of one stage: a scrolling child with line numbers, highlighted lines and clicks.
void drawStageColumn(const SessionData& data, UiState& ui, StagesState& s, size_t k, float height) {
  const StageText& st = data.stages[k];
  const StageLines& sl = s.text[k];
  ImGui::PushID(static_cast<int>(k));
  ImGui::BeginChild("##stage", ImVec2(0, height), true, ImGuiWindowFlags_HorizontalScrollbar);
  if (!st.unavailable.empty()) {
    ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
    ImGui::TextWrapped("%s is not available: %s", st.name.c_str(), st.unavailable.c_str());
    ImGui::PopStyleColor();
  } else if (sl.lines.empty()) {
    ImGui::TextDisabled("(empty)");
  } else {
    const float lineH = ImGui::GetTextLineHeightWithSpacing();
    const int n = static_cast<int>(sl.lines.size());
    char numBuf[16];
    std::snprintf(numBuf, sizeof numBuf, "%d", n);
    const float numW = ImGui::CalcTextSize(numBuf).x + ImGui::CalcTextSize("  ").x;
    const float rowW = std::max(ImGui::GetContentRegionAvail().x, numW + sl.maxWidth + 8);

    // Scroll the first linked line into view once per selection change.
    if (s.pendingScroll[k]) {
      s.pendingScroll[k] = false;
      auto hits = linesForSourceLine(st, ui.sourceLine);
      if (!hits.empty()) {
        float y = static_cast<float>(hits.front()) * lineH;
        float top = ImGui::GetScrollY(), visible = ImGui::GetWindowHeight() - 2 * lineH;
        if (y < top || y > top + visible) ImGui::SetScrollY(std::max(0.0f, y - visible / 3));
      }
    }

    ImDrawList* dl = ImGui::GetWindowDrawList();
    const ImU32 textCol = ImGui::GetColorU32(ImGuiCol_Text);
    const ImU32 numCol = ImGui::GetColorU32(ImGuiCol_TextDisabled);
    ImGuiListClipper clip;
    clip.Begin(n, lineH);
    while (clip.Step()) {
      for (int i = clip.DisplayStart; i < clip.DisplayEnd; ++i) {
        const int link = linkOf(st, i);
        ImVec2 p = ImGui::GetCursorScreenPos();
        if (ui.sourceLine > 0 && link == ui.sourceLine)
          dl->AddRectFilled(p, ImVec2(p.x + rowW, p.y + lineH), highlightColor());
        ImGui::PushID(i);
        if (ImGui::Selectable("##line", false, 0, ImVec2(rowW, 0)) && link > 0) {
          ui.sourceLine = link;
          s.clickedStage = static_cast<int>(k);
        }
        if (ImGui::IsItemHovered()) {
          ImGui::BeginTooltip();
          if (link > 0)
            ImGui::Text("%s line %d came from source line %d:\n  %s\nclick to select it in every stage", st.name.c_str(), i + 1,
                        link, sourceLineText(data.source, link).c_str());
          else
            ImGui::Text("%s line %d has no source location", st.name.c_str(), i + 1);
          ImGui::EndTooltip();
        }
        ImGui::PopID();
        std::snprintf(numBuf, sizeof numBuf, "%d", i + 1);
        float w = ImGui::CalcTextSize(numBuf).x;
        dl->AddText(ImVec2(p.x + numW - w - ImGui::CalcTextSize(" ").x, p.y), numCol, numBuf);
        dl->AddText(ImVec2(p.x + numW, p.y), textCol, sl.lines[static_cast<size_t>(i)].c_str());
      }
    }
  }
  ImGui::EndChild();
  ImGui::PopID();
}

// Under the columns: how many lines of each stage the selected source line became.
void drawCounts(const SessionData& data, const UiState& ui) {
  if (ui.sourceLine <= 0) {
    ImGui::TextDisabled("Click a line in any stage to select its source line and see what it became everywhere.");
    return;
  }
  ImGui::Text("source line %d: %s", ui.sourceLine, sourceLineText(data.source, ui.sourceLine).c_str());
  ImGui::TextUnformatted("became:");
  for (const StageText& st : data.stages) {
    if (st.name == "source") continue;
    ImGui::SameLine();
    if (!st.unavailable.empty()) {
      ImGui::TextDisabled("%s n/a", st.name.c_str());
    } else {
      size_t hits = linesForSourceLine(st, ui.sourceLine).size();
      ImGui::Text("%s %s", st.name.c_str(), countOf(static_cast<long long>(hits), "line").c_str());
    }
    if (ImGui::IsItemHovered())
      ImGui::SetTooltip("lines of %s whose location (loc(L:C), !dbg or .loc) is source line %d", st.name.c_str(),
                        ui.sourceLine);
    if (&st != &data.stages.back()) {
      ImGui::SameLine();
      ImGui::TextDisabled("|");
    }
  }
}

}  // namespace

void drawStagesPanel(const SessionData& data, UiState& ui) {
  if (data.stages.empty()) {
    if (drawNotReady(data, false)) return;
    ImGui::TextDisabled("No stage text: the kernel did not compile far enough.");
    return;
  }
  // Errors still leave the stages that did compile (the source at least): show both.
  if (!data.errors.empty()) drawNotReady(data, false);

  StagesState& s = state();
  refreshCache(data, s);
  auto shown = [&](const StageText& st) {
    auto it = s.chosen.find(st.name);
    return it != s.chosen.end() ? it->second : defaultShown(st);
  };

  // Which stages are columns.
  ImGui::TextUnformatted("Show:");
  for (const StageText& st : data.stages) {
    ImGui::SameLine();
    bool on = shown(st);
    if (ImGui::Checkbox(st.name.c_str(), &on)) s.chosen[st.name] = on;
    if (ImGui::IsItemHovered() && !st.unavailable.empty()) ImGui::SetTooltip("%s", st.unavailable.c_str());
  }
  if (ui.sourceLine > 0) {
    ImGui::SameLine(0, 24);
    if (ImGui::SmallButton("clear selection")) ui.sourceLine = 0;
  }

  // A new selection: every stage but the clicked one scrolls to it.
  if (ui.sourceLine != s.scrolledFor) {
    for (size_t k = 0; k < s.pendingScroll.size(); ++k)
      s.pendingScroll[k] = ui.sourceLine > 0 && static_cast<int>(k) != s.clickedStage;
    s.scrolledFor = ui.sourceLine;
    s.clickedStage = -1;
  }

  std::vector<size_t> cols;
  for (size_t k = 0; k < data.stages.size(); ++k)
    if (shown(data.stages[k])) cols.push_back(k);
  if (cols.empty()) {
    ImGui::TextDisabled("Tick a stage above to show it.");
    return;
  }
  const float countsH = 2 * ImGui::GetFrameHeightWithSpacing() + 4;
  const float tableH = std::max(120.0f, ImGui::GetContentRegionAvail().y - countsH);
  // Every column is as wide as its longest line (so no line is clipped, loc(...) included), up
  // to kMaxColumnWidth, beyond which the column scrolls sideways; when the columns together are
  // wider than the panel, the table scrolls sideways. The columns stay resizable.
  const float avail = ImGui::GetContentRegionAvail().x;
  std::vector<float> widths;
  float total = 0;
  for (size_t k : cols) {
    const StageLines& sl = s.text[k];
    const float numW = ImGui::CalcTextSize(std::to_string(sl.lines.size()).c_str()).x + ImGui::CalcTextSize("  ").x;
    const float pad = 2 * ImGui::GetStyle().WindowPadding.x + ImGui::GetStyle().ScrollbarSize + 12;
    float w = data.stages[k].unavailable.empty() ? numW + sl.maxWidth + pad : 320.0f;
    widths.push_back(std::clamp(w, kMinColumnWidth, kMaxColumnWidth));
    total += widths.back();
  }
  // Narrow stages share the spare width when everything fits.
  if (total < avail)
    for (float& w : widths) w += (avail - total) / static_cast<float>(widths.size()) - ImGui::GetStyle().CellPadding.x * 2;
  ImGuiTableFlags flags = ImGuiTableFlags_Resizable | ImGuiTableFlags_BordersInnerV | ImGuiTableFlags_ScrollX |
                          ImGuiTableFlags_SizingFixedFit;
  if (ImGui::BeginTable("##stages", static_cast<int>(cols.size()), flags, ImVec2(0, tableH))) {
    for (size_t c = 0; c < cols.size(); ++c) {
      const StageText& st = data.stages[cols[c]];
      size_t hits = ui.sourceLine > 0 ? linesForSourceLine(st, ui.sourceLine).size() : 0;
      std::string header = st.name + "  (" + countOf(static_cast<long long>(s.text[cols[c]].lines.size()), "line");
      if (ui.sourceLine > 0 && st.unavailable.empty()) header += ", " + std::to_string(hits) + " highlighted";
      header += ")###" + st.name;
      ImGui::TableSetupColumn(header.c_str(), ImGuiTableColumnFlags_WidthFixed, widths[c]);
    }
    ImGui::TableHeadersRow();
    ImGui::TableNextRow();
    const float childH = tableH - ImGui::GetFrameHeightWithSpacing() - 4;
    for (size_t c = 0; c < cols.size(); ++c) {
      ImGui::TableSetColumnIndex(static_cast<int>(c));
      drawStageColumn(data, ui, s, cols[c], childH);
    }
    ImGui::EndTable();
  }
  drawCounts(data, ui);
}

}  // namespace tl::viz
