// The visualizer's panels: one file each (viz/panels/<Name>Panel.cpp), each a function that
// draws one SessionData (viz/model/Session.h) with Dear ImGui into the current window. The app
// (viz/app/) owns the windows, the kernel controls (editor, sizes, num_warps, GPU) and the
// Session; a panel only reads the data and its own part of UiState.
//
// Expects: a current ImGui context inside ImGui::Begin(...) of the panel's window; any
// SessionData, including Phase::Empty, Compiled-only and one with errors (then the panel says
// what is missing instead of drawing nothing).
// Guarantees: no panel blocks (heavy work happens in the Session's worker) or throws; what a
// panel computes from the data comes from the ImGui-free helpers in viz/model/ (tested there).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "viz/model/Session.h"

namespace tl::viz {

// What the user selected, shared across panels (a source line chosen in Stages highlights the
// same line's instructions in Memory, ...). Panels keep their own settings here as well.
struct UiState {
  // Stages
  int sourceLine = 0;            // selected source line (1-based; 0: none)
  // Threads
  std::string value;             // the chosen value's name ("" : the first load's value)
  int focusWarp = -1;            // the warp outlined in the grid (--warp; -1: none)
  // Memory
  int32_t memInstr = -1;         // chosen memory instruction id (-1: the first global load)
  int memWarp = 0;               // warp within the block (Memory; --warp)
  int64_t memBlock = 0;          // block among SimDetail's kept blocks (Memory, and the Threads masks; --block)
  // Occupancy sliders (0: not yet initialised from the kernel's own point)
  int occThreads = 0, occRegisters = 0, occSharedBytes = 0;
  uint64_t occGeneration = 0;    // the SessionData::generation they were initialised from
  // Latency
  int residentBlocks = 0;        // 0: the occupancy's (SessionData::defaultResident)
  // Screenshots and tests: a frame counter (animations, if any, must be deterministic in it).
  int64_t frame = 0;
};

enum class PanelId { Stages, Threads, Memory, Occupancy, Latency, Fusion, Timings };

struct PanelInfo {
  PanelId id;
  const char* key;    // for --panel: "stages", "threads", "memory", "occupancy", "latency", "fusion", "timings"
  const char* title;  // window title
  void (*draw)(const SessionData& data, UiState& ui);
};

// Every panel, in menu order.
const std::vector<PanelInfo>& allPanels();
// nullptr when no panel has that key.
const PanelInfo* findPanel(const std::string& key);

void drawStagesPanel(const SessionData& data, UiState& ui);
void drawThreadsPanel(const SessionData& data, UiState& ui);
void drawMemoryPanel(const SessionData& data, UiState& ui);
void drawOccupancyPanel(const SessionData& data, UiState& ui);
void drawLatencyPanel(const SessionData& data, UiState& ui);
void drawFusionPanel(const SessionData& data, UiState& ui);
void drawTimingsPanel(const SessionData& data, UiState& ui);

// Draws the "nothing to show yet" line every panel uses: the errors, or "compiling...",
// "simulating..." (returns true when the panel should stop there).
bool drawNotReady(const SessionData& data, bool needsSimulation);

}  // namespace tl::viz
