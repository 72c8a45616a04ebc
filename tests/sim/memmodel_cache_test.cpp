// The sectored caches and DRAM traffic on hand-made access streams: LRU reuse and eviction in
// L2, per-SM L1s, write-through stores, write-back at kernel end, fetch granularity
// (docs/sim.md, "Caches and DRAM").
#include <gtest/gtest.h>

#include "memmodel_util.h"
#include "sim/Cache.h"
#include "sim/MemoryModel.h"

namespace tl::test {
namespace {

constexpr uint64_t kBase = 0x10000000;

// Coalesced 4-byte loads (or stores) over `bytes` bytes from `base`: one warp access per 128.
std::vector<WarpAccess> sweep(uint64_t base, int64_t bytes, bool store = false, int instr = 0, int64_t block = 0) {
  std::vector<WarpAccess> out;
  for (int64_t off = 0; off < bytes; off += 128)
    out.push_back(warpAccess(MemSpace::Global, 4, [&](int l) { return base + off + 4 * l; }, 0xFFFFFFFFu, store,
                             instr, block));
  return out;
}

void append(std::vector<WarpAccess>& to, const std::vector<WarpAccess>& from) { to.insert(to.end(), from.begin(), from.end()); }

MemoryModelOptions noL1() {
  MemoryModelOptions o;
  o.l1DataBytes = 0;  // every load goes to L2: isolates the L2 behaviour
  return o;
}

TEST(MemCache, SectoredLineFillsOnlyWhatWasAsked) {
  sim::SectoredCache c(4096, 4);
  EXPECT_EQ(c.sets(), 8);
  EXPECT_FALSE(c.read(kBase));
  EXPECT_TRUE(c.read(kBase));
  EXPECT_FALSE(c.read(kBase + 32));  // same line, other sector: a sector miss
  EXPECT_EQ(c.sectorsFilled(), 2);
  // With a 64-byte fetch the sector's pair comes along.
  sim::SectoredCache pairs(4096, 4);
  EXPECT_FALSE(pairs.read(kBase + 64, 64));
  EXPECT_TRUE(pairs.read(kBase + 96, 64));
  EXPECT_FALSE(pairs.read(kBase, 64));
  EXPECT_EQ(pairs.sectorsFilled(), 4);
}

TEST(MemCache, LeastRecentlyUsedWayIsEvicted) {
  sim::SectoredCache c(2 * 128, 2);  // one set of two ways
  EXPECT_FALSE(c.read(0));
  EXPECT_FALSE(c.read(128));
  EXPECT_TRUE(c.read(0));     // line 0 is now the most recent
  EXPECT_FALSE(c.read(256));  // evicts line 128
  EXPECT_TRUE(c.read(0));
  EXPECT_FALSE(c.read(128));
}

TEST(MemCache, PartlyWrittenSectorsAreFetchedWhenRead) {
  sim::SectoredCache c(4096, 4);
  EXPECT_FALSE(c.write(kBase, 0x0000FFFFu));
  EXPECT_TRUE(c.write(kBase, 0xFFFF0000u));  // the sector already holds written data
  EXPECT_TRUE(c.read(kBase));                // fully written: readable without DRAM
  EXPECT_FALSE(c.write(kBase + 32, 0x1u));
  EXPECT_FALSE(c.read(kBase + 32));          // one byte written: the rest comes from DRAM
  EXPECT_EQ(c.sectorsFilled(), 1);
  EXPECT_EQ(c.flushDirty(), 2);
  EXPECT_EQ(c.flushDirty(), 0);
}

TEST(MemCache, SecondPassOverDataThatFitsHitsInL2) {
  GpuSpec gpu = smallGpu(64 * 1024);
  std::vector<WarpAccess> s = sweep(kBase, 32 * 1024);
  append(s, sweep(kBase, 32 * 1024));
  MemoryReport r = analyzeMemory(s, gpu, noL1());
  EXPECT_EQ(r.totals.l2ReadSectors, 2 * 1024);
  EXPECT_EQ(r.totals.l2ReadHits, 1024);
  EXPECT_EQ(r.totals.dramReadBytes, 32 * 1024);
  EXPECT_EQ(r.totals.dramWriteBytes, 0);
}

TEST(MemCache, SecondPassOverTwiceTheL2MissesUnderLru) {
  GpuSpec gpu = smallGpu(64 * 1024);
  std::vector<WarpAccess> s = sweep(kBase, 128 * 1024);
  append(s, sweep(kBase, 128 * 1024));
  MemoryReport r = analyzeMemory(s, gpu, noL1());
  EXPECT_EQ(r.totals.l2ReadHits, 0);
  EXPECT_EQ(r.totals.dramReadBytes, 2 * 128 * 1024);
}

TEST(MemCache, EachSmHasItsOwnL1) {
  GpuSpec gpu = smallGpu(1 << 20, /*smCount=*/2, /*l1Bytes=*/64 * 1024);
  // Block 0 reads 4 KB twice (second time: L1 hits); block 1 (SM 1) reads it again: L1
  // misses that hit in L2; block 2 is back on SM 0: L1 hits.
  std::vector<WarpAccess> s = sweep(kBase, 4096, false, 0, 0);
  append(s, sweep(kBase, 4096, false, 1, 0));
  append(s, sweep(kBase, 4096, false, 2, 1));
  append(s, sweep(kBase, 4096, false, 3, 2));
  MemoryReport r = analyzeMemory(s, gpu);
  ASSERT_EQ(r.instructions.size(), 4u);
  EXPECT_EQ(r.blocksAnalyzed, 3);
  EXPECT_EQ(r.instructions[0].counters.l1SectorHits, 0);
  EXPECT_EQ(r.instructions[1].counters.l1SectorHits, 128);
  EXPECT_EQ(r.instructions[2].counters.l1SectorHits, 0);
  EXPECT_EQ(r.instructions[2].counters.l2SectorHits, 128);
  EXPECT_EQ(r.instructions[3].counters.l1SectorHits, 128);
  EXPECT_EQ(r.totals.dramReadBytes, 4096);
  EXPECT_EQ(r.l1DataBytesPerSM, 64 * 1024);
}

TEST(MemCache, StoresWriteThroughToL2AndBackToDramAtTheEnd) {
  GpuSpec gpu = smallGpu(1 << 20, 1, 64 * 1024);
  std::vector<WarpAccess> s = sweep(kBase, 2048, false, 0);       // load 2 KB (fills L1)
  append(s, sweep(kBase, 2048, true, 1));                          // store over it: L1 hits
  append(s, sweep(kBase + 65536, 4096, true, 2));                  // store elsewhere: L1 misses
  append(s, sweep(kBase + 65536, 4096, false, 3));                 // L1 did not allocate: L2 hits
  MemoryReport r = analyzeMemory(s, gpu);
  const auto& in = r.instructions;
  EXPECT_EQ(in[1].counters.l1SectorHits, 64);
  EXPECT_EQ(in[1].counters.l2Sectors, 64);  // write-through: every store sector reaches L2
  EXPECT_EQ(in[2].counters.l1SectorHits, 0);
  EXPECT_EQ(in[3].counters.l1SectorHits, 0);
  EXPECT_EQ(in[3].counters.l2SectorHits, 128);
  EXPECT_EQ(r.totals.l2WriteSectors, 64 + 128);
  EXPECT_EQ(r.totals.dramReadBytes, 2048);
  EXPECT_EQ(r.totals.dramWriteBytes, 2048 + 4096);
  // Without the end-of-kernel write-back, data that fits in L2 never reaches DRAM.
  MemoryModelOptions keep;
  keep.writeBackAtEnd = false;
  EXPECT_EQ(analyzeMemory(s, gpu, keep).totals.dramWriteBytes, 0);
}

TEST(MemCache, DirtyEvictionsAreWrittenBack) {
  GpuSpec gpu = smallGpu(64 * 1024);
  MemoryModelOptions o = noL1();
  o.writeBackAtEnd = false;
  // Writing twice the L2 evicts the first half, dirty, during the run.
  MemoryReport r = analyzeMemory(sweep(kBase, 128 * 1024, true), gpu, o);
  EXPECT_EQ(r.totals.dramWriteBytes, 64 * 1024);
  o.writeBackAtEnd = true;
  EXPECT_EQ(analyzeMemory(sweep(kBase, 128 * 1024, true), gpu, o).totals.dramWriteBytes, 128 * 1024);
}

TEST(MemCache, FetchGranularityDecidesDramBytesForScatteredReads) {
  GpuSpec gpu = smallGpu(1 << 20);
  // One lane per line: 32 sectors, each alone in its 64-byte pair.
  std::vector<WarpAccess> s = {warpAccess(MemSpace::Global, 4, [](int l) { return kBase + 128 * l; })};
  MemoryModelOptions o = noL1();
  EXPECT_EQ(analyzeMemory(s, gpu, o).totals.dramReadBytes, 32 * 32);
  o.l2FetchBytes = 64;
  EXPECT_EQ(analyzeMemory(s, gpu, o).totals.dramReadBytes, 32 * 64);
  o.l2FetchBytes = 48;
  EXPECT_THROW(analyzeMemory(s, gpu, o), std::invalid_argument);
}

TEST(MemCache, CarveOutShrinksTheL1) {
  GpuSpec gpu = h200Like();
  MemoryModelOptions o;
  EXPECT_EQ(l1DataBytesFor(gpu, o), 256 * 1024);
  o.sharedBytesPerSM = 20 * 1024;  // -> the 32 KB carve-out
  EXPECT_EQ(l1DataBytesFor(gpu, o), 224 * 1024);
  o.sharedBytesPerSM = 1 << 30;  // more than any carve-out: the largest
  EXPECT_EQ(l1DataBytesFor(gpu, o), 28 * 1024);
  o.l1DataBytes = 1000;
  EXPECT_EQ(l1DataBytesFor(gpu, o), 1000);
}

}  // namespace
}  // namespace tl::test
