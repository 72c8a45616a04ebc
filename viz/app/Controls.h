// The "Kernel" control window: what the student edits, turned into SessionInputs.
//
//   - the kernel's source, editable (Recompile button or Ctrl+Enter);
//   - one text field per launch name (sizes, block sizes: the --set values), from the launch;
//   - num_warps (1, 2, 4, 8, 16) and the GPU (sim/gpus/*.json);
//   - a progress bar while the session works, the errors (click one: its line is selected).
//
// Expects: an ImGui frame, inside the window's Begin/End; the latest SessionData and Progress.
// Guarantees: never blocks (it only reads the snapshot); asks for a recompile by returning true
// from draw(), and inputs() then describes what to compile.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "viz/app/App.h"
#include "viz/model/Session.h"
#include "viz/panels/Panels.h"

namespace tl::viz {

class KernelControls {
 public:
  explicit KernelControls(const AppOptions& options);

  // The inputs as the controls stand now.
  SessionInputs inputs() const;
  // Draws the controls; true when the user asked for a recompile.
  bool draw(const SessionData& data, const Progress& progress, UiState& ui);
  // Where the source came from, and a read error (the file could not be opened) if any.
  const std::string& loadError() const { return loadError_; }

 private:
  AppOptions options_;
  std::string source_;                           // the editor's text
  std::string loadError_;
  std::vector<std::pair<std::string, std::string>> names_;  // launch names shown (last good launch)
  std::map<std::string, std::string> fields_;    // the text of each size field
  std::map<std::string, std::string> edits_;     // fields the user changed: name -> expression
  int numWarps_ = 0;                             // 0: the launch's
  bool keepLayouts_ = false;                     // --keep-layouts
  bool wgmma_ = false;                           // --wgmma
  std::string gpu_;
  std::vector<std::string> gpus_;                // listGpus()
  bool predictTimings_ = true;
  uint64_t seenGeneration_ = 0;

  void syncFromData(const SessionData& data);
  bool drawSizes(const SessionData& data);
  void drawErrors(const SessionData& data, UiState& ui);
};

}  // namespace tl::viz
