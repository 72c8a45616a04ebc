// Occupancy: how many blocks of a kernel one SM holds at once, and which resource stops it
// holding more.
//
//   OccupancyResult r = occupancy(loadGpu("h200"), /*threads*/ 128, /*registers*/ 32, /*shared*/ 16);
//   r.activeBlocksPerSM   // 16
//   r.limiter             // OccLimiter::Warps
//
// An SM has four pools; a block takes a fixed share of each, rounded up to the pool's
// allocation unit, and the SM holds as many blocks as the scarcest pool allows:
//   warps          threads per block rounded up to whole warps, out of maxWarpsPerSM;
//   registers      registers x 32 per warp rounded up to registerAllocUnit (256), allocated in
//                  each of the SM's 4 sub-partitions (a warp lives in one), out of registersPerSM;
//   shared memory  the block's bytes + the 1 KB the driver reserves (sm_80+), rounded up to
//                  sharedAllocUnit (128 B), out of the shared-memory carve-out the SM is set to;
//                  a block may use defaultSharedPerBlock (48 KB) without asking; above that only
//                  as dynamic shared memory with its limit raised (the opt-in, up to
//                  maxSharedPerBlock: 227 KB on the H200), which tl-ptx does for such kernels;
//   block slots    maxBlocksPerSM.
// These are the rules of NVIDIA's occupancy calculator, /usr/local/cuda/include/cuda_occupancy.h
// (reimplemented here to explain them; tests/sim/occupancy_sweep_test.cpp checks that both
// agree on thousands of configurations). docs/sim.md, "Occupancy", works an example.
//
// Registers: when the kernel was compiled (ptxas -v, cuFuncGetAttribute) pass that number; else
// estimateRegisters() gives a figure from the thread IR, labelled as an estimate.
#pragma once

#include <climits>
#include <string>
#include <vector>

#include "ir/IR.h"
#include "sim/Gpu.h"

namespace tl {

// The resource that limits blocks per SM.
enum class OccLimiter {
  Warps,         // the SM's warp slots (maxWarpsPerSM) are full
  Registers,     // the register file (registersPerSM, split among 4 sub-partitions) is full
  SharedMemory,  // the shared-memory carve-out is full
  Blocks,        // the SM's block slots (maxBlocksPerSM) are full
};
const char* limiterName(OccLimiter l);  // "warps", "registers", "shared memory", "blocks"

// A per-resource block count that does not limit (a kernel with no registers). Same value
// cuda_occupancy.h uses (INT_MAX).
constexpr int kOccUnlimited = INT_MAX;

struct OccupancyOptions {
  // The kernel's preferred shared-memory carve-out, percent of sharedPerSM
  // (cudaFuncAttributePreferredSharedMemoryCarveout); -1: no preference (the default).
  int carveoutPercent = -1;
  // The kernel raised its dynamic shared-memory limit above defaultSharedPerBlock
  // (cudaFuncAttributeMaxDynamicSharedMemorySize), as Triton and tl-ptx do when a kernel needs
  // it (stages/ptx/DynamicShared.h). When false, a block may use at most defaultSharedPerBlock
  // (48 KB).
  bool sharedOptIn = true;
};

struct OccupancyResult {
  // Inputs, as given.
  int threadsPerBlock = 0;
  int registersPerThread = 0;
  int sharedBytesPerBlock = 0;

  // The answer.
  int activeBlocksPerSM = 0;
  int activeWarpsPerSM = 0;
  double occupancy = 0;           // activeWarpsPerSM / maxWarpsPerSM (Nsight Compute's "Theoretical Occupancy")
  OccLimiter limiter = OccLimiter::Warps;  // the first limiting resource in enum order
  unsigned limiterMask = 0;       // every resource that reaches the minimum: bit (1 << int(OccLimiter))
  std::string reason;             // empty when a block fits; otherwise why none does

  // Blocks per SM each resource alone would allow (kOccUnlimited: does not limit).
  int blocksByWarps = 0;
  int blocksByRegisters = 0;
  int blocksByShared = 0;
  int blocksBySlots = 0;

  // Allocation details.
  int warpsPerBlock = 0;              // threads rounded up to whole warps
  int registersPerWarp = 0;           // registers x 32 rounded up to registerAllocUnit
  int registersPerBlock = 0;          // registersPerWarp x warpsPerBlock
  int warpsPerSubPartition = 0;       // warps one sub-partition's registers hold (kOccUnlimited: no registers)
  int sharedAllocatedPerBlock = 0;    // (shared + reserved) rounded up to sharedAllocUnit
  int sharedLimitPerBlock = 0;        // the most one block may allocate (incl. the reserved part)
  bool sharedOptedIn = false;         // the block uses more than defaultSharedPerBlock: it runs only
                                      // with its dynamic limit raised (the opt-in), up to maxSharedPerBlock
  int sharedCarveoutBytes = 0;        // the shared-memory capacity the SM is assumed set to

  bool limitedBy(OccLimiter l) const { return limiterMask & (1u << static_cast<unsigned>(l)); }
};

// Blocks per SM for a kernel of `threadsPerBlock` threads using `registersPerThread` registers
// and `sharedBytesPerBlock` bytes of shared memory (static + dynamic) on `gpu`. Never throws for
// sizes that do not fit (the result has 0 blocks and a `reason`); throws std::invalid_argument
// for meaningless input (threads <= 0, negative registers or bytes, carveoutPercent outside
// -1..100).
OccupancyResult occupancy(const GpuSpec& gpu, int threadsPerBlock, int registersPerThread, int sharedBytesPerBlock,
                          const OccupancyOptions& options = {});

// Curves for the visualizer: blocks per SM as one input varies, the other two fixed.
struct OccupancyPoint {
  int x = 0;               // the varied input's value
  int blocksPerSM = 0;
  int warpsPerSM = 0;
  OccLimiter limiter = OccLimiter::Warps;
};
// x = 32, 64, ..., maxThreadsPerBlock.
std::vector<OccupancyPoint> occupancyVsThreads(const GpuSpec& gpu, int registersPerThread, int sharedBytesPerBlock,
                                               const OccupancyOptions& options = {});
// x = 0, 1, ..., maxRegistersPerThread.
std::vector<OccupancyPoint> occupancyVsRegisters(const GpuSpec& gpu, int threadsPerBlock, int sharedBytesPerBlock,
                                                 const OccupancyOptions& options = {});
// x = 0, step, 2*step, ..., maxSharedPerBlock (step <= 0: sharedAllocUnit).
std::vector<OccupancyPoint> occupancyVsShared(const GpuSpec& gpu, int threadsPerBlock, int registersPerThread,
                                              int step = 0, const OccupancyOptions& options = {});

// ---------------------------------------------------------------------------------------------
// Registers per thread.
struct RegisterEstimate {
  int registers = 0;          // what occupancy() should be given
  bool estimate = true;       // true: estimated from the thread IR; false: from the compiler
  std::string source;         // "estimate from thread IR (peak live values)", "ptxas", "driver", ...
  // Estimate details (zero when estimate == false).
  int peakLiveRegisters = 0;  // the most 32-bit registers live at one point of the schedule
  int peakPredicates = 0;     // the most i1 values live at once (predicate registers)
  int overhead = 0;           // registers added for what the IR does not show (stack pointer, address temporaries)
  bool capped = false;        // the estimate exceeded maxRegistersPerThread (ptxas would spill)
  Loc peakLoc;                // the op after which the peak is reached
};

// Estimates the registers one thread of `threadIR` needs: the peak, over the ops in program
// order (loop bodies once, with values used inside a loop kept live across it), of the
// 32-bit registers held by live values: f32/i32 1 per element, i64 and pointers 2, f16/bf16
// 1 per 2 elements and fp8 1 per 4 (packed); constants and splats take none (immediates; a splat reuses its
// scalar); i1 values go to the 7 predicate registers, and any beyond 7 cost a general register
// each. Adds kRegisterOverhead and caps the result at 255. `threadIR` must be thread-level IR.
constexpr int kRegisterOverhead = 4;
RegisterEstimate estimateRegisters(const Function& threadIR);

// A compiled count, for callers that have one (ptxas -v, CUfunction attributes).
RegisterEstimate compiledRegisters(int registers, std::string source);

}  // namespace tl
