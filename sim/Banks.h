// Shared-memory bank conflicts of ONE warp-level access, as wavefronts (sm_70 and later). The
// second half of the per-access memory model (sim/MemoryModel.h); rules and sources: docs/sim.md,
// "Shared memory".
//
// The rules:
//   - shared memory is 32 banks, 4 bytes wide: the 4-byte word at byte offset o is word o / 4,
//     in bank (o / 4) % 32; a bank delivers one word per cycle, so one WAVEFRONT (one pass
//     through the data stage, 128 bytes) serves at most one distinct word per bank;
//   - the hardware serves the warp in GROUPS of lanes that move at most 128 bytes together:
//     all 32 lanes for 1-, 2- and 4-byte accesses, each half-warp (lanes 0-15, 16-31) for
//     8-byte accesses, each quarter-warp (0-7, 8-15, 16-23, 24-31) for 16-byte accesses;
//     lanes of different groups never conflict;
//   - in a group, wavefronts = the largest number of DISTINCT words any one bank must deliver
//     (lanes reading the same word share it: a broadcast, not a conflict; for a store, one of
//     them writes); a group with no active lane costs nothing;
//   - ideal wavefronts = the number of groups with an active lane (1 for a 4-byte access, 2 for
//     a full-warp 8-byte access, 4 for a full-warp 16-byte access); bank conflicts = wavefronts
//     - ideal, which is how Nsight Compute's l1tex__data_bank_conflicts_pipe_lsu_mem_shared_*
//     relate to l1tex__data_pipe_lsu_wavefronts_mem_shared_* for a kernel alone on its SM.
//
// Expects: a WarpAccess with 1 <= bytes <= 16 (checked: std::invalid_argument).
// Guarantees: a pure function, no allocation; each active lane gets the wavefront (0-based,
// counted over the whole instruction) in which its last word is delivered.
#pragma once

#include <array>
#include <cstdint>

#include "sim/ThreadExecutor.h"

namespace tl {

constexpr int kBanks = 32;
constexpr int kBankBytes = 4;

struct LaneBank {
  bool active = false;
  uint64_t addr = 0;   // byte offset in shared memory
  int bytes = 0;
  uint64_t word = 0;   // first 4-byte word: addr / 4
  int words = 0;       // words the access spans (1 for <= 4 aligned bytes, 2 for 8, 4 for 16)
  int bank = 0;        // bank of the first word; the others follow: (bank + i) % 32
  int group = 0;       // which lane group serves it (0 for <= 4 bytes; 0-1 for 8; 0-3 for 16)
  int wavefront = -1;  // 0-based wavefront of the instruction that delivers its (last) word
};

struct BankAccess {
  std::array<LaneBank, 32> lanes{};
  int lanesPerGroup = 32;   // 32, 16 or 8 (see above)
  int wavefronts = 0;       // what the access costs
  int idealWavefronts = 0;  // what it would cost without conflicts
  int bankConflicts = 0;    // wavefronts - idealWavefronts
  int maxWays = 0;          // the worst group's wavefronts: "an N-way bank conflict"
};

// Lanes the hardware serves together for a `bytes`-wide access: 32, 16 or 8.
int sharedLanesPerGroup(int bytes);

BankAccess banks(const WarpAccess& a);

}  // namespace tl
