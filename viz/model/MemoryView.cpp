// MemoryView (see MemoryView.h): groups records into executions, calls the simulator's
// coalescing and bank models on each record, and lays the result out for drawing.
#include "viz/model/MemoryView.h"

#include "viz/model/Format.h"

#include <algorithm>
#include <bit>
#include <cstdio>
#include <map>
#include <stdexcept>

namespace tl::viz {

// ---- Grouping ------------------------------------------------------------------------------

int accessGroupsPerExecution(const Op& op) {
  switch (op.kind) {
    case OpKind::LdGlobal:
    case OpKind::StGlobal:
    case OpKind::LdShared:
    case OpKind::StShared: break;
    case OpKind::Ldmatrix: return static_cast<int>(op.intAttr("count"));  // one group per 8 x 8 matrix
    default: return 1;
  }
  if (op.numOperands() == 0) return 1;
  int64_t regs = op.operand(0)->type.numel();
  int64_t vec = 1;
  if (const Attr* a = op.attr("vec"); a && std::holds_alternative<int64_t>(*a)) vec = std::get<int64_t>(*a);
  if (vec < 1 || regs < vec) return 1;
  return static_cast<int>(std::min<int64_t>(regs / vec, 1 << 20));
}

std::vector<std::vector<WarpAccess>> warpExecutions(std::span<const WarpAccess> accesses, int64_t block, int32_t warp,
                                                    int32_t instr, int groupsPerExecution) {
  std::vector<std::vector<WarpAccess>> execs;
  const size_t cut = static_cast<size_t>(std::max(groupsPerExecution, 1));
  // `prev`: the index of the previous record of this warp (any instruction), to see runs.
  bool inRun = false;
  for (const WarpAccess& a : accesses) {
    if (a.block != block || a.warp != warp) continue;
    if (a.instr != instr) {
      inRun = false;
      continue;
    }
    if (!inRun || execs.back().size() >= cut) execs.emplace_back();
    execs.back().push_back(a);
    inRun = true;
  }
  return execs;
}

// ---- Global --------------------------------------------------------------------------------

int SectorCell::usedBytes() const { return std::popcount(byteMask); }

bool LineCell::touched() const {
  return std::any_of(sectors.begin(), sectors.end(), [](const SectorCell& s) { return s.fetches > 0; });
}

namespace {

std::string bytesText(uint64_t b) {
  char buf[64];
  if (b >= (uint64_t(1) << 20)) std::snprintf(buf, sizeof buf, "%.1f MiB", double(b) / double(1 << 20));
  else if (b >= 1024) std::snprintf(buf, sizeof buf, "%.1f KiB", double(b) / 1024.0);
  else std::snprintf(buf, sizeof buf, "%llu B", static_cast<unsigned long long>(b));
  return buf;
}

GlobalView buildGlobal(std::span<const WarpAccess> records, int maxLines) {
  GlobalView g;
  // Every record through the coalescing model; the union of their sectors by address.
  std::map<uint64_t, SectorCell> sectors;
  for (size_t r = 0; r < records.size(); ++r) {
    WarpCoalescing w = coalesce(records[r]);
    for (const SectorUse& s : w.sectors) {
      SectorCell& c = sectors[s.addr];
      c.addr = s.addr;
      ++c.fetches;
      c.byteMask |= s.byteMask;
      c.laneMask |= s.laneMask;
    }
    for (int lane = 0; lane < 32; ++lane)
      if (w.lanes[static_cast<size_t>(lane)].active)
        g.spans.push_back(LaneSpan{lane, static_cast<int>(r), w.lanes[static_cast<size_t>(lane)].addr,
                                   w.lanes[static_cast<size_t>(lane)].addr + static_cast<uint64_t>(w.lanes[static_cast<size_t>(lane)].bytes)});
    g.requests += w.requests;
    g.sectors += static_cast<int64_t>(w.sectors.size());
    g.lineRequests += static_cast<int64_t>(w.lines.size());
    g.activeLaneAccesses += w.activeLanes;
    g.bytesRequested += w.bytesRequested;
    g.bytesFetched += w.bytesFetched;
    g.bytesUsed += w.bytesUsed;
    g.idealSectors += (w.bytesRequested + kSectorBytes - 1) / kSectorBytes;
    g.perRecord.push_back(std::move(w));
  }
  g.efficiency = g.bytesFetched ? double(g.bytesRequested) / double(g.bytesFetched) : 0.0;

  // The touched lines, ascending; the window adds the untouched line between two touched
  // lines one apart (so a contiguous pattern reads as one strip) and notes longer gaps.
  std::vector<uint64_t> touched;
  for (const auto& [addr, c] : sectors) {
    uint64_t line = addr / kLineBytes * kLineBytes;
    if (touched.empty() || touched.back() != line) touched.push_back(line);
  }
  g.linesTouched = static_cast<int64_t>(touched.size());
  const size_t cap = static_cast<size_t>(std::max(maxLines, 1));
  uint64_t prev = 0;
  bool cut = false;
  for (size_t i = 0; i < touched.size() && !cut; ++i) {
    uint64_t line = touched[i];
    std::vector<uint64_t> add;
    uint64_t gap = 0;
    if (!g.lines.empty()) {
      if (line - prev == 2 * kLineBytes) add.push_back(prev + kLineBytes);  // one untouched line between
      else if (line - prev > kLineBytes) gap = line - prev - kLineBytes;
    }
    add.push_back(line);
    for (size_t k = 0; k < add.size(); ++k) {
      if (g.lines.size() >= cap) {
        cut = true;
        break;
      }
      LineCell lc;
      lc.addr = add[k];
      lc.gapBefore = k + 1 == add.size() ? gap : 0;
      for (int s = 0; s < 4; ++s) {
        uint64_t sa = add[k] + static_cast<uint64_t>(s * kSectorBytes);
        auto it = sectors.find(sa);
        lc.sectors[static_cast<size_t>(s)] = it != sectors.end() ? it->second : SectorCell{sa, 0, 0, 0};
      }
      g.lines.push_back(lc);
      prev = add[k];
    }
  }
  if (cut) {
    int64_t shown = std::count_if(g.lines.begin(), g.lines.end(), [](const LineCell& l) { return l.touched(); });
    g.note = "showing the first " + std::to_string(shown) + " of " + std::to_string(g.linesTouched) +
             " touched lines (" + bytesText(touched.back() + kLineBytes - touched.front()) + " of address space)";
  } else {
    uint64_t skipped = 0;
    for (const LineCell& l : g.lines) skipped += l.gapBefore;
    if (skipped)
      g.note = bytesText(skipped) + " of untouched address space between the lines is not drawn (marked by gaps)";
  }
  return g;
}

// ---- Shared --------------------------------------------------------------------------------

SharedView buildShared(std::span<const WarpAccess> records) {
  SharedView s;
  std::map<std::pair<int, int>, BankCell> cells;  // (wavefront, bank)
  for (size_t r = 0; r < records.size(); ++r) {
    BankAccess b = banks(records[r]);
    if (records[r].activeMask) ++s.requests;
    for (int lane = 0; lane < 32; ++lane) {
      const LaneBank& l = b.lanes[static_cast<size_t>(lane)];
      if (!l.active) continue;
      int wf = s.wavefronts + l.wavefront;
      for (int i = 0; i < l.words; ++i) {
        int bank = (l.bank + i) % kBanks;
        BankCell& c = cells[{wf, bank}];
        c.wavefront = wf;
        c.bank = bank;
        c.record = static_cast<int>(r);
        c.laneMask |= 1u << lane;
        uint64_t word = l.word + static_cast<uint64_t>(i);
        if (std::find(c.words.begin(), c.words.end(), word) == c.words.end()) c.words.push_back(word);
      }
    }
    s.wavefronts += b.wavefronts;
    s.idealWavefronts += b.idealWavefronts;
    s.bankConflicts += b.bankConflicts;
    s.maxWays = std::max(s.maxWays, b.maxWays);
    s.lanesPerGroup = b.lanesPerGroup;
    s.perRecord.push_back(b);
  }
  for (auto& [key, c] : cells) s.cells.push_back(std::move(c));
  return s;
}

}  // namespace

MemoryView buildMemoryView(std::span<const WarpAccess> records, int maxLines) {
  MemoryView v;
  if (records.empty()) {
    v.error = "no access recorded: every lane was masked off, or this warp never ran the instruction";
    return v;
  }
  const WarpAccess& a = records.front();
  v.space = a.space;
  v.store = a.store;
  v.bytesPerLane = a.bytes;
  v.block = a.block;
  v.warp = a.warp;
  v.instr = a.instr;
  v.loc = a.loc;
  for (const WarpAccess& r : records)
    if (r.space != a.space || r.bytes != a.bytes || r.instr != a.instr || r.warp != a.warp || r.block != a.block) {
      v.error = "the records are not one warp-instruction (instruction, warp, block, space or width differ)";
      return v;
    }
  try {
    if (v.space == MemSpace::Global) v.global = buildGlobal(records, maxLines);
    else v.shared = buildShared(records);
  } catch (const std::invalid_argument& e) {
    v.error = e.what();
    return v;
  }
  v.ok = true;
  return v;
}

std::string describeGlobal(const GlobalView& g) {
  return countOf(g.requests, "request") + ", " + countOf(static_cast<long long>(g.sectors), "sector") + " (" +
         formatNumber(g.sectorsPerRequest(), 2) + " sectors/request), " + withCommas(g.bytesRequested) + " of " +
         countOf(static_cast<long long>(g.bytesFetched), "fetched byte") + " requested: " +
         formatPercent(g.efficiency, kEfficiencyPercentDecimals);
}

std::string describeShared(const SharedView& s) {
  std::string out = std::to_string(s.wavefronts) + (s.wavefronts == 1 ? " wavefront" : " wavefronts") + " (ideal " +
                    std::to_string(s.idealWavefronts) + "): ";
  if (s.bankConflicts == 0) return out + "no bank conflict";
  // "an 8-way", "an 11-way", "an 18-way", "an 80-way" ...: the article follows the spoken number.
  int w = s.maxWays;
  bool an = w == 8 || w == 11 || w == 18 || (w >= 80 && w <= 89);
  return out + std::to_string(s.bankConflicts) + " extra (" + (an ? "an " : "a ") + std::to_string(w) + "-way bank conflict)";
}

}  // namespace tl::viz
