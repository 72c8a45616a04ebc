// The timing model: how long a kernel takes on a GPU, and why. It replays the instructions each
// warp executed (the executor's traces) on a cycle-level model of one SM (sim/SmModel.h), with
// as many blocks resident as the occupancy allows, and extrapolates to the chip. docs/sim.md,
// "Latency hiding and time", explains it for a student, with Little's law for the H200.
//
//   ExecOptions eo; eo.traceWarps = true; eo.maxBlocks = 64;        // a sample of blocks
//   ExecResult run = runThreadIR(fn, launch, memory, eo);
//   MemoryReport mem = analyzeMemory(run.accesses, gpu, {...});    // optional: cache hit rates
//   TimingOptions to; to.gridBlocks = launch blocks; to.memory = &mem;
//   TimingResult t = predictTime(fn, run, gpu, to);
//   t.timeUs, t.limiter, t.timeline, chromeTraceJson(t)
//
// From trace to timed instructions (buildTimingInput), per op a warp executed:
//   - known at compile time (no instruction): constant, reg_index, and arithmetic whose
//     operands are all known (the per-register index math: ptxas folds it into immediates);
//   - free (no machine instruction): splat, permute, extract, pack, an if's yield — their
//     results simply forward their operands' producers;
//   - Alu: elementwise ops, ids, cmp/select/addptr/convert, fma: one machine instruction per
//     register (issueCycles = registers), latency `alu`; exp/log/sqrt/... add an SFU step
//     (latency alu + sfu); div is a short sequence (integer division by a known divisor: 2
//     instructions); reg_reduce is a chain of (group - 1) ops;
//     for, if and a loop's yield (the back edge) are one branch each;
//   - ld_global/st_global: one request per access group (WarpAccess), so issueCycles = groups;
//     its sectors (sim/Coalescing.h) give the bytes; the memory model's per-instruction hit
//     rates (TimingOptions::memory) split them between L1, L2 and DRAM: l2Bytes = sectors x 32
//     x (1 - L1 hit rate), dramBytes = sectors x (the instruction's DRAM bytes per sector);
//     latency = the hit-rate-weighted mix of the GPU's L1, L2 and DRAM latencies. Without a
//     report every load sector comes from DRAM and every store sector goes there;
//     pipeCycles = 128-byte lines touched (L1TEX wavefronts);
//   - ld_shared/st_shared: pipeCycles = wavefronts (sim/Banks.h), latency sharedLatencyCycles;
//     shuffles: one wavefront per register, latency `shuffle`;
//   - barrier, return: Barrier, Exit;
//   - deps: the producers of the op's operands (register dependencies through the thread IR's
//     def-use; a loop's carried values depend on the previous iteration's yield).
//
// From one SM to the chip:
//   - activeSMs = min(smCount, grid); the busiest SM runs blocksPerSM = ceil(grid / activeSMs)
//     blocks, replaying the sampled blocks in turn;
//   - its DRAM share is dramBandwidthGBs x blocksPerSM / grid (its share of the work: SMs that
//     finish early leave their bandwidth to the others, so a bandwidth-bound kernel takes
//     total bytes / bandwidth), capped at smMaxBytesPerCycle; its L2 share likewise;
//   - if blocksPerSM > maxSimulatedBlocks, the SM simulates maxSimulatedBlocks blocks and adds
//     the steady-state time per block (measured over the second half of the simulated blocks)
//     for each block left: cycles = simulated + (blocksPerSM - simulated) x per-block time;
//   - time = cycles / smClockGHz + launchOverheadUs.
//
// Expects: a run made with ExecOptions::traceWarps (and recordAccesses) of the same thread
// function; a MemoryReport of the same run if given. Guarantees: plain data; deterministic;
// std::invalid_argument for a run without traces, a kernel that does not fit on an SM, or
// options out of range.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/IR.h"
#include "sim/Gpu.h"
#include "sim/MemoryModel.h"
#include "sim/SmModel.h"
#include "sim/ThreadExecutor.h"

namespace tl {

// Latencies the GPU file does not give: arithmetic and friends, in cycles. Defaults are the
// dependent-issue latencies measured on Volta..Hopper by microbenchmarks (Jia et al.,
// "Dissecting the NVIDIA Volta GPU Architecture via Microbenchmarking", 2018; Luo et al.,
// "Benchmarking and Dissecting the Nvidia Hopper GPU Architecture", 2024): FP32/INT add, mul
// and FMA about 4 cycles, MUFU (exp2, rsqrt, ...) about 14-18 more, SHFL about 24-30.
struct InstrLatencies {
  int alu = 4;       // FADD/FMUL/FFMA/IADD3/IMAD/ISETP/SEL ... dependent issue
  int sfu = 18;      // the extra latency of a special-function (MUFU) step
  int shuffle = 24;  // SHFL.BFLY / SHFL.IDX
  int barrier = 20;  // BAR.SYNC: from the last warp's arrival to the release
};

struct TimingOptions {
  int64_t gridBlocks = 0;          // blocks in the launch; 0: the blocks the run traced
  int residentBlocksPerSM = 0;     // blocks resident per SM; 0: from the occupancy model
  int registersPerThread = 0;      // for the occupancy; 0: estimateRegisters(thread IR)
  const MemoryReport* memory = nullptr;  // hit rates per instruction; nullptr: all DRAM
  int64_t maxSimulatedBlocks = 256;  // per SM; beyond, extrapolate from the steady state
  int64_t timelineBlocks = 8;      // blocks whose warps get timeline segments (-1: all)
  double launchOverheadUs = -1;    // added to every kernel: launch and drain; -1: the GPU's
                                   // (GpuSpec::launchOverheadUs, measured on the H200)
  int blockLaunchCycles = 0;       // between a block retiring and the next starting on its SM
  int blockLaunchIntervalCycles = -1;  // fewest cycles between two block starts on an SM;
                                       // -1: the GPU's (GpuSpec::blockLaunchIntervalCycles)
  double smMaxBytesPerCycle = 64;  // what one SM can move to/from L2 per cycle at most (assumption)
  InstrLatencies latencies;
};

// What limits the predicted time.
enum class TimeLimiter {
  DramBandwidth,  // the SM's share of DRAM bandwidth is busy most of the time
  L2Bandwidth,    // the SM's share of L2 bandwidth is
  Issue,          // the schedulers issue most cycles: more warps would not help
  Latency,        // warps mostly wait on memory with the bandwidth not saturated: more warps
                  // (or more bytes per warp in flight) would help
  Barrier,        // warps mostly wait at barriers for slower warps of their block
  Dependency,     // warps mostly wait on arithmetic results (long dependency chains)
  BlockLaunch,    // the SM mostly waits for the block scheduler to start its next block:
                  // blocks too short for its rate (more work per block would help)
  TensorCore,     // the tensor cores (mma) are busy most of the time
};
const char* timeLimiterName(TimeLimiter l);  // "DRAM bandwidth", "latency", ...

// The sampled blocks as timed-instruction streams, plus what the model needs to know.
struct TimingInput {
  std::string kernel;              // the function's name
  std::vector<BlockStream> sample; // one per traced block, in block order
  int warpsPerBlock = 0;
  int64_t sharedBytesPerBlock = 0;
  int registersPerThread = 0;
  std::string registerSource;      // "estimate from thread IR ..." or "given"
  int64_t tracedBlocks = 0;
  double dramBytesPerBlock = 0;    // mean over the sample
  double l2BytesPerBlock = 0;
  // Atomics: the element updates of the most-updated address in the traced run, and how many
  // traced blocks updated it (all of them: every block of the grid is assumed to).
  int64_t hottestAtomicUpdates = 0;
  int64_t hottestAtomicBlocks = 0;
};

// Cycles one L2 slice takes per update of one address by an atomic: a read and a write of its
// 32-byte sector. From the L2 bandwidth of the GPU descriptions: 5120 B/clk over the A100's 80
// L2 slices (NVIDIA A100 whitepaper: 40 MB in 80 slices of 512 KB) is 64 B/clk per slice, one
// sector read plus one sector write. Not fitted to any kernel.
constexpr int64_t kAtomicUpdateCycles = 1;

// Converts a traced run (see above). Throws std::invalid_argument if the run has no traces.
TimingInput buildTimingInput(const Function& threadIR, const ExecResult& run, const GpuSpec& gpu,
                             const TimingOptions& options = {});

struct TimingResult {
  std::string gpu;                 // GpuSpec::key
  std::string kernel;
  double clockGHz = 0;
  int warpsPerBlock = 0;

  // The prediction.
  double timeUs = 0;               // smTimeUs + launchOverheadUs
  double launchOverheadUs = 0;     // what was added (the option, or the GPU's)
  double smTimeUs = 0;             // cycles / clock
  int64_t cycles = 0;              // the busiest SM, extrapolated
  TimeLimiter limiter = TimeLimiter::Latency;
  std::string limiterWhy;          // one sentence with the numbers behind it
  // Atomics on one address are applied one after another by the L2 slice that holds it, one
  // update per cycle (kAtomicUpdateCycles): the kernel takes at least this many cycles.
  int64_t atomicSerialCycles = 0;

  // How it was obtained.
  int64_t gridBlocks = 0;
  int activeSMs = 0;
  int64_t blocksPerSM = 0;         // what the busiest SM runs
  int64_t blocksSimulated = 0;     // what the SM model ran (< blocksPerSM: extrapolated)
  int64_t simulatedCycles = 0;
  bool extrapolated = false;
  double cyclesPerBlock = 0;       // steady state (extrapolation)
  int residentBlocksPerSM = 0;
  int residentWarpsPerSM = 0;
  std::string residentSource;      // "occupancy (limited by warps)" or "given"
  // Achieved occupancy, as Nsight Compute's sm__warps_active.avg.pct_of_peak_sustained_active:
  // the warps active (launched, not yet exited) averaged over the cycles each SM has a warp,
  // over the SMs that run blocks, divided by the GPU's maxWarpsPerSM. The busiest SM's figure
  // comes from its simulation; the SMs with one block less (grid % activeSMs) are simulated
  // too when blocksPerSM <= kLightSmSimulationLimit and nothing was extrapolated, else they are
  // assumed to keep the busiest SM's mean. Never above residentWarpsPerSM / maxWarpsPerSM.
  double achievedWarpsPerSM = 0;   // the mean active warps
  double achievedOccupancy = 0;    // achievedWarpsPerSM / maxWarpsPerSM, 0..1
  int64_t activeCyclesPerSM = 0;   // the busiest SM: its first block's start to its last warp's exit
  int64_t tracedBlocks = 0;

  // Memory.
  double dramBytes = 0;            // whole kernel: per-block mean x grid
  double l2Bytes = 0;
  double dramBytesPerCycleSM = 0;  // the SM's DRAM share used
  double achievedDramGBs = 0;      // dramBytes / timeUs
  double bandwidthBoundUs = 0;     // dramBytes / dramBandwidthGBs: no kernel can beat it
  double dramUtilization = 0;      // the SM's DRAM share busy, 0..1 (simulated part)
  double l2Utilization = 0;
  double issueUtilization = 0;     // issue cycles / (cycles x schedulers)
  // Tensor cores (mma): their busy cycles / (cycles x schedulers), as Nsight Compute's
  // sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active (simulated SM), and
  // the mma instructions the whole kernel issues (per-block mean x grid).
  double tensorUtilization = 0;
  double mmaInstructions = 0;

  // Little's law, on the simulated SM: bytes in flight = bandwidth x latency.
  double dramBytesInFlight = 0;    // measured average
  double dramMeanLatency = 0;      // cycles, issue to completion, byte-weighted (loaded latency)
  double littleBytesToSaturate = 0;  // dramBytesPerCycleSM x dramLatencyCycles (unloaded)

  // Where live warps spent their time: share of the warp-cycles before each warp's exit per
  // WarpState (simulated part; Done is 0), like Nsight Compute's warp-state statistics.
  std::array<double, kWarpStates> warpStateShare{};
  std::vector<WarpSegment> timeline;  // the first timelineBlocks blocks of the simulated SM
  bool timelineTruncated = false;     // the timeline stopped at kMaxTimelineSegments (sim/SmModel.h)
};

// Above this many blocks per SM the SMs with one block less are not simulated separately for
// the achieved occupancy (the difference is at most 1/64 of the figure).
constexpr int64_t kLightSmSimulationLimit = 64;

// Predicts the kernel's time from a prepared input.
TimingResult predictTime(const TimingInput& input, const GpuSpec& gpu, const TimingOptions& options = {});
// buildTimingInput + predictTime.
TimingResult predictTime(const Function& threadIR, const ExecResult& run, const GpuSpec& gpu,
                         const TimingOptions& options = {});

// The resident-warps sweep for the lab: the same kernel with 1, 2, ... resident blocks per SM
// (up to maxResidentBlocks; 0: the occupancy limit), everything else unchanged.
struct SweepPoint {
  int residentBlocks = 0;
  int residentWarps = 0;
  double timeUs = 0;
  int64_t cycles = 0;
  double achievedDramGBs = 0;
  double dramUtilization = 0;
  double dramBytesInFlight = 0;    // Little's law: = achieved bytes/cycle x mean latency
  double dramMeanLatency = 0;
  TimeLimiter limiter = TimeLimiter::Latency;
};
std::vector<SweepPoint> residentWarpsSweep(const TimingInput& input, const GpuSpec& gpu,
                                           const TimingOptions& options = {}, int maxResidentBlocks = 0);

// The timeline as Chrome trace-event JSON (opens in Perfetto and chrome://tracing): one "X"
// (complete) event per segment, ts and dur in microseconds, pid = the SM (0), tid = one row per
// warp (block x warpsPerBlock + warp), name = the state, args = block, warp, cycles,
// instruction and source line; plus "M" metadata events naming the process and each row.
std::string chromeTraceJson(const TimingResult& result, int indent = -1);

}  // namespace tl
