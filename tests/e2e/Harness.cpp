// The end-to-end harness (Harness.h): kernel discovery, compilation, cached scalar runs,
// located error rendering and a small line diff for golden files.
#include "Harness.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <sstream>
#include <utility>

#include "block/BlockInterpreter.h"
#include "ir/Pass.h"
#include "scalar/ScalarInterpreter.h"

namespace tl::e2e {

const char* sizeName(Size size) { return size == Size::Default ? "default" : "ragged"; }

std::vector<KernelCase> discoverKernels() {
  namespace fs = std::filesystem;
  std::vector<KernelCase> kernels;
  const fs::path dir = fs::path(TL_SOURCE_DIR) / "kernels";
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return kernels;
  for (const auto& entry : fs::directory_iterator(dir, ec))
    if (entry.is_regular_file() && entry.path().extension() == ".tl")
      kernels.push_back({entry.path().stem().string(), entry.path().string()});
  std::sort(kernels.begin(), kernels.end(),
            [](const KernelCase& a, const KernelCase& b) { return a.stem < b.stem; });
  return kernels;
}

// The ragged sizes: each override re-evaluates everything that depends on it (grids, strides,
// BLOCK_N = next_pow2(N), buffer shapes). Chosen to hit partial last blocks, tiny grids and, for
// the looping kernels, a last chunk with a single live lane.
const std::vector<LaunchOverride>* raggedOverrides(const std::string& stem) {
  static const std::map<std::string, std::vector<LaunchOverride>> table = {
      {"vector_add", {{"N", "5000"}}},                            // 4 full blocks + 904
      {"softmax", {{"N", "1000"}, {"M", "37"}}},                  // BLOCK_N stays 1024
      {"softmax_online", {{"N", "1025"}, {"M", "9"}}},            // last chunk: 1 live lane
      {"layernorm", {{"N", "333"}, {"M", "17"}}},                 // 2 chunks, 77 live in the last
      {"layernorm_row", {{"N", "333"}, {"M", "17"}}},             // BLOCK_N becomes 512
      {"softmax_rows", {{"M", "13"}, {"N", "33"}}},               // 2 programs, 3 live rows in the last
      {"bias_gelu", {{"M", "77"}, {"N", "45"}}},                  // 3 x 1 tiles, both edges ragged
      {"row_sum", {{"N", "513"}, {"M", "33"}}},                   // last chunk: 1 live lane
      {"transpose", {{"M", "45"}, {"N", "97"}}},                  // 2 x 4 tiles
      {"transpose_tiled", {{"M", "45"}, {"N", "97"}, {"BLOCK_N", "16"}}},  // 2 x 7 non-square 32x16 tiles
      {"strided_copy", {{"N", "3001"}, {"stride", "7"}}},         // 3 blocks, 953 in the last
      {"matmul", {{"M", "33"}, {"N", "70"}, {"K", "47"}}},        // every dimension ragged
      {"matmul_tc", {{"M", "100"}, {"N", "72"}, {"K", "40"}}},    // M, N wrap (N % 8 == 0: the hint's runs), K masked
      {"rmsnorm", {{"N", "300"}, {"M", "31"}}},                   // BLOCK_N becomes 512
  };
  auto it = table.find(stem);
  return it == table.end() ? nullptr : &it->second;
}

bool compileCase(const KernelCase& kernel, Size size, Compiled& out, std::string& error) {
  std::vector<LaunchOverride> overrides;
  if (size == Size::Ragged) {
    const auto* ragged = raggedOverrides(kernel.stem);
    if (!ragged) {
      error = "no ragged size for kernel '" + kernel.stem +
              "': add one to raggedOverrides() in tests/e2e/Harness.cpp";
      return false;
    }
    overrides = *ragged;
  }
  try {
    out.file = SourceFile::load(kernel.path);
  } catch (const std::exception& e) {
    error = e.what();
    return false;
  }
  DiagEngine diag(out.file);
  out.parsed = parseKernelFile(out.file, diag);
  if (out.parsed && !diag.hasErrors()) out.launch = evalLaunch(*out.parsed, overrides, diag);
  if (out.parsed && !diag.hasErrors())
    out.fn = compileKernel(*out.parsed, specializationFor(*out.parsed, out.launch), diag);
  if (diag.hasErrors() || !out.fn) {
    error = "front end failed on " + kernel.path + " (" + sizeName(size) + " size):\n" +
            diag.renderAll();
    return false;
  }
  return true;
}

std::unique_ptr<Function> optimizedCopy(const Function& fn, std::string& error) {
  std::unique_ptr<Function> copy = cloneFunction(fn);
  try {
    PassManager pm = blockPipeline();
    pm.run(*copy);
  } catch (const std::exception& e) {
    error = std::string("block pipeline failed: ") + e.what();
    return nullptr;
  }
  return copy;
}

namespace {

// Runs `body`, turning the exceptions an engine may throw into rendered, located text.
template <typename Body>
bool runChecked(const Compiled& compiled, const char* engine, std::string& error, Body body) {
  try {
    body();
    return true;
  } catch (const RuntimeError& e) {
    error = std::string(engine) + " stopped:\n" +
            renderDiagnostic(compiled.file.get(), Severity::Error, e.loc, e.what());
  } catch (const IRError& e) {
    error = std::string(engine) + " rejected the IR:\n" +
            renderDiagnostic(compiled.file.get(), Severity::Error, e.loc, e.what());
  } catch (const std::exception& e) {
    error = std::string(engine) + " failed: " + e.what();
  }
  return false;
}

}  // namespace

const ScalarRun& scalarRun(const KernelCase& kernel, Size size) {
  static std::map<std::pair<std::string, Size>, std::unique_ptr<ScalarRun>> cache;
  auto& slot = cache[{kernel.stem, size}];
  if (slot) return *slot;
  slot = std::make_unique<ScalarRun>();
  ScalarRun& run = *slot;
  if (!compileCase(kernel, size, run.compiled, run.error)) return run;
  if (!runChecked(run.compiled, "tl-scalar", run.error, [&] {
        run.memory = Memory::fromLaunch(run.compiled.launch);
        run.elementOps = runScalar(*run.compiled.fn, run.compiled.launch, run.memory).elementOps;
      }))
    run.error = "on " + kernel.path + " (" + sizeName(size) + " size): " + run.error;
  return run;
}

bool runBlockChecked(const Compiled& compiled, const Function& fn, Memory& memory,
                     std::string& error) {
  return runChecked(compiled, "tl-block", error, [&] { runBlock(fn, compiled.launch, memory); });
}

// ---------------------------------------------------------------------------------------------
// unifiedDiff: an LCS over lines (the IR of one kernel is a few hundred lines, so the quadratic
// table is small), then hunks of changes with `context` unchanged lines around them.

namespace {

std::vector<std::string> splitLines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

}  // namespace

std::string describeComparison(const Comparison& c, const Buffer& ref, const Buffer& got) {
  std::ostringstream os;
  os << c.name << ": ";
  if (!c.reason.empty()) return os.str() + c.reason;
  os << c.mismatches << " of " << got.numel() << " elements outside |got - ref| <= " << c.atol
     << " + " << c.rtol << " * |ref|; max abs err " << c.maxAbsErr << ", max rel err "
     << c.maxRelErr;
  if (c.worstIndex >= 0 && c.worstIndex < got.numel() && c.worstIndex < ref.numel())
    os << "; worst at element " << c.worstIndex << ": expected " << ref.getF(c.worstIndex)
       << ", got " << got.getF(c.worstIndex);
  return os.str();
}

void expectOutputsMatch(const ScalarRun& ref, const Memory& memory, const std::string& what) {
  int checked = 0;
  for (const Buffer& want : ref.memory.buffers()) {
    if (!want.output) continue;
    const Buffer* got = memory.find(want.name);
    ASSERT_NE(got, nullptr) << what << ": no buffer " << want.name;
    Comparison c = compareBuffers(want, *got);
    EXPECT_TRUE(c.pass) << what << ", " << describeComparison(c, want, *got);
    ++checked;
  }
  EXPECT_GT(checked, 0) << "the launch marks no buffer output=True";
}

std::string unifiedDiff(const std::string& a, const std::string& b, const std::string& aName,
                        const std::string& bName, int context) {
  if (a == b) return "";
  const std::vector<std::string> x = splitLines(a), y = splitLines(b);
  const size_t n = x.size(), m = y.size();
  // lcs[i][j]: length of the longest common subsequence of x[i..] and y[j..].
  std::vector<std::vector<int>> lcs(n + 1, std::vector<int>(m + 1, 0));
  for (size_t i = n; i-- > 0;)
    for (size_t j = m; j-- > 0;)
      lcs[i][j] = x[i] == y[j] ? lcs[i + 1][j + 1] + 1 : std::max(lcs[i + 1][j], lcs[i][j + 1]);

  // The edit script: ' ' kept, '-' only in a, '+' only in b; with each line's numbers.
  struct Edit {
    char tag;
    size_t ai, bi;  // 0-based positions in a and b before this line
  };
  std::vector<Edit> edits;
  size_t i = 0, j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && x[i] == y[j]) edits.push_back({' ', i++, j++});
    else if (i < n && (j == m || lcs[i + 1][j] >= lcs[i][j + 1])) edits.push_back({'-', i++, j});
    else edits.push_back({'+', i, j++});
  }

  std::ostringstream out;
  out << "--- " << aName << "\n+++ " << bName << "\n";
  const size_t ctx = static_cast<size_t>(std::max(context, 0));
  size_t k = 0;
  while (k < edits.size()) {
    if (edits[k].tag == ' ') { ++k; continue; }
    // A hunk: from `ctx` lines before this change to `ctx` lines after the last change that is
    // at most 2*ctx unchanged lines away from the next one.
    size_t start = k >= ctx ? k - ctx : 0, end = k;
    while (true) {
      while (end < edits.size() && edits[end].tag != ' ') ++end;
      size_t next = end;
      while (next < edits.size() && edits[next].tag == ' ' && next - end <= 2 * ctx) ++next;
      if (next < edits.size() && edits[next].tag != ' ' && next - end <= 2 * ctx) end = next;
      else break;
    }
    end = std::min(edits.size(), end + ctx);
    size_t aCount = 0, bCount = 0;
    for (size_t e = start; e < end; ++e) {
      if (edits[e].tag != '+') ++aCount;
      if (edits[e].tag != '-') ++bCount;
    }
    out << "@@ -" << edits[start].ai + 1 << "," << aCount << " +" << edits[start].bi + 1 << ","
        << bCount << " @@\n";
    for (size_t e = start; e < end; ++e) {
      const std::string& line = edits[e].tag == '+' ? y[edits[e].bi] : x[edits[e].ai];
      out << edits[e].tag << line << "\n";
    }
    k = end;
  }
  return out.str();
}

}  // namespace tl::e2e
