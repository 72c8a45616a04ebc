// Shared-memory bank conflicts of hand-made warp accesses: wavefronts, ideal wavefronts and
// conflicts for 1-, 4-, 8- and 16-byte accesses (docs/sim.md, "Shared memory").
#include <gtest/gtest.h>

#include "memmodel_util.h"
#include "sim/Banks.h"

namespace tl::test {
namespace {

BankAccess shared(int bytes, const std::function<uint64_t(int)>& addrOf, uint32_t mask = 0xFFFFFFFFu) {
  return banks(warpAccess(MemSpace::Shared, bytes, addrOf, mask));
}

TEST(MemBanks, ConsecutiveWordsAreConflictFree) {
  BankAccess b = shared(4, [](int l) { return 4 * l; });
  EXPECT_EQ(b.lanesPerGroup, 32);
  EXPECT_EQ(b.wavefronts, 1);
  EXPECT_EQ(b.idealWavefronts, 1);
  EXPECT_EQ(b.bankConflicts, 0);
  EXPECT_EQ(b.lanes[7].bank, 7);
  EXPECT_EQ(b.lanes[7].wavefront, 0);
}

TEST(MemBanks, StrideTwoIsATwoWayConflict) {
  BankAccess b = shared(4, [](int l) { return 8 * l; });
  EXPECT_EQ(b.wavefronts, 2);
  EXPECT_EQ(b.bankConflicts, 1);
  EXPECT_EQ(b.maxWays, 2);
  EXPECT_EQ(b.lanes[0].bank, 0);
  EXPECT_EQ(b.lanes[16].bank, 0);  // word 32: bank 0 again
  EXPECT_EQ(b.lanes[0].wavefront, 0);
  EXPECT_EQ(b.lanes[16].wavefront, 1);
}

TEST(MemBanks, AColumnOfA32WideTileIsA32WayConflict) {
  BankAccess b = shared(4, [](int l) { return 128 * l; });
  EXPECT_EQ(b.wavefronts, 32);
  EXPECT_EQ(b.idealWavefronts, 1);
  EXPECT_EQ(b.bankConflicts, 31);
  EXPECT_EQ(b.lanes[31].wavefront, 31);
  // Padding the row to 33 words (the classic fix) removes it.
  BankAccess padded = shared(4, [](int l) { return 132 * l; });
  EXPECT_EQ(padded.wavefronts, 1);
}

TEST(MemBanks, SameWordIsABroadcast) {
  EXPECT_EQ(shared(4, [](int) { return 256; }).wavefronts, 1);
  // Pairs of lanes on each word: still one wavefront.
  EXPECT_EQ(shared(4, [](int l) { return 4 * (l / 2); }).wavefronts, 1);
  // Bytes of one word read by four lanes each.
  BankAccess bytes = shared(1, [](int l) { return l; });
  EXPECT_EQ(bytes.wavefronts, 1);
  EXPECT_EQ(bytes.lanes[5].word, 1u);
  // Two words of bank 0 read by half the warp each: 2 wavefronts, whatever the broadcast.
  EXPECT_EQ(shared(4, [](int l) { return l < 16 ? 0 : 128; }).wavefronts, 2);
}

TEST(MemBanks, EightByteAccessesAreServedPerHalfWarp) {
  BankAccess b = shared(8, [](int l) { return 8 * l; });
  EXPECT_EQ(b.lanesPerGroup, 16);
  EXPECT_EQ(b.wavefronts, 2);
  EXPECT_EQ(b.idealWavefronts, 2);
  EXPECT_EQ(b.bankConflicts, 0);
  EXPECT_EQ(b.lanes[15].wavefront, 0);
  EXPECT_EQ(b.lanes[16].wavefront, 1);
  EXPECT_EQ(b.lanes[3].words, 2);
  // Stride of two 8-byte elements: each half-warp wraps the banks twice.
  BankAccess strided = shared(8, [](int l) { return 16 * l; });
  EXPECT_EQ(strided.wavefronts, 4);
  EXPECT_EQ(strided.idealWavefronts, 2);
  EXPECT_EQ(strided.bankConflicts, 2);
  // Only the lower half-warp active: one wavefront is the ideal.
  BankAccess half = shared(8, [](int l) { return 8 * l; }, 0x0000FFFFu);
  EXPECT_EQ(half.wavefronts, 1);
  EXPECT_EQ(half.idealWavefronts, 1);
}

TEST(MemBanks, SixteenByteAccessesAreServedPerQuarterWarp) {
  BankAccess b = shared(16, [](int l) { return 16 * l; });
  EXPECT_EQ(b.lanesPerGroup, 8);
  EXPECT_EQ(b.wavefronts, 4);
  EXPECT_EQ(b.idealWavefronts, 4);
  EXPECT_EQ(b.bankConflicts, 0);
  EXPECT_EQ(b.lanes[8].wavefront, 1);
  EXPECT_EQ(b.lanes[31].group, 3);
  // Lanes 0 and 8 share banks 0-3, but sit in different quarter-warps: no conflict.
  EXPECT_EQ(b.lanes[0].bank, b.lanes[8].bank);
  // A column of 16-byte elements in 128-byte rows: 8 lanes of a quarter on banks 0-3.
  BankAccess column = shared(16, [](int l) { return 128 * l; });
  EXPECT_EQ(column.wavefronts, 32);
  EXPECT_EQ(column.bankConflicts, 28);
  // All lanes on one 16-byte element: one wavefront per quarter-warp (see docs/sim.md).
  BankAccess same = shared(16, [](int) { return 64; });
  EXPECT_EQ(same.wavefronts, 4);
  EXPECT_EQ(same.bankConflicts, 0);
  // One active quarter.
  BankAccess quarter = shared(16, [](int l) { return 16 * l; }, 0x0000FF00u);
  EXPECT_EQ(quarter.wavefronts, 1);
  EXPECT_EQ(quarter.idealWavefronts, 1);
  EXPECT_EQ(quarter.lanes[8].wavefront, 0);
}

TEST(MemBanks, InactiveLanesCostNothing) {
  // Lanes 0 and 16 alone would conflict (bank 0, words 0 and 32); lane 16 is masked.
  BankAccess b = shared(4, [](int l) { return 8 * l; }, 0x0000FFFFu);
  EXPECT_EQ(b.wavefronts, 1);
  EXPECT_FALSE(b.lanes[16].active);
  EXPECT_EQ(b.lanes[16].wavefront, -1);
}

TEST(MemBanks, StoresFollowTheSameRules) {
  WarpAccess a = warpAccess(MemSpace::Shared, 4, [](int l) { return 128 * (l % 2); }, 0xFFFFFFFFu, true);
  EXPECT_EQ(banks(a).wavefronts, 2);  // two words of bank 0, each written by 16 lanes
}

}  // namespace
}  // namespace tl::test
