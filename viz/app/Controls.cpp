// The "Kernel" control window (see Controls.h).
#include "viz/app/Controls.h"

#include "ir/FileRead.h"

#include <imgui.h>
#include <imgui_stdlib.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "sim/Gpu.h"
#include "viz/model/Palette.h"

namespace tl::viz {

namespace {

constexpr int kWarpChoices[] = {1, 2, 4, 8, 16};

const ImVec4 kErrorColor(0.95f, 0.35f, 0.30f, 1.0f);

// The width in pixels of the widest line of `text` (tabs as 4 spaces, as the editor shows them).
float longestLineWidth(const std::string& text) {
  float widest = 0;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(start, end - start);
    for (size_t p = line.find('\t'); p != std::string::npos; p = line.find('\t', p)) line.replace(p, 1, "    ");
    widest = std::max(widest, ImGui::CalcTextSize(line.c_str()).x);
    start = end + 1;
  }
  return widest;
}

// The part of a "NAME=EXPR" before '='.
std::string setName(const std::string& set) { return set.substr(0, set.find('=')); }

}  // namespace

KernelControls::KernelControls(const AppOptions& options)
    : options_(options),
      numWarps_(options.numWarps),
      keepLayouts_(options.keepLayouts),
      wgmma_(options.wgmma),
      gpu_(options.gpu),
      predictTimings_(options.predictTimings) {
  try {  // bounded, regular files only: tl-viz /dev/zero is an error, not an abort
    source_ = readFileBounded(options.kernelPath, FileKind::KernelSource);
  } catch (const FileReadError& e) {
    loadError_ = e.what();
  }
  try {
    gpus_ = listGpus();
  } catch (const std::exception&) {
    gpus_.clear();
  }
  if (std::find(gpus_.begin(), gpus_.end(), gpu_) == gpus_.end()) gpus_.push_back(gpu_);
}

SessionInputs KernelControls::inputs() const {
  SessionInputs in;
  in.path = options_.kernelPath;
  in.source = source_;
  // The command line's --set values, then the fields the user edited (which win).
  for (const auto& s : options_.sets)
    if (!edits_.count(setName(s))) in.sets.push_back(s);
  for (const auto& [name, expr] : edits_) in.sets.push_back(name + "=" + expr);
  in.inputs = options_.inputs;
  in.grid = options_.grid;
  in.numWarps = numWarps_;
  in.keepLayouts = keepLayouts_;
  in.wgmma = wgmma_;
  in.gpu = gpu_;
  in.measuredDir = options_.measuredDir;
  // --block N: keep that block's accesses (the simulator keeps the first few by default).
  if (options_.selection.block) in.detailBlocks = *options_.selection.block + 1;
  in.sampleBlocks = options_.sampleBlocks;
  in.predictTimings = predictTimings_;
  return in;
}

// A new snapshot: the size fields show its launch (except those being edited).
void KernelControls::syncFromData(const SessionData& data) {
  if (data.generation == seenGeneration_) return;
  seenGeneration_ = data.generation;
  if (data.kernelName.empty()) return;  // did not compile: keep the last launch's fields
  names_.clear();
  for (const auto& [name, value] : data.launch.names) {
    if (name == "grid" || name == "num_warps" || data.launch.buffer(name)) continue;
    names_.push_back({name, value});
    if (!edits_.count(name)) fields_[name] = value;
  }
}

bool KernelControls::drawSizes(const SessionData& data) {
  bool submit = false;
  if (names_.empty()) {
    ImGui::TextDisabled("(sizes appear once the kernel compiles)");
    return false;
  }
  if (ImGui::BeginTable("sizes", 2, ImGuiTableFlags_SizingStretchProp)) {
    ImGui::TableSetupColumn("name", ImGuiTableColumnFlags_WidthFixed);
    ImGui::TableSetupColumn("value", ImGuiTableColumnFlags_WidthStretch);
    for (const auto& [name, value] : names_) {
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      bool edited = edits_.count(name) > 0;
      if (edited)
        ImGui::TextColored(ImVec4(1.0f, 0.8f, 0.3f, 1.0f), "%s", name.c_str());
      else
        ImGui::TextUnformatted(name.c_str());
      if (ImGui::IsItemHovered())
        ImGui::SetTooltip("%s = %s in the launch now%s", name.c_str(), value.c_str(),
                          edited ? "\nedited: applied as --set on the next recompile" : "\n(from @launch)");
      ImGui::TableNextColumn();
      ImGui::SetNextItemWidth(-1);
      std::string& field = fields_[name];
      if (ImGui::InputText(("##" + name).c_str(), &field)) edits_[name] = field;
      // Enter or leaving the field after an edit recompiles.
      if (ImGui::IsItemDeactivatedAfterEdit()) submit = true;
    }
    ImGui::EndTable();
  }
  if (!edits_.empty() && ImGui::SmallButton("reset sizes")) {
    edits_.clear();
    for (const auto& [name, value] : names_) fields_[name] = value;
    submit = true;
  }
  (void)data;
  return submit;
}

void KernelControls::drawErrors(const SessionData& data, UiState& ui) {
  if (data.errors.empty()) return;
  ImGui::Separator();
  ImGui::TextColored(kErrorColor, "%d error%s (click one to select its line)", static_cast<int>(data.errors.size()),
                     data.errors.size() == 1 ? "" : "s");
  for (size_t i = 0; i < data.errors.size(); ++i) {
    const VizError& e = data.errors[i];
    std::string head = e.line > 0 ? "line " + std::to_string(e.line) + ":" + std::to_string(e.col) + ": " + e.message
                                  : e.message;
    ImGui::PushID(static_cast<int>(i));
    ImGui::PushStyleColor(ImGuiCol_Text, kErrorColor);
    if (ImGui::Selectable(head.c_str(), e.line > 0 && ui.sourceLine == e.line) && e.line > 0) ui.sourceLine = e.line;
    ImGui::PopStyleColor();
    if (ImGui::IsItemHovered() && !e.rendered.empty()) ImGui::SetTooltip("%s", e.rendered.c_str());
    // The located form: file:line:col, the source line and the caret.
    if (!e.rendered.empty()) ImGui::TextUnformatted(e.rendered.c_str());
    ImGui::PopID();
  }
}

bool KernelControls::draw(const SessionData& data, const Progress& progress, UiState& ui) {
  syncFromData(data);
  bool submit = false;
  ImGuiIO& io = ImGui::GetIO();

  ImGui::TextUnformatted(options_.kernelPath.c_str());
  if (!data.launchText.empty()) {
    ImGui::PushTextWrapPos(0.0f);
    ImGui::TextDisabled("%s", data.launchText.c_str());
    ImGui::PopTextWrapPos();
  }
  if (!loadError_.empty()) ImGui::TextColored(kErrorColor, "%s", loadError_.c_str());

  // Status: progress while the session works.
  if (progress.busy) {
    ImGui::ProgressBar(progress.fraction, ImVec2(-1, 0), progress.step.c_str());
  } else {
    const char* phase = data.phase == Phase::Empty ? "idle" : data.errors.empty() ? "compiled and simulated" : "failed";
    ImGui::TextDisabled("%s (job %llu)", phase, static_cast<unsigned long long>(data.generation));
  }

  // The source editor.
  ImGui::Separator();
  bool dirty = source_ != data.source && data.phase != Phase::Empty;
  if (ImGui::Button(dirty ? "Recompile *" : "Recompile")) submit = true;
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("compile and simulate the edited source (Ctrl+Enter)");
  ImGui::SameLine();
  if (ImGui::Button("Revert")) {
    KernelControls fresh(options_);
    if (fresh.loadError_.empty()) {
      source_ = fresh.source_;
      submit = true;
    }
  }
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("reload the source from %s", options_.kernelPath.c_str());
  float editorHeight = std::max(160.0f, ImGui::GetContentRegionAvail().y * 0.45f);
  ImGuiInputTextFlags flags = ImGuiInputTextFlags_AllowTabInput | ImGuiInputTextFlags_EnterReturnsTrue;
  // The editor is as wide as the longest line (ImGui's multiline field does not scroll sideways
  // on its own) inside a child that does, so no line is clipped.
  const float scrollbar = ImGui::GetStyle().ScrollbarSize;
  const float textW = longestLineWidth(source_) + 2 * ImGui::GetStyle().FramePadding.x + scrollbar + 16;
  const float availW = ImGui::GetContentRegionAvail().x;
  const bool wide = textW > availW;
  ImGui::BeginChild("##editor", ImVec2(0, editorHeight), false, wide ? ImGuiWindowFlags_HorizontalScrollbar : 0);
  const float fieldH = editorHeight - (wide ? scrollbar : 0.0f);
  if (ImGui::InputTextMultiline("##source", &source_, ImVec2(wide ? textW : -1.0f, fieldH), flags)) submit = true;  // Ctrl+Enter
  ImGui::EndChild();
  if (io.KeyCtrl && ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Enter), false)) submit = true;

  // Launch: sizes, num_warps, GPU.
  ImGui::Separator();
  ImGui::TextUnformatted("Launch (as --set; Enter applies)");
  submit |= drawSizes(data);

  // num_warps and the GPU, labelled on the left like the size fields above.
  int shownWarps = numWarps_ > 0 ? numWarps_ : data.numWarps;
  std::string warpsLabel = shownWarps > 0 ? std::to_string(shownWarps) : "launch's";
  if (ImGui::BeginTable("launch", 2, ImGuiTableFlags_SizingStretchProp)) {
    ImGui::TableSetupColumn("name", ImGuiTableColumnFlags_WidthFixed);
    ImGui::TableSetupColumn("value", ImGuiTableColumnFlags_WidthStretch);
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    ImGui::TextUnformatted("num_warps");
    ImGui::TableNextColumn();
    ImGui::SetNextItemWidth(-1);
    if (ImGui::BeginCombo("##num_warps", warpsLabel.c_str())) {
      for (int w : kWarpChoices) {
        if (ImGui::Selectable(std::to_string(w).c_str(), w == shownWarps)) {
          numWarps_ = w;
          submit = true;
        }
      }
      ImGui::EndCombo();
    }
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("warps per block (--num-warps): %d threads", shownWarps * 32);
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    ImGui::TextUnformatted("GPU");
    ImGui::TableNextColumn();
    ImGui::SetNextItemWidth(-1);
    if (ImGui::BeginCombo("##gpu", gpu_.c_str())) {
      for (const auto& g : gpus_) {
        if (ImGui::Selectable(g.c_str(), g == gpu_)) {
          gpu_ = g;
          submit = true;
        }
      }
      ImGui::EndCombo();
    }
    if (ImGui::IsItemHovered())
      ImGui::SetTooltip("the GPU simulated: sim/gpus/%s.json%s", gpu_.c_str(),
                        data.gpu.name.empty() ? "" : ("\n" + data.gpu.name).c_str());
    ImGui::EndTable();
  }
  if (ImGui::Checkbox("keep the source's layouts", &keepLayouts_)) submit = true;
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip("--keep-layouts: no automatic convert_layout through shared memory; data moves between "
                      "threads only at trans and reductions");
  if (ImGui::Checkbox("warpgroup MMAs (wgmma)", &wgmma_)) submit = true;
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip("--wgmma: f16 / bf16 / fp8 / tf32 dots that fit run as wgmma.mma_async (Hopper's sm_90a), as tl-ptx --arch sm_90a");
  if (ImGui::Checkbox("predict the measured shapes", &predictTimings_)) submit = true;
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip("simulate every size measured in compare.json (sampled) for the GPU timings panel");

  drawErrors(data, ui);
  return submit;
}

}  // namespace tl::viz
