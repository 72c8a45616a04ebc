// Ownership maps: which thread of which warp owns which element of a tile, as text — the
// drawing GPU courses use, generated from a layout (`tl-thread --show-map VALUE`).
//
// Expects: a layout (ir/Layout.h) and a tile shape of the layout's rank.
// Guarantees: deterministic text (no addresses, no hashing), at most maxRows x maxCols cells
// (larger tiles show their first and last rows/columns around a `...`), and a legend.
//
//   1-D <16xf32, #blocked<spt=[2], tpw=[32], wpc=[1], order=[0]>>:
//        0        1        2        3     ...
//     w0:t0/r0 w0:t0/r1 w0:t1/r0 w0:t1/r1 ...
//   cell = w<warp>:t<lane>/r<register>; `*` marks an element held by more than one thread.
//
//   per thread: "thread 37 (warp 1, lane 5) owns [148..151] (r0-r3), [660..663] (r4-r7)"
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "ir/IR.h"
#include "ir/Layout.h"
#include "ir/MmaLayout.h"

namespace tl {

struct OwnershipMapOptions {
  int maxRows = 16;             // 2-D: rows shown (first half and last half when cut)
  int maxCols = 16;             // 2-D: columns shown
  int perLine = 8;              // 1-D: elements per line
  int maxLines = 16;            // 1-D: lines shown
  std::vector<int> threads;     // threads in the per-thread listing; empty: defaultListedThreads
  bool listing = true;          // append the per-thread listing
};

// Lanes 0, 1 and 31 of warp 0, and lane 0 of every other warp.
std::vector<int> defaultListedThreads(int numWarps);

// The grid, its legend and (with options.listing) the per-thread listing.
std::string renderOwnershipMap(const Layout& layout, const Shape& shape, const OwnershipMapOptions& options = {});

// The same for a value: a header with its type, then the map. A value without a layout (a
// scalar, or IR before assign-layouts) gets a one-line explanation instead.
std::string renderOwnershipMap(const Value& value, const std::string& displayName,
                               const OwnershipMapOptions& options = {});

// "thread 37 (warp 1, lane 5) owns [148..151] (r0-r3), [660..663] (r4-r7)": the elements the
// thread holds in register order, grouped into runs of consecutive elements (2-D: "(row, c0..c1)").
std::string describeThread(const Layout& layout, const Shape& shape, int thread);

// Finds the value `name` names in printed IR: "%x" or "x" is the first value whose source
// name is x, "x.2" the third (the printer's numbering of repeated names), "%7" the 8th unnamed
// value. Values are counted in printed order (parameters, then ops and region arguments as
// they appear). nullptr when there is no such value.
const Value* findValueByName(const Function& fn, std::string_view name);

// The fragments of one tensor-core instruction (ir/MmaLayout.h), as the PTX ISA draws them:
// for A (m x k), B (k x n) and C (m x n) a grid whose cell (row, col) is `T<lane>:<element>`,
// the lane holding that matrix element and its index in the lane's fragment (a0, b3, c2 ...)
// (`tl-thread --show-fragments f16|bf16|tf32|e4m3|e5m2`).
std::string renderMmaFragments(const MmaInstr& instr);

}  // namespace tl
