// The warp-level executor of thread IR (contract in ThreadExecutor.h; a walkthrough for
// students in docs/executor.md). This file: the blocks, the warp scheduler, control flow and
// the register ops; the warps' data, the state and the memory instructions are in
// sim/ExecutorMemory.h.
//
// How it runs
//   - Blocks run one after another in grid order (x fastest), up to ExecOptions::maxBlocks.
//   - A block has 32*numWarps threads in numWarps warps. Each warp owns a register file
//     (sim/Program.h: one flat slot array, value v at [lane][reg]) and an explicit stack of
//     frames (region, next op, active mask, loop/if state) instead of C++ recursion, so a warp
//     can stop at a barrier deep inside loops and branches and resume later.
//   - A warp runs in lockstep: each op is computed for the frame's active lanes only.
//   - `if` with a per-lane condition runs the then-region with (active & cond) and the else-region
//     with (active & ~cond), one after the other; each branch's yield writes the if's results for
//     its own lanes, so after reconvergence every lane holds its branch's values. A uniform
//     condition runs one region with the whole mask.
//   - `for` reads lo/hi/step per lane; each lane iterates while (step > 0 ? iv < hi : iv > hi);
//     the body runs with the lanes still iterating; lanes drop out as they finish; the for's
//     results hold each lane's carried values after its last iteration (its inits if none).
//   - Scheduler: warp 0 runs until it reaches a barrier or returns, then warp 1, ... When no
//     warp can run: all returned -> the block is done; all wait at the same barrier op -> all
//     are released (a new race-detection epoch begins); anything else is a RuntimeError.
//     A barrier reached with inactive lanes (inside divergent code) is a RuntimeError at once.
//   - Memory ops check alignment (vector groups) and bounds before touching memory; a store
//     checks every lane's every group first, so a faulting store writes nothing; then writes
//     apply lane by lane in lane order. Two elements of one dynamic store instance (across the
//     lanes, registers and warps of a block) writing one global address with different bytes
//     are a write conflict, a RuntimeError (sim/WriteConflicts.h); equal bytes are fine.
//   - `while` keeps each lane's carried values in its results: the cond region runs on them,
//     lanes whose `condition` is false leave (the loop ends when none is left), the others run
//     the body, whose yield updates the results and returns to the cond region.
//   - Atomics (atom_global, atom_cas_global) apply lane by lane, register by register, each
//     element's read-modify-write finishing before the next starts; one warp instruction runs at
//     a time, so every atomic is indivisible across lanes, warps and blocks.
//   - mma (tensor cores) needs every lane of the warp active. It gathers the A, B and C
//     fragments of all 32 lanes into matrices by the PTX ISA's tables (ir/MmaLayout.h), adds
//     each D element up as the H200 does (sim/TensorCoreSum.h, measured bit for bit: terms
//     aligned to the largest and cut toward zero, the sum cut to f32; an f16 accumulator's sum
//     rounded to f16 to nearest), and scatters D back. A tf32 input's low 13 mantissa bits are
//     ignored, as the hardware does (truncToTf32).
//   - cp_async reads its global bytes at issue and holds them; they land in shared memory at
//     the cp_async_wait that covers their group (per warp, in commit order). Touching those
//     bytes before then, or returning with copies in flight, is a RuntimeError, so a pipeline
//     that waits too little fails here instead of reading stale data by luck.
//   - Shared memory is per block, filled with 0xFF bytes at the start of every block ("poison":
//     an f32 read before any write gives NaN, an i32 gives -1), so reading uninitialized shared
//     memory shows up as wrong results instead of passing by luck with zeros.
#include "sim/ThreadExecutor.h"

#include "runtime/Arguments.h"
#include "runtime/Budget.h"
#include "runtime/FloatOps.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <utility>

#include "ir/FileRead.h"  // formatByteLimit
#include "ir/MmaLayout.h"
#include "ir/Verifier.h"
#include "sim/ElementOps.h"
#include "sim/ExecutorMemory.h"
#include "sim/Program.h"
#include "sim/RaceDetector.h"
#include "sim/TensorCoreSum.h"
#include "sim/WriteConflicts.h"

namespace tl {

using sim::COp;
using sim::CRegion;
using sim::Slot;
using sim::ValRef;

std::vector<const Op*> instructionTable(const Function& fn) {
  std::vector<const Op*> table;
  walk(fn.body, [&](Op& op) { table.push_back(&op); });
  return table;
}

namespace {

using namespace sim::exec;

class Executor : public sim::exec::MachineState {
 public:
  Executor(const Function& fn, const LaunchConfig& launch, Memory& memory, const ExecOptions& options)
      : MachineState(fn, launch, memory, options) {}

  ExecResult run() {
    checkFunction();
    prog_ = sim::compileProgram(fn_);
    bindParams();
    numWarps_ = fn_.numWarps;
    warps_.resize(static_cast<size_t>(numWarps_));
    for (int w = 0; w < numWarps_; ++w) {
      warps_[w].id = w;
      warps_[w].regs.assign(prog_->slotsPerWarp, 0);
      warps_[w].stack.reserve(static_cast<size_t>(prog_->maxDepth) + 1);
    }
    shared_.assign(static_cast<size_t>(fn_.sharedBytes), 0xFF);
    if (opts_.detectRaces) races_.reset(fn_.sharedBytes);

    const int64_t total = launch_.grid[0] * launch_.grid[1] * launch_.grid[2];
    const int64_t toRun = opts_.maxBlocks < 0 ? total : std::min(total, opts_.maxBlocks);
    WorkMeter meter("the thread executor", "block", toRun, kExecutorDefaultSteps, "one warp instruction");
    meter_ = &meter;
    for (int64_t b = 0; b < toRun; ++b) {
      block_ = {b % launch_.grid[0], (b / launch_.grid[0]) % launch_.grid[1], b / (launch_.grid[0] * launch_.grid[1])};
      blockLinear_ = b;
      meter.startUnit(b);
      const size_t accessesBefore = result_.accesses.size(), tracesBefore = result_.traces.size();
      const int64_t entriesBefore = traceEntries_;
      const ExecStats statsBefore = result_.stats;
      bool whole = true;
      try {
        runBlock();
      } catch (const RecordCapReached&) {
        whole = false;
      }
      if (!whole) {  // the records outgrew maxRecordBytes: keep only the whole blocks before
        result_.accesses.resize(accessesBefore);
        result_.traces.resize(tracesBefore);
        traceEntries_ = entriesBefore;
        result_.stats = statsBefore;
        result_.stoppedAtRecordCap = true;
        break;
      }
      ++result_.stats.blocks;
      // Stop before a block that would not fit, judged by the blocks so far (alike, usually).
      if (opts_.maxRecordBytes > 0 && b + 1 < toRun &&
          recordBytes() + recordBytes() / (b + 1) > opts_.maxRecordBytes) {
        result_.stoppedAtRecordCap = true;
        break;
      }
      // After the first block, reserve for the rest: no reallocation in the common case.
      if (b == 0 && opts_.recordAccesses) {
        size_t want = result_.accesses.size() * static_cast<size_t>(toRun) + 64;
        if (opts_.maxRecordBytes > 0) want = std::min(want, size_t(opts_.maxRecordBytes) / sizeof(WarpAccess) + 64);
        result_.accesses.reserve(want);
      }
    }
    throwPendingRace();  // a race between programs, found on the way (ExecutorMemory.h)
    return std::move(result_);
  }

 private:
  std::vector<Slot> params_;  // one slot per parameter, the same for every lane and block
  int numWarps_ = 0;
  std::vector<Warp> warps_;
  size_t traceBase_ = 0;               // traceWarps: index of this block's warp 0 in result_.traces
  int64_t traceEntries_ = 0;           // TraceEntry records kept, all warps
  WorkMeter* meter_ = nullptr;         // the run's budget (runtime/Budget.h)
  int64_t recordCheckIn_ = kRecordCheckEvery;  // warp instructions to the next record-size check

  // ----- setup --------------------------------------------------------------------------------

  void checkFunction() {
    if (fn_.level != IRLevel::Thread)
      throw IRError(fn_.loc, "the thread executor runs thread IR; '" + fn_.name + "' is block IR");
    std::string errors = verifyFunction(fn_);
    if (!errors.empty()) throw IRError(fn_.loc, "the thread executor was given IR that fails verification:\n" + errors);
    if (fn_.numWarps < 1 || fn_.numWarps > kMaxWarps)
      throw IRError(fn_.loc, "thread function '" + fn_.name + "' has num_warps " + std::to_string(fn_.numWarps) +
                                 "; it must be 1.." + std::to_string(kMaxWarps));
    if (fn_.sharedBytes < 0 || fn_.sharedBytes > kMaxSharedBytes)
      throw IRError(fn_.loc, "thread function '" + fn_.name + "' has shared_bytes " + std::to_string(fn_.sharedBytes) +
                                 "; the executor allows 0.." + std::to_string(kMaxSharedBytes));
    for (int a = 0; a < 3; ++a)
      if (launch_.grid[a] < 1)
        throw std::runtime_error("grid dimension " + std::to_string(a) + " is " + std::to_string(launch_.grid[a]) +
                                 "; it must be at least 1");
  }

  // Parameters as the interpreters bind them: a pointer is its buffer's base address; a scalar
  // is the launch value converted to the parameter's dtype.
  void bindParams() {
    for (const KernelArgument& a : bindArguments(fn_, launch_, mem_)) {
      if (a.buffer) {
        params_.push_back(a.buffer->base);
        continue;
      }
      const ScalarValue& v = a.value;
      Slot s = isInt(v.dtype) ? sim::intSlot(v.dtype, v.i)
                              : sim::floatSlot(v.dtype, static_cast<float>(roundToDType(v.f, DType::F32)));
      params_.push_back(sim::convertSlot(s, v.dtype, a.type->dtype));
    }
  }

  // ----- the block and its warps --------------------------------------------------------------

  void runBlock() {
    for (Warp& w : warps_) {
      for (size_t k = 0; k < params_.size(); ++k) fill(w, prog_->body.args[k], kFullMask, params_[k]);
      w.stack.clear();
      w.stack.push_back(Frame{&prog_->body, nullptr, 0, kFullMask, 0, FrameKind::Body, false});
      w.status = WarpStatus::Running;
      w.barrier = nullptr;
    }
    std::fill(shared_.begin(), shared_.end(), uint8_t(0xFF));
    wgmmaOpen_.assign(warps_.size(), {});
    wgmmaCommitted_.assign(warps_.size(), {});
    copiesOpen_.assign(warps_.size(), {});
    copiesCommitted_.assign(warps_.size(), {});
    if (!asyncReaders_.empty()) std::fill(asyncReaders_.begin(), asyncReaders_.end(), uint16_t(0));
    if (!asyncWriters_.empty()) std::fill(asyncWriters_.begin(), asyncWriters_.end(), uint16_t(0));
    if (opts_.detectRaces) races_.newEpoch();
    conflicts_.beginBlock(numWarps_, prog_->instructions.size());
    if (opts_.traceWarps) {
      traceBase_ = result_.traces.size();
      for (const Warp& w : warps_) result_.traces.push_back(WarpTrace{blockLinear_, w.id, {}});
    }

    for (;;) {
      for (Warp& w : warps_)
        if (w.status == WarpStatus::Running) runWarp(w);
      // No warp can run now: every warp returned or waits at a barrier.
      const Warp* waiting = nullptr;
      const Warp* done = nullptr;
      for (const Warp& w : warps_) {
        if (w.status == WarpStatus::AtBarrier && !waiting) waiting = &w;
        if (w.status == WarpStatus::Done && !done) done = &w;
      }
      if (!waiting) {  // all returned
        for (const Warp& w : warps_)
          if (!wgmmaOpen_[size_t(w.id)].empty() || !wgmmaCommitted_[size_t(w.id)].empty())
            throw IRError(fn_.loc, "warp " + std::to_string(w.id) + " of " + blockStr() +
                                       " returned with wgmmas in flight (no wgmma_commit and wgmma_wait after them)");
        for (const Warp& w : warps_)
          if (!copiesOpen_[size_t(w.id)].empty() || !copiesCommitted_[size_t(w.id)].empty())
            throw IRError(fn_.loc, "warp " + std::to_string(w.id) + " of " + blockStr() +
                                       " returned with cp_async copies in flight (no cp_async_commit and cp_async_wait after them)");
        return;
      }
      if (done)
        fail(*waiting->barrier, "barrier at " + locStr(waiting->barrier->op->loc) + " not reached by warp " +
                                    std::to_string(done->id) + ": it returned while warp " + std::to_string(waiting->id) +
                                    " waits there, in " + blockStr() + " (every thread of a block must reach every barrier)");
      for (const Warp& w : warps_)
        if (w.barrier != waiting->barrier)
          fail(*w.barrier, "warps wait at different barriers in " + blockStr() + ": warp " + std::to_string(waiting->id) +
                               " at " + locStr(waiting->barrier->op->loc) + " (instruction " +
                               std::to_string(waiting->barrier->instr) + "), warp " + std::to_string(w.id) + " at " +
                               locStr(w.barrier->op->loc) + " (instruction " + std::to_string(w.barrier->instr) + ")");
      for (Warp& w : warps_) {
        w.status = WarpStatus::Running;
        w.barrier = nullptr;
      }
      ++result_.stats.barriers;
      if (opts_.detectRaces) races_.newEpoch();
    }
  }

  // ----- the record cap (ExecOptions::maxRecordBytes) ---------------------------------------

  struct RecordCapReached {};  // thrown out of runBlock; run() drops the partial block
  static constexpr int64_t kRecordCheckEvery = 4096;

  int64_t recordBytes() const {
    return int64_t(result_.accesses.size() * sizeof(WarpAccess) + size_t(traceEntries_) * sizeof(TraceEntry) +
                   result_.traces.size() * sizeof(WarpTrace));
  }

  void checkRecordCap(const COp& op) {
    recordCheckIn_ = kRecordCheckEvery;
    if (recordBytes() <= opts_.maxRecordBytes) return;
    if (blockLinear_ > 0) throw RecordCapReached{};
    fail(op, "the simulator's record of block 0 (every warp instruction and memory access, for the timing and "
             "memory models) outgrew its cap of " + formatByteLimit(uint64_t(opts_.maxRecordBytes)) + " after " +
             std::to_string(result_.stats.warpInstructions) + " warp instructions, while running this op; one "
             "block must fit: run a smaller launch (--set), or raise the cap (tl-sim --trace-memory MiB)");
  }

  // Runs warp w until it returns or reaches a barrier.
  void runWarp(Warp& w) {
    WarpTrace* trace = opts_.traceWarps ? &result_.traces[traceBase_ + static_cast<size_t>(w.id)] : nullptr;
    for (;;) {
      Frame& f = w.stack.back();
      const COp& op = f.region->ops[f.pc];
      if (op.kind != OpKind::Yield) ++result_.stats.warpInstructions;
      if (trace) {
        trace->entries.push_back(TraceEntry{op.instr, f.mask, -1, 0});
        ++traceEntries_;
      }
      meter_->charge(1, op.op->loc);
      if (opts_.maxRecordBytes > 0 && --recordCheckIn_ == 0) checkRecordCap(op);
      switch (op.kind) {
        case OpKind::Return:
          w.stack.clear();
          w.status = WarpStatus::Done;
          return;
        case OpKind::Yield:
          endRegion(w, op);
          break;
        case OpKind::If:
          ++f.pc;
          enterIf(w, op, f.mask);  // may push: f is not used after this
          break;
        case OpKind::For:
          ++f.pc;
          enterFor(w, op, f.mask);
          break;
        case OpKind::While:
          ++f.pc;
          enterWhile(w, op, f.mask);
          break;
        case OpKind::Condition:
          endWhileCond(w, op);
          break;
        case OpKind::Barrier:
          if (f.mask != kFullMask)
            fail(op, "barrier at " + locStr(op.op->loc) + " reached by warp " + std::to_string(w.id) + " with only lanes " +
                         laneList(f.mask) + " active, in " + blockStr() +
                         " (a barrier in divergent code: every thread of the block must reach it)");
          ++f.pc;
          w.status = WarpStatus::AtBarrier;
          w.barrier = &op;
          return;
        default: {
          const size_t before = result_.accesses.size();
          exec(w, op, f.mask);
          if (trace && result_.accesses.size() != before) {
            trace->entries.back().firstAccess = static_cast<int64_t>(before);
            trace->entries.back().accessCount = static_cast<int32_t>(result_.accesses.size() - before);
          }
          ++f.pc;
          break;
        }
      }
    }
  }

  // ----- control flow -------------------------------------------------------------------------

  void enterIf(Warp& w, const COp& op, uint32_t mask) {
    uint32_t cond = 0;
    const Slot* c = &w.regs[op.in[0].off];
    forLanes(mask, [&](int l) { if (c[l]) cond |= 1u << l; });
    const uint32_t thenMask = mask & cond, elseMask = mask & ~cond;
    if (thenMask && elseMask) ++result_.stats.divergentBranches;
    if (thenMask)
      w.stack.push_back(Frame{&op.regions[0], &op, 0, thenMask, elseMask, FrameKind::Then, false});
    else
      w.stack.push_back(Frame{&op.regions[1], &op, 0, elseMask, 0, FrameKind::Else, false});
  }

  // Does a lane with induction variable iv run another iteration?
  static bool continues(int64_t iv, int64_t hi, int64_t step) { return step > 0 ? iv < hi : iv > hi; }

  void enterFor(Warp& w, const COp& op, uint32_t mask) {
    const CRegion& body = op.regions[0];
    const Slot* lo = &w.regs[op.in[0].off];
    const Slot* hi = &w.regs[op.in[1].off];
    const Slot* step = &w.regs[op.in[2].off];
    uint32_t run = 0;
    forLanes(mask, [&](int l) {
      if (step[l] == 0) fail(op, "range() step is zero" + where(w, l, op));
      if (continues(sim::asI(lo[l]), sim::asI(hi[l]), sim::asI(step[l]))) run |= 1u << l;
    });
    // The results hold each lane's latest carried values: the inits to begin with.
    for (size_t k = 0; k < op.out.size(); ++k) copy(w, op.in[3 + k], op.out[k], mask);
    if (!run) return;
    copy(w, op.in[0], body.args[0], run);  // iv = lo
    for (size_t k = 0; k < op.out.size(); ++k) copy(w, op.out[k], body.args[1 + k], run);
    bool divergent = run != mask;
    if (divergent) ++result_.stats.divergentBranches;
    w.stack.push_back(Frame{&body, &op, 0, run, 0, FrameKind::Loop, divergent});
  }

  // while: the results hold each lane's latest carried values (the inits to begin with); the
  // cond region runs on them, lanes whose condition is false leave, the rest run the body,
  // whose yield writes the results and goes back to the cond region.
  void enterWhile(Warp& w, const COp& op, uint32_t mask) {
    for (size_t k = 0; k < op.out.size(); ++k) copy(w, op.in[k], op.out[k], mask);
    for (size_t k = 0; k < op.out.size(); ++k) copy(w, op.out[k], op.regions[0].args[k], mask);
    w.stack.push_back(Frame{&op.regions[0], &op, 0, mask, 0, FrameKind::WhileCond, false});
  }

  void endWhileCond(Warp& w, const COp& cond) {
    Frame& f = w.stack.back();
    const COp& owner = *f.owner;
    const Slot* c = &w.regs[cond.in[0].off];
    uint32_t go = 0;
    forLanes(f.mask, [&](int l) { if (c[l]) go |= 1u << l; });
    if (!go) {
      w.stack.pop_back();
      return;
    }
    if (go != f.mask && !f.divergenceCounted) {
      ++result_.stats.divergentBranches;
      f.divergenceCounted = true;
    }
    for (size_t k = 0; k < owner.out.size(); ++k) copy(w, owner.out[k], owner.regions[1].args[k], go);
    f = Frame{&owner.regions[1], &owner, 0, go, 0, FrameKind::WhileBody, f.divergenceCounted};
  }

  // A region's yield: hand its values to the owner's results for the frame's lanes, then run the
  // else-region, the next iteration, or return to the enclosing frame.
  void endRegion(Warp& w, const COp& yield) {
    Frame& f = w.stack.back();
    const COp& owner = *f.owner;
    for (size_t k = 0; k < owner.out.size(); ++k) copy(w, yield.in[k], owner.out[k], f.mask);
    if (f.kind == FrameKind::WhileBody) {  // back to the condition, with the values just yielded
      for (size_t k = 0; k < owner.out.size(); ++k) copy(w, owner.out[k], owner.regions[0].args[k], f.mask);
      f = Frame{&owner.regions[0], &owner, 0, f.mask, 0, FrameKind::WhileCond, f.divergenceCounted};
      return;
    }
    if (f.kind == FrameKind::Then) {
      if (f.pendingElse) {
        f = Frame{&owner.regions[1], &owner, 0, f.pendingElse, 0, FrameKind::Else, false};
        return;
      }
      w.stack.pop_back();
      return;
    }
    if (f.kind == FrameKind::Else) {
      w.stack.pop_back();
      return;
    }
    // Loop: advance each lane's iv; lanes past their bound (or whose iv would overflow) stop.
    const CRegion& body = *f.region;
    const ValRef ivRef = body.args[0];
    const Slot* hi = &w.regs[owner.in[1].off];
    const Slot* step = &w.regs[owner.in[2].off];
    Slot* iv = &w.regs[ivRef.off];
    uint32_t next = 0;
    forLanes(f.mask, [&](int l) {
      int64_t v = 0;
      if (__builtin_add_overflow(sim::asI(iv[l]), sim::asI(step[l]), &v)) return;
      if (!continues(v, sim::asI(hi[l]), sim::asI(step[l]))) return;
      iv[l] = sim::intSlot(ivRef.dtype, v);
      next |= 1u << l;
    });
    if (!next) {
      w.stack.pop_back();
      return;
    }
    if (next != f.mask && !f.divergenceCounted) {
      ++result_.stats.divergentBranches;
      f.divergenceCounted = true;
    }
    for (size_t k = 0; k < owner.out.size(); ++k) copy(w, owner.out[k], body.args[1 + k], next);
    f.mask = next;
    f.pc = 0;
  }

  // ----- register helpers ---------------------------------------------------------------------

  // Calls fn(i, lane) for every register i (index from the value's first slot) of the active lanes.
  template <typename Fn>
  static inline void forRegs(uint32_t mask, uint32_t n, Fn fn) {
    if (mask == kFullMask) {
      for (uint32_t i = 0; i < 32 * n; ++i) fn(i, static_cast<int>(i / n));
      return;
    }
    forLanes(mask, [&](int l) {
      for (uint32_t r = 0; r < n; ++r) fn(static_cast<uint32_t>(l) * n + r, l);
    });
  }

  static void copy(Warp& w, const ValRef& from, const ValRef& to, uint32_t mask) {
    const Slot* src = &w.regs[from.off];
    Slot* dst = &w.regs[to.off];
    forRegs(mask, to.n, [&](uint32_t i, int) { dst[i] = src[i]; });
  }

  static void fill(Warp& w, const ValRef& to, uint32_t mask, Slot v) {
    Slot* dst = &w.regs[to.off];
    forRegs(mask, to.n, [&](uint32_t i, int) { dst[i] = v; });
  }

  // ----- print_regs / assert_regs (runtime/DevicePrint.h) -----------------------------------

  // The tile coordinates of register i: operands first.. hold one index per dim.
  std::vector<int64_t> coordsOf(const Warp& w, const COp& op, size_t first, uint32_t i) const {
    std::vector<int64_t> idx;
    for (size_t d = first; d < op.in.size(); ++d) idx.push_back(sim::asI(w.regs[op.in[d].off + i]));
    return idx;
  }
  static std::string laneStr(const Warp& w, int lane) {
    return " warp " + std::to_string(w.id) + " lane " + std::to_string(lane);
  }

  // One line per active lane (in order) and register whose mask is set.
  void execPrint(Warp& w, const COp& op, uint32_t mask) {
    const Op& ir = *op.op;
    const Slot* m = &w.regs[op.in[0].off];
    const Shape& shape = ir.intsAttr("shape");
    const std::string& prefix = ir.strAttr("prefix");
    const bool hex = ir.intAttr("hex") != 0;
    const int operand = static_cast<int>(ir.intAttr("operand"));
    forRegs(mask, op.in[0].n, [&](uint32_t i, int l) {
      if (!m[i]) return;
      ++result_.stats.printedLines;
      if (!opts_.print) return;
      if (op.in.size() == 1) return opts_.print->line(printPid(block_, laneStr(w, l)) + prefix);
      const sim::ValRef& v = op.in[1];
      const Slot x = w.regs[v.off + i];
      std::string value = v.isPtr ? printPointer(x)
                          : isFloat(v.dtype) ? printFloat(v.dtype, sim::asF(x), hex)
                                             : printInt(v.dtype, sim::asI(x), hex);
      opts_.print->line(printLine(block_, laneStr(w, l), coordsOf(w, op, 2, i), shape, prefix, operand, value));
    });
  }

  // The first active lane and register (in order) whose condition is 0 stops the run.
  void execAssert(Warp& w, const COp& op, uint32_t mask) {
    const Slot* c = &w.regs[op.in[0].off];
    forRegs(mask, op.in[0].n, [&](uint32_t i, int l) {
      ++result_.stats.assertsChecked;
      if (c[i]) return;
      fail(op, assertMessage(op.op->strAttr("msg"), block_, laneStr(w, l), coordsOf(w, op, 1, i),
                             op.op->intsAttr("shape")));
    });
  }

  // ----- straight-line ops --------------------------------------------------------------------

  void exec(Warp& w, const COp& op, uint32_t mask) {
    switch (op.kind) {
      case OpKind::ThreadId: perLane(w, op, mask, [&](int l) { return Slot(w.id * 32 + l); }); break;
      case OpKind::LaneId: perLane(w, op, mask, [&](int l) { return Slot(l); }); break;
      case OpKind::WarpId: perLane(w, op, mask, [&](int) { return Slot(w.id); }); break;
      case OpKind::BlockId: fill(w, op.out[0], mask, Slot(block_[op.attr])); break;
      case OpKind::NumBlocks: fill(w, op.out[0], mask, sim::intSlot(DType::I32, launch_.grid[op.attr])); break;
      case OpKind::Constant: fill(w, op.out[0], mask, op.constant); break;
      case OpKind::RegIndex: {
        Slot* out = &w.regs[op.out[0].off];
        const uint32_t n = op.out[0].n;
        forRegs(mask, n, [&](uint32_t i, int) { out[i] = i % n; });
        break;
      }
      case OpKind::Splat: execSplat(w, op, mask); break;
      case OpKind::Extract: execExtract(w, op, mask); break;
      case OpKind::Pack: execPack(w, op, mask); break;
      case OpKind::Permute: execPermute(w, op, mask); break;
      case OpKind::RegReduce: execRegReduce(w, op, mask); break;
      case OpKind::Convert: {
        const DType from = op.in[0].dtype, to = op.out[0].dtype;
        map1(w, op, mask, [&](Slot x) { return sim::convertSlot(x, from, to); });
        break;
      }
      case OpKind::Neg: case OpKind::Not: case OpKind::Exp: case OpKind::Exp2: case OpKind::Log:
      case OpKind::Sqrt: case OpKind::Rsqrt: case OpKind::Abs: case OpKind::Sigmoid: {
        const DType d = op.in[0].dtype;
        map1(w, op, mask, [&](Slot x) { return sim::unarySlot(op.kind, d, x); });
        break;
      }
      case OpKind::Log2: case OpKind::Cos: case OpKind::Sin: case OpKind::Floor: case OpKind::Ceil:
      case OpKind::Erf:
      case OpKind::Asin: case OpKind::Acos: case OpKind::Atan: case OpKind::Tan: case OpKind::Sinh: case OpKind::Cosh:
      case OpKind::Tanh: case OpKind::Log10: case OpKind::Log1p: case OpKind::Expm1: case OpKind::Exp10:
      case OpKind::Cbrt: case OpKind::Rcp: case OpKind::Trunc: case OpKind::Round: case OpKind::Rint: {
        const DType d = op.in[0].dtype;
        map1(w, op, mask, [&](Slot x) { return sim::unarySlot(op.kind, d, x); });
        break;
      }
      case OpKind::Add: case OpKind::Sub: case OpKind::Mul: case OpKind::Div: case OpKind::Rem:
      case OpKind::Maximum: case OpKind::Minimum: case OpKind::And: case OpKind::Or: case OpKind::Xor:
      case OpKind::Shl: case OpKind::Shr: case OpKind::Umulhi:
      case OpKind::Atan2: case OpKind::Pow: case OpKind::Hypot:
        execBinary(w, op, mask);
        break;
      case OpKind::AtomGlobal: case OpKind::AtomCasGlobal: execAtom(w, op, mask); break;
      case OpKind::PrintRegs: execPrint(w, op, mask); break;
      case OpKind::AssertRegs: execAssert(w, op, mask); break;
      case OpKind::Cmp: {
        const DType d = op.in[0].dtype;
        const sim::CmpPred p = op.pred;
        map2(w, op, mask, [&](Slot a, Slot b) { return Slot(sim::compareSlot(p, d, a, b)); });
        break;
      }
      case OpKind::Select: {
        const Slot* c = &w.regs[op.in[0].off];
        const Slot* a = &w.regs[op.in[1].off];
        const Slot* b = &w.regs[op.in[2].off];
        Slot* out = &w.regs[op.out[0].off];
        forRegs(mask, op.out[0].n, [&](uint32_t i, int) { out[i] = c[i] ? a[i] : b[i]; });
        break;
      }
      case OpKind::AddPtr: {
        const uint64_t size = static_cast<uint64_t>(dtypeBytes(op.out[0].dtype));
        map2(w, op, mask, [&](Slot p, Slot off) { return p + off * size; });  // wraps modulo 2^64
        break;
      }
      case OpKind::PtrCast: map1(w, op, mask, [](Slot x) { return x; }); break;  // the 64-bit address, retyped
      case OpKind::Fma: {
        const DType d = op.out[0].dtype;
        const Slot* a = &w.regs[op.in[0].off];
        const Slot* b = &w.regs[op.in[1].off];
        const Slot* c = &w.regs[op.in[2].off];
        Slot* out = &w.regs[op.out[0].off];
        forRegs(mask, op.out[0].n, [&](uint32_t i, int) { out[i] = sim::fmaSlot(d, a[i], b[i], c[i]); });
        break;
      }
      case OpKind::ShflXor: case OpKind::ShflIdx: execShuffle(w, op, mask); break;
      case OpKind::Mma: execMma(w, op, mask); break;
      case OpKind::Wgmma: execWgmma(w, op, mask); break;
      case OpKind::WgmmaFence: case OpKind::WgmmaCommit: case OpKind::WgmmaWait: case OpKind::FenceProxyAsync:
        // The executor runs each wgmma to completion at issue and shared stores are seen by every
        // later read; commit and wait only end the in-flight reads (execWgmma).
        if (mask != 0xffffffffu && op.kind != OpKind::FenceProxyAsync)
          fail(op, std::string(mnemonic(op.kind)) + " needs all 32 lanes of the warp active (.sync.aligned), active lanes: " +
                       laneList(mask) + where(w, __builtin_ctz(mask), op));
        if (op.kind == OpKind::WgmmaCommit && !wgmmaOpen_[size_t(w.id)].empty())
          wgmmaCommitted_[size_t(w.id)].push_back(std::exchange(wgmmaOpen_[size_t(w.id)], {}));
        if (op.kind == OpKind::WgmmaWait) {
          auto& groups = wgmmaCommitted_[size_t(w.id)];
          const size_t keep = size_t(op.op->intAttr("pending"));
          while (groups.size() > keep) {
            for (uint32_t off : groups.front()) --asyncReaders_[off];  // one entry per byte
            groups.erase(groups.begin());
          }
          for (size_t k = 0; k < op.in.size(); ++k)  // its results are the accumulators it waited for
            std::copy_n(&w.regs[op.in[k].off], size_t(op.in[k].n) * 32, &w.regs[op.out[k].off]);
        }
        break;
      case OpKind::CvtTf32: map1(w, op, mask, [](Slot x) { return sim::fromF(truncToTf32(sim::asF(x))); }); break;
      case OpKind::LdGlobal: execLdGlobal(w, op, mask); break;
      case OpKind::StGlobal: execStGlobal(w, op, mask); break;
      case OpKind::LdShared: execLdShared(w, op, mask); break;
      case OpKind::Ldmatrix: execLdmatrix(w, op, mask); break;
      case OpKind::StShared: execStShared(w, op, mask); break;
      case OpKind::CpAsync: execCpAsync(w, op, mask); break;
      case OpKind::CpAsyncCommit: case OpKind::CpAsyncWait: execCpAsyncSync(w, op); break;
      default:
        throw IRError(op.op->loc, std::string("the thread executor cannot run '") + mnemonic(op.kind) + "' here");
    }
  }

  // result (a scalar) = fn(lane) for each active lane
  template <typename Fn>
  void perLane(Warp& w, const COp& op, uint32_t mask, Fn fn) {
    Slot* out = &w.regs[op.out[0].off];
    forLanes(mask, [&](int l) { out[l] = fn(l); });
  }

  // result[i] = fn(operand0[i]) register by register
  template <typename Fn>
  void map1(Warp& w, const COp& op, uint32_t mask, Fn fn) {
    const Slot* a = &w.regs[op.in[0].off];
    Slot* out = &w.regs[op.out[0].off];
    forRegs(mask, op.out[0].n, [&](uint32_t i, int) { out[i] = fn(a[i]); });
  }

  // result[i] = fn(operand0[i], operand1[i])
  template <typename Fn>
  void map2(Warp& w, const COp& op, uint32_t mask, Fn fn) {
    const Slot* a = &w.regs[op.in[0].off];
    const Slot* b = &w.regs[op.in[1].off];
    Slot* out = &w.regs[op.out[0].off];
    forRegs(mask, op.out[0].n, [&](uint32_t i, int) { out[i] = fn(a[i], b[i]); });
  }

  void execBinary(Warp& w, const COp& op, uint32_t mask) {
    const DType d = op.in[0].dtype;
    const Slot* a = &w.regs[op.in[0].off];
    const Slot* b = &w.regs[op.in[1].off];
    Slot* out = &w.regs[op.out[0].off];
    const uint32_t n = op.out[0].n;
    forRegs(mask, n, [&](uint32_t i, int l) {
      if (!sim::binarySlot(op.kind, d, a[i], b[i], out[i]))
        fail(op, "integer division by zero" + where(w, l, op) + ", register " + std::to_string(i % n));
    });
  }

  void execSplat(Warp& w, const COp& op, uint32_t mask) {
    const Slot* s = &w.regs[op.in[0].off];
    Slot* out = &w.regs[op.out[0].off];
    forRegs(mask, op.out[0].n, [&](uint32_t i, int l) { out[i] = s[l]; });
  }

  void execExtract(Warp& w, const COp& op, uint32_t mask) {
    const Slot* v = &w.regs[op.in[0].off];
    const uint32_t n = op.in[0].n;
    Slot* out = &w.regs[op.out[0].off];
    forLanes(mask, [&](int l) { out[l] = v[static_cast<uint32_t>(l) * n + static_cast<uint32_t>(op.attr)]; });
  }

  void execPack(Warp& w, const COp& op, uint32_t mask) {
    Slot* out = &w.regs[op.out[0].off];
    const uint32_t n = op.out[0].n;
    forLanes(mask, [&](int l) {
      for (uint32_t r = 0; r < n; ++r) out[static_cast<uint32_t>(l) * n + r] = w.regs[op.in[r].off + static_cast<uint32_t>(l)];
    });
  }

  void execPermute(Warp& w, const COp& op, uint32_t mask) {
    const Slot* v = &w.regs[op.in[0].off];
    const uint32_t nIn = op.in[0].n, n = op.out[0].n;
    Slot* out = &w.regs[op.out[0].off];
    forLanes(mask, [&](int l) {
      for (uint32_t r = 0; r < n; ++r)
        out[static_cast<uint32_t>(l) * n + r] = v[static_cast<uint32_t>(l) * nIn + static_cast<uint32_t>(op.indices[r])];
    });
  }

  // Each `group` consecutive registers combined in order with the elementwise rules of the
  // dtype (so an f16 sum rounds after every add; widen to f32 first to match tl-scalar's sum).
  void execRegReduce(Warp& w, const COp& op, uint32_t mask) {
    const Slot* v = &w.regs[op.in[0].off];
    const uint32_t nIn = op.in[0].n, n = op.out[0].n, g = static_cast<uint32_t>(op.attr);
    const DType d = op.in[0].dtype;
    Slot* out = &w.regs[op.out[0].off];
    forLanes(mask, [&](int l) {
      const Slot* in = v + static_cast<uint32_t>(l) * nIn;
      for (uint32_t j = 0; j < n; ++j) {
        Slot acc = in[j * g];
        for (uint32_t k = 1; k < g; ++k) sim::binarySlot(op.combine, d, acc, in[j * g + k], acc);  // never divides
        out[static_cast<uint32_t>(l) * n + j] = acc;
      }
    });
  }

  // shfl_xor / shfl_idx: every active lane reads all registers of the operand from its source
  // lane, which must be active. shfl_idx takes the source modulo 32, as CUDA's __shfl_sync does.
  void execShuffle(Warp& w, const COp& op, uint32_t mask) {
    const Slot* v = &w.regs[op.in[0].off];
    const uint32_t n = op.out[0].n;
    Slot* out = &w.regs[op.out[0].off];
    const Slot* idx = op.kind == OpKind::ShflIdx ? &w.regs[op.in[1].off] : nullptr;
    forLanes(mask, [&](int l) {
      const int src = idx ? static_cast<int>(idx[l] & 31) : (l ^ static_cast<int>(op.attr));
      if (!(mask >> src & 1))
        fail(op, std::string(mnemonic(op.kind)) + " reads lane " + std::to_string(src) + ", which is inactive (active lanes: " +
                     laneList(mask) + ")" + where(w, l, op));
      for (uint32_t r = 0; r < n; ++r)
        out[static_cast<uint32_t>(l) * n + r] = v[static_cast<uint32_t>(src) * n + r];
    });
  }

  // mma: D = A @ B + C over the whole warp's fragments (the rule at the top of this file).
  void execMma(Warp& w, const COp& op, uint32_t mask) {
    if (mask != 0xffffffffu)
      fail(op, "mma needs all 32 lanes of the warp active (mma.sync.aligned), active lanes: " + laneList(mask) +
                   where(w, __builtin_ctz(mask), op));
    const DType in = op.in[0].dtype;
    const auto instr = mmaInstrOf(in, static_cast<int>(op.in[0].n));
    if (!instr) fail(op, "internal: mma with an unknown fragment type");
    const int nA = instr->regs(MmaOperand::A), nB = instr->regs(MmaOperand::B);
    std::vector<double> A(size_t(instr->m * instr->k)), B(size_t(instr->k * instr->n)), D(size_t(instr->m * instr->n));
    auto value = [&](Slot s) {
      float f = sim::asF(s);
      if (in == DType::F32) f = sim::asF(s & ~Slot(0x1fff));  // the tensor core reads tf32
      return double(f);
    };
    const Slot* a = &w.regs[op.in[0].off];
    const Slot* b = &w.regs[op.in[1].off];
    const Slot* c = &w.regs[op.in[2].off];
    for (int l = 0; l < kWarpSize; ++l) {
      for (int e = 0; e < nA; ++e) {
        auto [r, k] = mmaFragmentCoord(*instr, MmaOperand::A, l, e);
        A[size_t(r * instr->k + k)] = value(a[l * nA + e]);
      }
      for (int e = 0; e < nB; ++e) {
        auto [k, n] = mmaFragmentCoord(*instr, MmaOperand::B, l, e);
        B[size_t(k * instr->n + n)] = value(b[l * nB + e]);
      }
      for (int e = 0; e < 4; ++e) {
        auto [r, n] = mmaFragmentCoord(*instr, MmaOperand::C, l, e);
        D[size_t(r * instr->n + n)] = sim::asF(c[l * 4 + e]);
      }
    }
    const int K = instr->k, N = instr->n;
    const bool fp8 = in == DType::F8E4M3 || in == DType::F8E5M2;
    const bool f16Acc = op.in[2].dtype == DType::F16;  // mma ...f16.f16.f16.f16: the sum rounded to f16
    for (int r = 0; r < instr->m; ++r)
      for (int n = 0; n < N; ++n) {
        const double* ar = &A[size_t(r * K)];
        const double* bc = &B[size_t(n)];
        double& d = D[size_t(r * N + n)];
        if (f16Acc) {
          d = sim::tensorCoreStepToF16(sim::kHmmaAdder, static_cast<float>(d), ar, 1, bc, N, K);
        } else if (!fp8) {
          d = sim::tensorCoreStep(sim::kHmmaAdder, static_cast<float>(d), ar, 1, bc, N, K);
        } else {  // two f16 HMMAs from zero over k % 4 in {0, 1} and {2, 3}, then an f32 add
          double ah[16], bh[16];
          float t = 0.0f;
          for (int half = 0; half < 2; ++half) {
            int j = 0;
            for (int k = 0; k < K; ++k)
              if ((k / 2) % 2 == half) {
                ah[j] = ar[k];
                bh[j++] = bc[k * N];
              }
            t = sim::tensorCoreStep(sim::kHmmaAdder, t, ah, 1, bh, 1, j);
          }
          d = static_cast<float>(d) + t;
        }
      }
    Slot* out = &w.regs[op.out[0].off];
    for (int l = 0; l < kWarpSize; ++l)
      for (int e = 0; e < 4; ++e) {
        auto [r, n] = mmaFragmentCoord(*instr, MmaOperand::C, l, e);
        out[l * 4 + e] = sim::fromF(static_cast<float>(D[size_t(r * instr->n + n)]));
      }
  }

  // This warp's quarter of a warpgroup-wide wgmma.mma_async.m64nNkK (ThreadOps.def): rows
  // 16 (w % 4) .. +15 of D = A @ B + C, A and B read from shared memory in the ISA's canonical
  // layouts (ir/MmaLayout.h wgmmaAddress), or A from this warp's registers, each output added up
  // as the H200's HGMMA / QGMMA does (sim/TensorCoreSum.h; fp8 keeps 13 bits). K is mma's k for
  // the dtype (16; tf32 8; fp8 32): one instruction reads 32 bytes of each row. A tf32 input's
  // low 13 mantissa bits are ignored.
  void execWgmma(Warp& w, const COp& op, uint32_t mask) {
    if (mask != 0xffffffffu)
      fail(op, "wgmma needs all 32 lanes of the warp active (wgmma.mma_async.sync.aligned), active lanes: " + laneList(mask) +
                   where(w, __builtin_ctz(mask), op));
    const Op& ir = *op.op;
    const int N = static_cast<int>(ir.intAttr("n"));
    const DType in = parseDType(ir.strAttr("dtype")).value();  // the verifier checked it
    const MmaInstr tile = *mmaInstrFor(in, true);  // its k is wgmma's K; its C table is wgmma's D table per 8 columns
    const int K = tile.k, E = dtypeBytes(in);
    const bool aRegs = op.in[0].n > 1;  // this warp's A fragment in registers (mma.m16n8k16's A table)
    WgmmaOperandLayout la, lb;
    la.elemBytes = lb.elemBytes = E;
    if (!aRegs) {
      la.swizzle = static_cast<int>(ir.intAttr("a_swizzle"));
      la.sbo = ir.intAttr("a_sbo");
    }
    lb.swizzle = static_cast<int>(ir.intAttr("b_swizzle"));
    lb.lbo = ir.intAttr("b_lbo");
    lb.sbo = ir.intAttr("b_sbo");
    lb.mnMajor = ir.intAttr("trans_b") != 0;
    const Slot* aAddr = &w.regs[op.in[0].off];
    const Slot* bAddr = &w.regs[op.in[1].off];
    const int64_t aStart = aRegs ? 0 : sim::asI(aAddr[0]), bStart = sim::asI(bAddr[0]);
    for (int l = 1; l < kWarpSize; ++l)
      if ((!aRegs && sim::asI(aAddr[l]) != aStart) || sim::asI(bAddr[l]) != bStart)
        fail(op, "wgmma's shared-memory addresses must be the same in every lane (one descriptor per warpgroup)" + where(w, l, op));
    if (aStart % 16 || bStart % 16) fail(op, "wgmma's shared-memory start addresses must be 16-byte aligned" + where(w, 0, op));
    MemOperands m;
    m.n = 1;
    m.vec = 1;
    m.dtype = in;
    m.elemBytes = E;
    sim::RaceConflict conflict;
    if (asyncReaders_.empty()) asyncReaders_.assign(shared_.size(), 0);
    std::vector<uint32_t>& reads = wgmmaOpen_[size_t(w.id)];
    auto element = [&](int64_t addr) {
      const uint8_t* p = sharedElement(w, op, m, Slot(addr), 0, false);
      const uint32_t off = static_cast<uint32_t>(p - shared_.data());
      if (opts_.detectRaces && races_.onRead(off, uint32_t(E), w.id * 32, op.instr, conflict)) raceError(op, conflict);
      checkNoCopyLands(w, op, 0, off, uint32_t(E), "wgmma reads");
      for (uint32_t b = 0; b < uint32_t(E); ++b) {  // one entry per byte read
        reads.push_back(off + b);
        ++asyncReaders_[off + b];
      }
      Slot v = sim::loadElement(p, in);
      if (in == DType::F32) return double(sim::asF(v & ~Slot(0x1fff)));  // the tensor core reads tf32
      return double(sim::asF(sim::convertSlot(v, in, DType::F32)));
    };
    const int row0 = 16 * (w.id % 4);
    std::vector<double> A(size_t(16 * K)), B(size_t(K * N));
    if (aRegs)
      for (int l = 0; l < kWarpSize; ++l)
        for (int e = 0; e < 8; ++e) {
          auto [r, k] = mmaFragmentCoord(tile, MmaOperand::A, l, e);
          A[size_t(r * K + k)] = double(sim::asF(aAddr[l * 8 + e]));  // registers hold the value as f32
        }
    else
      for (int r = 0; r < 16; ++r)
        for (int k = 0; k < K; ++k) A[size_t(r * K + k)] = element(wgmmaAddress(la, aStart, row0 + r, k));
    for (int k = 0; k < K; ++k)
      for (int n = 0; n < N; ++n) B[size_t(k * N + n)] = element(wgmmaAddress(lb, bStart, n, k));
    const Slot* c = &w.regs[op.in[2].off];
    Slot* out = &w.regs[op.out[0].off];
    const uint32_t regs = op.out[0].n;
    for (int l = 0; l < kWarpSize; ++l)
      for (uint32_t i = 0; i < regs; ++i) {
        auto [r, col] = mmaFragmentCoord(tile, MmaOperand::C, l, int(i % 4));
        const int n = 8 * int(i / 4) + col;
        const float acc = sim::asF(c[uint32_t(l) * regs + i]);
        const float d = op.in[2].dtype == DType::F16  // an f16 accumulator: the sum rounded to f16
                            ? sim::tensorCoreStepToF16(sim::kHmmaAdder, acc, &A[size_t(r * K)], 1, &B[size_t(n)], N, K)
                            : sim::tensorCoreStep(E == 1 ? sim::kQgmmaAdder : sim::kHmmaAdder, acc, &A[size_t(r * K)], 1, &B[size_t(n)], N, K);
        out[uint32_t(l) * regs + i] = sim::fromF(d);
      }
  }
};

}  // namespace

ExecResult runThreadIR(const Function& fn, const LaunchConfig& launch, Memory& memory, const ExecOptions& options) {
  return Executor(fn, launch, memory, options).run();
}

}  // namespace tl
