// Global coalescing of hand-made warp accesses: requests, sectors, lines and efficiency for the
// patterns docs/sim.md works through ("Global memory").
#include <gtest/gtest.h>

#include <stdexcept>

#include "memmodel_util.h"
#include "sim/Coalescing.h"

namespace tl::test {
namespace {

constexpr uint64_t kBase = 0x10000000;  // 128-byte aligned, like the executor's buffers

WarpCoalescing global(int bytes, const std::function<uint64_t(int)>& addrOf, uint32_t mask = 0xFFFFFFFFu) {
  return coalesce(warpAccess(MemSpace::Global, bytes, addrOf, mask));
}

TEST(MemCoalescing, ConsecutiveAlignedFloatsAreOneLine) {
  WarpCoalescing w = global(4, [](int l) { return kBase + 4 * l; });
  EXPECT_EQ(w.requests, 1);
  EXPECT_EQ(w.sectors.size(), 4u);
  EXPECT_EQ(w.lines.size(), 1u);
  EXPECT_EQ(w.bytesRequested, 128);
  EXPECT_EQ(w.bytesFetched, 128);
  EXPECT_DOUBLE_EQ(w.efficiency, 1.0);
  EXPECT_EQ(w.sectors[0].addr, kBase);
  EXPECT_EQ(w.sectors[0].byteMask, 0xFFFFFFFFu);
  EXPECT_EQ(w.sectors[1].laneMask, 0x0000FF00u);  // lanes 8-15 fall in the second sector
  EXPECT_EQ(w.lanes[9].firstSector, 1);
  EXPECT_EQ(w.lanes[31].firstLine, 0);
}

TEST(MemCoalescing, MisalignedByOneFloatTouchesFiveSectorsAndTwoLines) {
  WarpCoalescing w = global(4, [](int l) { return kBase + 4 + 4 * l; });
  EXPECT_EQ(w.sectors.size(), 5u);
  EXPECT_EQ(w.lines.size(), 2u);
  EXPECT_DOUBLE_EQ(w.efficiency, 128.0 / 160.0);
  EXPECT_EQ(w.sectors[0].byteMask, 0xFFFFFFF0u);  // bytes 4..31 of the first sector
  EXPECT_EQ(w.sectors[4].byteMask, 0x0000000Fu);  // bytes 0..3 of the fifth
  EXPECT_EQ(w.lanes[31].firstLine, 1);
}

TEST(MemCoalescing, StrideTwoHalvesTheEfficiency) {
  WarpCoalescing w = global(4, [](int l) { return kBase + 8 * l; });
  EXPECT_EQ(w.sectors.size(), 8u);
  EXPECT_EQ(w.lines.size(), 2u);
  EXPECT_DOUBLE_EQ(w.efficiency, 0.5);
  EXPECT_EQ(w.bytesUsed, 128);
}

TEST(MemCoalescing, StrideOfALineGivesOneSectorPerLane) {
  WarpCoalescing w = global(4, [](int l) { return kBase + 128 * l; });
  EXPECT_EQ(w.sectors.size(), 32u);
  EXPECT_EQ(w.lines.size(), 32u);
  EXPECT_DOUBLE_EQ(w.efficiency, 0.125);
}

TEST(MemCoalescing, SixteenByteVectorsAreStillOneRequest) {
  WarpCoalescing w = global(16, [](int l) { return kBase + 16 * l; });
  EXPECT_EQ(w.requests, 1);
  EXPECT_EQ(w.sectors.size(), 16u);  // 512 bytes
  EXPECT_EQ(w.lines.size(), 4u);
  EXPECT_EQ(w.bytesRequested, 512);
  EXPECT_DOUBLE_EQ(w.efficiency, 1.0);
  EXPECT_DOUBLE_EQ(w.sectorsPerRequest(), 16.0);
}

TEST(MemCoalescing, EightByteVectors) {
  WarpCoalescing w = global(8, [](int l) { return kBase + 8 * l; });
  EXPECT_EQ(w.sectors.size(), 8u);
  EXPECT_EQ(w.lines.size(), 2u);
  EXPECT_DOUBLE_EQ(w.efficiency, 1.0);
}

TEST(MemCoalescing, MaskedLanesTouchNothing) {
  // The lower half-warp only: 2 sectors, fully used.
  WarpCoalescing low = global(4, [](int l) { return kBase + 4 * l; }, 0x0000FFFFu);
  EXPECT_EQ(low.activeLanes, 16);
  EXPECT_EQ(low.sectors.size(), 2u);
  EXPECT_DOUBLE_EQ(low.efficiency, 1.0);
  EXPECT_FALSE(low.lanes[20].active);
  EXPECT_EQ(low.lanes[20].firstSector, -1);
  // Every other lane: still 4 sectors, half of each used.
  WarpCoalescing even = global(4, [](int l) { return kBase + 4 * l; }, 0x55555555u);
  EXPECT_EQ(even.sectors.size(), 4u);
  EXPECT_DOUBLE_EQ(even.efficiency, 0.5);
  // Inactive lanes' addresses are ignored, however wild.
  WarpAccess a = warpAccess(MemSpace::Global, 4, [](int l) { return kBase + 4 * l; }, 0x1u);
  a.addr[5] = 0xFFFFFFFFFFFFFFFFull;
  EXPECT_EQ(coalesce(a).sectors.size(), 1u);
}

TEST(MemCoalescing, NoActiveLaneIsNoRequest) {
  WarpCoalescing w = global(4, [](int l) { return kBase + 4 * l; }, 0u);
  EXPECT_EQ(w.requests, 0);
  EXPECT_TRUE(w.sectors.empty());
  EXPECT_DOUBLE_EQ(w.efficiency, 0.0);
}

TEST(MemCoalescing, OneAndTwoByteAccesses) {
  WarpCoalescing bytes = global(1, [](int l) { return kBase + l; });
  EXPECT_EQ(bytes.sectors.size(), 1u);
  EXPECT_DOUBLE_EQ(bytes.efficiency, 1.0);
  WarpCoalescing halves = global(2, [](int l) { return kBase + 2 * l; });
  EXPECT_EQ(halves.sectors.size(), 2u);
  EXPECT_DOUBLE_EQ(halves.efficiency, 1.0);
  // i8 with a stride of 4: 32 bytes used out of 128 fetched.
  WarpCoalescing sparse = global(1, [](int l) { return kBase + 4 * l; });
  EXPECT_EQ(sparse.sectors.size(), 4u);
  EXPECT_DOUBLE_EQ(sparse.efficiency, 0.25);
}

TEST(MemCoalescing, AnAccessStraddlingASectorBoundaryCountsBoth) {
  WarpCoalescing w = global(8, [](int) { return kBase + 28; }, 0x1u);
  ASSERT_EQ(w.sectors.size(), 2u);
  EXPECT_EQ(w.sectors[0].byteMask, 0xF0000000u);
  EXPECT_EQ(w.sectors[1].byteMask, 0x0000000Fu);
  EXPECT_EQ(w.lanes[0].firstSector, 0);
  EXPECT_EQ(w.lanes[0].lastSector, 1);
  EXPECT_DOUBLE_EQ(w.efficiency, 8.0 / 64.0);
  // Across a line boundary too.
  WarpCoalescing line = global(4, [](int) { return kBase + 126; }, 0x1u);
  EXPECT_EQ(line.lines.size(), 2u);
  EXPECT_EQ(line.lanes[0].lastLine, 1);
}

TEST(MemCoalescing, BroadcastFetchesOneSector) {
  WarpCoalescing w = global(4, [](int) { return kBase + 64; });
  EXPECT_EQ(w.sectors.size(), 1u);
  EXPECT_EQ(w.sectors[0].laneMask, 0xFFFFFFFFu);
  EXPECT_EQ(w.bytesUsed, 4);
  EXPECT_DOUBLE_EQ(w.efficiency, 4.0);  // 128 bytes requested, 32 fetched
}

TEST(MemCoalescing, LaneOrderDoesNotMatter) {
  WarpCoalescing reversed = global(4, [](int l) { return kBase + 4 * (31 - l); });
  EXPECT_EQ(reversed.sectors.size(), 4u);
  EXPECT_EQ(reversed.sectors[0].addr, kBase);
  EXPECT_EQ(reversed.sectors[0].laneMask, 0xFF000000u);  // lanes 24-31 read the first 32 bytes
  EXPECT_EQ(reversed.lanes[0].firstSector, 3);
}

TEST(MemCoalescing, WidthsOutsideOneToSixteenAreRejected) {
  for (int bytes : {0, 17, 32}) {
    WarpAccess a = warpAccess(MemSpace::Global, bytes, [](int l) { return kBase + 4 * l; });
    EXPECT_THROW(coalesce(a), std::invalid_argument) << bytes;
  }
  WarpAccess overflow = warpAccess(MemSpace::Global, 4, [](int) { return 0xFFFFFFFFFFFFFFFEull; }, 0x1u);
  EXPECT_THROW(coalesce(overflow), std::invalid_argument);
}

}  // namespace
}  // namespace tl::test
