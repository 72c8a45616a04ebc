// End-to-end run tests: every kernel in kernels/*.tl, at its default and its ragged size,
//   ScalarVsOracle  tl-scalar (block IR straight from the front end) against the kernel's
//                   double-precision oracle (Oracles.h), every output, the dtype's tolerance;
//   BlockVsScalar   tl-block on the IR after tl::blockPipeline() against tl-scalar;
//   BlockNoPassesVsScalar  tl-block on the front end's IR against tl-scalar (tells a pass bug
//                   from an interpreter bug when BlockVsScalar fails).
// A kernel that fails to compile or stops at run time fails here with the located diagnostics.
#include <gtest/gtest.h>

#include <set>
#include <sstream>
#include <tuple>

#include "Harness.h"
#include "Oracles.h"

namespace tl::e2e {
namespace {

// The scalar reference should finish in about a second at the default launch; at tl-scalar's
// tens of millions of element-ops per second, this bound keeps every default launch quick.
constexpr int64_t kMaxDefaultElementOps = 30'000'000;

using Param = std::tuple<KernelCase, Size>;

std::string paramName(const testing::TestParamInfo<Param>& info) {
  return std::get<0>(info.param).stem + "_" + sizeName(std::get<1>(info.param));
}

class KernelRun : public testing::TestWithParam<Param> {};

TEST_P(KernelRun, ScalarVsOracle) {
  const auto& [kernel, size] = GetParam();
  const Oracle* oracle = findOracle(kernel.stem);
  ASSERT_NE(oracle, nullptr) << "no oracle for kernels/" << kernel.stem
                             << ".tl: add one to tests/e2e/Oracles.cpp";
  const ScalarRun& run = scalarRun(kernel, size);
  ASSERT_TRUE(run.error.empty()) << run.error;
  if (size == Size::Default) {
    EXPECT_LE(run.elementOps, kMaxDefaultElementOps)
        << "the default launch is too big for tl-scalar: shrink it in " << kernel.path;
  }

  // The oracle reads the inputs from a fresh copy of the launch's buffers.
  OracleResult expected;
  try {
    expected = oracle->compute(Memory::fromLaunch(run.compiled.launch), run.compiled.launch);
  } catch (const std::exception& e) {
    FAIL() << "oracle for " << kernel.stem << " failed: " << e.what();
  }

  std::set<std::string> outputs;
  for (const Buffer& got : run.memory.buffers()) {
    if (!got.output) continue;
    outputs.insert(got.name);
    auto it = expected.find(got.name);
    if (it == expected.end()) {
      ADD_FAILURE() << "output '" << got.name << "' is not computed by the oracle for "
                    << kernel.stem;
      continue;
    }
    ASSERT_EQ(static_cast<int64_t>(it->second.size()), got.numel()) << got.name;
    Buffer ref = got;  // same name, dtype, shape; the oracle's values rounded to the dtype
    for (int64_t i = 0; i < ref.numel(); ++i) ref.setF(i, it->second[static_cast<size_t>(i)]);
    Comparison c = compareBuffers(ref, got);
    EXPECT_TRUE(c.pass) << "tl-scalar vs oracle (" << oracle->summary << "), "
                        << sizeName(size) << " size, " << describeComparison(c, ref, got);
  }
  EXPECT_FALSE(outputs.empty()) << kernel.path << ": the launch marks no buffer output=True";
  for (const auto& [name, values] : expected)
    EXPECT_TRUE(outputs.count(name))
        << kernel.path << ": the oracle computes '" << name
        << "' but the launch does not mark it output=True";
}

// Runs tl-block on `fn` and compares every output with the scalar run `ref`.
void expectBlockMatchesScalar(const ScalarRun& ref, const Function& fn, const std::string& what,
                              Size size) {
  Memory memory;
  try {
    memory = Memory::fromLaunch(ref.compiled.launch);
  } catch (const std::exception& e) {
    FAIL() << e.what();
  }
  std::string error;
  ASSERT_TRUE(runBlockChecked(ref.compiled, fn, memory, error)) << what << ": " << error;
  expectOutputsMatch(ref, memory, what + " vs tl-scalar, " + sizeName(size) + " size");
}

// The block interpreter on the optimized IR (what the later stages start from) must agree with
// the scalar reference on the front end's IR.
TEST_P(KernelRun, BlockVsScalar) {
  const auto& [kernel, size] = GetParam();
  const ScalarRun& ref = scalarRun(kernel, size);
  ASSERT_TRUE(ref.error.empty()) << ref.error;
  std::string error;
  std::unique_ptr<Function> opt = optimizedCopy(*ref.compiled.fn, error);
  ASSERT_NE(opt, nullptr) << kernel.stem << ": " << error;
  expectBlockMatchesScalar(ref, *opt, "tl-block (after the block pipeline)", size);
}

// The same on the front end's IR, before any pass: when BlockVsScalar fails and this passes,
// the bug is in a pass; when both fail, it is in tl-block (or in both interpreters' agreement).
TEST_P(KernelRun, BlockNoPassesVsScalar) {
  const auto& [kernel, size] = GetParam();
  const ScalarRun& ref = scalarRun(kernel, size);
  ASSERT_TRUE(ref.error.empty()) << ref.error;
  expectBlockMatchesScalar(ref, *ref.compiled.fn, "tl-block (front-end IR, no passes)", size);
}

INSTANTIATE_TEST_SUITE_P(Kernels, KernelRun,
                         testing::Combine(testing::ValuesIn(discoverKernels()),
                                          testing::Values(Size::Default, Size::Ragged)),
                         paramName);

// The kernel collection and the oracle table must list the same kernels.
TEST(KernelCollection, EveryKernelHasAnOracleAndARaggedSize) {
  std::vector<KernelCase> kernels = discoverKernels();
  ASSERT_FALSE(kernels.empty()) << "no kernels found in " << TL_SOURCE_DIR << "/kernels";
  std::set<std::string> stems;
  for (const KernelCase& k : kernels) {
    stems.insert(k.stem);
    EXPECT_NE(findOracle(k.stem), nullptr) << k.path << " has no oracle in tests/e2e/Oracles.cpp";
    EXPECT_NE(raggedOverrides(k.stem), nullptr)
        << k.path << " has no ragged size in tests/e2e/Harness.cpp";
  }
  for (const Oracle& o : allOracles())
    EXPECT_TRUE(stems.count(o.kernel)) << "oracle '" << o.kernel << "' has no kernels/"
                                       << o.kernel << ".tl";
}

}  // namespace
}  // namespace tl::e2e

