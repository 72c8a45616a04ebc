// The Memory panel: for one memory instruction, one block and one warp, the bytes each lane
// touches drawn over 32-byte sectors and 128-byte lines (global memory) or over the 32 banks
// and the wavefronts serving them (shared memory), with this warp-instruction's requests,
// sectors/request and efficiency beside the whole kernel's figures for the instruction; below,
// the per-instruction table of the whole kernel and the Nsight Compute metrics.
//
// Expects: a Simulated SessionData with `detail` (the first blocks' WarpAccess records and the
// thread IR's instruction table), `memInstrs` and the report's `memory` section (docs/sim.md).
// Guarantees: the picture and its counts come from viz/model/MemoryView, which calls the
// simulator's own coalescing (sim/Coalescing.h) and bank (sim/Banks.h) models, computed once
// per selection and cached; report fields that are missing show as "-", never throw.
#include <imgui.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>
#include <set>
#include <string>

#include "viz/model/Format.h"
#include "viz/model/MemoryView.h"
#include "viz/model/Palette.h"
#include "viz/panels/Panels.h"

namespace tl::viz {

namespace {

using Json = ReportJson;

// The view of the current selection, recomputed when the snapshot or the selection changes.
struct ViewCache {
  const SessionData* data = nullptr;
  uint64_t generation = 0;
  int32_t instr = -2;
  int warp = -1;
  int64_t block = -1;
  int execution = -1;
  std::vector<int64_t> blocks;                  // blocks with records in detail->accesses
  std::vector<std::vector<WarpAccess>> execs;   // executions of (block, warp, instr)
  MemoryView view;
};

struct MemoryState {
  ViewCache cache;
  int execution = 0;  // which execution of the instruction (loops run it several times)
  int32_t lastInstr = -2;
};

MemoryState& state() {
  static MemoryState s;
  return s;
}

// ---- Report helpers (never throw) ----------------------------------------------------------

// The report's entry for instruction `instr` (memory.instructions[] with that id), or null.
const Json* reportInstr(const SessionData& data, int32_t instr) {
  const Json* mem = jsonMember(&data.report, "memory");
  const Json* list = mem ? jsonMember(mem, "instructions") : nullptr;
  if (!list || !list->is_array()) return nullptr;
  for (const Json& e : *list)
    if (jsonInt(&e, "instr", -1) == instr) return &e;
  return nullptr;
}

std::string hexAddr(uint64_t a) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(a));
  return buf;
}

std::string instrLabel(const MemInstr& m) {
  return m.op + "  " + std::to_string(m.loc.line) + ":" + std::to_string(m.loc.col) + "  (instr " + std::to_string(m.instr) + ")";
}

// ---- Selection -----------------------------------------------------------------------------

const MemInstr* chosenInstr(const SessionData& data, UiState& ui) {
  for (const MemInstr& m : data.memInstrs)
    if (m.instr == ui.memInstr) return &m;
  for (const MemInstr& m : data.memInstrs)
    if (m.space == MemSpace::Global && !m.store) {
      ui.memInstr = m.instr;
      return &m;
    }
  ui.memInstr = data.memInstrs.front().instr;
  return &data.memInstrs.front();
}

void refreshView(const SessionData& data, const UiState& ui, MemoryState& s) {
  ViewCache& c = s.cache;
  const SimDetail& d = *data.detail;
  if (c.data != &data || c.generation != data.generation) {
    c = ViewCache{};
    c.data = &data;
    c.generation = data.generation;
    std::set<int64_t> blocks;
    for (const WarpAccess& a : d.accesses) blocks.insert(a.block);
    c.blocks.assign(blocks.begin(), blocks.end());
  }
  if (c.instr == ui.memInstr && c.warp == ui.memWarp && c.block == ui.memBlock && c.execution == s.execution) return;
  if (c.instr != ui.memInstr || c.warp != ui.memWarp || c.block != ui.memBlock) {
    int groups = 1;
    if (ui.memInstr >= 0 && static_cast<size_t>(ui.memInstr) < d.instrs.size() && d.instrs[static_cast<size_t>(ui.memInstr)])
      groups = accessGroupsPerExecution(*d.instrs[static_cast<size_t>(ui.memInstr)]);
    c.execs = warpExecutions(d.accesses, ui.memBlock, ui.memWarp, ui.memInstr, groups);
  }
  c.instr = ui.memInstr;
  c.warp = ui.memWarp;
  c.block = ui.memBlock;
  s.execution = std::clamp(s.execution, 0, std::max(0, static_cast<int>(c.execs.size()) - 1));
  c.execution = s.execution;
  c.view = c.execs.empty() ? MemoryView{} : buildMemoryView(c.execs[static_cast<size_t>(s.execution)]);
  if (c.execs.empty())
    c.view.error = "warp " + std::to_string(ui.memWarp) + " of block " + std::to_string(ui.memBlock) +
                   " never ran this instruction with an active lane (every lane masked off, or a branch it did not take)";
}

// ---- Global picture ------------------------------------------------------------------------

void drawGlobalPicture(const MemoryView& v, float height) {
  const GlobalView& g = v.global;
  if (!g.note.empty()) ImGui::TextDisabled("%s", g.note.c_str());
  if (g.lines.empty()) {
    ImGui::TextDisabled("no bytes touched");
    return;
  }
  const float lh = ImGui::GetTextLineHeight();
  const float addrW = ImGui::CalcTextSize("0x0000000000  ").x;
  const float avail = ImGui::GetContentRegionAvail().x - addrW - 12 - (g.requests > 1 ? ImGui::CalcTextSize("req 00,00").x + 10 : 0);
  const float bytePx = std::clamp(std::floor(avail / kLineBytes * 4) / 4, 2.0f, 10.0f);
  const float lineW = bytePx * kLineBytes;
  const float rowH = std::max(30.0f, lh * 2.2f), gapH = lh + 4;
  float contentH = lh + 6;
  for (const LineCell& l : g.lines) contentH += rowH + 4 + (l.gapBefore ? gapH : 0);
  const float tagW = g.requests > 1 ? ImGui::CalcTextSize("req 00,00").x + 10 : 0;
  ImGui::SetNextWindowContentSize(ImVec2(addrW + lineW + tagW + 8, contentH));
  ImGui::BeginChild("##global", ImVec2(0, height), false, ImGuiWindowFlags_HorizontalScrollbar);
  ImDrawList* dl = ImGui::GetWindowDrawList();
  ImVec2 p = ImGui::GetCursorScreenPos();
  const float x0 = p.x + addrW;
  const ImU32 dim = ImGui::GetColorU32(ImGuiCol_TextDisabled), text = ImGui::GetColorU32(ImGuiCol_Text);
  const ImU32 fetchedBg = IM_COL32(150, 150, 150, 255), unfetchedBg = IM_COL32(38, 38, 44, 255);
  const ImU32 sectorLine = IM_COL32(235, 235, 235, 255), lineBox = IM_COL32(255, 255, 255, 255);

  // Sector headings.
  for (int s = 0; s < 4; ++s) {
    char buf[48];
    std::snprintf(buf, sizeof buf, "sector %d: +%d..+%d", s, s * kSectorBytes, s * kSectorBytes + kSectorBytes - 1);
    dl->AddText(ImVec2(x0 + s * kSectorBytes * bytePx + 3, p.y), dim, buf);
  }
  dl->AddText(ImVec2(p.x, p.y), dim, "128 B line");
  float y = p.y + lh + 6;

  const ImVec2 mouse = ImGui::GetIO().MousePos;
  const bool hovered = ImGui::IsWindowHovered();
  int64_t hoverByte = -1;
  const SectorCell* hoverSector = nullptr;
  for (const LineCell& l : g.lines) {
    if (l.gapBefore) {
      std::string gap = "... " + formatNumber(static_cast<double>(l.gapBefore)) + " bytes not touched ...";
      dl->AddText(ImVec2(x0 + 8, y + 2), dim, gap.c_str());
      y += gapH;
    }
    const float top = y, bot = y + rowH;
    dl->AddText(ImVec2(p.x, top + (rowH - lh) / 2), text, hexAddr(l.addr).c_str());
    for (int s = 0; s < 4; ++s) {
      const SectorCell& sc = l.sectors[static_cast<size_t>(s)];
      float sx = x0 + s * kSectorBytes * bytePx;
      dl->AddRectFilled(ImVec2(sx, top), ImVec2(sx + kSectorBytes * bytePx, bot), sc.fetches ? fetchedBg : unfetchedBg);
      if (sc.fetches > 1) {  // fetched by several requests of this execution
        char buf[16];
        std::snprintf(buf, sizeof buf, "x%d", sc.fetches);
        dl->AddText(ImVec2(sx + 2, bot - lh), IM_COL32(255, 80, 80, 255), buf);
      }
      if (hovered && mouse.y >= top && mouse.y < bot && mouse.x >= sx && mouse.x < sx + kSectorBytes * bytePx) {
        hoverSector = &sc;
        hoverByte = static_cast<int64_t>(sc.addr) + static_cast<int64_t>((mouse.x - sx) / bytePx);
      }
    }
    // Each lane's bytes in this line: a bar in its warp / lane color.
    for (const LaneSpan& sp : g.spans) {
      uint64_t a = std::max(sp.start, l.addr), b = std::min(sp.end, l.addr + kLineBytes);
      if (a >= b) continue;
      float bx0 = x0 + static_cast<float>(a - l.addr) * bytePx, bx1 = x0 + static_cast<float>(b - l.addr) * bytePx;
      Rgba col = laneColor(v.warp, sp.lane);
      dl->AddRectFilled(ImVec2(bx0 + 0.5f, top + 4), ImVec2(bx1 - 0.5f, bot - 4), col);
      char buf[16];
      std::snprintf(buf, sizeof buf, "%d", sp.lane);
      ImVec2 ts = ImGui::CalcTextSize(buf);
      if (ts.x + 2 <= bx1 - bx0) dl->AddText(ImVec2((bx0 + bx1 - ts.x) / 2, (top + bot - ts.y) / 2), textColorOn(col), buf);
    }
    for (int s = 1; s < 4; ++s) {
      float sx = x0 + s * kSectorBytes * bytePx;
      dl->AddLine(ImVec2(sx, top), ImVec2(sx, bot), sectorLine, 1.0f);
    }
    dl->AddRect(ImVec2(x0, top), ImVec2(x0 + lineW, bot), lineBox, 0, 0, 2.0f);
    // Which requests (access groups) of the execution fetch this line.
    std::string reqs;
    int lastRec = -1;
    for (const LaneSpan& sp : g.spans)
      if (sp.record != lastRec && sp.start < l.addr + kLineBytes && sp.end > l.addr) {
        reqs += (reqs.empty() ? "req " : ",") + std::to_string(sp.record + 1);
        lastRec = sp.record;
      }
    if (g.requests > 1 && !reqs.empty()) dl->AddText(ImVec2(x0 + lineW + 6, top + (rowH - lh) / 2), dim, reqs.c_str());
    y = bot + 4;
  }
  ImGui::Dummy(ImVec2(addrW + lineW + tagW + 8, contentH));

  if (hoverSector) {
    ImGui::BeginTooltip();
    ImGui::Text("byte %s: sector %s of line %s", hexAddr(static_cast<uint64_t>(hoverByte)).c_str(), hexAddr(hoverSector->addr).c_str(),
                hexAddr(hoverSector->addr / kLineBytes * kLineBytes).c_str());
    int lanes = 0;
    for (const LaneSpan& sp : g.spans)
      if (static_cast<uint64_t>(hoverByte) >= sp.start && static_cast<uint64_t>(hoverByte) < sp.end && lanes++ < 8)
        ImGui::Text("  lane %d (request %d): bytes [%s, %s)", sp.lane, sp.record + 1, hexAddr(sp.start).c_str(),
                    hexAddr(sp.end).c_str());
    if (lanes > 8) ImGui::Text("  ... %d lanes in all (a broadcast)", lanes);
    if (lanes == 0) ImGui::TextDisabled("  no lane reads this byte%s", hoverSector->fetches ? " (fetched anyway: its sector is)" : "");
    if (hoverSector->fetches)
      ImGui::Text("sector: fetched by %d request%s, %d of 32 bytes used by lanes", hoverSector->fetches,
                  hoverSector->fetches == 1 ? "" : "s", hoverSector->usedBytes());
    else
      ImGui::TextDisabled("sector: not fetched by this warp-instruction");
    ImGui::TextDisabled("sectors: sim/Coalescing.h coalesce(), the model the report counts with");
    ImGui::EndTooltip();
  }
  ImGui::EndChild();
}

// ---- Shared picture ------------------------------------------------------------------------

void drawSharedPicture(const MemoryView& v, float height) {
  const SharedView& s = v.shared;
  const float lh = ImGui::GetTextLineHeight();
  const float labelW = ImGui::CalcTextSize("wavefront 00 ").x;
  const float bracketW = ImGui::CalcTextSize("request 00: 00 wavefronts, ideal 0 ").x + 16;
  const float cellW = std::clamp(std::floor((ImGui::GetContentRegionAvail().x - labelW - bracketW - 12) / kBanks), 12.0f, 36.0f);
  const float cellH = std::max(22.0f, lh * 1.6f);
  const int rows = std::max(s.wavefronts, 1);
  const float contentH = lh + 4 + rows * cellH + lh + 8;
  ImGui::SetNextWindowContentSize(ImVec2(labelW + kBanks * cellW + bracketW + 8, contentH));
  ImGui::Text("%s; ideal %d (one wavefront per group of %d lanes: %d x %d B <= 128 B per pass)", describeShared(s).c_str(),
              s.idealWavefronts, s.lanesPerGroup, s.lanesPerGroup, v.bytesPerLane);
  ImGui::BeginChild("##shared", ImVec2(0, height - ImGui::GetTextLineHeightWithSpacing()), false, ImGuiWindowFlags_HorizontalScrollbar);
  ImDrawList* dl = ImGui::GetWindowDrawList();
  ImVec2 p = ImGui::GetCursorScreenPos();
  const float x0 = p.x + labelW, y0 = p.y + lh + 4;
  const ImU32 dim = ImGui::GetColorU32(ImGuiCol_TextDisabled), grid = IM_COL32(90, 90, 100, 255);
  char buf[32];
  for (int b = 0; b < kBanks; b += (cellW >= 18 ? 1 : 2)) {
    std::snprintf(buf, sizeof buf, "%d", b);
    ImVec2 ts = ImGui::CalcTextSize(buf);
    dl->AddText(ImVec2(x0 + b * cellW + (cellW - ts.x) / 2, p.y), dim, buf);
  }
  dl->AddText(ImVec2(p.x, p.y), dim, "bank");
  for (int r = 0; r < rows; ++r) {
    std::snprintf(buf, sizeof buf, "wavefront %d", r);
    dl->AddText(ImVec2(p.x, y0 + r * cellH + (cellH - lh) / 2), dim, buf);
    for (int b = 0; b < kBanks; ++b)
      dl->AddRect(ImVec2(x0 + b * cellW, y0 + r * cellH), ImVec2(x0 + (b + 1) * cellW, y0 + (r + 1) * cellH), grid);
  }
  // Beside the grid, per request (access group): its rows, its wavefronts and the ideal.
  int base = 0;
  const float bx = x0 + kBanks * cellW + 6;
  for (size_t r = 0; r < s.perRecord.size(); ++r) {
    const BankAccess& ba = s.perRecord[r];
    if (ba.wavefronts == 0) continue;
    float top = y0 + base * cellH + 2, bot = y0 + (base + ba.wavefronts) * cellH - 2;
    ImU32 col = ba.bankConflicts ? IM_COL32(240, 90, 80, 255) : IM_COL32(110, 200, 120, 255);
    dl->AddLine(ImVec2(bx, top), ImVec2(bx, bot), col, 2.0f);
    dl->AddLine(ImVec2(bx - 4, top), ImVec2(bx, top), col, 2.0f);
    dl->AddLine(ImVec2(bx - 4, bot), ImVec2(bx, bot), col, 2.0f);
    std::string t = "request " + std::to_string(r + 1) + ": " + std::to_string(ba.wavefronts) +
                    (ba.wavefronts == 1 ? " wavefront" : " wavefronts") + ", ideal " + std::to_string(ba.idealWavefronts);
    dl->AddText(ImVec2(bx + 6, (top + bot - lh) / 2), col, t.c_str());
    if (base > 0) dl->AddLine(ImVec2(x0, y0 + base * cellH), ImVec2(x0 + kBanks * cellW, y0 + base * cellH), IM_COL32(220, 220, 220, 255), 2.0f);
    base += ba.wavefronts;
  }

  const ImVec2 mouse = ImGui::GetIO().MousePos;
  const BankCell* hover = nullptr;
  for (const BankCell& c : s.cells) {
    ImVec2 a(x0 + c.bank * cellW + 1, y0 + c.wavefront * cellH + 1), b(a.x + cellW - 2, a.y + cellH - 2);
    int first = std::countr_zero(c.laneMask), lanes = std::popcount(c.laneMask);
    Rgba col = laneColor(v.warp, first);
    dl->AddRectFilled(a, b, col);
    if (lanes > 1) dl->AddTriangleFilled(ImVec2(b.x - 7, a.y), ImVec2(b.x, a.y), ImVec2(b.x, a.y + 7), IM_COL32(255, 255, 255, 230));
    if (c.words.size() > 1) dl->AddRect(a, b, IM_COL32(255, 60, 60, 255), 0, 0, 2.0f);
    std::snprintf(buf, sizeof buf, lanes > 1 ? "x%d" : "%d", lanes > 1 ? lanes : first);
    ImVec2 ts = ImGui::CalcTextSize(buf);
    if (ts.x + 2 <= cellW) dl->AddText(ImVec2((a.x + b.x - ts.x) / 2, (a.y + b.y - ts.y) / 2), textColorOn(col), buf);
    if (ImGui::IsWindowHovered() && mouse.x >= a.x && mouse.x < b.x && mouse.y >= a.y && mouse.y < b.y) hover = &c;
  }
  float yText = y0 + rows * cellH + 6;
  dl->AddText(ImVec2(p.x, yText), dim, "number = lane; xN = N lanes share the word (broadcast, no conflict); red box = 2 words in one cell");
  ImGui::Dummy(ImVec2(labelW + kBanks * cellW + bracketW + 8, contentH));
  if (hover) {
    ImGui::BeginTooltip();
    ImGui::Text("bank %d, wavefront %d (request %d)", hover->bank, hover->wavefront, hover->record + 1);
    for (uint64_t w : hover->words)
      ImGui::Text("  word %llu = byte offset %llu; bank = word %% 32", static_cast<unsigned long long>(w),
                  static_cast<unsigned long long>(w * kBankBytes));
    std::string lanes;
    for (int l = 0; l < 32; ++l)
      if (hover->laneMask >> l & 1u) lanes += (lanes.empty() ? "" : ", ") + std::to_string(l);
    ImGui::Text("  lanes: %s", lanes.c_str());
    ImGui::TextDisabled("wavefronts: sim/Banks.h banks(): per group, the most distinct words one bank delivers");
    ImGui::EndTooltip();
  }
  ImGui::EndChild();
}

// ---- Counts: this warp-instruction beside the whole kernel ---------------------------------

void statRow(const char* name, const std::string& here, const std::string& kernel, const char* why) {
  ImGui::TableNextRow();
  ImGui::TableSetColumnIndex(0);
  ImGui::TextUnformatted(name);
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", why);
  ImGui::TableSetColumnIndex(1);
  ImGui::TextUnformatted(here.c_str());
  ImGui::TableSetColumnIndex(2);
  ImGui::TextUnformatted(kernel.c_str());
}

void drawStats(const SessionData& data, const MemoryView& v, const ViewCache& c, int execution) {
  const Json* ri = reportInstr(data, v.instr);
  const Json* k = ri ? jsonMember(ri, "counters") : nullptr;
  if (ImGui::BeginTable("##stats", 3, ImGuiTableFlags_BordersInnerH | ImGuiTableFlags_RowBg | ImGuiTableFlags_SizingFixedFit)) {
    ImGui::TableSetupColumn("");
    ImGui::TableSetupColumn("this warp");
    ImGui::TableSetupColumn("whole kernel");
    ImGui::TableHeadersRow();
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("whole kernel: the report's memory.instructions[] entry for instruction %d (grid-scaled)", v.instr);
    statRow("executions", std::to_string(execution + 1) + " of " + std::to_string(c.execs.size()),
            formatNumber(jsonNumber(k, "executions")),
            "warp-level executions: the one drawn (the execution slider) of this warp's in this block / "
            "every warp's of the grid");
    if (v.space == MemSpace::Global) {
      const GlobalView& g = v.global;
      statRow("requests", formatNumber(g.requests), formatNumber(jsonNumber(k, "requests")), "one per access group (LDG/STG) executed");
      statRow("sectors", formatNumber(static_cast<double>(g.sectors)), formatNumber(jsonNumber(k, "sectors")),
              "distinct 32-byte sectors per request, summed");
      statRow("sectors/request", formatNumber(g.sectorsPerRequest(), 2), formatNumber(jsonNumber(k, "sectors_per_request"), 2),
              "sectors / requests; 4 is ideal for 4 B per lane, 16 for 16 B per lane");
      statRow("ideal sectors", formatNumber(static_cast<double>(g.idealSectors)), "-",
              "the requested bytes packed from a sector boundary: ceil(bytes / 32) per request");
      statRow("lines", formatNumber(static_cast<double>(g.lineRequests)), formatNumber(jsonNumber(k, "lines")), "distinct 128-byte lines per request, summed");
      statRow("bytes requested", formatNumber(static_cast<double>(g.bytesRequested)), formatNumber(jsonNumber(k, "bytes_requested")),
              "active lanes x bytes per lane");
      statRow("bytes fetched", formatNumber(static_cast<double>(g.bytesFetched)), formatNumber(jsonNumber(k, "bytes_fetched")), "sectors x 32");
      double eff = jsonNumber(k, "efficiency");
      statRow("efficiency", formatNumber(100 * g.efficiency, 1) + "%", std::isnan(eff) ? "-" : formatNumber(100 * eff, 1) + "%",
              "bytes requested / bytes fetched (ncu: smsp__sass_average_data_bytes_per_sector_mem_global_op_*.pct)");
    } else {
      const SharedView& s = v.shared;
      statRow("requests", formatNumber(s.requests), formatNumber(jsonNumber(k, "requests")), "one per access group (LDS/STS) executed");
      statRow("wavefronts", formatNumber(s.wavefronts), formatNumber(jsonNumber(k, "wavefronts")), "passes through the 32 banks");
      statRow("ideal wavefronts", formatNumber(s.idealWavefronts), formatNumber(jsonNumber(k, "ideal_wavefronts")), "one per lane group with an active lane");
      statRow("bank conflicts", formatNumber(s.bankConflicts), formatNumber(jsonNumber(k, "bank_conflicts")), "wavefronts - ideal");
      statRow("wavefronts/request", formatNumber(s.requests ? double(s.wavefronts) / s.requests : NAN, 2),
              formatNumber(jsonNumber(k, "wavefronts_per_request"), 2), "wavefronts / requests");
    }
    ImGui::EndTable();
  }
  ImGui::TextDisabled("block %lld, warp %d, execution %d", static_cast<long long>(v.block), v.warp, execution + 1);
  ImGui::TextWrapped("%s", v.space == MemSpace::Global ? describeGlobal(v.global).c_str() : describeShared(v.shared).c_str());
}

// ---- Whole-kernel tables -------------------------------------------------------------------

void drawInstrTable(const SessionData& data, UiState& ui, float height) {
  const Json* mem = jsonMember(&data.report, "memory");
  const Json* list = mem ? jsonMember(mem, "instructions") : nullptr;
  if (!list || !list->is_array() || list->empty()) {
    ImGui::TextDisabled("the report has no memory instructions");
    return;
  }
  // The columns of tl-sim's summary (stages/sim/SimSummary.cpp): sect/ideal is what the labs grade.
  const char* heads[] = {"line:col", "op",        "space", "B/lane", "requests", "sectors", "ideal",
                         "sect/ideal", "sect/req", "eff %", "wavefronts/ideal"};
  const char* tips[] = {"source location of the instruction", "thread-IR op", "global or shared", "bytes per lane (element x vec)",
                        "warp-level requests, whole grid", "32-byte sectors fetched",
                        "the fewest sectors the same bytes need (perfectly coalesced)",
                        "sectors / ideal sectors: 1.00 is perfectly coalesced", "sectors / requests",
                        "bytes requested / bytes fetched", "shared: wavefronts / ideal wavefronts"};
  constexpr int kColumns = 11;
  ImGuiTableFlags flags = ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerV | ImGuiTableFlags_ScrollY | ImGuiTableFlags_SizingFixedFit;
  if (!ImGui::BeginTable("##instrs", kColumns, flags, ImVec2(0, height))) return;
  ImGui::TableSetupScrollFreeze(0, 1);
  for (const char* h : heads) ImGui::TableSetupColumn(h);
  ImGui::TableNextRow(ImGuiTableRowFlags_Headers);
  for (int i = 0; i < kColumns; ++i) {
    ImGui::TableSetColumnIndex(i);
    ImGui::TableHeader(heads[i]);
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", tips[i]);
  }
  for (const Json& e : *list) {
    const Json* k = jsonMember(&e, "counters");
    const int32_t id = jsonInt(&e, "instr", -1);
    const int line = jsonInt(&e, "line", 0);
    const bool shared = jsonString(&e, "space") == "shared";
    ImGui::TableNextRow();
    if (ui.sourceLine > 0 && line == ui.sourceLine) ImGui::TableSetBgColor(ImGuiTableBgTarget_RowBg1, highlightColor());
    ImGui::TableSetColumnIndex(0);
    std::string lc = std::to_string(line) + ":" + formatNumber(jsonNumber(&e, "col", 0)) + "##" + std::to_string(id);
    if (ImGui::Selectable(lc.c_str(), id == ui.memInstr, ImGuiSelectableFlags_SpanAllColumns)) {
      ui.memInstr = id;
      ui.sourceLine = line;
    }
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("instruction %d: click to draw it above (and select line %d)", id, line);
    ImGui::TableSetColumnIndex(1);
    ImGui::TextUnformatted(jsonString(&e, "op").c_str());
    ImGui::TableSetColumnIndex(2);
    ImGui::TextUnformatted(jsonString(&e, "space").c_str());
    ImGui::TableSetColumnIndex(3);
    ImGui::TextUnformatted(formatNumber(jsonNumber(&e, "bytes_per_lane")).c_str());
    ImGui::TableSetColumnIndex(4);
    ImGui::TextUnformatted(formatNumber(jsonNumber(k, "requests")).c_str());
    ImGui::TableSetColumnIndex(5);
    ImGui::TextUnformatted(shared ? "-" : formatNumber(jsonNumber(k, "sectors")).c_str());
    ImGui::TableSetColumnIndex(6);
    ImGui::TextUnformatted(shared ? "-" : formatNumber(jsonNumber(k, "ideal_sectors")).c_str());
    ImGui::TableSetColumnIndex(7);
    ImGui::TextUnformatted(shared ? "-" : formatNumber(jsonNumber(k, "sectors_per_ideal"), 2).c_str());
    ImGui::TableSetColumnIndex(8);
    ImGui::TextUnformatted(shared ? "-" : formatNumber(jsonNumber(k, "sectors_per_request"), 2).c_str());
    ImGui::TableSetColumnIndex(9);
    double eff = jsonNumber(k, "efficiency");
    ImGui::TextUnformatted(shared || std::isnan(eff) ? "-" : formatNumber(100 * eff, 1).c_str());
    ImGui::TableSetColumnIndex(10);
    ImGui::TextUnformatted(shared ? (formatNumber(jsonNumber(k, "wavefronts")) + " / " + formatNumber(jsonNumber(k, "ideal_wavefronts"))).c_str() : "-");
  }
  ImGui::EndTable();
}

void drawNcuTable(const SessionData& data, float height) {
  const Json* mem = jsonMember(&data.report, "memory");
  const Json* list = mem ? jsonMember(mem, "ncu_metrics") : nullptr;
  if (!list || !list->is_array() || list->empty()) {
    ImGui::TextDisabled("the report has no Nsight Compute metrics");
    return;
  }
  ImGuiTableFlags flags = ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerV | ImGuiTableFlags_ScrollY | ImGuiTableFlags_Resizable;
  if (!ImGui::BeginTable("##ncu", 3, flags, ImVec2(0, height))) return;
  ImGui::TableSetupScrollFreeze(0, 1);
  ImGui::TableSetupColumn("Nsight Compute metric", ImGuiTableColumnFlags_WidthStretch, 3.0f);
  ImGui::TableSetupColumn("ours (memory.totals.)", ImGuiTableColumnFlags_WidthStretch, 1.6f);
  ImGui::TableSetupColumn("value", ImGuiTableColumnFlags_WidthStretch, 0.8f);
  ImGui::TableHeadersRow();
  for (const Json& e : *list) {
    ImGui::TableNextRow();
    ImGui::TableSetColumnIndex(0);
    ImGui::TextUnformatted(jsonString(&e, "metric").c_str());
    ImGui::TableSetColumnIndex(1);
    ImGui::TextUnformatted(jsonString(&e, "ours").c_str());
    ImGui::TableSetColumnIndex(2);
    double val = jsonNumber(&e, "value");
    ImGui::TextUnformatted(formatNumber(val, std::isnan(val) || val == std::round(val) ? 0 : 2).c_str());
  }
  ImGui::EndTable();
}

}  // namespace

void drawMemoryPanel(const SessionData& data, UiState& ui) {
  if (data.phase == Phase::Simulated && data.errors.empty() && !data.detail) {
    ImGui::TextDisabled("The simulation kept no per-access detail (SimOptions::keepDetail), so there is nothing to draw.");
    return;
  }
  if (drawNotReady(data, true)) return;
  if (data.memInstrs.empty()) {
    ImGui::TextDisabled("This kernel has no memory instructions in its thread IR.");
    return;
  }
  MemoryState& s = state();
  const MemInstr* mi = chosenInstr(data, ui);
  if (mi->instr != s.lastInstr) {
    s.execution = 0;
    s.lastInstr = mi->instr;
  }
  const int numWarps = data.detail->compilation.threadIR ? data.detail->compilation.threadIR->numWarps : data.numWarps;
  ui.memWarp = std::clamp(ui.memWarp, 0, std::max(numWarps - 1, 0));

  // Controls: instruction, block, warp, execution.
  ImGui::SetNextItemWidth(300);
  if (ImGui::BeginCombo("instruction", instrLabel(*mi).c_str())) {
    for (const MemInstr& m : data.memInstrs) {
      bool sel = m.instr == mi->instr;
      if (ImGui::Selectable(instrLabel(m).c_str(), sel)) {
        ui.memInstr = m.instr;
        ui.sourceLine = m.loc.line;
      }
      if (sel) ImGui::SetItemDefaultFocus();
    }
    ImGui::EndCombo();
  }
  refreshView(data, ui, s);
  ViewCache& c = s.cache;
  if (!c.blocks.empty() && std::find(c.blocks.begin(), c.blocks.end(), ui.memBlock) == c.blocks.end()) {
    ui.memBlock = c.blocks.front();
    refreshView(data, ui, s);
  }
  ImGui::SameLine();
  ImGui::SetNextItemWidth(110);
  std::string blockLabel = "block " + std::to_string(ui.memBlock);
  if (ImGui::BeginCombo("##block", blockLabel.c_str())) {
    for (int64_t b : c.blocks)
      if (ImGui::Selectable(("block " + std::to_string(b)).c_str(), b == ui.memBlock)) ui.memBlock = b;
    ImGui::EndCombo();
  }
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip("the simulator keeps every access of the first %s (--block N keeps more)",
                      countOf(static_cast<long long>(c.blocks.size()), "block").c_str());
  ImGui::SameLine();
  ImGui::SetNextItemWidth(160);
  ImGui::SliderInt("warp", &ui.memWarp, 0, std::max(numWarps - 1, 0));
  if (c.execs.size() > 1) {
    ImGui::SameLine();
    ImGui::SetNextItemWidth(140);
    int e = s.execution + 1;
    if (ImGui::SliderInt("execution", &e, 1, static_cast<int>(c.execs.size()))) s.execution = e - 1;
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("this warp ran the instruction %zu times (a loop)", c.execs.size());
  }
  refreshView(data, ui, s);
  const MemoryView& v = c.view;

  // The picture and, beside it, the counts.
  // As tall as the picture needs (the counts table at least), at most 55% of the panel.
  const float avail = ImGui::GetContentRegionAvail().y, lh = ImGui::GetTextLineHeight();
  float want = 3 * ImGui::GetTextLineHeightWithSpacing() + lh + 6;
  if (v.ok && v.space == MemSpace::Global) {
    for (const LineCell& l : v.global.lines) want += std::max(30.0f, lh * 2.2f) + 4 + (l.gapBefore ? lh + 4 : 0);
  } else if (v.ok) {
    want += static_cast<float>(std::max(v.shared.wavefronts, 1)) * std::max(22.0f, lh * 1.6f) + 2 * lh;
  }
  const float statsH = 14 * ImGui::GetTextLineHeightWithSpacing();
  const float topH = std::clamp(want, statsH, std::max(statsH, avail * 0.55f));
  if (ImGui::BeginTable("##top", 2, ImGuiTableFlags_BordersInnerV | ImGuiTableFlags_Resizable, ImVec2(0, topH))) {
    ImGui::TableSetupColumn("picture", ImGuiTableColumnFlags_WidthStretch, 3.0f);
    ImGui::TableSetupColumn("counts", ImGuiTableColumnFlags_WidthStretch, 1.0f);
    ImGui::TableNextRow();
    ImGui::TableSetColumnIndex(0);
    if (!v.ok) {
      ImGui::TextWrapped("%s", v.error.c_str());
    } else {
      ImGui::Text("%s %s, %d B per lane, %s: lanes of warp %d", v.space == MemSpace::Global ? "global" : "shared",
                  v.store ? "store" : "load", v.bytesPerLane,
                  v.space == MemSpace::Global ? "bytes over 32 B sectors (grey: fetched, unused) and 128 B lines"
                                              : "words in the 32 banks, one row per wavefront",
                  v.warp);
      float h = topH - ImGui::GetTextLineHeightWithSpacing() - 8;
      if (v.space == MemSpace::Global) drawGlobalPicture(v, h);
      else drawSharedPicture(v, h);
    }
    ImGui::TableSetColumnIndex(1);
    if (v.ok) drawStats(data, v, c, s.execution);
    ImGui::EndTable();
  }

  // The whole kernel: per instruction, then the Nsight Compute names.
  ImGui::Separator();
  const float rest = ImGui::GetContentRegionAvail().y;
  // The instruction table as tall as its rows (at most half of what is left), the metrics below.
  const Json* memJ = jsonMember(&data.report, "memory");
  const Json* instrsJ = memJ ? jsonMember(memJ, "instructions") : nullptr;
  const float rows = instrsJ && instrsJ->is_array() ? static_cast<float>(instrsJ->size()) + 1.5f : 2.0f;
  const float rowH = ImGui::GetTextLineHeight() + 2 * ImGui::GetStyle().CellPadding.y;
  const float instrH = std::clamp(rows * rowH + ImGui::GetTextLineHeightWithSpacing() + 4, 60.0f, std::max(60.0f, rest * 0.5f));
  ImGui::TextUnformatted("Memory instructions, whole kernel (simulator report, grid-scaled); click a row to draw it:");
  drawInstrTable(data, ui, instrH - ImGui::GetTextLineHeightWithSpacing());
  drawNcuTable(data, std::max(80.0f, ImGui::GetContentRegionAvail().y));
}

}  // namespace tl::viz
