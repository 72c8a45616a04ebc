// Issue 11, item 3: the simulator's records (warp traces and memory accesses) are capped
// (SimOptions::maxTraceBytes, tl-sim --trace-memory). A run that would pass the cap runs fewer
// blocks, scales its counts like any sample and says why (sampling.limited_by, the summary's
// sampling line); block 0 alone over the cap is a located RuntimeError, not bad_alloc. And
// item 11's long kernels: an unfused version of more than kMaxUnfusedKernels kernels is not
// simulated (the report says why), and unfuse() refuses more than kMaxUnfusedKernelsBuilt
// (each kernel takes every scratch buffer: 20000 statements took 123 s and 24 GB).
#include <gtest/gtest.h>

#include <sstream>

#include <filesystem>
#include <fstream>

#include "../common/TempDir.h"
#include "runtime/Driver.h"
#include "sim/SimReport.h"
#include "thread/Unfuse.h"

namespace tl {
namespace {

std::unique_ptr<CompiledKernel> compileMatmul() {
  std::ostringstream err;
  auto k = compileKernelFile(std::string(TL_SOURCE_DIR) + "/kernels/matmul.tl", {}, err);
  EXPECT_TRUE(k) << err.str();
  return k;
}

TEST(SimRecordCap, TooManyBlocksToRecordRunFewerAndTheReportSaysWhy) {
  auto k = compileMatmul();
  ASSERT_TRUE(k);
  SimOptions o;
  o.unfused = false;
  o.sampleBlocks = 16;
  SimReport whole = simulateKernel(*k->ir, k->launch, o);
  ASSERT_EQ(whole.json["sampling"]["blocks_run"], 16);
  EXPECT_EQ(whole.json["sampling"]["limited_by"], "block_budget");
  // What one block's records take: its accesses and one trace entry per warp instruction.
  const auto& ex = whole.json["execution"];
  int64_t perBlock = (ex["access_records"].get<int64_t>() * int64_t(sizeof(WarpAccess)) +
                      ex["warp_instructions"].get<int64_t>() * int64_t(sizeof(TraceEntry))) / 16;
  o.maxTraceBytes = 4 * perBlock;
  SimReport capped = simulateKernel(*k->ir, k->launch, o);
  const auto& s = capped.json["sampling"];
  EXPECT_EQ(s["limited_by"], "trace_memory");
  int64_t ran = s["blocks_run"].get<int64_t>();
  EXPECT_GE(ran, 2);
  EXPECT_LE(ran, 4);
  EXPECT_EQ(capped.json["execution"]["blocks"], ran);
  EXPECT_DOUBLE_EQ(s["scale"].get<double>(), double(s["grid_blocks"].get<int64_t>()) / double(ran));
  EXPECT_NE(capped.summary.find("cap on the simulator's records (--trace-memory)"), std::string::npos)
      << capped.summary;
  // The counts are those of a sample of the same blocks, scaled alike.
  o.maxTraceBytes = kDefaultTraceBytes;
  o.sampleBlocks = ran;
  SimReport sample = simulateKernel(*k->ir, k->launch, o);
  EXPECT_EQ(capped.json["memory"]["totals"], sample.json["memory"]["totals"]);
  EXPECT_EQ(capped.json["timing"]["time_us"], sample.json["timing"]["time_us"]);
}

TEST(SimRecordCap, OneBlockOverTheCapIsALocatedError) {
  auto k = compileMatmul();
  ASSERT_TRUE(k);
  SimOptions o;
  o.unfused = false;
  o.maxTraceBytes = 64 << 10;  // far less than one matmul block's K loop records
  try {
    simulateKernel(*k->ir, k->launch, o);
    ADD_FAILURE() << "block 0 fit in 64 KiB";
  } catch (const RuntimeError& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("record of block 0"), std::string::npos) << msg;
    EXPECT_NE(msg.find("--trace-memory"), std::string::npos) << msg;
    EXPECT_GT(e.loc.line, 0u);
  }
}

TEST(SimRecordCap, AGridThatFitsRunsWholeAndSaysSo) {
  std::ostringstream err;
  auto k = compileKernelFile(std::string(TL_SOURCE_DIR) + "/kernels/vector_add.tl", {{"N", "4096"}}, err);
  ASSERT_TRUE(k) << err.str();
  SimOptions o;
  o.unfused = false;
  SimReport r = simulateKernel(*k->ir, k->launch, o);
  EXPECT_EQ(r.json["sampling"]["limited_by"], "none");
  EXPECT_FALSE(r.json["sampling"]["sampled"].get<bool>());
  EXPECT_EQ(r.json["sampling"]["trace_memory_cap_mib"], kDefaultTraceBytes >> 20);
}

// A kernel reassigning x `statements` times: as many unfused kernels, plus the load and store.
std::unique_ptr<CompiledKernel> longKernel(const test::TempDir& dir, int statements) {
  std::ofstream f(dir / "long.tl");
  f << "@launch(N=256, BLOCK=128, grid=(cdiv(N, BLOCK),), x_ptr=randn(N), out_ptr=zeros(N, output=True))\n"
       "@jit\ndef long(x_ptr, out_ptr, N, BLOCK: constexpr):\n"
       "    offs = program_id(0) * BLOCK + arange(0, BLOCK)\n    x = load(x_ptr + offs, mask=offs < N)\n";
  for (int i = 0; i < statements; ++i) f << "    x = x * 1.5 + 1.0\n";
  f << "    store(out_ptr + offs, x, mask=offs < N)\n";
  f.close();
  std::ostringstream err;
  auto k = compileKernelFile(dir / "long.tl", {}, err);
  EXPECT_TRUE(k) << err.str();
  return k;
}

TEST(SimLongKernels, FusionIsSkippedWithTheReasonPastTheLimit) {
  test::TempDir dir("tl-long");
  auto k = longKernel(dir, int(kMaxUnfusedKernels) / 2 + 1);  // two ops per statement
  ASSERT_TRUE(k);
  int64_t count = countUnfusedKernels(*k->ir, k->launch);
  ASSERT_GT(count, kMaxUnfusedKernels);
  SimOptions o;
  o.registers = [](const Function& f) { return estimateRegisters(f); };
  SimReport r = simulateKernel(*k->ir, k->launch, o);
  EXPECT_FALSE(r.json.contains("fusion"));
  ASSERT_TRUE(r.json.contains("fusion_skipped"));
  EXPECT_NE(r.json["fusion_skipped"].get<std::string>().find(std::to_string(count) + " kernels"), std::string::npos);
  EXPECT_NE(r.summary.find("fusion: not simulated: the unfused version has"), std::string::npos) << r.summary;
  // Under the limit the section is there.
  auto small = longKernel(dir, 3);
  ASSERT_TRUE(small);
  EXPECT_TRUE(simulateKernel(*small->ir, small->launch, o).json.contains("fusion"));
}

TEST(SimLongKernels, UnfuseRefusesMoreKernelsThanItBuilds) {
  test::TempDir dir("tl-long");
  auto k = longKernel(dir, int(kMaxUnfusedKernelsBuilt) / 2 + 1);
  ASSERT_TRUE(k);
  try {
    unfuse(*k->ir, k->launch);
    ADD_FAILURE() << "built them";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("tilelab builds at most " + std::to_string(kMaxUnfusedKernelsBuilt)),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace tl
