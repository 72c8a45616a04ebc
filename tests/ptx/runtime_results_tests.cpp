// The results JSON (stages/ptx/Results.h): every field round-trips (NaN errors too), the reader
// names a missing or mistyped field, writeResults writes DIR/<kernel>.json in the documented
// field order; and the measurements that fill it: output checks, dot FLOPs and the scalar-work
// estimate that picks the reference.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "ptx/Results.h"
#include "runtime/Driver.h"

namespace fs = std::filesystem;
using namespace tl;
using ojson = nlohmann::ordered_json;

namespace {

RunResults sample() {
  RunResults r;
  r.toolVersion = "tilelab-dev build 1-2";
  r.timestamp = "2025-01-31T12:34:56Z";
  r.kernel = "softmax_kernel";
  r.source = "kernels/softmax.tl";
  r.sizes = {{"M", "256"}, {"N", "781"}, {"BLOCK_N", "1024"}, {"A_LAST", "1"}};  // launch order, not sorted
  r.grid = {256, 1, 1};
  r.numWarps = 4;
  r.dtypes = {{"x_ptr", "ptr<f32>"}, {"N", "i32"}};
  r.arch = "sm_90";
  r.ptxPath = "out/ptx/softmax.ptx";
  r.assembler = "nvJitLink 13.0";
  r.gpuRan = true;
  r.device = "NVIDIA H200 (sm_90, 132 SMs, L2 60 MiB, driver 13.0)";
  r.smCount = 132;
  r.runs = 100;
  r.medianMs = 0.0123;
  r.minMs = 0.0119;
  r.l2Flushed = true;
  r.bytes = 1599488;
  r.gbps = 130.04;
  r.flops = 2.0 * 4096 * 4096 * 4096;
  r.tflops = 12.5;
  r.registers = 24;
  r.sharedBytes = 512;
  r.localBytes = 8;
  r.spillStoreBytes = 4;
  r.spillLoadBytes = 4;
  r.blocksPerSM = 16;
  r.warpsPerSM = 64;
  r.compile = {1.25, 3.5, 12.75, 40.5, 0.25, 0.5, false, std::string(64, 'a')};
  r.check = "FAIL";
  r.reference = "tl-scalar";
  r.outputs = {{"out_ptr", false, NAN, INFINITY, 3, ""}, {"idx_ptr", true, 0, 0, 0, ""}};
  return r;
}

std::unique_ptr<CompiledKernel> compileKernel(const std::string& stem, const std::vector<LaunchOverride>& sets = {}) {
  std::ostringstream err;
  auto k = compileKernelFile(std::string(TL_SOURCE_DIR) + "/kernels/" + stem + ".tl", sets, err);
  EXPECT_TRUE(k) << err.str();
  return k;
}

}  // namespace

TEST(ResultsJson, RoundTripsEveryField) {
  RunResults r = sample();
  ojson j = resultsToJson(r);
  RunResults back = resultsFromJson(ojson::parse(j.dump()));
  // NaN != NaN, so compare the NaN field separately and the rest with ==.
  EXPECT_TRUE(std::isnan(back.outputs[0].maxAbsErr));
  EXPECT_EQ(back.outputs[0].maxRelErr, INFINITY);
  back.outputs[0].maxAbsErr = r.outputs[0].maxAbsErr = 0;
  EXPECT_EQ(back, r);
  EXPECT_EQ(back.sizes[3].first, "A_LAST");  // the launch's order survives
  EXPECT_EQ(j["check"]["outputs"][0]["max_abs_err"], "nan");
  EXPECT_DOUBLE_EQ(j["compile_ms"]["total"].get<double>(), 1.25 + 3.5 + 12.75 + 40.5 + 0.25 + 0.5);
}

// "assembler" (which assembler made the cubin) is written always; files written before it
// existed read as "", a non-string is named.
TEST(ResultsJson, AssemblerIsWrittenAndOptionalToRead) {
  ojson j = resultsToJson(sample());
  EXPECT_EQ(j["assembler"], "nvJitLink 13.0");
  j.erase("assembler");
  EXPECT_EQ(resultsFromJson(j).assembler, "");
  j["assembler"] = 7;
  try {
    resultsFromJson(j);
    ADD_FAILURE() << "a numeric assembler was accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("'assembler' is not a string"), std::string::npos) << e.what();
  }
}

TEST(ResultsJson, SkippedRunRoundTrips) {
  RunResults r;
  r.kernel = "k";
  r.source = "k.tl";
  r.gpuSkipped = "libcuda.so.1 not found (no NVIDIA driver)";
  RunResults back = resultsFromJson(ojson::parse(resultsToJson(r).dump()));
  EXPECT_EQ(back, r);
  EXPECT_EQ(back.check, "skipped");
  EXPECT_FALSE(back.gpuRan);
}

TEST(ResultsJson, ReaderNamesTheBadField) {
  auto expectError = [](ojson j, const std::string& words) {
    try {
      resultsFromJson(j);
      ADD_FAILURE() << "expected an error mentioning " << words;
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
    }
  };
  ojson good = resultsToJson(sample());
  ojson j = good;
  j["time"].erase("median_ms");
  expectError(j, "'time.median_ms' is missing");
  j = good;
  j["resources"]["registers"] = "many";
  expectError(j, "'resources.registers' is not an integer");
  j = good;
  j["schema_version"] = 2;
  expectError(j, "this reader knows version 1");
  j = good;
  j["grid"] = {1, 2};
  expectError(j, "'grid'");
  j = good;
  j["check"]["result"] = "MAYBE";
  expectError(j, "check.result");
  j = good;
  j["check"]["outputs"][1].erase("pass");
  expectError(j, "check.outputs[1].pass");
  expectError(ojson::array(), "is not an object");
  expectError(ojson("text"), "is not an object");
}

TEST(ResultsJson, WriteResultsMakesOneFilePerKernel) {
  std::string tmpl = (fs::temp_directory_path() / "tl-results-test.XXXXXX").string();
  fs::path dir = fs::path(mkdtemp(tmpl.data())) / "nested" / "results";
  std::string path = writeResults(sample(), dir.string());
  EXPECT_EQ(fs::path(path).filename(), "softmax.json");
  std::ifstream in(path);
  std::string text((std::istreambuf_iterator<char>(in)), {});
  ojson j = ojson::parse(text);
  EXPECT_EQ(j.begin().key(), "schema_version");  // documented order, not alphabetical
  EXPECT_EQ(j["tool"], "tl-ptx");
  RunResults back = resultsFromJson(j);
  EXPECT_EQ(back.kernel, "softmax_kernel");
  // Writing again replaces the file.
  RunResults r2 = sample();
  r2.medianMs = 1;
  writeResults(r2, dir.string());
  std::ifstream in2(path);
  EXPECT_EQ(resultsFromJson(ojson::parse(in2)).medianMs, 1);
  fs::remove_all(dir.parent_path().parent_path());
}

TEST(ResultsJson, PtxasReportRoundTrips) {
  PtxasInfo p;
  p.ran = p.ok = true;
  p.assembler = "nvJitLink 13.0";
  p.assemblerNote = "nvJitLink not used: $TL_NVJITLINK=/x cannot be loaded";
  p.registers = 40;
  p.sharedBytes = 4096;
  p.spillStoreBytes = 16;
  p.spillLoadBytes = 12;
  p.stackFrameBytes = 32;
  p.log = "ptxas info : Used 40 registers";
  PtxasInfo q = ptxasFromJson(ptxasToJson(p));
  EXPECT_EQ(q.ran, p.ran);
  EXPECT_EQ(q.ok, p.ok);
  EXPECT_EQ(q.assembler, p.assembler);
  EXPECT_EQ(q.assemblerNote, p.assemblerNote);
  EXPECT_EQ(q.registers, 40);
  EXPECT_EQ(q.sharedBytes, 4096);
  EXPECT_EQ(q.spillStoreBytes, 16);
  EXPECT_EQ(q.spillLoadBytes, 12);
  EXPECT_EQ(q.stackFrameBytes, 32);
  EXPECT_EQ(q.log, p.log);
  PtxasInfo empty = ptxasFromJson(nlohmann::json::array());
  EXPECT_FALSE(empty.ran);
  EXPECT_EQ(empty.registers, 0);
}

TEST(ResultsMeasure, CheckOutputs) {
  Memory ref, got;
  ref.add("in", DType::F32, {4}, false);
  Buffer& r = ref.add("out", DType::F32, {4}, true);
  for (int i = 0; i < 4; ++i) r.setF(i, i);
  Buffer& g = got.add("out", DType::F32, {4}, true);
  for (int i = 0; i < 4; ++i) g.setF(i, i);
  auto checks = checkOutputs(ref, got);
  ASSERT_EQ(checks.size(), 1u);  // inputs are not checked
  EXPECT_TRUE(checks[0].pass);
  g.setF(2, 7);
  checks = checkOutputs(ref, got);
  EXPECT_FALSE(checks[0].pass);
  EXPECT_EQ(checks[0].mismatches, 1);
  EXPECT_DOUBLE_EQ(checks[0].maxAbsErr, 5);
  Memory none;
  checks = checkOutputs(ref, none);
  EXPECT_EQ(checks[0].reason, "missing output");
}

TEST(ResultsMeasure, DotFlops) {
  auto mm = compileKernel("matmul");
  ASSERT_TRUE(mm);
  EXPECT_DOUBLE_EQ(dotFlops(*mm->ir, mm->launch), 2.0 * 200 * 136 * 100);  // from M, N, K
  // Without the names M/N/K the dot tiles count: 7x5 programs, ceil(100/16) = 7 steps of 32x32x16.
  LaunchConfig unnamed = mm->launch;
  unnamed.names.clear();
  EXPECT_DOUBLE_EQ(dotFlops(*mm->ir, unnamed), 7.0 * 5 * 7 * 2 * 32 * 32 * 16);
  auto va = compileKernel("vector_add");
  ASSERT_TRUE(va);
  EXPECT_EQ(dotFlops(*va->ir, va->launch), 0);
}

TEST(ResultsMeasure, ScalarWorkEstimateGrowsWithTheLaunch) {
  auto small = compileKernel("matmul");
  auto big = compileKernel("matmul", {{"M", "4096"}, {"N", "4096"}, {"K", "4096"}});
  ASSERT_TRUE(small && big);
  double s = estimateScalarOps(*small->ir, small->launch), b = estimateScalarOps(*big->ir, big->launch);
  EXPECT_GE(s, 200.0 * 136 * 100);  // at least the multiply-adds
  EXPECT_LT(s, 2e8);                // small enough for tl-scalar
  EXPECT_GE(b, 4096.0 * 4096 * 4096);
  auto va = compileKernel("vector_add");
  ASSERT_TRUE(va);
  double v = estimateScalarOps(*va->ir, va->launch);
  EXPECT_GE(v, 98432.0 * 3);
  EXPECT_LT(v, 98432.0 * 100);
}

TEST(ResultsMeasure, Timestamp) {
  std::string t = utcTimestamp();
  ASSERT_EQ(t.size(), 20u);
  EXPECT_EQ(t[4], '-');
  EXPECT_EQ(t[10], 'T');
  EXPECT_EQ(t.back(), 'Z');
}
