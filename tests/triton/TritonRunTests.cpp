// The Triton-spelled kernel collection (kernels/triton/*.tl) through every CPU stage.
//
// For every kernel MANIFEST.md marks "passes", at its default launch and at a second size
// (kAltSizes below: other ragged sizes, or the puzzle's own):
//   ScalarVsOracle   tl-scalar on the front end's IR against the kernel's double-precision
//                    oracle (TritonOracles.h), every output, the dtype's tolerance;
//   BlockVsScalar    tl-block on the IR after the block pipeline against tl-scalar;
//   ThreadVsScalar   the thread IR at num_warps 1, 2, 4 and 8 on the warp executor (shared-
//                    memory race detection on) against tl-scalar, compiled both ways: with the
//                    automatic layout conversions and with --keep-layouts;
//   SimReport        the tl-sim executable (default launch) exits 0 and writes a JSON report
//                    with a predicted time.
// Compilation reuses tests/e2e/Harness.h (Compiled, optimizedCopy, runBlockChecked); a kernel
// that fails to compile or stops fails its own tests with the located diagnostics.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <tuple>

#include <unistd.h>

#include <nlohmann/json.hpp>

#include "../e2e/Harness.h"
#include "Manifest.h"
#include "TritonKernels.h"
#include "TritonOracles.h"
#include "scalar/ScalarInterpreter.h"
#include "sim/ThreadExecutor.h"
#include "thread/Pipeline.h"

namespace tl::triton_tests {
namespace {

using Param = std::tuple<std::string, Variant>;

std::string paramName(const testing::TestParamInfo<Param>& info) {
  return std::get<0>(info.param) + "_" + variantName(std::get<1>(info.param));
}

std::vector<Param> passingCases() {
  std::vector<Param> out;
  for (const std::string& stem : passingKernels())
    for (Variant v : {Variant::Default, Variant::Alt}) out.emplace_back(stem, v);
  return out;
}

// "out: 12 of 200 elements outside |got - ref| <= ...; worst at element 7: expected 1, got 2".
std::string describe(const Comparison& c, const Buffer& ref, const Buffer& got) {
  std::ostringstream os;
  os << c.name << ": ";
  if (!c.reason.empty()) return os.str() + c.reason;
  os << c.mismatches << " of " << got.numel() << " elements outside |got - ref| <= " << c.atol
     << " + " << c.rtol << " * |ref|; max abs err " << c.maxAbsErr;
  if (c.worstIndex >= 0 && c.worstIndex < got.numel())
    os << "; worst at element " << c.worstIndex << ": expected " << ref.getF(c.worstIndex)
       << ", got " << got.getF(c.worstIndex);
  return os.str();
}

// Compares every output of `got` with the scalar run's; returns how many were compared.
int expectOutputsMatch(const ScalarResult& ref, const Memory& got, const std::string& what) {
  int checked = 0;
  for (const Buffer& want : ref.memory.buffers()) {
    if (!want.output) continue;
    const Buffer* g = got.find(want.name);
    if (!g) {
      ADD_FAILURE() << what << ": no buffer " << want.name;
      continue;
    }
    ToleranceOverride tol;
    markDotPrecisions(*ref.compiled.fn, tol);  // tf32 results compare at tf32's precision
    Comparison c = compareBuffers(want, *g, tol);
    EXPECT_TRUE(c.pass) << what << " vs tl-scalar: " << describe(c, want, *g);
    ++checked;
  }
  return checked;
}

class TritonKernel : public testing::TestWithParam<Param> {};
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(TritonKernel);

TEST_P(TritonKernel, ScalarVsOracle) {
  const auto& [stem, variant] = GetParam();
  const TritonOracle* oracle = findTritonOracle(stem);
  ASSERT_NE(oracle, nullptr) << "no oracle for kernels/triton/" << stem << ".tl";
  const ScalarResult& run = scalarResult(stem, variant);
  ASSERT_TRUE(run.error.empty()) << run.error;
  OracleResult expected;
  try {
    expected = oracle->compute(Memory::fromLaunch(run.compiled.launch), Launch(run.compiled.launch));
  } catch (const std::exception& e) {
    FAIL() << "the oracle for " << stem << " failed: " << e.what();
  }
  std::set<std::string> outputs;
  for (const Buffer& got : run.memory.buffers()) {
    if (!got.output) continue;
    outputs.insert(got.name);
    auto it = expected.find(got.name);
    if (it == expected.end()) {
      ADD_FAILURE() << "output '" << got.name << "' is not computed by the oracle of " << stem;
      continue;
    }
    ASSERT_EQ(static_cast<int64_t>(it->second.size()), got.numel()) << got.name;
    Buffer ref = got;  // the oracle's values rounded to the output's dtype
    for (int64_t i = 0; i < ref.numel(); ++i) ref.setF(i, it->second[static_cast<size_t>(i)]);
    ToleranceOverride tol;
    markDotPrecisions(*run.compiled.fn, tol);  // Triton's default tf32 dots: the oracle is exact
    Comparison c = compareBuffers(ref, got, tol);
    EXPECT_TRUE(c.pass) << "tl-scalar vs oracle (" << oracle->summary << "), "
                        << variantName(variant) << " size: " << describe(c, ref, got);
  }
  EXPECT_FALSE(outputs.empty()) << stem << ": the launch marks no buffer output=True";
  for (const auto& entry : expected)
    EXPECT_TRUE(outputs.count(entry.first))
        << stem << ": the oracle computes '" << entry.first << "' but the launch does not mark it output=True";
}

TEST_P(TritonKernel, BlockVsScalar) {
  const auto& [stem, variant] = GetParam();
  const ScalarResult& ref = scalarResult(stem, variant);
  ASSERT_TRUE(ref.error.empty()) << ref.error;
  std::string error;
  std::unique_ptr<Function> opt = e2e::optimizedCopy(*ref.compiled.fn, error);
  ASSERT_NE(opt, nullptr) << error;
  Memory memory = Memory::fromLaunch(ref.compiled.launch);
  ASSERT_TRUE(e2e::runBlockChecked(ref.compiled, *opt, memory, error)) << error;
  EXPECT_GT(expectOutputsMatch(ref, memory, "tl-block"), 0);
}

INSTANTIATE_TEST_SUITE_P(Manifest, TritonKernel, testing::ValuesIn(passingCases()), paramName);

// The warp executor at four block sizes.
using ThreadParam = std::tuple<std::string, Variant, int, bool>;  // kernel, size, warps, keep layouts

std::string threadParamName(const testing::TestParamInfo<ThreadParam>& info) {
  return std::get<0>(info.param) + "_" + variantName(std::get<1>(info.param)) + "_w" +
         std::to_string(std::get<2>(info.param)) + (std::get<3>(info.param) ? "_keep_layouts" : "");
}

std::vector<ThreadParam> threadCases() {
  std::vector<ThreadParam> out;
  for (const auto& [stem, variant] : passingCases())
    for (int w : {1, 2, 4, 8})
      for (bool keep : {false, true}) out.emplace_back(stem, variant, w, keep);
  return out;
}

class TritonThread : public testing::TestWithParam<ThreadParam> {};
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(TritonThread);

TEST_P(TritonThread, ThreadVsScalar) {
  const auto& [stem, variant, numWarps, keepLayouts] = GetParam();
  const ScalarResult& ref = scalarResult(stem, variant);
  ASSERT_TRUE(ref.error.empty()) << ref.error;
  ThreadCompilation tc;
  try {
    tc = compileToThreadIR(*ref.compiled.fn, ref.compiled.launch, ThreadCompileOptions{numWarps, keepLayouts});
  } catch (const IRError& e) {
    FAIL() << "internal compiler error:\n"
           << renderDiagnostic(ref.compiled.file.get(), Severity::Error, e.loc, e.what());
  } catch (const RuntimeError& e) {
    FAIL() << renderDiagnostic(ref.compiled.file.get(), Severity::Error, e.loc, e.what());
  }
  ASSERT_EQ(tc.threadIR->numWarps, numWarps);
  Memory memory = Memory::fromLaunch(ref.compiled.launch);
  try {
    runThreadIR(*tc.threadIR, ref.compiled.launch, memory);
  } catch (const RuntimeError& e) {
    FAIL() << "tl-thread stopped:\n"
           << renderDiagnostic(ref.compiled.file.get(), Severity::Error, e.loc, e.what());
  } catch (const IRError& e) {
    FAIL() << "tl-thread rejected the IR:\n"
           << renderDiagnostic(ref.compiled.file.get(), Severity::Error, e.loc, e.what());
  }
  EXPECT_GT(expectOutputsMatch(ref, memory, "tl-thread, " + std::to_string(numWarps) + " warps"), 0);
}

INSTANTIATE_TEST_SUITE_P(Manifest, TritonThread, testing::ValuesIn(threadCases()), threadParamName);

// tl-sim, the executable, on the default launch.
class TritonSim : public testing::TestWithParam<std::string> {};
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(TritonSim);

TEST_P(TritonSim, SimReport) {
  const std::string& stem = GetParam();
  const std::string tlSim = std::string(TL_BINARY_DIR) + "/stages/sim/tl-sim";
  ASSERT_TRUE(std::filesystem::exists(tlSim)) << tlSim << " is not built";
  const std::filesystem::path report =
      std::filesystem::temp_directory_path() /
      ("tl_triton_sim_" + stem + "_" + std::to_string(getpid()) + ".json");  // one per process
  std::filesystem::remove(report);
  const std::string cmd = "'" + tlSim + "' '" + kernelPath(stem) + "' -q --no-progress " +
                          "--registers-from estimate --report '" + report.string() + "' 2>&1";
  FILE* pipe = popen(cmd.c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  std::string output;
  char buf[4096];
  while (size_t n = fread(buf, 1, sizeof buf, pipe)) output.append(buf, n);
  const int status = pclose(pipe);
  ASSERT_EQ(status, 0) << cmd << "\n" << output;
  std::ifstream in(report);
  ASSERT_TRUE(in) << "tl-sim wrote no report: " << output;
  nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << "the report is not JSON";
  EXPECT_EQ(j.value("tool", ""), "tl-sim");
  ASSERT_TRUE(j.contains("timing") && j["timing"].contains("time_us")) << j.dump(1).substr(0, 2000);
  EXPECT_GT(j["timing"]["time_us"].get<double>(), 0.0);
  std::filesystem::remove(report);
}

INSTANTIATE_TEST_SUITE_P(Manifest, TritonSim, testing::ValuesIn(passingKernels()),
                         [](const testing::TestParamInfo<std::string>& info) { return info.param; });

}  // namespace
}  // namespace tl::triton_tests
