// Layout decisions on block IR: which thread of which warp owns which element of every tile.
//
// Expects: verified block IR without layouts (after the block pipeline).
// Guarantees: every tile-typed value (op results and region arguments) carries a layout for
// `numWarps` warps (Function::numWarps is set), loads and stores carry a `vec` attribute (the
// elements one thread accesses at once, up to 16 bytes, proven contiguous and aligned by the
// axis analysis), layout changes are explicit `convert_layout` ops, and the IR verifies.
//
// The `vec` attribute (kVecAttr), for the lowering: on a load or store whose pointer operand
// has layout L (a blocked layout; with keepLayouts also a slice layout, whose fastest dimension
// is the first kept root dimension in L.order()), `vec` is a power of two with
// vec * elementBytes <= 16 that divides L.sizePerThread() along that fastest dimension. Each thread's registers come in groups of `vec` consecutive
// registers (register index r with r % vec == 0 starts a group) whose elements are consecutive
// along order[0], whose addresses are consecutive and vec*elementBytes-aligned, and whose mask
// (and `other`) is the same for the whole group: one vector access with one predicate. A load
// or store of a scalar has vec = 1. docs/layouts.md explains the rules.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "frontend/Launch.h"
#include "ir/IR.h"
#include "ir/Layout.h"
#include "ir/MmaLayout.h"
#include "ir/Pass.h"

namespace tl {

// The attribute assign-layouts puts on every load and store.
inline constexpr const char* kVecAttr = "vec";

// What the axis analysis proves about an integer or pointer value, per dimension (Triton's
// AxisInfo), with runs aligned at multiples of their length in index space:
//   contiguity[d]    runs of this many consecutive elements along d differ by 1 (element
//                    offsets; for pointers: one element apart)
//   divisibility[d]  the first element of each contiguity run is divisible by this power of two
//                    (for pointers: the byte address; with contiguity 1, every element)
//   constancy[d]     runs of this many elements along d are equal
// A scalar is described as a one-element vector (contiguity [1], constancy [1]).
// Every field is a power of two; the analysis never claims more than is true.
struct AxisInfo {
  std::vector<int64_t> contiguity;
  std::vector<int64_t> divisibility;
  std::vector<int64_t> constancy;
  std::optional<int64_t> value;  // every element is known to equal this integer

  std::string str() const;  // "contiguity=[1024] divisibility=[16] constancy=[1]" (+ " value=0")
  bool operator==(const AxisInfo&) const = default;
};

// The largest divisibility the analysis ever claims (what a 0 is divisible by).
inline constexpr int64_t kMaxDivisibility = int64_t(1) << 30;

// What the launch tells the analysis about runtime integer scalar parameters: Triton's
// specialization (docs/layouts.md, "Specialization"). Compiled code is valid only for launches
// whose scalar arguments satisfy the same facts.
struct ParamFact {
  int64_t divisibility = 1;  // a power of two dividing the argument (at most 16)
  bool isOne = false;        // the argument equals 1 (a unit stride)
};
using ParamHints = std::map<std::string, ParamFact>;  // runtime scalar parameter name -> facts

// Triton's rule, refined: an int scalar argument v is known divisible by the largest power of
// two dividing it, at most 16 (Triton distinguishes only 16 and 1); v == 1 is known to be 1.
ParamHints paramHintsFromLaunch(const LaunchConfig& launch);
// "N: divisible by 4; stride_in: equals 1" (one line, parameters in name order; "none" if empty).
std::string describeHints(const ParamHints& hints);

// Runs the analysis over the function; every value gets an entry (floats: constancy only,
// which is what a load's `other` needs). Pointer parameters are 256-byte aligned (runtime/Memory.h aligns buffers so);
// int scalar parameters are divisible by 1 unless `hints` says more.
std::map<const Value*, AxisInfo> analyzeAxes(const Function& fn, const ParamHints& hints = {});

// The two passes (each returns true when it changed the function; see the .cpp contracts).
// keepLayouts: keep the layouts the source implies (no convert_layout of loaded data except at
// trans; see AssignLayouts.cpp and docs/layouts.md).
bool assignLayouts(Function& fn, int numWarps, const ParamHints& hints = {}, bool keepLayouts = false, bool wgmma = false);
bool removeConversions(Function& fn);

// The layout passes, in order, for the pass manager (each verifies afterwards):
//   assign-layouts      anchor loads/stores on coalesced layouts from the axis analysis, give
//                       every other tile a layout, insert convert_layout where layouts meet
//                       (keepLayouts: stores follow their values, conversions only at trans)
//   remove-conversions  propagate layouts to remove conversions that are not needed
PassManager layoutPipeline(int numWarps, const ParamHints& hints = {}, bool keepLayouts = false, bool wgmma = false);

// The anchor layout assign-layouts picks for a load or store (op kind Load/Store with a tile
// pointer), and its vector width; exposed for tests and for tl-thread's explanations.
struct MemoryAnchor {
  LayoutPtr layout;              // defaultBlockedLayout(shape, numWarps, vec, order)
  std::vector<int> order;        // dimensions by pointer contiguity, most contiguous first
  int vec = 1;                   // elements per vector access
  std::string why;               // "contiguity 1024, alignment 16 B = 4 elements, mask 4 -> vec 4"
};
MemoryAnchor memoryAnchor(const Op& memOp, const std::map<const Value*, AxisInfo>& axes, int numWarps);
// The same access in a layout fixed beforehand (keepLayouts: a store in its value's layout):
// `vec` is the widest the axis analysis allows along the layout's fastest value dimension,
// capped by the elements each thread holds consecutively along it; `order` lists the value
// dimensions in the layout's order.
MemoryAnchor memoryAnchorIn(const Op& memOp, const std::map<const Value*, AxisInfo>& axes, const LayoutPtr& layout);

// Tensor cores for a dot (block op Dot): the mma instruction its inputs and precision select
// (ir/MmaLayout.h), and the accumulator layout assign-layouts gives it, or no instruction with
// the reason in `why` when it runs on FMAs instead (f32 in IEEE precision, batched, or a shape
// that does not divide into the instruction's 16 x 8 x k pieces for numWarps warps); a 2-D dot
// on FMAs gets a register-tile accumulator (fmaAccumulatorLayout) where the tile allows. The
// lowering uses tensor cores exactly when `instr` is set and the accumulator has this layout. A chained dot — its a
// computed from another dot's result by shape and elementwise ops, or its result feeding
// another dot's a (attention) — gets every warp along M (mmaAccumulatorLayout's rowsOnly), so
// the first dot's result is, register for register, the second's A fragments.
struct DotPlan {
  std::optional<MmaInstr> instr;  // set when the dot runs on tensor cores
  bool wgmma = false;             // ... as warpgroup MMAs (wgmma.mma_async), not mma.sync
  bool tf32x3 = false;            // precision "tf32x3": three tf32 mma per tile (LowerDot.cpp)
  LayoutPtr accLayout;            // mmaAccumulatorLayout(M, N, numWarps); on FMAs fmaAccumulatorLayout (or nullptr)
  std::string why;                // "mma.sync.aligned.m16n8k16...: warps 2 x 2" or why not
};
// `wgmma`: the target has warpgroup MMAs (sm_90a); a dot that fits them uses them (every warp
// along M: mmaAccumulatorLayout with rowsOnly).
DotPlan planDot(const Op& dot, int numWarps, bool wgmma = false);
// One line per dot of the block IR: where it is and planDot's decision (tl-thread --explain-layouts).
std::string explainDots(const Function& fn, int numWarps, bool wgmma = false);

}  // namespace tl
