// Global-memory coalescing of ONE warp-level access: which 32-byte sectors and 128-byte lines
// the active lanes' bytes fall in, as Nsight Compute counts them on sm_70 and later. This is
// the first half of the memory model (sim/MemoryModel.h); the rules and their sources are in
// docs/sim.md, "Global memory".
//
// The rules, in short:
//   - one warp-level instruction execution is ONE request to L1TEX, whatever the access width
//     (a 16-byte LDG.128 is still one request: it just touches 4x the sectors);
//   - a SECTOR is an aligned 32-byte chunk; the request's sectors are the DISTINCT sectors that
//     contain at least one byte accessed by an active lane (a lane whose bytes straddle a sector
//     boundary counts both sectors); a LINE is an aligned 128-byte chunk (4 sectors);
//   - inactive (masked-off) lanes touch nothing;
//   - bytes requested = active lanes x bytes per lane, bytes fetched = sectors x 32, and
//     efficiency = requested / fetched (lanes reading the same bytes count each time, so a
//     broadcast load can exceed 100%, as nvprof's gld_efficiency could); bytes USED (distinct
//     bytes any lane touched) / fetched is the share of the moved data that was needed, <= 100%;
//   - IDEAL sectors = ceil(bytes used / 32): the fewest sectors that can hold those distinct
//     bytes, what the request would fetch if perfectly coalesced; sectors / ideal is 1.0 for a
//     perfect access of any width (a full-warp LDG.128 needs 16 sectors and fetches 16).
//
// Expects: a WarpAccess with 1 <= bytes <= 16 (the widest access a thread can make); addresses
// of inactive lanes are ignored.
// Guarantees: pure functions, no allocation in collectSectors (the model's hot path); sectors
// come out sorted by address with duplicates merged. std::invalid_argument for a width outside
// 1..16 or an address whose last byte would overflow 64 bits.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "sim/ThreadExecutor.h"

namespace tl {

constexpr int kSectorBytes = 32;    // the unit L1, L2 and DRAM move data in (sm_70+)
constexpr int kLineBytes = 128;     // a cache line: 4 sectors sharing one tag
constexpr int kMaxAccessBytes = 16; // the widest per-thread access (LDG.128 / LDS.128)
// A lane's <= 16 bytes fall in at most 2 sectors, so a warp touches at most 64.
constexpr int kMaxSectorsPerAccess = 64;

// One distinct sector a warp access touches.
struct SectorUse {
  uint64_t addr = 0;      // address of the sector's first byte (a multiple of 32)
  uint32_t byteMask = 0;  // bit i set: byte addr + i is accessed by some active lane
  uint32_t laneMask = 0;  // bit l set: lane l accesses at least one byte of this sector
};

// Checks a WarpAccess's width and addresses (see "Expects" above); throws std::invalid_argument.
void checkWarpAccess(const WarpAccess& a);

// The hot path: fills out[0..n) with the distinct sectors of `a`, sorted by address; returns n
// (0 when no lane is active).
int collectSectors(const WarpAccess& a, SectorUse* out);

// Number of distinct 128-byte lines among sorted sectors.
int countLines(const SectorUse* sectors, int n);

// What the visualizer draws for one lane.
struct LaneCoalescing {
  bool active = false;
  uint64_t addr = 0;       // first byte
  int bytes = 0;           // bytes accessed (0 if inactive)
  int firstSector = -1;    // index into WarpCoalescing::sectors (-1 if inactive)
  int lastSector = -1;     // == firstSector unless the lane's bytes straddle a sector boundary
  int firstLine = -1;      // index into WarpCoalescing::lines
  int lastLine = -1;
};

// One warp access, explained.
struct WarpCoalescing {
  std::array<LaneCoalescing, 32> lanes{};
  std::vector<SectorUse> sectors;  // distinct sectors, ascending
  std::vector<uint64_t> lines;     // distinct line addresses (multiples of 128), ascending
  int requests = 0;                // 1 (0 if no lane is active)
  int activeLanes = 0;
  int64_t bytesRequested = 0;      // active lanes x bytes per lane
  int64_t bytesFetched = 0;        // sectors x 32
  int64_t bytesUsed = 0;           // distinct bytes accessed (the sectors' byte masks)
  int idealSectors = 0;            // ceil(bytesUsed / 32): the sectors a perfect access needs
  double efficiency = 0;           // bytesRequested / bytesFetched (0 if nothing fetched)
  double sectorsPerRequest() const { return requests ? double(sectors.size()) / requests : 0.0; }
  double sectorsPerIdeal() const { return idealSectors ? double(sectors.size()) / idealSectors : 0.0; }
};

WarpCoalescing coalesce(const WarpAccess& a);

}  // namespace tl
