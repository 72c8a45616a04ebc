// Ideal sectors, sectors per ideal and sectors per 128 requested bytes (sim/MemoryModel.h,
// docs/sim.md "Global memory"): the figures a grader uses to say whether an access is coalesced,
// whatever its width, and the buffer names each global instruction is charged to.
#include <gtest/gtest.h>

#include <algorithm>

#include "memmodel_util.h"
#include "sim/Coalescing.h"
#include "sim/MemoryModel.h"

namespace tl::test {
namespace {

constexpr uint64_t kBase = 0x10000000;  // 128-byte aligned, like the executor's buffers

// One instruction executed once by a full warp (or `mask`), lane l at addrOf(l).
MemCounters one(int bytes, const std::function<uint64_t(int)>& addrOf, uint32_t mask = ~0u) {
  MemoryModelOptions o;
  o.caches = false;
  MemoryReport r = analyzeMemory({warpAccess(MemSpace::Global, bytes, addrOf, mask)}, smallGpu(1 << 20), o);
  EXPECT_EQ(r.instructions.size(), 1u);
  return r.instructions.empty() ? MemCounters{} : r.instructions[0].counters;
}

// Stride s floats (4-byte lanes): the warp's 128 useful bytes ideally take 4 sectors; it
// fetches min(4s, 32), so sectors / ideal = min(s, 8) and sectors per 128 B = min(4s, 32).
TEST(MemIdeal, StridedFloats) {
  for (int s : {1, 2, 4, 32}) {
    MemCounters c = one(4, [s](int l) { return kBase + 4 * uint64_t(s) * l; });
    const double sectors = std::min(4 * s, 32);
    EXPECT_EQ(c.sectors, int64_t(sectors)) << "stride " << s;
    EXPECT_EQ(c.idealSectors, 4) << "stride " << s;
    EXPECT_DOUBLE_EQ(c.sectorsPerIdeal(), sectors / 4) << "stride " << s;
    EXPECT_DOUBLE_EQ(c.sectorsPer128B(), sectors) << "stride " << s;
    EXPECT_DOUBLE_EQ(c.sectorsPer128B(), 4.0 / c.efficiency()) << "stride " << s;
  }
}

// A perfect vector access reads 1.0 at every width, although its sectors per request are
// 4, 8 and 16: 8 lanes of 16 bytes fill 4 sectors.
TEST(MemIdeal, PerfectVectorAccessesAreOnePerIdeal) {
  for (int bytes : {4, 8, 16}) {
    MemCounters c = one(bytes, [bytes](int l) { return kBase + uint64_t(bytes) * l; });
    EXPECT_EQ(c.sectors, bytes) << bytes << " B";  // 32 x bytes / 32
    EXPECT_EQ(c.idealSectors, bytes) << bytes << " B";
    EXPECT_DOUBLE_EQ(c.sectorsPerRequest(), double(bytes)) << bytes << " B";
    EXPECT_DOUBLE_EQ(c.sectorsPerIdeal(), 1.0) << bytes << " B";
    EXPECT_DOUBLE_EQ(c.sectorsPer128B(), 4.0) << bytes << " B";
  }
  // 8 lanes of 16 bytes: one 128-byte line, 4 sectors, ideal 4.
  MemCounters quarter = one(16, [](int l) { return kBase + 16 * uint64_t(l); }, 0xFFu);
  EXPECT_EQ(quarter.sectors, 4);
  EXPECT_EQ(quarter.idealSectors, 4);
}

// Vector accesses with a gap between lanes: 8-byte lanes 16 bytes apart and 16-byte lanes
// 32 bytes apart both fetch twice what they use.
TEST(MemIdeal, StridedVectorAccesses) {
  MemCounters v8 = one(8, [](int l) { return kBase + 16 * uint64_t(l); });
  EXPECT_EQ(v8.sectors, 16);
  EXPECT_EQ(v8.idealSectors, 8);
  EXPECT_DOUBLE_EQ(v8.sectorsPerIdeal(), 2.0);
  MemCounters v16 = one(16, [](int l) { return kBase + 32 * uint64_t(l); });
  EXPECT_EQ(v16.sectors, 32);
  EXPECT_EQ(v16.idealSectors, 16);
  EXPECT_DOUBLE_EQ(v16.sectorsPerIdeal(), 2.0);
  EXPECT_DOUBLE_EQ(v16.sectorsPer128B(), 8.0);
}

// Misaligned by one float: the 128 bytes straddle 5 sectors where 4 would do.
TEST(MemIdeal, MisalignedAccess) {
  MemCounters c = one(4, [](int l) { return kBase + 4 + 4 * uint64_t(l); });
  EXPECT_EQ(c.sectors, 5);
  EXPECT_EQ(c.idealSectors, 4);
  EXPECT_DOUBLE_EQ(c.sectorsPerIdeal(), 1.25);
  EXPECT_DOUBLE_EQ(c.sectorsPer128B(), 5.0);
  // 16-byte lanes misaligned by 4 bytes: 512 bytes over 17 sectors.
  MemCounters v = one(16, [](int l) { return kBase + 4 + 16 * uint64_t(l); });
  EXPECT_EQ(v.sectors, 17);
  EXPECT_EQ(v.idealSectors, 16);
}

// Ideal counts distinct bytes, rounded up per request: a broadcast needs one sector (1.0, the
// access is as good as it gets); half a warp needs 2; 3 lanes of 4 bytes need 1.
TEST(MemIdeal, DistinctBytesRoundedUpPerRequest) {
  MemCounters b = one(4, [](int) { return kBase + 64; });
  EXPECT_EQ(b.idealSectors, 1);
  EXPECT_DOUBLE_EQ(b.sectorsPerIdeal(), 1.0);
  EXPECT_DOUBLE_EQ(b.sectorsPer128B(), 1.0);  // 128 requested bytes (each lane counts), 1 sector
  EXPECT_EQ(one(4, [](int l) { return kBase + 4 * uint64_t(l); }, 0xFFFFu).idealSectors, 2);
  EXPECT_EQ(one(4, [](int l) { return kBase + 4 * uint64_t(l); }, 0x7u).idealSectors, 1);
  // Two requests of 3 lanes: 2 ideal sectors (per request), not ceil(24 / 32) = 1.
  MemoryModelOptions o;
  o.caches = false;
  auto a = warpAccess(MemSpace::Global, 4, [](int l) { return kBase + 4 * uint64_t(l); }, 0x7u);
  MemoryReport r = analyzeMemory({a, a}, smallGpu(1 << 20), o);
  EXPECT_EQ(r.instructions[0].counters.idealSectors, 2);
  // coalesce() explains one access the same way.
  WarpCoalescing w = coalesce(warpAccess(MemSpace::Global, 4, [](int l) { return kBase + 8 * uint64_t(l); }));
  EXPECT_EQ(w.idealSectors, 4);
  EXPECT_DOUBLE_EQ(w.sectorsPerIdeal(), 2.0);
}

// Ideal sectors add up over lines and totals and scale with sampling like the other counts.
TEST(MemIdeal, SummedAndScaled) {
  std::vector<WarpAccess> s;
  for (int64_t b = 0; b < 2; ++b) {
    s.push_back(warpAccess(MemSpace::Global, 4, [b](int l) { return kBase + 4096 * uint64_t(b) + 8 * l; }, ~0u,
                           false, 1, b));
    auto st = warpAccess(MemSpace::Global, 4, [b](int l) { return kBase + 0x10000 + 4096 * uint64_t(b) + 4 * l; },
                         ~0u, true, 2, b);
    s.push_back(st);
  }
  MemoryModelOptions o;
  o.totalBlocks = 6;
  MemoryReport r = analyzeMemory(s, smallGpu(1 << 20), o);
  EXPECT_EQ(r.totals.globalLoad.idealSectors, 3 * 2 * 4);
  EXPECT_EQ(r.totals.globalStore.idealSectors, 3 * 2 * 4);
  EXPECT_DOUBLE_EQ(r.totals.globalLoad.sectorsPerIdeal(), 2.0);
  EXPECT_DOUBLE_EQ(r.totals.globalStore.sectorsPerIdeal(), 1.0);
}

// Each global instruction names the buffers its bytes fell in; a line names its instructions'.
TEST(MemIdeal, BuffersFromAddresses) {
  MemoryModelOptions o;
  o.caches = false;
  o.buffers = {{"x_ptr", kBase, 4096}, {"y_ptr", kBase + 4096, 4096}, {"out_ptr", kBase + 8192, 256}};
  auto ldx = warpAccess(MemSpace::Global, 4, [](int l) { return kBase + 4 * uint64_t(l); }, ~0u, false, 1);
  // A gather whose lanes read both x and y (a select of two pointers).
  auto ldxy = warpAccess(MemSpace::Global, 4, [](int l) { return kBase + (l < 16 ? 0 : 4096) + 4 * uint64_t(l); },
                         ~0u, false, 2);
  ldxy.loc = ldx.loc;
  auto st = warpAccess(MemSpace::Global, 4, [](int l) { return kBase + 8192 + 4 * uint64_t(l); }, ~0u, true, 3);
  auto sh = warpAccess(MemSpace::Shared, 4, [](int l) { return 4 * uint64_t(l); }, ~0u, false, 4);
  MemoryReport r = analyzeMemory({ldx, ldxy, st, sh}, smallGpu(1 << 20), o);
  ASSERT_EQ(r.instructions.size(), 4u);
  EXPECT_EQ(r.instructions[0].buffers, (std::vector<std::string>{"x_ptr"}));
  EXPECT_EQ(r.instructions[1].buffers, (std::vector<std::string>{"x_ptr", "y_ptr"}));
  EXPECT_EQ(r.instructions[2].buffers, (std::vector<std::string>{"out_ptr"}));
  EXPECT_TRUE(r.instructions[3].buffers.empty());
  // Line 11 (instructions 1 and 2, both loads): x and y, in the order the buffers were given.
  bool found = false;
  for (const LineMemStats& l : r.lines)
    if (l.space == MemSpace::Global && !l.store && l.line == ldx.loc.line) {
      found = true;
      EXPECT_EQ(l.buffers, (std::vector<std::string>{"x_ptr", "y_ptr"}));
    }
  EXPECT_TRUE(found);
  // Without names, no buffers.
  MemoryReport none = analyzeMemory({ldx}, smallGpu(1 << 20));
  EXPECT_TRUE(none.instructions[0].buffers.empty());
}

}  // namespace
}  // namespace tl::test
