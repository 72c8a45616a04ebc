// The collection itself: kernels/triton/MANIFEST.md lists exactly the kernel files, every kernel
// (passing or blocked) has an oracle and a second size, and what the manifest says about a
// blocked kernel is still true -- a kernel blocked in the front end still fails to compile there,
// with the error the manifest quotes. So the manifest cannot drift from the compiler: when the
// front end learns a construct, this test says which kernel to retry and move to "passes".
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "Manifest.h"
#include "TritonKernels.h"
#include "TritonOracles.h"

namespace tl::triton_tests {
namespace {

TEST(TritonManifest, IsWellFormed) {
  Manifest m = readManifest();
  for (const std::string& p : m.problems) ADD_FAILURE() << p;
  ASSERT_FALSE(m.entries.empty()) << "MANIFEST.md lists no kernel";
  std::map<std::string, int> seen;
  for (const ManifestEntry& e : m.entries) {
    EXPECT_TRUE(seen.emplace(e.stem, e.line).second)
        << "MANIFEST.md:" << e.line << ": '" << e.stem << "' is listed twice (also line "
        << seen[e.stem] << ")";
    EXPECT_FALSE(e.answers.empty()) << "MANIFEST.md:" << e.line << ": say what '" << e.stem << "' answers";
  }
}

TEST(TritonManifest, ListsExactlyTheKernelFiles) {
  std::set<std::string> listed;
  for (const ManifestEntry& e : readManifest().entries) listed.insert(e.stem);
  std::set<std::string> files;
  for (const std::string& stem : kernelFiles()) files.insert(stem);
  ASSERT_FALSE(files.empty()) << "no kernels in " << TL_SOURCE_DIR << "/kernels/triton";
  for (const std::string& f : files)
    EXPECT_TRUE(listed.count(f)) << "kernels/triton/" << f << ".tl is not in MANIFEST.md";
  for (const std::string& l : listed)
    EXPECT_TRUE(files.count(l)) << "MANIFEST.md lists '" << l << "' but kernels/triton/" << l
                                << ".tl does not exist";
}

TEST(TritonManifest, EveryKernelHasAnOracleAndASecondSize) {
  for (const std::string& stem : kernelFiles()) {
    EXPECT_NE(findTritonOracle(stem), nullptr) << stem << " has no oracle in tests/triton/Oracles*.cpp";
    EXPECT_NE(altOverrides(stem), nullptr) << stem << " has no second size in tests/triton/TritonKernels.cpp";
  }
  std::set<std::string> files;
  for (const std::string& stem : kernelFiles()) files.insert(stem);
  for (const auto* table : {&puzzleOracles(), &tutorialOracles()})
    for (const TritonOracle& o : *table)
      EXPECT_TRUE(files.count(o.kernel)) << "oracle '" << o.kernel << "' has no kernels/triton/"
                                         << o.kernel << ".tl";
}

// The error a "blocked: front end: ...: error: `MESSAGE`" status quotes, or "" when none.
std::string quotedError(const std::string& status) {
  const std::string key = "error: `";
  const size_t at = status.rfind(key);
  if (at == std::string::npos) return "";
  const size_t end = status.find('`', at + key.size());
  return end == std::string::npos ? "" : status.substr(at + key.size(), end - at - key.size());
}

TEST(TritonManifest, FrontEndBlockedKernelsStillFailWithTheQuotedError) {
  int checked = 0;
  for (const ManifestEntry& e : readManifest().entries) {
    if (e.passes || e.status.rfind("blocked: front end", 0) != 0) continue;
    ++checked;
    const std::string quoted = quotedError(e.status);
    EXPECT_FALSE(quoted.empty()) << "MANIFEST.md:" << e.line << ": quote the error as error: `...`";
    e2e::Compiled compiled;
    std::string error;
    if (compileVariant(e.stem, Variant::Default, compiled, error)) {
      ADD_FAILURE() << "kernels/triton/" << e.stem << ".tl now compiles: run test_triton on it "
                    << "and update its row (MANIFEST.md:" << e.line << ")";
      continue;
    }
    EXPECT_NE(error.find(quoted), std::string::npos)
        << "MANIFEST.md:" << e.line << ": " << e.stem << " now fails with another error; update "
        << "its row:\n" << error;
  }
  (void)checked;  // zero is fine: every kernel may pass or be blocked later than the front end
}

}  // namespace
}  // namespace tl::triton_tests
