// Write-conflict detection for the thread-IR executor's global stores (docs/language.md,
// "Write conflicts"; docs/executor.md section 6).
//
// A WRITE CONFLICT is two elements of ONE dynamic instance of one store that write the same
// address with different bytes. The elements of one block-level store are spread over every
// lane and register of every warp of a block, and warps run one after another (to a barrier or
// the end), so one store instance is executed once by each warp, at different times. Its
// instance number is how many times that warp executed that instruction before in this block
// (every warp runs the same sequence of block-level ops). Equal bytes are fine: a replicated
// layout has several threads store the same element with the same value.
//
// Stores of different instances (a loop's iterations, two store ops) to one address are
// program order, not a conflict; stores of different blocks are not looked at here (issue 12).
//
// How: a hash table from (address, instruction, instance) to the first writer (thread, register,
// bytes), cleared at every block. O(1) expected work per stored element, no allocation once the
// table has grown to a block's stores.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "ir/Type.h"
#include "runtime/Memory.h"

namespace tl::sim {

// The two writers of a conflict: threads are block-linear (warp * 32 + lane), registers are
// the element's register number in its thread.
struct WriteConflict {
  int firstThread = 0, firstReg = 0;
  int thread = 0, reg = 0;
  uint64_t firstBits = 0, bits = 0;  // the stored bytes, little-endian in the low bits
};

// "write conflict: thread 0 (warp 0, lane 0) register 0 and thread 32 (warp 1, lane 0) register 0
// of this store both write address 0x10001800 (out_ptr[0]) with different values (0 and 64);
// which one lands is undefined (on a GPU, whichever lane wins)" (the caller adds where).
std::string describeWriteConflict(const WriteConflict& c, uint64_t addr, DType dtype, const Memory& memory);

class WriteConflictDetector {
 public:
  // A new block of `numWarps` warps running a function of `numInstrs` instructions.
  void beginBlock(int numWarps, size_t numInstrs);
  // The instance number of warp `warp`'s next execution of store instruction `instr` (call
  // once per execution of the store by that warp).
  uint32_t nextInstance(int warp, int32_t instr);
  // Records one element write; true (and `out` filled) when an element of the same instance
  // already wrote `addr` with other bytes. The first writer stays recorded.
  bool onWrite(uint64_t addr, int32_t instr, uint32_t instance, int thread, int reg, uint64_t bits, WriteConflict& out);

 private:
  // An open-addressing table (linear probing, power-of-two size); an entry belongs to the
  // current block when its gen is gen_, so a new block clears it in O(1).
  struct Entry {
    uint64_t addr = 0;
    int32_t instr = 0;
    uint32_t instance = 0;
    uint32_t gen = 0;
    int32_t thread = 0, reg = 0;
    uint64_t bits = 0;
  };
  static size_t hash(uint64_t addr, int32_t instr, uint32_t instance) {
    uint64_t h = (addr >> 2) ^ (uint64_t(uint32_t(instr)) << 40) ^ (uint64_t(instance) << 20);
    return static_cast<size_t>((h * 0x9E3779B97F4A7C15ull) >> 20);
  }
  void grow();
  std::vector<Entry> table_ = std::vector<Entry>(4096);
  size_t live_ = 0;   // entries of the current block
  uint32_t gen_ = 1;  // the current block's generation (entries start at 0: empty)
  std::vector<uint32_t> counts_;  // [warp * numInstrs + instr]: executions so far in this block
  size_t numInstrs_ = 0;
};

}  // namespace tl::sim
