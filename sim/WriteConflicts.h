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
// How: a hash map from (address, instruction, instance) to the first writer (thread, register,
// bytes), cleared at every block. O(1) expected work per stored element.
#pragma once

#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <vector>

namespace tl::sim {

// The two writers of a conflict: threads are block-linear (warp * 32 + lane), registers are
// the element's register number in its thread.
struct WriteConflict {
  int firstThread = 0, firstReg = 0;
  int thread = 0, reg = 0;
  uint64_t firstBits = 0, bits = 0;  // the stored bytes, little-endian in the low bits
};

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
  struct Key {
    uint64_t addr;
    int32_t instr;
    uint32_t instance;
    bool operator==(const Key&) const = default;
  };
  struct KeyHash {
    size_t operator()(const Key& k) const {
      return static_cast<size_t>(k.addr * 0x9E3779B97F4A7C15ull ^ (uint64_t(uint32_t(k.instr)) << 32 | k.instance));
    }
  };
  struct Writer {
    int thread, reg;
    uint64_t bits;
  };
  std::unordered_map<Key, Writer, KeyHash> writers_;
  std::vector<uint32_t> counts_;  // [warp * numInstrs + instr]: executions so far in this block
  size_t numInstrs_ = 0;
};

}  // namespace tl::sim
