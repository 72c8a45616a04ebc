// Executor basics: thread/lane/warp/block ids, reg_index, register shuffling ops (extract, pack,
// permute, reg_reduce), the instruction table, ExecStats, and sampling with maxBlocks.
#include <gtest/gtest.h>

#include "SimTestUtil.h"

namespace tl {
namespace {

using test::getI32;
using test::gridLaunch;
using test::parseThread;
using test::runError;

// Every thread writes 4 registers: reg + 10*lane + 1000*warp + 10000*block_x + 100000*num_blocks,
// at element (block_x * 64 + thread_id) * 4 + reg.
const char* kIds = R"(thread_func @ids(%out: ptr<i32>) num_warps(2) shared_bytes(0) {
  %tid = thread_id : i32
  %lane = lane_id : i32
  %warp = warp_id : i32
  %bx = block_id {axis = 0} : i32
  %nb = num_blocks {axis = 0} : i32
  %reg = reg_index : <4xi32>
  %c10 = constant {value = 10} : i32
  %c1000 = constant {value = 1000} : i32
  %c10000 = constant {value = 10000} : i32
  %c100000 = constant {value = 100000} : i32
  %c64 = constant {value = 64} : i32
  %c4 = constant {value = 4} : i32
  %a = mul %lane, %c10 : i32
  %b = mul %warp, %c1000 : i32
  %c = mul %bx, %c10000 : i32
  %d = mul %nb, %c100000 : i32
  %ab = add %a, %b : i32
  %cd = add %c, %d : i32
  %s = add %ab, %cd : i32
  %sv = splat %s : <4xi32>
  %val = add %sv, %reg : <4xi32>
  %g0 = mul %bx, %c64 : i32
  %g1 = add %g0, %tid : i32
  %g2 = mul %g1, %c4 : i32
  %g2v = splat %g2 : <4xi32>
  %idx = add %g2v, %reg : <4xi32>
  %outv = splat %out : <4xptr<i32>>
  %ptrs = addptr %outv, %idx : <4xptr<i32>>
  st_global %ptrs, %val {vec = 4}
  return
}
)";

TEST(ExecIds, ThreadLaneWarpBlockAndRegIndex) {
  auto fn = parseThread(kIds);
  ASSERT_NE(fn, nullptr);
  Memory mem;
  const int64_t blocks = 3;
  mem.add("out", DType::I32, {blocks * 64 * 4}, true);
  ExecResult r;
  ASSERT_EQ(runError(*fn, gridLaunch(blocks), mem, {}, &r), "");
  const Buffer& out = *mem.find("out");
  for (int64_t bx = 0; bx < blocks; ++bx)
    for (int tid = 0; tid < 64; ++tid)
      for (int reg = 0; reg < 4; ++reg) {
        int64_t e = (bx * 64 + tid) * 4 + reg;
        int64_t want = reg + 10 * (tid % 32) + 1000 * (tid / 32) + 10000 * bx + 100000 * blocks;
        ASSERT_EQ(getI32(out, e), want) << "block " << bx << " thread " << tid << " reg " << reg;
      }
  EXPECT_EQ(r.stats.blocks, blocks);
  EXPECT_EQ(r.stats.barriers, 0);
  EXPECT_EQ(r.stats.divergentBranches, 0);
  // 30 ops (29 + return) per warp, 2 warps per block.
  EXPECT_EQ(r.stats.warpInstructions, blocks * 2 * 30);
  // One 16-byte store per lane per warp: one record each, all lanes active, consecutive.
  ASSERT_EQ(r.accesses.size(), static_cast<size_t>(blocks * 2));
  for (const WarpAccess& a : r.accesses) {
    EXPECT_EQ(a.activeMask, 0xFFFFFFFFu);
    EXPECT_EQ(a.bytes, 16);
    EXPECT_TRUE(a.store);
    for (int l = 1; l < 32; ++l) EXPECT_EQ(a.addr[l], a.addr[0] + 16u * l);
  }
}

TEST(ExecIds, MaxBlocksRunsOnlyTheFirstBlocks) {
  auto fn = parseThread(kIds);
  ASSERT_NE(fn, nullptr);
  Memory mem;
  mem.add("out", DType::I32, {8 * 64 * 4}, true);
  ExecOptions opts;
  opts.maxBlocks = 3;
  ExecResult r;
  ASSERT_EQ(runError(*fn, gridLaunch(8), mem, opts, &r), "");
  EXPECT_EQ(r.stats.blocks, 3);
  const Buffer& out = *mem.find("out");
  EXPECT_EQ(getI32(out, 2 * 256 + 5), 1 + 10 * 1 + 20000 + 800000);  // block 2, thread 1, reg 1
  for (int64_t e = 3 * 256; e < 8 * 256; ++e) ASSERT_EQ(getI32(out, e), 0) << e;  // blocks 3.. never ran
  EXPECT_EQ(r.accesses.size(), 6u);
  EXPECT_EQ(r.accesses.back().block, 2);
}

TEST(ExecIds, InstructionTableIsPreOrder) {
  auto fn = parseThread(R"(thread_func @k(%out: ptr<i32>) num_warps(1) shared_bytes(0) {
  %lane = lane_id : i32
  %c0 = constant {value = 0} : i32
  %c = cmp %lane, %c0 {pred = "eq"} : i1
  %r = if %c : i32 {
    %a = constant {value = 1} : i32
    yield %a
  } else {
    yield %lane
  }
  return
}
)");
  ASSERT_NE(fn, nullptr);
  std::vector<const Op*> t = instructionTable(*fn);
  ASSERT_EQ(t.size(), 8u);
  EXPECT_EQ(t[3]->kind, OpKind::If);
  EXPECT_EQ(t[4]->kind, OpKind::Constant);  // the then-region's ops follow the if
  EXPECT_EQ(t[5]->kind, OpKind::Yield);
  EXPECT_EQ(t[6]->kind, OpKind::Yield);
  EXPECT_EQ(t[7]->kind, OpKind::Return);
  EXPECT_EQ(t[4]->loc.line, 6u);
}

// extract / pack / permute / reg_reduce on per-lane registers.
TEST(ExecRegisters, ExtractPackPermuteRegReduce) {
  auto fn = parseThread(R"(thread_func @regs(%out: ptr<i32>) num_warps(1) shared_bytes(0) {
  %lane = lane_id : i32
  %reg = reg_index : <4xi32>
  %c100 = constant {value = 100} : i32
  %l100 = mul %lane, %c100 : i32
  %lv = splat %l100 : <4xi32>
  %v = add %lv, %reg : <4xi32>
  %e2 = extract %v {index = 2} : i32
  %perm = permute %v {indices = [3, 3, 0, 1]} : <4xi32>
  %sum = reg_reduce %v {kind = "sum", group = 4} : i32
  %pairs = reg_reduce %v {kind = "max", group = 2} : <2xi32>
  %p0 = extract %pairs {index = 0} : i32
  %p1 = extract %pairs {index = 1} : i32
  %packed = pack %e2, %sum, %p0, %p1 : <4xi32>
  %c8 = constant {value = 8} : i32
  %base = mul %lane, %c8 : i32
  %bv = splat %base : <4xi32>
  %i0 = add %bv, %reg : <4xi32>
  %c4 = constant {value = 4} : <4xi32>
  %i1 = add %i0, %c4 : <4xi32>
  %outv = splat %out : <4xptr<i32>>
  %q0 = addptr %outv, %i0 : <4xptr<i32>>
  %q1 = addptr %outv, %i1 : <4xptr<i32>>
  st_global %q0, %perm {vec = 4}
  st_global %q1, %packed {vec = 2}
  return
}
)");
  ASSERT_NE(fn, nullptr);
  Memory mem;
  mem.add("out", DType::I32, {32 * 8}, true);
  ExecResult r;
  ASSERT_EQ(runError(*fn, gridLaunch(1), mem, {}, &r), "");
  const Buffer& out = *mem.find("out");
  for (int l = 0; l < 32; ++l) {
    int b = 100 * l;
    std::vector<int> want = {b + 3, b + 3, b, b + 1, b + 2, 4 * b + 6, b + 1, b + 3};
    for (int k = 0; k < 8; ++k) ASSERT_EQ(getI32(out, l * 8 + k), want[k]) << "lane " << l << " k " << k;
  }
  // The vec-2 store of 4 registers is two access groups: two records, 8 bytes per lane.
  ASSERT_EQ(r.accesses.size(), 3u);
  EXPECT_EQ(r.accesses[1].bytes, 8);
  EXPECT_EQ(r.accesses[2].addr[0], r.accesses[1].addr[0] + 8);
}

}  // namespace
}  // namespace tl
