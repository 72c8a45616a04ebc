// tl-sim's command line (stages/sim/main.cpp): it lists only options that do something, has
// --version, --race-check / --no-race-check, --full, --ncu and --measured (was --results), says
// so when a --measured file has no GPU run, and rejects a file that is not a results file.
// Runs the built executable (TL_BINARY_DIR/stages/sim/tl-sim).
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include <sys/wait.h>
#include <unistd.h>

#include "runtime/Hash.h"

namespace tl {
namespace {

const std::string kTlSim = std::string(TL_BINARY_DIR) + "/stages/sim/tl-sim";

struct CliRun {
  int rc = -1;
  std::string out;  // stdout and stderr
};

CliRun run(const std::string& args) {
  CliRun r;
  const std::string cmd = "cd '" + std::string(TL_SOURCE_DIR) + "' && '" + kTlSim + "' " + args + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return r;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), n);
  const int status = pclose(p);
  r.rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

class SimCli : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!std::filesystem::exists(kTlSim)) GTEST_SKIP() << kTlSim << " is not built (cmake --build ... --target tl-sim)";
  }
  void TearDown() override {
    std::error_code ec;
    std::filesystem::remove_all(dir(), ec);
  }
  static std::filesystem::path dir() {
    return std::filesystem::temp_directory_path() / ("tl_sim_cli_" + std::to_string(::getpid()));
  }
  // A file in the test's temporary folder.
  std::string write(const std::string& name, const std::string& text) {
    std::filesystem::create_directories(dir());
    const auto path = dir() / name;
    std::ofstream(path) << text;
    return path.string();
  }
};

// Quick runs: no unfused comparison, the register estimate (no ptxas).
const std::string kFast = " --no-unfused --registers-from estimate ";

TEST_F(SimCli, ListsOnlyOptionsThatDoSomething) {
  CliRun r = run("--help");
  EXPECT_EQ(r.rc, 0) << r.out;
  for (const char* present : {"--measured", "--race-check", "--no-race-check", "--full", "--ncu", "--version",
                              "--set", "--grid", "--num-warps", "--report", "--gpu", "--keep-layouts"})
    EXPECT_NE(r.out.find(present), std::string::npos) << present << "\n" << r.out;
  for (const char* absent : {"--out-dir", "--print-ir", "--atol", "--rtol", "--results", "--expect", "--reference",
                             "--no-check"})
    EXPECT_EQ(r.out.find(std::string(absent) + " "), std::string::npos) << absent << "\n" << r.out;
  EXPECT_NE(run("kernels/vector_add.tl --results x.json").rc, 0);
}

TEST_F(SimCli, Version) {
  CliRun r = run("--version");
  EXPECT_EQ(r.rc, 0);
  EXPECT_NE(r.out.find(releaseVersion()), std::string::npos) << r.out;
}

TEST_F(SimCli, RaceCheckPairAndSummaryOptions) {
  CliRun on = run("kernels/softmax.tl --race-check" + kFast);
  EXPECT_EQ(on.rc, 0) << on.out;
  CliRun off = run("kernels/softmax.tl --no-race-check" + kFast);
  EXPECT_EQ(off.rc, 0) << off.out;
  // One screen by default: the Nsight Compute names and the per-instruction rows only on request.
  EXPECT_EQ(off.out.find("dram__bytes_read.sum"), std::string::npos) << off.out;
  EXPECT_EQ(off.out.find("memory instructions:"), std::string::npos) << off.out;
  EXPECT_LE(std::count(off.out.begin(), off.out.end(), '\n'), 28) << off.out;
  CliRun more = run("kernels/softmax.tl --full --ncu" + kFast);
  EXPECT_NE(more.out.find("dram__bytes_read.sum"), std::string::npos) << more.out;
  EXPECT_NE(more.out.find("memory instructions:"), std::string::npos) << more.out;
}

TEST_F(SimCli, MeasuredFileWithoutAGpuRunSaysSo) {
  const std::string file = write("nogpu.json", R"({"schema_version": 1, "tool": "tl-ptx", "kernel": "vector_add",
    "source": "kernels/vector_add.tl", "sizes": {}, "grid": [97, 1, 1], "num_warps": 4,
    "gpu": {"ran": false, "skipped": "no CUDA driver", "device": "", "sm_count": 0},
    "time": {"runs": 0, "median_ms": null, "min_ms": null, "l2_flushed": false},
    "resources": {"registers": 26, "blocks_per_sm": 0}})");
  CliRun r = run("kernels/vector_add.tl --measured '" + file + "'" + kFast);
  EXPECT_EQ(r.rc, 0) << r.out;
  EXPECT_NE(r.out.find("measured: none: the results file has no GPU run"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("us median"), std::string::npos) << r.out;
  // Under --quiet too.
  CliRun q = run("kernels/vector_add.tl -q --measured '" + file + "'" + kFast);
  EXPECT_NE(q.out.find("measured: none:"), std::string::npos) << q.out;
  // Not a results file: an error, exit 1.
  CliRun bad = run("kernels/vector_add.tl --measured '" + write("bad.json", "[1, 2]") + "'" + kFast);
  EXPECT_EQ(bad.rc, 1) << bad.out;
  EXPECT_NE(bad.out.find("is not a tl-ptx results file"), std::string::npos) << bad.out;
}

TEST_F(SimCli, MeasuredFolderPairsByKernelFileStem) {
  CliRun r = run("kernels/softmax.tl --measured bench/results/gpu/res/warm" + kFast);
  EXPECT_EQ(r.rc, 0) << r.out;
  EXPECT_NE(r.out.find("us median"), std::string::npos) << r.out;
  const std::string empty = std::filesystem::path(write("x.json", "{}")).parent_path().string();
  CliRun none = run("kernels/softmax.tl --measured '" + empty + "'" + kFast);
  EXPECT_EQ(none.rc, 0) << none.out;
  EXPECT_NE(none.out.find("measured: none: no "), std::string::npos) << none.out;
}

}  // namespace
}  // namespace tl
