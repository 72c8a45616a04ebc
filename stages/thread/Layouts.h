// Layout decisions on block IR: which thread of which warp owns which element of every tile.
//
// Expects: verified block IR without layouts (after the block pipeline).
// Guarantees: every tile-typed value (op results and region arguments) carries a layout for
// `numWarps` warps (Function::numWarps is set), loads and stores carry a `vec` attribute (the
// elements one thread accesses at once, up to 16 bytes, proven contiguous and aligned by the
// axis analysis), layout changes are explicit `convert_layout` ops, and the IR verifies.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "ir/IR.h"
#include "ir/Pass.h"

namespace tl {

// What the axis analysis proves about an integer or pointer value, per dimension (Triton's
// AxisInfo): runs of `contiguity` consecutive elements differ by 1 (element offsets), values
// are divisible by `divisibility` (for pointers: the byte address), and runs of `constancy`
// elements are equal.
struct AxisInfo {
  std::vector<int64_t> contiguity;
  std::vector<int64_t> divisibility;
  std::vector<int64_t> constancy;
  std::string str() const;  // "contiguity=[1024] divisibility=[16] constancy=[1]"
};

// Runs the analysis over the function; every int/pointer value (and i1 masks, for constancy) gets an entry.
std::map<const Value*, AxisInfo> analyzeAxes(const Function& fn);

// The layout passes, in order, for the pass manager (each verifies afterwards):
//   assign-layouts      anchor loads/stores on coalesced layouts from the axis analysis, give
//                       every other tile a layout, insert convert_layout where layouts meet
//   remove-conversions  propagate layouts to remove conversions that are not needed
PassManager layoutPipeline(int numWarps);

}  // namespace tl
