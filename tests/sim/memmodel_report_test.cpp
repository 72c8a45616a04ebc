// The memory report: per instruction, per source line, kernel totals, Nsight Compute names,
// sampling scale, and rejected inputs.
#include <gtest/gtest.h>

#include <map>
#include <stdexcept>

#include "memmodel_util.h"
#include "sim/MemoryModel.h"

namespace tl::test {
namespace {

constexpr uint64_t kBase = 0x10000000;

std::map<std::string, double> metricMap(const MemoryReport& r) {
  std::map<std::string, double> m;
  for (auto& [k, v] : r.ncuMetrics()) {
    EXPECT_EQ(m.count(k), 0u) << "duplicate metric " << k;
    m[k] = v;
  }
  return m;
}

// One block of 4 warps: a coalesced load (instr 1), a stride-2 load on the same line (instr 2),
// a shared store with a 2-way conflict (instr 3) and a coalesced global store (instr 4).
std::vector<WarpAccess> kernelBlock(int64_t block) {
  std::vector<WarpAccess> s;
  for (int w = 0; w < 4; ++w) {
    uint64_t base = kBase + uint64_t(block) * 4096 + uint64_t(w) * 1024;
    auto ld = warpAccess(MemSpace::Global, 4, [&](int l) { return base + 4 * l; }, ~0u, false, 1, block);
    auto ld2 = warpAccess(MemSpace::Global, 4, [&](int l) { return base + 0x100000 + 8 * l; }, ~0u, false, 2, block);
    ld2.loc = ld.loc;  // same source line
    auto sts = warpAccess(MemSpace::Shared, 4, [&](int l) { return 8 * l; }, ~0u, true, 3, block);
    auto st = warpAccess(MemSpace::Global, 4, [&](int l) { return base + 0x200000 + 4 * l; }, ~0u, true, 4, block);
    for (auto* a : {&ld, &ld2, &sts, &st}) {
      a->warp = w;
      s.push_back(*a);
    }
  }
  return s;
}

TEST(MemReport, PerInstructionLineAndTotals) {
  MemoryReport r = analyzeMemory(kernelBlock(0), smallGpu(1 << 20));
  EXPECT_EQ(r.accesses, 16);
  EXPECT_EQ(r.blocksAnalyzed, 1);
  ASSERT_EQ(r.instructions.size(), 4u);
  const InstrMemStats& ld = r.instructions[0];
  EXPECT_EQ(ld.instr, 1);
  EXPECT_EQ(ld.bytesPerLane, 4);
  EXPECT_EQ(ld.counters.executions, 4);
  EXPECT_EQ(ld.counters.requests, 4);
  EXPECT_EQ(ld.counters.sectors, 16);
  EXPECT_DOUBLE_EQ(ld.counters.sectorsPerRequest(), 4.0);
  EXPECT_DOUBLE_EQ(ld.counters.efficiency(), 1.0);
  const InstrMemStats& ld2 = r.instructions[1];
  EXPECT_DOUBLE_EQ(ld2.counters.sectorsPerRequest(), 8.0);
  EXPECT_DOUBLE_EQ(ld2.counters.efficiency(), 0.5);
  const InstrMemStats& sts = r.instructions[2];
  EXPECT_EQ(sts.space, MemSpace::Shared);
  EXPECT_EQ(sts.counters.wavefronts, 8);
  EXPECT_EQ(sts.counters.idealWavefronts, 4);
  EXPECT_EQ(sts.counters.bankConflicts, 4);
  EXPECT_EQ(sts.counters.sectors, 0);

  // Lines: instrs 1 and 2 share line 11; 3 and 4 have their own.
  ASSERT_EQ(r.lines.size(), 3u);
  EXPECT_EQ(r.lines[0].line, 11u);
  EXPECT_EQ(r.lines[0].instrs, (std::vector<int32_t>{1, 2}));
  EXPECT_EQ(r.lines[0].counters.sectors, 16 + 32);
  EXPECT_EQ(r.lines[0].counters.requests, 8);
  EXPECT_DOUBLE_EQ(r.lines[0].counters.sectorsPerRequest(), 6.0);

  EXPECT_EQ(r.totals.globalLoad.sectors, 48);
  EXPECT_EQ(r.totals.globalStore.sectors, 16);
  EXPECT_EQ(r.totals.sharedStore.bankConflicts, 4);
  EXPECT_EQ(r.totals.sharedLoad.executions, 0);
}

TEST(MemReport, NsightComputeNames) {
  MemoryReport r = analyzeMemory(kernelBlock(0), smallGpu(1 << 20));
  auto m = metricMap(r);
  EXPECT_EQ(m.at("l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"), 8);
  EXPECT_EQ(m.at("l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"), 48);
  EXPECT_EQ(m.at("l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum"), 16);
  EXPECT_EQ(m.at("l1tex__average_t_sectors_per_request_pipe_lsu_mem_global_op_ld.ratio"), 6);
  EXPECT_EQ(m.at("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum"), 8);
  EXPECT_EQ(m.at("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum"), 4);
  EXPECT_EQ(m.at("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"), 0);
  EXPECT_EQ(m.at("lts__t_sectors_srcunit_tex_op_read.sum"), 48);  // cold L1: every sector
  EXPECT_EQ(m.at("lts__t_sectors_srcunit_tex_op_write.sum"), 16);
  EXPECT_EQ(m.at("dram__bytes_read.sum"), 48 * 32);
  // The 16 written sectors stay dirty in the 1 MiB L2 until the kernel ends: Nsight Compute's
  // in-kernel DRAM writes are 0, the cost of the writes (the end-of-kernel write-back) is not.
  EXPECT_EQ(m.at("dram__bytes_write.sum"), 0);
  EXPECT_EQ(r.totals.dramWriteBytesInKernel, 0);
  EXPECT_EQ(r.totals.dramWriteBytes, 16 * 32);
  EXPECT_EQ(m.at("lts__t_sector_op_read_hit_rate.pct"), 0);
  EXPECT_NEAR(m.at("smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.pct"), 100.0 * 1024 / 1536, 1e-9);
  // Without caches, only the L1TEX and shared-memory names remain.
  MemoryModelOptions o;
  o.caches = false;
  auto bare = metricMap(analyzeMemory(kernelBlock(0), smallGpu(1 << 20), o));
  EXPECT_EQ(bare.count("dram__bytes_read.sum"), 0u);
  EXPECT_EQ(bare.at("l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"), 48);
}

TEST(MemReport, SamplingScalesCountsNotRatios) {
  std::vector<WarpAccess> all, sample;
  for (int b = 0; b < 8; ++b) {
    auto blk = kernelBlock(b);
    all.insert(all.end(), blk.begin(), blk.end());
    if (b < 2) sample.insert(sample.end(), blk.begin(), blk.end());
  }
  GpuSpec gpu = smallGpu(1 << 20);
  MemoryReport full = analyzeMemory(all, gpu);
  MemoryModelOptions o;
  o.totalBlocks = 8;
  MemoryReport est = analyzeMemory(sample, gpu, o);
  EXPECT_EQ(est.blocksAnalyzed, 2);
  EXPECT_DOUBLE_EQ(est.scale, 4.0);
  EXPECT_EQ(est.totals.globalLoad.sectors, full.totals.globalLoad.sectors);
  EXPECT_EQ(est.instructions[2].counters.bankConflicts, full.instructions[2].counters.bankConflicts);
  EXPECT_EQ(est.totals.dramReadBytes, full.totals.dramReadBytes);  // disjoint data per block
  EXPECT_DOUBLE_EQ(est.totals.globalLoad.sectorsPerRequest(), full.totals.globalLoad.sectorsPerRequest());
  // totalBlocks no larger than what was analyzed: nothing to scale.
  o.totalBlocks = 2;
  EXPECT_DOUBLE_EQ(analyzeMemory(sample, gpu, o).scale, 1.0);
}

TEST(MemReport, BadInputsAreRejectedAndEmptyMasksIgnored) {
  GpuSpec gpu = smallGpu(1 << 20);
  MemoryModel m(gpu);
  m.add(warpAccess(MemSpace::Global, 4, [](int l) { return kBase + 4 * l; }, 0u));  // nothing active
  EXPECT_THROW(m.add(warpAccess(MemSpace::Global, 0, [](int l) { return kBase + 4 * l; })), std::invalid_argument);
  WarpAccess neg = warpAccess(MemSpace::Global, 4, [](int l) { return kBase + 4 * l; });
  neg.instr = -1;
  EXPECT_THROW(m.add(neg), std::invalid_argument);
  // The same instruction id once as a load, then as a store: inconsistent records.
  m.add(warpAccess(MemSpace::Global, 4, [](int l) { return kBase + 4 * l; }, ~0u, false, 7));
  EXPECT_THROW(m.add(warpAccess(MemSpace::Global, 4, [](int l) { return kBase + 4 * l; }, ~0u, true, 7)),
               std::invalid_argument);
  MemoryReport r = m.finish();
  EXPECT_EQ(r.accesses, 1);
  EXPECT_THROW(m.finish(), std::logic_error);
  EXPECT_THROW(m.add(warpAccess(MemSpace::Global, 4, [](int l) { return kBase + 4 * l; })), std::logic_error);

  GpuSpec odd = gpu;
  odd.sectorBytes = 64;
  EXPECT_THROW(MemoryModel{odd}, std::invalid_argument);
}

TEST(MemReport, ZeroCapacityCachesStillCountTraffic) {
  // A GPU description without cache sizes (fields left at 0): every load goes to DRAM.
  GpuSpec gpu = smallGpu(0);
  MemoryReport r = analyzeMemory(kernelBlock(0), gpu);
  EXPECT_EQ(r.totals.dramReadBytes, 48 * 32);
  EXPECT_EQ(r.totals.dramWriteBytes, 16 * 32);
  EXPECT_EQ(r.totals.l2ReadHits, 0);
}

// An L2 too small for the kernel's footprint evicts dirty sectors while the kernel runs: those
// are the DRAM writes Nsight Compute counts, never more than every written sector.
TEST(MemReport, DramWritesInKernelAreEvictions) {
  MemoryReport big = analyzeMemory(kernelBlock(0), smallGpu(1 << 20));
  MemoryReport tiny = analyzeMemory(kernelBlock(0), smallGpu(1024));
  EXPECT_GT(tiny.totals.dramWriteBytesInKernel, 0);
  EXPECT_LE(tiny.totals.dramWriteBytesInKernel, tiny.totals.dramWriteBytes);
  EXPECT_EQ(tiny.totals.dramWriteBytes, big.totals.dramWriteBytes);
  EXPECT_EQ(metricMap(tiny).at("dram__bytes_write.sum"), double(tiny.totals.dramWriteBytesInKernel));
}

}  // namespace
}  // namespace tl::test
