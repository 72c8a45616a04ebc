// ThreadGrid (see ThreadGrid.h): walks every (thread, register) of a layout once, as
// stages/thread/OwnershipMap.cpp does, and files each into its element's owner list.
#include "viz/model/ThreadGrid.h"

#include <algorithm>
#include <functional>
#include <limits>

#include "viz/model/Format.h"

namespace tl::viz {

namespace {

std::string shapeText(const Shape& shape) {
  std::string s;
  for (size_t d = 0; d < shape.size(); ++d) s += (d ? "x" : "") + std::to_string(shape[d]);
  return s.empty() ? "scalar" : s;
}

// Why this (layout, shape) cannot be drawn, or "" when it can.
std::string checkInput(const Layout& layout, const Shape& shape, int64_t maxOwners) {
  if (shape.empty() || shape.size() > 2)
    return "only 1-D and 2-D tiles can be drawn; this one is " + shapeText(shape) + " (rank " +
           std::to_string(shape.size()) + ")";
  if (layout.rank() != static_cast<int>(shape.size()))
    return "the layout " + layout.str() + " is for rank " + std::to_string(layout.rank()) + ", the tile " +
           shapeText(shape) + " has rank " + std::to_string(shape.size());
  int64_t numel = 1;
  for (int64_t s : shape) {
    if (s < 1) return "the tile " + shapeText(shape) + " has an empty dimension";
    if (numel > std::numeric_limits<int64_t>::max() / s) return "the tile " + shapeText(shape) + " is too large";
    numel *= s;
  }
  int64_t regs = layout.elemsPerThread(shape);
  if (regs < 1 || regs > maxOwners / std::max(1, layout.numThreads()))
    return "the tile " + shapeText(shape) + " has " + std::to_string(regs) + " registers per thread x " +
           std::to_string(layout.numThreads()) + " threads: too many to draw (at most " + withCommas(maxOwners) +
           " element copies)";
  return "";
}

// Row-major element index of `c`, or -1 when a coordinate is outside the shape.
int64_t elementIndex(const Shape& shape, const std::vector<int64_t>& c) {
  if (c.size() != shape.size()) return -1;
  int64_t idx = 0;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (c[d] < 0 || c[d] >= shape[d]) return -1;
    idx = idx * shape[d] + c[d];
  }
  return idx;
}

// Fills the per-warp boxes and the per-cell edge flags from the first owners.
void computeOutlines(ThreadGrid& g) {
  g.warps.assign(static_cast<size_t>(g.numWarps), WarpBox{});
  for (int w = 0; w < g.numWarps; ++w) g.warps[static_cast<size_t>(w)].warp = w;
  for (const ElementOwner& o : g.owners) ++g.warps[static_cast<size_t>(o.warp)].elementsHeld;

  auto warpAt = [&](int64_t r, int64_t c) -> int {
    if (r >= g.rows || c >= g.cols) return -1;
    int64_t e = g.cellIndex(r, c);
    return e < 0 ? -1 : g.firstOwner(e).warp;
  };
  g.warpEdges.assign(static_cast<size_t>(g.rows * g.cols), 0);
  for (int64_t r = 0; r < g.rows; ++r) {
    for (int64_t c = 0; c < g.cols; ++c) {
      int w = warpAt(r, c);
      if (w < 0) continue;
      WarpBox& b = g.warps[static_cast<size_t>(w)];
      if (b.cells++ == 0) {
        b.rowMin = b.rowMax = r;
        b.colMin = b.colMax = c;
      } else {
        b.rowMin = std::min(b.rowMin, r), b.rowMax = std::max(b.rowMax, r);
        b.colMin = std::min(b.colMin, c), b.colMax = std::max(b.colMax, c);
      }
      uint8_t e = 0;
      if (c + 1 < g.cols && warpAt(r, c + 1) != w) e |= ThreadGrid::kEdgeRight;
      if (r + 1 < g.rows && warpAt(r + 1, c) != w) e |= ThreadGrid::kEdgeBottom;
      g.warpEdges[static_cast<size_t>(r * g.cols + c)] = e;
    }
  }
}

// "2nd", "4th", "32nd", "11th".
std::string ordinal(int64_t n) {
  int64_t last2 = n % 100, last = n % 10;
  const char* suffix = last2 >= 11 && last2 <= 13 ? "th" : last == 1 ? "st" : last == 2 ? "nd" : last == 3 ? "rd" : "th";
  return std::to_string(n) + suffix;
}

// Each warp's rows and columns (2-D) or elements (1-D), from every owner (replicas included).
void describeWarps(ThreadGrid& g) {
  const size_t n = static_cast<size_t>(g.numWarps);
  std::vector<std::vector<uint8_t>> rows(n), cols(n);
  const int64_t extent0 = g.shape[0], extent1 = g.oneD ? 1 : g.shape[1];
  for (size_t w = 0; w < n; ++w) {
    rows[w].assign(static_cast<size_t>(extent0), 0);
    cols[w].assign(static_cast<size_t>(extent1), 0);
  }
  for (int64_t e = 0; e < g.numel; ++e)
    for (const ElementOwner& o : g.ownersOf(e)) {
      rows[static_cast<size_t>(o.warp)][static_cast<size_t>(e / extent1)] = 1;
      cols[static_cast<size_t>(o.warp)][static_cast<size_t>(e % extent1)] = 1;
    }
  auto indices = [](const std::vector<uint8_t>& flags) {
    std::vector<int64_t> out;
    for (size_t i = 0; i < flags.size(); ++i)
      if (flags[i]) out.push_back(static_cast<int64_t>(i));
    return out;
  };
  for (size_t w = 0; w < n; ++w) {
    if (g.oneD)
      g.warps[w].where = describeIndexSet(indices(rows[w]), "element", "elements");
    else
      g.warps[w].where = describeIndexSet(indices(rows[w]), "row", "rows") + "; " +
                         describeIndexSet(indices(cols[w]), "column", "columns");
  }
}

}  // namespace

std::string describeIndexSet(const std::vector<int64_t>& v, const std::string& noun, const std::string& nouns) {
  if (v.empty()) return "no " + nouns;
  if (v.size() == 1) return noun + " " + std::to_string(v[0]);
  // Runs of consecutive indices.
  std::vector<std::pair<int64_t, int64_t>> runs;
  for (int64_t x : v) {
    if (!runs.empty() && x == runs.back().second + 1)
      runs.back().second = x;
    else
      runs.push_back({x, x});
  }
  auto runText = [](const std::pair<int64_t, int64_t>& r) {
    return r.first == r.second ? std::to_string(r.first) : std::to_string(r.first) + "-" + std::to_string(r.second);
  };
  if (runs.size() == 1) return nouns + " " + runText(runs[0]);
  // A regular pattern: runs of one length whose starts are evenly spaced.
  const int64_t len = runs[0].second - runs[0].first + 1, period = runs[1].first - runs[0].first;
  bool regular = true;
  for (size_t i = 1; i < runs.size(); ++i)
    regular = regular && runs[i].second - runs[i].first + 1 == len && runs[i].first - runs[i - 1].first == period;
  std::string s = nouns + " ";
  if (runs.size() <= 4) {
    for (size_t i = 0; i < runs.size(); ++i) s += (i ? ", " : "") + runText(runs[i]);
  } else {
    size_t shown = regular ? 3 : 4;
    for (size_t i = 0; i < shown; ++i) s += (i ? ", " : "") + runText(runs[i]);
    s += ", ..., " + runText(runs.back());
  }
  if (regular && runs.size() > 2) {
    if (len == 1)
      s += " (every " + ordinal(period) + ")";
    else
      s += " (" + std::to_string(len) + " of every " + std::to_string(period) + ")";
  } else if (!regular && runs.size() > 4) {
    s += " (" + countOf(static_cast<long long>(v.size()), noun, nouns) + ")";
  }
  return s;
}

int64_t ThreadGrid::cellIndex(int64_t row, int64_t col) const {
  if (row < 0 || col < 0 || row >= rows || col >= cols) return -1;
  int64_t e = row * cols + col;
  return e < numel ? e : -1;
}

std::vector<int64_t> ThreadGrid::elementCoords(int64_t element) const {
  if (shape.size() == 1) return {element};
  return {element / shape[1], element % shape[1]};
}

std::span<const ElementOwner> ThreadGrid::ownersOf(int64_t element) const {
  if (element < 0 || element >= numel) return {};
  size_t b = static_cast<size_t>(ownerStart[static_cast<size_t>(element)]);
  size_t e = static_cast<size_t>(ownerStart[static_cast<size_t>(element) + 1]);
  return std::span<const ElementOwner>(owners.data() + b, e - b);
}

// Files every (thread, register)'s element (coordsOf) into g, whose shape, rows, cols, numel,
// regsPerThread and threads are set; then the outlines and the warps' words. False (with
// g.error) when a pair lands outside the tile or an element has no owner.
static bool fillOwners(ThreadGrid& g, int threads, const std::function<std::vector<int64_t>(int, int64_t)>& coordsOf,
                       const std::string& what) {
  // Pass 1: the element of every (thread, register), in thread-then-register order.
  std::vector<int64_t> elementOf(static_cast<size_t>(threads * g.regsPerThread));
  g.ownerStart.assign(static_cast<size_t>(g.numel) + 1, 0);
  for (int t = 0; t < threads; ++t) {
    for (int64_t r = 0; r < g.regsPerThread; ++r) {
      int64_t e = elementIndex(g.shape, coordsOf(t, r));
      if (e < 0) {
        g.error = what + " maps thread " + std::to_string(t) + " register " + std::to_string(r) + " outside the " +
                  shapeText(g.shape) + " tile";
        return false;
      }
      elementOf[static_cast<size_t>(t * g.regsPerThread + r)] = e;
      ++g.ownerStart[static_cast<size_t>(e) + 1];
    }
  }
  // Pass 2: counts -> offsets, then file the owners (thread order is kept: a stable fill).
  for (size_t e = 0; e < static_cast<size_t>(g.numel); ++e) {
    if (g.ownerStart[e + 1] == 0) {
      g.error = what + " leaves element " + std::to_string(e) + " of the " + shapeText(g.shape) + " tile without an owner";
      return false;
    }
    g.ownerStart[e + 1] += g.ownerStart[e];
  }
  g.owners.resize(elementOf.size());
  std::vector<int64_t> next(g.ownerStart.begin(), g.ownerStart.end() - 1);
  for (int t = 0; t < threads; ++t)
    for (int64_t r = 0; r < g.regsPerThread; ++r) {
      int64_t e = elementOf[static_cast<size_t>(t * g.regsPerThread + r)];
      g.owners[static_cast<size_t>(next[static_cast<size_t>(e)]++)] = ElementOwner{t / kWarpSize, t % kWarpSize, r};
    }
  computeOutlines(g);
  describeWarps(g);
  g.ok = true;
  return true;
}

ThreadGrid buildThreadGrid(const Layout& layout, const Shape& shape, int64_t columns1D, int64_t maxOwners) {
  ThreadGrid g;
  g.shape = shape;
  g.layoutText = layout.str();
  g.error = checkInput(layout, shape, maxOwners);
  if (!g.error.empty()) return g;

  g.oneD = shape.size() == 1;
  g.numel = g.oneD ? shape[0] : shape[0] * shape[1];
  if (g.oneD) {
    g.cols = std::clamp<int64_t>(columns1D, 1, g.numel);
    g.rows = (g.numel + g.cols - 1) / g.cols;
  } else {
    g.rows = shape[0];
    g.cols = shape[1];
  }
  g.numWarps = layout.numWarps();
  g.regsPerThread = layout.elemsPerThread(shape);
  g.replication = layout.replication(shape);
  fillOwners(g, layout.numThreads(), [&](int t, int64_t r) { return layout.coords(shape, t, r); }, "the layout " + layout.str());
  return g;
}

ThreadGrid buildFragmentGrid(const MmaInstr& instr, MmaOperand op) {
  ThreadGrid g;
  const int rows = op == MmaOperand::B ? instr.k : instr.m, cols = op == MmaOperand::A ? instr.k : instr.n;
  const char* name = op == MmaOperand::A ? "A" : op == MmaOperand::B ? "B" : "C";
  g.shape = {rows, cols};
  g.rows = rows;
  g.cols = cols;
  g.numel = int64_t(rows) * cols;
  g.numWarps = 1;
  g.regsPerThread = instr.regs(op);
  g.layoutText = instr.ptx() + ", " + name + " fragments";
  fillOwners(g, kWarpSize, [&](int lane, int64_t e) {
    auto [r, c] = mmaFragmentCoord(instr, op, lane, static_cast<int>(e));
    return std::vector<int64_t>{r, c};
  }, instr.ptx() + "'s " + name + " table");
  return g;
}

std::string describeElement(const ThreadGrid& g, int64_t element, int maxOthers) {
  auto own = g.ownersOf(element);
  if (own.empty()) return "";
  auto c = g.elementCoords(element);
  std::string s = "element (" + std::to_string(c[0]) + (c.size() > 1 ? ", " + std::to_string(c[1]) : "") + "): ";
  const ElementOwner& o = own[0];
  s += "warp " + std::to_string(o.warp) + ", lane " + std::to_string(o.lane) + ", register " + std::to_string(o.reg) +
       " (thread " + std::to_string(o.thread()) + ")";
  if (own.size() > 1) {
    s += "; also held by ";
    size_t shown = std::min(own.size() - 1, static_cast<size_t>(std::max(maxOthers, 0)));
    for (size_t i = 1; i <= shown; ++i)
      s += (i > 1 ? ", " : "") + std::string("w") + std::to_string(own[i].warp) + " lane " + std::to_string(own[i].lane) +
           " r" + std::to_string(own[i].reg);
    if (own.size() - 1 > shown) s += (shown ? ", " : "") + std::string("and ") + std::to_string(own.size() - 1 - shown) + " more";
  }
  return s;
}

}  // namespace tl::viz
