// assign-layouts: decide which thread owns which element of every tile.
//
// Expects: verified block IR without layouts (the block pipeline's output).
// Guarantees: Function::numWarps = numWarps; every tile value (op results and region
// arguments) has a layout for numWarps warps; every load and store has the `vec` attribute
// (Layouts.h, kVecAttr) and its pointer, mask, other/value operands are in its anchor layout;
// wherever an operand's layout is not the one its op needs, an explicit convert_layout is
// inserted (the IR verifies). Semantics are unchanged: layouts only say who computes what.
//
// Five steps (docs/layouts.md, "Assigning layouts"):
//   1. anchors: each load/store gets a coalesced layout from the axis analysis (memoryAnchor);
//   2. forward candidates: each load's layout flows to the values computed from it (through
//      elementwise ops, broadcasts, reductions as slices, loop-carried values), as Triton's
//      LayoutPropagation does; a value reached by several picks the widest per-thread vector;
//   3. backward wants: a value no load reaches (indices, masks, constants) wants the layout its
//      last user needs, so index arithmetic is computed directly in the layout of the access;
//   4. decide, in program order: ops whose result layout is fixed by their operand (reduce ->
//      slice, broadcast, dot -> its accumulator) follow it; a dot on tensor cores (planDot) has
//      the mma accumulator layout instead, seeded as a forward candidate like a load's anchor,
//      so the loop-carried accumulator takes it too; others take their candidate or want, or a
//      default blocked layout when nothing decides;
//   5. convert: insert convert_layout wherever an operand's layout differs from what its op
//      needs. remove-conversions cleans up the cheap ones afterwards.
// trans(x) is a free layout permutation: its result takes x's layout with the dims permuted
// (permutedLayout), so no data moves at the trans; a later user may still convert. join gives
// its result the operands' layout with the new dim in registers and split drops such a dim
// (joinedLayout / splitLayout: no data moves); otherwise they, and reshape, take the layout
// their users want and the lowering moves data through shared memory (LowerShape.cpp).
//
// keepLayouts (docs/layouts.md, "Keeping the layouts the source implies"): no convert_layout of
// loaded data is inserted on the passes' own initiative. Loads keep their coalesced anchors, but
// a store is anchored on the layout of the value it stores (its `vec` is what that layout and
// the addresses allow, 1 when the layout runs across the contiguous dimension); a load whose
// result an op needs in another layout (bias[None, :] next to a 2-D tile; exp(b) + a with b
// read along the other dimension) is re-anchored to read directly in that layout. In both modes, loads and stores of data-dependent addresses (gathers,
// scatters) follow the addresses: pointer tiles cannot move between threads.
// Data then changes threads only where the source says so: reductions, and trans, whose result
// is materialised in the default row-major layout for its shape (with the operand's vector
// width) by a convert_layout right after it, at the trans's location.
#include <algorithm>
#include <deque>
#include <numeric>
#include <unordered_map>
#include <unordered_set>

#include "ir/Builder.h"
#include "ir/Verifier.h"  // transOrder
#include "thread/Layouts.h"

namespace tl {

namespace {

bool sameLayout(const LayoutPtr& a, const LayoutPtr& b) { return a && b && *a == *b; }

std::string listStr(const std::vector<int>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + std::to_string(v[i]);
  return s + "]";
}

const AxisInfo* infoIn(const std::map<const Value*, AxisInfo>& axes, const Value* v) {
  auto it = axes.find(v);
  return it == axes.end() ? nullptr : &it->second;
}

int64_t floorPowerOfTwo(int64_t v) {
  int64_t p2 = 1;
  while (p2 * 2 <= v) p2 *= 2;
  return p2;
}

// The widest vector access along value dim `o` that the facts allow, before any layout
// decides: contiguity along o, the pointer's alignment in elements, 16 bytes, the tile's extent,
// and the mask's and other's constancy (one predicate per vector). Appends the reasons to `why`.
int64_t accessLimit(const Op& memOp, const std::map<const Value*, AxisInfo>& axes, int o, std::string& why) {
  const Type& t = memOp.operand(0)->type;
  const AxisInfo* p = infoIn(axes, memOp.operand(0));
  int64_t elemBytes = dtypeBytes(t.dtype);
  int64_t contig = p ? p->contiguity[o] : 1;
  int64_t alignElems = std::max<int64_t>(1, (p ? p->divisibility[o] : 1) / elemBytes);
  int64_t vec = std::min({contig, alignElems, 16 / elemBytes, t.shape[o]});
  why += "contiguity " + std::to_string(contig) + ", alignment " + std::to_string(alignElems * elemBytes) + " B = " +
         std::to_string(alignElems) + " elements";
  // The mask (loads: operand 1, stores: operand 2) and a load's `other` must be uniform over
  // each vector.
  auto limitBy = [&](size_t idx, const char* what) {
    if (memOp.numOperands() <= idx) return;
    const AxisInfo* m = infoIn(axes, memOp.operand(idx));
    int64_t k = m && memOp.operand(idx)->type.isTile() ? m->constancy[o] : 1;
    vec = std::min(vec, k);
    why += std::string(", ") + what + " constancy " + std::to_string(k);
  };
  if (memOp.kind == OpKind::Load) {
    limitBy(1, "mask");
    limitBy(2, "other");
  } else {
    limitBy(2, "mask");
  }
  return vec;
}

}  // namespace

// Step 1, for one memory op. order: dimensions by pointer contiguity, most contiguous first
// (ties: the last dimension first, row-major). vec: the widest access every fact allows —
// contiguity along order[0], the pointer's alignment in elements, the mask's and other's
// constancy (one predicate per vector), 16 bytes, and the thread's share of the tile (as
// Triton: no more than numel / threads, so small tiles spread over more threads).
MemoryAnchor memoryAnchor(const Op& memOp, const std::map<const Value*, AxisInfo>& axes, int numWarps) {
  MemoryAnchor a;
  const Type& t = memOp.operand(0)->type;
  if (t.isScalar()) {
    a.why = "scalar access";
    return a;
  }
  const AxisInfo* p = infoIn(axes, memOp.operand(0));
  a.order.resize(t.rank());
  std::iota(a.order.begin(), a.order.end(), 0);
  std::stable_sort(a.order.begin(), a.order.end(), [&](int x, int y) {
    int64_t cx = p ? p->contiguity[x] : 1, cy = p ? p->contiguity[y] : 1;
    return cx != cy ? cx > cy : x > y;
  });
  int64_t vec = accessLimit(memOp, axes, a.order[0], a.why);
  int64_t share = std::max<int64_t>(1, t.numel() / (int64_t(numWarps) * kWarpSize));
  if (share < vec) {
    vec = share;
    a.why += ", " + std::to_string(share) + " element(s) per thread";
  }
  a.vec = static_cast<int>(floorPowerOfTwo(vec));
  a.why += " -> vec " + std::to_string(a.vec) + ", order " + listStr(a.order);
  a.layout = defaultBlockedLayout(t.shape, numWarps, a.vec, a.order);
  return a;
}

// The same access in a layout fixed beforehand: along the layout's fastest value dimension, at
// most the elements a thread holds consecutively there.
MemoryAnchor memoryAnchorIn(const Op& memOp, const std::map<const Value*, AxisInfo>& axes, const LayoutPtr& layout) {
  MemoryAnchor a;
  a.layout = layout;
  const Type& t = memOp.operand(0)->type;
  if (t.isScalar() || !layout) {
    a.why = "scalar access";
    return a;
  }
  // Value dim j is root dim kept[j] of the layout (a slice's sliced root dims are not value dims).
  std::vector<int> kept(t.rank());
  std::iota(kept.begin(), kept.end(), 0);
  for (const Layout* l = layout.get(); l->kind() == Layout::Kind::Slice; l = l->parent().get())
    for (int& d : kept)
      if (d >= l->sliceDim()) ++d;
  for (int root : layout->order())
    for (int j = 0; j < t.rank(); ++j)
      if (kept[j] == root) a.order.push_back(j);
  int o = a.order[0];
  int64_t run = std::min<int64_t>(layout->sizePerThread()[kept[o]], t.shape[o]);
  a.why = "in this layout: fastest dim " + std::to_string(o) + " (" + std::to_string(run) + " per thread), ";
  int64_t vec = std::min(run, accessLimit(memOp, axes, o, a.why));
  a.vec = static_cast<int>(floorPowerOfTwo(vec));
  a.why += " -> vec " + std::to_string(a.vec);
  return a;
}

namespace {

// The dot whose result `v` is computed from through shape, leaf and elementwise ops, or nullptr
// (a walk of the operands' definitions, each value once).
const Op* dotFeeding(const Value* v, std::unordered_set<const Value*>& seen) {
  if (v->isRegionArg() || !seen.insert(v).second) return nullptr;
  const Op& op = *v->def;
  if (op.kind == OpKind::Dot) return &op;
  const OpCategory c = op.info().category;
  if (!op.regions.empty() || (c != OpCategory::Shape && c != OpCategory::Elementwise)) return nullptr;
  for (const Value* o : op.operands)
    if (const Op* d = dotFeeding(o, seen)) return d;
  return nullptr;
}

// A dot in a chain: its a operand comes from another dot, or its result feeds another dot's a.
bool chainedDot(const Op& dot) {
  std::unordered_set<const Value*> seen;
  if (dotFeeding(dot.operand(0), seen)) return true;
  const Region* top = dot.parent;
  while (top->parentOp) top = top->parentOp->parent;
  bool feeds = false;
  walk(*top, [&](Op& other) {
    if (feeds || other.kind != OpKind::Dot || &other == &dot) return;
    std::unordered_set<const Value*> s;
    feeds = dotFeeding(other.operand(0), s) == &dot;
  });
  return feeds;
}

}  // namespace

// Why a dot cannot run as wgmma (empty: it can): f16 / bf16, tf32 (f32 in precision tf32) or fp8
// inputs, warpgroups of 4 warps all along M (M a multiple of 16 x num_warps), rows of each
// operand a swizzle atom (32, 64 or 128 bytes, or a multiple of 128), at most 256 columns per
// instruction. An a from another dot's registers (attention's p) is read from them
// (LowerWgmma.cpp).
std::string wgmmaObstacle(const Op& dot, int numWarps) {
  const Type &a = dot.operand(0)->type, &b = dot.operand(1)->type;
  const int64_t M = a.shape[0], K = a.shape[1], N = b.shape[1];
  auto rowOk = [](int64_t elems) { return elems == 16 || elems == 32 || elems == 64 || (elems >= 64 && elems % 64 == 0); };
  const std::string* precision = dot.strAttrIf("precision");
  const bool tf32 = a.dtype == DType::F32 && precision && *precision == "tf32";
  if (a.dtype == DType::F32 && precision && *precision == "tf32x3")
    return "tf32x3 runs as three mma.sync per tile (wgmma would read b's low part from a second shared buffer: not built)";
  if (a.dtype != DType::F16 && a.dtype != DType::BF16 && !tf32 && !isFp8(a.dtype))
    return "wgmma is built for f16 / bf16, tf32 and fp8 inputs only";
  if (numWarps % 4) return "wgmma needs whole warpgroups (num_warps a multiple of 4)";
  if (M % (16 * numWarps)) return "wgmma needs M a multiple of 16 x num_warps = " + std::to_string(16 * numWarps);
  const int64_t kBytes = K * dtypeBytes(a.dtype);
  if (!rowOk(kBytes / 2) || kBytes > 512)
    return "wgmma needs rows of K of 32, 64 or a multiple of 128 bytes up to 512 (K = " + std::to_string(K) + " x " +
           std::to_string(dtypeBytes(a.dtype)) + " bytes)";
  if (!rowOk(N) || (N > 256 && N % 256)) return "wgmma needs N = 16, 32, 64 or a multiple of 64 (of 256 above 256)";
  return "";
}

DotPlan planDot(const Op& dot, int numWarps, bool wgmma) {
  DotPlan p;
  const Type &a = dot.operand(0)->type, &c = dot.operand(2)->type;
  const std::string* precision = dot.strAttrIf("precision");
  const bool tf32 = precision && *precision == "tf32";
  p.tf32x3 = a.dtype == DType::F32 && precision && *precision == "tf32x3";
  // On FMAs a 2-D dot's accumulator is a register tile (fmaAccumulatorLayout), when the tile
  // has at least one element per thread.
  auto onFmas = [&](const std::string& why) {
    p.why = "FMAs: " + why + (p.tf32x3 ? " (tf32x3 on FMAs is computed in IEEE fp32)" : "");
    if (a.rank() == 2 && c.rank() == 2) p.accLayout = fmaAccumulatorLayout(c.shape[0], c.shape[1], numWarps);
    if (p.accLayout) {
      auto perThread = [&](size_t d) { return c.shape[d] / (int64_t(p.accLayout->threadsPerWarp()[d]) * p.accLayout->warpsPerCTA()[d]); };
      p.why += "; register tiles of " + std::to_string(perThread(0)) + " x " + std::to_string(perThread(1)) + " per thread";
    }
    return p;
  };
  auto instr = mmaInstrFor(a.dtype, tf32 || p.tf32x3);
  if (!instr) return onFmas("f32 inputs in IEEE precision (input_precision=\"tf32\" or \"tf32x3\" uses tensor cores)");
  if (a.rank() != 2) return onFmas("a batched dot runs on FMAs (tensor cores take 2-D dots)");
  const int64_t M = c.shape[0], N = c.shape[1], K = a.shape[1];
  if (K % instr->k != 0)
    return onFmas("K = " + std::to_string(K) + " is not a multiple of " + instr->shapeName() + "'s k = " + std::to_string(instr->k));
  std::string why;
  std::string noWgmma = wgmma ? wgmmaObstacle(dot, numWarps) : "";
  const bool useWgmma = wgmma && noWgmma.empty();
  p.accLayout = mmaAccumulatorLayout(M, N, numWarps, &why, chainedDot(dot) || useWgmma);
  if (!p.accLayout) return onFmas(why);
  p.instr = instr;
  const auto& w = p.accLayout->warpsPerCTA();
  if (useWgmma && w[0] == numWarps) {
    p.wgmma = true;
    const int64_t perInstr = std::min<int64_t>(N, 256);
    p.why = "tensor cores: wgmma.mma_async.m64n" + std::to_string(perInstr) + "k" + std::to_string(instr->k) + (c.dtype == DType::F16 ? ".f16." : ".f32.") +
            instr->typeName() + ", " + std::to_string(numWarps / 4) + " warpgroup" + (numWarps > 4 ? "s" : "") + " along M, " +
            std::to_string(M / (16 * numWarps) * (N / perInstr) * (K / instr->k)) + " wgmma per warpgroup";
    return p;
  }
  const int64_t perWarp = M / (16 * w[0]) * (N / (8 * w[1])) * (K / instr->k) * (p.tf32x3 ? 3 : 1);
  p.why = "tensor cores: " + instr->ptx(c.dtype) + ", warps " + std::to_string(w[0]) + " x " + std::to_string(w[1]) + ", " +
          std::to_string(perWarp) + " mma per warp" +
          (p.tf32x3 ? " (tf32x3: a = hi + lo, b likewise; lo*hi, hi*lo and hi*hi per tile)" : "") +
          (p.tf32x3 && !noWgmma.empty() && wgmma ? "; not wgmma: " + noWgmma : "");
  return p;
}

std::string explainDots(const Function& fn, int numWarps, bool wgmma) {
  std::string out;
  walk(fn.body, [&](Op& op) {
    if (op.kind != OpKind::Dot) return;
    out += "  dot at " + std::to_string(op.loc.line) + ":" + std::to_string(op.loc.col) + ": " + planDot(op, numWarps, wgmma).why + "\n";
  });
  return out;
}

namespace {

class Assigner {
 public:
  Assigner(Function& fn, int numWarps, const ParamHints& hints, bool keepLayouts, bool wgmma)
      : fn_(fn), numWarps_(numWarps), keep_(keepLayouts), wgmma_(wgmma) {
    axes_ = analyzeAxes(fn, hints);
  }

  void run() {
    size_t memOps = 0;
    walk(fn_.body, [&](Op& op) {
      for (size_t i = 0; i < op.numOperands(); ++i) uses_[op.operand(i)].push_back({&op, i});
      if (op.kind == OpKind::Dot) {
        DotPlan plan = planDot(op, numWarps_, wgmma_);
        if (plan.accLayout) mma_[&op] = plan.accLayout;
        if (plan.accLayout && !plan.instr) fmaAcc_.push_back(plan.accLayout);
      }
      if ((op.kind == OpKind::Load || op.kind == OpKind::Store)) {
        MemoryAnchor a = memoryAnchor(op, axes_, numWarps_);
        op.setAttr(kVecAttr, int64_t(a.vec));
        if (a.layout) anchors_[&op] = a.layout;
        ++memOps;
      }
    });
    // keepLayouts re-decides after each round of re-anchored loads; each load moves at most once.
    for (size_t round = 0;; ++round) {
      // Accesses that follow data change what their results give forward: to a fixpoint.
      for (size_t i = 0; i <= memOps; ++i) {
        cands_.clear();
        forwardCandidates();
        if (!followData()) break;
      }
      wants_.clear();
      backwardWants(fn_.body);
      decide(fn_.body);
      if (!keep_ || round > memOps || !reanchorLoads()) break;
    }
    if (keep_) {
      anchorStoresOnValues();
      materializeTransposes(fn_.body);
    }
    insertConversions(fn_.body);
    fn_.numWarps = numWarps_;
  }

 private:
  Function& fn_;
  int numWarps_;
  bool keep_;
  bool wgmma_;  // the target has warpgroup MMAs (planDot)
  std::unordered_set<const Op*> reanchored_;  // keepLayouts: loads already moved
  std::map<const Value*, AxisInfo> axes_;
  std::unordered_map<const Op*, LayoutPtr> anchors_;
  std::unordered_map<const Op*, LayoutPtr> mma_;  // dots on tensor cores: their accumulator layout (on FMAs too)
  std::vector<LayoutPtr> fmaAcc_;                  // the accumulator layouts of dots on FMAs
  std::unordered_map<const Value*, std::vector<std::pair<Op*, size_t>>> uses_;
  std::unordered_map<const Value*, std::vector<LayoutPtr>> cands_;
  std::unordered_map<const Value*, LayoutPtr> wants_;

  LayoutPtr defaultLayout(const Type& t) const { return defaultBlockedLayout(t.shape, numWarps_, 1); }

  // Atomics take one layout for pointers, values, mask and result, like elementwise ops (any
  // layout will do: they are never vectorized).
  static bool isAtomic(const Op& op) { return op.kind == OpKind::AtomicRMW || op.kind == OpKind::AtomicCAS; }

  // --- step 2: forward candidates ---------------------------------------------------------------

  // The values an op's operand `idx` in layout `l` gives a layout to (Triton's forward
  // propagation): results of elementwise ops and broadcasts keep it, a reduction's result is its
  // slice, expand_dims of a slice gives the parent, loop-carried values keep it.
  std::vector<std::pair<Value*, LayoutPtr>> forwardEdges(Op& op, size_t idx, const LayoutPtr& l) {
    std::vector<std::pair<Value*, LayoutPtr>> out;
    if (isAtomic(op)) out.push_back({op.result(), l});
    switch (op.info().category) {
      case OpCategory::Elementwise:
        out.push_back({op.result(), l});
        break;
      case OpCategory::Shape:
        if (op.kind == OpKind::Broadcast) out.push_back({op.result(), l});
        if (op.kind == OpKind::ExpandDims && l->kind() == Layout::Kind::Slice && l->sliceDim() == op.intAttr("axis"))
          out.push_back({op.result(), l->parent()});
        if (op.kind == OpKind::Trans && l->kind() == Layout::Kind::Blocked)
          out.push_back({op.result(), materializes(op) ? materialized(op, l) : permutedLayout(*l, transOrder(op))});
        if (op.kind == OpKind::Join && l->kind() == Layout::Kind::Blocked) out.push_back({op.result(), joinedLayout(*l)});
        if (op.kind == OpKind::Split)
          if (LayoutPtr h = splitLayout(*l)) out.push_back({op.result(), h});
        break;
      case OpCategory::Reduction:
        if (op.kind == OpKind::Dot && idx == 2 && !mma_.count(&op)) out.push_back({op.result(), l});
        if (op.kind == OpKind::Scan) out.push_back({op.result(), l});  // a scan keeps its operand's layout
        else if (op.kind != OpKind::Dot && op.result()->type.isTile())
          out.push_back({op.result(), Layout::slice(static_cast<int>(op.intAttr("axis")), l)});
        break;
      case OpCategory::Control:
        if (op.kind == OpKind::For && idx >= 3) {
          out.push_back({op.region(0).arg(idx - 2), l});
          out.push_back({op.result(idx - 3), l});
        }
        if (op.kind == OpKind::While) {  // init k: the cond's and body's argument k, result k
          out.push_back({op.region(0).arg(idx), l});
          out.push_back({op.region(1).arg(idx), l});
          out.push_back({op.result(idx), l});
        }
        break;
      case OpCategory::Terminator:
        if (op.kind == OpKind::Yield && op.parent && op.parent->parentOp) {
          Op& owner = *op.parent->parentOp;
          if (owner.kind == OpKind::For) out.push_back({owner.region(0).arg(idx + 1), l});
          if (owner.kind == OpKind::While) {
            out.push_back({owner.region(0).arg(idx), l});
            out.push_back({owner.region(1).arg(idx), l});
          }
          out.push_back({owner.result(idx), l});
        }
        break;
      default:
        break;
    }
    return out;
  }

  void forwardCandidates() {
    std::deque<std::pair<Value*, LayoutPtr>> work;
    auto add = [&](Value* v, const LayoutPtr& l) {
      if (!v->type.isTile() || l->rank() != v->type.rank()) return;
      auto& c = cands_[v];
      for (const auto& x : c)
        if (*x == *l) return;
      c.push_back(l);
      work.push_back({v, l});
    };
    walk(fn_.body, [&](Op& op) {
      if (op.kind == OpKind::Load && anchors_.count(&op)) add(op.result(), anchors_[&op]);
      if (op.kind == OpKind::Dot && mma_.count(&op)) add(op.result(), mma_[&op]);  // tensor cores fix it
    });
    while (!work.empty()) {
      auto [v, l] = work.front();
      work.pop_front();
      for (auto [user, idx] : uses_[v])
        for (auto& [to, lt] : forwardEdges(*user, idx, l)) add(to, lt);
    }
  }

  // The candidate a value takes: the widest per-thread vector along the fastest dimension (the
  // one memory accesses prefer); ties: the first that reached it.
  LayoutPtr bestCandidate(const Value* v) const {
    auto it = cands_.find(v);
    if (it == cands_.end() || it->second.empty()) return nullptr;
    LayoutPtr best = it->second.front();
    auto width = [](const LayoutPtr& l) { return l->sizePerThread()[l->order()[0]]; };
    for (const auto& l : it->second)
      if (width(l) > width(best)) best = l;
    return best;
  }

  LayoutPtr wantOf(const Value* v) const {
    auto it = wants_.find(v);
    return it == wants_.end() ? nullptr : it->second;
  }

  // --- step 3: backward wants -------------------------------------------------------------------

  // The layout a value is expected to end up with (before step 4 decides): its candidate, else
  // what its users want. A loop-carried value also looks at what the loop's result wants.
  LayoutPtr preferred(const Value* v) const {
    if (auto l = bestCandidate(v)) return l;
    if (v->isRegionArg() && v->owner && v->owner->parentOp && v->owner->parentOp->kind == OpKind::For && v->index > 0)
      if (auto l = wantOf(v->owner->parentOp->result(v->index - 1))) return l;
    if (v->isRegionArg() && v->owner && v->owner->parentOp && v->owner->parentOp->kind == OpKind::While)
      if (auto l = wantOf(v->owner->parentOp->result(v->index))) return l;
    return wantOf(v);
  }

  void want(Value* v, const LayoutPtr& l) {
    if (!l || !v->type.isTile() || l->rank() != v->type.rank() || wants_.count(v)) return;
    wants_[v] = l;
  }

  // What operand `idx` of `op` needs, given the layouts of op's results (`resultLayout(i)`);
  // nullptr: any layout will do. Shared by steps 3 and 5.
  template <class ResultLayout>
  LayoutPtr required(const Op& op, size_t idx, ResultLayout resultLayout) const {
    if (!op.operand(idx)->type.isTile()) return nullptr;
    switch (op.kind) {
      case OpKind::Load: case OpKind::Store: {
        auto it = anchors_.find(&op);
        return it == anchors_.end() ? nullptr : it->second;
      }
      case OpKind::ExpandDims: {
        LayoutPtr r = resultLayout(0);
        return r ? Layout::slice(static_cast<int>(op.intAttr("axis")), r) : nullptr;
      }
      case OpKind::Broadcast: return resultLayout(0);
      case OpKind::Trans: {  // the result's layout with the dims permuted back
        LayoutPtr r = resultLayout(0);
        if (!r || r->kind() != Layout::Kind::Blocked) return nullptr;
        const std::vector<int> order = transOrder(op);
        std::vector<int> inv(order.size());
        for (size_t j = 0; j < order.size(); ++j) inv[static_cast<size_t>(order[j])] = static_cast<int>(j);
        return permutedLayout(*r, inv);
      }
      case OpKind::Reduce: case OpKind::Argmax: {
        LayoutPtr r = op.result()->type.isTile() ? resultLayout(0) : nullptr;
        return r && r->kind() == Layout::Kind::Slice && r->sliceDim() == op.intAttr("axis") ? r->parent() : nullptr;
      }
      case OpKind::Scan: return resultLayout(0);  // any layout scans (LowerScan.cpp); the result keeps it
      case OpKind::Dot: return idx == 2 ? resultLayout(0) : nullptr;  // a, b: any (staged in shared memory)
      case OpKind::For: return idx >= 3 ? resultLayout(idx - 3) : nullptr;
      case OpKind::While: return resultLayout(idx);
      case OpKind::Yield: return op.parent && op.parent->parentOp ? resultLayout(idx) : nullptr;
      default:
        if (op.info().category == OpCategory::Elementwise || isAtomic(op)) return resultLayout(0);
        return nullptr;
    }
  }

  void backwardWants(Region& r) {
    for (size_t i = r.ops.size(); i-- > 0;) {
      Op& op = *r.ops[i];
      for (size_t k = op.regions.size(); k-- > 0;) backwardWants(*op.regions[k]);
      // For a yield, "result i" means the owner's carried value i (for) or result i (if).
      auto resultPref = [&](size_t k) -> LayoutPtr {
        if (op.kind == OpKind::Yield) {
          Op& owner = *op.parent->parentOp;
          if (owner.kind == OpKind::While) return preferred(owner.region(0).arg(k));
          return owner.kind == OpKind::For ? preferred(owner.region(0).arg(k + 1)) : preferred(owner.result(k));
        }
        if (op.kind == OpKind::For) return preferred(op.region(0).arg(k + 1));
        if (op.kind == OpKind::While) return preferred(op.region(0).arg(k));
        return preferred(op.result(k));
      };
      for (size_t k = 0; k < op.numOperands(); ++k) want(op.operand(k), required(op, k, resultPref));
    }
  }

  // --- step 4: decide -------------------------------------------------------------------------

  static void setLayout(Value* v, LayoutPtr l) { v->type.layout = std::move(l); }

  LayoutPtr choose(const Value* v) const {
    if (auto l = preferred(v)) return l;
    return defaultLayout(v->type);
  }

  void decide(Region& r) {
    for (auto& opPtr : r.ops) {
      Op& op = *opPtr;
      if (op.kind == OpKind::For) {
        Region& body = op.region(0);
        for (size_t i = 0; i < op.numResults(); ++i) {
          Value* arg = body.arg(i + 1);
          if (!arg->type.isTile()) continue;
          LayoutPtr l = preferred(arg);
          if (!l) l = op.operand(3 + i)->type.layout;  // the init's
          setLayout(arg, l);
          setLayout(op.result(i), l);
        }
        decide(body);
        continue;
      }
      if (op.kind == OpKind::While) {  // carried value i: one layout for both regions' args and result i
        for (size_t i = 0; i < op.numResults(); ++i) {
          if (!op.result(i)->type.isTile()) continue;
          LayoutPtr l = preferred(op.region(0).arg(i));
          if (!l) l = op.operand(i)->type.layout;  // the init's
          setLayout(op.region(0).arg(i), l);
          setLayout(op.region(1).arg(i), l);
          setLayout(op.result(i), l);
        }
        decide(op.region(0));
        decide(op.region(1));
        continue;
      }
      if (op.kind == OpKind::If) {
        decide(op.region(0));
        decide(op.region(1));
        for (size_t i = 0; i < op.numResults(); ++i) {
          Value* res = op.result(i);
          if (!res->type.isTile()) continue;
          LayoutPtr l = preferred(res);
          const Op* y = op.region(0).terminator();
          if (!l && y && i < y->numOperands()) l = y->operand(i)->type.layout;
          setLayout(res, l ? l : defaultLayout(res->type));
        }
        continue;
      }
      if (op.numResults() != 1 || !op.result()->type.isTile()) continue;
      setLayout(op.result(), decideResult(op));
    }
  }

  LayoutPtr decideResult(const Op& op) const {
    const Value* res = op.result();
    switch (op.kind) {
      case OpKind::Load: {
        auto it = anchors_.find(&op);
        return it != anchors_.end() ? it->second : choose(res);
      }
      case OpKind::Reduce: case OpKind::Argmax:
        return Layout::slice(static_cast<int>(op.intAttr("axis")), op.operand(0)->type.layout);
      case OpKind::Broadcast: return op.operand(0)->type.layout;
      case OpKind::Scan: return op.operand(0)->type.layout;
      case OpKind::Trans: {
        const LayoutPtr& in = op.operand(0)->type.layout;
        if (!in || in->kind() != Layout::Kind::Blocked) {  // a slice (a reduction's result) converts first
          LayoutPtr l = choose(res);
          return l->kind() == Layout::Kind::Blocked ? l : defaultLayout(res->type);
        }
        return materializes(op) ? materialized(op, in) : permutedLayout(*in, transOrder(op));
      }
      case OpKind::Join: {  // both operands in one blocked layout: the new dim in registers, no data moves
        const LayoutPtr &a = op.operand(0)->type.layout, &b = op.operand(1)->type.layout;
        if (sameLayout(a, b) && a->kind() == Layout::Kind::Blocked) return joinedLayout(*a);
        return choose(res);
      }
      case OpKind::Split: {  // the last dim in registers: drop it, no data moves
        const LayoutPtr& in = op.operand(0)->type.layout;
        if (LayoutPtr h = in ? splitLayout(*in) : nullptr) return h;
        return choose(res);
      }
      case OpKind::Dot: {
        auto it = mma_.find(&op);
        return it != mma_.end() ? it->second : op.operand(2)->type.layout;
      }
      case OpKind::ExpandDims: {
        const LayoutPtr& in = op.operand(0)->type.layout;
        if (in && in->kind() == Layout::Kind::Slice && in->sliceDim() == op.intAttr("axis")) return in->parent();
        return choose(res);
      }
      default:
        break;
    }
    if (op.info().category == OpCategory::Elementwise || isAtomic(op)) {
      // Operands that agree decide; otherwise the preferred layout (a conversion goes on the
      // operands that differ).
      LayoutPtr common;
      bool agree = true;
      for (const Value* v : op.operands) {
        if (!v->type.isTile()) continue;
        if (!common) common = v->type.layout;
        else if (!sameLayout(common, v->type.layout)) agree = false;
      }
      if (common && agree) return common;
      if (auto l = preferred(res)) return l;
      if (common) return common;
    }
    return choose(res);  // arange, constants, splats
  }

  // --- keepLayouts -------------------------------------------------------------------------------

  // keepLayouts materialises a trans's result, unless it is a pointer tile: addresses never move
  // between threads (the access that uses them follows them).
  bool materializes(const Op& trans) const { return keep_ && !trans.result()->type.isPtr; }

  // The layout keepLayouts gives trans's result when its operand has layout `in`.
  LayoutPtr materialized(const Op& trans, const LayoutPtr& in) const {
    const Shape& rs = trans.result()->type.shape;
    int64_t width = in->sizePerThread()[in->order()[0]];
    return defaultBlockedLayout(rs, numWarps_, static_cast<int>(std::min<int64_t>(width, rs.back())));
  }

  void reanchor(Op& memOp, const LayoutPtr& l) {
    MemoryAnchor a = memoryAnchorIn(memOp, axes_, l);
    anchors_[&memOp] = l;
    memOp.setAttr(kVecAttr, int64_t(a.vec));
  }

  // Before the wants: a load or store of data-dependent addresses (a gather, a scatter) takes
  // the addresses' layout, since pointer tiles cannot move between threads; with keepLayouts a
  // store of other addresses takes the layout its (loaded) value will have. Values that no
  // load reaches keep wanting the anchor: they are recomputed, never moved. True if an anchor
  // changed (the forward candidates are then stale).
  bool followData() {
    bool changed = false;
    walk(fn_.body, [&](Op& op) {
      if ((op.kind != OpKind::Load && op.kind != OpKind::Store) || !anchors_.count(&op) || reanchored_.count(&op)) return;
      LayoutPtr l = bestCandidate(op.operand(0));
      if (!l && op.kind == OpKind::Store) {
        // A store of an FMA dot's register tile stays in it where that accesses memory as
        // widely as the anchor: its rows of 16-byte vectors are whole sectors, and no
        // conversion through shared memory is needed.
        LayoutPtr v = bestCandidate(op.operand(1));
        const bool fmaTile = v && std::any_of(fmaAcc_.begin(), fmaAcc_.end(), [&](const LayoutPtr& f) { return sameLayout(f, v); });
        if (keep_ || (fmaTile && memoryAnchorIn(op, axes_, v).vec >= op.intAttr(kVecAttr))) l = v;
      }
      if (l && !sameLayout(l, anchors_[&op])) {
        reanchor(op, l);
        changed = true;
      }
    });
    return changed;
  }

  // The load whose layout reaches `v` unchanged: `v` itself, or through elementwise ops and
  // broadcasts with one data operand each (nullptr when there is none or data meets on the way).
  Op* sourceLoad(Value* v) const {
    for (int steps = 0; v && v->def && steps < kMaxTrace; ++steps) {
      Op* d = v->def;
      if (d->kind == OpKind::Load) return d;
      bool keepsLayout = (d->info().category == OpCategory::Elementwise && d->numResults() == 1) ||
                         d->kind == OpKind::Broadcast;
      if (!keepsLayout) return nullptr;
      Value* next = nullptr;
      for (Value* o : d->operands)
        if (o->type.isTile() && cands_.count(o)) {
          if (next) return nullptr;
          next = o;
        }
      v = next;
    }
    return nullptr;
  }
  static constexpr int kMaxTrace = 64;

  // After decide: where an op needs a loaded value in another layout (not a trans, whose
  // conversion is the one the source asks for; not a store, which follows its value), the load
  // it comes from (sourceLoad) reads in that layout instead, unless its addresses are data (they
  // cannot move). True if any moved.
  bool reanchorLoads() {
    bool moved = false;
    walk(fn_.body, [&](Op& op) {
      if (op.kind == OpKind::Trans || op.kind == OpKind::Store) return;
      auto resultLayout = [&](size_t k) -> LayoutPtr { return layoutOfResult(op, k); };
      for (size_t k = 0; k < op.numOperands(); ++k) {
        Value* v = op.operand(k);
        if (!v->type.isTile()) continue;
        Op* load = sourceLoad(v);
        if (!load || !anchors_.count(load) || reanchored_.count(load) || cands_.count(load->operand(0))) continue;
        LayoutPtr need = required(op, k, resultLayout);
        if (!need || sameLayout(need, v->type.layout)) continue;
        reanchored_.insert(load);
        reanchor(*load, need);
        moved = true;
      }
    });
    return moved;
  }

  // After the last decide: each store's anchor is its value's final layout when the value is
  // data (a load reaches it), so the value itself never converts.
  void anchorStoresOnValues() {
    walk(fn_.body, [&](Op& op) {
      if (op.kind != OpKind::Store || !anchors_.count(&op) || !cands_.count(op.operand(1)) || cands_.count(op.operand(0)))
        return;
      const LayoutPtr& l = op.operand(1)->type.layout;
      if (l && !sameLayout(l, anchors_[&op])) reanchor(op, l);
    });
  }

  // Each trans was decided in its materialised layout (what its users see): it becomes the free
  // permutation (transposedLayout of its operand's) and a convert_layout to that layout right
  // after it, at the trans's location.
  void materializeTransposes(Region& r) {
    for (size_t i = 0; i < r.ops.size(); ++i) {
      Op* op = r.ops[i].get();
      for (auto& sub : op->regions) materializeTransposes(*sub);
      if (op->kind != OpKind::Trans) continue;
      const LayoutPtr& in = op->operand(0)->type.layout;
      Value* res = op->result();
      if (!in || in->kind() != Layout::Kind::Blocked) continue;
      LayoutPtr permuted = permutedLayout(*in, transOrder(*op)), shown = res->type.layout;
      if (sameLayout(permuted, shown)) continue;
      Builder b(&r);
      b.setInsertionPoint(&r, i + 1);
      b.setLoc(op->loc);
      setLayout(res, permuted);
      Op* c = b.create(OpKind::ConvertLayout, {res}, {res->type.withLayout(shown)});
      c->result()->name = res->name;
      replaceAllUsesWith(fn_.body, res, c->result());
      c->operands[0] = res;
      ++i;
    }
  }

  // The decided layout of result k of `op` (for a yield: of its owner's carried value k).
  static LayoutPtr layoutOfResult(const Op& op, size_t k) {
    if (op.kind == OpKind::Yield) {
      const Op& owner = *op.parent->parentOp;
      return owner.kind == OpKind::For ? owner.region(0).arg(k + 1)->type.layout : owner.result(k)->type.layout;
    }
    if (op.kind == OpKind::For) return op.region(0).arg(k + 1)->type.layout;
    return k < op.numResults() ? op.result(k)->type.layout : nullptr;
  }

  // --- step 5: conversions ----------------------------------------------------------------------

  // One conversion per (value, layout) and region; a later use in the same region (or nested
  // deeper) reuses it.
  std::map<std::tuple<const Value*, std::string, const Region*>, Value*> converted_;

  Value* convertedValue(Value* v, const LayoutPtr& l, Op& user) {
    for (const Region* r = user.parent; r; r = r->parentOp ? r->parentOp->parent : nullptr) {
      auto it = converted_.find({v, l->str(), r});
      if (it != converted_.end()) return it->second;
    }
    Region* region = user.parent;
    size_t at = 0;
    while (region->ops[at].get() != &user) ++at;
    Builder b(region);
    b.setInsertionPoint(region, at);
    b.setLoc(user.loc);
    Value* c = b.create(OpKind::ConvertLayout, {v}, {v->type.withLayout(l)})->result();
    c->name = v->name;
    converted_[{v, l->str(), region}] = c;
    return c;
  }

  void insertConversions(Region& r) {
    for (size_t i = 0; i < r.ops.size(); ++i) {
      Op* op = r.ops[i].get();
      auto resultLayout = [&](size_t k) -> LayoutPtr {
        if (op->kind == OpKind::Yield) {
          Op& owner = *op->parent->parentOp;
          return owner.kind == OpKind::For ? owner.region(0).arg(k + 1)->type.layout : owner.result(k)->type.layout;
        }
        return op->result(k)->type.layout;
      };
      for (size_t k = 0; k < op->numOperands(); ++k) {
        LayoutPtr need = required(*op, k, resultLayout);
        if (need && !sameLayout(need, op->operand(k)->type.layout))
          op->operands[k] = convertedValue(op->operand(k), need, *op);
      }
      // Conversions were inserted before `op`: find it again, then descend.
      while (r.ops[i].get() != op) ++i;
      for (auto& sub : op->regions) insertConversions(*sub);
    }
  }
};

}  // namespace

bool assignLayouts(Function& fn, int numWarps, const ParamHints& hints, bool keepLayouts, bool wgmma) {
  if (numWarps < 1 || numWarps > 32 || !isPowerOfTwo(numWarps))
    throw IRError(fn.loc, "assign-layouts: num_warps must be a power of two in 1..32, got " + std::to_string(numWarps));
  bool hasLayouts = false;
  walk(fn.body, [&](Op& op) {
    for (const auto& r : op.results) hasLayouts |= r->type.layout != nullptr;
  });
  if (hasLayouts) throw IRError(fn.loc, "assign-layouts: the function already has layouts");
  Assigner(fn, numWarps, hints, keepLayouts, wgmma).run();
  return true;
}

PassManager layoutPipeline(int numWarps, const ParamHints& hints, bool keepLayouts, bool wgmma) {
  PassManager pm;
  pm.add({"assign-layouts",
          keepLayouts ? "keep the layouts the source implies: loads anchored on coalesced layouts, stores on their values' layouts, convert_layout only at trans"
                      : "anchor loads/stores on coalesced layouts from the axis analysis, give every tile a layout, insert convert_layout where layouts meet",
          [numWarps, hints, keepLayouts, wgmma](Function& fn) { return assignLayouts(fn, numWarps, hints, keepLayouts, wgmma); }});
  pm.add({"remove-conversions",
          "drop conversions that are not needed: identities, chains, cheap producers recomputed in the needed layout",
          removeConversions});
  return pm;
}

}  // namespace tl
