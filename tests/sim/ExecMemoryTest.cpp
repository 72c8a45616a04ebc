// Global memory: vector loads/stores with per-element masks and `other`, the alignment check of
// vector groups, out-of-bounds errors (located, naming block/thread/lane, nothing written), and
// the access records the memory model consumes (coalesced and strided patterns).
#include <gtest/gtest.h>

#include "SimTestUtil.h"

namespace tl {
namespace {

using test::getF32;
using test::gridLaunch;
using test::parseThread;
using test::runError;

// One warp, 4 registers per lane: element = lane*4 + reg (+ SHIFT). Loads x (masked: element < N,
// other = -1), stores 2x masked to y and the loaded registers unmasked to z.
std::string maskedKernel(int shift, int vec) {
  return R"(thread_func @masked(%x: ptr<f32>, %y: ptr<f32>, %z: ptr<f32>, %N: i32) num_warps(1) shared_bytes(0) {
  %lane = lane_id : i32
  %reg = reg_index : <4xi32>
  %c4 = constant {value = 4} : i32
  %l4 = mul %lane, %c4 : i32
  %l4v = splat %l4 : <4xi32>
  %e0 = add %l4v, %reg : <4xi32>
  %sh = constant {value = )" + std::to_string(shift) + R"(} : <4xi32>
  %e = add %e0, %sh : <4xi32>
  %Nv = splat %N : <4xi32>
  %m = cmp %e, %Nv {pred = "lt"} : <4xi1>
  %xv = splat %x : <4xptr<f32>>
  %px = addptr %xv, %e : <4xptr<f32>>
  %other = constant {value = -1.0} : <4xf32>
  %v = ld_global %px, %m, %other {vec = )" + std::to_string(vec) + R"(} : <4xf32>
  %two = constant {value = 2.0} : <4xf32>
  %v2 = mul %v, %two : <4xf32>
  %yv = splat %y : <4xptr<f32>>
  %py = addptr %yv, %e : <4xptr<f32>>
  st_global %py, %v2, %m {vec = )" + std::to_string(vec) + R"(}
  %zv = splat %z : <4xptr<f32>>
  %pz = addptr %zv, %e0 : <4xptr<f32>>
  st_global %pz, %v {vec = 4}
  return
}
)";
}

void fillArange(Buffer& b) {
  for (int64_t i = 0; i < b.numel(); ++i) b.setF(i, static_cast<double>(i) + 0.5);
}

TEST(ExecGlobal, Vec4LoadsAndStoresWithMasks) {
  auto fn = parseThread(maskedKernel(0, 4));
  ASSERT_NE(fn, nullptr);
  Memory mem;
  fillArange(mem.add("x", DType::F32, {98}, false));  // ragged: lane 24's last group is half masked
  mem.add("y", DType::F32, {98}, true);
  mem.add("z", DType::F32, {128}, true);
  LaunchConfig launch = gridLaunch(1);
  test::setInt(launch, "N", 98);
  ExecResult r;
  ASSERT_EQ(runError(*fn, launch, mem, {}, &r), "");
  for (int i = 0; i < 98; ++i) ASSERT_EQ(getF32(*mem.find("y"), i), 2 * (i + 0.5f)) << i;
  for (int i = 0; i < 128; ++i) ASSERT_EQ(getF32(*mem.find("z"), i), i < 98 ? i + 0.5f : -1.0f) << i;
  // Records: the load, the masked store, the unmasked store; one 16-byte group per lane each.
  ASSERT_EQ(r.accesses.size(), 3u);
  const WarpAccess& ld = r.accesses[0];
  EXPECT_FALSE(ld.store);
  EXPECT_EQ(ld.space, MemSpace::Global);
  EXPECT_EQ(ld.bytes, 16);
  EXPECT_EQ(ld.activeMask, (1u << 25) - 1);  // lanes 0..24 touch elements < 98; lanes 25.. are fully masked
  EXPECT_EQ(ld.addr[0], mem.find("x")->base);
  EXPECT_EQ(ld.addr[24], mem.find("x")->base + 24 * 16);
  EXPECT_EQ(ld.addr[25], 0u);  // not accessed
  EXPECT_EQ(ld.loc.line, 15u);
  EXPECT_EQ(ld.instr, 13);
  EXPECT_TRUE(r.accesses[1].store);
  EXPECT_EQ(r.accesses[1].activeMask, (1u << 25) - 1);
  EXPECT_EQ(r.accesses[2].activeMask, 0xFFFFFFFFu);
}

TEST(ExecGlobal, MisalignedVectorGroupIsAnInternalError) {
  auto fn = parseThread(maskedKernel(1, 4));  // groups start at element 1, 5, ...: not 16-byte aligned
  ASSERT_NE(fn, nullptr);
  Memory mem;
  fillArange(mem.add("x", DType::F32, {200}, false));
  mem.add("y", DType::F32, {200}, true);
  mem.add("z", DType::F32, {128}, true);
  LaunchConfig launch = gridLaunch(1);
  test::setInt(launch, "N", 200);
  std::string err = runError(*fn, launch, mem);
  EXPECT_NE(err.find("15:3: misaligned vector access (internal compiler error): ld_global of 4 x f32"), std::string::npos) << err;
  EXPECT_NE(err.find("thread 0 (warp 0, lane 0)"), std::string::npos) << err;
  // The same kernel with vec 1 is fine: scalar accesses only need element alignment.
  auto ok = parseThread(maskedKernel(1, 1));
  ASSERT_NE(ok, nullptr);
  EXPECT_EQ(runError(*ok, launch, mem), "");
  EXPECT_EQ(getF32(*mem.find("y"), 1), 2 * 1.5f);
}

// Registers (0, 1) of lane l point at elements l and 32 + l: not consecutive. Lane 0's first
// address is 8-byte aligned, lane 1's is not: a GPU faults on lane 1's misaligned vector address,
// and so does the executor.
TEST(ExecGlobal, MisalignedFirstAddressOfANonConsecutiveGroupIsAnError) {
  auto fn = parseThread(R"(thread_func @strided(%x: ptr<f32>, %y: ptr<f32>) num_warps(1) shared_bytes(0) {
  %lane = lane_id : i32
  %reg = reg_index : <4xi32>
  %c32 = constant {value = 32} : <4xi32>
  %r32 = mul %reg, %c32 : <4xi32>
  %lv = splat %lane : <4xi32>
  %e = add %r32, %lv : <4xi32>
  %xv = splat %x : <4xptr<f32>>
  %px = addptr %xv, %e : <4xptr<f32>>
  %v = ld_global %px {vec = 2} : <4xf32>
  return
}
)");
  ASSERT_NE(fn, nullptr);
  Memory mem;
  mem.add("x", DType::F32, {128}, false);
  mem.add("y", DType::F32, {128}, true);
  std::string err = runError(*fn, gridLaunch(1), mem);
  EXPECT_NE(err.find("10:3: misaligned vector access"), std::string::npos) << err;
  EXPECT_NE(err.find("needs 2 consecutive addresses"), std::string::npos) << err;
  EXPECT_NE(err.find("lane 1)"), std::string::npos) << err;
}

// Both registers of a group point at element 2l (what a false tl.max_contiguous hint leads to):
// the first address is aligned, so like a GPU's ld.global.v2 the load reads elements 2l and
// 2l + 1, and a store of a group with equal addresses writes 2l and 2l + 1 too; one note per
// instruction says so. Without this model y would hold x[2l] twice (or the run would stop).
TEST(ExecGlobal, AlignedNonConsecutiveGroupAccessesConsecutiveElementsLikeAGpu) {
  auto fn = parseThread(R"(thread_func @same(%x: ptr<f32>, %y: ptr<f32>) num_warps(1) shared_bytes(0) {
  %lane = lane_id : i32
  %c2 = constant {value = 2} : i32
  %l2 = mul %lane, %c2 : i32
  %e = splat %l2 : <2xi32>
  %xv = splat %x : <2xptr<f32>>
  %px = addptr %xv, %e : <2xptr<f32>>
  %v = ld_global %px {vec = 2} : <2xf32>
  %yv = splat %y : <2xptr<f32>>
  %py = addptr %yv, %e : <2xptr<f32>>
  st_global %py, %v {vec = 2}
  return
}
)");
  ASSERT_NE(fn, nullptr);
  Memory mem;
  fillArange(mem.add("x", DType::F32, {64}, false));
  mem.add("y", DType::F32, {64}, true);
  ExecResult r;
  ASSERT_EQ(runError(*fn, gridLaunch(1), mem, {}, &r), "");
  for (int i = 0; i < 64; ++i) ASSERT_EQ(getF32(*mem.find("y"), i), getF32(*mem.find("x"), i)) << i;
  ASSERT_EQ(r.notes.size(), 2u);  // the load and the store, once each
  EXPECT_NE(r.notes[0].find("8:3: ld_global of 2 x f32 got addresses that are not consecutive"), std::string::npos)
      << r.notes[0];
  EXPECT_NE(r.notes[0].find("tl.multiple_of / tl.max_contiguous hint that is false"), std::string::npos) << r.notes[0];
  EXPECT_NE(r.notes[1].find("st_global of 2 x f32"), std::string::npos) << r.notes[1];
  // The memory model sees one 8-byte access per lane, at the first address.
  ASSERT_EQ(r.accesses.size(), 2u);
  EXPECT_EQ(r.accesses[0].addr[3], mem.find("x")->base + 3 * 8);
}

// Block b, thread t handles element b*64 + t of a 100-element buffer: block 1's thread 36 is the
// first past the end.
const char* kCopy = R"(thread_func @copy(%x: ptr<f32>, %y: ptr<f32>) num_warps(2) shared_bytes(0) {
  %tid = thread_id : i32
  %bx = block_id {axis = 0} : i32
  %c64 = constant {value = 64} : i32
  %b64 = mul %bx, %c64 : i32
  %e = add %b64, %tid : i32
  %px = addptr %x, %e : ptr<f32>
  %py = addptr %y, %e : ptr<f32>
  %one = constant {value = 1.0} : f32
  st_global %py, %one {vec = 1}
  %v = ld_global %px {vec = 1} : f32
  st_global %py, %v {vec = 1}
  return
}
)";

TEST(ExecGlobal, OutOfBoundsLoadNamesBlockThreadLaneAndLine) {
  auto fn = parseThread(kCopy);
  ASSERT_NE(fn, nullptr);
  Memory mem;
  fillArange(mem.add("x", DType::F32, {100}, false));
  mem.add("y", DType::F32, {200}, true);
  std::string err = runError(*fn, gridLaunch(2), mem);
  EXPECT_EQ(err, "11:3: load out of bounds: address " + [&] {
    char buf[32];
    std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(mem.find("x")->end()));
    return std::string(buf);
  }() + " is 0 bytes past the end of buffer 'x' (100 x f32) in block (1, 0, 0), thread 36 (warp 1, lane 4), instruction 9"
         "; this load has no mask: guard the ragged edge with mask=, e.g. load(ptr + offs, mask=offs < N)");
}

TEST(ExecGlobal, OutOfBoundsStoreWritesNothingOfThatInstruction) {
  auto fn = parseThread(kCopy);
  ASSERT_NE(fn, nullptr);
  Memory mem;
  fillArange(mem.add("x", DType::F32, {200}, false));
  mem.add("y", DType::F32, {100}, true);
  std::string err = runError(*fn, gridLaunch(2), mem);
  EXPECT_NE(err.find("10:3: store out of bounds: address"), std::string::npos) << err;
  EXPECT_NE(err.find("is 0 bytes past the end of buffer 'y' (100 x f32) in block (1, 0, 0), thread 36 (warp 1, lane 4), instruction 8"),
            std::string::npos) << err;
  const Buffer& y = *mem.find("y");
  for (int i = 0; i < 96; ++i) ASSERT_EQ(getF32(y, i), i + 0.5f) << i;  // earlier warps ran to completion
  for (int i = 96; i < 100; ++i) ASSERT_EQ(getF32(y, i), 0.0f) << i;  // lanes 0-3 of the faulting warp: not written
}

// Lane l loads element l * STRIDE (vec 1): stride 1 is coalesced, stride 32 touches a new
// 128-byte line per lane. The records say exactly which addresses each lane touched.
TEST(ExecGlobal, AccessRecordsForCoalescedAndStridedLoads) {
  for (int stride : {1, 32}) {
    auto fn = parseThread(R"(thread_func @strided(%x: ptr<f32>, %S: i32) num_warps(2) shared_bytes(0) {
  %tid = thread_id : i32
  %e = mul %tid, %S : i32
  %px = addptr %x, %e : ptr<f32>
  %v = ld_global %px {vec = 1} : f32
  return
}
)");
    ASSERT_NE(fn, nullptr);
    Memory mem;
    mem.add("x", DType::F32, {64 * 32}, false);
    LaunchConfig launch = gridLaunch(3);
    test::setInt(launch, "S", stride);
    ExecResult r;
    ASSERT_EQ(runError(*fn, launch, mem, {}, &r), "");
    ASSERT_EQ(r.accesses.size(), 6u);  // 3 blocks x 2 warps x 1 group
    for (size_t k = 0; k < r.accesses.size(); ++k) {
      const WarpAccess& a = r.accesses[k];
      EXPECT_EQ(a.block, static_cast<int64_t>(k / 2));
      EXPECT_EQ(a.warp, static_cast<int32_t>(k % 2));
      EXPECT_EQ(a.instr, 3);
      EXPECT_EQ(a.loc.line, 5u);
      EXPECT_EQ(a.bytes, 4);
      EXPECT_EQ(a.activeMask, 0xFFFFFFFFu);
      for (int l = 0; l < 32; ++l)
        ASSERT_EQ(a.addr[l], mem.find("x")->base + 4u * stride * (a.warp * 32 + l)) << "stride " << stride << " lane " << l;
    }
    // Recording off: nothing recorded, same stats.
    ExecOptions quiet;
    quiet.recordAccesses = false;
    ExecResult q;
    ASSERT_EQ(runError(*fn, launch, mem, quiet, &q), "");
    EXPECT_TRUE(q.accesses.empty());
    EXPECT_EQ(q.stats.warpInstructions, r.stats.warpInstructions);
  }
}

TEST(ExecGlobal, FullyMaskedGroupsAreNotRecorded) {
  auto fn = parseThread(maskedKernel(0, 2));
  ASSERT_NE(fn, nullptr);
  Memory mem;
  fillArange(mem.add("x", DType::F32, {6}, false));
  mem.add("y", DType::F32, {6}, true);
  mem.add("z", DType::F32, {128}, true);
  LaunchConfig launch = gridLaunch(1);
  test::setInt(launch, "N", 6);
  ExecResult r;
  ASSERT_EQ(runError(*fn, launch, mem, {}, &r), "");
  // Load: group 0 (elements 0,1 of lane 0 / 4,5 of lane 1) and group 1 (elements 2,3 of lane 0 only).
  ASSERT_GE(r.accesses.size(), 2u);
  EXPECT_EQ(r.accesses[0].activeMask, 0x3u);
  EXPECT_EQ(r.accesses[1].activeMask, 0x1u);
  EXPECT_EQ(r.accesses[1].addr[0], mem.find("x")->base + 8);
  EXPECT_EQ(r.accesses[0].bytes, 8);
  for (int i = 0; i < 6; ++i) EXPECT_EQ(getF32(*mem.find("y"), i), 2 * (i + 0.5f));
}

}  // namespace
}  // namespace tl
