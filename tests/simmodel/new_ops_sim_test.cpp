// Issue 12's new ops in the simulator's models: atomics go to the L2 (no L1 hits, their own
// totals and Nsight metrics, as many element operations as the executor counted), contention on
// one address costs more L2 traffic and time than the same atomics spread out (its updates are
// serialized at one L2 slice: Timing.h, kAtomicUpdateCycles), and a while
// loop's predicted time grows with the trip count its data asks for.
#include <gtest/gtest.h>

#include <sstream>

#include "runtime/Driver.h"
#include "sim/MemoryModel.h"
#include "sim/Timing.h"
#include "thread/Pipeline.h"

namespace tl::test {
namespace {

std::string kernelPath(const std::string& stem) { return std::string(TL_SOURCE_DIR) + "/tests/thread/kernels/" + stem + ".tl"; }

const GpuSpec& h200() {
  static const GpuSpec g = loadGpu("h200");
  return g;
}

struct Simulated {
  ExecResult run;
  MemoryReport memory;
  TimingResult timing;
};

// Compiles, runs every block with traces (after `prepare`), the memory model, the timing model.
Simulated simulate(const std::string& stem, const std::vector<LaunchOverride>& overrides,
                   const std::function<void(Memory&)>& prepare = nullptr, int numWarps = 4) {
  Simulated s;
  std::ostringstream err;
  auto k = compileKernelFile(kernelPath(stem), overrides, err);
  EXPECT_TRUE(k) << err.str();
  if (!k) return s;
  ThreadCompilation tc = compileToThreadIR(*k->ir, k->launch, numWarps);
  Memory mem = Memory::fromLaunch(k->launch);
  if (prepare) prepare(mem);
  ExecOptions eo;
  eo.traceWarps = true;
  s.run = runThreadIR(*tc.threadIR, k->launch, mem, eo);
  MemoryModelOptions mo;
  mo.sharedBytesPerSM = tc.threadIR->sharedBytes;
  s.memory = analyzeMemory(s.run.accesses, h200(), mo);
  TimingOptions to;
  to.memory = &s.memory;
  s.timing = predictTime(*tc.threadIR, s.run, h200(), to);
  return s;
}

double metric(const MemoryReport& r, const std::string& name) {
  for (const auto& [n, v] : r.ncuAtomicMetrics())
    if (n == name) return v;
  ADD_FAILURE() << "no metric " << name;
  return -1;
}

TEST(NewOpsSim, AtomicsAreCountedAndServedByL2) {
  Simulated s = simulate("atomic_counter", {});
  const MemCounters& a = s.memory.totals.globalAtomic;
  EXPECT_GT(a.executions, 0);
  EXPECT_EQ(a.threadAccesses, s.run.stats.atomics);  // every element operation the executor did
  EXPECT_EQ(a.l1SectorHits, 0);                       // L1 is bypassed
  EXPECT_EQ(a.l2Sectors, a.sectors);                  // every sector goes to the L2
  EXPECT_EQ(metric(s.memory, "smsp__sass_inst_executed_op_global_atom.sum"), double(a.executions));
  EXPECT_EQ(metric(s.memory, "lts__t_sectors_op_atom.sum"), double(a.l2Sectors));
  for (const InstrMemStats& i : s.memory.instructions)
    if (i.atomic) EXPECT_TRUE(i.store);
}

TEST(NewOpsSim, ContentionCostsL2TrafficAndTime) {
  Simulated spread = simulate("atomic_contention", {{"CONTENDED", "0"}});
  Simulated one = simulate("atomic_contention", {{"CONTENDED", "1"}});
  EXPECT_EQ(spread.run.stats.atomics, 8192);
  EXPECT_EQ(one.run.stats.atomics, 8192);
  // Spread: 32 lanes of 4 bytes fill 4 sectors per warp instruction, one update each; one
  // address: one sector with 32 updates in a row.
  EXPECT_GT(one.timing.l2Bytes, 7 * spread.timing.l2Bytes) << one.timing.l2Bytes << " vs " << spread.timing.l2Bytes;
  EXPECT_GT(one.timing.cycles, spread.timing.cycles);
  // One address: 8192 updates one after another at its L2 slice bound the kernel.
  EXPECT_EQ(one.timing.atomicSerialCycles, 8192 * kAtomicUpdateCycles);
  EXPECT_EQ(one.timing.cycles, one.timing.atomicSerialCycles);
  EXPECT_EQ(one.timing.limiter, TimeLimiter::L2Bandwidth);
  EXPECT_NE(one.timing.limiterWhy.find("atomics on one address"), std::string::npos) << one.timing.limiterWhy;
  EXPECT_EQ(spread.timing.atomicSerialCycles, kAtomicUpdateCycles);  // every address once
  EXPECT_NE(spread.timing.limiter, TimeLimiter::L2Bandwidth);
}

TEST(NewOpsSim, WhileTimeGrowsWithTheTripCount) {
  auto counts = [](int64_t n) {
    return [n](Memory& m) {
      Buffer* c = m.find("counts_ptr");
      for (int64_t p = 0; p < c->numel(); ++p) c->setI(p, n);
    };
  };
  Simulated few = simulate("while_data", {}, counts(2));
  Simulated many = simulate("while_data", {}, counts(40));
  EXPECT_GT(many.run.stats.warpInstructions, few.run.stats.warpInstructions);
  EXPECT_GT(many.timing.cycles, few.timing.cycles + 10 * 38) << many.timing.cycles << " vs " << few.timing.cycles;
}

}  // namespace
}  // namespace tl::test
