// A sectored, set-associative LRU cache: 128-byte lines, each of four 32-byte sectors with its
// own valid bit, as NVIDIA's L1 and L2 are organised since Volta. The memory model
// (sim/MemoryModel.h) builds one per SM as the L1 and one for the chip as the L2; the policies
// (who allocates, write-through or write-back) are chosen by which method the model calls:
//
//   read(sector, fetch)        a load: hit if the sector is present; a miss allocates the line
//                              (evicting the least recently used one of its set) and fills the
//                              missing sectors of the aligned `fetch`-byte group around it
//   updateIfPresent(sector)    a write-through store seen by L1: hit if present, never allocates
//   write(sector, byteMask)    a write-back store seen by L2: allocates the line without reading
//                              DRAM and marks the bytes written (dirty)
//   flushDirty()               kernel end: every dirty sector is written back
//
// A sector is readable if it was filled from below OR every one of its 32 bytes was written.
// Reading a partly written sector fetches it (the written bytes stay dirty).
//
// Expects: sector addresses that are multiples of 32; fetch of 32, 64 or 128 bytes.
// Guarantees: O(ways) work per call, no allocation after construction; set index = line address
// modulo the number of sets (real parts hash addresses; see docs/sim.md). A capacity smaller
// than one set makes a cache that holds nothing (every read misses).
#pragma once

#include <cstdint>
#include <vector>

namespace tl::sim {

class SectoredCache {
 public:
  SectoredCache(int64_t capacityBytes, int ways);

  int64_t capacityBytes() const { return int64_t(sets_) * ways_ * 128; }
  int ways() const { return ways_; }
  int64_t sets() const { return sets_; }

  // Returns true on a hit. On a miss, sectorsFilled() grows by the sectors brought in.
  bool read(uint64_t sectorAddr, int fetchBytes = 32);
  // Returns true on a hit (the sector was present; it is not changed otherwise).
  bool updateIfPresent(uint64_t sectorAddr);
  // Returns true if the sector was already readable or written before (a write never waits).
  bool write(uint64_t sectorAddr, uint32_t byteMask);
  // Writes every dirty sector back (counted in dirtySectorsWrittenBack()); returns how many.
  int64_t flushDirty();

  int64_t sectorsFilled() const { return sectorsFilled_; }                      // reads from below
  int64_t dirtySectorsWrittenBack() const { return dirtyWrittenBack_; }          // evictions + flushes

 private:
  struct Line {
    uint64_t tag = 0;          // line address / 128, plus 1 (0: empty way)
    uint64_t lastUse = 0;      // LRU clock
    uint8_t valid = 0;         // bit s: sector s filled from below
    uint8_t dirty = 0;         // bit s: sector s has written bytes not yet written back
    uint32_t written[4] = {};  // per sector: bytes written since the line was allocated
  };
  Line* find(uint64_t line);
  Line& allocate(uint64_t line);  // evicts the LRU way of the set (writing back its dirty sectors)
  static bool readable(const Line& l, int s) { return (l.valid >> s & 1) || l.written[s] == 0xFFFFFFFFu; }

  int ways_ = 0;
  int64_t sets_ = 0;
  std::vector<Line> lines_;  // sets_ x ways_
  uint64_t clock_ = 0;
  int64_t sectorsFilled_ = 0;
  int64_t dirtyWrittenBack_ = 0;
};

}  // namespace tl::sim
