// tl::occupancy against NVIDIA's own calculator, cudaOccMaxActiveBlocksPerMultiprocessor from
// /usr/local/cuda/include/cuda_occupancy.h (header-only; skipped with a message where the CUDA
// toolkit is absent). For every GPU description and hundreds of thousands of configurations —
// a full grid of threads x registers x a set of shared sizes around every boundary, plus a
// seeded random mix with odd thread counts, no opt-in and carve-out preferences — both must
// give the same blocks per SM, the same set of limiting resources, the same per-resource block
// counts and the same allocated registers and shared memory.
//
// The calculator hard-codes each architecture's tables (block slots, granularities, carve-outs,
// sub-partitions) while tl::occupancy reads them from sim/gpus/*.json, so this also checks the
// data files against NVIDIA's tables.
#include <gtest/gtest.h>

#include <random>
#include <sstream>

#include "sim/Gpu.h"
#include "sim/Occupancy.h"

#if __has_include("/usr/local/cuda/include/cuda_occupancy.h")
#include "/usr/local/cuda/include/cuda_occupancy.h"
#define TL_HAVE_CUDA_OCCUPANCY 1
#else
#define TL_HAVE_CUDA_OCCUPANCY 0
#endif

namespace tl {
namespace {

#if TL_HAVE_CUDA_OCCUPANCY

cudaOccDeviceProp deviceProp(const GpuSpec& g) {
  cudaOccDeviceProp p;
  p.computeMajor = g.computeCapability / 10;
  p.computeMinor = g.computeCapability % 10;
  p.maxThreadsPerBlock = g.maxThreadsPerBlock;
  p.maxThreadsPerMultiprocessor = g.maxThreadsPerSM;
  p.regsPerBlock = g.maxRegistersPerBlock;
  p.regsPerMultiprocessor = g.registersPerSM;
  p.warpSize = 32;
  p.sharedMemPerBlock = static_cast<size_t>(g.defaultSharedPerBlock);
  p.sharedMemPerMultiprocessor = static_cast<size_t>(g.sharedPerSM);
  p.numSms = g.smCount;
  p.sharedMemPerBlockOptin = static_cast<size_t>(g.maxSharedPerBlock);
  p.reservedSharedMemPerBlock = static_cast<size_t>(g.reservedSharedPerBlock);
  return p;
}

struct Config {
  int threads, regs, shared;
  OccupancyOptions opt;
  std::string str() const {
    std::ostringstream s;
    s << "threads=" << threads << " regs=" << regs << " shared=" << shared << " optIn=" << opt.sharedOptIn
      << " carveout=" << opt.carveoutPercent;
    return s.str();
  }
};

// tl's limiter bits -> the calculator's (OCC_LIMIT_WARPS = 1, REGISTERS = 2, SHARED_MEMORY = 4,
// BLOCKS = 8: the same order as OccLimiter).
unsigned calcMask(const OccupancyResult& r) {
  unsigned m = 0;
  if (r.limitedBy(OccLimiter::Warps)) m |= OCC_LIMIT_WARPS;
  if (r.limitedBy(OccLimiter::Registers)) m |= OCC_LIMIT_REGISTERS;
  if (r.limitedBy(OccLimiter::SharedMemory)) m |= OCC_LIMIT_SHARED_MEMORY;
  if (r.limitedBy(OccLimiter::Blocks)) m |= OCC_LIMIT_BLOCKS;
  return m;
}

// Runs one configuration through both; returns "" when they agree, else a description.
std::string compare(const GpuSpec& g, const cudaOccDeviceProp& prop, const Config& c) {
  cudaOccFuncAttributes attr;
  attr.maxThreadsPerBlock = g.maxThreadsPerBlock;
  attr.numRegs = c.regs;
  attr.sharedSizeBytes = 0;  // all of it dynamic, as Triton kernels use it
  attr.partitionedGCConfig = PARTITIONED_GC_OFF;
  attr.shmemLimitConfig = c.opt.sharedOptIn ? FUNC_SHMEM_LIMIT_OPTIN : FUNC_SHMEM_LIMIT_DEFAULT;
  attr.maxDynamicSharedSizeBytes = c.opt.sharedOptIn ? static_cast<size_t>(c.shared) : 0;
  attr.numBlockBarriers = 1;  // __syncthreads / bar.sync 0
  attr.virtualResourceCount = 0;
  cudaOccDeviceState state;
  state.carveoutConfig = c.opt.carveoutPercent;

  cudaOccResult want{};
  cudaOccError err = cudaOccMaxActiveBlocksPerMultiprocessor(&want, &prop, &attr, &state, c.threads,
                                                              static_cast<size_t>(c.shared));
  if (err != CUDA_OCC_SUCCESS) return "calculator error " + std::to_string(err) + " for " + c.str();

  OccupancyResult got = occupancy(g, c.threads, c.regs, c.shared, c.opt);
  std::ostringstream diff;
  auto check = [&](const char* what, long long mine, long long theirs) {
    if (mine != theirs) diff << " " << what << ": tl " << mine << " vs cuda_occupancy.h " << theirs << ";";
  };
  check("blocks", got.activeBlocksPerSM, want.activeBlocksPerMultiprocessor);
  unsigned wantMask = want.limitingFactors & (OCC_LIMIT_WARPS | OCC_LIMIT_REGISTERS | OCC_LIMIT_SHARED_MEMORY | OCC_LIMIT_BLOCKS);
  check("limiters", calcMask(got), wantMask);
  if (want.limitingFactors & ~wantMask) diff << " calculator reports another limiter " << want.limitingFactors << ";";
  check("blocksByWarps", got.blocksByWarps, want.blockLimitWarps);
  check("blocksByRegisters", got.blocksByRegisters, want.blockLimitRegs);
  check("blocksByShared", got.blocksByShared, want.blockLimitSharedMem);
  check("blocksBySlots", got.blocksBySlots, want.blockLimitBlocks);
  check("registersPerBlock", got.registersPerBlock, want.allocatedRegistersPerBlock);
  check("sharedAllocatedPerBlock", got.sharedAllocatedPerBlock, static_cast<long long>(want.allocatedSharedMemPerBlock));
  if (got.activeBlocksPerSM == 0 && got.reason.empty()) diff << " no reason given for 0 blocks;";
  if (got.activeBlocksPerSM > 0 && !got.reason.empty()) diff << " a reason given for " << got.activeBlocksPerSM << " blocks;";
  return diff.str().empty() ? "" : g.key + " " + c.str() + ":" + diff.str();
}

// Shared sizes around every boundary: allocation units, the 48 KB default limit, each
// carve-out (minus the reserved KB), the opt-in maximum and just past it.
std::vector<int> sharedSizes(const GpuSpec& g) {
  std::vector<int> s = {0, 1, 16, 127, 128, 129, 1024, 4096, 10000, 20480};
  for (int kb : g.sharedCarveoutsKB) {
    int b = kb * 1024 - g.reservedSharedPerBlock;
    for (int d : {-129, -128, -1, 0, 1}) s.push_back(b + d);
    for (int n = 2; n <= 8; ++n) s.push_back(kb * 1024 / n - g.reservedSharedPerBlock);
  }
  for (int b : {g.defaultSharedPerBlock, g.maxSharedPerBlock})
    for (int d : {-1024, -1, 0, 1, 128}) s.push_back(b + d);
  std::vector<int> out;
  for (int v : s)
    if (v >= 0) out.push_back(v);
  return out;
}

class OccupancySweep : public ::testing::TestWithParam<std::string> {};

TEST_P(OccupancySweep, GridAgreesWithCudaOccupancyCalculator) {
  const GpuSpec g = loadGpu(GetParam());
  const cudaOccDeviceProp prop = deviceProp(g);
  const std::vector<int> shared = sharedSizes(g);
  int configs = 0, failures = 0;
  for (int threads = 32; threads <= 1024; threads += 32)
    for (int regs = 0; regs <= 255; ++regs)
      for (int s : shared) {
        std::string d = compare(g, prop, Config{threads, regs, s, {}});
        ++configs;
        if (!d.empty() && ++failures <= 10) ADD_FAILURE() << d;
      }
  EXPECT_EQ(failures, 0) << "of " << configs << " configurations";
  EXPECT_GT(configs, 1000);
}

TEST_P(OccupancySweep, RandomMixAgreesWithCudaOccupancyCalculator) {
  const GpuSpec g = loadGpu(GetParam());
  const cudaOccDeviceProp prop = deviceProp(g);
  std::mt19937 rng(20260);
  auto uniform = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  const int carveouts[] = {-1, -1, -1, 0, 10, 25, 50, 75, 100};
  int failures = 0;
  const int kConfigs = 50000;
  for (int i = 0; i < kConfigs; ++i) {
    Config c;
    c.threads = uniform(1, g.maxThreadsPerBlock + 64);  // odd sizes and a few too-large blocks
    c.regs = uniform(0, 255);
    c.shared = uniform(0, 4) == 0 ? uniform(0, 2048) : uniform(0, g.maxSharedPerBlock + 4096);
    c.opt.sharedOptIn = uniform(0, 3) != 0;
    c.opt.carveoutPercent = carveouts[uniform(0, 8)];
    std::string d = compare(g, prop, c);
    if (!d.empty() && ++failures <= 10) ADD_FAILURE() << d;
  }
  EXPECT_EQ(failures, 0) << "of " << kConfigs << " configurations";
}

INSTANTIATE_TEST_SUITE_P(Gpus, OccupancySweep, ::testing::Values("h200", "h100", "a100", "rtx4090"));

#else

TEST(OccupancySweep, NeedsCudaOccupancyHeader) {
  GTEST_SKIP() << "/usr/local/cuda/include/cuda_occupancy.h not found (install the CUDA toolkit): "
                  "tl::occupancy is not checked against NVIDIA's calculator on this machine";
}

#endif

}  // namespace
}  // namespace tl
