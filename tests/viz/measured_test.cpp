// Measured GPU results in the visualizer (viz/model/Measured.h): a folder of tl-ptx results
// files read recursively, each paired with the session's source by its SHA-256 and launch,
// never by kernel name; the notes that say why nothing is paired; the checked-in H200 results.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <unistd.h>

#include "runtime/Hash.h"
#include "viz/model/Measured.h"
#include "viz/model/Session.h"

namespace fs = std::filesystem;

namespace tl::viz {
namespace {

std::string kernelPath(const std::string& stem) { return std::string(TL_SOURCE_DIR) + "/kernels/" + stem + ".tl"; }

std::string readFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string softmaxHash() { return sha256Hex(readFile(kernelPath("softmax"))); }

// The launch a results document below was measured at: softmax with M=8, N=100.
LaunchConfig smallLaunch() {
  LaunchConfig launch;
  launch.numWarps = 4;
  launch.grid = {8, 1, 1};
  launch.names = {{"M", "8"}, {"N", "100"}, {"stride", "100"}, {"BLOCK_N", "128"}};
  return launch;
}

// A tl-ptx results document for the softmax at M=8, N=100; `hash` its source_sha256 ("": none).
std::string result(const std::string& hash, const std::string& extra = "") {
  return R"J({"schema_version": 1, "tool": "tl-ptx", )J" + extra + R"J("kernel": "softmax_kernel", "source": "kernels/softmax.tl", )J" +
         (hash.empty() ? std::string() : "\"source_sha256\": \"" + hash + "\", ") +
         R"J("sizes": {"M": "8", "N": "100", "stride": "100", "BLOCK_N": "128"}, "grid": [8, 1, 1], "num_warps": 4,
  "gpu": {"device": "NVIDIA H200 (sm_90, 132 SMs)"}, "time": {"median_ms": 0.0123, "min_ms": 0.012},
  "throughput": {"bytes": 6400, "gb_per_s": 520.3}, "resources": {"registers": 30, "blocks_per_sm": 16}})J";
}

class MeasuredFiles : public ::testing::Test {
 protected:
  fs::path dir;
  void SetUp() override {
    dir = fs::temp_directory_path() / ("tl_viz_measured_" + std::to_string(::getpid()) + "_" +
                                       ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir);
    fs::create_directories(dir);
  }
  void TearDown() override { fs::remove_all(dir); }
  void write(const fs::path& rel, const std::string& text) {
    fs::create_directories((dir / rel).parent_path());
    std::ofstream(dir / rel) << text;
  }
  MeasuredSet load(const std::string& hash = softmaxHash(), const LaunchConfig& launch = smallLaunch()) {
    return loadMeasured(dir.string(), hash, kernelPath("softmax"), launch);
  }
};

TEST_F(MeasuredFiles, MissingFolderAndEmptyFolder) {
  MeasuredSet none = loadMeasured("", softmaxHash(), kernelPath("softmax"), smallLaunch());
  EXPECT_FALSE(none.run);
  EXPECT_TRUE(none.problems.empty());
  EXPECT_NE(none.note.find("no results folder"), std::string::npos) << none.note;
  MeasuredSet empty = load();
  EXPECT_FALSE(empty.run);
  EXPECT_TRUE(empty.unfused.empty());
  EXPECT_TRUE(empty.timings.empty());
  EXPECT_TRUE(empty.problems.empty());
  EXPECT_NE(empty.note.find("no results file in"), std::string::npos) << empty.note;
  EXPECT_EQ(findResultsDir(kernelPath("softmax"), (dir / "nope").string()), "");
  EXPECT_EQ(findResultsDir(kernelPath("softmax"), dir.string()), dir.string());
}

// Any file name, any depth: the hash and the launch decide, not the file's or kernel's name.
TEST_F(MeasuredFiles, PairedByHashAndLaunchFromAnyFileName) {
  write("deep/er/whatever.json", result(softmaxHash()));
  MeasuredSet m = load();
  ASSERT_TRUE(m.run) << m.note;
  EXPECT_DOUBLE_EQ(m.run->medianMs, 0.0123);
  EXPECT_EQ(m.run->registers, 30);
  EXPECT_EQ(m.run->sourceSha256, softmaxHash());
  EXPECT_EQ(m.run->grid[0], 8);
  EXPECT_TRUE(m.note.empty());
}

// tl-cpu's results (the CPU column) pair by the same rule, never as the GPU's run; the most
// threads win; another launch or source is not paired.
TEST_F(MeasuredFiles, CpuResultsAreTheCpuColumn) {
  auto cpuDoc = [](const std::string& hash, int threads, double ms, const std::string& n = "100") {
    return R"J({"schema_version": 1, "tool": "tl-cpu", "kernel": "softmax_kernel", "source": "kernels/softmax.tl",
      "source_sha256": ")J" + hash + R"J(", "sizes": {"M": "8", "N": ")J" + n + R"J(", "stride": "100", "BLOCK_N": "128"},
      "grid": [8, 1, 1], "programs": 8, "cpu": {"model": "Xeon", "isa": "avx512", "threads": )J" + std::to_string(threads) +
           R"J(}, "time": {"runs": 20, "median_ms": )J" + std::to_string(ms) + R"J(, "min_ms": 0.001},
      "throughput": {"bytes": 6400, "gb_per_s": 3.2}})J";
  };
  write("cpu/one.json", cpuDoc(softmaxHash(), 1, 0.02));
  write("cpu/all.json", cpuDoc(softmaxHash(), 16, 0.005));
  write("cpu/other_launch.json", cpuDoc(softmaxHash(), 32, 0.004, "101"));
  write("cpu/other_source.json", cpuDoc(sha256Hex("x"), 64, 0.003));
  MeasuredSet m = load();
  EXPECT_FALSE(m.run) << "a CPU result is not the GPU's";
  ASSERT_TRUE(m.cpuRun);
  EXPECT_EQ(m.cpuRun->threads, 16);
  EXPECT_DOUBLE_EQ(m.cpuRun->medianMs, 0.005);
  EXPECT_EQ(m.cpuRun->isa, "avx512");
  EXPECT_EQ(m.cpuRun->device, "Xeon");
  write("gpu.json", result(softmaxHash()));
  m = load();
  ASSERT_TRUE(m.run);
  EXPECT_DOUBLE_EQ(m.run->medianMs, 0.0123);
  ASSERT_TRUE(m.cpuRun);
}

// The bug this fixes: a student's own softmax_kernel (same kernel name, same file name) got the
// shipped softmax's times. Another source's hash is never paired, and the note says so.
TEST_F(MeasuredFiles, SameNamedKernelWithAnotherSourceIsNotPaired) {
  write("res/warm/softmax.json", result(softmaxHash()));
  std::string studentSource = readFile(kernelPath("softmax")) + "\n# my own softmax_kernel\n";
  MeasuredSet m = load(sha256Hex(studentSource));
  EXPECT_FALSE(m.run);
  EXPECT_NE(m.note.find("no measurement for this source"), std::string::npos) << m.note;
  EXPECT_NE(m.note.find("another source"), std::string::npos) << m.note;
}

TEST_F(MeasuredFiles, WithoutARecordedHashNothingIsPaired) {
  write("softmax.json", result(""));
  MeasuredSet m = load();
  EXPECT_FALSE(m.run);
  EXPECT_NE(m.note.find("before tl-ptx recorded source_sha256"), std::string::npos) << m.note;
}

TEST_F(MeasuredFiles, SameSourceAtAnotherLaunchIsNotPairedAndSaysWhy) {
  write("softmax.json", result(softmaxHash()));
  LaunchConfig launch = smallLaunch();
  launch.names[1].second = "101";
  MeasuredSet m = load(softmaxHash(), launch);
  EXPECT_FALSE(m.run);
  EXPECT_NE(m.note.find("another launch"), std::string::npos) << m.note;
  EXPECT_NE(m.note.find("N: 100 measured, 101 here"), std::string::npos) << m.note;
  // The grid as recorded is part of the launch (a --grid override changes it).
  launch = smallLaunch();
  launch.grid = {4, 1, 1};
  m = load(softmaxHash(), launch);
  EXPECT_FALSE(m.run);
  EXPECT_NE(m.note.find("grid: (8,1,1) measured, (4,1,1) here"), std::string::npos) << m.note;
  launch = smallLaunch();
  launch.numWarps = 8;
  EXPECT_FALSE(load(softmaxHash(), launch).run);
}

TEST_F(MeasuredFiles, PairMeasurementRules) {
  MeasuredRun r;
  std::string err;
  ASSERT_TRUE(measuredFromJson(nlohmann::json::parse(result("abc")), "x.json", r, &err)) << err;
  EXPECT_TRUE(pairMeasurement(r, "abc", smallLaunch()).paired);
  Pairing other = pairMeasurement(r, "abd", smallLaunch());
  EXPECT_FALSE(other.paired);
  EXPECT_FALSE(other.sameSource);
  EXPECT_FALSE(pairMeasurement(r, "", smallLaunch()).paired);  // this source's hash unknown
  LaunchConfig launch = smallLaunch();
  launch.names[1].second = "100.0";  // numbers compare as numbers
  EXPECT_TRUE(pairMeasurement(r, "abc", launch).paired);
  launch.names[1].second = "4096";
  Pairing l = pairMeasurement(r, "abc", launch);
  EXPECT_FALSE(l.paired);
  EXPECT_TRUE(l.sameSource);
  EXPECT_TRUE(pairMeasurement(r, "abc", launch, /*checkLaunch=*/false).paired);
  r.sourceSha256.clear();
  EXPECT_FALSE(pairMeasurement(r, "", smallLaunch()).paired);  // two unknowns never pair
}

// A cold- and a warm-cache run of the same source and launch: the warm one is shown.
TEST_F(MeasuredFiles, WarmRunPreferred) {
  write("res/cold/a.json", result(softmaxHash(), R"("compile_ms": {"cache_hit": false}, )"));
  write("res/warm/b.json", result(softmaxHash(), R"("compile_ms": {"cache_hit": true}, )"));
  MeasuredSet m = load();
  ASSERT_TRUE(m.run);
  EXPECT_TRUE(m.run->warmCache);
  EXPECT_NE(m.run->file.find("b.json"), std::string::npos);
}

TEST_F(MeasuredFiles, CorruptFilesAreNamedAndTheRestIsRead) {
  write("res/warm/softmax.json", result(softmaxHash()));
  write("unfused/softmax_N100.json", result(softmaxHash(), R"("unfused": {}, )"));
  write("unfused/other_source.json", result(std::string(64, 'f'), R"("unfused": {}, )"));
  write("unfused/softmax_broken.json", "{\"kernel\": ");
  write("unfused/softmax_notime.json",
        R"({"schema_version": 1, "tool": "tl-ptx", "kernel": "softmax_kernel", "time": {"median_ms": "fast"}})");
  write("notes.json", R"({"something": "else"})");  // not a results file: ignored
  write("compare.json", R"({"rows": [
     {"kernel": "softmax", "shape": "8x100", "tilelab_ms": 0.0123, "triton_ms": 0.02, "torch_ms": 0.03,
      "tilelab": )" + result(softmaxHash()) + R"(},
     {"kernel": "softmax", "shape": "unhashed", "tilelab_ms": 0.5, "tilelab": )" + result("") + R"(},
     {"kernel": "softmax", "shape": "no time", "tilelab": )" + result(softmaxHash()).replace(result(softmaxHash()).find("0.0123"), 6, "0") + R"(},
     {"kernel": "vector_add", "shape": "2^28", "tilelab_ms": 0.7},
     17]})");
  MeasuredSet m = load();
  ASSERT_TRUE(m.run);
  EXPECT_FALSE(m.run->unfused);
  ASSERT_EQ(m.unfused.size(), 1u);  // the broken ones are problems, the other source is not this one
  EXPECT_TRUE(m.unfused[0].unfused);
  ASSERT_EQ(m.timings.size(), 1u);  // the unhashed row is not paired
  EXPECT_EQ(m.timings[0].shape, "8x100");
  EXPECT_DOUBLE_EQ(m.timings[0].tritonMs, 0.02);
  EXPECT_NE(std::find(m.timings[0].sets.begin(), m.timings[0].sets.end(), "N=100"), m.timings[0].sets.end());
  EXPECT_NE(std::find(m.timings[0].sets.begin(), m.timings[0].sets.end(), "num_warps=4"), m.timings[0].sets.end());
  std::string problems;
  for (const auto& p : m.problems) problems += p + "\n";
  EXPECT_NE(problems.find("softmax_broken.json: not valid JSON"), std::string::npos) << problems;
  EXPECT_NE(problems.find("softmax_notime.json"), std::string::npos) << problems;
  EXPECT_NE(problems.find("no tilelab_ms"), std::string::npos) << problems;
  EXPECT_EQ(problems.find("notes.json"), std::string::npos) << problems;
}

TEST_F(MeasuredFiles, CorruptCompareAndWrongTypes) {
  write("res/warm/softmax.json", "[1, 2, 3]");
  write("compare.json", "{\"rows\": 5}");
  MeasuredSet m = load();
  EXPECT_FALSE(m.run);
  EXPECT_EQ(m.problems.size(), 1u);  // the array is not a results file; "rows" is not an array
  write("compare.json", "\xff\xfe");
  m = load();
  EXPECT_EQ(m.problems.size(), 1u);
}

// ----- through the Session ------------------------------------------------------------------

SessionInputs softmaxInputs() {
  SessionInputs in;
  in.path = kernelPath("softmax");
  in.predictTimings = false;
  return in;
}

// The checked-in H200 results carry source_sha256 where the measured source is provably
// today's kernels/softmax.tl (viz/tools/pair_checked_in_results.py): the default launch pairs.
TEST(MeasuredSession, CheckedInResultsPairWithTheShippedSoftmax) {
  std::string warm = std::string(TL_SOURCE_DIR) + "/bench/results/gpu/res/warm/softmax.json";
  if (!fs::exists(warm)) GTEST_SKIP() << "no " << warm << " in this checkout";
  auto doc = nlohmann::json::parse(readFile(warm));
  if (doc.value("source_sha256", "") != softmaxHash())
    GTEST_SKIP() << "kernels/softmax.tl changed since it was measured: correctly unpaired";
  SessionInputs in = softmaxInputs();
  in.measuredDir = std::string(TL_SOURCE_DIR) + "/bench/results/gpu";
  auto d = runSession(in);
  ASSERT_TRUE(d->errors.empty());
  ASSERT_TRUE(d->measured.has_value()) << d->measuredNote;
  EXPECT_EQ(d->sourceSha256, softmaxHash());
  EXPECT_EQ(d->measured->sizes.at("N"), "781");
  EXPECT_TRUE(d->measured->warmCache);
  EXPECT_TRUE(d->report.contains("measured"));
  EXPECT_FALSE(d->timings.empty());  // compare.json's softmax rows
  for (const auto& t : d->timings) EXPECT_FALSE(t.predictError.empty());  // predictions were off
}

// A student's own softmax_kernel in kernels/softmax.tl of their folder, one comment different:
// no H200 times from the shipped results, and the panels say why.
TEST(MeasuredSession, StudentsOwnSoftmaxGetsNoMeasurement) {
  fs::path dir = fs::temp_directory_path() / ("tl_viz_student_" + std::to_string(::getpid()));
  fs::create_directories(dir / "kernels");
  std::string path = (dir / "kernels" / "softmax.tl").string();
  std::ofstream(path) << "# my softmax\n" << readFile(kernelPath("softmax"));
  SessionInputs in = softmaxInputs();
  in.path = path;
  in.measuredDir = std::string(TL_SOURCE_DIR) + "/bench/results/gpu";
  auto d = runSession(in);
  fs::remove_all(dir);
  ASSERT_TRUE(d->errors.empty());
  EXPECT_EQ(d->kernelName, "softmax_kernel");
  EXPECT_FALSE(d->measured.has_value());
  EXPECT_TRUE(d->timings.empty());
  EXPECT_TRUE(d->measuredUnfused.empty());
  EXPECT_FALSE(d->report.contains("measured"));
  EXPECT_NE(d->measuredNote.find("no measurement for this source"), std::string::npos) << d->measuredNote;
}

// An edited text is another source: unpaired, and the note says it was edited.
TEST(MeasuredSession, EditedSourceIsNotPaired) {
  SessionInputs in = softmaxInputs();
  in.measuredDir = std::string(TL_SOURCE_DIR) + "/bench/results/gpu";
  in.source = readFile(in.path) + "\n# an edit\n";
  auto d = runSession(in);
  ASSERT_TRUE(d->errors.empty());
  EXPECT_TRUE(d->sourceEdited);
  EXPECT_FALSE(d->measured.has_value());
  EXPECT_TRUE(d->timings.empty());
  EXPECT_NE(d->measuredNote.find("edited"), std::string::npos) << d->measuredNote;
  // The same text as the file is not an edit.
  in.source = readFile(in.path);
  EXPECT_FALSE(runSession(in)->sourceEdited);
}

TEST_F(MeasuredFiles, SessionPredictsMeasuredShapes) {
  write("compare.json", R"({"rows": [{"kernel": "softmax", "shape": "8x100", "tilelab_ms": 0.0123,
      "tilelab": )" + result(softmaxHash()) + R"(},
     {"kernel": "softmax", "shape": "bad", "tilelab_ms": 1, "tilelab": )" +
                            result(softmaxHash()).replace(result(softmaxHash()).find("\"M\": \"8\""), 8, "\"M\": \"undefined_thing\"") +
                            R"(}]})");
  SessionInputs in = softmaxInputs();
  in.measuredDir = dir.string();
  in.predictTimings = true;
  std::vector<Phase> phases;
  auto d = runSession(in, 1, [&](std::shared_ptr<const SessionData> s) { phases.push_back(s->phase); });
  ASSERT_TRUE(d->errors.empty());
  ASSERT_EQ(d->timings.size(), 2u);
  EXPECT_TRUE(d->timings[0].predictError.empty()) << d->timings[0].predictError;
  EXPECT_GT(d->timings[0].predictedMs, 0);
  EXPECT_FALSE(d->timings[1].predictError.empty());
  EXPECT_EQ(d->timings[1].predictedMs, 0);
  // Compiled, then Simulated without the predictions, then the final result.
  ASSERT_EQ(phases.size(), 2u);
  EXPECT_EQ(phases[1], Phase::Simulated);
}

}  // namespace
}  // namespace tl::viz
