// Global-memory coalescing of one warp access: see sim/Coalescing.h for the rules.
#include "sim/Coalescing.h"

#include <algorithm>
#include <bit>
#include <limits>
#include <stdexcept>
#include <string>

namespace tl {

namespace {

// Bits [from, from + count) set, for 0 <= from, count and from + count <= 32.
uint32_t bitRange(uint64_t from, uint64_t count) {
  uint64_t ones = (count >= 64) ? ~uint64_t(0) : ((uint64_t(1) << count) - 1);
  return static_cast<uint32_t>(ones << from);
}

std::string describe(const WarpAccess& a) {
  return "instruction " + std::to_string(a.instr) + " at " + std::to_string(a.loc.line) + ":" +
         std::to_string(a.loc.col) + " (block " + std::to_string(a.block) + ", warp " + std::to_string(a.warp) + ")";
}

}  // namespace

void checkWarpAccess(const WarpAccess& a) {
  if (a.bytes < 1 || a.bytes > kMaxAccessBytes)
    throw std::invalid_argument("memory model: " + describe(a) + " accesses " + std::to_string(a.bytes) +
                                " bytes per lane; a thread accesses 1 to 16 bytes");
  for (int lane = 0; lane < 32; ++lane)
    if ((a.activeMask >> lane & 1u) && a.addr[lane] > std::numeric_limits<uint64_t>::max() - a.bytes)
      throw std::invalid_argument("memory model: " + describe(a) + ": lane " + std::to_string(lane) +
                                  "'s address overflows 64 bits");
}

int collectSectors(const WarpAccess& a, SectorUse* out) {
  // 1. One entry per (lane, sector) pair, in lane order.
  int n = 0;
  for (int lane = 0; lane < 32; ++lane) {
    if (!(a.activeMask >> lane & 1u)) continue;
    uint64_t first = a.addr[lane], last = first + a.bytes - 1;
    for (uint64_t sec = first / kSectorBytes; sec <= last / kSectorBytes; ++sec) {
      uint64_t base = sec * kSectorBytes;
      uint64_t lo = std::max(first, base), hi = std::min(last, base + kSectorBytes - 1);
      out[n++] = SectorUse{base, bitRange(lo - base, hi - lo + 1), 1u << lane};
    }
  }
  // 2. Sort by address (usually already sorted: lanes walk memory upwards), then merge equal
  //    sectors, OR-ing their byte and lane masks.
  bool sorted = true;
  for (int i = 1; i < n && sorted; ++i) sorted = out[i - 1].addr <= out[i].addr;
  if (!sorted) std::stable_sort(out, out + n, [](const SectorUse& x, const SectorUse& y) { return x.addr < y.addr; });
  int m = 0;
  for (int i = 0; i < n; ++i) {
    if (m > 0 && out[m - 1].addr == out[i].addr) {
      out[m - 1].byteMask |= out[i].byteMask;
      out[m - 1].laneMask |= out[i].laneMask;
    } else {
      out[m++] = out[i];
    }
  }
  return m;
}

int countLines(const SectorUse* sectors, int n) {
  int lines = 0;
  for (int i = 0; i < n; ++i)
    if (i == 0 || sectors[i].addr / kLineBytes != sectors[i - 1].addr / kLineBytes) ++lines;
  return lines;
}

WarpCoalescing coalesce(const WarpAccess& a) {
  checkWarpAccess(a);
  WarpCoalescing w;
  std::array<SectorUse, kMaxSectorsPerAccess> buf;
  int n = collectSectors(a, buf.data());
  w.sectors.assign(buf.begin(), buf.begin() + n);
  for (const SectorUse& s : w.sectors) {
    uint64_t line = s.addr / kLineBytes * kLineBytes;
    if (w.lines.empty() || w.lines.back() != line) w.lines.push_back(line);
    w.bytesUsed += std::popcount(s.byteMask);
  }
  auto sectorIndex = [&](uint64_t byte) {
    uint64_t sec = byte / kSectorBytes * kSectorBytes;
    auto it = std::lower_bound(w.sectors.begin(), w.sectors.end(), sec,
                               [](const SectorUse& s, uint64_t addr) { return s.addr < addr; });
    return static_cast<int>(it - w.sectors.begin());
  };
  auto lineIndex = [&](uint64_t byte) {
    auto it = std::lower_bound(w.lines.begin(), w.lines.end(), byte / kLineBytes * kLineBytes);
    return static_cast<int>(it - w.lines.begin());
  };
  for (int lane = 0; lane < 32; ++lane) {
    if (!(a.activeMask >> lane & 1u)) continue;
    LaneCoalescing& l = w.lanes[lane];
    uint64_t last = a.addr[lane] + a.bytes - 1;
    l = LaneCoalescing{true, a.addr[lane], a.bytes, sectorIndex(a.addr[lane]), sectorIndex(last),
                       lineIndex(a.addr[lane]), lineIndex(last)};
    ++w.activeLanes;
  }
  w.requests = w.activeLanes > 0 ? 1 : 0;
  w.bytesRequested = int64_t(w.activeLanes) * a.bytes;
  w.bytesFetched = int64_t(w.sectors.size()) * kSectorBytes;
  w.idealSectors = static_cast<int>((w.bytesUsed + kSectorBytes - 1) / kSectorBytes);
  w.efficiency = w.bytesFetched ? double(w.bytesRequested) / double(w.bytesFetched) : 0.0;
  return w;
}

}  // namespace tl
