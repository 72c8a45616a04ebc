// A cycle-level model of ONE streaming multiprocessor: its warp schedulers issuing the
// instructions of the resident warps, in order, with a scoreboard; memory requests that
// complete after their latency or after the SM's share of the memory bandwidth lets them;
// barriers; blocks that retire and are replaced by the next ones. The timing model
// (sim/Timing.h) builds its input from an executor run and extrapolates the result to the chip;
// this file knows nothing about the IR, so it can be tested on hand-written streams.
// docs/sim.md, "Latency hiding and time", explains the model for a student.
//
// The rules, cycle by cycle:
//   - the SM has `schedulers` warp schedulers; warp slot k (in the order warps become resident)
//     belongs to scheduler k % schedulers, as the hardware's sub-partitions split warps;
//   - each cycle, each scheduler that is not busy issues ONE instruction of one eligible warp,
//     greedy-then-oldest (GTO): the warp it issued last if that one can go on, else the oldest
//     eligible warp (lowest block index, then warp) — so a warp runs ahead to its loads and
//     the memory system gets work early, instead of every warp creeping forward together;
//     an instruction standing for several machine instructions (an add on 8 registers is 8
//     FADDs) keeps its scheduler busy for `issueCycles` cycles;
//   - a warp issues in program order; its next instruction is eligible when the warp's previous
//     instruction has finished issuing and every instruction in `deps` has completed
//     (the scoreboard);
//   - completion: Alu: last issue cycle + latency. Global loads and stores: the request takes
//     its bytes through three FIFO queues of this SM: the L1TEX pipe (pipeCycles cycles), the
//     SM's share of the L2 bandwidth (l2Bytes) and of the DRAM bandwidth (dramBytes); it
//     completes at max(issue + latency, the time each queue has served it). With few requests
//     in flight the latency decides; with many, the bandwidth does (Little's law). Shared
//     memory and shuffles: after the L1TEX pipe served their wavefronts, + latency - 1.
//     Stores are not waited for by anyone, but their bytes occupy the queues, and the SM is
//     only finished when every queue has drained;
//   - a Barrier holds its warp until every warp of its block has issued it; all are released
//     `barrierLatency` cycles after the last arrival;
//   - Exit ends the warp; when every warp of a block has exited, the block retires and, after
//     `blockLaunchCycles`, the next block (if any remain) takes its place; two blocks never
//     start on the SM less than `blockLaunchInterval` cycles apart (the first wave included).
//     Block j of the SM replays sample[j % sample.size()].
//
// Expects: every dep index smaller than the instruction's own index; every warp stream ending
// with an Exit (a stream that does not is given one); all warps of a block reaching the same
// barriers (a block whose warps cannot all reach a barrier throws std::runtime_error instead of
// hanging). Guarantees: deterministic; a timeline (when asked for) that covers every cycle of
// every recorded warp from its block's start to the end of the run, without gap or overlap.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "ir/Diagnostics.h"

namespace tl {

// What an instruction does, as far as timing goes.
enum class TimedKind : uint8_t {
  Alu,          // fixed latency: arithmetic, ids, branches (the result after `latency` cycles)
  GlobalLoad,   // a global-memory load: queues, then the result
  GlobalStore,  // a global-memory store: queues; nobody waits for it
  Shared,       // shared-memory access or shuffle: the L1TEX pipe, then `latency`
  Tensor,       // mma: its sub-partition's tensor core for `pipeCycles`, the result `latency`
                //   after the tensor core starts it
  Barrier,      // __syncthreads(): waits for every warp of the block
  Exit,         // return: the warp is done
};
const char* timedKindName(TimedKind k);

// One warp-level instruction of a stream.
struct TimedInstr {
  TimedKind kind = TimedKind::Alu;
  int32_t instr = -1;          // instruction id in the thread IR (-1: made up, as in tests)
  Loc loc;                     // its source line (for the timeline)
  int issueCycles = 1;         // scheduler cycles it takes (>= 1)
  int latency = 4;             // cycles from its last issue cycle to its result (memory: unloaded)
  int pipeCycles = 0;          // L1TEX pipe cycles (wavefronts); Tensor: tensor-core cycles
  double l2Bytes = 0;          // bytes it moves between the SM and L2
  double dramBytes = 0;        // bytes it moves to or from DRAM
  std::vector<int32_t> deps;   // earlier instructions of the same warp whose results it needs
};

// The streams of one block: warps[w] is warp w's instructions in program order.
struct BlockStream {
  std::vector<std::vector<TimedInstr>> warps;
};

// A warp's state during one cycle (the timeline's colours).
enum class WarpState : uint8_t {
  Issuing,            // its scheduler is issuing one of its instructions
  WaitingMemory,      // its next instruction needs a global/shared-memory or shuffle result not yet back
  WaitingDependency,  // its next instruction needs an arithmetic result not yet ready
  WaitingBarrier,     // at a barrier, waiting for the other warps of its block
  Idle,               // ready to issue, but its scheduler issued another warp (or was busy)
  Done,               // returned; waits for the rest of the SM to finish
};
constexpr int kWarpStates = 6;
const char* warpStateName(WarpState s);  // "issuing", "waiting memory", ...

// One stretch of time a warp spent in one state: cycles [start, end).
struct WarpSegment {
  int64_t block = 0;     // index of the block on this SM (0, 1, ... in launch order)
  int32_t warp = 0;      // warp within the block
  int32_t slot = 0;      // resident-block slot it occupied (for drawing)
  int64_t start = 0, end = 0;
  WarpState state = WarpState::Idle;
  int32_t instr = -1;    // Issuing: the instruction issued; waits: the instruction waited for
                         // (the load, the barrier); Idle: the instruction ready to issue; Done: -1
  Loc loc;               // that instruction's source line
};

struct SmConfig {
  int schedulers = 4;           // warp schedulers (sub-partitions) per SM
  int residentBlocks = 1;       // blocks resident at once
  int64_t blocks = 1;           // blocks this SM runs in all
  double dramBytesPerCycle = 0; // this SM's share of DRAM bandwidth (> 0)
  double l2BytesPerCycle = 0;   // this SM's share of L2 bandwidth (> 0)
  int barrierLatency = 20;      // cycles from the last arrival to the release
  int blockLaunchCycles = 0;    // cycles between a block retiring and the next one starting
  int blockLaunchInterval = 0;  // fewest cycles between two block starts on this SM (the
                                // block scheduler's rate; 0: no limit)
  int64_t timelineBlocks = 0;   // record segments for the first N blocks (-1: all; 0: none)
};

// The most segments a timeline keeps (about 10 MB; its Chrome trace about 30 MB, and a few
// hundred MB while it is built as JSON): a kernel that runs longer keeps the beginning, and
// says so (SmResult::timelineTruncated, the trace's otherData.timeline_truncated).
constexpr size_t kMaxTimelineSegments = 200'000;

struct SmResult {
  int64_t cycles = 0;               // until the last block retired and every queue drained
  std::vector<int64_t> blockStart;  // per block (launch order): the cycle it became resident
  std::vector<int64_t> blockDone;   // per block: the cycle its last warp exited
  int64_t issueCycles = 0;          // scheduler cycles spent issuing (all schedulers)
  int64_t instructions = 0;         // warp-level instructions issued
  double dramBytes = 0, l2Bytes = 0;
  double dramBusyCycles = 0;        // dramBytes / dramBytesPerCycle
  double l2BusyCycles = 0;
  double pipeBusyCycles = 0;        // L1TEX pipe cycles
  double tensorBusyCycles = 0;      // tensor-core cycles, summed over the sub-partitions
  int64_t mmaInstructions = 0;      // mma issued
  double dramByteCycles = 0;        // sum over DRAM requests of bytes x (completion - issue)
  std::array<int64_t, kWarpStates> warpCycles{};  // warp-cycles per state, every warp
  std::vector<WarpSegment> timeline;              // the first timelineBlocks blocks' warps
  bool timelineTruncated = false;                 // it reached kMaxTimelineSegments and stopped

  // Little's law: the average DRAM bytes in flight, and the byte-weighted mean time a DRAM
  // request took (issue to completion); inFlight = (dramBytes / cycles) x meanLatency.
  double dramBytesInFlight() const { return cycles ? dramByteCycles / double(cycles) : 0.0; }
  double dramMeanLatency() const { return dramBytes > 0 ? dramByteCycles / dramBytes : 0.0; }
};

// Runs config.blocks blocks on one SM, block j replaying sample[j % sample.size()]. Throws
// std::invalid_argument for an empty sample, a warp-less block, a dep that is not earlier, a
// non-positive bandwidth or counts; std::runtime_error if a block's warps cannot all reach a
// barrier (one exited while others wait).
SmResult simulateSm(const std::vector<BlockStream>& sample, const SmConfig& config);

}  // namespace tl
