// Line links from each stage's text back to the .tl source (see LineLinks.h for the formats).
// Small hand-written scanners: the formats are regular enough that a character loop reads
// better than a regular expression, and it never backtracks on a long line.
#include "viz/model/LineLinks.h"

#include <cctype>
#include <unordered_map>

namespace tl::viz {

namespace {

bool isDigit(char c) { return c >= '0' && c <= '9'; }

// Reads a decimal number at s[pos] (skipping spaces and tabs first); -1 when there is none.
// Saturates instead of overflowing on absurdly long digit runs.
long readNumber(std::string_view s, size_t& pos) {
  while (pos < s.size() && (s[pos] == ' ' || s[pos] == '\t')) ++pos;
  if (pos >= s.size() || !isDigit(s[pos])) return -1;
  long v = 0;
  while (pos < s.size() && isDigit(s[pos])) {
    if (v < 100000000) v = v * 10 + (s[pos] - '0');
    ++pos;
  }
  return v;
}

// A source line number as stored in the links (0 for "none" and anything out of int range).
int asLine(long v) { return v > 0 && v < 100000000 ? static_cast<int>(v) : 0; }

// IR: the last `loc(L:C)` on the line.
int irLine(std::string_view line) {
  size_t at = line.rfind("loc(");
  if (at == std::string_view::npos) return 0;
  size_t pos = at + 4;
  return asLine(readNumber(line, pos));
}

// LLVM IR: the N of a `!dbg !N` on the line, or -1.
long dbgRef(std::string_view line) {
  size_t at = line.rfind("!dbg !");
  if (at == std::string_view::npos) return -1;
  size_t pos = at + 6;
  return readNumber(line, pos);
}

// LLVM IR metadata definition `!N = ... !DILocation(line: L ...)`: stores N -> L.
void readMetadataLine(std::string_view line, std::unordered_map<long, int>& lines) {
  if (line.size() < 2 || line[0] != '!' || !isDigit(line[1])) return;
  size_t pos = 1;
  long id = readNumber(line, pos);
  if (id < 0) return;
  size_t di = line.find("!DILocation(", pos);
  if (di == std::string_view::npos) di = line.find("!DISubprogram(", pos);
  if (di == std::string_view::npos) return;
  size_t key = line.find("line:", di);
  if (key == std::string_view::npos) return;
  size_t p = key + 5;
  lines[id] = asLine(readNumber(line, p));
}

std::vector<int> llvmLinks(const std::vector<std::string_view>& lines) {
  std::unordered_map<long, int> meta;
  for (auto l : lines) readMetadataLine(l, meta);
  std::vector<int> out(lines.size(), 0);
  for (size_t i = 0; i < lines.size(); ++i) {
    if (!lines[i].empty() && lines[i][0] == '!') continue;  // the metadata itself
    long ref = dbgRef(lines[i]);
    if (ref < 0) continue;
    auto it = meta.find(ref);
    if (it != meta.end()) out[i] = it->second;
  }
  return out;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

bool startsWith(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

// PTX: `.loc F L C` sets the current line for the instructions that follow it.
std::vector<int> ptxLinks(const std::vector<std::string_view>& lines) {
  std::vector<int> out(lines.size(), 0);
  int current = 0;
  for (size_t i = 0; i < lines.size(); ++i) {
    std::string_view t = trim(lines[i]);
    if (startsWith(t, ".loc") && t.size() > 4 && (t[4] == ' ' || t[4] == '\t')) {
      size_t pos = 4;
      long file = readNumber(t, pos);
      long line = file >= 0 ? readNumber(t, pos) : -1;
      current = asLine(line);
      out[i] = current;
      continue;
    }
    // A function's end (or the next one's start) ends the current location.
    if (t == "}" || startsWith(t, ".entry") || startsWith(t, ".visible") || startsWith(t, ".func")) {
      current = 0;
      continue;
    }
    // Instructions (and predicated ones, "@%p1 bra ..."); not directives, labels or comments.
    bool instruction = !t.empty() && t[0] != '.' && t[0] != '/' && t[0] != '{' && t.back() != ':' &&
                       t[0] != ')' && t[0] != '(';
    if (instruction) out[i] = current;
  }
  return out;
}

}  // namespace

std::vector<std::string_view> splitLines(std::string_view text) {
  std::vector<std::string_view> lines;
  size_t start = 0;
  while (start < text.size()) {
    size_t nl = text.find('\n', start);
    if (nl == std::string_view::npos) nl = text.size();
    std::string_view l = text.substr(start, nl - start);
    if (!l.empty() && l.back() == '\r') l.remove_suffix(1);
    lines.push_back(l);
    start = nl + 1;
  }
  return lines;
}

std::vector<int> lineLinks(std::string_view text, LinkFormat format) {
  std::vector<std::string_view> lines = splitLines(text);
  switch (format) {
    case LinkFormat::Source: {
      std::vector<int> out(lines.size());
      for (size_t i = 0; i < lines.size(); ++i) out[i] = static_cast<int>(i) + 1;
      return out;
    }
    case LinkFormat::IR: {
      std::vector<int> out(lines.size());
      for (size_t i = 0; i < lines.size(); ++i) out[i] = irLine(lines[i]);
      return out;
    }
    case LinkFormat::LLVM:
      return llvmLinks(lines);
    case LinkFormat::PTX:
      return ptxLinks(lines);
  }
  return std::vector<int>(lines.size(), 0);
}

std::vector<int> linesForSourceLine(const StageText& stage, int sourceLine) {
  std::vector<int> out;
  if (sourceLine <= 0) return out;
  for (size_t i = 0; i < stage.sourceLine.size(); ++i)
    if (stage.sourceLine[i] == sourceLine) out.push_back(static_cast<int>(i));
  return out;
}

bool hasLineLinks(const StageText& stage) {
  for (int l : stage.sourceLine)
    if (l > 0) return true;
  return false;
}

}  // namespace tl::viz
