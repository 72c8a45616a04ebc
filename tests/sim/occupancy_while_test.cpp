// The register estimate (sim/Occupancy.cpp) treats a while loop as it treats a for loop: a value
// from outside the loop that the loop reads is live through the whole loop (every iteration
// reads it again), and the loop's carried values (the arguments of its cond and body regions)
// live across the loop.
#include <gtest/gtest.h>

#include "SimTestUtil.h"
#include "ir/Parser.h"
#include "sim/Occupancy.h"

namespace tl {
namespace {

// %big2 (16 f32) is read once, early in the body; %t2 (16) comes later in the body.
const char* kWhile = R"(thread_func @loop(%out: ptr<f32>, %n: i32) num_warps(1) shared_bytes(0) {
  %lane = lane_id : i32 loc(2:3)
  %f = convert %lane : f32 loc(3:3)
  %big = splat %f : <16xf32> loc(4:3)
  %big2 = add %big, %big : <16xf32> loc(5:3)
  %c0 = constant {value = 0} : i32 loc(6:3)
  %c1 = constant {value = 1} : i32 loc(7:3)
  %z = constant {value = 0.0} : f32 loc(8:3)
  %s, %j = while iter_args(%acc = %z, %i = %c0) : f32, i32 {
    %go = cmp %i, %n {pred = "lt"} : i1 loc(10:3)
    condition %go loc(11:3)
  } do (%acc2, %i2) {
    %u = splat %acc2 : <16xf32> loc(13:3)
    %t = mul %big2, %u : <16xf32> loc(14:3)
    %r = reg_reduce %t {kind = "sum", group = 16} : f32 loc(15:3)
    %w = splat %r : <16xf32> loc(16:3)
    %t2 = mul %w, %w : <16xf32> loc(17:3)
    %r2 = reg_reduce %t2 {kind = "sum", group = 16} : f32 loc(18:3)
    %acc1 = add %acc2, %r2 : f32 loc(19:3)
    %i3 = add %i2, %c1 : i32 loc(20:3)
    yield %acc1, %i3 loc(21:3)
  }
  %p = addptr %out, %lane : ptr<f32> loc(23:3)
  st_global %p, %s {vec = 1} loc(24:3)
  return loc(25:3)
}
)";

TEST(RegisterEstimate, WhileLoopsKeepTheirInputsAndCarriedValuesLive) {
  // (Locations written out: SimTestUtil's annotateLocs does not know a while's `} do {`.)
  DiagEngine diag;
  auto fn = parseFunction(kWhile, diag);
  ASSERT_TRUE(fn && !diag.hasErrors()) << diag.renderAll();
  RegisterEstimate e = estimateRegisters(*fn);
  // Just after the first mul (line 14): %big2 16 and %t 16, the carried values of both regions
  // (%acc, %i, %acc2, %i2: 4), %n (read by every condition) 1 and %lane (used after the loop) 1.
  // The second mul (line 17) ties with it: %big2 is still live there, since the next iteration
  // reads it. (With no loop rule for while, %big2 would die at the first mul and the peak
  // would be one 16-wide value and a few scalars.)
  EXPECT_EQ(e.peakLiveRegisters, 16 + 16 + 4 + 1 + 1);
  EXPECT_EQ(e.peakLoc.line, 14);
}

}  // namespace
}  // namespace tl
