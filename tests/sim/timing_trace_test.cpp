// The executor's warp traces (ExecOptions::traceWarps) and their conversion to timed
// instructions (buildTimingInput): a loop's body appears once per iteration, memory entries
// point at their access records, and the dependencies follow the thread IR's def-use — through
// loop-carried values, but not between independent loads.
#include <gtest/gtest.h>

#include "SimTestUtil.h"
#include "memmodel_util.h"
#include "sim/Timing.h"

namespace tl::test {
namespace {

// Each thread sums x[lane + 32 i] for i in 0..3: four loads, each followed by an add that
// needs it and the previous sum.
const char* kLoopSum = R"(thread_func @loopsum(%x: ptr<f32>, %out: ptr<f32>) num_warps(2) shared_bytes(0) {
  %lane = lane_id : i32
  %c0 = constant {value = 0} : i32
  %c4 = constant {value = 4} : i32
  %c1 = constant {value = 1} : i32
  %c32 = constant {value = 32} : i32
  %zero = constant {value = 0.0} : f32
  %sum = for %i = %c0 to %c4 step %c1 iter_args(%acc = %zero) : f32 {
    %o = mul %i, %c32 : i32
    %idx = add %o, %lane : i32
    %p = addptr %x, %idx : ptr<f32>
    %v = ld_global %p {vec = 1} : f32
    %a = add %acc, %v : f32
    yield %a
  }
  %q = addptr %out, %lane : ptr<f32>
  st_global %q, %sum {vec = 1}
  barrier
  return
}
)";

TEST(TimingTrace, LoopBodyOncePerIterationWithItsAccesses) {
  auto fn = parseThread(kLoopSum);
  ASSERT_NE(fn, nullptr);
  Memory mem;
  mem.add("x", DType::F32, {128}, false);
  mem.add("out", DType::F32, {32}, true);
  ExecOptions eo;
  eo.traceWarps = true;
  ExecResult r;
  ASSERT_EQ(runError(*fn, gridLaunch(3), mem, eo, &r), "");
  ASSERT_EQ(r.traces.size(), 6u);  // 3 blocks x 2 warps, block-major
  const std::vector<const Op*> table = instructionTable(*fn);
  for (size_t k = 0; k < r.traces.size(); ++k) {
    const WarpTrace& w = r.traces[k];
    EXPECT_EQ(w.block, int64_t(k / 2));
    EXPECT_EQ(w.warp, int32_t(k % 2));
    int loads = 0, yields = 0, stores = 0;
    for (const TraceEntry& e : w.entries) {
      const OpKind kind = table[size_t(e.instr)]->kind;
      EXPECT_EQ(e.activeMask, 0xFFFFFFFFu);
      loads += kind == OpKind::LdGlobal;
      yields += kind == OpKind::Yield;
      stores += kind == OpKind::StGlobal;
      if (kind == OpKind::LdGlobal || kind == OpKind::StGlobal) {
        ASSERT_EQ(e.accessCount, 1);
        const WarpAccess& a = r.accesses[size_t(e.firstAccess)];
        EXPECT_EQ(a.instr, e.instr);
        EXPECT_EQ(a.block, w.block);
        EXPECT_EQ(a.warp, w.warp);
      } else {
        EXPECT_EQ(e.accessCount, 0);
        EXPECT_EQ(e.firstAccess, -1);
      }
    }
    EXPECT_EQ(loads, 4);
    EXPECT_EQ(yields, 4);
    EXPECT_EQ(stores, 1);
  }

  // Timed streams: the loads do not wait for each other; each add waits for its load and the
  // previous add (the carried sum); the store waits for the last add.
  TimingInput in = buildTimingInput(*fn, r, h200Like());
  ASSERT_EQ(in.sample.size(), 3u);
  const std::vector<TimedInstr>& s = in.sample[0].warps[0];
  std::vector<int> loadsAt, addsAt;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i].kind == TimedKind::GlobalLoad) loadsAt.push_back(int(i));
    if (s[i].kind == TimedKind::Alu && s[i].instr >= 0 && table[size_t(s[i].instr)]->kind == OpKind::Add &&
        isFloat(table[size_t(s[i].instr)]->result()->type.dtype))
      addsAt.push_back(int(i));
  }
  ASSERT_EQ(loadsAt.size(), 4u);
  ASSERT_EQ(addsAt.size(), 4u);
  for (size_t k = 0; k < 4; ++k) {
    for (int32_t d : s[size_t(loadsAt[k])].deps) EXPECT_NE(s[size_t(d)].kind, TimedKind::GlobalLoad);
    const std::vector<int32_t>& deps = s[size_t(addsAt[k])].deps;
    EXPECT_NE(std::find(deps.begin(), deps.end(), loadsAt[k]), deps.end()) << "add " << k << " needs its load";
    if (k > 0) {
      EXPECT_NE(std::find(deps.begin(), deps.end(), addsAt[k - 1]), deps.end()) << "add " << k << " needs the sum";
    }
  }
  bool storeNeedsSum = false;
  for (const TimedInstr& t : s)
    if (t.kind == TimedKind::GlobalStore)
      storeNeedsSum = std::find(t.deps.begin(), t.deps.end(), addsAt[3]) != t.deps.end();
  EXPECT_TRUE(storeNeedsSum);
  EXPECT_EQ(s.back().kind, TimedKind::Exit);
  // 32 lanes x 4 bytes, coalesced: 4 sectors, one line, all from DRAM without a memory report.
  const TimedInstr& load = s[size_t(loadsAt[0])];
  EXPECT_EQ(load.pipeCycles, 1);
  EXPECT_DOUBLE_EQ(load.dramBytes, 128);
  // The constants are not instructions: the first timed instruction is the lane id.
  EXPECT_EQ(table[size_t(s[0].instr)]->kind, OpKind::LaneId);
}

TEST(TimingTrace, TracingIsOffByDefault) {
  auto fn = parseThread(kLoopSum);
  ASSERT_NE(fn, nullptr);
  Memory mem;
  mem.add("x", DType::F32, {128}, false);
  mem.add("out", DType::F32, {32}, true);
  ExecResult r;
  ASSERT_EQ(runError(*fn, gridLaunch(1), mem, {}, &r), "");
  EXPECT_TRUE(r.traces.empty());
  EXPECT_THROW(buildTimingInput(*fn, r, h200Like()), std::invalid_argument);
}

}  // namespace
}  // namespace tl::test
