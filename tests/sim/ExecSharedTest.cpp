// Shared memory, barriers and races: a store/barrier/load exchange across warps; the same
// without the barrier (a race naming both lines); write-write races; same-warp accesses (never a
// race); barriers in divergent code, barriers a returning warp never reaches, and warps at
// different barriers (errors, never hangs); shared-memory bounds; and a hand-lowered row softmax
// (reduction = in-thread combine + butterfly shuffles + shared memory with barriers) checked
// against a CPU reference at the default launch, with its run time, and with a barrier removed.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <random>

#include "SimTestUtil.h"

namespace tl {
namespace {

using test::getF32;
using test::getI32;
using test::gridLaunch;
using test::parseThread;
using test::runError;

// Thread t writes t to shared word t, then (after BARRIER) reads word (t + 32) % 128.
std::string exchangeKernel(const std::string& barrier) {
  return R"(thread_func @exchange(%out: ptr<i32>) num_warps(4) shared_bytes(512) {
  %tid = thread_id : i32
  %c4 = constant {value = 4} : i32
  %a = mul %tid, %c4 : i32
  st_shared %a, %tid {vec = 1}
  )" + barrier + R"(
  %c32 = constant {value = 32} : i32
  %c127 = constant {value = 127} : i32
  %t1 = add %tid, %c32 : i32
  %t2 = and %t1, %c127 : i32
  %b = mul %t2, %c4 : i32
  %v = ld_shared %b {vec = 1, dtype = "i32"} : i32
  %p = addptr %out, %tid : ptr<i32>
  st_global %p, %v {vec = 1}
  return
}
)";
}

TEST(ExecShared, StoreBarrierLoadAcrossWarps) {
  auto fn = parseThread(exchangeKernel("barrier"));
  ASSERT_NE(fn, nullptr);
  Memory mem;
  mem.add("out", DType::I32, {128}, true);
  ExecResult r;
  ASSERT_EQ(runError(*fn, gridLaunch(2), mem, {}, &r), "");
  for (int t = 0; t < 128; ++t) EXPECT_EQ(getI32(*mem.find("out"), t), (t + 32) % 128) << t;
  EXPECT_EQ(r.stats.barriers, 2);  // one release per block
  // Shared accesses are recorded with byte offsets as addresses.
  int shared = 0;
  for (const WarpAccess& a : r.accesses)
    if (a.space == MemSpace::Shared) {
      ++shared;
      EXPECT_EQ(a.bytes, 4);
      EXPECT_EQ(a.addr[1] - a.addr[0], 4u);
    }
  EXPECT_EQ(shared, 2 * 4 * 2);  // blocks x warps x (store, load)
}

TEST(ExecShared, MissingBarrierIsARaceNamingBothLines) {
  auto fn = parseThread(exchangeKernel(""));
  ASSERT_NE(fn, nullptr);
  Memory mem;
  mem.add("out", DType::I32, {128}, true);
  // Warp 0 runs first: writes words 0-31, reads words 32-63 (not written yet), returns. Then
  // warp 1 writes word 32: warp 0's thread 0 read it in the same epoch.
  EXPECT_EQ(runError(*fn, gridLaunch(1), mem),
            "5:3: shared-memory race on byte 0x80: thread 0 (warp 0, lane 0) read it at 12:3 (instruction 9, ld_shared) "
            "and thread 32 (warp 1, lane 0) wrote it at 5:3 (instruction 3, st_shared) with no barrier between, in block (0, 0, 0)");
  // With detection off the run completes (and reads stale values: the race is real).
  ExecOptions off;
  off.detectRaces = false;
  EXPECT_EQ(runError(*fn, gridLaunch(1), mem, off), "");
  EXPECT_EQ(getI32(*mem.find("out"), 0), -1);  // warp 0 read word 32 before warp 1 wrote it: poison (0xFF bytes)
}

TEST(ExecShared, WriteWriteRaceEvenWithEqualValues) {
  auto fn = parseThread(R"(thread_func @ww(%out: ptr<i32>) num_warps(2) shared_bytes(16) {
  %lane = lane_id : i32
  %c4 = constant {value = 4} : i32
  %c3 = constant {value = 3} : i32
  %w = and %lane, %c3 : i32
  %a = mul %w, %c4 : i32
  %one = constant {value = 1} : i32
  st_shared %a, %one {vec = 1}
  return
}
)");
  ASSERT_NE(fn, nullptr);
  Memory mem;
  mem.add("out", DType::I32, {1}, true);
  // Lanes of warp 0 writing the same word are ordered by lockstep; warp 1's write races.
  EXPECT_EQ(runError(*fn, gridLaunch(1), mem),
            "8:3: shared-memory race on byte 0x0: thread 28 (warp 0, lane 28) wrote it at 8:3 (instruction 6, st_shared) "
            "and thread 32 (warp 1, lane 0) wrote it at 8:3 (instruction 6, st_shared) with no barrier between, in block (0, 0, 0)");
}

TEST(ExecShared, SameWarpAccessesAndSeparateBlocksDoNotRace) {
  // One warp writes then reads its neighbours' words with no barrier: lockstep orders them.
  auto fn = parseThread(R"(thread_func @oneWarp(%out: ptr<i32>) num_warps(2) shared_bytes(256) {
  %tid = thread_id : i32
  %c4 = constant {value = 4} : i32
  %a = mul %tid, %c4 : i32
  st_shared %a, %tid {vec = 1}
  %c1 = constant {value = 1} : i32
  %lane = lane_id : i32
  %warp = warp_id : i32
  %l1 = add %lane, %c1 : i32
  %c31 = constant {value = 31} : i32
  %l2 = and %l1, %c31 : i32
  %c32 = constant {value = 32} : i32
  %wb = mul %warp, %c32 : i32
  %n = add %wb, %l2 : i32
  %b = mul %n, %c4 : i32
  %v = ld_shared %b {vec = 1, dtype = "i32"} : i32
  %p = addptr %out, %tid : ptr<i32>
  st_global %p, %v {vec = 1}
  return
}
)");
  ASSERT_NE(fn, nullptr);
  Memory mem;
  mem.add("out", DType::I32, {64}, true);
  ASSERT_EQ(runError(*fn, gridLaunch(3), mem), "");
  for (int t = 0; t < 64; ++t) EXPECT_EQ(getI32(*mem.find("out"), t), (t / 32) * 32 + (t % 32 + 1) % 32) << t;
}

TEST(ExecShared, BarrierInDivergentCodeIsAnError) {
  auto fn = parseThread(R"(thread_func @divbar(%out: ptr<i32>) num_warps(2) shared_bytes(0) {
  %lane = lane_id : i32
  %c7 = constant {value = 7} : i32
  %c = cmp %lane, %c7 {pred = "lt"} : i1
  %r = if %c : i32 {
    barrier
    yield %lane
  } else {
    yield %c7
  }
  return
}
)");
  ASSERT_NE(fn, nullptr);
  Memory mem;
  mem.add("out", DType::I32, {1}, true);
  EXPECT_EQ(runError(*fn, gridLaunch(1), mem),
            "6:5: barrier at 6:5 reached by warp 0 with only lanes 0-6 active, in block (0, 0, 0) (a barrier in "
            "divergent code: every thread of the block must reach it)");
}

TEST(ExecShared, BarrierNotReachedByAReturningWarpIsAnError) {
  auto fn = parseThread(R"(thread_func @skip(%out: ptr<i32>) num_warps(4) shared_bytes(0) {
  %warp = warp_id : i32
  %c0 = constant {value = 0} : i32
  %c = cmp %warp, %c0 {pred = "eq"} : i1
  %r = if %c : i32 {
    barrier
    yield %warp
  } else {
    yield %c0
  }
  return
}
)");
  ASSERT_NE(fn, nullptr);
  Memory mem;
  mem.add("out", DType::I32, {1}, true);
  EXPECT_EQ(runError(*fn, gridLaunch(1), mem),
            "6:5: barrier at 6:5 not reached by warp 1: it returned while warp 0 waits there, in block (0, 0, 0) "
            "(every thread of a block must reach every barrier)");
}

TEST(ExecShared, WarpsAtDifferentBarriersIsAnError) {
  auto fn = parseThread(R"(thread_func @two(%out: ptr<i32>) num_warps(2) shared_bytes(0) {
  %warp = warp_id : i32
  %c0 = constant {value = 0} : i32
  %c = cmp %warp, %c0 {pred = "eq"} : i1
  %r = if %c : i32 {
    barrier
    yield %warp
  } else {
    barrier
    yield %c0
  }
  return
}
)");
  ASSERT_NE(fn, nullptr);
  Memory mem;
  mem.add("out", DType::I32, {1}, true);
  EXPECT_EQ(runError(*fn, gridLaunch(1), mem),
            "9:5: warps wait at different barriers in block (0, 0, 0): warp 0 at 6:5 (instruction 4), warp 1 at 9:5 (instruction 6)");
}

TEST(ExecShared, BarrierInAUniformLoopIsFine) {
  // Every warp runs 3 iterations, each with two barriers: 6 releases, shared slots reused safely.
  auto fn = parseThread(R"(thread_func @loopbar(%out: ptr<i32>) num_warps(2) shared_bytes(256) {
  %tid = thread_id : i32
  %c0 = constant {value = 0} : i32
  %c1 = constant {value = 1} : i32
  %c3 = constant {value = 3} : i32
  %c4 = constant {value = 4} : i32
  %c63 = constant {value = 63} : i32
  %a = mul %tid, %c4 : i32
  %rev = sub %c63, %tid : i32
  %b = mul %rev, %c4 : i32
  %r = for %i = %c0 to %c3 step %c1 iter_args(%acc = %tid) : i32 {
    st_shared %a, %acc {vec = 1}
    barrier
    %v = ld_shared %b {vec = 1, dtype = "i32"} : i32
    barrier
    %n = add %v, %i : i32
    yield %n
  }
  %p = addptr %out, %tid : ptr<i32>
  st_global %p, %r {vec = 1}
  return
}
)");
  ASSERT_NE(fn, nullptr);
  Memory mem;
  mem.add("out", DType::I32, {64}, true);
  ExecResult r;
  ASSERT_EQ(runError(*fn, gridLaunch(1), mem, {}, &r), "");
  EXPECT_EQ(r.stats.barriers, 6);
  // acc0 = t; acc1 = (63-t) + 0; acc2 = t + 1; acc3 = (63-t) + 1 + 2.
  for (int t = 0; t < 64; ++t) EXPECT_EQ(getI32(*mem.find("out"), t), 63 - t + 3) << t;
}

TEST(ExecShared, OutOfBoundsSharedAccessIsAnError) {
  auto fn = parseThread(R"(thread_func @oob(%out: ptr<i32>) num_warps(1) shared_bytes(64) {
  %tid = thread_id : i32
  %c4 = constant {value = 4} : i32
  %a = mul %tid, %c4 : i32
  st_shared %a, %tid {vec = 1}
  return
}
)");
  ASSERT_NE(fn, nullptr);
  Memory mem;
  mem.add("out", DType::I32, {1}, true);
  EXPECT_EQ(runError(*fn, gridLaunch(1), mem),
            "5:3: shared-memory store out of bounds: byte offset 64 (4 bytes) is outside the block's 64 bytes of shared "
            "memory in block (0, 0, 0), thread 16 (warp 0, lane 16), instruction 3");
}

TEST(ExecShared, MisalignedSharedAccessShowsTheSignedOffset) {
  auto fn = parseThread(R"(thread_func @neg(%out: ptr<i32>) num_warps(1) shared_bytes(64) {
  %tid = thread_id : i32
  %c4 = constant {value = 4} : i32
  %a = mul %tid, %c4 : i32
  %m1 = constant {value = -1} : i32
  %b = add %a, %m1 : i32
  st_shared %b, %tid {vec = 1}
  return
}
)");
  ASSERT_NE(fn, nullptr);
  Memory mem;
  mem.add("out", DType::I32, {1}, true);
  EXPECT_EQ(runError(*fn, gridLaunch(1), mem),
            "7:3: misaligned access (internal compiler error): st_shared of i32 at shared byte offset -1, which is not a "
            "multiple of 4 in block (0, 0, 0), thread 0 (warp 0, lane 0), instruction 5, register 0");
}

// ---------------------------------------------------------------------------------------------
// Row softmax, lowered by hand the way the thread stage lowers it: BLOCK = 1024 columns over 4
// warps, 8 registers per thread (column = (reg / 4) * 512 + thread * 4 + reg % 4), max and sum
// reduced in-thread (reg_reduce), across lanes (shfl_xor butterfly), across warps (lane 0 of
// each warp writes shared memory, barrier, everyone reads the 4 partials).
std::string softmaxKernel(int vec, bool firstBarrier) {
  std::string v = std::to_string(vec);
  return R"(thread_func @softmax(%x_ptr: ptr<f32>, %out_ptr: ptr<f32>, %N: i32) num_warps(4) shared_bytes(32) {
  %row = block_id {axis = 0} : i32
  %tid = thread_id : i32
  %lane = lane_id : i32
  %warp = warp_id : i32
  %reg = reg_index : <8xi32>
  %c4v = constant {value = 4} : <8xi32>
  %c512v = constant {value = 512} : <8xi32>
  %hi = div %reg, %c4v : <8xi32>
  %lo = rem %reg, %c4v : <8xi32>
  %hi512 = mul %hi, %c512v : <8xi32>
  %c4 = constant {value = 4} : i32
  %t4 = mul %tid, %c4 : i32
  %t4v = splat %t4 : <8xi32>
  %col0 = add %hi512, %t4v : <8xi32>
  %col = add %col0, %lo : <8xi32>
  %Nv = splat %N : <8xi32>
  %mask = cmp %col, %Nv {pred = "lt"} : <8xi1>
  %rowoff = mul %row, %N : i32
  %xrow = addptr %x_ptr, %rowoff : ptr<f32>
  %xrowv = splat %xrow : <8xptr<f32>>
  %xp = addptr %xrowv, %col : <8xptr<f32>>
  %ninf = constant {value = -inf} : <8xf32>
  %x = ld_global %xp, %mask, %ninf {vec = )" + v + R"(} : <8xf32>
  %m0 = reg_reduce %x {kind = "max", group = 8} : f32
  %a16 = shfl_xor %m0 {offset = 16} : f32
  %m1 = maximum %m0, %a16 : f32
  %a8 = shfl_xor %m1 {offset = 8} : f32
  %m2 = maximum %m1, %a8 : f32
  %a4 = shfl_xor %m2 {offset = 4} : f32
  %m3 = maximum %m2, %a4 : f32
  %a2 = shfl_xor %m3 {offset = 2} : f32
  %m4 = maximum %m3, %a2 : f32
  %a1 = shfl_xor %m4 {offset = 1} : f32
  %m5 = maximum %m4, %a1 : f32
  %c0 = constant {value = 0} : i32
  %is0 = cmp %lane, %c0 {pred = "eq"} : i1
  %w4 = mul %warp, %c4 : i32
  st_shared %w4, %m5, %is0 {vec = 1}
  )" + (firstBarrier ? "barrier" : "") + R"(
  %r4 = reg_index : <4xi32>
  %c4v4 = constant {value = 4} : <4xi32>
  %sa = mul %r4, %c4v4 : <4xi32>
  %pm = ld_shared %sa {vec = 4, dtype = "f32"} : <4xf32>
  %m = reg_reduce %pm {kind = "max", group = 4} : f32
  %mv = splat %m : <8xf32>
  %xs = sub %x, %mv : <8xf32>
  %e = exp %xs : <8xf32>
  %s0 = reg_reduce %e {kind = "sum", group = 8} : f32
  %b16 = shfl_xor %s0 {offset = 16} : f32
  %s1 = add %s0, %b16 : f32
  %b8 = shfl_xor %s1 {offset = 8} : f32
  %s2 = add %s1, %b8 : f32
  %b4 = shfl_xor %s2 {offset = 4} : f32
  %s3 = add %s2, %b4 : f32
  %b2 = shfl_xor %s3 {offset = 2} : f32
  %s4 = add %s3, %b2 : f32
  %b1 = shfl_xor %s4 {offset = 1} : f32
  %s5 = add %s4, %b1 : f32
  %c16 = constant {value = 16} : i32
  %w4b = add %w4, %c16 : i32
  st_shared %w4b, %s5, %is0 {vec = 1}
  barrier
  %c16v = constant {value = 16} : <4xi32>
  %sb = add %sa, %c16v : <4xi32>
  %ps = ld_shared %sb {vec = 4, dtype = "f32"} : <4xf32>
  %s = reg_reduce %ps {kind = "sum", group = 4} : f32
  %sv = splat %s : <8xf32>
  %y = div %e, %sv : <8xf32>
  %orow = addptr %out_ptr, %rowoff : ptr<f32>
  %orowv = splat %orow : <8xptr<f32>>
  %op = addptr %orowv, %col : <8xptr<f32>>
  st_global %op, %y, %mask {vec = )" + v + R"(}
  return
}
)";
}

// Fills x with seeded normals, runs, and checks every row against a CPU softmax.
void checkSoftmax(const Function& fn, int64_t M, int64_t N, ExecResult* result, double* seconds) {
  Memory mem;
  Buffer& x = mem.add("x_ptr", DType::F32, {M, N}, false);
  std::mt19937 rng(1);
  std::normal_distribution<float> normal;
  for (int64_t i = 0; i < M * N; ++i) x.setF(i, normal(rng));
  mem.add("out_ptr", DType::F32, {M, N}, true);
  LaunchConfig launch = gridLaunch(M);
  test::setInt(launch, "N", N);
  auto t0 = std::chrono::steady_clock::now();
  ASSERT_EQ(runError(fn, launch, mem, {}, result), "");
  *seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const Buffer& xb = *mem.find("x_ptr");
  const Buffer& out = *mem.find("out_ptr");
  for (int64_t r = 0; r < M; ++r) {
    float mx = -INFINITY;
    for (int64_t c = 0; c < N; ++c) mx = std::max(mx, getF32(xb, r * N + c));
    double sum = 0;
    for (int64_t c = 0; c < N; ++c) sum += std::exp(static_cast<double>(getF32(xb, r * N + c)) - mx);
    for (int64_t c = 0; c < N; ++c) {
      double want = std::exp(static_cast<double>(getF32(xb, r * N + c)) - mx) / sum;
      ASSERT_NEAR(getF32(out, r * N + c), want, 1e-6 + 1e-5 * want) << "row " << r << " col " << c;
    }
  }
}

TEST(ExecSoftmax, DefaultLaunchMatchesReferenceQuickly) {
  // kernels/softmax.tl's default launch: 256 rows of 781 (rows are not 16-byte aligned: vec 1).
  auto fn = parseThread(softmaxKernel(1, true));
  ASSERT_NE(fn, nullptr);
  ExecResult r;
  double seconds = 0;
  checkSoftmax(*fn, 256, 781, &r, &seconds);
  EXPECT_EQ(r.stats.blocks, 256);
  EXPECT_EQ(r.stats.barriers, 256 * 2);
  // Per block: 4 warps x (8 global load groups + 8 store groups + 2 shared stores + 2 shared loads),
  // minus groups no lane touched (columns >= 781 in the last warp).
  EXPECT_GT(r.accesses.size(), 256u * 4 * 16);
  std::printf("softmax 256 x 781, 4 warps: %.3f s, %lld warp instructions, %zu access records\n", seconds,
              static_cast<long long>(r.stats.warpInstructions), r.accesses.size());
  EXPECT_LT(seconds, 2.0);  // well under a second in practice; generous for a loaded CI machine
}

TEST(ExecSoftmax, SixteenByteVectorAccessesWhenRowsAreAligned) {
  auto fn = parseThread(softmaxKernel(4, true));
  ASSERT_NE(fn, nullptr);
  ExecResult r;
  double seconds = 0;
  checkSoftmax(*fn, 8, 1000, &r, &seconds);
  int wide = 0;
  for (const WarpAccess& a : r.accesses)
    if (a.space == MemSpace::Global) {
      EXPECT_EQ(a.bytes, 16);
      ++wide;
    }
  EXPECT_EQ(wide, 8 * 4 * 2 * 2);  // rows x warps x groups x (load, store): every group has a column < 1000
  // At N = 781 the same vec-4 code is misaligned on odd rows: the executor says so.
  std::string err;
  {
    Memory mem;
    mem.add("x_ptr", DType::F32, {4, 781}, false);
    mem.add("out_ptr", DType::F32, {4, 781}, true);
    LaunchConfig launch = gridLaunch(4);
    test::setInt(launch, "N", 781);
    err = runError(*fn, launch, mem);
  }
  EXPECT_NE(err.find("misaligned vector access (internal compiler error)"), std::string::npos) << err;
  EXPECT_NE(err.find("block (1, 0, 0)"), std::string::npos) << err;
}

TEST(ExecSoftmax, RemovingTheFirstBarrierIsARace) {
  auto fn = parseThread(softmaxKernel(1, false));
  ASSERT_NE(fn, nullptr);
  Memory mem;
  mem.add("x_ptr", DType::F32, {2, 781}, false);
  mem.add("out_ptr", DType::F32, {2, 781}, true);
  LaunchConfig launch = gridLaunch(2);
  test::setInt(launch, "N", 781);
  // Warp 0 stores its partial max at byte 0, reads all 4 partials and waits at the second
  // barrier; warp 1's partial-max store (line 39) hits byte 4, which warp 0 read at line 44.
  EXPECT_EQ(runError(*fn, launch, mem),
            "39:3: shared-memory race on byte 0x4: thread 0 (warp 0, lane 0) read it at 44:3 (instruction 41, ld_shared) "
            "and thread 32 (warp 1, lane 0) wrote it at 39:3 (instruction 37, st_shared) with no barrier between, in block (0, 0, 0)");
}

}  // namespace
}  // namespace tl
