// The timing model: executor traces -> timed instruction streams -> the SM model -> the chip.
// The contract and the conversion rules are in Timing.h; the SM rules in SmModel.h.
#include "sim/Timing.h"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <unordered_map>
#include <utility>

#include "sim/Banks.h"
#include "sim/Coalescing.h"
#include "sim/Occupancy.h"

namespace tl {

const char* timeLimiterName(TimeLimiter l) {
  switch (l) {
    case TimeLimiter::DramBandwidth: return "DRAM bandwidth";
    case TimeLimiter::L2Bandwidth: return "L2 bandwidth";
    case TimeLimiter::Issue: return "instruction issue";
    case TimeLimiter::Latency: return "memory latency";
    case TimeLimiter::Barrier: return "barriers";
    case TimeLimiter::Dependency: return "arithmetic dependencies";
    case TimeLimiter::BlockLaunch: return "block launch rate";
    case TimeLimiter::TensorCore: return "tensor cores";
  }
  return "?";
}

namespace {

// ---------------------------------------------------------------------------------------------
// Trace -> timed instructions.

// Producers: for each SSA value, the entries of the warp's stream whose results it carries
// (several when a free op combines values, or an if joins two branches).
using Producers = std::vector<int32_t>;

void addAll(Producers& to, const Producers& from) {
  for (int32_t p : from)
    if (std::find(to.begin(), to.end(), p) == to.end()) to.push_back(p);
}

// Ops that may be computed at compile time when every operand is known then (arithmetic,
// comparisons, conversions): ptxas folds them into immediates.
bool foldable(OpKind k) {
  const OpCategory c = opInfo(k).category;
  return c == OpCategory::Elementwise || c == OpCategory::Shape || k == OpKind::RegReduce;
}

// Ops that cost no machine instruction: immediates, register renaming.
bool isFree(OpKind k) {
  switch (k) {
    case OpKind::Constant: case OpKind::Splat: case OpKind::RegIndex: case OpKind::Permute:
    case OpKind::Extract: case OpKind::Pack:
      return true;
    default:
      return false;
  }
}

int64_t registersOf(const Op& op) {
  int64_t n = 1;
  for (const auto& r : op.results) n = std::max(n, r->type.numel());
  for (const Value* v : op.operands) n = std::max(n, v->type.numel());
  return n;
}

// Machine instructions per register and latency of an arithmetic op.
struct AluCost {
  int perRegister = 1;
  int latency = 4;
};

// `constDivisor`: the second operand is a compile-time constant (the layouts' index math
// divides by powers of two: a shift, or a multiply-high and shift otherwise).
AluCost aluCost(const Op& op, const InstrLatencies& lat, bool constDivisor) {
  const bool fp = !op.results.empty() && isFloat(op.result()->type.dtype);
  if ((op.kind == OpKind::Div || op.kind == OpKind::Rem) && !fp && constDivisor) return {2, 2 * lat.alu};
  switch (op.kind) {
    case OpKind::Exp: case OpKind::Exp2: case OpKind::Log: case OpKind::Sqrt: case OpKind::Rsqrt:
      return {2, lat.alu + lat.sfu};          // a scale (FMUL) and a MUFU
    case OpKind::Log2:
      return {1, lat.sfu};                    // MUFU.LG2
    case OpKind::Cos: case OpKind::Sin:
      return {4, 3 * lat.alu + lat.sfu};      // range reduction (FMUL, FRND, 2 FFMA) and a MUFU
    case OpKind::Erf:
      return {16, 10 * lat.alu + 3 * lat.sfu};  // a degree-7 polynomial, a division and e^-x^2 (CodegenOps.cpp)
    // libdevice ops: the instructions of CodegenOps.cpp's formulas, counted roughly (the
    // selects for the special values included); MUFU ops at the SFU latency.
    case OpKind::Trunc: case OpKind::Round: case OpKind::Rint:
      return {1, lat.alu};                    // FRND (round: a few ALU ops more, counted as one)
    case OpKind::Rcp:
      return {4, 3 * lat.alu + lat.sfu};      // an IEEE division: MUFU.RCP and Newton steps
    case OpKind::Log10:
      return {2, lat.alu + lat.sfu};          // MUFU.LG2 and a scale
    case OpKind::Exp10:
      return {12, 8 * lat.alu + lat.sfu};     // Cody-Waite reduction, MUFU.EX2, two power-of-two factors
    case OpKind::Cbrt:
      return {12, 6 * lat.alu + 3 * lat.sfu}; // MUFU.LG2, MUFU.EX2, one Newton step with a division
    case OpKind::Atan: case OpKind::Tan:
      return {14, 8 * lat.alu + lat.sfu};     // a reduction with a division and a degree-4/6 polynomial
    case OpKind::Atan2: case OpKind::Asin: case OpKind::Acos: case OpKind::Hypot:
      return {20, 10 * lat.alu + 2 * lat.sfu};  // divisions, a square root, atan's polynomial, the quadrant
    case OpKind::Log1p: case OpKind::Expm1:
      return {16, 10 * lat.alu + 2 * lat.sfu};  // a degree-7/9 polynomial or the MUFU path, selected
    case OpKind::Sinh: case OpKind::Cosh: case OpKind::Tanh:
      return {24, 14 * lat.alu + 3 * lat.sfu};  // expm1 or exp and a division
    case OpKind::Pow:
      return {48, 30 * lat.alu + 2 * lat.sfu};  // log2 in f64 (a degree-7 series), a scale, MUFU.EX2
    case OpKind::Shl: case OpKind::Shr:
      return {2, 2 * lat.alu};                // the shift and the out-of-range select
    case OpKind::Umulhi:
      return {2, 2 * lat.alu};                // IMAD.HI (i64: a few more, counted as two)
    case OpKind::Sigmoid:
      return {4, 2 * lat.alu + 2 * lat.sfu};  // 1 / (1 + exp(-x)): MUFU.EX2 and MUFU.RCP
    case OpKind::Div:
      return fp ? AluCost{4, 3 * lat.alu + lat.sfu}   // `/`: div.full.f32, MUFU.RCP and Newton steps (div_rn's
                                                      // IEEE div.rn adds a range check: counted the same)
                : AluCost{10, 10 * lat.alu};          // integer division: a short routine
    case OpKind::Rem:
      return fp ? AluCost{6, 4 * lat.alu + lat.sfu} : AluCost{10, 10 * lat.alu};
    default:
      return {1, lat.alu};
  }
}

// Per-instruction memory behaviour from the memory model (or the all-DRAM default).
struct MemBehaviour {
  double l1Hit = 0;            // share of sectors served by L1
  double l2Miss = 1;           // share of L2 sectors that go to DRAM
  double dramPerSector = 32;   // DRAM bytes per sector requested
};

class Converter {
 public:
  Converter(const Function& fn, const ExecResult& run, const GpuSpec& gpu, const TimingOptions& o)
      : fn_(fn), run_(run), gpu_(gpu), o_(o), table_(instructionTable(fn)) {
    auto add = [&](const Value* v) { ids_.emplace(v, int(ids_.size())); };
    for (const auto& a : fn.body.args) add(a.get());
    walk(fn.body, [&](Op& op) {
      for (const auto& r : op.results) add(r.get());
      for (const auto& reg : op.regions)
        for (const auto& a : reg->args) add(a.get());
    });
    if (o.memory) {
      for (const InstrMemStats& s : o.memory->instructions) stats_[s.instr] = &s;
      const MemTotals& t = o.memory->totals;
      storeDramRatio_ = t.globalStore.sectors ? double(t.dramWriteBytes) / double(t.globalStore.sectors * kSectorBytes) : 1.0;
    }
  }

  std::vector<TimedInstr> convert(const WarpTrace& trace) {
    prod_.assign(ids_.size(), {});
    openWgmma_.clear();
    committedWgmma_.clear();
    wgmmas_.clear();
    openCopies_.clear();
    committedCopies_.clear();
    known_.assign(ids_.size(), 0);
    std::vector<TimedInstr> out;
    out.reserve(trace.entries.size());
    for (const TraceEntry& e : trace.entries) {
      if (e.instr < 0 || size_t(e.instr) >= table_.size())
        throw std::invalid_argument("timing: trace entry names instruction " + std::to_string(e.instr) +
                                    ", which the function does not have (a trace of another function?)");
      step(*table_[size_t(e.instr)], e, out);
    }
    return out;
  }

 private:
  const Function& fn_;
  const ExecResult& run_;
  const GpuSpec& gpu_;
  const TimingOptions& o_;
  std::vector<const Op*> table_;
  std::unordered_map<const Value*, int> ids_;
  std::unordered_map<int32_t, const InstrMemStats*> stats_;
  double storeDramRatio_ = 1.0;
  std::vector<Producers> prod_;
  Producers openWgmma_;                   // wgmmas issued since the last wgmma_commit
  std::vector<Producers> committedWgmma_;  // committed groups not yet waited for, oldest first
  std::vector<int32_t> wgmmas_;            // every wgmma of the warp (sorted: instruction order)
  Producers openCopies_;                   // cp_asyncs issued since the last cp_async_commit
  std::vector<Producers> committedCopies_;  // their committed groups not yet waited for
  std::vector<char> known_;  // per value: known at compile time (constants, reg_index, and ops on them)

  Producers& of(const Value* v) { return prod_[size_t(ids_.at(v))]; }
  bool known(const Value* v) const { return known_[size_t(ids_.at(v))] != 0; }

  // Appends a timed instruction depending on `deps`; its results are produced by it.
  TimedInstr& emit(std::vector<TimedInstr>& out, const Op& op, int32_t instr, TimedKind kind, int issue, int latency,
                   const Producers& deps) {
    TimedInstr t;
    t.kind = kind;
    t.instr = instr;
    t.loc = op.loc;
    t.issueCycles = std::max(1, issue);
    t.latency = latency;
    t.deps = deps;
    std::sort(t.deps.begin(), t.deps.end());
    out.push_back(std::move(t));
    const int32_t self = int32_t(out.size() - 1);
    for (const auto& r : op.results) of(r.get()) = {self};
    return out.back();
  }

  // The producers of every committed group but the newest `keep`, which are then no longer
  // committed (wgmma_wait, cp_async_wait).
  static Producers waitForGroups(std::vector<Producers>& committed, size_t keep) {
    Producers deps;
    while (committed.size() > keep) {
      addAll(deps, committed.front());
      committed.erase(committed.begin());
    }
    return deps;
  }

  Producers operandDeps(const Op& op) {
    Producers deps;
    for (const Value* v : op.operands) addAll(deps, of(v));
    return deps;
  }

  void step(const Op& op, const TraceEntry& e, std::vector<TimedInstr>& out) {
    const InstrLatencies& lat = o_.latencies;
    // Known at compile time: no instruction at run time.
    bool allKnown = op.kind == OpKind::Constant || op.kind == OpKind::RegIndex;
    if (!allKnown && foldable(op.kind) && !op.operands.empty()) {
      allKnown = true;
      for (const Value* v : op.operands) allKnown = allKnown && known(v);
    }
    if (allKnown) {
      for (const auto& r : op.results) {
        of(r.get()).clear();
        known_[size_t(ids_.at(r.get()))] = 1;
      }
      return;
    }
    if (isFree(op.kind)) {
      Producers p = operandDeps(op);
      for (const auto& r : op.results) of(r.get()) = p;
      return;
    }
    switch (op.kind) {
      case OpKind::Yield: {
        const Op* owner = op.parent ? op.parent->parentOp : nullptr;
        if (!owner) return;
        if (owner->kind == OpKind::For) {
          // The back edge: increment the induction variable, compare, branch.
          Region& body = owner->region(0);
          emit(out, op, e.instr, TimedKind::Alu, 1, lat.alu, of(body.arg(0)));
          const int32_t self = int32_t(out.size() - 1);
          of(body.arg(0)) = {self};
          for (size_t k = 0; k < op.operands.size(); ++k) {
            Producers p = of(op.operand(k));
            if (k + 1 < body.args.size()) of(body.arg(k + 1)) = p;
            if (k < owner->results.size()) of(owner->result(k)) = p;
          }
        } else if (owner->kind == OpKind::While) {  // back to the condition with the new values
          for (size_t k = 0; k < op.operands.size() && k < owner->results.size(); ++k) {
            Producers p = of(op.operand(k));
            of(owner->region(0).arg(k)) = p;
            of(owner->result(k)) = p;
          }
        } else {  // an if joins: its results come from whichever branch(es) ran
          for (size_t k = 0; k < op.operands.size() && k < owner->results.size(); ++k)
            addAll(of(owner->result(k)), of(op.operand(k)));
        }
        return;
      }
      case OpKind::While: {  // entering the loop: the carried values start as the inits
        emit(out, op, e.instr, TimedKind::Alu, 1, lat.alu, {});
        for (size_t k = 0; k < op.operands.size(); ++k) {
          of(op.region(0).arg(k)) = of(op.operand(k));
          of(op.result(k)) = of(op.operand(k));
        }
        return;
      }
      case OpKind::Condition: {  // compare and branch: the body (or the exit) sees the cond's values
        emit(out, op, e.instr, TimedKind::Alu, 1, lat.alu, operandDeps(op));
        const Op* owner = op.parent ? op.parent->parentOp : nullptr;
        if (owner && owner->kind == OpKind::While)
          for (size_t k = 0; k < owner->results.size(); ++k) of(owner->region(1).arg(k)) = of(owner->region(0).arg(k));
        return;
      }
      case OpKind::AtomGlobal: case OpKind::AtomCasGlobal:
        atomicAccess(op, e, out);
        return;
      case OpKind::For: {
        Producers bounds;
        for (size_t k = 0; k < 3 && k < op.operands.size(); ++k) addAll(bounds, of(op.operand(k)));
        emit(out, op, e.instr, TimedKind::Alu, 1, lat.alu, bounds);
        const int32_t self = int32_t(out.size() - 1);
        Region& body = op.region(0);
        of(body.arg(0)) = {self};
        for (size_t k = 3; k < op.operands.size(); ++k) {
          if (k - 2 < body.args.size()) of(body.arg(k - 2)) = of(op.operand(k));
          if (k - 3 < op.results.size()) of(op.result(k - 3)) = of(op.operand(k));
        }
        return;
      }
      case OpKind::If: {
        emit(out, op, e.instr, TimedKind::Alu, 1, lat.alu, operandDeps(op));
        for (const auto& r : op.results) of(r.get()).clear();
        return;
      }
      case OpKind::Return:
        emit(out, op, e.instr, TimedKind::Exit, 1, 0, {});
        return;
      case OpKind::Barrier:
        emit(out, op, e.instr, TimedKind::Barrier, 1, 0, {});
        return;
      case OpKind::PrintRegs: case OpKind::AssertRegs:
        // Ignored: a printf's trip to the host buffer and an assertion's compare are not modelled
        // (the executor counts them: ExecStats::printedLines, assertsChecked).
        return;
      case OpKind::LdGlobal: case OpKind::StGlobal:
        globalAccess(op, e, out);
        return;
      case OpKind::LdShared: case OpKind::StShared: case OpKind::Ldmatrix:
        sharedAccess(op, e, out);
        return;
      case OpKind::CpAsync:  // a global load whose data goes to shared memory, not to registers
        globalAccess(op, e, out);
        openCopies_.push_back(int32_t(out.size() - 1));
        return;
      case OpKind::CpAsyncCommit:
        committedCopies_.push_back(std::exchange(openCopies_, {}));
        emit(out, op, e.instr, TimedKind::Alu, 1, lat.alu, {});
        return;
      case OpKind::CpAsyncWait:  // waits for the committed copy groups but the newest `pending`
        emit(out, op, e.instr, TimedKind::Alu, 1, lat.alu, waitForGroups(committedCopies_, size_t(op.intAttr("pending"))));
        return;
      case OpKind::Mma: {  // the sub-partition's tensor core (sim/Gpu.h's mma figures)
        const DType d = op.operand(0)->type.dtype;
        const double c = d == DType::F32 ? gpu_.mmaCyclesTf32 : isFp8(d) ? gpu_.mmaCyclesFp8 : gpu_.mmaCyclesF16;
        TimedInstr& t = emit(out, op, e.instr, TimedKind::Tensor, 1, std::max(1, gpu_.mmaLatencyCycles), operandDeps(op));
        t.pipeCycles = std::max(1, int(std::lround(c)));
        return;
      }
      case OpKind::Wgmma: {  // this warp's quarter: N/8 pieces on its sub-partition's tensor core
        const int64_t pieces = op.intAttr("n") / 8;  // each 16 x 8 x K (32 bytes of K), per dtype
        const DType d = parseDType(op.strAttr("dtype")).value_or(DType::F16);
        const double perDtype = d == DType::F32 ? gpu_.wgmmaCyclesTf32 : isFp8(d) ? gpu_.wgmmaCyclesFp8 : gpu_.wgmmaCyclesF16;
        const double per = perDtype > 0 ? perDtype : gpu_.mmaCyclesF16;
        const int busy = std::max(1, int(std::lround(per * double(pieces))));
        // Its result is ready once the pipe has done all N/8 pieces, plus the mma latency. A
        // wgmma accumulating onto another's registers does not wait for that result: the
        // tensor core applies the wgmmas of a warp in order (PTX ISA, wgmma.fence), so only the
        // pipe serializes them.
        Producers deps = of(op.operand(0));
        addAll(deps, of(op.operand(1)));
        for (int32_t p : of(op.operand(2)))
          if (!std::binary_search(wgmmas_.begin(), wgmmas_.end(), p)) addAll(deps, {p});
        TimedInstr& t = emit(out, op, e.instr, TimedKind::Tensor, 1, busy + std::max(1, gpu_.mmaLatencyCycles), deps);
        t.pipeCycles = busy;
        openWgmma_.push_back(int32_t(out.size() - 1));
        wgmmas_.push_back(int32_t(out.size() - 1));
        return;
      }
      case OpKind::WgmmaCommit:
        if (!openWgmma_.empty()) committedWgmma_.push_back(std::exchange(openWgmma_, {}));
        emit(out, op, e.instr, TimedKind::Alu, 1, lat.alu, {});
        return;
      case OpKind::WgmmaWait: {  // waits for the committed wgmma groups but the newest `pending`
        emit(out, op, e.instr, TimedKind::Alu, 1, lat.alu, waitForGroups(committedWgmma_, size_t(op.intAttr("pending"))));
        // Its results are its operands' registers: ready when their wgmmas are (one left in
        // flight is read only by the next wgmma) and not before the wait.
        const int32_t self = int32_t(out.size() - 1);
        for (size_t k = 0; k < op.results.size(); ++k) {
          Producers p = of(op.operand(k));
          addAll(p, {self});
          of(op.result(k)) = p;
        }
        return;
      }
      case OpKind::WgmmaFence: case OpKind::FenceProxyAsync:
        emit(out, op, e.instr, TimedKind::Alu, 1, lat.alu, {});
        return;
      case OpKind::ShflXor: case OpKind::ShflIdx: {
        const int n = int(registersOf(op));
        TimedInstr& t = emit(out, op, e.instr, TimedKind::Shared, n, lat.shuffle, operandDeps(op));
        t.pipeCycles = n;
        return;
      }
      case OpKind::RegReduce: {
        const int64_t in = op.operand(0)->type.numel(), outRegs = op.result()->type.numel();
        const int64_t group = std::max<int64_t>(1, in / std::max<int64_t>(1, outRegs));
        emit(out, op, e.instr, TimedKind::Alu, int(std::max<int64_t>(1, in - outRegs)),
             int(std::max<int64_t>(1, group - 1)) * lat.alu, operandDeps(op));
        return;
      }
      default: {
        const AluCost c = aluCost(op, lat, op.operands.size() > 1 && known(op.operand(1)));
        emit(out, op, e.instr, TimedKind::Alu, int(registersOf(op)) * c.perRegister, c.latency, operandDeps(op));
        return;
      }
    }
  }

  MemBehaviour behaviour(int32_t instr, bool store) const {
    MemBehaviour b;
    if (store) {
      b.l1Hit = 0;
      b.l2Miss = 1;
      b.dramPerSector = kSectorBytes * storeDramRatio_;
      return b;
    }
    auto it = stats_.find(instr);
    if (it == stats_.end()) return b;  // no report: from DRAM
    const MemCounters& c = it->second->counters;
    if (c.sectors == 0) return b;
    b.l1Hit = c.l1HitRate();
    b.l2Miss = c.l2Sectors ? 1.0 - c.l2HitRate() : 0.0;
    b.dramPerSector = double(c.dramReadBytes) / double(c.sectors);
    return b;
  }

  void checkRange(const TraceEntry& e) const {
    if (e.accessCount > 0 &&
        (e.firstAccess < 0 || size_t(e.firstAccess) + size_t(e.accessCount) > run_.accesses.size()))
      throw std::invalid_argument("timing: a trace entry points past the run's access records (run the executor with "
                                  "recordAccesses and traceWarps together)");
  }

  void globalAccess(const Op& op, const TraceEntry& e, std::vector<TimedInstr>& out) {
    checkRange(e);
    const bool store = op.kind == OpKind::StGlobal;
    int64_t sectors = 0, lines = 0;
    SectorUse buf[kMaxSectorsPerAccess];
    for (int32_t k = 0; k < e.accessCount; ++k) {
      const int n = collectSectors(run_.accesses[size_t(e.firstAccess + k)], buf);
      sectors += n;
      lines += countLines(buf, n);
    }
    const MemBehaviour b = behaviour(e.instr, store);
    const double lat = b.l1Hit * gpu_.l1LatencyCycles +
                       (1 - b.l1Hit) * ((1 - b.l2Miss) * gpu_.l2LatencyCycles + b.l2Miss * gpu_.dramLatencyCycles);
    TimedInstr& t = emit(out, op, e.instr, store ? TimedKind::GlobalStore : TimedKind::GlobalLoad,
                         std::max(1, e.accessCount), std::max(1, int(std::lround(lat))), operandDeps(op));
    t.pipeCycles = int(lines);
    t.l2Bytes = double(sectors) * kSectorBytes * (1 - b.l1Hit);
    t.dramBytes = double(sectors) * b.dramPerSector;
  }

  // An atomic is a read-modify-write performed at the L2 (L1 is bypassed): its old value comes
  // back after the L2 latency (the DRAM latency for the share of sectors that missed, from the
  // memory report), and the L2 must read and write every sector it updates. Lanes of one
  // instruction that hit the same address cannot be merged into one update: the L2 applies them
  // one after another, so a sector costs one read and one write (2 x 32 bytes of L2 traffic)
  // per lane on its most-contended address. No number of its own: the latencies and the L2
  // bandwidth are the GPU description's (gpus/*.json, with their sources).
  void atomicAccess(const Op& op, const TraceEntry& e, std::vector<TimedInstr>& out) {
    checkRange(e);
    int64_t lines = 0, updates = 0, sectors = 0;
    SectorUse buf[kMaxSectorsPerAccess];
    for (int32_t k = 0; k < e.accessCount; ++k) {
      const WarpAccess& a = run_.accesses[size_t(e.firstAccess + k)];
      const int n = collectSectors(a, buf);
      sectors += n;
      lines += countLines(buf, n);
      for (int s = 0; s < n; ++s) {  // the most lanes on one address of this sector
        int most = 0;
        for (int l = 0; l < 32; ++l) {
          if (!(a.activeMask >> l & 1) || a.addr[size_t(l)] / kSectorBytes != buf[s].addr / kSectorBytes) continue;
          int same = 0;
          for (int m = 0; m < 32; ++m) same += (a.activeMask >> m & 1) && a.addr[size_t(m)] == a.addr[size_t(l)];
          most = std::max(most, same);
        }
        updates += std::max(1, most);
      }
    }
    double l2Miss = 0, dramPerSector = 0;
    if (auto it = stats_.find(e.instr); it != stats_.end() && it->second->counters.sectors > 0) {
      const MemCounters& c = it->second->counters;
      l2Miss = c.l2Sectors ? 1.0 - c.l2HitRate() : 0.0;
      dramPerSector = double(c.dramReadBytes) / double(c.sectors);
    }
    const double lat = (1 - l2Miss) * gpu_.l2LatencyCycles + l2Miss * gpu_.dramLatencyCycles;
    TimedInstr& t = emit(out, op, e.instr, TimedKind::GlobalLoad, std::max(1, e.accessCount),
                         std::max(1, int(std::lround(lat))), operandDeps(op));
    t.pipeCycles = int(lines);
    t.l2Bytes = double(updates) * 2 * kSectorBytes;
    t.dramBytes = double(sectors) * (dramPerSector + kSectorBytes * storeDramRatio_);
  }

  void sharedAccess(const Op& op, const TraceEntry& e, std::vector<TimedInstr>& out) {
    checkRange(e);
    int wavefronts = 0;
    for (int32_t k = 0; k < e.accessCount; ++k) wavefronts += banks(run_.accesses[size_t(e.firstAccess + k)]).wavefronts;
    TimedInstr& t = emit(out, op, e.instr, TimedKind::Shared, std::max(1, e.accessCount),
                         std::max(1, gpu_.sharedLatencyCycles), operandDeps(op));
    t.pipeCycles = wavefronts;
  }
};

// Resident blocks per SM: given, or from the occupancy model.
struct Residency {
  int blocks = 0;
  std::string source;
};

Residency residency(const TimingInput& in, const GpuSpec& gpu, const TimingOptions& o) {
  if (o.residentBlocksPerSM < 0) throw std::invalid_argument("timing: residentBlocksPerSM must be >= 0");
  if (o.residentBlocksPerSM > 0) {
    if (int64_t(o.residentBlocksPerSM) * in.warpsPerBlock > gpu.maxWarpsPerSM)
      throw std::invalid_argument("timing: " + std::to_string(o.residentBlocksPerSM) + " blocks of " +
                                  std::to_string(in.warpsPerBlock) + " warps exceed the SM's " +
                                  std::to_string(gpu.maxWarpsPerSM) + " warps");
    return {o.residentBlocksPerSM, "given"};
  }
  const OccupancyResult occ = occupancy(gpu, in.warpsPerBlock * 32, in.registersPerThread, int(in.sharedBytesPerBlock));
  if (occ.activeBlocksPerSM < 1)
    throw std::invalid_argument("timing: kernel '" + in.kernel + "' does not fit on an SM of " + gpu.name + ": " + occ.reason);
  return {occ.activeBlocksPerSM, std::string("occupancy (limited by ") + limiterName(occ.limiter) + ", " +
                                     std::to_string(in.registersPerThread) + " registers: " + in.registerSource + ")"};
}

std::string fmt(double v, int digits = 1) {
  char b[64];
  std::snprintf(b, sizeof b, "%.*f", digits, v);
  return b;
}

// One SM's active warp-cycles and active cycles (first block start to last warp exit).
struct ActiveWarps {
  double warpCycles = 0;
  double cycles = 0;
};

ActiveWarps activeWarps(const SmResult& sm) {
  ActiveWarps a;
  for (int s = 0; s < kWarpStates; ++s)
    if (WarpState(s) != WarpState::Done) a.warpCycles += double(sm.warpCycles[size_t(s)]);
  int64_t first = sm.blockStart.empty() ? 0 : sm.blockStart.front(), last = first;
  for (int64_t t : sm.blockStart) first = std::min(first, t);
  for (int64_t d : sm.blockDone) last = std::max(last, d);
  a.cycles = double(last - first);
  return a;
}

// The achieved occupancy over the SMs that run blocks (see TimingResult::achievedOccupancy).
void achievedOccupancy(TimingResult& r, const SmResult& sm, const TimingInput& in, const GpuSpec& gpu,
                       const SmConfig& busyConfig) {
  const ActiveWarps busy = activeWarps(sm);
  r.activeCyclesPerSM = int64_t(busy.cycles);
  if (busy.cycles <= 0 || gpu.maxWarpsPerSM < 1) return;
  const double busyMean = busy.warpCycles / busy.cycles;
  // Round-robin: nBusy SMs run blocksPerSM blocks, the other active SMs one block less.
  const int64_t nBusy = r.gridBlocks - (r.blocksPerSM - 1) * r.activeSMs;
  const int64_t nLight = r.activeSMs - nBusy;
  // The busy SM's active cycles over the whole run (extrapolated runs keep the simulated mean).
  const double busyCycles = busy.cycles * double(r.cycles) / double(std::max<int64_t>(1, r.simulatedCycles));
  double warpCycles = double(nBusy) * busyMean * busyCycles, cycles = double(nBusy) * busyCycles;
  if (nLight > 0 && r.blocksPerSM > 1) {
    double lightMean = busyMean, lightCycles = busyCycles * double(r.blocksPerSM - 1) / double(r.blocksPerSM);
    if (!r.extrapolated && r.blocksPerSM <= kLightSmSimulationLimit) {
      SmConfig c = busyConfig;
      c.blocks = r.blocksPerSM - 1;
      c.timelineBlocks = 0;
      const ActiveWarps light = activeWarps(simulateSm(in.sample, c));
      if (light.cycles > 0) {
        lightMean = light.warpCycles / light.cycles;
        lightCycles = light.cycles;
      }
    }
    warpCycles += double(nLight) * lightMean * lightCycles;
    cycles += double(nLight) * lightCycles;
  }
  r.achievedWarpsPerSM = cycles > 0 ? warpCycles / cycles : 0.0;
  r.achievedOccupancy = r.achievedWarpsPerSM / double(gpu.maxWarpsPerSM);
}

void classify(TimingResult& r, const SmResult& sm, int launchInterval) {
  const double waitMem = r.warpStateShare[size_t(WarpState::WaitingMemory)];
  const double waitBar = r.warpStateShare[size_t(WarpState::WaitingBarrier)];
  const double waitDep = r.warpStateShare[size_t(WarpState::WaitingDependency)];
  constexpr double kBusy = 0.85;  // a resource busy this share of the time is "the" limiter
  if (r.dramUtilization >= kBusy) {
    r.limiter = TimeLimiter::DramBandwidth;
    r.limiterWhy = "the SM's share of DRAM bandwidth (" + fmt(r.dramBytesPerCycleSM) + " B/cycle) is busy " +
                   fmt(100 * r.dramUtilization) + "% of the time";
  } else if (launchInterval > 0 && sm.cycles > 0 &&
             double(r.blocksSimulated) * launchInterval >= kBusy * double(sm.cycles)) {
    r.limiter = TimeLimiter::BlockLaunch;
    r.limiterWhy = "the SM starts a block at most every " + std::to_string(launchInterval) +
                   " cycles (the block scheduler's rate): " + std::to_string(r.blocksSimulated) + " blocks x " +
                   std::to_string(launchInterval) + " = " + fmt(100.0 * double(r.blocksSimulated) * launchInterval /
                                                                double(sm.cycles), 0) +
                   "% of the SM's cycles; more work per block would help";
  } else if (r.l2Utilization >= kBusy) {
    r.limiter = TimeLimiter::L2Bandwidth;
    r.limiterWhy = "the SM's share of L2 bandwidth is busy " + fmt(100 * r.l2Utilization) + "% of the time";
  } else if (r.tensorUtilization >= kBusy) {
    r.limiter = TimeLimiter::TensorCore;
    r.limiterWhy = "the tensor cores are busy " + fmt(100 * r.tensorUtilization) + "% of the time (" +
                   fmt(r.mmaInstructions, 0) + " mma)";
  } else if (r.issueUtilization >= kBusy) {
    r.limiter = TimeLimiter::Issue;
    r.limiterWhy = "the schedulers issue in " + fmt(100 * r.issueUtilization) + "% of their cycles";
  } else if (waitBar >= waitMem && waitBar >= waitDep) {
    r.limiter = TimeLimiter::Barrier;
    r.limiterWhy = "warps spend " + fmt(100 * waitBar) + "% of their time waiting at barriers";
  } else if (waitDep > waitMem) {
    r.limiter = TimeLimiter::Dependency;
    r.limiterWhy = "warps spend " + fmt(100 * waitDep) + "% of their time waiting on arithmetic results";
  } else {
    r.limiter = TimeLimiter::Latency;
    r.limiterWhy = "warps spend " + fmt(100 * waitMem) + "% of their time waiting on memory while DRAM is busy only " +
                   fmt(100 * r.dramUtilization) + "% (" + fmt(sm.dramBytesInFlight(), 0) + " B in flight, " +
                   fmt(r.littleBytesToSaturate, 0) + " B would saturate it)";
  }
}

}  // namespace

// The address atomics updated most often in the run, its update count and how many blocks updated it.
void hottestAtomicAddress(const ExecResult& run, TimingInput& in) {
  std::unordered_map<uint64_t, std::pair<int64_t, int64_t>> updates;  // address -> (count, last block)
  std::unordered_map<uint64_t, int64_t> blocks;
  for (const WarpAccess& a : run.accesses) {
    if (!a.atomic) continue;
    for (int l = 0; l < 32; ++l) {
      if (!(a.activeMask >> l & 1)) continue;
      auto& [count, last] = updates.try_emplace(a.addr[size_t(l)], 0, -1).first->second;
      ++count;
      if (last != a.block) {
        last = a.block;
        ++blocks[a.addr[size_t(l)]];
      }
    }
  }
  for (const auto& [addr, u] : updates)
    if (u.first > in.hottestAtomicUpdates) {
      in.hottestAtomicUpdates = u.first;
      in.hottestAtomicBlocks = blocks[addr];
    }
}

TimingInput buildTimingInput(const Function& threadIR, const ExecResult& run, const GpuSpec& gpu,
                             const TimingOptions& options) {
  if (run.traces.empty())
    throw std::invalid_argument("timing: the run has no warp traces (run the executor with ExecOptions::traceWarps)");
  if (threadIR.numWarps < 1) throw std::invalid_argument("timing: '" + threadIR.name + "' is not thread IR");
  TimingInput in;
  in.kernel = threadIR.name;
  in.warpsPerBlock = threadIR.numWarps;
  in.sharedBytesPerBlock = threadIR.sharedBytes;
  if (options.registersPerThread > 0) {
    in.registersPerThread = options.registersPerThread;
    in.registerSource = "given";
  } else {
    const RegisterEstimate est = estimateRegisters(threadIR);
    in.registersPerThread = est.registers;
    in.registerSource = est.source;
  }
  Converter conv(threadIR, run, gpu, options);
  for (const WarpTrace& t : run.traces) {
    if (in.sample.empty() || t.warp == 0) in.sample.emplace_back();
    BlockStream& b = in.sample.back();
    if (t.warp != int32_t(b.warps.size()))
      throw std::invalid_argument("timing: the traces are not grouped by block (warp " + std::to_string(t.warp) +
                                  " of block " + std::to_string(t.block) + " out of order)");
    b.warps.push_back(conv.convert(t));
  }
  for (const BlockStream& b : in.sample) {
    if (int(b.warps.size()) != in.warpsPerBlock)
      throw std::invalid_argument("timing: a traced block has " + std::to_string(b.warps.size()) + " warps; '" +
                                  threadIR.name + "' has " + std::to_string(in.warpsPerBlock));
    for (const auto& w : b.warps)
      for (const TimedInstr& i : w) {
        in.dramBytesPerBlock += i.dramBytes;
        in.l2BytesPerBlock += i.l2Bytes;
      }
  }
  in.tracedBlocks = int64_t(in.sample.size());
  hottestAtomicAddress(run, in);
  in.dramBytesPerBlock /= double(in.tracedBlocks);
  in.l2BytesPerBlock /= double(in.tracedBlocks);
  return in;
}

TimingResult predictTime(const TimingInput& in, const GpuSpec& gpu, const TimingOptions& o) {
  if (in.sample.empty()) throw std::invalid_argument("timing: no sampled block");
  if (o.gridBlocks < 0 || o.maxSimulatedBlocks < 1 || (o.launchOverheadUs < 0 && o.launchOverheadUs != -1) ||
      o.blockLaunchCycles < 0 ||
      o.blockLaunchIntervalCycles < -1 ||
      !(o.smMaxBytesPerCycle > 0))
    throw std::invalid_argument("timing: options out of range (gridBlocks >= 0, maxSimulatedBlocks >= 1, "
                                "launchOverheadUs >= 0 or -1, blockLaunchCycles >= 0, smMaxBytesPerCycle > 0)");
  if (gpu.smCount < 1 || !(gpu.smClockGHz > 0) || !(gpu.dramBandwidthGBs > 0) || !(gpu.l2BandwidthBytesPerCycle > 0) ||
      gpu.warpSchedulersPerSM < 1)
    throw std::invalid_argument("timing: GPU '" + gpu.key + "' lacks SMs, clock, schedulers or bandwidths");
  TimingResult r;
  r.gpu = gpu.key;
  r.kernel = in.kernel;
  r.clockGHz = gpu.smClockGHz;
  r.warpsPerBlock = in.warpsPerBlock;
  r.tracedBlocks = in.tracedBlocks;
  r.gridBlocks = o.gridBlocks > 0 ? o.gridBlocks : in.tracedBlocks;

  const Residency res = residency(in, gpu, o);
  r.residentBlocksPerSM = res.blocks;
  r.residentWarpsPerSM = res.blocks * in.warpsPerBlock;
  r.residentSource = res.source;

  // The busiest SM and its share of the chip's bandwidths.
  r.activeSMs = int(std::min<int64_t>(gpu.smCount, r.gridBlocks));
  r.blocksPerSM = (r.gridBlocks + r.activeSMs - 1) / r.activeSMs;
  const double share = double(r.blocksPerSM) / double(r.gridBlocks);
  r.dramBytesPerCycleSM = std::min(gpu.dramBandwidthGBs / gpu.smClockGHz * share, o.smMaxBytesPerCycle);
  const double l2PerCycle = std::min(gpu.l2BandwidthBytesPerCycle * share, o.smMaxBytesPerCycle);

  SmConfig c;
  c.schedulers = gpu.warpSchedulersPerSM;
  c.residentBlocks = res.blocks;
  // Enough blocks for a steady state: at least 4 rounds of resident blocks.
  r.blocksSimulated = std::min(r.blocksPerSM, std::max<int64_t>(o.maxSimulatedBlocks, 4 * int64_t(res.blocks)));
  c.blocks = r.blocksSimulated;
  c.dramBytesPerCycle = r.dramBytesPerCycleSM;
  c.l2BytesPerCycle = l2PerCycle;
  c.barrierLatency = o.latencies.barrier;
  c.blockLaunchCycles = o.blockLaunchCycles;
  c.blockLaunchInterval = o.blockLaunchIntervalCycles >= 0 ? o.blockLaunchIntervalCycles : gpu.blockLaunchIntervalCycles;
  c.timelineBlocks = o.timelineBlocks;
  SmResult sm = simulateSm(in.sample, c);

  r.simulatedCycles = sm.cycles;
  r.cycles = sm.cycles;
  if (r.blocksSimulated < r.blocksPerSM) {
    // Steady state: the time per block over whole rounds of resident blocks in the second half
    // of the simulation (blocks retire in rounds, so a part of a round would be biased).
    std::vector<int64_t> done = sm.blockDone;
    std::sort(done.begin(), done.end());
    const int64_t n = int64_t(done.size()), R = res.blocks;
    const int64_t span = std::max<int64_t>(1, (n / 2) / R) * R;  // n >= 4R, so span <= n / 2
    r.cyclesPerBlock = double(done[size_t(n - 1)] - done[size_t(n - 1 - span)]) / double(span);
    r.cycles = sm.cycles + int64_t(std::llround(double(r.blocksPerSM - r.blocksSimulated) * r.cyclesPerBlock));
    r.extrapolated = true;
  } else {
    r.cyclesPerBlock = double(sm.cycles) / double(r.blocksSimulated);
  }
  // One address's atomic updates are serialized at its L2 slice. When every traced block updated
  // it, every block of the grid is assumed to (the count scales with the grid).
  double hottest = double(in.hottestAtomicUpdates);
  if (in.hottestAtomicBlocks == in.tracedBlocks && in.tracedBlocks > 0)
    hottest *= double(r.gridBlocks) / double(in.tracedBlocks);
  r.atomicSerialCycles = int64_t(std::llround(hottest)) * kAtomicUpdateCycles;
  const bool atomicBound = r.atomicSerialCycles > r.cycles;
  const int64_t smCycles = r.cycles;  // what the SM simulation alone gives
  if (atomicBound) r.cycles = r.atomicSerialCycles;
  r.smTimeUs = double(r.cycles) / (gpu.smClockGHz * 1e3);
  r.launchOverheadUs = o.launchOverheadUs >= 0 ? o.launchOverheadUs : gpu.launchOverheadUs;
  r.timeUs = r.smTimeUs + r.launchOverheadUs;

  r.dramBytes = in.dramBytesPerBlock * double(r.gridBlocks);
  if (r.blocksSimulated > 0) r.mmaInstructions = double(sm.mmaInstructions) / double(r.blocksSimulated) * double(r.gridBlocks);
  r.l2Bytes = in.l2BytesPerBlock * double(r.gridBlocks);
  r.achievedDramGBs = r.timeUs > 0 ? r.dramBytes / (r.timeUs * 1e3) : 0;
  r.bandwidthBoundUs = r.dramBytes / (gpu.dramBandwidthGBs * 1e3);
  if (sm.cycles > 0) {
    r.dramUtilization = std::min(1.0, sm.dramBusyCycles / double(sm.cycles));
    r.l2Utilization = std::min(1.0, sm.l2BusyCycles / double(sm.cycles));
    r.issueUtilization = double(sm.issueCycles) / (double(sm.cycles) * c.schedulers);
    r.tensorUtilization = std::min(1.0, sm.tensorBusyCycles / (double(sm.cycles) * c.schedulers));
  }
  r.dramBytesInFlight = sm.dramBytesInFlight();
  r.dramMeanLatency = sm.dramMeanLatency();
  r.littleBytesToSaturate = r.dramBytesPerCycleSM * gpu.dramLatencyCycles;
  // Shares of the cycles warps were live (Done excluded: an exited warp waits for nothing), as
  // Nsight Compute's warp-state sampling only samples live warps.
  int64_t live = 0;
  for (int s = 0; s < kWarpStates; ++s)
    if (WarpState(s) != WarpState::Done) live += sm.warpCycles[size_t(s)];
  for (int s = 0; s < kWarpStates; ++s)
    if (WarpState(s) != WarpState::Done && live > 0) r.warpStateShare[size_t(s)] = double(sm.warpCycles[size_t(s)]) / double(live);
  achievedOccupancy(r, sm, in, gpu, c);
  classify(r, sm, c.blockLaunchInterval);
  if (atomicBound) {
    r.limiter = TimeLimiter::L2Bandwidth;
    r.limiterWhy = "atomics on one address: " + std::to_string(int64_t(std::llround(hottest))) +
                   " updates one after another at the L2 slice holding it (" + std::to_string(kAtomicUpdateCycles) +
                   " cycle each) take longer than the SMs' " + std::to_string(smCycles) + " cycles";
  }
  r.timeline = std::move(sm.timeline);
  r.timelineTruncated = sm.timelineTruncated;
  return r;
}

TimingResult predictTime(const Function& threadIR, const ExecResult& run, const GpuSpec& gpu,
                         const TimingOptions& options) {
  return predictTime(buildTimingInput(threadIR, run, gpu, options), gpu, options);
}

std::vector<SweepPoint> residentWarpsSweep(const TimingInput& in, const GpuSpec& gpu, const TimingOptions& options,
                                           int maxResidentBlocks) {
  TimingOptions o = options;
  o.timelineBlocks = 0;
  if (maxResidentBlocks <= 0) {
    o.residentBlocksPerSM = 0;
    maxResidentBlocks = residency(in, gpu, o).blocks;
  }
  std::vector<SweepPoint> points;
  for (int b = 1; b <= maxResidentBlocks; ++b) {
    o.residentBlocksPerSM = b;
    const TimingResult r = predictTime(in, gpu, o);
    SweepPoint p;
    p.residentBlocks = b;
    p.residentWarps = r.residentWarpsPerSM;
    p.timeUs = r.timeUs;
    p.cycles = r.cycles;
    p.achievedDramGBs = r.achievedDramGBs;
    p.dramUtilization = r.dramUtilization;
    p.dramBytesInFlight = r.dramBytesInFlight;
    p.dramMeanLatency = r.dramMeanLatency;
    p.limiter = r.limiter;
    points.push_back(p);
  }
  return points;
}

std::string chromeTraceJson(const TimingResult& r, int indent) {
  using nlohmann::json;
  const double usPerCycle = 1.0 / (r.clockGHz * 1e3);
  json events = json::array();
  events.push_back({{"name", "process_name"}, {"ph", "M"}, {"pid", 0},
                    {"args", {{"name", "SM 0: " + r.kernel + " on " + r.gpu}}}});
  std::vector<bool> named;
  for (const WarpSegment& s : r.timeline) {
    const int64_t tid = s.block * r.warpsPerBlock + s.warp;
    if (size_t(tid) >= named.size()) named.resize(size_t(tid) + 1, false);
    if (!named[size_t(tid)]) {
      named[size_t(tid)] = true;
      events.push_back({{"name", "thread_name"}, {"ph", "M"}, {"pid", 0}, {"tid", tid},
                        {"args", {{"name", "block " + std::to_string(s.block) + " warp " + std::to_string(s.warp)}}}});
      events.push_back({{"name", "thread_sort_index"}, {"ph", "M"}, {"pid", 0}, {"tid", tid},
                        {"args", {{"sort_index", tid}}}});
    }
    json args = {{"block", s.block}, {"warp", s.warp}, {"slot", s.slot}, {"start_cycle", s.start},
                 {"end_cycle", s.end}, {"instruction", s.instr}};
    if (s.loc.known()) args["source"] = std::to_string(s.loc.line) + ":" + std::to_string(s.loc.col);
    events.push_back({{"name", warpStateName(s.state)}, {"cat", "warp"}, {"ph", "X"},
                      {"ts", double(s.start) * usPerCycle}, {"dur", double(s.end - s.start) * usPerCycle},
                      {"pid", 0}, {"tid", tid}, {"args", std::move(args)}});
  }
  json doc = {{"traceEvents", std::move(events)}, {"displayTimeUnit", "ns"},
              {"otherData", {{"kernel", r.kernel}, {"gpu", r.gpu}, {"predicted_us", r.timeUs},
                             {"cycles", r.cycles}, {"limiter", timeLimiterName(r.limiter)},
                             {"timeline_truncated", r.timelineTruncated}}}};
  return doc.dump(indent);
}

}  // namespace tl
