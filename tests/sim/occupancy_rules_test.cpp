// Occupancy rules one at a time, with numbers worked by hand (docs/sim.md, "Occupancy"): each
// resource as the limiter, ties, the register file's sub-partition split, carve-out
// preferences, opt-in, reasons for zero blocks, bad input, the visualizer's curves; and the
// register estimate from thread IR.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "SimTestUtil.h"
#include "sim/Occupancy.h"

namespace tl {
namespace {

const GpuSpec& h200() {
  static const GpuSpec g = loadGpu("h200");
  return g;
}
const GpuSpec& a100() {
  static const GpuSpec g = loadGpu("a100");
  return g;
}
const GpuSpec& ada() {
  static const GpuSpec g = loadGpu("rtx4090");
  return g;
}

// The softmax example of docs/sim.md: 128 threads, 32 registers, 16 bytes of shared memory.
// warps: 64 / 4 = 16; registers: 32 x 32 = 1024 per warp, 16384 / 1024 = 16 warps per
// sub-partition, 64 warps = 16 blocks; shared: 16 + 1024 reserved -> 1152 B, 233472 / 1152 = 202.
TEST(OccupancyRules, SoftmaxWorkedExample) {
  OccupancyResult r = occupancy(h200(), 128, 32, 16);
  EXPECT_EQ(r.warpsPerBlock, 4);
  EXPECT_EQ(r.blocksByWarps, 16);
  EXPECT_EQ(r.registersPerWarp, 1024);
  EXPECT_EQ(r.warpsPerSubPartition, 16);
  EXPECT_EQ(r.blocksByRegisters, 16);
  EXPECT_EQ(r.sharedAllocatedPerBlock, 1152);
  EXPECT_EQ(r.sharedCarveoutBytes, 228 * 1024);
  EXPECT_EQ(r.blocksByShared, 202);
  EXPECT_EQ(r.blocksBySlots, 32);
  EXPECT_EQ(r.activeBlocksPerSM, 16);
  EXPECT_EQ(r.activeWarpsPerSM, 64);
  EXPECT_DOUBLE_EQ(r.occupancy, 1.0);
  EXPECT_EQ(r.limiter, OccLimiter::Warps);  // tie: warps and registers both allow 16
  EXPECT_TRUE(r.limitedBy(OccLimiter::Registers));
  EXPECT_FALSE(r.limitedBy(OccLimiter::SharedMemory));
  EXPECT_TRUE(r.reason.empty());
  // 33 to 40 registers: 1280 per warp, 12 warps per sub-partition, 48 warps = 12 blocks, 75%.
  for (int regs : {33, 40}) {
    r = occupancy(h200(), 128, regs, 16);
    EXPECT_EQ(r.registersPerWarp, 1280);
    EXPECT_EQ(r.activeBlocksPerSM, 12);
    EXPECT_EQ(r.limiter, OccLimiter::Registers);
    EXPECT_EQ(r.limiterMask, 1u << static_cast<unsigned>(OccLimiter::Registers));
    EXPECT_DOUBLE_EQ(r.occupancy, 0.75);
  }
}

TEST(OccupancyRules, BlockSlotsLimitSmallBlocks) {
  OccupancyResult r = occupancy(h200(), 32, 16, 0);  // 1 warp per block: 64 would fit, 32 slots
  EXPECT_EQ(r.activeBlocksPerSM, 32);
  EXPECT_EQ(r.limiter, OccLimiter::Blocks);
  EXPECT_DOUBLE_EQ(r.occupancy, 0.5);
  EXPECT_EQ(occupancy(ada(), 32, 16, 0).activeBlocksPerSM, 24);  // sm_89 has 24 slots
}

// Registers are split 4 ways: 80 registers = 2560 per warp; 16384 / 2560 = 6 warps per
// sub-partition (6.4), so 24 warps, where one 65536-register pool would hold 25.
TEST(OccupancyRules, RegisterFileIsSplitAmongSubPartitions) {
  OccupancyResult r = occupancy(h200(), 32, 80, 0);
  EXPECT_EQ(r.registersPerWarp, 2560);
  EXPECT_EQ(r.warpsPerSubPartition, 6);
  EXPECT_EQ(r.blocksByRegisters, 24);
  EXPECT_EQ(r.limiter, OccLimiter::Registers);
  // Per-warp rounding: 33 registers x 32 = 1056 -> 1280 (the next multiple of 256).
  EXPECT_EQ(occupancy(h200(), 32, 33, 0).registersPerWarp, 1280);
}

TEST(OccupancyRules, RegistersPerBlockLimit) {
  OccupancyResult r = occupancy(h200(), 1024, 64, 0);  // 64 x 1024 = 65536: exactly one block
  EXPECT_EQ(r.activeBlocksPerSM, 1);
  EXPECT_EQ(r.limiter, OccLimiter::Registers);
  r = occupancy(h200(), 1024, 65, 0);  // 72 x 256 per warp x 32 warps = 73728 > 65536
  EXPECT_EQ(r.activeBlocksPerSM, 0);
  EXPECT_EQ(r.reason,
            "65 registers x 1024 threads need 73728 registers per block (allocated per warp, warps rounded up to 4 "
            "sub-partitions), more than the 65536 a block may hold");
  r = occupancy(h200(), 64, 256, 0);
  EXPECT_EQ(r.activeBlocksPerSM, 0);
  EXPECT_EQ(r.reason, "256 registers per thread exceed the maximum of 255");
}

TEST(OccupancyRules, SharedMemoryAndTheReservedKilobyte) {
  // 48 KB per block: 49152 + 1024 = 50176 B allocated; 233472 / 50176 = 4 blocks (not 4.75).
  OccupancyResult r = occupancy(h200(), 128, 32, 48 * 1024);
  EXPECT_EQ(r.sharedAllocatedPerBlock, 50176);
  EXPECT_EQ(r.activeBlocksPerSM, 4);
  EXPECT_EQ(r.limiter, OccLimiter::SharedMemory);
  // The opt-in maximum fits exactly one block; one more byte fits none.
  EXPECT_EQ(occupancy(h200(), 128, 32, 227 * 1024).activeBlocksPerSM, 1);
  r = occupancy(h200(), 128, 32, 227 * 1024 + 1);
  EXPECT_EQ(r.activeBlocksPerSM, 0);
  EXPECT_EQ(r.reason, "232449 bytes of shared memory (+1024 reserved) exceed the per-block limit of 227 KB");
  // Without opting in, 48 KB is the most a block may use.
  OccupancyOptions noOptIn;
  noOptIn.sharedOptIn = false;
  EXPECT_EQ(occupancy(h200(), 128, 32, 48 * 1024, noOptIn).activeBlocksPerSM, 4);
  r = occupancy(h200(), 128, 32, 48 * 1024 + 1, noOptIn);
  EXPECT_EQ(r.activeBlocksPerSM, 0);
  EXPECT_EQ(r.reason,
            "49153 bytes of shared memory (+1024 reserved) exceed the per-block limit of 48 KB (without opting in; the "
            "opt-in maximum is 227 KB)");
  // The A100 holds 164 KB: 3 blocks of 48 KB (+1 KB each).
  EXPECT_EQ(occupancy(a100(), 128, 32, 48 * 1024).activeBlocksPerSM, 3);
}

TEST(OccupancyRules, CarveoutPreference) {
  OccupancyOptions half;
  half.carveoutPercent = 50;  // 50% of 228 KB = 114 KB -> the next carve-out, 132 KB
  OccupancyResult r = occupancy(h200(), 128, 32, 40 * 1024, half);
  EXPECT_EQ(r.sharedCarveoutBytes, 132 * 1024);
  EXPECT_EQ(r.activeBlocksPerSM, 3);  // 135168 / 41984
  EXPECT_EQ(occupancy(h200(), 128, 32, 40 * 1024).activeBlocksPerSM, 5);  // default: 228 KB
  // A preference too small for even one block is overridden by the smallest carve-out that fits.
  OccupancyOptions maxL1;
  maxL1.carveoutPercent = 0;
  r = occupancy(h200(), 128, 32, 40 * 1024, maxL1);
  EXPECT_EQ(r.sharedCarveoutBytes, 64 * 1024);
  EXPECT_EQ(r.activeBlocksPerSM, 1);
}

TEST(OccupancyRules, TooManyThreads) {
  OccupancyResult r = occupancy(h200(), 1056, 16, 0);
  EXPECT_EQ(r.activeBlocksPerSM, 0);
  EXPECT_EQ(r.limiter, OccLimiter::Warps);
  EXPECT_EQ(r.reason, "1056 threads per block exceed the maximum of 1024");
  // A partial warp costs a whole warp: 48 threads take 2 warps.
  EXPECT_EQ(occupancy(h200(), 48, 16, 0).warpsPerBlock, 2);
  EXPECT_EQ(occupancy(ada(), 1024, 16, 0).activeBlocksPerSM, 1);  // 48 warps per SM on sm_89
}

TEST(OccupancyRules, MeaninglessInputThrows) {
  EXPECT_THROW(occupancy(h200(), 0, 16, 0), std::invalid_argument);
  EXPECT_THROW(occupancy(h200(), 32, -1, 0), std::invalid_argument);
  EXPECT_THROW(occupancy(h200(), 32, 16, -5), std::invalid_argument);
  OccupancyOptions bad;
  bad.carveoutPercent = 101;
  EXPECT_THROW(occupancy(h200(), 32, 16, 0, bad), std::invalid_argument);
  EXPECT_STREQ(limiterName(OccLimiter::SharedMemory), "shared memory");
}

TEST(OccupancyRules, Curves) {
  auto byThreads = occupancyVsThreads(h200(), 32, 16);
  ASSERT_EQ(byThreads.size(), 32u);
  EXPECT_EQ(byThreads.front().x, 32);
  EXPECT_EQ(byThreads.back().x, 1024);
  for (size_t i = 1; i < byThreads.size(); ++i) EXPECT_LE(byThreads[i].blocksPerSM, byThreads[i - 1].blocksPerSM);
  EXPECT_EQ(byThreads[3].blocksPerSM, 16);  // 128 threads

  auto byRegs = occupancyVsRegisters(h200(), 128, 16);
  ASSERT_EQ(byRegs.size(), 256u);
  EXPECT_EQ(byRegs[32].blocksPerSM, 16);
  EXPECT_EQ(byRegs[40].blocksPerSM, 12);
  EXPECT_EQ(byRegs[255].blocksPerSM, 2);  // 8192 per warp: 2 warps per sub-partition
  for (size_t i = 1; i < byRegs.size(); ++i) EXPECT_LE(byRegs[i].blocksPerSM, byRegs[i - 1].blocksPerSM);

  auto byShared = occupancyVsShared(h200(), 128, 32);
  EXPECT_EQ(byShared.front().x, 0);
  EXPECT_EQ(byShared.back().x, 227 * 1024);
  EXPECT_EQ(byShared.back().blocksPerSM, 1);
  EXPECT_EQ(byShared.back().limiter, OccLimiter::SharedMemory);
  EXPECT_EQ(byShared.size(), static_cast<size_t>(227 * 1024 / 128 + 1));
  EXPECT_EQ(occupancyVsShared(h200(), 128, 32, 1024).size(), 228u);
}

// ---------------------------------------------------------------------------------------------
// Register estimate.

TEST(RegisterEstimate, CountsLiveVectorsAndPointers) {
  // Splats and reg_index cost nothing (a splat reuses its scalar, reg_index folds into
  // immediates). Just after the first addptr (line 7) %cols (8 x i32 = 8) and %p (8 pointers =
  // 16) are live: 24. At the store %x (8) and %q (16) are live: 24 again, not more.
  auto fn = test::parseThread(R"(thread_func @copy(%x_ptr: ptr<f32>, %out_ptr: ptr<f32>) num_warps(4) shared_bytes(0) {
  %lane = lane_id : i32
  %idx = reg_index : <8xi32>
  %lanes = splat %lane : <8xi32>
  %cols = add %lanes, %idx : <8xi32>
  %base = splat %x_ptr : <8xptr<f32>>
  %p = addptr %base, %cols : <8xptr<f32>>
  %x = ld_global %p {vec = 1} : <8xf32>
  %obase = splat %out_ptr : <8xptr<f32>>
  %q = addptr %obase, %cols : <8xptr<f32>>
  st_global %q, %x {vec = 1}
  return
}
)");
  ASSERT_NE(fn, nullptr);
  RegisterEstimate e = estimateRegisters(*fn);
  EXPECT_TRUE(e.estimate);
  EXPECT_EQ(e.source, "estimate from thread IR (peak live values)");
  EXPECT_EQ(e.peakLiveRegisters, 24);
  EXPECT_EQ(e.overhead, kRegisterOverhead);
  EXPECT_EQ(e.registers, 24 + kRegisterOverhead);
  EXPECT_EQ(e.peakLoc.line, 7);  // the first addptr (the first point the peak is reached)
  EXPECT_FALSE(e.capped);
}

TEST(RegisterEstimate, ValuesUsedInALoopLiveAcrossIt) {
  // %big (16 f32) is used only at the loop's first op, but every iteration reads it, so it is
  // live through the whole body, where %t (16) is also live: 16 + 16 + acc + i + bounds.
  auto fn = test::parseThread(R"(thread_func @loop(%out: ptr<f32>, %n: i32) num_warps(1) shared_bytes(0) {
  %lane = lane_id : i32
  %f = convert %lane : f32
  %big = splat %f : <16xf32>
  %big2 = add %big, %big : <16xf32>
  %c0 = constant {value = 0} : i32
  %c1 = constant {value = 1} : i32
  %z = constant {value = 0.0} : f32
  %s = for %i = %c0 to %n step %c1 iter_args(%acc = %z) : f32 {
    %u = splat %acc : <16xf32>
    %t = mul %big2, %u : <16xf32>
    %r = reg_reduce %t {kind = "sum", group = 16} : f32
    %acc1 = add %acc, %r : f32
    yield %acc1
  }
  %p = addptr %out, %lane : ptr<f32>
  st_global %p, %s {vec = 1}
  return
}
)");
  ASSERT_NE(fn, nullptr);
  RegisterEstimate e = estimateRegisters(*fn);
  // Just after `mul` (line 11): %big2 16, %t 16, %acc 1, %i 1, the bound %n 1 and %lane (used
  // after the loop) 1 = 36.
  EXPECT_EQ(e.peakLiveRegisters, 36);
  EXPECT_EQ(e.peakLoc.line, 11);
}

TEST(RegisterEstimate, SoftmaxGoldenThreadIR) {
  std::ifstream in(std::string(TL_SOURCE_DIR) + "/tests/golden/softmax.thread.ir");
  ASSERT_TRUE(in) << "tests/golden/softmax.thread.ir";
  std::stringstream ss;
  ss << in.rdbuf();
  DiagEngine diag(std::make_shared<SourceFile>("softmax.thread.ir", ss.str()));
  auto fn = parseFunction(ss.str(), diag);
  ASSERT_TRUE(fn && !diag.hasErrors()) << diag.renderAll();
  RegisterEstimate e = estimateRegisters(*fn);
  // 8 columns per thread: the row's 8 values, 8 column indices, 8 pointers (16 registers) and
  // 8 mask bits (more than the 7 predicate registers) are live together.
  EXPECT_GE(e.registers, 24);
  EXPECT_LE(e.registers, 64);
  EXPECT_EQ(e.peakPredicates, 9);  // + the "lane == 0" predicate of the shared-memory stores
  OccupancyResult r = occupancy(h200(), fn->numWarps * 32, e.registers, static_cast<int>(fn->sharedBytes));
  EXPECT_EQ(r.warpsPerBlock, 4);
  EXPECT_GE(r.activeBlocksPerSM, 8);
}

TEST(RegisterEstimate, CompiledCountsAreNotEstimates) {
  RegisterEstimate c = compiledRegisters(38, "ptxas");
  EXPECT_FALSE(c.estimate);
  EXPECT_EQ(c.registers, 38);
  EXPECT_EQ(c.source, "ptxas");
  EXPECT_THROW(compiledRegisters(-1, "ptxas"), std::invalid_argument);
}

TEST(RegisterEstimate, RejectsBlockIR) {
  Function f;
  f.level = IRLevel::Block;
  f.name = "k";
  EXPECT_THROW(estimateRegisters(f), std::invalid_argument);
}

}  // namespace
}  // namespace tl
