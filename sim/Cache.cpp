// The sectored LRU cache: see sim/Cache.h.
#include "sim/Cache.h"

#include <algorithm>
#include <bit>

namespace tl::sim {

SectoredCache::SectoredCache(int64_t capacityBytes, int ways) : ways_(std::max(1, ways)) {
  sets_ = std::max<int64_t>(0, capacityBytes) / (int64_t(ways_) * 128);
  lines_.assign(size_t(sets_ * ways_), Line{});
}

SectoredCache::Line* SectoredCache::find(uint64_t line) {
  if (sets_ == 0) return nullptr;
  Line* set = &lines_[size_t(int64_t(line % uint64_t(sets_)) * ways_)];
  for (int w = 0; w < ways_; ++w)
    if (set[w].tag == line + 1) return &set[w];
  return nullptr;
}

SectoredCache::Line& SectoredCache::allocate(uint64_t line) {
  Line* set = &lines_[size_t(int64_t(line % uint64_t(sets_)) * ways_)];
  Line* victim = &set[0];
  for (int w = 0; w < ways_; ++w) {
    if (set[w].tag == 0) { victim = &set[w]; break; }
    if (set[w].lastUse < victim->lastUse) victim = &set[w];
  }
  dirtyWrittenBack_ += std::popcount(unsigned(victim->dirty));
  *victim = Line{};
  victim->tag = line + 1;
  return *victim;
}

bool SectoredCache::read(uint64_t sectorAddr, int fetchBytes) {
  if (sets_ == 0) {  // no capacity: everything comes from below
    ++sectorsFilled_;
    return false;
  }
  uint64_t line = sectorAddr / 128;
  int s = int(sectorAddr / 32 % 4);
  Line* l = find(line);
  if (l && readable(*l, s)) {
    l->lastUse = ++clock_;
    return true;
  }
  if (!l) l = &allocate(line);
  l->lastUse = ++clock_;
  // Fill the aligned group of `fetchBytes` around the sector: those not already readable.
  int group = std::clamp(fetchBytes / 32, 1, 4);
  int first = s / group * group;
  for (int t = first; t < first + group; ++t) {
    if (readable(*l, t)) continue;
    l->valid |= uint8_t(1u << t);
    ++sectorsFilled_;
  }
  return false;
}

bool SectoredCache::updateIfPresent(uint64_t sectorAddr) {
  Line* l = find(sectorAddr / 128);
  int s = int(sectorAddr / 32 % 4);
  if (!l || !readable(*l, s)) return false;
  l->lastUse = ++clock_;
  return true;
}

bool SectoredCache::write(uint64_t sectorAddr, uint32_t byteMask) {
  if (sets_ == 0) {  // no capacity: written straight through
    ++dirtyWrittenBack_;
    return false;
  }
  uint64_t line = sectorAddr / 128;
  int s = int(sectorAddr / 32 % 4);
  Line* l = find(line);
  bool hit = l && (readable(*l, s) || l->written[s] != 0);
  if (!l) l = &allocate(line);
  l->lastUse = ++clock_;
  l->written[s] |= byteMask;
  l->dirty |= uint8_t(1u << s);
  return hit;
}

int64_t SectoredCache::flushDirty() {
  int64_t n = 0;
  for (Line& l : lines_) {
    n += std::popcount(unsigned(l.dirty));
    l.dirty = 0;
  }
  dirtyWrittenBack_ += n;
  return n;
}

}  // namespace tl::sim
