// tl-ptx --unfused without a GPU: every unfused kernel of the softmax compiles (thread IR ->
// LLVM -> PTX -> ptxas) under a PTX-valid .entry name, each through its own cache entry; the
// "unfused" results object carries the kernels, launches, predicted traffic and (when a run is
// given) the measured times; and the tl-ptx executable with --unfused and no driver compiles
// everything, says the GPU step was skipped, exits 0 and writes the object into the JSON.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "../common/TempDir.h"
#include "ptx/JitCache.h"
#include "ptx/Results.h"
#include "ptx/Unfused.h"
#include "runtime/Driver.h"

namespace fs = std::filesystem;
using namespace tl;

namespace {

// A fresh temporary directory per test (tests/common/TempDir.h), named "tl-unfused-test.*".
struct TempDir : test::TempDir {
  TempDir() : test::TempDir("tl-unfused-test") {}
};

std::unique_ptr<CompiledKernel> compileSoftmax() {
  std::ostringstream err;
  auto k = compileKernelFile(std::string(TL_SOURCE_DIR) + "/kernels/softmax.tl", {}, err);
  EXPECT_TRUE(k) << err.str();
  return k;
}

const std::vector<std::string> kSoftmaxEntries = {"softmax_kernel_1_max", "softmax_kernel_2_sub",
                                                  "softmax_kernel_3_exp", "softmax_kernel_4_sum",
                                                  "softmax_kernel_5_div"};

}  // namespace

TEST(UnfusedPtx, IdentifierReplacesWhatPtxRejects) {
  EXPECT_EQ(ptxIdentifier("softmax_kernel.3_exp"), "softmax_kernel_3_exp");
  EXPECT_EQ(ptxIdentifier("a-b c$d"), "a_b_c$d");
  EXPECT_EQ(ptxIdentifier("3_exp"), "_3_exp");
  EXPECT_EQ(ptxIdentifier(""), "_");
}

TEST(UnfusedPtx, SoftmaxKernelsCompileWithValidEntriesAndOwnCacheKeys) {
  TempDir dir;
  JitCache cache(dir.path());
  auto k = compileSoftmax();
  ASSERT_TRUE(k);
  JitOptions opts;
  JitResult fused = jitCompile(*k, opts, &cache);
  UnfusedBuild b = compileUnfused(*k, opts, &cache);
  ASSERT_EQ(b.kernels.size(), kSoftmaxEntries.size());
  EXPECT_EQ(b.traffic.launchesUnfused, 5);
  EXPECT_GT(b.traffic.ratio(), 1.0);
  std::set<std::string> keys = {fused.times.cacheKey};
  for (size_t i = 0; i < b.kernels.size(); ++i) {
    const UnfusedKernelBuild& kb = b.kernels[i];
    SCOPED_TRACE(kb.name);
    EXPECT_EQ(kb.jit.entry.kernelName, kSoftmaxEntries[i]);
    EXPECT_NE(kb.jit.entry.ptx.find(".entry " + kSoftmaxEntries[i] + "("), std::string::npos);
    EXPECT_EQ(kb.jit.entry.ptx.find("softmax_kernel."), std::string::npos);  // no '.' left in a name
    EXPECT_FALSE(kb.description.empty());
    EXPECT_FALSE(kb.jit.cacheHit);
    ASSERT_TRUE(kb.jit.entry.ptxas.ran) << "ptxas is installed here: " << kb.jit.entry.ptxas.skipped;
    EXPECT_TRUE(kb.jit.entry.ptxas.ok) << kb.jit.entry.ptxas.log;
    EXPECT_FALSE(kb.jit.entry.cubin.empty());
    keys.insert(kb.jit.times.cacheKey);
  }
  EXPECT_EQ(keys.size(), 6u);  // five unfused kernels and the fused one: six cache entries

  // The second time every unfused kernel is a cache hit with the same PTX.
  UnfusedBuild again = compileUnfused(*k, opts, &cache);
  ASSERT_EQ(again.kernels.size(), b.kernels.size());
  for (size_t i = 0; i < b.kernels.size(); ++i) {
    EXPECT_TRUE(again.kernels[i].jit.cacheHit) << again.kernels[i].jit.cacheNote;
    EXPECT_EQ(again.kernels[i].jit.entry.ptx, b.kernels[i].jit.entry.ptx);
    EXPECT_EQ(again.kernels[i].jit.entry.kernelName, kSoftmaxEntries[i]);
  }
}

TEST(UnfusedPtx, ResultsObject) {
  TempDir dir;
  auto k = compileSoftmax();
  ASSERT_TRUE(k);
  UnfusedBuild b = compileUnfused(*k, JitOptions{}, nullptr);
  writeUnfusedPTX(b, k->path, dir.path());
  EXPECT_TRUE(fs::exists(fs::path(dir.path()) / "softmax.unfused.3_exp.ptx"));

  nlohmann::ordered_json skipped = unfusedToJson(b, nullptr);
  ASSERT_EQ(skipped.at("kernels").size(), 5u);
  EXPECT_EQ(skipped.at("kernels")[2].at("name"), "softmax_kernel.3_exp");
  EXPECT_EQ(skipped.at("kernels")[2].at("entry"), "softmax_kernel_3_exp");
  EXPECT_EQ(skipped.at("launches"), 5);
  EXPECT_DOUBLE_EQ(skipped.at("traffic_ratio").get<double>(), b.traffic.ratio());
  EXPECT_FALSE(skipped.at("gpu_ran").get<bool>());
  EXPECT_TRUE(skipped.at("median_ms").is_null());
  EXPECT_TRUE(skipped.at("ratio_vs_fused").is_null());

  UnfusedRun run;
  run.timing.runs = 10;
  run.timing.medianMs = 3.0;
  run.timing.minMs = 2.5;
  run.fusedMedianMs = 1.5;
  run.registers = {10, 11, 12, 13, 14};
  run.check = "PASS";
  nlohmann::ordered_json ran = unfusedToJson(b, &run);
  EXPECT_TRUE(ran.at("gpu_ran").get<bool>());
  EXPECT_DOUBLE_EQ(ran.at("median_ms").get<double>(), 3.0);
  EXPECT_DOUBLE_EQ(ran.at("ratio_vs_fused").get<double>(), 2.0);
  EXPECT_EQ(ran.at("kernels")[4].at("registers"), 14);  // the driver's count wins
  EXPECT_EQ(ran.at("check"), "PASS");
}

// The executable with --unfused, as a user runs it on a machine without a driver.
TEST(UnfusedPtx, TlPtxUnfusedWithoutAGpu) {
  std::string exe = std::string(TL_BINARY_DIR) + "/stages/ptx/tl-ptx";
  if (!fs::exists(exe)) GTEST_SKIP() << exe << " is not built";
  TempDir dir;
  std::string cmd = "cd " + dir.path() + " && TL_LIBCUDA=/nonexistent/libcuda.so.1 TL_CACHE_DIR=" + dir.path() +
                    "/cache " + exe + " " + TL_SOURCE_DIR + "/kernels/softmax.tl --unfused > log.txt 2>&1";
  int status = std::system(cmd.c_str());
  std::ifstream logFile(fs::path(dir.path()) / "log.txt");
  std::string log((std::istreambuf_iterator<char>(logFile)), {});
  ASSERT_TRUE(WIFEXITED(status)) << log;
  EXPECT_EQ(WEXITSTATUS(status), 0) << log;
  EXPECT_NE(log.find("unfused: GPU step skipped: cannot load $TL_LIBCUDA=/nonexistent/libcuda.so.1"),
            std::string::npos) << log;
  EXPECT_NE(log.find("predicted traffic: fused"), std::string::npos) << log;
  EXPECT_NE(log.find("softmax_kernel.3_exp: exp at softmax.tl:16:11; reads tmp2_sub; writes tmp3_exp  (entry "
                     "softmax_kernel_3_exp)"),
            std::string::npos) << log;
  for (const char* suffix : {"1_max", "2_sub", "3_exp", "4_sum", "5_div"})
    EXPECT_TRUE(fs::exists(fs::path(dir.path()) / "out/ptx" / (std::string("softmax.unfused.") + suffix + ".ptx")))
        << suffix;
  std::ifstream resultsFile(fs::path(dir.path()) / "out/results/softmax.json");
  nlohmann::ordered_json j = nlohmann::ordered_json::parse(resultsFile);
  ASSERT_TRUE(j.contains("unfused"));
  EXPECT_EQ(j["unfused"].at("launches"), 5);
  EXPECT_EQ(j["unfused"].at("kernels").size(), 5u);
  EXPECT_GT(j["unfused"].at("traffic_ratio").get<double>(), 1.0);
  EXPECT_FALSE(j["unfused"].at("gpu_ran").get<bool>());
  EXPECT_EQ(resultsFromJson(j).kernel, "softmax_kernel");  // still a valid results file
}
