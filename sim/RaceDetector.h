// Shared-memory race detection for the thread-IR executor: shadow state per shared byte.
//
// A RACE is two accesses to the same shared-memory byte, by threads of DIFFERENT warps of one
// block, in the same barrier epoch (no barrier executed between them), at least one a write.
// Two writes of the same value still count: the program is wrong even if the bytes agree.
//
// Accesses by lanes of the SAME warp are never a race here: the executor runs a warp in
// lockstep, one instruction at a time for all its lanes, so the warp's own accesses are
// ordered by program order (a real GPU since Volta no longer promises lockstep, and CUDA would
// want __syncwarp(); tilelab's lowering only relies on shuffles within a warp, so we keep the
// simpler model and say so in docs/executor.md).
//
// How: every byte keeps the epoch, thread and instruction of its last write, and of up to two
// reads since the epoch began (the first reader and the first reader from another warp than
// it: enough to name a reader of a different warp than any later writer). Epochs are numbered
// across the whole run (a new block starts a new epoch), so nothing is cleared per block.
//
// Expects: thread ids < 65535 (at most 32 warps of 32 lanes), byte offsets already
// bounds-checked by the executor.
// Guarantees: onRead/onWrite report the first conflict they see, with both accesses; O(1) work
// and no allocation per byte accessed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace tl::sim {

// One side of a conflicting pair.
struct RaceAccess {
  int thread = 0;   // thread id in the block (warp = thread / 32, lane = thread % 32)
  int instr = 0;    // instruction id (pre-order index of the op, see instructionTable)
  bool write = false;
};

struct RaceConflict {
  uint32_t byte = 0;   // the shared-memory byte offset both touched
  RaceAccess earlier;  // the recorded access
  RaceAccess later;    // the access being made now
};

class RaceDetector {
 public:
  // Sizes the shadow for a block's shared memory (done once per run).
  void reset(int64_t sharedBytes);
  // A new block or a released barrier: earlier accesses can no longer race with later ones.
  void newEpoch();

  // Record an access of `bytes` bytes at `offset`; on a race, fill `out` and return true.
  bool onRead(uint32_t offset, uint32_t bytes, int thread, int instr, RaceConflict& out);
  bool onWrite(uint32_t offset, uint32_t bytes, int thread, int instr, RaceConflict& out);

 private:
  static constexpr uint16_t kNone = 0xFFFF;
  struct ByteShadow {
    uint32_t writeEpoch = 0;  // epoch of the last write (0: never written)
    uint32_t readEpoch = 0;   // epoch of reader1/reader2 (0: never read)
    uint16_t writer = kNone, reader1 = kNone, reader2 = kNone;
    int32_t writeInstr = 0, read1Instr = 0, read2Instr = 0;
  };
  std::vector<ByteShadow> shadow_;
  uint32_t epoch_ = 1;
};

}  // namespace tl::sim
