// The timing model on real kernels: kernels/*.tl through the thread pipeline, the executor
// (a sample of blocks, with warp traces), the memory model and predictTime on the H200
// description (sim/gpus/h200.json). Memory-bound kernels must come out near bytes / bandwidth:
// never faster, and not more than twice as slow; the resident-warps sweep must fall, then
// flatten at the bandwidth ceiling; the traces must match the executor's own counts.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "runtime/Driver.h"
#include "sim/MemoryModel.h"
#include "sim/Occupancy.h"
#include "sim/Timing.h"
#include "thread/Pipeline.h"

namespace tl::test {
namespace {

std::string kernelPath(const std::string& stem) { return std::string(TL_SOURCE_DIR) + "/kernels/" + stem + ".tl"; }

uint32_t lineOf(const std::string& stem, const std::string& text) {
  std::ifstream in(kernelPath(stem));
  std::string line;
  for (uint32_t n = 1; std::getline(in, line); ++n)
    if (line.find(text) != std::string::npos && line.find('#') != 0) return n;
  return 0;
}

// One kernel, compiled, run on a sample of blocks with traces, analysed.
struct Timed {
  std::unique_ptr<CompiledKernel> kernel;
  ThreadCompilation tc;
  ExecResult run;
  MemoryReport memory;
  TimingInput input;
  TimingOptions options;
  TimingResult result;
  bool ok = false;
};

std::unique_ptr<Timed> timeKernel(const std::string& stem, const std::vector<LaunchOverride>& overrides,
                                  int64_t sampleBlocks, const GpuSpec& gpu, TimingOptions options = {}) {
  auto t = std::make_unique<Timed>();
  std::ostringstream err;
  t->kernel = compileKernelFile(kernelPath(stem), overrides, err);
  EXPECT_TRUE(t->kernel) << err.str();
  if (!t->kernel) return t;
  t->tc = compileToThreadIR(*t->kernel->ir, t->kernel->launch);
  Memory memory = Memory::fromLaunch(t->kernel->launch);
  ExecOptions eo;
  eo.traceWarps = true;
  eo.detectRaces = false;
  eo.maxBlocks = sampleBlocks;
  t->run = runThreadIR(*t->tc.threadIR, t->kernel->launch, memory, eo);
  const auto& g = t->kernel->launch.grid;
  const int64_t grid = g[0] * g[1] * g[2];
  MemoryModelOptions mo;
  mo.sharedBytesPerSM = t->tc.threadIR->sharedBytes;
  mo.totalBlocks = grid;
  t->memory = analyzeMemory(t->run.accesses, gpu, mo);
  options.gridBlocks = grid;
  options.memory = &t->memory;
  t->options = options;
  t->input = buildTimingInput(*t->tc.threadIR, t->run, gpu, options);
  t->result = predictTime(t->input, gpu, options);
  t->ok = true;
  return t;
}

const GpuSpec& h200() {
  static const GpuSpec g = loadGpu("h200");
  return g;
}

TEST(TimingKernels, TracesMatchTheExecutor) {
  auto t = timeKernel("softmax", {}, 8, h200());
  ASSERT_TRUE(t->ok);
  const ExecResult& run = t->run;
  ASSERT_EQ(run.traces.size(), size_t(8 * t->tc.threadIR->numWarps));
  const std::vector<const Op*> table = instructionTable(*t->tc.threadIR);
  int64_t issued = 0, records = 0;
  std::set<int64_t> seen;
  for (const WarpTrace& w : run.traces) {
    ASSERT_FALSE(w.entries.empty());
    EXPECT_EQ(table[size_t(w.entries.back().instr)]->kind, OpKind::Return);
    for (const TraceEntry& e : w.entries) {
      if (table[size_t(e.instr)]->kind != OpKind::Yield) ++issued;
      EXPECT_NE(e.activeMask, 0u);
      for (int32_t k = 0; k < e.accessCount; ++k) {
        const WarpAccess& a = run.accesses[size_t(e.firstAccess + k)];
        EXPECT_EQ(a.block, w.block);
        EXPECT_EQ(a.warp, w.warp);
        EXPECT_EQ(a.instr, e.instr);
        EXPECT_TRUE(seen.insert(e.firstAccess + k).second) << "an access claimed twice";
      }
      records += e.accessCount;
    }
  }
  EXPECT_EQ(issued, run.stats.warpInstructions);
  EXPECT_EQ(records, int64_t(run.accesses.size()));  // every record belongs to exactly one entry
  // Tracing is off by default and changes nothing else.
  Memory memory = Memory::fromLaunch(t->kernel->launch);
  ExecOptions plain;
  plain.maxBlocks = 8;
  plain.detectRaces = false;
  ExecResult untraced = runThreadIR(*t->tc.threadIR, t->kernel->launch, memory, plain);
  EXPECT_TRUE(untraced.traces.empty());
  EXPECT_EQ(untraced.accesses.size(), run.accesses.size());
  EXPECT_EQ(untraced.stats.warpInstructions, run.stats.warpInstructions);
}

TEST(TimingKernels, VectorAddRunsAtTheBandwidthCeiling) {
  const int64_t n = int64_t(1) << 22;
  auto t = timeKernel("vector_add", {{"N", std::to_string(n)}}, 64, h200());
  ASSERT_TRUE(t->ok);
  const TimingResult& r = t->result;
  // x and y read once, out written once.
  EXPECT_NEAR(r.dramBytes, double(3 * 4 * n), 0.01 * double(3 * 4 * n));
  EXPECT_NEAR(r.bandwidthBoundUs, double(3 * 4 * n) / (h200().dramBandwidthGBs * 1e3), 0.3);
  EXPECT_GE(r.timeUs, r.bandwidthBoundUs);
  EXPECT_LE(r.timeUs, 2 * r.bandwidthBoundUs);
  EXPECT_EQ(r.limiter, TimeLimiter::DramBandwidth) << r.limiterWhy;
  EXPECT_EQ(r.blocksPerSM, 32);  // 4096 blocks on 132 SMs
  // Resident warps: what the occupancy model allows with the estimated registers.
  const OccupancyResult occ = occupancy(h200(), 128, t->input.registersPerThread, 0);
  EXPECT_EQ(r.residentWarpsPerSM, occ.activeWarpsPerSM);
  EXPECT_GE(r.residentWarpsPerSM, 32);
  std::cout << "vector_add N=2^22: predicted " << r.timeUs << " us, bound " << r.bandwidthBoundUs << " us, "
            << r.achievedDramGBs << " GB/s, " << r.limiterWhy << "\n";
}

TEST(TimingKernels, ExtrapolationAgreesWithTheFullSimulation) {
  const int64_t n = int64_t(1) << 22;
  TimingOptions sampled;
  sampled.maxSimulatedBlocks = 8;  // 4 rounds of the 2 resident blocks, of the 32 the SM runs
  sampled.residentBlocksPerSM = 2;
  auto t = timeKernel("vector_add", {{"N", std::to_string(n)}}, 16, h200(), sampled);
  ASSERT_TRUE(t->ok);
  TimingOptions full = t->options;
  full.maxSimulatedBlocks = 1 << 20;
  const TimingResult a = predictTime(t->input, h200(), full);
  const TimingResult& e = t->result;
  EXPECT_TRUE(e.extrapolated);
  EXPECT_FALSE(a.extrapolated);
  EXPECT_NEAR(double(e.cycles), double(a.cycles), 0.03 * double(a.cycles));
}

TEST(TimingKernels, ResidentWarpsSweepFallsThenFlattens) {
  // BLOCK = 256 over 8 warps: one element per thread, so a warp has only 2 x 128 bytes of
  // loads in flight and it takes many resident warps to cover DRAM latency x bandwidth. A block
  // moves 3 KB, so the block scheduler's rate (one block per SM every 158 cycles: 19.4 B/cycle)
  // stays above the SM's DRAM share (16.35 B/cycle) and out of the way.
  const int64_t n = int64_t(1) << 22;
  auto t = timeKernel("vector_add", {{"N", std::to_string(n)}, {"BLOCK", "256"}, {"num_warps", "8"}}, 64, h200());
  ASSERT_TRUE(t->ok);
  std::vector<SweepPoint> sweep = residentWarpsSweep(t->input, h200(), t->options);
  const OccupancyResult occ = occupancy(h200(), 256, t->input.registersPerThread, 0);
  ASSERT_EQ(int(sweep.size()), occ.activeBlocksPerSM);  // 1.. the occupancy limit, blocks of 8 warps
  ASSERT_GE(sweep.size(), 6u);
  EXPECT_EQ(sweep.front().limiter, TimeLimiter::Latency);
  EXPECT_EQ(sweep.back().limiter, TimeLimiter::DramBandwidth);
  EXPECT_GT(sweep.front().timeUs, 1.5 * sweep.back().timeUs);
  for (size_t i = 1; i < sweep.size(); ++i) EXPECT_LE(sweep[i].timeUs, sweep[i - 1].timeUs * 1.03) << i;
  const double bound = t->result.bandwidthBoundUs + t->result.launchOverheadUs;
  EXPECT_LE(sweep.back().timeUs, bound * 1.15);
  for (const SweepPoint& p : sweep)
    std::cout << p.residentWarps << " warps: " << p.timeUs << " us, " << p.achievedDramGBs << " GB/s, "
              << p.dramBytesInFlight << " B in flight, latency " << p.dramMeanLatency << ", "
              << timeLimiterName(p.limiter) << "\n";
}

// One element per thread in blocks of 128: each block moves 1.5 KB, and the H200's block
// scheduler starts at most one block per SM every 158 cycles (measured,
// sim/gpus/launch_probe.cu), i.e. 9.7 B/cycle against a DRAM share of 16.35: the block launch
// rate, not DRAM, sets the time, as it does on the card.
TEST(TimingKernels, TinyBlocksAreLimitedByTheBlockLaunchRate) {
  const int64_t n = int64_t(1) << 22;
  auto t = timeKernel("vector_add", {{"N", std::to_string(n)}, {"BLOCK", "128"}}, 64, h200());
  ASSERT_TRUE(t->ok);
  const TimingResult& r = t->result;
  EXPECT_EQ(r.limiter, TimeLimiter::BlockLaunch) << r.limiterWhy;
  const double launchBound = double(r.blocksPerSM) * h200().blockLaunchIntervalCycles / (1000.0 * h200().smClockGHz);
  EXPECT_NEAR(r.smTimeUs, launchBound, 0.05 * launchBound);
  // Without the limit the same kernel is latency- then bandwidth-bound, and faster.
  TimingOptions o = t->options;
  o.blockLaunchIntervalCycles = 0;
  TimingResult free = predictTime(t->input, h200(), o);
  EXPECT_NE(free.limiter, TimeLimiter::BlockLaunch);
  EXPECT_LT(free.timeUs, r.timeUs);
}

TEST(TimingKernels, SoftmaxIsNearItsBandwidthBound) {
  auto t = timeKernel("softmax", {{"M", "4096"}, {"N", "1024"}}, 64, h200());
  ASSERT_TRUE(t->ok);
  const TimingResult& r = t->result;
  EXPECT_NEAR(r.dramBytes, 2.0 * 4096 * 1024 * 4, 0.01 * 2.0 * 4096 * 1024 * 4);
  EXPECT_GE(r.timeUs, r.bandwidthBoundUs);
  EXPECT_LE(r.timeUs, 2 * r.bandwidthBoundUs);
  std::cout << "softmax 4096x1024: predicted " << r.timeUs << " us, bound " << r.bandwidthBoundUs << " us, "
            << timeLimiterName(r.limiter) << ": " << r.limiterWhy << "\n";
  // Its timeline shows warps waiting at the reduction's barriers and on the row's load.
  const uint32_t loadLine = lineOf("softmax", "x = load(");
  bool barrier = false, memory = false;
  for (const WarpSegment& s : r.timeline) {
    barrier |= s.state == WarpState::WaitingBarrier;
    memory |= s.state == WarpState::WaitingMemory && s.loc.line == loadLine;
  }
  EXPECT_TRUE(barrier);
  EXPECT_TRUE(memory) << "no wait blamed on line " << loadLine;
  // And the Chrome trace of it parses, one complete event per segment.
  nlohmann::json doc = nlohmann::json::parse(chromeTraceJson(r));
  size_t events = 0;
  for (const auto& e : doc["traceEvents"]) events += e["ph"] == "X";
  EXPECT_EQ(events, r.timeline.size());
}

TEST(TimingKernels, RunWithoutTracesIsRejected) {
  std::ostringstream err;
  auto k = compileKernelFile(kernelPath("vector_add"), {}, err);
  ASSERT_TRUE(k);
  ThreadCompilation tc = compileToThreadIR(*k->ir, k->launch);
  Memory memory = Memory::fromLaunch(k->launch);
  ExecOptions eo;
  eo.maxBlocks = 2;
  ExecResult run = runThreadIR(*tc.threadIR, k->launch, memory, eo);
  EXPECT_THROW(predictTime(*tc.threadIR, run, h200()), std::invalid_argument);
}

}  // namespace
}  // namespace tl::test
