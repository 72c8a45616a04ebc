// MemoryView (viz/model/MemoryView.h): the Memory panel's sectors, lines and banks for
// hand-made warp accesses whose answers are worked out in the comments, and the grouping of
// records into executions.
#include "viz/model/MemoryView.h"

#include <gtest/gtest.h>

namespace tl::viz {
namespace {

// A warp access: lane l at base + l * stride, `bytes` per lane, lanes in `mask`.
WarpAccess access(uint64_t base, uint64_t stride, int bytes, uint32_t mask = 0xffffffffu,
                  MemSpace space = MemSpace::Global) {
  WarpAccess a;
  a.space = space;
  a.bytes = static_cast<uint8_t>(bytes);
  a.activeMask = mask;
  for (int l = 0; l < 32; ++l)
    if (mask >> l & 1u) a.addr[static_cast<size_t>(l)] = base + static_cast<uint64_t>(l) * stride;
  return a;
}

MemoryView view(const WarpAccess& a) { return buildMemoryView(std::span<const WarpAccess>(&a, 1)); }

int fetchedSectors(const GlobalView& g) {
  int n = 0;
  for (const LineCell& l : g.lines)
    for (const SectorCell& s : l.sectors) n += s.fetches > 0;
  return n;
}

TEST(MemoryView, CoalescedFp32LoadIsFourSectorsInOneLine) {
  MemoryView v = view(access(0x1000, 4, 4));
  ASSERT_TRUE(v.ok) << v.error;
  const GlobalView& g = v.global;
  EXPECT_EQ(g.requests, 1);
  EXPECT_EQ(g.sectors, 4);
  EXPECT_EQ(g.linesTouched, 1);
  ASSERT_EQ(g.lines.size(), 1u);
  EXPECT_EQ(g.lines[0].addr, 0x1000u);
  for (const SectorCell& s : g.lines[0].sectors) EXPECT_EQ(s.usedBytes(), 32);
  EXPECT_DOUBLE_EQ(g.efficiency, 1.0);
  EXPECT_DOUBLE_EQ(g.sectorsPerRequest(), 4.0);
  EXPECT_EQ(g.idealSectors, 4);
  ASSERT_EQ(g.spans.size(), 32u);
  EXPECT_EQ(g.spans[5].start, 0x1000u + 20);
  EXPECT_EQ(g.spans[5].end, 0x1000u + 24);
  EXPECT_EQ(g.lines[0].sectors[1].laneMask, 0xff00u);  // lanes 8..15 in the second sector
  EXPECT_EQ(describeGlobal(g), "1 request, 4 sectors (4.00 sectors/request), 128 of 128 fetched bytes requested: 100.0%");
}

TEST(MemoryView, StrideTwoLoadFetchesTwiceTheBytes) {
  // 32 lanes x 4 B at 8 B apart: 256 bytes spanned, 2 lines, 8 sectors each half used.
  MemoryView v = view(access(0x2000, 8, 4));
  ASSERT_TRUE(v.ok);
  const GlobalView& g = v.global;
  EXPECT_EQ(g.sectors, 8);
  EXPECT_EQ(g.lines.size(), 2u);
  EXPECT_EQ(fetchedSectors(g), 8);
  EXPECT_DOUBLE_EQ(g.efficiency, 0.5);
  EXPECT_EQ(g.bytesUsed, 128);
  for (const LineCell& l : g.lines)
    for (const SectorCell& s : l.sectors) EXPECT_EQ(s.usedBytes(), 16);
}

TEST(MemoryView, MisalignedLoadTouchesAnExtraSectorAndLine) {
  // Shifted by 4 bytes: bytes [4, 132) -> sectors 0..4 (5), lines 0 and 1.
  MemoryView v = view(access(0x3004, 4, 4));
  const GlobalView& g = v.global;
  EXPECT_EQ(g.sectors, 5);
  EXPECT_EQ(g.linesTouched, 2);
  EXPECT_DOUBLE_EQ(g.efficiency, 128.0 / 160.0);
  ASSERT_EQ(g.lines.size(), 2u);
  EXPECT_EQ(g.lines[1].sectors[0].usedBytes(), 4);   // lane 31's bytes
  EXPECT_EQ(g.lines[1].sectors[0].laneMask, 1u << 31);
  EXPECT_EQ(g.lines[1].sectors[1].fetches, 0);       // drawn, not fetched (greyed)
}

TEST(MemoryView, SixteenByteVectorLoadIsStillOneRequest) {
  // LDG.128: 32 lanes x 16 B = 512 bytes = 4 lines, 16 sectors, one request.
  MemoryView v = view(access(0x4000, 16, 16));
  const GlobalView& g = v.global;
  EXPECT_EQ(v.bytesPerLane, 16);
  EXPECT_EQ(g.requests, 1);
  EXPECT_EQ(g.sectors, 16);
  EXPECT_EQ(g.lines.size(), 4u);
  EXPECT_DOUBLE_EQ(g.sectorsPerRequest(), 16.0);
  EXPECT_DOUBLE_EQ(g.efficiency, 1.0);
}

TEST(MemoryView, MaskedLanesTouchNothing) {
  // Only lanes 0..12 active (a ragged row end): 52 bytes -> 2 sectors, 52 / 64 efficient.
  MemoryView v = view(access(0x5000, 4, 4, (1u << 13) - 1));
  const GlobalView& g = v.global;
  EXPECT_EQ(g.activeLaneAccesses, 13);
  EXPECT_EQ(g.spans.size(), 13u);
  EXPECT_EQ(g.sectors, 2);
  EXPECT_DOUBLE_EQ(g.efficiency, 52.0 / 64.0);
  EXPECT_EQ(g.idealSectors, 2);
  ASSERT_EQ(g.lines.size(), 1u);
  EXPECT_EQ(g.lines[0].sectors[1].usedBytes(), 20);
  EXPECT_EQ(g.lines[0].sectors[2].fetches, 0);

  // No lane at all: not a view.
  MemoryView none = view(access(0x5000, 4, 4, 0));
  EXPECT_TRUE(none.ok);
  EXPECT_EQ(none.global.requests, 0);
  EXPECT_TRUE(none.global.lines.empty());
}

TEST(MemoryView, SeveralRecordsOfOneExecutionAreSummed) {
  // Two access groups of 16 B per lane (8 floats per thread): two requests of 16 sectors.
  std::vector<WarpAccess> recs = {access(0x8000, 16, 16), access(0x8000 + 2048, 16, 16)};
  MemoryView v = buildMemoryView(recs);
  ASSERT_TRUE(v.ok) << v.error;
  EXPECT_EQ(v.global.requests, 2);
  EXPECT_EQ(v.global.sectors, 32);
  EXPECT_EQ(v.global.linesTouched, 8);
  EXPECT_DOUBLE_EQ(v.global.sectorsPerRequest(), 16.0);
  EXPECT_EQ(v.global.spans.size(), 64u);
  EXPECT_EQ(v.global.spans[40].record, 1);
  // 2048 - 512 bytes between the groups are skipped, and the window says so.
  EXPECT_EQ(v.global.lines[4].gapBefore, 1536u);
  EXPECT_NE(v.global.note.find("not drawn"), std::string::npos) << v.global.note;

  recs[1].bytes = 8;
  EXPECT_FALSE(buildMemoryView(recs).ok);
}

TEST(MemoryView, HugeStridedSpanIsCappedWithANote) {
  // Each lane in its own line, 4 KB apart: 32 lines touched, 32 sectors, 12.5% efficient.
  MemoryView v = buildMemoryView(std::vector<WarpAccess>{access(0, 4096, 4)}, 8);
  const GlobalView& g = v.global;
  EXPECT_EQ(g.sectors, 32);
  EXPECT_EQ(g.linesTouched, 32);
  EXPECT_EQ(g.lines.size(), 8u);
  EXPECT_DOUBLE_EQ(g.efficiency, 4.0 / 32.0);
  EXPECT_NE(g.note.find("first 8 of 32 touched lines"), std::string::npos) << g.note;
}

TEST(MemoryView, SharedTwoWayBankConflict) {
  // Stride 2 words: lanes l and l + 16 hit the same bank, different words: 2 wavefronts.
  MemoryView v = view(access(0, 8, 4, 0xffffffffu, MemSpace::Shared));
  ASSERT_TRUE(v.ok);
  const SharedView& s = v.shared;
  EXPECT_EQ(s.wavefronts, 2);
  EXPECT_EQ(s.idealWavefronts, 1);
  EXPECT_EQ(s.bankConflicts, 1);
  EXPECT_EQ(s.maxWays, 2);
  // 32 cells: even banks in both wavefronts, one word each.
  EXPECT_EQ(s.cells.size(), 32u);
  for (const BankCell& c : s.cells) {
    EXPECT_EQ(c.bank % 2, 0);
    EXPECT_EQ(c.words.size(), 1u);
    EXPECT_EQ(c.words[0] % 32, static_cast<uint64_t>(c.bank));
  }
  EXPECT_EQ(describeShared(s), "2 wavefronts (ideal 1): 1 extra (a 2-way bank conflict)");
}

TEST(MemoryView, SharedBroadcastAndVectorGroups) {
  // Every lane reads word 64: one cell, all lanes, no conflict.
  MemoryView b = view(access(256, 0, 4, 0xffffffffu, MemSpace::Shared));
  ASSERT_EQ(b.shared.cells.size(), 1u);
  EXPECT_EQ(b.shared.cells[0].laneMask, 0xffffffffu);
  EXPECT_EQ(describeShared(b.shared), "1 wavefront (ideal 1): no bank conflict");
  // 16-byte lanes: served by quarter-warps, 4 wavefronts ideal and actual, 4 words per lane.
  MemoryView q = view(access(0, 16, 16, 0xffffffffu, MemSpace::Shared));
  EXPECT_EQ(q.shared.lanesPerGroup, 8);
  EXPECT_EQ(q.shared.wavefronts, 4);
  EXPECT_EQ(q.shared.idealWavefronts, 4);
  EXPECT_EQ(q.shared.cells.size(), 128u);
}

TEST(MemoryView, RecordsGroupIntoExecutions) {
  // Warp 0 of block 0 runs instruction 3 (two groups) twice with instruction 5 between; warp 1
  // runs it once; a one-group loop of instruction 7 gives back-to-back records cut by the count.
  auto rec = [](int64_t block, int32_t warp, int32_t instr) {
    WarpAccess a = access(0, 4, 4);
    a.block = block, a.warp = warp, a.instr = instr;
    return a;
  };
  std::vector<WarpAccess> acc = {rec(0, 0, 3), rec(0, 0, 3), rec(0, 1, 3), rec(0, 1, 3), rec(0, 0, 5),
                                 rec(0, 0, 3), rec(0, 0, 3), rec(0, 0, 7), rec(0, 0, 7), rec(1, 0, 3)};
  auto e = warpExecutions(acc, 0, 0, 3, 2);
  ASSERT_EQ(e.size(), 2u);
  EXPECT_EQ(e[0].size(), 2u);
  EXPECT_EQ(e[1].size(), 2u);
  EXPECT_EQ(warpExecutions(acc, 0, 1, 3, 2).size(), 1u);
  EXPECT_EQ(warpExecutions(acc, 0, 0, 7, 1).size(), 2u);
  EXPECT_EQ(warpExecutions(acc, 1, 0, 3, 2).size(), 1u);
  EXPECT_TRUE(warpExecutions(acc, 2, 0, 3, 2).empty());
}

}  // namespace
}  // namespace tl::viz
