// The cycle-level SM model: see SmModel.h for the rules. The simulation is event driven: it
// visits only cycles where something can happen (a scheduler can issue, a block starts), so an
// SM waiting 600 cycles on DRAM costs one step, not 600.
#include "sim/SmModel.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace tl {

const char* timedKindName(TimedKind k) {
  switch (k) {
    case TimedKind::Alu: return "alu";
    case TimedKind::GlobalLoad: return "global load";
    case TimedKind::GlobalStore: return "global store";
    case TimedKind::Shared: return "shared/shuffle";
    case TimedKind::Tensor: return "tensor core";
    case TimedKind::Barrier: return "barrier";
    case TimedKind::Exit: return "exit";
  }
  return "?";
}

const char* warpStateName(WarpState s) {
  switch (s) {
    case WarpState::Issuing: return "issuing";
    case WarpState::WaitingMemory: return "waiting memory";
    case WarpState::WaitingDependency: return "waiting dependency";
    case WarpState::WaitingBarrier: return "waiting barrier";
    case WarpState::Idle: return "idle";
    case WarpState::Done: return "done";
  }
  return "?";
}

namespace {

constexpr int64_t kNever = std::numeric_limits<int64_t>::max();

// A FIFO server: `rate` units per cycle; a request of `amount` units arriving at `t` is served
// after every earlier request. Returns the (fractional) cycle its last unit is served.
struct Queue {
  double rate = 1;
  double freeAt = 0;
  double busy = 0;  // total service time
  double serve(int64_t t, double amount) {
    if (amount <= 0) return double(t);
    const double start = std::max(double(t), freeAt);
    const double time = amount / rate;
    freeAt = start + time;
    busy += time;
    return freeAt;
  }
};

// One resident warp.
struct WarpRun {
  const std::vector<TimedInstr>* code = nullptr;
  std::vector<int64_t> done;  // completion cycle of each issued instruction
  size_t pc = 0;
  int64_t block = 0;          // block index on this SM
  int warp = 0;
  int slot = 0;
  bool live = false;          // occupies its slot now
  bool atBarrier = false;
  bool exited = false;
  bool record = false;        // keeps timeline segments
  int64_t readyAt = 0;        // earliest cycle its next instruction may issue
  int waitDep = -1;           // the dep that set readyAt (-1: none)
  int64_t cursor = 0;         // segments (or counts) emitted up to this cycle
  int64_t arrivedAt = 0;      // at a barrier: the cycle it arrived
  int64_t lastSeg = -1;       // its last segment in the timeline (for merging)
};

class Sm {
 public:
  Sm(const std::vector<BlockStream>& sample, const SmConfig& c) : sample_(sample), c_(c) {
    if (sample.empty()) throw std::invalid_argument("simulateSm: the sample has no block");
    if (c.schedulers < 1 || c.residentBlocks < 1 || c.blocks < 1)
      throw std::invalid_argument("simulateSm: schedulers, resident blocks and blocks must be at least 1");
    if (!(c.dramBytesPerCycle > 0) || !(c.l2BytesPerCycle > 0))
      throw std::invalid_argument("simulateSm: the DRAM and L2 bandwidth shares must be positive");
    if (c.blockLaunchCycles < 0 || c.blockLaunchInterval < 0)
      throw std::invalid_argument("simulateSm: block launch cycles and interval must not be negative");
    warpsPerBlock_ = int(sample[0].warps.size());
    for (const BlockStream& b : sample) {
      if (b.warps.empty() || int(b.warps.size()) != warpsPerBlock_)
        throw std::invalid_argument("simulateSm: every sampled block needs the same, non-zero number of warps");
      for (const auto& w : b.warps)
        for (size_t i = 0; i < w.size(); ++i) {
          if (w[i].issueCycles < 1) throw std::invalid_argument("simulateSm: an instruction with issueCycles < 1");
          for (int32_t d : w[i].deps)
            if (d < 0 || size_t(d) >= i)
              throw std::invalid_argument("simulateSm: instruction " + std::to_string(i) + " depends on " +
                                          std::to_string(d) + ", which is not an earlier instruction");
        }
    }
    slots_ = int(std::min<int64_t>(c.residentBlocks, c.blocks));
    warps_.resize(size_t(slots_) * warpsPerBlock_);
    bySched_.resize(size_t(c.schedulers));
    for (size_t k = 0; k < warps_.size(); ++k) bySched_[k % size_t(c.schedulers)].push_back(int(k));
    rr_.assign(size_t(c.schedulers), -1);
    busy_.assign(size_t(c.schedulers), 0);
    tensor_.assign(size_t(c.schedulers), Queue{});
    launchAt_.assign(size_t(slots_), kNever);
    arrived_.assign(size_t(slots_), 0);
    exitedInSlot_.assign(size_t(slots_), 0);
    pipe_.rate = 1;
    l2_.rate = c.l2BytesPerCycle;
    dram_.rate = c.dramBytesPerCycle;
  }

  SmResult run() {
    for (int s = 0; s < slots_; ++s) launchAt_[size_t(s)] = 0;
    int64_t t = 0;
    while (retired_ < c_.blocks) {
      for (int s = 0; s < slots_; ++s)
        if (launchAt_[size_t(s)] <= t && t >= nextStartAllowed_) {
          startBlock(s, t);
          nextStartAllowed_ = t + c_.blockLaunchInterval;
        }
      for (int s = 0; s < c_.schedulers; ++s) trySchedule(s, t);
      if (retired_ >= c_.blocks) break;
      t = nextEvent(t);
    }
    return finish();
  }

 private:
  const std::vector<BlockStream>& sample_;
  const SmConfig& c_;
  int warpsPerBlock_ = 0;
  int slots_ = 0;
  std::vector<WarpRun> warps_;             // slot * warpsPerBlock + warp
  std::vector<std::vector<int>> bySched_;  // warp indices per scheduler
  std::vector<int> rr_;                    // per scheduler: the warp (index in warps_) issued last, -1: none
  std::vector<int64_t> busy_;              // per scheduler: busy until this cycle
  std::vector<int64_t> launchAt_;          // per slot: when the next block starts (kNever: none)
  int64_t nextStartAllowed_ = 0;           // the block scheduler's next free cycle (blockLaunchInterval)
  std::vector<int> arrived_;               // per slot: warps waiting at the barrier
  std::vector<int> exitedInSlot_;          // per slot: warps that exited
  std::vector<int64_t> slotBlock_;
  Queue pipe_, l2_, dram_;
  std::vector<Queue> tensor_;              // per scheduler: its sub-partition's tensor core
  int64_t launched_ = 0, retired_ = 0;
  int64_t drainAt_ = 0;                    // the last memory completion (stores included)
  std::vector<WarpRun> finished_;          // exited warps kept for their Done segments
  int64_t exitSum_ = 0;                    // sum of exit cycles (for the Done warp-cycles)
  int64_t warpCount_ = 0;
  SmResult r_;

  // ----- blocks -------------------------------------------------------------------------------

  void startBlock(int slot, int64_t t) {
    launchAt_[size_t(slot)] = kNever;
    if (launched_ >= c_.blocks) return;
    const int64_t j = launched_++;
    const BlockStream& b = sample_[size_t(j % int64_t(sample_.size()))];
    r_.blockStart.push_back(t);
    r_.blockDone.push_back(-1);
    arrived_[size_t(slot)] = 0;
    exitedInSlot_[size_t(slot)] = 0;
    const bool record = c_.timelineBlocks < 0 || j < c_.timelineBlocks;
    for (int w = 0; w < warpsPerBlock_; ++w) {
      WarpRun& run = warps_[size_t(slot * warpsPerBlock_ + w)];
      run = WarpRun{};
      run.code = &b.warps[size_t(w)];
      run.done.assign(run.code->size(), 0);
      run.block = j;
      run.warp = w;
      run.slot = slot;
      run.live = true;
      run.record = record;
      run.cursor = t;
      run.readyAt = t;
      ++warpCount_;
    }
    // A warp with no instruction exits at once.
    for (int w = 0; w < warpsPerBlock_; ++w) {
      WarpRun& run = warps_[size_t(slot * warpsPerBlock_ + w)];
      if (run.code->empty()) exitWarp(run, t);
    }
  }

  void exitWarp(WarpRun& w, int64_t t) {
    w.exited = true;
    w.live = false;
    w.cursor = t;
    exitSum_ += t;
    const int slot = w.slot;
    if (arrived_[size_t(slot)] > 0) barrierError(w);
    if (w.record) finished_.push_back(w);
    if (++exitedInSlot_[size_t(slot)] == warpsPerBlock_) {
      r_.blockDone[size_t(w.block)] = t;
      ++retired_;
      if (launched_ < c_.blocks) launchAt_[size_t(slot)] = t + c_.blockLaunchCycles;
    }
  }

  [[noreturn]] void barrierError(const WarpRun& w) {
    throw std::runtime_error("simulateSm: block " + std::to_string(w.block) +
                             " cannot pass a barrier: a warp exited while another waits there");
  }

  // ----- issuing ------------------------------------------------------------------------------

  bool eligible(const WarpRun& w, int64_t t) const { return w.live && !w.atBarrier && w.readyAt <= t; }

  // Greedy then oldest: the warp issued last, if it still can; else the oldest eligible warp
  // (the lowest block index, then the lowest warp).
  void trySchedule(int s, int64_t t) {
    if (busy_[size_t(s)] > t) return;
    int pick = -1;
    const int last = rr_[size_t(s)];
    if (last >= 0 && eligible(warps_[size_t(last)], t)) {
      pick = last;
    } else {
      for (int k : bySched_[size_t(s)]) {
        const WarpRun& w = warps_[size_t(k)];
        if (!eligible(w, t)) continue;
        if (pick < 0 || w.block < warps_[size_t(pick)].block ||
            (w.block == warps_[size_t(pick)].block && w.warp < warps_[size_t(pick)].warp))
          pick = k;
      }
    }
    if (pick < 0) return;
    rr_[size_t(s)] = pick;
    busy_[size_t(s)] = t + issue(warps_[size_t(pick)], t, s);
  }

  // Issues w's next instruction at t on scheduler s; returns its issue cycles.
  int issue(WarpRun& w, int64_t t, int s) {
    const TimedInstr& in = (*w.code)[w.pc];
    // The time since its last instruction: waiting on a dependency, then ready but not picked.
    if (w.readyAt > w.cursor) {
      if (w.waitDep >= 0) {
        const TimedInstr& dep = (*w.code)[size_t(w.waitDep)];
        const bool memory = dep.kind == TimedKind::GlobalLoad || dep.kind == TimedKind::Shared;
        emit(w, w.readyAt, memory ? WarpState::WaitingMemory : WarpState::WaitingDependency, dep.instr, dep.loc);
      } else {
        emit(w, w.readyAt, WarpState::Idle, in.instr, in.loc);
      }
    }
    emit(w, t, WarpState::Idle, in.instr, in.loc);
    const int64_t end = t + in.issueCycles;
    emit(w, end, WarpState::Issuing, in.instr, in.loc);
    r_.issueCycles += in.issueCycles;
    ++r_.instructions;

    const int64_t last = end - 1;  // the cycle its last machine instruction issues
    int64_t done = end;
    switch (in.kind) {
      case TimedKind::Alu:
        done = last + in.latency;
        break;
      case TimedKind::Shared: {
        const double p = pipe_.serve(last, in.pipeCycles);
        done = std::max<int64_t>(last + in.latency, int64_t(std::ceil(p)) + in.latency - 1);
        break;
      }
      case TimedKind::Tensor: {  // starts when the tensor core is free; the result latency after the start
        const double p = tensor_[size_t(s)].serve(last, in.pipeCycles);
        done = std::max<int64_t>(last + in.latency, int64_t(std::ceil(p)) - in.pipeCycles + in.latency);
        ++r_.mmaInstructions;
        break;
      }
      case TimedKind::GlobalLoad:
      case TimedKind::GlobalStore: {
        const double p = pipe_.serve(last, in.pipeCycles);
        const double l2 = l2_.serve(last, in.l2Bytes);
        const double d = dram_.serve(last, in.dramBytes);
        done = std::max<int64_t>(last + in.latency, int64_t(std::ceil(std::max({p, l2, d}))));
        r_.l2Bytes += in.l2Bytes;
        r_.dramBytes += in.dramBytes;
        r_.dramByteCycles += in.dramBytes * double(done - last);
        drainAt_ = std::max(drainAt_, done);
        break;
      }
      case TimedKind::Barrier:
      case TimedKind::Exit:
        break;
    }
    w.done[w.pc] = done;
    ++w.pc;

    if (in.kind == TimedKind::Exit || w.pc == w.code->size()) {
      exitWarp(w, end);
    } else if (in.kind == TimedKind::Barrier) {
      arriveAtBarrier(w, end);
    } else {
      setReady(w, end);
    }
    return in.issueCycles;
  }

  // The earliest cycle w's next instruction may issue: after `from` and after its deps.
  void setReady(WarpRun& w, int64_t from) {
    w.readyAt = from;
    w.waitDep = -1;
    for (int32_t d : (*w.code)[w.pc].deps)
      if (w.done[size_t(d)] > w.readyAt) {
        w.readyAt = w.done[size_t(d)];
        w.waitDep = d;
      }
  }

  void arriveAtBarrier(WarpRun& w, int64_t t) {
    const int slot = w.slot;
    if (exitedInSlot_[size_t(slot)] > 0) barrierError(w);
    w.atBarrier = true;
    w.arrivedAt = t;
    if (++arrived_[size_t(slot)] < warpsPerBlock_) return;
    // Everyone is here: release them all together.
    int64_t lastArrival = 0;
    for (int k = 0; k < warpsPerBlock_; ++k) lastArrival = std::max(lastArrival, warps_[size_t(slot * warpsPerBlock_ + k)].arrivedAt);
    const int64_t release = lastArrival + c_.barrierLatency;
    arrived_[size_t(slot)] = 0;
    for (int k = 0; k < warpsPerBlock_; ++k) {
      WarpRun& x = warps_[size_t(slot * warpsPerBlock_ + k)];
      const TimedInstr& bar = (*x.code)[x.pc - 1];
      emit(x, release, WarpState::WaitingBarrier, bar.instr, bar.loc);
      x.atBarrier = false;
      setReady(x, release);
    }
  }

  // The next cycle at which anything can happen.
  int64_t nextEvent(int64_t t) const {
    int64_t next = kNever;
    for (const WarpRun& w : warps_) {
      if (!w.live || w.atBarrier) continue;
      const int s = int((&w - warps_.data()) % c_.schedulers);
      next = std::min(next, std::max({w.readyAt, busy_[size_t(s)], t + 1}));
    }
    for (int64_t l : launchAt_)
      if (l != kNever) next = std::min(next, std::max({l, nextStartAllowed_, t + 1}));
    if (next == kNever)
      throw std::runtime_error("simulateSm: no warp can make progress (warps wait at a barrier that not all reach)");
    return next;
  }

  // ----- the timeline -------------------------------------------------------------------------

  // w spent [w.cursor, end) in `state`.
  void emit(WarpRun& w, int64_t end, WarpState state, int32_t instr, const Loc& loc) {
    if (end <= w.cursor) return;
    r_.warpCycles[size_t(state)] += end - w.cursor;
    if (w.record) {
      if (w.lastSeg >= 0) {
        WarpSegment& last = r_.timeline[size_t(w.lastSeg)];
        if (last.state == state && last.instr == instr && last.end == w.cursor) {
          last.end = end;
          w.cursor = end;
          return;
        }
      }
      if (r_.timeline.size() >= kMaxTimelineSegments) {
        r_.timelineTruncated = true;  // the counts go on; the picture stops here
      } else {
        w.lastSeg = int64_t(r_.timeline.size());
        r_.timeline.push_back(WarpSegment{w.block, int32_t(w.warp), int32_t(w.slot), w.cursor, end, state, instr, loc});
      }
    }
    w.cursor = end;
  }

  SmResult finish() {
    int64_t end = drainAt_;
    for (int64_t d : r_.blockDone) end = std::max(end, d);
    end = std::max({end, int64_t(std::ceil(dram_.freeAt)), int64_t(std::ceil(l2_.freeAt)), int64_t(std::ceil(pipe_.freeAt))});
    for (const Queue& q : tensor_) end = std::max(end, int64_t(std::ceil(q.freeAt)));
    r_.cycles = end;
    r_.warpCycles[size_t(WarpState::Done)] += warpCount_ * end - exitSum_;
    for (WarpRun& w : finished_) {
      if (end <= w.cursor || r_.timelineTruncated) continue;
      w.lastSeg = -1;  // a Done segment never merges
      r_.timeline.push_back(WarpSegment{w.block, int32_t(w.warp), int32_t(w.slot), w.cursor, end, WarpState::Done, -1, Loc{}});
    }
    std::stable_sort(r_.timeline.begin(), r_.timeline.end(), [](const WarpSegment& a, const WarpSegment& b) {
      return a.block != b.block ? a.block < b.block : a.warp != b.warp ? a.warp < b.warp : a.start < b.start;
    });
    r_.dramBusyCycles = dram_.busy;
    r_.l2BusyCycles = l2_.busy;
    r_.pipeBusyCycles = pipe_.busy;
    for (const Queue& q : tensor_) r_.tensorBusyCycles += q.busy;
    return std::move(r_);
  }
};

}  // namespace

SmResult simulateSm(const std::vector<BlockStream>& sample, const SmConfig& config) { return Sm(sample, config).run(); }

}  // namespace tl
