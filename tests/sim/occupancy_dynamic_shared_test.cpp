// Issue 12, section 6: occupancy of blocks with more than 48 KB of shared memory (sim/Occupancy.h).
// Such a block runs only with dynamic shared memory and its limit raised (the opt-in, what
// tl-ptx does above 48 KB); it then takes its bytes plus the 1 KB the system reserves per block,
// out of the SM's carve-out. The figures are sim/gpus/h200.json's (CUDA C++ Programming Guide,
// compute capability 9.0, confirmed by cudaGetDeviceProperties on the lab's H200): 228 KB of
// shared memory per SM (233472 bytes, the largest carve-out), 227 KB per block opted in
// (232448), 48 KB without opting in (49152), 1 KB reserved per block, 128-byte allocation unit.
#include <gtest/gtest.h>

#include "sim/Occupancy.h"

namespace tl {
namespace {

const GpuSpec& h200() {
  static const GpuSpec g = loadGpu("h200");
  return g;
}

TEST(OccupancyDynamicShared, TheH200Figures) {
  EXPECT_EQ(h200().sharedPerSM, 228 * 1024);
  EXPECT_EQ(h200().maxSharedPerBlock, 227 * 1024);
  EXPECT_EQ(h200().defaultSharedPerBlock, 48 * 1024);
  EXPECT_EQ(h200().reservedSharedPerBlock, 1024);
  EXPECT_EQ(h200().sharedAllocUnit, 128);
}

// 100 KB per block: (102400 + 1024) = 103424 bytes, a multiple of 128; 233472 / 103424 = 2.26,
// so 2 blocks per SM (2 x 103424 = 206848 fit, 3 x 103424 = 310272 do not). Threads and
// registers allow far more (128 threads, 32 registers: 16 blocks), so shared memory limits.
TEST(OccupancyDynamicShared, Two100KBBlocksPerSMOnTheH200) {
  OccupancyResult r = occupancy(h200(), 128, 32, 100 * 1024);
  EXPECT_TRUE(r.sharedOptedIn);
  EXPECT_EQ(r.sharedAllocatedPerBlock, 103424);
  EXPECT_EQ(r.sharedLimitPerBlock, 232448 + 1024);
  EXPECT_EQ(r.sharedCarveoutBytes, 233472);
  EXPECT_EQ(r.blocksByShared, 2);
  EXPECT_EQ(r.blocksByWarps, 16);
  EXPECT_EQ(r.blocksByRegisters, 16);
  EXPECT_EQ(r.activeBlocksPerSM, 2);
  EXPECT_EQ(r.limiter, OccLimiter::SharedMemory);
  EXPECT_EQ(r.activeWarpsPerSM, 8);
  EXPECT_TRUE(r.reason.empty()) << r.reason;
  // The 96 KB matmul of tests/ptx/dynamic_shared_test.cpp: (98304 + 1024) = 99328; 233472 / 99328 = 2.35.
  EXPECT_EQ(occupancy(h200(), 128, 32, 98304).activeBlocksPerSM, 2);
}

// Without the opt-in no block of 100 KB fits: the limit is 48 KB, and the reason says so.
TEST(OccupancyDynamicShared, WithoutTheOptInNoneFits) {
  OccupancyOptions noOptIn;
  noOptIn.sharedOptIn = false;
  OccupancyResult r = occupancy(h200(), 128, 32, 100 * 1024, noOptIn);
  EXPECT_FALSE(r.sharedOptedIn);
  EXPECT_EQ(r.activeBlocksPerSM, 0);
  EXPECT_NE(r.reason.find("exceed the per-block limit of 48 KB (without opting in; the opt-in maximum is 227 KB)"),
            std::string::npos)
      << r.reason;
}

// 48 KB needs no opt-in: (49152 + 1024) = 50176; 233472 / 50176 = 4.65 -> 4 blocks, either way.
TEST(OccupancyDynamicShared, The48KBStaticCaseIsUnchanged) {
  OccupancyOptions noOptIn;
  noOptIn.sharedOptIn = false;
  for (const OccupancyOptions& o : {OccupancyOptions{}, noOptIn}) {
    OccupancyResult r = occupancy(h200(), 128, 32, 48 * 1024, o);
    EXPECT_FALSE(r.sharedOptedIn);
    EXPECT_EQ(r.sharedAllocatedPerBlock, 50176);
    EXPECT_EQ(r.activeBlocksPerSM, 4);
  }
}

// The opt-in maximum fills the SM with one block (232448 + 1024 = 233472); one byte more fits none.
TEST(OccupancyDynamicShared, TheOptInMaximum) {
  OccupancyResult full = occupancy(h200(), 128, 32, 232448);
  EXPECT_EQ(full.sharedAllocatedPerBlock, 233472);
  EXPECT_EQ(full.activeBlocksPerSM, 1);
  OccupancyResult over = occupancy(h200(), 128, 32, 232449);
  EXPECT_EQ(over.activeBlocksPerSM, 0);
  EXPECT_NE(over.reason.find("exceed the per-block limit of 227 KB"), std::string::npos) << over.reason;
}

// What the driver said on the lab's H200 (cuOccupancyMaxActiveBlocksPerMultiprocessor with the
// dynamic bytes, bench/results/gpu/smem_check_h200.txt) for kernels/matmul.tl at 128 threads:
//   48 KB static, 168 registers:   3 blocks/SM (registers: 168 x 32 = 5376 per warp, 16384 / 5376 = 3
//                                  warps per sub-partition, 12 warps; shared alone would allow 4)
//   96 KB dynamic, 168 registers:  2 blocks/SM (shared: 99328 per block; registers would allow 3)
//   192 KB dynamic, 255 registers: 1 block/SM  (shared: 197632 per block; registers would allow 2)
TEST(OccupancyDynamicShared, AgreesWithTheDriverOnTheH200) {
  OccupancyResult s48 = occupancy(h200(), 128, 168, 49152);
  EXPECT_EQ(s48.activeBlocksPerSM, 3);
  EXPECT_EQ(s48.limiter, OccLimiter::Registers);
  EXPECT_EQ(s48.blocksByShared, 4);
  OccupancyResult d96 = occupancy(h200(), 128, 168, 98304);
  EXPECT_EQ(d96.activeBlocksPerSM, 2);
  EXPECT_EQ(d96.limiter, OccLimiter::SharedMemory);
  EXPECT_EQ(d96.blocksByRegisters, 3);
  OccupancyResult d192 = occupancy(h200(), 128, 255, 196608);
  EXPECT_EQ(d192.activeBlocksPerSM, 1);
  EXPECT_EQ(d192.limiter, OccLimiter::SharedMemory);
  EXPECT_EQ(d192.blocksByRegisters, 2);
}

}  // namespace
}  // namespace tl
