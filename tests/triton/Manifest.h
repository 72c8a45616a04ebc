// kernels/triton/MANIFEST.md, read: which Triton-spelled kernels pass every stage and which are
// blocked, and by what.
//
// The manifest is a Markdown table with one row per kernel file:
//   | `p01_constant_add` | Triton-Puzzles 1: constant add | passes |
//   | `t08_grouped_gemm` | tutorial 08 | blocked: <the construct>: <the error tilelab gives> |
// Only the table whose header is "| kernel | answers | status |" is read, up to its first
// non-table line; in it, rows whose first cell is a back-quoted stem count; the status cell
// starts with "passes" or "blocked". Anything else in a row's status is a malformed manifest (reported, not
// skipped), so a typo cannot silently drop a kernel from the test run.
#pragma once

#include <string>
#include <vector>

namespace tl::triton_tests {

struct ManifestEntry {
  std::string stem;     // "p01_constant_add"
  std::string answers;  // the second cell
  std::string status;   // the third cell, as written
  bool passes = false;  // status starts with "passes"
  int line = 0;         // 1-based line in MANIFEST.md
};

struct Manifest {
  std::vector<ManifestEntry> entries;
  std::vector<std::string> problems;  // "MANIFEST.md:12: status must start with ..." (empty: fine)
};

// Reads TL_SOURCE_DIR/kernels/triton/MANIFEST.md (problems names a missing file too).
Manifest readManifest();
// kernels/triton/<stem>.tl, absolute.
std::string kernelPath(const std::string& stem);
// Every kernels/triton/*.tl stem, sorted.
std::vector<std::string> kernelFiles();

}  // namespace tl::triton_tests
