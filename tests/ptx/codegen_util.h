// Helpers for the code-generation tests (tests/ptx/codegen_*.cpp): a kernel of kernels/ through
// the front end and the thread pipeline to PTX, ptxas on the result, and small text checks.
//
//   PtxResult r = kernelToPTX("softmax", 4, {{"N", "1024"}});
//   EXPECT_TRUE(contains(r.ptx, "shfl.sync.bfly.b32"));
//   PtxasInfo info = assemble(r, "sm_90");  // GTEST_SKIPs the calling test when ptxas is absent
//   expectAssembles(fileToPTX("tests/thread/kernels/scan_1d.tl", 4), "scan_1d");
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "ir/Parser.h"
#include "ptx/Codegen.h"
#include "ptx/Ptxas.h"
#include "runtime/Driver.h"
#include "thread/Pipeline.h"

namespace tl::ptxtest {

inline std::string kernelPath(const std::string& stem) { return std::string(TL_SOURCE_DIR) + "/kernels/" + stem + ".tl"; }

// Every kernels/*.tl stem, sorted.
inline std::vector<std::string> kernelStems() {
  std::vector<std::string> stems;
  for (const auto& e : std::filesystem::directory_iterator(std::string(TL_SOURCE_DIR) + "/kernels"))
    if (e.path().extension() == ".tl") stems.push_back(e.path().stem().string());
  std::sort(stems.begin(), stems.end());
  return stems;
}

// Front end -> thread IR at `numWarps` (0: the launch's). Throws std::runtime_error with the
// front end's diagnostics when the kernel does not compile.
inline ThreadCompilation kernelToThreadIR(const std::string& stem, int numWarps,
                                          const std::vector<LaunchOverride>& overrides = {}) {
  std::ostringstream err;
  auto k = compileKernelFile(kernelPath(stem), overrides, err);
  if (!k) throw std::runtime_error(stem + ": " + err.str());
  return compileToThreadIR(*k->ir, k->launch, numWarps);
}

inline PtxResult kernelToPTX(const std::string& stem, int numWarps, const std::vector<LaunchOverride>& overrides = {},
                             const PtxOptions& opts = {}) {
  ThreadCompilation tc = kernelToThreadIR(stem, numWarps, overrides);
  return compileToPTX(*tc.threadIR, opts);
}

// A .tl file of the repository (`relPath`, e.g. "tests/thread/kernels/scan_1d.tl") -> PTX at
// `numWarps`; throws std::runtime_error with the front end's diagnostics when it does not compile.
inline PtxResult fileToPTX(const std::string& relPath, int numWarps, const std::vector<LaunchOverride>& overrides = {}) {
  std::ostringstream err;
  auto k = compileKernelFile(std::string(TL_SOURCE_DIR) + "/" + relPath, overrides, err);
  if (!k) throw std::runtime_error(relPath + ": " + err.str());
  ThreadCompilation tc = compileToThreadIR(*k->ir, k->launch, numWarps);
  return compileToPTX(*tc.threadIR);
}

// ptxas -arch=sm_90 accepts `r` (callers start with TL_REQUIRE_PTXAS()).
inline void expectAssembles(const PtxResult& r, const std::string& what) {
  PtxasInfo info = runPtxas(r.ptx, "sm_90");
  ASSERT_TRUE(info.ran) << info.skipped;
  EXPECT_TRUE(info.ok) << what << ":\n" << info.log << "\n" << r.ptx;
}

// Thread IR text -> PTX (the text must parse; a parse error fails the test with diagnostics).
inline std::unique_ptr<Function> parseThreadIR(const std::string& text) {
  DiagEngine diag;
  auto fn = parseFunction(text, diag);
  EXPECT_TRUE(fn && !diag.hasErrors()) << diag.renderAll();
  return fn;
}

inline bool contains(const std::string& text, const std::string& what) { return text.find(what) != std::string::npos; }

inline size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size())) ++n;
  return n;
}

// ptxas must be present for these checks; skips the calling test otherwise.
#define TL_REQUIRE_PTXAS()                                                         \
  do {                                                                             \
    std::string why;                                                               \
    if (::tl::findPtxas(&why).empty()) GTEST_SKIP() << "ptxas skipped: " << why;   \
  } while (0)

}  // namespace tl::ptxtest
