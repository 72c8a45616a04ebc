// Write-conflict detection (contract in WriteConflicts.h).
#include "sim/WriteConflicts.h"

#include <algorithm>

#include <algorithm>

namespace tl::sim {

void WriteConflictDetector::beginBlock(int numWarps, size_t numInstrs) {
  if (++gen_ == 0) {  // wrapped: clear for real once every 2^32 blocks
    std::fill(table_.begin(), table_.end(), Entry{});
    gen_ = 1;
  }
  live_ = 0;
  numInstrs_ = numInstrs;
  counts_.assign(static_cast<size_t>(numWarps) * numInstrs, 0);
}

uint32_t WriteConflictDetector::nextInstance(int warp, int32_t instr) {
  return counts_[static_cast<size_t>(warp) * numInstrs_ + static_cast<size_t>(instr)]++;
}

bool WriteConflictDetector::onWrite(uint64_t addr, int32_t instr, uint32_t instance, int thread, int reg,
                                    uint64_t bits, WriteConflict& out) {
  if (2 * (live_ + 1) > table_.size()) grow();
  const size_t mask = table_.size() - 1;
  for (size_t i = hash(addr, instr, instance) & mask;; i = (i + 1) & mask) {
    Entry& e = table_[i];
    if (e.gen != gen_) {  // empty: the first writer of this address in this instance
      e = Entry{addr, instr, instance, gen_, thread, reg, bits};
      ++live_;
      return false;
    }
    if (e.addr == addr && e.instr == instr && e.instance == instance) {
      if (e.bits == bits) return false;
      out = WriteConflict{e.thread, e.reg, thread, reg, e.bits, bits};
      return true;
    }
  }
}

void WriteConflictDetector::grow() {
  std::vector<Entry> old(table_.size() * 2);
  old.swap(table_);
  const size_t mask = table_.size() - 1;
  for (const Entry& e : old) {
    if (e.gen != gen_) continue;
    size_t i = hash(e.addr, e.instr, e.instance) & mask;
    while (table_[i].gen == gen_) i = (i + 1) & mask;
    table_[i] = e;
  }
}

}  // namespace tl::sim
