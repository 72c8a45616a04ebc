// The memory model on real kernels: kernels/*.tl through the thread pipeline
// (stages/thread/Pipeline.h) and the executor, then analyzeMemory with an H200-like GPU. Checks
// what a student would check against Nsight Compute: vector_add's DRAM bytes, the softmax's
// 16-byte loads, strided_copy's sectors growing with the stride, transpose's store pattern.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <sstream>

#include "../sim/memmodel_util.h"
#include "runtime/Driver.h"
#include "sim/MemoryModel.h"
#include "thread/Pipeline.h"

namespace tl::test {
namespace {

std::string kernelPath(const std::string& stem) { return std::string(TL_SOURCE_DIR) + "/kernels/" + stem + ".tl"; }

// The 1-based line of the first line of kernels/<stem>.tl containing `text` (0 if none).
uint32_t lineOf(const std::string& stem, const std::string& text) {
  std::ifstream in(kernelPath(stem));
  std::string line;
  for (uint32_t n = 1; std::getline(in, line); ++n)
    if (line.find(text) != std::string::npos && line.find('#') != 0) return n;
  return 0;
}

struct Analyzed {
  LaunchConfig launch;
  MemoryReport report;
  std::string layouts;  // explainMemoryLayouts: which vector width each load/store got
  bool ok = false;
};

// Runs thread IR on the kernel's launch and analyzes what it touched.
void runAndAnalyze(const Function& thread, const LaunchConfig& launch, Analyzed& a) {
  Memory memory = Memory::fromLaunch(launch);
  ExecResult run = runThreadIR(thread, launch, memory);
  MemoryModelOptions o;
  o.sharedBytesPerSM = thread.sharedBytes;
  a.report = analyzeMemory(run.accesses, h200Like(), o);
  a.launch = launch;
  a.ok = true;
}

// kernels/<stem>.tl through the real pipeline (the layout passes choose the layouts).
Analyzed analyze(const std::string& stem, const std::vector<LaunchOverride>& overrides = {}) {
  Analyzed a;
  std::ostringstream err;
  auto k = compileKernelFile(kernelPath(stem), overrides, err);
  EXPECT_TRUE(k) << err.str();
  if (!k) return a;
  ThreadCompilation tc = compileToThreadIR(*k->ir, k->launch);
  a.layouts = explainMemoryLayouts(tc);
  runAndAnalyze(*tc.threadIR, k->launch, a);
  return a;
}

// The same kernel compiled WITHOUT specialization: the layout passes get no facts about the
// launch's scalars (ParamHints{}), so they cannot know that stride_in and stride_on are 1 and
// no access is proven contiguous: the lowering Triton would produce for arbitrary strides.
Analyzed analyzeUnspecialized(const std::string& stem) {
  Analyzed a;
  std::ostringstream err;
  auto k = compileKernelFile(kernelPath(stem), {}, err);
  EXPECT_TRUE(k) << err.str();
  if (!k) return a;
  blockPipeline().run(*k->ir);
  layoutPipeline(k->launch.numWarps, ParamHints{}).run(*k->ir);
  auto thread = lowerToThreadIR(*k->ir);
  runAndAnalyze(*thread, k->launch, a);
  return a;
}

// The aggregated stats of the global loads (or stores) of one source line.
const MemCounters* lineStats(const MemoryReport& r, uint32_t line, bool store) {
  for (const LineMemStats& l : r.lines)
    if (l.line == line && l.space == MemSpace::Global && l.store == store) return &l.counters;
  return nullptr;
}

int bytesPerLaneOn(const MemoryReport& r, uint32_t line, bool store) {
  int bytes = 0;
  for (const InstrMemStats& i : r.instructions)
    if (i.loc.line == line && i.space == MemSpace::Global && i.store == store) bytes = std::max(bytes, i.bytesPerLane);
  return bytes;
}

int64_t scalar(const LaunchConfig& l, const std::string& name) { return l.scalars.at(name).i; }

TEST(MemModelKernels, VectorAddMovesEachByteOnce) {
  Analyzed a = analyze("vector_add");
  ASSERT_TRUE(a.ok);
  int64_t n = scalar(a.launch, "N");
  const MemTotals& t = a.report.totals;
  // Two inputs read once, one output written once: DRAM sees each byte once (to a sector).
  EXPECT_NEAR(double(t.dramReadBytes), double(2 * n * 4), 2 * 32.0);
  EXPECT_NEAR(double(t.dramWriteBytes), double(n * 4), 32.0);
  EXPECT_DOUBLE_EQ(t.globalLoad.efficiency(), 1.0);
  EXPECT_DOUBLE_EQ(t.globalStore.efficiency(), 1.0);
  EXPECT_EQ(t.l2ReadHits, 0);  // streaming: nothing is read twice
  EXPECT_EQ(a.report.blocksAnalyzed, a.launch.grid[0]);
}

TEST(MemModelKernels, SoftmaxWithVec4LoadsSixteenSectorsPerRequest) {
  Analyzed a = analyze("softmax", {{"N", "1024"}});
  ASSERT_TRUE(a.ok);
  uint32_t line = lineOf("softmax", "x = load(");
  const MemCounters* ld = lineStats(a.report, line, false);
  ASSERT_TRUE(ld) << "no global load on line " << line;
  ASSERT_EQ(bytesPerLaneOn(a.report, line, false), 16) << "expected 4 x f32 vectors:\n" << a.layouts;
  // 32 lanes x 16 contiguous bytes = 512 bytes = 16 sectors in one request (LDG.128).
  EXPECT_DOUBLE_EQ(ld->sectorsPerRequest(), 16.0);
  EXPECT_DOUBLE_EQ(ld->efficiency(), 1.0);
  EXPECT_DOUBLE_EQ(ld->linesPerRequest(), 4.0);
  int64_t m = a.launch.grid[0];  // one program per row
  EXPECT_EQ(ld->bytesRequested, m * 1024 * 4);
  EXPECT_NEAR(double(a.report.totals.dramReadBytes), double(m * 1024 * 4), 32.0);
  // The cross-warp reductions go through shared memory without bank conflicts.
  EXPECT_GT(a.report.totals.sharedLoad.executions, 0);
  EXPECT_EQ(a.report.totals.sharedLoad.bankConflicts, 0);
  EXPECT_EQ(a.report.totals.sharedStore.bankConflicts, 0);
}

TEST(MemModelKernels, StridedCopySectorsGrowWithTheStride) {
  uint32_t loadLine = lineOf("strided_copy", "x = load(");
  uint32_t storeLine = lineOf("strided_copy", "store(");
  double previousEfficiency = 2.0;
  for (int stride : {1, 2, 4, 8, 32}) {
    SCOPED_TRACE("stride " + std::to_string(stride));
    Analyzed a = analyze("strided_copy", {{"stride", std::to_string(stride)}});
    ASSERT_TRUE(a.ok);
    int64_t n = scalar(a.launch, "N");
    const MemCounters* ld = lineStats(a.report, loadLine, false);
    const MemCounters* st = lineStats(a.report, storeLine, true);
    ASSERT_TRUE(ld && st);
    int bytes = bytesPerLaneOn(a.report, loadLine, false);
    // Lanes stride x 4 bytes apart: a warp spans 32 x 4 x stride bytes, so it touches
    // 4 x stride sectors until every lane has a sector of its own (stride >= 8). Contiguous
    // (stride 1) vectors of b bytes: 32 x b bytes = b sectors. Only the last warp is partial.
    double expected = stride == 1 ? bytes : std::min(32, 4 * stride);
    if (stride > 1) {
      EXPECT_EQ(bytes, 4);
    }
    EXPECT_NEAR(ld->sectorsPerRequest(), expected, 0.01 * expected);
    // Sectors per ideal grades the access whatever its width: 1.0 for stride 1's 16-byte
    // vectors (16 sectors per request), the stride for 4-byte lanes, 8 once each has a sector.
    const double perIdeal = std::min(stride, 8);
    EXPECT_NEAR(ld->sectorsPerIdeal(), perIdeal, 0.01 * perIdeal);
    EXPECT_NEAR(st->sectorsPerIdeal(), 1.0, 0.01);
    EXPECT_NEAR(ld->efficiency(), stride == 1 ? 1.0 : 4.0 * 32 / (32.0 * expected), 0.01);
    EXPECT_LE(ld->efficiency(), previousEfficiency);  // more bytes fetched per byte used
    previousEfficiency = ld->efficiency();
    // DRAM: every sector of x's touched range (stride <= 8), one sector per element beyond.
    double dramX = double(n) * std::min(4 * stride, 32);
    double dramLoads = double(ld->dramReadBytes);
    EXPECT_NEAR(dramLoads, dramX, 0.01 * dramX);
    // The store side is contiguous whatever the stride.
    int stBytes = bytesPerLaneOn(a.report, storeLine, true);
    EXPECT_NEAR(st->sectorsPerRequest(), double(stBytes), 0.01 * stBytes);
    EXPECT_NEAR(double(a.report.totals.dramWriteBytes), double(n * 4), 32.0);
  }
}

// transpose.tl: the loads walk rows of `in`, the stores columns of `out`. Compiled without
// knowing the strides, the tile keeps ONE register layout (lanes along `in`'s rows): the loads
// are coalesced, the stores put consecutive lanes 4 x M bytes apart, one sector each. With the
// launch's facts (stride_in = stride_on = 1) the layout passes give the store its own layout
// (lanes along `out`'s rows) and convert through shared memory: both sides coalesced.
TEST(MemModelKernels, TransposeStoresFollowTheChosenLayout) {
  uint32_t loadLine = lineOf("transpose", "tile = load(");
  uint32_t storeLine = lineOf("transpose", "store(");

  Analyzed naive = analyzeUnspecialized("transpose");
  ASSERT_TRUE(naive.ok);
  const MemCounters* ld = lineStats(naive.report, loadLine, false);
  const MemCounters* st = lineStats(naive.report, storeLine, true);
  ASSERT_TRUE(ld && st);
  int64_t m = scalar(naive.launch, "M"), n = scalar(naive.launch, "N");
  EXPECT_EQ(ld->bytesRequested, m * n * 4);
  EXPECT_EQ(st->bytesRequested, m * n * 4);
  // Rows of `in` are N x 4 = 680 bytes apart (not a multiple of 32), so a warp's 128 bytes
  // usually straddle 5 sectors: ~80%.
  EXPECT_GT(ld->efficiency(), 0.7);
  EXPECT_LT(st->efficiency(), 0.15);  // 4 useful bytes per 32-byte sector, at best
  EXPECT_NEAR(st->sectorsPerRequest(), double(st->threadAccesses) / double(st->requests), 0.01);
  EXPECT_GT(st->sectorsPerIdeal(), 3.0);  // a sector per lane where a few would hold the bytes
  EXPECT_LT(ld->sectorsPerIdeal(), 1.3);
  EXPECT_EQ(naive.report.totals.sharedLoad.executions, 0);

  Analyzed tuned = analyze("transpose");
  ASSERT_TRUE(tuned.ok);
  const MemCounters* ld2 = lineStats(tuned.report, loadLine, false);
  const MemCounters* st2 = lineStats(tuned.report, storeLine, true);
  ASSERT_TRUE(ld2 && st2);
  EXPECT_GT(ld2->efficiency(), 0.7) << tuned.layouts;
  EXPECT_GT(st2->efficiency(), 0.7) << tuned.layouts;
  EXPECT_LT(st2->sectorsPerIdeal(), 1.3) << tuned.layouts;
  EXPECT_LT(st2->sectors, st->sectors / 4);
  // The conversion goes through shared memory.
  EXPECT_GT(tuned.report.totals.sharedStore.executions + tuned.report.totals.sharedLoad.executions, 0)
      << tuned.layouts;
  // Same elements either way; DRAM sees them once in both versions (all fits in L2).
  EXPECT_EQ(tuned.report.totals.dramWriteBytes, naive.report.totals.dramWriteBytes);
}

TEST(MemModelKernels, SoftmaxDefaultLaunchIsFast) {
  auto start = std::chrono::steady_clock::now();
  Analyzed a = analyze("softmax");
  ASSERT_TRUE(a.ok);
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  // Generous bound (shared CI cores); typical: well under a second, see docs/sim.md.
  EXPECT_LT(s, 10.0);
  EXPECT_GT(a.report.accesses, 0);
}

}  // namespace
}  // namespace tl::test
