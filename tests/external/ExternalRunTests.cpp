// Real Triton kernels (tests/external/*.tl) against README.md's status table.
//
//   Readme.ListsEveryKernelOnce      every .tl file has exactly one row and every row a file;
//   Readme.EveryKernelNamesItsOrigin every file's header names its origin, commit and license;
//   Failing.StillFailsAsQuoted       a `fails` kernel compiles and a CPU stage still stops with
//                                    the quoted error;
//   Blocked.StillFailsAsQuoted       a `blocked` kernel still fails in the front end (or its
//                                    @launch) with the error the README quotes, so the table
//                                    cannot go stale: fixing a construct fails this test until
//                                    the row says `runs` (and then the kernel must run);
//   External.ScalarVsOracle          tl-scalar against the kernel's oracle (ExternalOracles.h)
//                                    (`runs` rows and `fails: tl-thread` rows, as BlockVsScalar);
//   External.OracleCatchesOneWrongElement
//                                    the same comparison fails when one element of tl-scalar's
//                                    output is changed by a few tolerances (the check can fail);
//   External.BlockVsScalar           tl-block on the optimized block IR against tl-scalar;
//   ExternalThread.ThreadVsScalar    the warp executor at num_warps 1 and 4 against tl-scalar;
//   ExternalOracleSelf.PhiloxKnownAnswers
//                                    the seeded-dropout oracle's Philox against Random123.
// Each runs at the kernel's own @launch and at a second size (altOverrides in
// ExternalKernels.cpp). Only rows marked `runs` are run.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <set>
#include <sstream>
#include <stdexcept>
#include <tuple>

#include "ExternalKernels.h"
#include "ExternalOracles.h"
#include "block/BlockInterpreter.h"
#include "ir/Pass.h"
#include "sim/ThreadExecutor.h"
#include "thread/Pipeline.h"

namespace tl::external {
namespace {

// The README's rows (empty when it is unreadable: Readme.ListsEveryKernelOnce then fails).
std::vector<ReadmeRow> rows() {
  std::string problem;
  return readReadme(problem);
}

std::vector<std::string> stems(Status status) {
  std::vector<std::string> out;
  for (const ReadmeRow& r : rows())
    if (r.status == status) out.push_back(r.stem);
  return out;
}

const ReadmeRow& rowOf(const std::string& stem) {
  static const std::vector<ReadmeRow> table = rows();
  for (const ReadmeRow& r : table)
    if (r.stem == stem) return r;
  throw std::runtime_error("no README.md row for " + stem);
}

std::string identifier(std::string s) {
  for (char& c : s)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return s;
}
std::string paramName(const testing::TestParamInfo<std::string>& info) { return identifier(info.param); }

// The kernels tl-scalar and tl-block run: `runs` rows, and `fails: tl-thread` rows (the oracle
// and tl-block are checked for them too; only the executor is not run).
std::vector<std::string> cpuStems() {
  std::vector<std::string> out;
  for (const ReadmeRow& r : rows())
    if (r.status == Status::Runs || (r.status == Status::Fails && r.stage == "tl-thread")) out.push_back(r.stem);
  return out;
}

using SizedParam = std::tuple<std::string, Size>;
std::vector<SizedParam> sizedCases(const std::vector<std::string>& kernels) {
  std::vector<SizedParam> out;
  for (const std::string& stem : kernels)
    for (Size s : {Size::Own, Size::Alt}) out.emplace_back(stem, s);
  return out;
}
std::string sizedName(const testing::TestParamInfo<SizedParam>& info) {
  return identifier(std::get<0>(info.param)) + "_" + sizeName(std::get<1>(info.param));
}

// "out: 12 of 200 elements outside |got - ref| <= atol + rtol * |ref|; worst [7]: expected 1, got 2".
std::string describe(const Comparison& c, const Buffer& ref, const Buffer& got) {
  std::ostringstream os;
  os << c.name << ": ";
  if (!c.reason.empty()) return os.str() + c.reason;
  os << c.mismatches << " of " << got.numel() << " elements outside |got - ref| <= " << c.atol << " + " << c.rtol
     << " * |ref|; max abs err " << c.maxAbsErr;
  if (c.worstIndex >= 0 && c.worstIndex < got.numel())
    os << "; worst " << formatIndex(got.shape, c.worstIndex) << ": expected " << ref.getF(c.worstIndex) << ", got "
       << got.getF(c.worstIndex);
  return os.str();
}

// Every output of `got` against the scalar run's; returns how many were compared.
int expectOutputsMatch(const ScalarRun& ref, const Memory& got, const std::string& what) {
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

// The oracle's expected contents of `got`'s buffer, as a buffer of its dtype (rounded there).
Buffer expectedBuffer(const Buffer& got, const std::vector<double>& values) {
  Buffer ref = got;
  for (int64_t i = 0; i < ref.numel(); ++i) ref.setF(i, values[static_cast<size_t>(i)]);
  return ref;
}

TEST(Readme, ListsEveryKernelOnce) {
  std::string problem;
  std::vector<ReadmeRow> table = readReadme(problem);
  ASSERT_TRUE(problem.empty()) << problem;
  std::multiset<std::string> listed;
  for (const ReadmeRow& r : table) listed.insert(r.stem);
  const std::vector<std::string> files = kernelFiles();
  EXPECT_GE(files.size(), 12u) << "tests/external should hold at least 12 real Triton kernels";
  for (const std::string& f : files) EXPECT_EQ(listed.count(f), 1u) << f << ".tl: rows in README.md";
  for (const ReadmeRow& r : table)
    EXPECT_TRUE(std::find(files.begin(), files.end(), r.stem) != files.end()) << "README.md lists " << r.stem << " but there is no " << r.stem << ".tl";
}

TEST(Readme, EveryKernelNamesItsOrigin) {
  for (const std::string& stem : kernelFiles()) {
    std::shared_ptr<const SourceFile> file = SourceFile::load(kernelPath(stem));
    const std::string& text = file->text();
    EXPECT_NE(text.find("# Origin: "), std::string::npos) << stem << ".tl has no '# Origin:' header";
    EXPECT_NE(text.find(", commit "), std::string::npos) << stem << ".tl does not name the commit it was taken from";
    EXPECT_NE(text.find("# License: "), std::string::npos) << stem << ".tl has no '# License:' header";
  }
}

class Blocked : public testing::TestWithParam<std::string> {};
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(Blocked);

TEST_P(Blocked, StillFailsAsQuoted) {
  const std::string stem = GetParam();
  const ReadmeRow* row = &rowOf(stem);
  Compiled c;
  std::string error;
  ASSERT_FALSE(compileKernelFile(stem, {}, c, error))
      << stem << " now compiles: run it through every stage and mark its README.md row `runs`";
  // The first error line of the rendered diagnostics.
  const std::string first = error.substr(0, error.find('\n', error.find("error: ")));
  EXPECT_NE(first.find(row->firstError), std::string::npos)
      << stem << ": README.md quotes `" << row->firstError << "`, the first error is now:\n" << error;
}

INSTANTIATE_TEST_SUITE_P(Readme, Blocked, testing::ValuesIn(stems(Status::Blocked)), paramName);

// A `fails` row compiles, and the quoted error stops tl-scalar, tl-block or the executor (at the
// launch's num_warps and at 1 and 4), whichever the README names.
class Failing : public testing::TestWithParam<std::string> {};
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(Failing);

TEST_P(Failing, StillFailsAsQuoted) {
  const std::string stem = GetParam();
  const ReadmeRow& row = rowOf(stem);
  const ScalarRun& ref = scalarRun(stem, Size::Own);
  std::vector<std::string> errors;  // every stage's error, for the message
  if (!ref.error.empty()) errors.push_back(ref.error);
  if (ref.error.empty()) {
    std::string error;
    Memory memory = Memory::fromLaunch(ref.compiled.launch);
    std::unique_ptr<Function> opt = cloneFunction(*ref.compiled.fn);
    if (!runEngine(ref.compiled, "tl-block", error, [&] {
          PassManager pm = blockPipeline();
          pm.run(*opt);
          runBlock(*opt, ref.compiled.launch, memory);
        }))
      errors.push_back(error);
    std::vector<int> warps = {ref.compiled.launch.numWarps};
    for (int w : {1, 4})
      if (w != warps[0]) warps.push_back(w);
    for (int w : warps) {
      Memory mem = Memory::fromLaunch(ref.compiled.launch);
      if (!runEngine(ref.compiled, "tl-thread", error, [&] {
            ThreadCompilation tc = compileToThreadIR(*ref.compiled.fn, ref.compiled.launch, ThreadCompileOptions{w, false});
            runThreadIR(*tc.threadIR, ref.compiled.launch, mem);
          })) {
        errors.push_back(error);
        if (error.find(row.firstError) != std::string::npos) break;  // the quoted one: enough
      }
    }
  }
  ASSERT_FALSE(errors.empty()) << stem << " now runs on every CPU stage: check it against its oracle and mark its README.md row `runs`";
  bool quoted = false;
  std::string all;
  for (const std::string& e : errors) {
    quoted = quoted || e.find(row.firstError) != std::string::npos;
    all += e + "\n";
  }
  EXPECT_TRUE(quoted) << stem << ": README.md quotes `" << row.firstError << "`, the stages now say:\n" << all;
}

INSTANTIATE_TEST_SUITE_P(Readme, Failing, testing::ValuesIn(stems(Status::Fails)), paramName);

class External : public testing::TestWithParam<SizedParam> {};
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(External);

TEST_P(External, ScalarVsOracle) {
  const auto& [stem, size] = GetParam();
  const ExternalOracle* oracle = findOracle(stem);
  ASSERT_NE(oracle, nullptr) << "no oracle for tests/external/" << stem << ".tl in ExternalOracles.cpp";
  const ScalarRun& run = scalarRun(stem, size);
  ASSERT_TRUE(run.error.empty()) << run.error;
  OracleResult expected;
  try {
    expected = oracle->compute(Memory::fromLaunch(run.compiled.launch), run.compiled.launch);
  } catch (const std::exception& e) {
    FAIL() << "the oracle for " << stem << " failed: " << e.what();
  }
  int outputs = 0;
  for (const Buffer& got : run.memory.buffers()) {
    if (!got.output) continue;
    ++outputs;
    auto it = expected.find(got.name);
    ASSERT_NE(it, expected.end()) << "output '" << got.name << "' is not computed by the oracle of " << stem;
    ASSERT_EQ(static_cast<int64_t>(it->second.size()), got.numel()) << got.name;
    Buffer ref = expectedBuffer(got, it->second);
    ToleranceOverride tol;
    markDotPrecisions(*run.compiled.fn, tol);  // Triton's default tf32 dots: the oracle is exact
    Comparison c = compareBuffers(ref, got, tol);
    EXPECT_TRUE(c.pass) << "tl-scalar vs oracle (" << oracle->summary << "), " << sizeName(size)
                        << " size: " << describe(c, ref, got);
  }
  EXPECT_EQ(outputs, static_cast<int>(expected.size())) << stem << ": the oracle computes buffers the launch does not mark output=True";
}

TEST_P(External, OracleCatchesOneWrongElement) {
  const auto& [stem, size] = GetParam();
  const ExternalOracle* oracle = findOracle(stem);
  ASSERT_NE(oracle, nullptr);
  const ScalarRun& run = scalarRun(stem, size);
  ASSERT_TRUE(run.error.empty()) << run.error;
  const OracleResult expected = oracle->compute(Memory::fromLaunch(run.compiled.launch), run.compiled.launch);
  for (const Buffer& got : run.memory.buffers()) {
    if (!got.output || !isFloat(got.dtype)) continue;
    Buffer wrong = got;
    const int64_t i = wrong.numel() / 2;
    double atol, rtol;
    toleranceFor(wrong.dtype, atol, rtol);
    wrong.setF(i, wrong.getF(i) + 4 * (atol + rtol * std::fabs(wrong.getF(i))) + 0.5);
    Comparison c = compareBuffers(expectedBuffer(got, expected.at(got.name)), wrong);
    EXPECT_FALSE(c.pass) << stem << ": changing " << got.name << formatIndex(got.shape, i) << " went unnoticed";
    return;  // one float output is enough
  }
  FAIL() << stem << " has no float output";
}

TEST_P(External, BlockVsScalar) {
  const auto& [stem, size] = GetParam();
  const ScalarRun& ref = scalarRun(stem, size);
  ASSERT_TRUE(ref.error.empty()) << ref.error;
  std::unique_ptr<Function> opt = cloneFunction(*ref.compiled.fn);
  std::string error;
  Memory memory = Memory::fromLaunch(ref.compiled.launch);
  ASSERT_TRUE(runEngine(ref.compiled, "tl-block", error, [&] {
    PassManager pm = blockPipeline();
    pm.run(*opt);
    runBlock(*opt, ref.compiled.launch, memory);
  })) << error;
  EXPECT_GT(expectOutputsMatch(ref, memory, "tl-block"), 0);
}

INSTANTIATE_TEST_SUITE_P(Readme, External, testing::ValuesIn(sizedCases(cpuStems())), sizedName);

using ThreadParam = std::tuple<std::string, Size, int>;  // kernel, size, num_warps

class ExternalThread : public testing::TestWithParam<ThreadParam> {};
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(ExternalThread);

TEST_P(ExternalThread, ThreadVsScalar) {
  const auto& [stem, size, numWarps] = GetParam();
  const ScalarRun& ref = scalarRun(stem, size);
  ASSERT_TRUE(ref.error.empty()) << ref.error;
  Memory memory = Memory::fromLaunch(ref.compiled.launch);
  std::string error;
  ASSERT_TRUE(runEngine(ref.compiled, "tl-thread", error, [&] {
    ThreadCompilation tc = compileToThreadIR(*ref.compiled.fn, ref.compiled.launch, ThreadCompileOptions{numWarps, false});
    ASSERT_EQ(tc.threadIR->numWarps, numWarps);
    runThreadIR(*tc.threadIR, ref.compiled.launch, memory);
  })) << error;
  EXPECT_GT(expectOutputsMatch(ref, memory, "tl-thread, " + std::to_string(numWarps) + " warps"), 0);
}

std::vector<ThreadParam> threadCases() {
  std::vector<ThreadParam> out;
  for (const auto& [stem, size] : sizedCases(stems(Status::Runs)))
    for (int w : {1, 4}) out.emplace_back(stem, size, w);
  return out;
}

INSTANTIATE_TEST_SUITE_P(Readme, ExternalThread, testing::ValuesIn(threadCases()),
                         [](const testing::TestParamInfo<ThreadParam>& info) {
                           return identifier(std::get<0>(info.param)) + "_" + sizeName(std::get<1>(info.param)) +
                                  "_w" + std::to_string(std::get<2>(info.param));
                         });

// Philox against Random123's known-answer vectors (kat_vectors: philox4x32 10).
TEST(ExternalOracleSelf, PhiloxKnownAnswers) {
  using A4 = std::array<uint32_t, 4>;
  EXPECT_EQ(philox4x32x10({0, 0, 0, 0}, {0, 0}), (A4{0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u}));
  EXPECT_EQ(philox4x32x10({~0u, ~0u, ~0u, ~0u}, {~0u, ~0u}), (A4{0x408f276du, 0x41c83b0eu, 0xa20bc7c6u, 0x6d5451fdu}));
}

}  // namespace
}  // namespace tl::external
