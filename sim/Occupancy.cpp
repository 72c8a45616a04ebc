// Occupancy (blocks per SM and the limiting resource) and the register estimate.
//
// Expects: a GpuSpec that passed loadGpu's checks. Guarantees: occupancy() gives the same
// blocks per SM and the same limiting resources as NVIDIA's calculator
// (cudaOccMaxActiveBlocksPerMultiprocessor in /usr/local/cuda/include/cuda_occupancy.h) for a
// kernel with one block barrier, its shared memory as dynamic shared memory and, when
// sharedOptIn, its dynamic limit raised to what it uses. The code below is written from the
// rules, one small function per resource, so each can be read on its own.
#include "sim/Occupancy.h"

#include <algorithm>
#include <stdexcept>
#include <unordered_map>
#include <unordered_set>

namespace tl {
namespace {

constexpr int kWarp = 32;

int divUp(int x, int y) { return (x + y - 1) / y; }
int roundUp(int x, int y) { return divUp(x, y) * y; }
std::string kb(int bytes) {
  return bytes % 1024 == 0 ? std::to_string(bytes / 1024) + " KB" : std::to_string(bytes) + " B";
}

// Warp slots: a block occupies whole warps, even when its last warp is partly empty.
int blocksByWarps(const GpuSpec& g, int threads, std::string& reason) {
  if (threads > g.maxThreadsPerBlock) {
    reason = std::to_string(threads) + " threads per block exceed the maximum of " + std::to_string(g.maxThreadsPerBlock);
    return 0;
  }
  return g.maxWarpsPerSM / divUp(threads, kWarp);
}

// Registers: allocated per warp, registers x 32 rounded up to the allocation unit. The register
// file is split evenly among the SM's sub-partitions and each warp lives in one, so the SM holds
// (warps one sub-partition holds) x (sub-partitions) warps: a 4-way split can waste registers
// a single pool would not. The launch check also rounds the block's warps up to a multiple of
// the sub-partitions (hardware assumes a block allocates in all of them at once).
int blocksByRegisters(const GpuSpec& g, int threads, int regs, OccupancyResult& r, std::string& reason) {
  const int warps = divUp(threads, kWarp);
  const int parts = g.warpSchedulersPerSM;
  r.registersPerWarp = roundUp(regs * kWarp, g.registerAllocUnit);
  r.registersPerBlock = r.registersPerWarp * warps;
  const int assumedPerBlock = r.registersPerWarp * roundUp(warps, parts);
  if (regs > g.maxRegistersPerThread) {
    reason = std::to_string(regs) + " registers per thread exceed the maximum of " +
               std::to_string(g.maxRegistersPerThread);
    return 0;
  }
  if (r.registersPerBlock > g.maxRegistersPerBlock || assumedPerBlock > g.maxRegistersPerBlock) {
    reason = std::to_string(regs) + " registers x " + std::to_string(threads) + " threads need " +
               std::to_string(std::max(r.registersPerBlock, assumedPerBlock)) +
               " registers per block (allocated per warp, warps rounded up to " + std::to_string(parts) +
               " sub-partitions), more than the " + std::to_string(g.maxRegistersPerBlock) + " a block may hold";
    return 0;
  }
  if (r.registersPerWarp == 0) {
    r.warpsPerSubPartition = kOccUnlimited;
    return kOccUnlimited;
  }
  r.warpsPerSubPartition = (g.registersPerSM / parts) / r.registersPerWarp;
  return r.warpsPerSubPartition * parts / warps;
}

// The smallest carve-out of at least `bytes` (a carve-out is a whole KB count from the list).
// `bytes` must not exceed the largest one.
int alignUpToCarveout(const GpuSpec& g, int bytes) {
  for (int kbSize : g.sharedCarveoutsKB)
    if (kbSize * 1024 >= bytes) return kbSize * 1024;
  return g.sharedCarveoutsKB.back() * 1024;
}

// Shared memory: the block's bytes plus the driver's reserved part, rounded up to the
// allocation unit, out of the carve-out. With no preference the calculator assumes the largest
// carve-out; a preference (percent of the maximum) is rounded up to the next carve-out, and
// ignored when it would not fit even one block (the driver then picks the smallest carve-out
// that does).
int blocksByShared(const GpuSpec& g, int shared, const OccupancyOptions& opt, OccupancyResult& r,
                   std::string& reason) {
  r.sharedAllocatedPerBlock = roundUp(shared + g.reservedSharedPerBlock, g.sharedAllocUnit);
  // Up to defaultSharedPerBlock a block needs nothing; above it, the opt-in (when allowed) raises
  // its limit to maxSharedPerBlock. The reserved 1 KB is the system's, on top of either limit.
  const bool needsOptIn = shared > g.defaultSharedPerBlock;
  r.sharedOptedIn = opt.sharedOptIn && needsOptIn;
  r.sharedLimitPerBlock = (r.sharedOptedIn ? g.maxSharedPerBlock : g.defaultSharedPerBlock) + g.reservedSharedPerBlock;

  int preferred = opt.carveoutPercent < 0
                      ? g.sharedPerSM
                      : static_cast<int>(static_cast<long long>(opt.carveoutPercent) * g.sharedPerSM / 100);
  preferred = alignUpToCarveout(g, preferred);
  if (r.sharedAllocatedPerBlock > r.sharedLimitPerBlock) {
    r.sharedCarveoutBytes = preferred;
    reason = std::to_string(shared) + " bytes of shared memory (+" + std::to_string(g.reservedSharedPerBlock) +
               " reserved) exceed the per-block limit of " + kb(r.sharedLimitPerBlock - g.reservedSharedPerBlock) +
               (opt.sharedOptIn || g.maxSharedPerBlock == g.defaultSharedPerBlock
                    ? ""
                    : " (without opting in; the opt-in maximum is " + kb(g.maxSharedPerBlock) + ")");
    return 0;
  }
  r.sharedCarveoutBytes =
      preferred >= r.sharedAllocatedPerBlock ? preferred : alignUpToCarveout(g, r.sharedAllocatedPerBlock);
  if (r.sharedAllocatedPerBlock == 0) return kOccUnlimited;
  return r.sharedCarveoutBytes / r.sharedAllocatedPerBlock;
}

}  // namespace

const char* limiterName(OccLimiter l) {
  switch (l) {
    case OccLimiter::Warps: return "warps";
    case OccLimiter::Registers: return "registers";
    case OccLimiter::SharedMemory: return "shared memory";
    case OccLimiter::Blocks: return "blocks";
  }
  return "?";
}

OccupancyResult occupancy(const GpuSpec& gpu, int threadsPerBlock, int registersPerThread, int sharedBytesPerBlock,
                          const OccupancyOptions& options) {
  if (threadsPerBlock <= 0) throw std::invalid_argument("occupancy: threads per block must be positive");
  if (registersPerThread < 0) throw std::invalid_argument("occupancy: registers per thread must not be negative");
  if (sharedBytesPerBlock < 0) throw std::invalid_argument("occupancy: shared bytes per block must not be negative");
  if (options.carveoutPercent < -1 || options.carveoutPercent > 100)
    throw std::invalid_argument("occupancy: carveoutPercent must be -1 (no preference) or 0..100");

  OccupancyResult r;
  r.threadsPerBlock = threadsPerBlock;
  r.registersPerThread = registersPerThread;
  r.sharedBytesPerBlock = sharedBytesPerBlock;
  r.warpsPerBlock = divUp(threadsPerBlock, kWarp);

  // Each pool's function fills its allocation details and, when not even one block fits, says
  // why; the result keeps the first reason in enum order.
  std::string why[3];
  r.blocksByWarps = blocksByWarps(gpu, threadsPerBlock, why[0]);
  r.blocksByRegisters = blocksByRegisters(gpu, threadsPerBlock, registersPerThread, r, why[1]);
  r.blocksByShared = blocksByShared(gpu, sharedBytesPerBlock, options, r, why[2]);
  r.blocksBySlots = gpu.maxBlocksPerSM;

  const int limits[] = {r.blocksByWarps, r.blocksByRegisters, r.blocksByShared, r.blocksBySlots};  // enum order
  r.activeBlocksPerSM = *std::min_element(std::begin(limits), std::end(limits));
  for (int i = 3; i >= 0; --i) {
    if (limits[i] != r.activeBlocksPerSM) continue;
    r.limiterMask |= 1u << i;
    r.limiter = static_cast<OccLimiter>(i);  // ends at the first in enum order
  }
  for (const std::string& w : why)
    if (r.activeBlocksPerSM == 0 && r.reason.empty()) r.reason = w;
  r.activeWarpsPerSM = r.activeBlocksPerSM * r.warpsPerBlock;
  r.occupancy = static_cast<double>(r.activeWarpsPerSM) / gpu.maxWarpsPerSM;
  return r;
}

// ---------------------------------------------------------------------------------------------
// Curves.

namespace {
OccupancyPoint point(int x, const OccupancyResult& r) { return {x, r.activeBlocksPerSM, r.activeWarpsPerSM, r.limiter}; }
}  // namespace

std::vector<OccupancyPoint> occupancyVsThreads(const GpuSpec& gpu, int registersPerThread, int sharedBytesPerBlock,
                                               const OccupancyOptions& options) {
  std::vector<OccupancyPoint> pts;
  for (int t = kWarp; t <= gpu.maxThreadsPerBlock; t += kWarp)
    pts.push_back(point(t, occupancy(gpu, t, registersPerThread, sharedBytesPerBlock, options)));
  return pts;
}

std::vector<OccupancyPoint> occupancyVsRegisters(const GpuSpec& gpu, int threadsPerBlock, int sharedBytesPerBlock,
                                                 const OccupancyOptions& options) {
  std::vector<OccupancyPoint> pts;
  for (int r = 0; r <= gpu.maxRegistersPerThread; ++r)
    pts.push_back(point(r, occupancy(gpu, threadsPerBlock, r, sharedBytesPerBlock, options)));
  return pts;
}

std::vector<OccupancyPoint> occupancyVsShared(const GpuSpec& gpu, int threadsPerBlock, int registersPerThread, int step,
                                              const OccupancyOptions& options) {
  if (step <= 0) step = gpu.sharedAllocUnit;
  std::vector<OccupancyPoint> pts;
  for (int s = 0; s <= gpu.maxSharedPerBlock; s += step)
    pts.push_back(point(s, occupancy(gpu, threadsPerBlock, registersPerThread, s, options)));
  return pts;
}

// ---------------------------------------------------------------------------------------------
// Register estimate.
//
// Positions: ops are numbered in pre-order (an op before the ops of its regions); position 2*i
// is "while op i runs", 2*i+1 "just after op i". A value is live from its definition to its
// last use; a value defined outside a `for` and used inside it stays live to the loop's end
// (every iteration needs it), and a loop's region arguments (induction variable, carried
// values) are live for the whole body.

namespace {

constexpr int kPredicateRegisters = 7;  // P0..P6 (PT is the constant true)
constexpr int kMaxRegisters = 255;

struct Cost {
  int regs = 0;   // 32-bit general registers
  int preds = 0;  // predicate registers
};

Cost valueCost(const Type& t) {
  const int n = static_cast<int>(t.numel());
  if (t.isPtr) return {2 * n, 0};
  switch (t.dtype) {
    case DType::I1: return {0, n};
    case DType::I64: return {2 * n, 0};
    case DType::F16:
    case DType::BF16: return {divUp(n, 2), 0};
    case DType::F8E4M3:
    case DType::F8E5M2: return {divUp(n, 4), 0};  // four to a register, as Triton packs them
    default: return {n, 0};
  }
}

class LiveRanges {
 public:
  explicit LiveRanges(const Function& fn) {
    number(fn.body);
    scan(fn.body);
  }

  RegisterEstimate estimate() const {
    // Sweep the positions with +cost at a range's start and -cost after its end.
    const int n = 2 * static_cast<int>(ops_.size()) + 2;
    std::vector<int> regDelta(n + 1, 0), predDelta(n + 1, 0);
    for (const auto& [v, range] : ranges_) {
      if (immediate_.count(v) || alias_.count(v)) continue;
      const Cost c = valueCost(v->type);
      regDelta[range.first] += c.regs;
      regDelta[range.second + 1] -= c.regs;
      predDelta[range.first] += c.preds;
      predDelta[range.second + 1] -= c.preds;
    }
    RegisterEstimate e;
    e.estimate = true;
    e.source = "estimate from thread IR (peak live values)";
    e.overhead = kRegisterOverhead;
    int regs = 0, preds = 0, best = 0, bestPos = 0;
    for (int p = 0; p < n; ++p) {
      regs += regDelta[p];
      preds += predDelta[p];
      e.peakPredicates = std::max(e.peakPredicates, preds);
      const int total = regs + std::max(0, preds - kPredicateRegisters);  // predicates beyond 7 spill to registers
      if (total > best) best = total, bestPos = p;
    }
    e.peakLiveRegisters = best;
    if (!ops_.empty()) e.peakLoc = ops_[std::min<size_t>(bestPos / 2, ops_.size() - 1)]->loc;
    e.registers = e.peakLiveRegisters + e.overhead;
    if (e.registers > kMaxRegisters) e.registers = kMaxRegisters, e.capped = true;
    return e;
  }

 private:
  // Pre-order numbering; end_[op] is the index of the last op nested in `op` (itself if none).
  void number(const Region& region) {
    for (const auto& op : region.ops) {
      index_[op.get()] = static_cast<int>(ops_.size());
      ops_.push_back(op.get());
      for (const auto& r : op->regions) number(*r);
      end_[op.get()] = static_cast<int>(ops_.size()) - 1;
    }
  }

  static const Op* enclosingOp(const Op* op) { return op->parent ? op->parent->parentOp : nullptr; }

  // Where a value comes into being: just after its op (after the whole op for for/if results),
  // or at the start of its region for region arguments.
  int defPos(const Value* v) const {
    if (!v->isRegionArg()) return 2 * end_.at(v->def) + 1;
    const Op* parent = v->owner ? v->owner->parentOp : nullptr;
    return parent ? 2 * index_.at(parent) + 1 : 0;
  }

  // True when `v` is defined inside `loop` (by an op nested in it, or as its region argument).
  static bool definedInside(const Value* v, const Op* loop) {
    const Op* o = v->isRegionArg() ? (v->owner ? v->owner->parentOp : nullptr) : v->def;
    for (; o; o = enclosingOp(o))
      if (o == loop) return true;
    return false;
  }

  static bool isLoop(const Op& op) { return op.kind == OpKind::For || op.kind == OpKind::While; }

  // The value a use really reads: a splat reads its scalar's register.
  static const Value* resolve(const Value* v) {
    while (v->def && v->def->kind == OpKind::Splat) v = v->def->operand(0);
    return v;
  }

  void define(const Value* v) {
    const int p = defPos(v);
    ranges_[v] = {p, p};
    // A loop's region arguments (induction variable, carried values; a while's in its cond and
    // its body) live across the whole loop.
    const Op* parent = v->isRegionArg() && v->owner ? v->owner->parentOp : nullptr;
    if (parent && isLoop(*parent)) ranges_[v].second = 2 * end_.at(parent) + 1;
  }

  void use(const Value* raw, const Op& user) {
    const Value* v = resolve(raw);
    if (immediate_.count(v)) return;
    const int at = 2 * index_.at(&user);
    int last = at;
    // A value from outside a loop is read by every iteration: live to the loop's end.
    for (const Op* a = enclosingOp(&user); a; a = enclosingOp(a))
      if (isLoop(*a) && !definedInside(v, a)) last = std::max(last, 2 * end_.at(a) + 1);
    // A loop's upper bound and step (operands 1 and 2) are compared and added every iteration.
    if (user.kind == OpKind::For && (raw == user.operand(1) || raw == user.operand(2)))
      last = std::max(last, 2 * end_.at(&user) + 1);
    auto it = ranges_.find(v);
    if (it == ranges_.end()) {
      ranges_[v] = {at, last};  // a kernel parameter: loaded from the constant bank at its first use
    } else {
      it->second.second = std::max(it->second.second, last);
    }
  }

  void scan(const Region& region) {
    if (region.parentOp)
      for (const auto& a : region.args) define(a.get());
    for (const auto& op : region.ops) {
      for (Value* o : op->operands) use(o, *op);
      for (const auto& r : op->regions) scan(*r);
      // Constants, register numbers and elementwise math on them fold into immediates.
      const bool imm = op->kind == OpKind::Constant || op->kind == OpKind::RegIndex ||
                       ((op->info().category == OpCategory::Elementwise || op->kind == OpKind::Splat) &&
                        !op->operands.empty() && std::all_of(op->operands.begin(), op->operands.end(), [&](Value* o) {
                          return immediate_.count(resolve(o)) > 0;
                        }));
      for (const auto& res : op->results) {
        if (imm) immediate_.insert(res.get());
        else if (op->kind == OpKind::Splat) alias_.insert(res.get());
        define(res.get());
      }
    }
  }

  std::vector<const Op*> ops_;                                    // pre-order
  std::unordered_map<const Op*, int> index_, end_;
  std::unordered_map<const Value*, std::pair<int, int>> ranges_;  // [def, last use] positions
  std::unordered_set<const Value*> immediate_;                    // constants (and ops folding them)
  std::unordered_set<const Value*> alias_;                        // splats (share their scalar's register)
};

}  // namespace

RegisterEstimate estimateRegisters(const Function& threadIR) {
  if (threadIR.level != IRLevel::Thread)
    throw std::invalid_argument("estimateRegisters: '" + threadIR.name + "' is not thread-level IR");
  return LiveRanges(threadIR).estimate();
}

RegisterEstimate compiledRegisters(int registers, std::string source) {
  if (registers < 0) throw std::invalid_argument("compiledRegisters: a register count must not be negative");
  RegisterEstimate e;
  e.registers = registers;
  e.estimate = false;
  e.source = std::move(source);
  return e;
}

}  // namespace tl
