// ThreadGrid: who owns each element of a tile, as the Threads panel draws it. For a layout
// (ir/Layout.h) and a tile shape, every element gets the list of (warp, lane, register) that
// hold it — several when the layout replicates — plus what the panel needs to outline warps
// (per-warp bounding boxes, and per cell whether its right / bottom neighbour belongs to
// another warp).
//
// Expects: a layout and a shape of the same rank, rank 1 or 2, every extent >= 1. A 1-D tile of
// n elements is drawn as rows of `columns1D` cells (element i at row i / columns1D, column
// i % columns1D); a 2-D tile as its own rows and columns.
// Guarantees: computed only from Layout::coords() (the function the lowering uses), so the
// picture cannot disagree with the generated code; owners of an element are sorted by thread;
// bad input (rank mismatch, rank > 2, empty extents, more than `maxOwners` (thread, register)
// pairs) never throws: `ok` is false and `error` says why, in one sentence.
//
//   ThreadGrid g = buildThreadGrid(*value.layout, value.shape);
//   if (!g.ok) show(g.error);
//   const ElementOwner& o = g.firstOwner(g.cellIndex(r, c));   // color = laneColor(o.warp, o.lane)
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "ir/Layout.h"
#include "ir/MmaLayout.h"

namespace tl::viz {

// One (thread, register) holding an element.
struct ElementOwner {
  int32_t warp = 0;  // warp within the block
  int32_t lane = 0;  // 0..31
  int64_t reg = 0;   // register index within the thread (ir/Layout.h register order)
  int thread() const { return warp * kWarpSize + lane; }
};

// Where one warp's elements lie in the drawn grid (cells, inclusive). A warp whose elements
// are not one rectangle (a layout tile repeated over a larger tensor) has a box covering all
// of them; `cells` says how many cells it holds as first owner.
struct WarpBox {
  int warp = 0;
  int64_t rowMin = 0, rowMax = -1, colMin = 0, colMax = -1;  // rowMax < rowMin: owns no cell
  int64_t cells = 0;           // cells whose first owner is this warp
  int64_t elementsHeld = 0;    // (element, lane) pairs of this warp, replicas included
  // Where its elements are, in the tile's own coordinates, as describeIndexSet words it:
  // "rows 0, 4, 8, ..., 28; columns 0-63" (2-D) or "elements 0-127, 512-639" (1-D). Replicas
  // count: an element the warp holds at all is its.
  std::string where;
};

struct ThreadGrid {
  bool ok = false;
  std::string error;          // why not ok

  Shape shape;                // the tile's shape
  bool oneD = false;          // a 1-D tile folded into rows
  int64_t numel = 0;          // elements of the tile
  int64_t rows = 0, cols = 0; // the drawn grid (1-D: ceil(n / columns1D) x columns1D)
  int numWarps = 0;
  int64_t regsPerThread = 0;  // Layout::elemsPerThread
  int64_t replication = 1;    // Layout::replication: threads per element
  std::string layoutText;     // Layout::str()

  // Owners of element e (row-major element index): owners[ownerStart[e] .. ownerStart[e + 1]).
  std::vector<int64_t> ownerStart;
  std::vector<ElementOwner> owners;
  std::vector<WarpBox> warps;  // one per warp, index = warp

  // Per drawn cell (row-major over rows x cols): 1 bit "right neighbour's first owner is in
  // another warp", 2 bit "bottom neighbour's is" (cells past the end of a 1-D tile count as
  // another warp, so the outline closes).
  std::vector<uint8_t> warpEdges;
  static constexpr uint8_t kEdgeRight = 1, kEdgeBottom = 2;

  // The element drawn at (row, col), or -1 for a cell past the end of a 1-D tile / outside.
  int64_t cellIndex(int64_t row, int64_t col) const;
  // The element's coordinates in the tile ({i} for 1-D, {r, c} for 2-D).
  std::vector<int64_t> elementCoords(int64_t element) const;
  std::span<const ElementOwner> ownersOf(int64_t element) const;
  // The lowest thread holding the element (the one a cell is colored by).
  const ElementOwner& firstOwner(int64_t element) const { return owners[static_cast<size_t>(ownerStart[static_cast<size_t>(element)])]; }
  uint8_t edges(int64_t row, int64_t col) const { return warpEdges[static_cast<size_t>(row * cols + col)]; }
};

// (thread, register) pairs beyond which the grid is not computed: 256K, a 512 x 512 tile held
// once. The Threads panel builds the grid on the UI thread (one Layout::coords call per pair),
// so this keeps a newly chosen value to a few milliseconds; a larger tile is refused with a
// reason (`error`) the panel prints.
constexpr int64_t kMaxGridOwners = int64_t(1) << 18;

ThreadGrid buildThreadGrid(const Layout& layout, const Shape& shape, int64_t columns1D = 32,
                           int64_t maxOwners = kMaxGridOwners);
// The same picture for one operand of a tensor-core instruction (ir/MmaLayout.h): the matrix
// (A m x k, B k x n, C m x n) with each element's lane and its index in that lane's fragment as
// the owner (warp 0, `reg` = the element a0, b3, c2 ...), from mmaFragmentCoord.
ThreadGrid buildFragmentGrid(const MmaInstr& instr, MmaOperand op);

// A set of indices (sorted, distinct) in words, truthfully and short: "row 3", "rows 0-28",
// "rows 0, 4, 8, ..., 28" (every 4th), "rows 0-1, 8-9, ..., 56-57" (2 of every 8), else the
// first runs and "... (N rows)". `noun` / `nouns`: "row" / "rows".
std::string describeIndexSet(const std::vector<int64_t>& sorted, const std::string& noun, const std::string& nouns);

// "element (3, 17): warp 1, lane 4, register 2 (thread 36); also held by warp 2 lane 4 r2,
// ..." (at most `maxOthers` other owners listed, then "and N more").
std::string describeElement(const ThreadGrid& grid, int64_t element, int maxOthers = 6);

}  // namespace tl::viz
