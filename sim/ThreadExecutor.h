// The simulator's functional core: runs thread IR over the whole grid, warp by warp in
// lockstep, and records every memory access for the memory model. How it works, for a student:
// docs/executor.md.
//
// Expects: a thread-level Function (stages/thread/Lowering.h; runThreadIR verifies it first and
// throws IRError if it fails, is block IR, or has num_warps outside 1..32) and a Memory holding
// one buffer per pointer parameter (named as the parameter), as the interpreters do. The block
// size is the FUNCTION's numWarps (what it was lowered for); launch.numWarps is not consulted.
// Scalars come from launch.scalars, the grid from launch.grid.
// Guarantees: the outputs the GPU would compute, with the element semantics of
// stages/scalar/ScalarInterpreter.cpp applied register by register; a RuntimeError (located at
// the op, naming block, thread, warp, lane and instruction id) for an unmasked out-of-bounds
// global or shared access (a faulting store writes nothing), an integer division by zero, a
// barrier not reached by every thread of the block (never a hang), a failing assert_regs
// ("device assertion failed: msg (pid (..) warp W lane L idx (..))"), warps waiting at different
// barriers, a shuffle reading an inactive lane, a misaligned (vector) access — an internal
// compiler error —, a write conflict (sim/WriteConflicts.h) and, when detection is on, a shared-memory race between threads of
// different warps with no barrier between their accesses (naming both threads, both
// instructions and both source lines), a global-memory race between programs (two blocks
// touching one element, at least one plain write or one atomic against a plain access, with no
// atomic release/acquire ordering them: sim/GlobalRaces.h, naming both programs, threads,
// lines and the element; the first one found is thrown when the run ends, unless a fault
// stopped it before) and, with initCheck, a read of an element of an empty() buffer no
// program wrote yet. Nothing is read or written outside a buffer or outside the block's
// shared memory.
//
// Choices a reader may need:
//   - shared memory starts every block filled with 0xFF bytes (f32 NaN, i32 -1), so a read of
//     memory no thread wrote shows up as a wrong result;
//   - lanes of one warp never race with each other (lockstep orders them); two elements of one
//     dynamic global store instance (any lanes, registers, warps of a block) that write one
//     address with different bytes are a write conflict, a RuntimeError naming the block and
//     both threads (warp, lane, register); equal bytes are fine (replicated layouts);
//   - shfl_idx takes its source lane modulo 32 (as __shfl_sync does);
//   - a vector group's addresses are checked (consecutive, aligned to vec x elementBytes) when
//     any element of the group is unmasked; masked-off elements are neither read nor written.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "frontend/Launch.h"
#include "ir/IR.h"
#include "runtime/DevicePrint.h"
#include "runtime/Memory.h"

namespace tl {

enum class MemSpace : uint8_t {
  Global,  // device memory (buffers)
  Shared,  // the block's shared memory (addresses are byte offsets)
};

// One warp-level memory instruction as executed: what the coalescing and bank-conflict models
// consume. One record per access group (register group of `vec` registers) per warp-level
// instruction, in execution order; a group no lane accessed (all its elements masked off in
// every lane) is not recorded. `addr[lane]` is the first byte of lane `lane`'s group (the byte
// offset for shared memory), valid for lanes in activeMask (0 elsewhere); `bytes` bytes per
// active lane (a partly masked group still counts as the whole group: one vector access).
struct WarpAccess {
  int64_t block = 0;         // linear block id (x fastest)
  int32_t warp = 0;          // warp within the block
  int32_t instr = 0;         // the op's index in a pre-order walk of the function (stable id)
  MemSpace space = MemSpace::Global;
  bool store = false;
  bool atomic = false;       // an atomic read-modify-write (store is true as well): served at L2
  uint8_t bytes = 0;         // per lane: elementBytes x vec
  uint32_t activeMask = 0;   // lanes that accessed memory (masked-off lanes excluded)
  Loc loc;                   // source line of the op
  std::array<uint64_t, 32> addr{};
};

struct ExecOptions {
  bool recordAccesses = true;  // fill ExecResult::accesses
  bool detectRaces = true;     // shared-memory races in a block and global-memory races between programs
  bool initCheck = true;       // reads of empty() buffers' elements before any program wrote them
  // The race detector between programs stops (with a note in ExecResult::notes, never an error)
  // when its shadow state would pass this many bytes.
  int64_t maxRaceShadowBytes = int64_t(256) << 20;
  int64_t maxBlocks = -1;      // run only the first N blocks (-1: all); for sampling
  bool traceWarps = false;     // fill ExecResult::traces (the timing model's input, sim/Timing.h)
  // > 0: a cap on what accesses and traces may hold. The run stops before a block that would
  // pass it (judged by the average block so far), drops a block that passes it part-way (its
  // memory writes stay) and sets ExecResult::stoppedAtRecordCap; block 0 passing it alone is a
  // RuntimeError at the op running then. 0: unbounded.
  int64_t maxRecordBytes = 0;
  // Where print_regs writes (runtime/DevicePrint.h: "pid (x, y, z) warp W lane L idx (..)...",
  // in execution order); nullptr: the lines are only counted (ExecStats::printedLines).
  DeviceOutput* print = nullptr;
};

// One op a warp stepped through, in its execution order (ExecOptions::traceWarps). Every op
// appears, yields, ifs, fors, barriers and the final return included, so that a replay can
// follow the control flow (a loop's body ops appear once per iteration, a divergent if's two
// regions one after the other).
struct TraceEntry {
  int32_t instr = 0;          // the op's instruction id (instructionTable)
  uint32_t activeMask = 0;    // the lanes active when it ran
  int64_t firstAccess = -1;   // memory ops: index in ExecResult::accesses of its first record (-1: none)
  int32_t accessCount = 0;    // memory ops: how many WarpAccess records it produced (one per access group)
};

// The ops one warp of one block executed (firstAccess needs recordAccesses to mean anything).
struct WarpTrace {
  int64_t block = 0;  // linear block id
  int32_t warp = 0;
  std::vector<TraceEntry> entries;
};

struct ExecStats {
  int64_t blocks = 0;
  int64_t warpInstructions = 0;  // warp-level ops issued (every op a warp runs except yield)
  int64_t barriers = 0;          // barrier releases
  int64_t divergentBranches = 0; // ifs whose lanes split, loops whose lanes left at different iterations
  int64_t atomics = 0;           // atomic element operations (one per active lane and register of atom ops)
  int64_t printedLines = 0;      // print_regs lines (one per active lane and unmasked register)
  int64_t assertsChecked = 0;    // assert_regs elements checked (one per active lane and register)
};

struct ExecResult {
  ExecStats stats;
  std::vector<WarpAccess> accesses;
  std::vector<WarpTrace> traces;  // traceWarps: one per warp per block run, block-major
  bool stoppedAtRecordCap = false;  // fewer blocks than asked ran: maxRecordBytes (stats.blocks ran)
  std::vector<std::string> notes;   // what the run could not check (the race detector's stop), for the user
};

// Stable instruction ids: the op at index i of a pre-order walk of fn.body has id i (an op
// before the ops of its regions), as WarpAccess::instr and the error messages use them.
std::vector<const Op*> instructionTable(const Function& fn);

// Runs blocks in grid order (x fastest), up to options.maxBlocks, within the process's work
// budget (runtime/Budget.h: one step per warp instruction, yields included). Throws IRError for IR it
// cannot run, std::runtime_error for a missing buffer/scalar or a bad grid, RuntimeError for a
// fault during the run (Memory then holds whatever was written before it).
ExecResult runThreadIR(const Function& fn, const LaunchConfig& launch, Memory& memory,
                       const ExecOptions& options = {});

}  // namespace tl
