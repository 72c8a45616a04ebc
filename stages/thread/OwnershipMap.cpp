// Ownership maps as text (see OwnershipMap.h for the format). Everything here is computed from
// Layout::coords(), the same function the lowering uses, so the picture cannot disagree with
// the code that is generated.
#include "thread/OwnershipMap.h"

#include <algorithm>
#include <cctype>
#include <iomanip>
#include <sstream>

#include "ir/Printer.h"

namespace tl {

namespace {

struct Owner {
  int thread = -1;   // the lowest thread holding the element
  int64_t reg = 0;   // its register index in that thread
  int count = 0;     // how many (thread, register) pairs hold it
};

// Who holds each element (row-major element index).
std::vector<Owner> owners(const Layout& layout, const Shape& shape) {
  int64_t numel = 1;
  for (int64_t s : shape) numel *= s;
  std::vector<Owner> own(static_cast<size_t>(numel));
  int64_t regs = layout.elemsPerThread(shape);
  for (int t = 0; t < layout.numThreads(); ++t) {
    for (int64_t r = 0; r < regs; ++r) {
      auto c = layout.coords(shape, t, r);
      int64_t idx = 0;
      for (size_t d = 0; d < shape.size(); ++d) idx = idx * shape[d] + c[d];
      Owner& o = own[static_cast<size_t>(idx)];
      if (o.count++ == 0) {
        o.thread = t;
        o.reg = r;
      }
    }
  }
  return own;
}

std::string cellText(const Owner& o) {
  if (o.count == 0) return "-";
  std::string s = "w" + std::to_string(o.thread / kWarpSize) + ":t" + std::to_string(o.thread % kWarpSize) + "/r" +
                  std::to_string(o.reg);
  return o.count > 1 ? s + "*" : s;
}

std::string pad(std::string s, size_t width, bool right = false) {
  if (s.size() >= width) return s;
  return right ? std::string(width - s.size(), ' ') + s : s + std::string(width - s.size(), ' ');
}

// The indices shown along an extent of n when at most `max` fit: all, or the first and last
// halves with -1 marking the cut.
std::vector<int64_t> shownIndices(int64_t n, int max) {
  std::vector<int64_t> v;
  max = std::max(max, 2);
  if (n <= max) {
    for (int64_t i = 0; i < n; ++i) v.push_back(i);
    return v;
  }
  int64_t half = max / 2;
  for (int64_t i = 0; i < half; ++i) v.push_back(i);
  v.push_back(-1);
  for (int64_t i = n - (max - half); i < n; ++i) v.push_back(i);
  return v;
}

std::string legend(const Layout& layout, const Shape& shape) {
  std::string shapeStr;
  for (size_t d = 0; d < shape.size(); ++d) shapeStr += (d ? "x" : "") + std::to_string(shape[d]);
  int64_t rep = layout.replication(shape);
  int warps = layout.numWarps();
  std::string s = "layout " + layout.str() + " on a " + shapeStr + " tile: " + std::to_string(layout.numThreads()) +
                  " threads (" + std::to_string(warps) + (warps == 1 ? " warp" : " warps") + " x 32 lanes), " +
                  std::to_string(layout.elemsPerThread(shape)) + " registers per thread, each element held by " +
                  std::to_string(rep) + (rep == 1 ? " thread\n" : " threads\n");
  s += "cell = w<warp>:t<lane>/r<register index in that thread>";
  if (rep > 1) s += "; * = also held by other threads (the lowest thread is shown)";
  s += "\n";
  if (layout.kind() == Layout::Kind::Slice)
    s += "a slice layout: dimension " + std::to_string(layout.sliceDim()) +
         " of the parent was reduced away; threads that differed only along it hold the same elements\n";
  return s;
}

std::string grid1D(const Shape& shape, const std::vector<Owner>& own, const OwnershipMapOptions& opt) {
  int64_t n = shape[0], perLine = std::max(1, opt.perLine);
  int64_t lines = (n + perLine - 1) / perLine;
  size_t width = 1, labelWidth = std::to_string(n - 1).size();
  for (const Owner& o : own) width = std::max(width, cellText(o).size());
  std::string s;
  for (int64_t line : shownIndices(lines, opt.maxLines)) {
    if (line < 0) {
      s += "  ...\n";
      continue;
    }
    int64_t first = line * perLine, last = std::min(n, first + perLine) - 1;
    s += "  [" + pad(std::to_string(first), labelWidth, true) + ".." + pad(std::to_string(last), labelWidth, true) + "]";
    for (int64_t i = first; i <= last; ++i) s += " " + pad(cellText(own[static_cast<size_t>(i)]), width);
    while (!s.empty() && s.back() == ' ') s.pop_back();
    s += "\n";
  }
  return s;
}

std::string grid2D(const Shape& shape, const std::vector<Owner>& own, const OwnershipMapOptions& opt) {
  auto rows = shownIndices(shape[0], opt.maxRows), cols = shownIndices(shape[1], opt.maxCols);
  size_t width = 3, labelWidth = std::to_string(shape[0] - 1).size();
  for (int64_t r : rows)
    for (int64_t c : cols)
      if (r >= 0 && c >= 0) width = std::max(width, cellText(own[static_cast<size_t>(r * shape[1] + c)]).size());
  std::string s = "  " + std::string(labelWidth, ' ');
  for (int64_t c : cols) s += " " + pad(c < 0 ? "..." : std::to_string(c), width);
  while (s.back() == ' ') s.pop_back();
  s += "\n";
  for (int64_t r : rows) {
    std::string line = "  " + pad(r < 0 ? "" : std::to_string(r), labelWidth, true);
    if (r < 0) line = "  " + pad("...", labelWidth);
    for (int64_t c : cols) {
      std::string cell = r < 0 || c < 0 ? (r < 0 && c < 0 ? "" : "...") : cellText(own[static_cast<size_t>(r * shape[1] + c)]);
      if (r < 0 && c >= 0) cell = ":";
      line += " " + pad(cell, width);
    }
    while (line.back() == ' ') line.pop_back();
    s += line + "\n";
  }
  return s;
}

}  // namespace

std::vector<int> defaultListedThreads(int numWarps) {
  std::vector<int> t = {0, 1, kWarpSize - 1};
  for (int w = 1; w < numWarps; ++w) t.push_back(w * kWarpSize);
  return t;
}

std::string describeThread(const Layout& layout, const Shape& shape, int thread) {
  std::string s = "thread " + std::to_string(thread) + " (warp " + std::to_string(thread / kWarpSize) + ", lane " +
                  std::to_string(thread % kWarpSize) + ") owns ";
  int64_t regs = layout.elemsPerThread(shape);
  // Runs of registers whose elements step by +1 along one dimension.
  struct Run {
    std::vector<int64_t> first, last;
    int64_t r0, r1;
    int dim;  // the dimension that varies, -1 for a single element
  };
  std::vector<Run> runs;
  for (int64_t r = 0; r < regs; ++r) {
    auto c = layout.coords(shape, thread, r);
    if (!runs.empty()) {
      Run& run = runs.back();
      int varying = -1, steps = 0;
      for (size_t d = 0; d < c.size(); ++d)
        if (c[d] != run.last[d]) {
          ++steps;
          varying = c[d] == run.last[d] + 1 ? static_cast<int>(d) : -2;
        }
      if (steps == 1 && varying >= 0 && (run.dim == -1 || run.dim == varying)) {
        run.last = c;
        run.r1 = r;
        run.dim = varying;
        continue;
      }
    }
    runs.push_back({c, c, r, r, -1});
  }
  const size_t maxRuns = 12;
  for (size_t i = 0; i < runs.size() && i < maxRuns; ++i) {
    const Run& run = runs[i];
    std::string elems;
    for (size_t d = 0; d < run.first.size(); ++d) {
      elems += d ? ", " : "";
      elems += std::to_string(run.first[d]);
      if (run.first[d] != run.last[d]) elems += ".." + std::to_string(run.last[d]);
    }
    std::string regsStr = "r" + std::to_string(run.r0) + (run.r1 != run.r0 ? "-r" + std::to_string(run.r1) : "");
    s += (i ? ", " : "") + (shape.size() == 1 ? "[" + elems + "]" : "(" + elems + ")") + " (" + regsStr + ")";
  }
  if (runs.size() > maxRuns) s += ", ... (" + std::to_string(runs.size() - maxRuns) + " more runs)";
  return s;
}

std::string renderOwnershipMap(const Layout& layout, const Shape& shape, const OwnershipMapOptions& options) {
  if (static_cast<int>(shape.size()) != layout.rank() || shape.empty() || shape.size() > 2)
    return "cannot draw " + layout.str() + " on a tile of rank " + std::to_string(shape.size()) + "\n";
  auto own = owners(layout, shape);
  std::string s = legend(layout, shape);
  s += shape.size() == 1 ? grid1D(shape, own, options) : grid2D(shape, own, options);
  if (options.listing) {
    auto threads = options.threads.empty() ? defaultListedThreads(layout.numWarps()) : options.threads;
    for (int t : threads)
      if (t >= 0 && t < layout.numThreads()) s += describeThread(layout, shape, t) + "\n";
  }
  return s;
}

std::string renderOwnershipMap(const Value& value, const std::string& displayName, const OwnershipMapOptions& options) {
  std::string head = displayName + " : " + value.type.str() + "\n";
  if (value.type.isScalar())
    return head + "a scalar: every thread of the block holds the same value (no layout)\n";
  if (!value.type.layout) return head + "no layout yet: layouts are assigned by the assign-layouts pass\n";
  return head + renderOwnershipMap(*value.type.layout, value.type.shape, options);
}

const Value* findValueByName(const Function& fn, std::string_view name) {
  if (!name.empty() && name[0] == '%') name.remove_prefix(1);
  // Printed names are unique within a function: the one the printer gave `name`, if any.
  for (const auto& [value, printed] : printedValueNames(fn))
    if (printed == name) return value;
  return nullptr;
}

std::string renderMmaFragments(const MmaInstr& instr) {
  std::ostringstream os;
  os << instr.ptx() << ": D = A @ B + C, one warp; cell = T<lane>:<element of its fragment>\n";
  for (MmaOperand op : {MmaOperand::A, MmaOperand::B, MmaOperand::C}) {
    const int rows = op == MmaOperand::B ? instr.k : instr.m, cols = op == MmaOperand::A ? instr.k : instr.n;
    const char letter = op == MmaOperand::A ? 'a' : op == MmaOperand::B ? 'b' : 'c';
    std::vector<std::string> cell(size_t(rows * cols));
    for (int l = 0; l < kWarpSize; ++l)
      for (int e = 0; e < instr.regs(op); ++e) {
        auto [r, c] = mmaFragmentCoord(instr, op, l, e);
        cell[size_t(r * cols + c)] = "T" + std::to_string(l) + ":" + letter + std::to_string(e);
      }
    size_t w = 0;
    for (const auto& s : cell) w = std::max(w, s.size());
    os << "\n" << char(std::toupper(letter)) << " (" << rows << " x " << cols << (op == MmaOperand::C ? ", f32" : "")
       << "): " << instr.regs(op) << " elements per lane\n";
    os << std::string(4, ' ');
    for (int c = 0; c < cols; ++c) os << ' ' << std::setw(int(w)) << c;
    os << "\n";
    for (int r = 0; r < rows; ++r) {
      os << std::setw(4) << r;
      for (int c = 0; c < cols; ++c) os << ' ' << std::setw(int(w)) << cell[size_t(r * cols + c)];
      os << "\n";
    }
  }
  return os.str();
}

}  // namespace tl
