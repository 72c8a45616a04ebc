// Write-conflict detection (contract in WriteConflicts.h).
#include "sim/WriteConflicts.h"

namespace tl::sim {

void WriteConflictDetector::beginBlock(int numWarps, size_t numInstrs) {
  writers_.clear();
  numInstrs_ = numInstrs;
  counts_.assign(static_cast<size_t>(numWarps) * numInstrs, 0);
}

uint32_t WriteConflictDetector::nextInstance(int warp, int32_t instr) {
  return counts_[static_cast<size_t>(warp) * numInstrs_ + static_cast<size_t>(instr)]++;
}

bool WriteConflictDetector::onWrite(uint64_t addr, int32_t instr, uint32_t instance, int thread, int reg,
                                    uint64_t bits, WriteConflict& out) {
  auto [it, inserted] = writers_.try_emplace(Key{addr, instr, instance}, Writer{thread, reg, bits});
  if (inserted || it->second.bits == bits) return false;
  out = WriteConflict{it->second.thread, it->second.reg, thread, reg, it->second.bits, bits};
  return true;
}

}  // namespace tl::sim
