// Divergence and warps: an if with a per-lane condition (both branches run, results merge per
// lane), per-lane loop trip counts, a loop nested in a divergent if, shfl_xor butterfly sums,
// shfl_idx broadcasts, and a shuffle reading an inactive lane (an error).
#include <gtest/gtest.h>

#include "SimTestUtil.h"

namespace tl {
namespace {

using test::getF32;
using test::getI32;
using test::gridLaunch;
using test::parseThread;
using test::runError;

TEST(ExecControl, DivergentIfMergesResultsPerLane) {
  auto fn = parseThread(R"(thread_func @branch(%out: ptr<i32>) num_warps(1) shared_bytes(0) {
  %lane = lane_id : i32
  %c7 = constant {value = 7} : i32
  %c = cmp %lane, %c7 {pred = "lt"} : i1
  %r, %s = if %c : i32, i32 {
    %c10 = constant {value = 10} : i32
    %a = mul %lane, %c10 : i32
    yield %a, %c7
  } else {
    %c0 = constant {value = 0} : i32
    %b = sub %c0, %lane : i32
    yield %b, %lane
  }
  %t = add %r, %s : i32
  %p = addptr %out, %lane : ptr<i32>
  st_global %p, %t {vec = 1}
  return
}
)");
  ASSERT_NE(fn, nullptr);
  Memory mem;
  mem.add("out", DType::I32, {32}, true);
  ExecResult r;
  ASSERT_EQ(runError(*fn, gridLaunch(1), mem, {}, &r), "");
  for (int l = 0; l < 32; ++l) EXPECT_EQ(getI32(*mem.find("out"), l), l < 7 ? 10 * l + 7 : 0) << l;
  EXPECT_EQ(r.stats.divergentBranches, 1);
}

TEST(ExecControl, UniformIfRunsOneRegion) {
  auto fn = parseThread(R"(thread_func @uniform(%out: ptr<i32>) num_warps(2) shared_bytes(0) {
  %tid = thread_id : i32
  %warp = warp_id : i32
  %c0 = constant {value = 0} : i32
  %c = cmp %warp, %c0 {pred = "eq"} : i1
  %r = if %c : i32 {
    %c5 = constant {value = 5} : i32
    yield %c5
  } else {
    %c6 = constant {value = 6} : i32
    yield %c6
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
  for (int t = 0; t < 64; ++t) EXPECT_EQ(getI32(*mem.find("out"), t), t < 32 ? 5 : 6) << t;
  EXPECT_EQ(r.stats.divergentBranches, 0);
  // Per warp: 4 ops, if, constant, (yield not counted), addptr, st_global, return = 9.
  EXPECT_EQ(r.stats.warpInstructions, 2 * 9);
}

// Lane l runs `for i = l % 5 to l step 1` summing i (per-lane bounds: lanes 0..4 never iterate),
// and inside the loop a divergent if adds 100 on odd i.
TEST(ExecControl, PerLaneLoopTripCounts) {
  auto fn = parseThread(R"(thread_func @loop(%out: ptr<i32>) num_warps(1) shared_bytes(0) {
  %lane = lane_id : i32
  %c5 = constant {value = 5} : i32
  %lo = rem %lane, %c5 : i32
  %c1 = constant {value = 1} : i32
  %zero = constant {value = 0} : i32
  %sum, %n = for %i = %lo to %lane step %c1 iter_args(%acc = %zero, %cnt = %zero) : i32, i32 {
    %a = add %acc, %i : i32
    %odd = and %i, %c1 : i32
    %isodd = cmp %odd, %c1 {pred = "eq"} : i1
    %b = if %isodd : i32 {
      %c100 = constant {value = 100} : i32
      %x = add %a, %c100 : i32
      yield %x
    } else {
      yield %a
    }
    %cnt1 = add %cnt, %c1 : i32
    yield %b, %cnt1
  }
  %c1000 = constant {value = 1000} : i32
  %hi = mul %n, %c1000 : i32
  %r = add %sum, %hi : i32
  %p = addptr %out, %lane : ptr<i32>
  st_global %p, %r {vec = 1}
  return
}
)");
  ASSERT_NE(fn, nullptr);
  Memory mem;
  mem.add("out", DType::I32, {32}, true);
  ExecResult r;
  ASSERT_EQ(runError(*fn, gridLaunch(1), mem, {}, &r), "");
  for (int l = 0; l < 32; ++l) {
    int sum = 0, n = 0;
    for (int i = l % 5; i < l; ++i, ++n) sum += i + (i % 2 ? 100 : 0);
    EXPECT_EQ(getI32(*mem.find("out"), l), sum + 1000 * n) << "lane " << l;
  }
  EXPECT_GE(r.stats.divergentBranches, 2);  // the loop, and the ifs inside it
}

TEST(ExecControl, NegativeStepAndZeroStep) {
  const char* text = R"(thread_func @down(%out: ptr<i32>, %S: i32) num_warps(1) shared_bytes(0) {
  %lane = lane_id : i32
  %zero = constant {value = 0} : i32
  %c1 = constant {value = 1} : i32
  %r = for %i = %lane to %zero step %S iter_args(%acc = %zero) : i32 {
    %a = add %acc, %c1 : i32
    yield %a
  }
  %p = addptr %out, %lane : ptr<i32>
  st_global %p, %r {vec = 1}
  return
}
)";
  auto fn = parseThread(text);
  ASSERT_NE(fn, nullptr);
  Memory mem;
  mem.add("out", DType::I32, {32}, true);
  LaunchConfig launch = gridLaunch(1);
  test::setInt(launch, "S", -3);
  ASSERT_EQ(runError(*fn, launch, mem), "");
  for (int l = 0; l < 32; ++l) EXPECT_EQ(getI32(*mem.find("out"), l), (l + 2) / 3) << l;  // l, l-3, ... > 0
  test::setInt(launch, "S", 0);
  EXPECT_EQ(runError(*fn, launch, mem), "5:3: range() step is zero in block (0, 0, 0), thread 0 (warp 0, lane 0), instruction 3");
}

// Butterfly: after offsets 16, 8, 4, 2, 1 every lane holds the sum of all 32 lanes' values.
TEST(ExecWarp, ShflXorButterflySum) {
  auto fn = parseThread(R"(thread_func @bfly(%out: ptr<f32>) num_warps(2) shared_bytes(0) {
  %tid = thread_id : i32
  %lane = lane_id : i32
  %c1 = constant {value = 1} : i32
  %l1 = add %lane, %c1 : i32
  %v0 = convert %l1 : f32
  %s16 = shfl_xor %v0 {offset = 16} : f32
  %v1 = add %v0, %s16 : f32
  %s8 = shfl_xor %v1 {offset = 8} : f32
  %v2 = add %v1, %s8 : f32
  %s4 = shfl_xor %v2 {offset = 4} : f32
  %v3 = add %v2, %s4 : f32
  %s2 = shfl_xor %v3 {offset = 2} : f32
  %v4 = add %v3, %s2 : f32
  %s1 = shfl_xor %v4 {offset = 1} : f32
  %v5 = add %v4, %s1 : f32
  %c3 = constant {value = 3} : i32
  %src = and %tid, %c3 : i32
  %b = shfl_idx %l1, %src : i32
  %bf = convert %b : f32
  %r = add %v5, %bf : f32
  %p = addptr %out, %tid : ptr<f32>
  st_global %p, %r {vec = 1}
  return
}
)");
  ASSERT_NE(fn, nullptr);
  Memory mem;
  mem.add("out", DType::F32, {64}, true);
  ASSERT_EQ(runError(*fn, gridLaunch(1), mem), "");
  for (int t = 0; t < 64; ++t) EXPECT_EQ(getF32(*mem.find("out"), t), 528.0f + static_cast<float>((t & 3) + 1)) << t;
}

TEST(ExecWarp, ShuffleFromAnInactiveLaneIsAnError) {
  auto fn = parseThread(R"(thread_func @bad(%out: ptr<i32>) num_warps(1) shared_bytes(0) {
  %lane = lane_id : i32
  %c7 = constant {value = 7} : i32
  %c = cmp %lane, %c7 {pred = "lt"} : i1
  %r = if %c : i32 {
    %s = shfl_xor %lane {offset = 8} : i32
    yield %s
  } else {
    yield %lane
  }
  return
}
)");
  ASSERT_NE(fn, nullptr);
  Memory mem;
  mem.add("out", DType::I32, {32}, true);
  EXPECT_EQ(runError(*fn, gridLaunch(1), mem),
            "6:5: shfl_xor reads lane 8, which is inactive (active lanes: 0-6) in block (0, 0, 0), thread 0 (warp 0, lane 0), instruction 4");
}

}  // namespace
}  // namespace tl
