// Reading kernels/triton/MANIFEST.md (Manifest.h).
#include "Manifest.h"

#include <algorithm>
#include <filesystem>
#include <fstream>

namespace tl::triton_tests {
namespace {

std::string trim(const std::string& s) {
  const size_t b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return "";
  const size_t e = s.find_last_not_of(" \t\r");
  return s.substr(b, e - b + 1);
}

// The cells of a table row "| a | b | c |" (without the outer bars).
std::vector<std::string> cells(const std::string& row) {
  std::vector<std::string> out;
  size_t start = row.find('|');
  while (start != std::string::npos) {
    const size_t next = row.find('|', start + 1);
    if (next == std::string::npos) break;
    out.push_back(trim(row.substr(start + 1, next - start - 1)));
    start = next;
  }
  return out;
}

}  // namespace

std::string kernelPath(const std::string& stem) {
  return std::string(TL_SOURCE_DIR) + "/kernels/triton/" + stem + ".tl";
}

std::vector<std::string> kernelFiles() {
  namespace fs = std::filesystem;
  std::vector<std::string> stems;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(fs::path(TL_SOURCE_DIR) / "kernels" / "triton", ec))
    if (e.is_regular_file() && e.path().extension() == ".tl") stems.push_back(e.path().stem().string());
  std::sort(stems.begin(), stems.end());
  return stems;
}

Manifest readManifest() {
  Manifest m;
  const std::string path = std::string(TL_SOURCE_DIR) + "/kernels/triton/MANIFEST.md";
  std::ifstream in(path);
  if (!in) {
    m.problems.push_back(path + ": cannot read the manifest");
    return m;
  }
  // Only the table under the header "| kernel | answers | status |" lists kernels; it ends at the
  // first line that is not a table row (other tables, such as the construct index, are skipped).
  int lineNo = 0;
  bool inTable = false, sawTable = false;
  for (std::string line; std::getline(in, line);) {
    ++lineNo;
    const std::string t = trim(line);
    if (!inTable) {
      if (!sawTable && cells(t) == std::vector<std::string>{"kernel", "answers", "status"})
        inTable = sawTable = true;
      continue;
    }
    if (t.empty() || t[0] != '|') {
      inTable = false;
      continue;
    }
    if (t.rfind("| `", 0) != 0) continue;  // the |---| separator
    const std::vector<std::string> c = cells(trim(line));
    const std::string where = "MANIFEST.md:" + std::to_string(lineNo) + ": ";
    if (c.size() != 3) {
      m.problems.push_back(where + "a kernel row needs 3 cells (kernel | answers | status), has " +
                           std::to_string(c.size()));
      continue;
    }
    ManifestEntry e;
    e.line = lineNo;
    e.stem = c[0].size() > 2 && c[0].front() == '`' && c[0].back() == '`'
                 ? c[0].substr(1, c[0].size() - 2) : c[0];
    e.answers = c[1];
    e.status = c[2];
    if (e.status.rfind("passes", 0) == 0) e.passes = true;
    else if (e.status.rfind("blocked", 0) != 0)
      m.problems.push_back(where + "status of '" + e.stem + "' must start with 'passes' or 'blocked'");
    m.entries.push_back(e);
  }
  if (!sawTable) m.problems.push_back(path + ": no table with the header | kernel | answers | status |");
  return m;
}

}  // namespace tl::triton_tests
