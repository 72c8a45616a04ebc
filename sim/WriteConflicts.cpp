// Write-conflict detection (contract in WriteConflicts.h).
#include "sim/WriteConflicts.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>

#include "sim/ElementOps.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>

#include "sim/ElementOps.h"

namespace tl::sim {

namespace {

std::string threadName(int thread) {
  return "thread " + std::to_string(thread) + " (warp " + std::to_string(thread / 32) + ", lane " +
         std::to_string(thread % 32) + ")";
}

}  // namespace

std::string describeWriteConflict(const WriteConflict& c, uint64_t addr, DType dtype, const Memory& memory) {
  auto show = [&](uint64_t bits) {
    const Slot v = loadElement(reinterpret_cast<const uint8_t*>(&bits), dtype);
    char buf[40];
    if (isFloat(dtype)) std::snprintf(buf, sizeof buf, "%.9g", double(asF(v)));
    else std::snprintf(buf, sizeof buf, "%" PRId64, asI(v));
    return std::string(buf);
  };
  char at[32];
  std::snprintf(at, sizeof at, "0x%" PRIx64, addr);
  const uint64_t size = static_cast<uint64_t>(dtypeBytes(dtype));
  std::string where = at;
  for (const Buffer& b : memory.buffers())  // the executor checked the address: it is in one
    if (addr >= b.base && addr - b.base < b.bytes.size())
      where += " (" + b.name + formatIndex(b.shape, static_cast<int64_t>((addr - b.base) / size)) + ")";
  return "write conflict: " + threadName(c.firstThread) + " register " + std::to_string(c.firstReg) + " and " +
         threadName(c.thread) + " register " + std::to_string(c.reg) + " of this store both write address " + where +
         " with different values (" + show(c.firstBits) + " and " + show(c.bits) +
         "); which one lands is undefined (on a GPU, whichever lane wins)";
}

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
