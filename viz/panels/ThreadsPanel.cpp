// The Threads panel: which warp and lane own which element of a chosen tile value, as a grid
// of colored cells — a cell's hue is its warp, its lightness its lane (Palette laneColor) —
// with warp boundaries outlined, replicated elements marked, masked-off elements (the value's
// load/store mask false in the chosen block) dark and crossed, and a tooltip naming every owner.
// The legend says where each warp's elements are in the tile's coordinates (WarpBox::where:
// "rows 0, 4, 8, ..., 28", never a bounding box).
//
// Expects: SessionData::values (the layout-annotated block IR's tile values, from the Compiled
// phase on) and, once simulated, SessionData::masks; UiState value, memBlock (the block whose
// masks are drawn) and focusWarp (--warp: outlined, the others dimmed).
// Guarantees: the owners come from viz/model/ThreadGrid (Layout::coords, as the lowering uses),
// computed once per (snapshot, value, columns) and cached; each frame draws only the cells in
// view; cells fit the width down to 16 px, then the grid scrolls (or a chosen cell size from 6
// to 32 px, scrolling both ways), never below 4 px, so a large tile never costs millions of
// rectangles; a rank-3 value or a tile with more than kMaxGridOwners (256K) element copies (too
// slow to compute on the UI thread) says so instead. The "show" menu switches to one
// tensor-core instruction's fragment tables (viz/model/ThreadGrid buildFragmentGrid), drawn the
// same way with one warp.
#include <imgui.h>

#include <algorithm>
#include <cstdio>
#include <string>

#include "viz/model/Format.h"
#include "viz/model/Palette.h"
#include "viz/model/ThreadGrid.h"
#include "viz/panels/Panels.h"

namespace tl::viz {

namespace {

// The computed grid of the value on screen, kept until the snapshot, value or folding changes.
struct GridCache {
  const SessionData* data = nullptr;
  uint64_t generation = 0;
  std::string value;
  int64_t columns1D = 0;
  ThreadGrid grid;
};

struct ThreadsState {
  GridCache cache;
  int columns1D = 32;  // a 1-D value is drawn as rows of this many elements
  int cellPx = 0;      // cell size chosen by the user (0: fit, see drawGrid)
  // "value" shows the chosen value's layout; the others one tensor-core instruction's fragments.
  int view = 0;        // 0: the value; 1 + 3 * dtype + operand: fragments
};

// The fragment views: the instruction of each input dtype and its three operands.
const char* const kFragmentDtypes[] = {"f16", "bf16", "tf32", "e4m3"};
const DType kFragmentDtypeOf[] = {DType::F16, DType::BF16, DType::F32, DType::F8E4M3};
const char* const kOperandNames[] = {"A", "B", "C"};

std::string viewName(int view) {
  if (view == 0) return "the value's layout";
  const int d = (view - 1) / 3, o = (view - 1) % 3;
  return std::string("mma fragments: ") + kFragmentDtypes[d] + " " + kOperandNames[o];
}

// What drawGrid needs besides the grid: the warp to outline and the mask of the drawn block.
struct GridOverlay {
  int focusWarp = -1;              // --warp: its cells outlined, the others dimmed
  const ValueMask* mask = nullptr; // the value's load/store mask, if it has one
  int64_t block = 0;               // the block whose mask is drawn
};

// The mask of value `name` (a masked load's result or a masked store's value), or nullptr.
const ValueMask* maskOf(const SessionData& data, const std::string& name) {
  for (const ValueMask& m : data.masks)
    if (m.value == name) return &m;
  return nullptr;
}

ThreadsState& state() {
  static ThreadsState s;
  return s;
}

// The value the panel shows when the user has not chosen one: the first load's result, else
// the first 2-D value, else the first.
const LayoutValue* defaultValue(const SessionData& data) {
  for (const LayoutValue& v : data.values)
    if (v.loaded) return &v;
  for (const LayoutValue& v : data.values)
    if (v.shape.size() == 2) return &v;
  return data.values.empty() ? nullptr : &data.values.front();
}

const LayoutValue* chosenValue(const SessionData& data, const UiState& ui) {
  for (const LayoutValue& v : data.values)
    if (v.name == ui.value) return &v;
  return defaultValue(data);
}

std::string valueLabel(const LayoutValue& v) {
  std::string s = v.name + " : " + v.typeText;
  if (v.loc.line > 0) s += "  (line " + std::to_string(v.loc.line) + ")";
  return s;
}

const ThreadGrid& gridFor(const SessionData& data, const LayoutValue& v, ThreadsState& s) {
  GridCache& c = s.cache;
  int64_t cols = v.shape.size() == 1 ? s.columns1D : 0;
  if (c.data != &data || c.generation != data.generation || c.value != v.name || c.columns1D != cols) {
    c.data = &data;
    c.generation = data.generation;
    c.value = v.name;
    c.columns1D = cols;
    // At most kMaxGridOwners element copies (Layout::coords calls), computed on the UI thread:
    // a larger tile gets `ok` false and its reason, which the panel prints.
    c.grid = buildThreadGrid(*v.layout, v.shape, std::max<int64_t>(cols, 1), kMaxGridOwners);
  }
  return c.grid;
}

// The legend: one swatch per warp (its hue and, in the tile's coordinates, where its elements
// are: "rows 0, 4, 8, ..., 28", never a bounding box that claims rows it does not hold), the
// lane ramp, the marks.
void drawLegend(const ThreadGrid& g, const GridOverlay& ov) {
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const float sw = ImGui::GetTextLineHeight();
  for (const WarpBox& b : g.warps) {
    ImVec2 p = ImGui::GetCursorScreenPos();
    // The warp's lane ramp in a small strip: lane 0 on the left, lane 31 on the right.
    for (int l = 0; l < 32; ++l)
      dl->AddRectFilled(ImVec2(p.x + static_cast<float>(l) * sw * 2 / 32, p.y),
                        ImVec2(p.x + static_cast<float>(l + 1) * sw * 2 / 32, p.y + sw), laneColor(b.warp, l));
    ImGui::Dummy(ImVec2(sw * 2, sw));
    ImGui::SameLine();
    const bool focus = ov.focusWarp == b.warp;
    if (b.cells > 0)
      ImGui::Text("warp %d%s: %s, %s", b.warp, focus ? " (outlined)" : "", countOf(b.cells, "cell").c_str(), b.where.c_str());
    else
      ImGui::Text("warp %d%s: only replicas (%s), %s", b.warp, focus ? " (outlined)" : "",
                  countOf(b.elementsHeld, "element copy", "element copies").c_str(), b.where.c_str());
    if (ImGui::IsItemHovered())
      ImGui::SetTooltip("warp %d holds %s; its hue is warpColor(%d), lighter for higher lanes", b.warp,
                        countOf(b.elementsHeld, "(element, lane) pair", "(element, lane) pairs").c_str(), b.warp);
  }
  ImGui::Spacing();
  ImGui::TextDisabled("hue = warp, lightness = lane (0 dark .. 31 light); white lines = warp boundaries; outlined = the hovered thread's registers");
  if (static_cast<int64_t>(g.owners.size()) > g.numel)  // some element has several owners
    ImGui::TextDisabled("white corner = element held by more than one thread (color: the lowest thread)");
}

// The mask line: what the dark, crossed cells are.
void drawMaskNote(const SessionData& data, const LayoutValue& v, const GridOverlay& ov) {
  if (ov.mask) {
    const ValueMask& m = *ov.mask;
    int64_t live = m.liveCount(ov.block);
    if (live < 0) {
      ImGui::TextDisabled("%s is %s under a mask; block %lld was not probed (the first %s were)", v.name.c_str(),
                          m.store ? "stored" : "loaded", static_cast<long long>(ov.block), countOf(m.blocks, "block").c_str());
      return;
    }
    ImGui::Text("block %lld: %s of %s live; dark crossed cells are masked off (the %s's mask is false%s)",
                static_cast<long long>(ov.block), withCommas(live).c_str(), countOf(m.numel, "element").c_str(),
                m.store ? "store" : "load", m.inLoop ? " in the loop's last iteration" : "");
    if (ImGui::IsItemHovered())
      ImGui::SetTooltip("%s %s line %u: the mask as tl-block computes it for this block; "
                        "masked-off elements are neither read nor written (a load gives them its `other`)",
                        v.name.c_str(), m.store ? "stored at" : "loaded at", m.loc.line);
  } else if (!data.masksNote.empty()) {
    ImGui::TextDisabled("%s", data.masksNote.c_str());
  }
}

// The grid itself, in a scrolling child; only visible cells are drawn.
void drawGrid(const ThreadGrid& g, float height, int cellPx, const GridOverlay& ov) {
  // Cell size: as wide as fits (at most 48 px); a wide tile whose cells would be narrower than
  // 16 px gets readable 20 px cells and scrolls sideways (up to 256 columns), beyond that cells
  // shrink to fit, never below 4 px (so at most ~70k cells are ever in view). Rows fill the
  // height, between 16 px (then the grid scrolls) and 24 px (or the width), and a cell is at
  // most twice as wide as tall.
  const float labelW = 44, headerH = ImGui::GetTextLineHeight() + 4;
  const float fitW = std::floor((ImGui::GetContentRegionAvail().x - labelW - 16) / static_cast<float>(g.cols));
  const float fitH = std::floor((height - headerH - 8) / static_cast<float>(g.rows));
  float cw = fitW >= 16 ? std::min(fitW, 48.0f) : (g.cols <= 256 ? 20.0f : std::max(fitW, 4.0f));
  float ch = std::min(std::clamp(fitH, std::min(16.0f, cw), std::max(24.0f, cw)), 40.0f);
  ch = std::max(ch, 4.0f);
  cw = std::min(cw, 2 * ch);
  if (cellPx > 0) cw = ch = static_cast<float>(cellPx);  // the user's zoom: the grid scrolls both ways
  const float cell = std::min(cw, ch);  // for marks and thresholds
  const ImVec2 content(labelW + cw * static_cast<float>(g.cols) + 4, headerH + ch * static_cast<float>(g.rows) + 4);
  if (content.x > ImGui::GetContentRegionAvail().x || content.y > height)  // the child scrolls
    ImGui::TextDisabled("%lld x %lld cells of %.0f x %.0f px: scroll to see the whole tile (or pick a cell size)",
                        static_cast<long long>(g.rows), static_cast<long long>(g.cols), cw, ch);
  ImGui::SetNextWindowContentSize(content);
  // No taller than the grid (the legend follows right under it).
  const float childH = std::min(height, content.y + ImGui::GetStyle().ScrollbarSize + 6);
  ImGui::BeginChild("##grid", ImVec2(0, childH), false, ImGuiWindowFlags_HorizontalScrollbar);
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImVec2 origin = ImGui::GetCursorScreenPos();  // content top-left (scrolled)
  const ImVec2 gridTL(origin.x + labelW, origin.y + headerH);
  const ImVec2 winTL = ImGui::GetWindowPos(), winSize = ImGui::GetWindowSize();

  // Visible cell range.
  auto clampIdx = [](float v, int64_t n) { return std::clamp<int64_t>(static_cast<int64_t>(v), 0, n); };
  int64_t r0 = clampIdx((winTL.y - gridTL.y) / ch, g.rows), r1 = clampIdx((winTL.y + winSize.y - gridTL.y) / ch + 1, g.rows);
  int64_t c0 = clampIdx((winTL.x - gridTL.x) / cw, g.cols), c1 = clampIdx((winTL.x + winSize.x - gridTL.x) / cw + 1, g.cols);

  // The hovered cell, and the thread under it (its other registers get an outline).
  const ImVec2 mouse = ImGui::GetIO().MousePos;
  int64_t hr = -1, hc = -1, hoverElem = -1;
  if (ImGui::IsWindowHovered() && mouse.x >= gridTL.x && mouse.y >= gridTL.y) {
    hr = static_cast<int64_t>((mouse.y - gridTL.y) / ch);
    hc = static_cast<int64_t>((mouse.x - gridTL.x) / cw);
    hoverElem = g.cellIndex(hr, hc);
  }
  const int hoverThread = hoverElem >= 0 ? g.firstOwner(hoverElem).thread() : -1;

  // Cells are inset by a pixel (a dark grid) when large enough; warp boundaries are white.
  const ImU32 edgeCol = IM_COL32(255, 255, 255, 255);
  const float edgeW = cell >= 8 ? 2.5f : 1.0f, inset = cell >= 8 ? 1.0f : 0.0f;
  const bool labels = cell >= 18;
  char buf[32];
  for (int64_t r = r0; r < r1; ++r) {
    for (int64_t c = c0; c < c1; ++c) {
      int64_t e = g.cellIndex(r, c);
      if (e < 0) continue;
      ImVec2 a(gridTL.x + static_cast<float>(c) * cw, gridTL.y + static_cast<float>(r) * ch);
      ImVec2 b(a.x + cw, a.y + ch);
      auto owners = g.ownersOf(e);
      const ElementOwner& o = owners[0];
      Rgba col = laneColor(o.warp, o.lane);
      const int8_t live = ov.mask ? ov.mask->at(ov.block, e) : 1;
      const bool dimmed = ov.focusWarp >= 0 && o.warp != ov.focusWarp;
      if (live == 0) {
        // Masked off: the warp's hue, dark, crossed; the lane number is not drawn.
        dl->AddRectFilled(ImVec2(a.x + inset, a.y + inset), b, IM_COL32(28, 28, 32, 255));
        dl->AddRect(ImVec2(a.x + inset + 1, a.y + inset + 1), ImVec2(b.x - 1, b.y - 1), (col & 0x00FFFFFF) | 0x90000000);
        if (cell >= 6) dl->AddLine(ImVec2(a.x + inset + 2, b.y - 2), ImVec2(b.x - 2, a.y + inset + 2), (col & 0x00FFFFFF) | 0xB0000000);
      } else {
        dl->AddRectFilled(ImVec2(a.x + inset, a.y + inset), b, dimmed ? ((col & 0x00FFFFFF) | 0x50000000) : col);
      }
      if (owners.size() > 1 && cell >= 5)  // replicated: a corner mark
        dl->AddTriangleFilled(ImVec2(b.x - cell * 0.4f, a.y), ImVec2(b.x, a.y), ImVec2(b.x, a.y + cell * 0.4f),
                              IM_COL32(255, 255, 255, 230));
      if (labels && live != 0 && !dimmed) {
        std::snprintf(buf, sizeof buf, "%d", o.lane);
        ImVec2 ts = ImGui::CalcTextSize(buf);
        dl->AddText(ImVec2(a.x + (cw - ts.x) / 2, a.y + (ch - ts.y) / 2), textColorOn(col), buf);
      }
      if (hoverThread >= 0) {
        for (const ElementOwner& ow : owners)
          if (ow.thread() == hoverThread) {
            dl->AddRect(ImVec2(a.x + 2, a.y + 2), ImVec2(b.x - 1, b.y - 1), IM_COL32(0, 0, 0, 255), 0, 0, 2.0f);
            break;
          }
      }
      if (ov.focusWarp >= 0 && o.warp == ov.focusWarp)
        dl->AddRect(ImVec2(a.x + inset, a.y + inset), b, IM_COL32(255, 214, 0, 255), 0, 0, 1.5f);
      uint8_t edges = g.edges(r, c);
      if (edges & ThreadGrid::kEdgeRight) dl->AddLine(ImVec2(b.x, a.y), ImVec2(b.x, b.y), edgeCol, edgeW);
      if (edges & ThreadGrid::kEdgeBottom) dl->AddLine(ImVec2(a.x, b.y), ImVec2(b.x, b.y), edgeCol, edgeW);
    }
  }
  // Outer border, row and column labels.
  dl->AddRect(gridTL, ImVec2(gridTL.x + cw * static_cast<float>(g.cols) + inset, gridTL.y + ch * static_cast<float>(g.rows) + inset),
              IM_COL32(160, 160, 160, 255), 0, 0, 1.0f);
  const ImU32 labelCol = ImGui::GetColorU32(ImGuiCol_TextDisabled);
  const float lh = ImGui::GetTextLineHeight();
  int64_t rowStep = std::max<int64_t>(1, static_cast<int64_t>(std::ceil(lh * 1.2f / ch)));
  int64_t colStep = std::max<int64_t>(1, static_cast<int64_t>(std::ceil(ImGui::CalcTextSize("0000").x / cw)));
  rowStep = rowStep <= 1 ? 1 : rowStep <= 2 ? 2 : rowStep <= 4 ? 4 : rowStep <= 8 ? 8 : ((rowStep + 15) / 16) * 16;
  colStep = colStep <= 1 ? 1 : colStep <= 2 ? 2 : colStep <= 4 ? 4 : colStep <= 8 ? 8 : ((colStep + 15) / 16) * 16;
  for (int64_t r = r0 - r0 % rowStep; r < r1; r += rowStep) {
    // 1-D: a row is labelled by its first element index.
    std::snprintf(buf, sizeof buf, "%lld", static_cast<long long>(g.oneD ? r * g.cols : r));
    ImVec2 ts = ImGui::CalcTextSize(buf);
    dl->AddText(ImVec2(gridTL.x - ts.x - 4, gridTL.y + static_cast<float>(r) * ch + (ch - lh) / 2), labelCol, buf);
  }
  for (int64_t c = c0 - c0 % colStep; c < c1; c += colStep) {
    std::snprintf(buf, sizeof buf, "%lld", static_cast<long long>(c));
    dl->AddText(ImVec2(gridTL.x + static_cast<float>(c) * cw + 1, origin.y), labelCol, buf);
  }
  ImGui::Dummy(content);

  if (hoverElem >= 0) {
    ImGui::BeginTooltip();
    ImGui::TextUnformatted(describeElement(g, hoverElem).c_str());
    if (ov.mask) {
      int8_t live = ov.mask->at(ov.block, hoverElem);
      ImGui::Text("block %lld: %s", static_cast<long long>(ov.block),
                  live == 1 ? "live (the mask is true)" : live == 0 ? "masked off (the mask is false)" : "not reached");
    }
    const ElementOwner& o = g.firstOwner(hoverElem);
    ImGui::TextDisabled("outlined: the other elements thread %d holds (its %s)", o.thread(),
                        countOf(g.regsPerThread, "register").c_str());
    ImGui::TextDisabled("from Layout::coords(shape, thread, register), as the lowering computes it");
    ImGui::EndTooltip();
  }
  ImGui::EndChild();
}

}  // namespace

void drawThreadsPanel(const SessionData& data, UiState& ui) {
  if (data.values.empty()) {
    if (drawNotReady(data, false)) return;
    ImGui::TextDisabled("No tile value with a layout: the kernel has only scalars, or layouts were not assigned.");
    return;
  }
  ThreadsState& s = state();
  ImGui::SetNextItemWidth(220);
  if (ImGui::BeginCombo("show", viewName(s.view).c_str())) {
    for (int view = 0; view <= 12; ++view)
      if (ImGui::Selectable(viewName(view).c_str(), view == s.view)) s.view = view;
    ImGui::EndCombo();
  }
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip("a tensor-core instruction's fragments: which lane holds which element of A, B and C "
                      "(the PTX ISA's tables, lib/ir/MmaLayout.h; tl-thread --show-fragments)");
  if (s.view > 0) {
    static ThreadGrid fragments;
    static int fragmentView = -1;
    const int d = (s.view - 1) / 3, o = (s.view - 1) % 3;
    if (fragmentView != s.view) {
      fragments = buildFragmentGrid(*mmaInstrFor(kFragmentDtypeOf[d], true), static_cast<MmaOperand>(o));
      fragmentView = s.view;
    }
    ImGui::Text("%s: one warp, %s per lane; cell = the lane (color) and, on hover, its element", fragments.layoutText.c_str(),
                countOf(fragments.regsPerThread, "element").c_str());
    ImGui::TextDisabled("a dot on tensor cores keeps C in #blocked<spt=[1,2], tpw=[8,4], ...> (rows g and g + 8 of a "
                        "fragment are two row-repeats of its warp); pick the dot's result as the value to see it");
    drawGrid(fragments, std::max(160.0f, ImGui::GetContentRegionAvail().y), s.cellPx, GridOverlay{});
    return;
  }
  ImGui::SameLine();
  const LayoutValue* v = chosenValue(data, ui);
  if (!v || !v->layout) {
    ImGui::TextDisabled("No value to draw.");
    return;
  }

  ImGui::SetNextItemWidth(std::min(ImGui::CalcTextSize(valueLabel(*v).c_str()).x + 40, ImGui::GetContentRegionAvail().x * 0.7f));
  if (ImGui::BeginCombo("value", valueLabel(*v).c_str())) {
    for (const LayoutValue& cand : data.values) {
      bool sel = &cand == v;
      if (ImGui::Selectable(valueLabel(cand).c_str(), sel)) ui.value = cand.name;
      if (sel) ImGui::SetItemDefaultFocus();
    }
    ImGui::EndCombo();
  }
  if (v->shape.size() == 1) {
    ImGui::SameLine();
    ImGui::SetNextItemWidth(120);
    static const int kChoices[] = {8, 16, 32, 64, 128};
    std::string cur = std::to_string(s.columns1D) + " per row";
    if (ImGui::BeginCombo("1-D folding", cur.c_str())) {
      for (int c : kChoices)
        if (ImGui::Selectable((std::to_string(c) + " per row").c_str(), c == s.columns1D)) s.columns1D = c;
      ImGui::EndCombo();
    }
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("a 1-D value is drawn as rows of this many consecutive elements");
  }

  ImGui::SameLine();
  ImGui::SetNextItemWidth(110);
  static const int kCellChoices[] = {0, 6, 10, 16, 24, 32};
  std::string curCell = s.cellPx == 0 ? "fit" : std::to_string(s.cellPx) + " px";
  if (ImGui::BeginCombo("cell size", curCell.c_str())) {
    for (int c : kCellChoices)
      if (ImGui::Selectable(c == 0 ? "fit" : (std::to_string(c) + " px").c_str(), c == s.cellPx)) s.cellPx = c;
    ImGui::EndCombo();
  }
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip("fit: as large as fits (a wide tile scrolls); a fixed size zooms in or out and scrolls both ways");

  const ThreadGrid& g = gridFor(data, *v, s);
  if (!g.ok) {
    ImGui::TextWrapped("Cannot draw %s: %s", v->name.c_str(), g.error.c_str());
    return;
  }
  ImGui::Text("%s: %s, %s x 32 lanes, %s per thread, each element held by %s", g.layoutText.c_str(),
              countOf(g.numel, "element").c_str(), countOf(g.numWarps, "warp").c_str(),
              countOf(g.regsPerThread, "register").c_str(), countOf(g.replication, "thread").c_str());
  if (g.oneD)
    ImGui::TextDisabled("1-D value of %s drawn as %s of %s (row label = first element index)",
                        countOf(g.numel, "element").c_str(), countOf(g.rows, "row").c_str(), withCommas(g.cols).c_str());
  else
    ImGui::TextDisabled("rows x columns of the tile; hover a cell for its owners");

  GridOverlay ov;
  ov.focusWarp = ui.focusWarp < g.numWarps ? ui.focusWarp : -1;
  ov.mask = maskOf(data, v->name);
  ov.block = ui.memBlock;
  drawMaskNote(data, *v, ov);

  const float legendH = (static_cast<float>(g.warps.size()) + 2.5f) * ImGui::GetTextLineHeightWithSpacing();
  const float gridH = std::max(160.0f, ImGui::GetContentRegionAvail().y - std::min(legendH, 260.0f));
  drawGrid(g, gridH, s.cellPx, ov);
  ImGui::Spacing();
  ImGui::BeginChild("##legend", ImVec2(0, 0), false);
  drawLegend(g, ov);
  ImGui::EndChild();
}

}  // namespace tl::viz
