// The simulator's functional core: runs thread IR over the whole grid, warp by warp in
// lockstep, and records every memory access for the memory model.
//
// Expects: a verified thread-level Function (stages/thread/Lowering.h) and a Memory holding one
// buffer per pointer parameter (named as the parameter), as the interpreters do.
// Guarantees: the outputs the GPU would compute; a RuntimeError (located at the op) for an
// unmasked out-of-bounds global access (with block, thread, warp, lane and address), a barrier
// not reached by every thread of the block (never a hang), a shuffle reading an inactive lane,
// a misaligned vector access, and (when detection is on) a shared-memory race between threads
// of different warps with no barrier between their accesses; nothing is read or written outside
// a buffer or outside the block's shared memory.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "frontend/Launch.h"
#include "ir/IR.h"
#include "runtime/Memory.h"

namespace tl {

enum class MemSpace : uint8_t {
  Global,  // device memory (buffers)
  Shared,  // the block's shared memory (addresses are byte offsets)
};

// One warp-level memory instruction as executed: what the coalescing and bank-conflict models
// consume. `addr[lane]` is the first byte lane `lane` accessed; `bytes` bytes per active lane.
struct WarpAccess {
  int64_t block = 0;         // linear block id (x fastest)
  int32_t warp = 0;          // warp within the block
  int32_t instr = 0;         // the op's index in a pre-order walk of the function (stable id)
  MemSpace space = MemSpace::Global;
  bool store = false;
  uint8_t bytes = 0;         // per lane: elementBytes x vec
  uint32_t activeMask = 0;   // lanes that accessed memory (masked-off lanes excluded)
  Loc loc;                   // source line of the op
  std::array<uint64_t, 32> addr{};
};

struct ExecOptions {
  bool recordAccesses = true;  // fill ExecResult::accesses
  bool detectRaces = true;     // shared-memory race detection
  int64_t maxBlocks = -1;      // run only the first N blocks (-1: all); for sampling
};

struct ExecStats {
  int64_t blocks = 0;
  int64_t warpInstructions = 0;  // warp-level ops executed
  int64_t barriers = 0;          // barrier releases
  int64_t divergentBranches = 0; // ifs/loops where the active lanes disagreed
};

struct ExecResult {
  ExecStats stats;
  std::vector<WarpAccess> accesses;
};

// Stable instruction ids: the op at index i of a pre-order walk of fn.body has id i.
std::vector<const Op*> instructionTable(const Function& fn);

ExecResult runThreadIR(const Function& fn, const LaunchConfig& launch, Memory& memory,
                       const ExecOptions& options = {});

}  // namespace tl
