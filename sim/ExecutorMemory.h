// Private to the thread executor (sim/ThreadExecutor.cpp): the warps' data, the executor's state
// and its memory instructions (global loads and stores, atomics, shared memory, the access
// records), apart from the scheduler and the control flow that ThreadExecutor.cpp keeps. The
// rules these follow are in ThreadExecutor.cpp's header comment and docs/executor.md.
//
//   class Executor : public sim::exec::MachineState   (ThreadExecutor.cpp)
//
// Expects: a compiled sim::Program and the run's Memory; called only by the executor.
// Guarantees: the memory semantics of ThreadExecutor.h (bounds, alignment, masks, write
// conflicts, races in a block and between programs, initcheck, indivisible atomics);
// RuntimeErrors located at the op. Every global element a load, store or atomic touches goes
// through checkGlobal (sim/GlobalRaces.h: a race between two blocks that nothing orders but
// atomic release/acquire, and a read of an empty() buffer's element before any write); those
// checks start at the run's first global access and begin each block at its first one.
#pragma once

#include <algorithm>
#include <array>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "runtime/Memory.h"
#include "sim/ElementOps.h"
#include "sim/GlobalRaces.h"
#include "sim/Program.h"
#include "sim/RaceDetector.h"
#include "sim/ThreadExecutor.h"
#include "sim/WriteConflicts.h"

namespace tl::sim::exec {

constexpr uint32_t kFullMask = 0xFFFFFFFFu;
constexpr int kMaxWarps = 32;                          // 1024 threads per block, as CUDA
constexpr int64_t kMaxSharedBytes = int64_t(16) << 20; // the simulator's sanity limit

inline std::string hex(uint64_t v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%" PRIx64, v);
  return buf;
}

inline std::string locStr(Loc loc) { return std::to_string(loc.line) + ":" + std::to_string(loc.col); }

// Calls fn(lane) for each set bit of mask, in increasing lane order.
template <typename Fn>
inline void forLanes(uint32_t mask, Fn fn) {
  while (mask) {
    int lane = __builtin_ctz(mask);
    mask &= mask - 1;
    fn(lane);
  }
}

// "lanes 0-6, 9" for messages.
inline std::string laneList(uint32_t mask) {
  std::string s;
  for (int l = 0; l < 32;) {
    if (!(mask >> l & 1)) { ++l; continue; }
    int e = l;
    while (e + 1 < 32 && (mask >> (e + 1) & 1)) ++e;
    s += (s.empty() ? "" : ", ") + std::to_string(l) + (e > l ? "-" + std::to_string(e) : "");
    l = e + 1;
  }
  return s.empty() ? "none" : s;
}

// What a frame of the warp stack is running.
enum class FrameKind : uint8_t {
  Body,  // the function body
  Then,  // an if's then-region (pendingElse: lanes that run the else-region next)
  Else,  // an if's else-region
  Loop,  // a for's body, one iteration at a time
  WhileCond,  // a while's cond region (its lanes: those still looping)
  WhileBody,  // a while's body
};

struct Frame {
  const CRegion* region = nullptr;
  const COp* owner = nullptr;  // the if/for that pushed it (nullptr for the body)
  uint32_t pc = 0;             // index of the next op of region to run
  uint32_t mask = 0;           // active lanes (never 0)
  uint32_t pendingElse = 0;    // Then frames: lanes waiting for the else-region
  FrameKind kind = FrameKind::Body;
  bool divergenceCounted = false;  // Loop frames: already counted in divergentBranches
};

enum class WarpStatus : uint8_t {
  Running,    // can run
  AtBarrier,  // waiting at `barrier`
  Done,       // executed return
};

struct Warp {
  int id = 0;
  std::vector<Slot> regs;     // the register file (Program::slotsPerWarp slots)
  std::vector<Frame> stack;   // reserved to Program::maxDepth: never reallocates
  WarpStatus status = WarpStatus::Running;
  const COp* barrier = nullptr;
};

// A pending element write of a store instruction (checked, not yet applied).
struct PendingWrite {
  uint8_t* dst;
  Slot value;
};

// The executor's state, its messages and its memory instructions.
class MachineState {
 public:
  MachineState(const Function& fn, const LaunchConfig& launch, Memory& memory, const ExecOptions& options)
      : fn_(fn), launch_(launch), mem_(memory), opts_(options) {}

 protected:
  const Function& fn_;
  const LaunchConfig& launch_;
  Memory& mem_;
  const ExecOptions& opts_;
  std::unique_ptr<sim::Program> prog_;
  std::vector<uint8_t> shared_;
  // wgmmas in flight (asynchronous on the GPU, ThreadOps.def): per warp, the shared-memory
  // element offsets its uncommitted wgmmas read and its committed groups' (oldest first), and per
  // shared byte how many in-flight reads cover it. A store over such a byte before the reading
  // warp's wgmma_wait is an error (the executor computes each wgmma at issue; the GPU may not
  // have read its operands yet).
  std::vector<std::vector<uint32_t>> wgmmaOpen_;
  std::vector<std::vector<std::vector<uint32_t>>> wgmmaCommitted_;
  std::vector<uint16_t> asyncReaders_;
  // cp_async copies in flight (ThreadOps.def): per warp, the copies since its last commit and
  // its committed groups (oldest first), each copy's bytes read from global memory at issue;
  // per shared byte how many copies will still write it. They land at the cp_async_wait that
  // covers their group; reading or storing such a byte before then is an error.
  struct AsyncCopy {
    uint32_t off = 0;  // shared byte offset
    uint8_t bytes = 0;
    int thread = 0;
    uint8_t data[16] = {};
  };
  std::vector<std::vector<AsyncCopy>> copiesOpen_;
  std::vector<std::vector<std::vector<AsyncCopy>>> copiesCommitted_;
  std::vector<uint16_t> asyncWriters_;
  sim::RaceDetector races_;
  sim::WriteConflictDetector conflicts_;
  sim::GlobalRaceDetector programRaces_;  // races between programs (ExecOptions::detectRaces)
  sim::InitShadow init_;                  // initcheck of empty() buffers (ExecOptions::initCheck)
  bool globalChecks_ = true;              // checkGlobal runs for every global element (until it finds no work)
  bool globalStarted_ = false;            // startGlobalChecks ran
  int64_t racesBlock_ = -1;               // the block programRaces_ was last begun for
  bool racesFound_ = false;               // a race between programs was found: pendingRace_
  RuntimeError pendingRace_{Loc{}, ""};   // thrown when the run ends (throwPendingRace)
  std::array<int64_t, 3> block_{0, 0, 0};
  int64_t blockLinear_ = 0;
  ExecResult result_;
  std::vector<PendingWrite> pending_;  // reused by every store
  Buffer* lastBuffer_ = nullptr;       // the buffer the last global access hit (a fast path)
  std::array<Slot, 16> groupScratch_{};  // checkGroup: a GPU's addresses for a group whose hint is false
  std::vector<int> hintNoted_;           // instructions checkGroup has left a note for

  // ----- messages -----------------------------------------------------------------------------

  std::string blockStr() const {
    return "block (" + std::to_string(block_[0]) + ", " + std::to_string(block_[1]) + ", " +
           std::to_string(block_[2]) + ")";
  }
  static std::string threadStr(int thread) {
    return "thread " + std::to_string(thread) + " (warp " + std::to_string(thread / 32) + ", lane " +
           std::to_string(thread % 32) + ")";
  }
  // " in block (3, 0, 0), thread 37 (warp 1, lane 5), instruction 12"
  std::string where(const Warp& w, int lane, const COp& op) const {
    return " in " + blockStr() + ", " + threadStr(w.id * 32 + lane) + ", instruction " + std::to_string(op.instr);
  }
  [[noreturn]] void fail(const COp& op, const std::string& msg) const { throw RuntimeError(op.op->loc, msg); }
  // "program 5 (block (5, 0, 0))": a linear block id, as the race reports name programs.
  std::string programStr(int64_t linear) const {
    const int64_t gx = launch_.grid[0], gy = launch_.grid[1];
    return "program " + std::to_string(linear) + " (block (" + std::to_string(linear % gx) + ", " +
           std::to_string(linear / gx % gy) + ", " + std::to_string(linear / (gx * gy)) + "))";
  }
  // "address 0x10000100 (out_ptr[0])", as write conflicts name addresses.
  static std::string elementStr(const Buffer& b, int64_t elem) {
    return hex(b.base + uint64_t(elem) * uint64_t(dtypeBytes(b.dtype))) + " (" + b.name + formatIndex(b.shape, elem) + ")";
  }


  // ----- memory -------------------------------------------------------------------------------

  // The ops' operand positions: (pointers/addresses, [value,] [mask, [other]]).
  struct MemOperands {
    const Slot* addr = nullptr;   // one address per register
    const Slot* value = nullptr;  // stores
    const Slot* mask = nullptr;   // null: every element is on
    const Slot* other = nullptr;  // loads: value of masked-off elements (null: 0)
    uint32_t n = 0;               // registers per lane
    uint32_t vec = 1;             // registers per access group
    DType dtype = DType::F32;     // element dtype
    uint32_t elemBytes = 4;
  };

  MemOperands memOperands(Warp& w, const COp& op, bool store) {
    MemOperands m;
    size_t k = 0;
    m.addr = &w.regs[op.in[k++].off];
    const ValRef& data = store ? op.in[k] : op.out[0];
    if (store) m.value = &w.regs[op.in[k++].off];
    if (op.in.size() > k) m.mask = &w.regs[op.in[k++].off];
    if (op.in.size() > k) m.other = &w.regs[op.in[k++].off];
    m.n = data.n;
    m.vec = static_cast<uint32_t>(op.attr);
    m.dtype = data.dtype;
    m.elemBytes = static_cast<uint32_t>(dtypeBytes(data.dtype));
    return m;
  }

  // Elements of the group starting at register index i (lane*n + g*vec) that are on.
  static uint32_t groupOn(const MemOperands& m, uint32_t i) {
    uint32_t on = 0;
    for (uint32_t e = 0; e < m.vec; ++e)
      if (!m.mask || m.mask[i + e]) on |= 1u << e;
    return on;
  }

  // A group's addresses must be consecutive and its first address aligned to the group size.
  // (Shared addresses are printed as signed byte offsets, global ones in hex.) Returns the
  // group's addresses: m.addr + i, or for a global vector whose first address is aligned but
  // whose others are not consecutive, the addresses a GPU uses (ld/st.global.vN reads or writes
  // N consecutive elements from the first address) in groupScratch_, with a note once per
  // instruction. That happens when a tl.multiple_of / tl.max_contiguous hint is false at run
  // time (tutorial 09 clamps out-of-range columns to 0 and then promises contiguity); a
  // misaligned first address faults on a GPU, so it stops here too.
  const Slot* checkGroup(const Warp& w, const COp& op, const MemOperands& m, uint32_t i, int lane, bool shared) {
    const uint64_t a0 = m.addr[i];
    const uint64_t groupBytes = uint64_t(m.vec) * m.elemBytes;
    const bool aligned = a0 % groupBytes == 0;
    bool ok = aligned;
    for (uint32_t e = 1; e < m.vec && ok; ++e) ok = m.addr[i + e] == a0 + uint64_t(e) * m.elemBytes;
    if (ok) return m.addr + i;
    auto show = [&](uint64_t a) { return shared ? std::to_string(sim::asI(a)) : hex(a); };
    std::string addrs;
    for (uint32_t e = 0; e < m.vec; ++e) addrs += (e ? ", " : "") + show(m.addr[i + e]);
    if (!shared && aligned) {
      for (uint32_t e = 0; e < m.vec; ++e) groupScratch_[e] = a0 + uint64_t(e) * m.elemBytes;
      if (std::find(hintNoted_.begin(), hintNoted_.end(), op.instr) == hintNoted_.end()) {
        hintNoted_.push_back(op.instr);
        result_.notes.push_back(
            locStr(op.op->loc) + ": " + mnemonic(op.kind) + " of " + std::to_string(m.vec) + " x " + dtypeName(m.dtype) +
            " got addresses that are not consecutive, [" + addrs + "]" + where(w, lane, op) +
            ": the vector width trusts a tl.multiple_of / tl.max_contiguous hint that is false here. Like a GPU, "
            "the access uses " + std::to_string(m.vec) + " consecutive elements from the first address " + hex(a0) +
            " (a result is right only if those elements are masked off or never used)");
      }
      return groupScratch_.data();
    }
    const char* space = shared ? "shared byte offset" : "address";
    std::string msg = std::string(m.vec > 1 ? "misaligned vector access" : "misaligned access") +
                      " (internal compiler error): " + mnemonic(op.kind) + " of ";
    if (m.vec == 1) {
      msg += std::string(dtypeName(m.dtype)) + " at " + space + " " + show(a0) + ", which is not a multiple of " +
             std::to_string(m.elemBytes);
    } else {
      msg += std::to_string(m.vec) + " x " + dtypeName(m.dtype) + " needs " + std::to_string(m.vec) + " consecutive " +
             (shared ? "shared byte offsets" : "addresses") + " starting at a multiple of " + std::to_string(groupBytes) +
             " bytes, got [" + addrs + "]";
    }
    // The vector width came from what the axis analysis proved or from what a hint promised; a
    // user's hint that is false at run time reaches here too.
    const std::string hint = shared ? ""
                                    : "; if a tl.multiple_of / tl.max_contiguous hint promised these addresses, the hint "
                                      "is false here (a GPU faults on a misaligned vector address)";
    fail(op, msg + where(w, lane, op) + ", register " + std::to_string(i % m.n) + hint);
  }

  // The host bytes of one global element, or a RuntimeError like the interpreters'.
  uint8_t* globalElement(const Warp& w, const COp& op, const MemOperands& m, uint64_t addr, int lane, bool store) {
    Buffer* b = lastBuffer_;
    const bool atomic = op.kind == OpKind::AtomGlobal || op.kind == OpKind::AtomCasGlobal;
    if (!b || addr < b->base || addr >= b->end() || m.elemBytes > b->end() - addr) {
      b = mem_.resolve(addr, m.elemBytes);
      if (!b)
        fail(op, std::string(atomic ? "atomic" : store ? "store" : "load") + " out of bounds: " + mem_.describeAddress(addr, m.elemBytes) +
                     where(w, lane, op) + outOfBoundsHint(store, m.mask != nullptr, op.op->strAttrIf("unchecked")));
      lastBuffer_ = b;
    }
    const uint64_t off = addr - b->base;
    if (b->dtype != m.dtype || off % m.elemBytes != 0)
      fail(op, std::string(store ? "store" : "load") + " of " + dtypeName(m.dtype) + " at address " + hex(addr) +
                   " is not aligned to an element of buffer '" + b->name + "' (" + b->describe() + ")" + where(w, lane, op));
    if (store) b->markStored(off);
    return b->bytes.data() + off;
  }

  // The host bytes of one shared-memory element, or a RuntimeError.
  uint8_t* sharedElement(const Warp& w, const COp& op, const MemOperands& m, uint64_t slot, int lane, bool store) {
    const int64_t off = sim::asI(slot);  // an i32 byte offset, sign-extended
    if (off < 0 || off + static_cast<int64_t>(m.elemBytes) > fn_.sharedBytes)
      fail(op, std::string("shared-memory ") + (store ? "store" : "load") + " out of bounds: byte offset " +
                   std::to_string(off) + " (" + std::to_string(m.elemBytes) + " bytes) is outside the block's " +
                   std::to_string(fn_.sharedBytes) + " bytes of shared memory" + where(w, lane, op));
    return shared_.data() + off;
  }

  // Appends one record per access group of this instruction; returns the index of the first.
  size_t beginRecords(const Warp& w, const COp& op, const MemOperands& m, MemSpace space, bool store) {
    const size_t first = result_.accesses.size();
    if (!opts_.recordAccesses) return first;
    WarpAccess rec;
    rec.block = blockLinear_;
    rec.warp = w.id;
    rec.instr = op.instr;
    rec.space = space;
    rec.store = store;
    rec.bytes = static_cast<uint8_t>(m.vec * m.elemBytes);
    rec.loc = op.op->loc;
    result_.accesses.insert(result_.accesses.end(), m.n / m.vec, rec);
    return first;
  }
  void noteAccess(size_t first, uint32_t group, int lane, uint64_t addr) {
    if (!opts_.recordAccesses) return;
    WarpAccess& rec = result_.accesses[first + group];
    rec.activeMask |= 1u << lane;
    rec.addr[static_cast<size_t>(lane)] = addr;
  }
  // Drops the records of groups no lane accessed (every element masked off).
  void endRecords(size_t first) {
    if (!opts_.recordAccesses) return;
    auto& acc = result_.accesses;
    size_t keep = first;
    for (size_t i = first; i < acc.size(); ++i)
      if (acc[i].activeMask) acc[keep++] = acc[i];
    acc.resize(keep);
  }

  [[noreturn]] void raceError(const COp& op, const sim::RaceConflict& c) const {
    auto side = [&](const sim::RaceAccess& a) {
      const Op* at = prog_->instructions[static_cast<size_t>(a.instr)];
      return threadStr(a.thread) + " " + (a.write ? "wrote" : "read") + " it at " + locStr(at->loc) + " (instruction " +
             std::to_string(a.instr) + ", " + mnemonic(at->kind) + ")";
    };
    fail(op, "shared-memory race on byte " + hex(c.byte) + ": " + side(c.earlier) + " and " + side(c.later) +
                 " with no barrier between, in " + blockStr());
  }

  // ----- checks between programs (sim/GlobalRaces.h) ------------------------------------------

  // They start at the run's first global access (so the scheduler in ThreadExecutor.cpp needs
  // no hook): every buffer is shadowed for races (lazily), the launch's empty() buffers for
  // initcheck; a new block is begun when its first access comes (blocks run in grid order).
  void startGlobalChecks() {
    globalStarted_ = true;
    std::vector<std::pair<std::string, int64_t>> bufs;
    std::vector<int64_t> uninitialized;
    for (const Buffer& b : mem_.buffers()) {
      bufs.emplace_back(b.name, b.numel());
      const BufferSpec* spec = launch_.buffer(b.name);
      uninitialized.push_back(opts_.initCheck && spec && spec->fill == Fill::Empty ? b.numel() : 0);
    }
    const int64_t total = launch_.grid[0] * launch_.grid[1] * launch_.grid[2];
    const int64_t toRun = opts_.maxBlocks < 0 ? total : std::min(total, opts_.maxBlocks);
    if (opts_.detectRaces) programRaces_.reset(std::move(bufs), toRun, opts_.maxRaceShadowBytes);
    init_.reset(uninitialized);
    globalChecks_ = programRaces_.enabled() || init_.any();
    if (opts_.detectRaces && !programRaces_.enabled()) noteRaceStop();
  }
  // A stopped detector leaves a note (ExecResult::notes) and costs nothing from then on.
  void noteRaceStop() {
    if (!programRaces_.stopReason().empty()) result_.notes.push_back(programRaces_.stopReason());
    globalChecks_ = init_.any();
  }

  // One global element `op` touches at `addr` (just resolved by globalElement: lastBuffer_).
  // Loads and atomics read it: initcheck first. Then the race check between programs.
  // Whether `bytes` bytes at p equal the low bytes of bits (little-endian, as storeElement packs them).
  static bool sameBytes(const uint8_t* p, uint64_t bits, uint32_t bytes) {
    uint64_t cur = 0;
    switch (bytes) {
      case 1: cur = *p; break;
      case 2: { uint16_t v; std::memcpy(&v, p, 2); cur = v; break; }
      case 4: { uint32_t v; std::memcpy(&v, p, 4); cur = v; break; }
      default: std::memcpy(&cur, p, 8); break;
    }
    return cur == bits;
  }

  // `wrote`: an atomic changed memory (a failed compare-and-swap did not); `sameBytes`: a store
  // writes the bytes the element holds now.
  void checkGlobal(const Warp& w, const COp& op, uint64_t addr, int lane, sim::GlobalAccessKind kind, bool wrote = true,
                   bool sameBytes = false) {
    if (!globalStarted_) {
      startGlobalChecks();
      if (!globalChecks_) return;
    }
    const Buffer& b = *lastBuffer_;
    const int buf = static_cast<int>(&b - mem_.buffers().data());
    const int64_t elem = static_cast<int64_t>((addr - b.base) >> __builtin_ctz(unsigned(dtypeBytes(b.dtype))));
    const int thread = w.id * 32 + lane;
    if (init_.any() && kind != sim::GlobalAccessKind::Write && !init_.readable(buf, elem))
      fail(op, std::string(kind == sim::GlobalAccessKind::Read ? "read of uninitialized memory: "
                                                               : "atomic on uninitialized memory: ") +
                   elementStr(b, elem) + " is in '" + b.name + "', which the launch allocates with empty(), and no " +
                   "program has written it yet, in " + programStr(blockLinear_) + ", " + threadStr(thread) +
                   ", instruction " + std::to_string(op.instr));
    if (init_.any() && kind != sim::GlobalAccessKind::Read && wrote) init_.markWritten(buf, elem);
    if (!programRaces_.enabled()) return;
    if (blockLinear_ != racesBlock_) {
      programRaces_.beginBlock(blockLinear_);
      racesBlock_ = blockLinear_;
    }
    sim::GlobalRace r;
    bool found = false;
    switch (kind) {
      case sim::GlobalAccessKind::Read: found = programRaces_.onRead(buf, elem, thread, op.instr, r); break;
      case sim::GlobalAccessKind::Write: found = programRaces_.onWrite(buf, elem, thread, op.instr, sameBytes, r); break;
      default: found = programRaces_.onAtomic(buf, elem, thread, op.instr, op.acquire, op.release, wrote, r); break;
    }
    if (found) {  // kept for the end of the run; nothing more is checked for races
      pendingRace_ = RuntimeError(op.op->loc, programRaceMessage(b, elem, r));
      programRaces_.finish();
      racesFound_ = true;
      globalChecks_ = init_.any();
      return;
    }
    if (!programRaces_.enabled()) noteRaceStop();
  }

  // At the end of the run: a race between programs found on the way stops it now. (The run went
  // on after it, so that a fault later in the run, which stops it at once, is not hidden behind
  // a race; the memory holds every program's writes.)
  void throwPendingRace() const {
    if (racesFound_) throw pendingRace_;
  }

  std::string programRaceMessage(const Buffer& b, int64_t elem, const sim::GlobalRace& r) const {
    auto side = [&](const sim::GlobalAccess& a) {
      const Op* at = prog_->instructions[static_cast<size_t>(a.instr)];
      const char* verb = a.kind == sim::GlobalAccessKind::Read    ? "read it"
                         : a.kind == sim::GlobalAccessKind::Write ? "wrote it"
                         : a.kind == sim::GlobalAccessKind::Atomic ? "updated it atomically"
                                                                   : "read it atomically";
      return programStr(a.block) + ", " + threadStr(a.thread) + ", " + verb + " at " + locStr(at->loc) +
             " (instruction " + std::to_string(a.instr) + ", " + mnemonic(at->kind) + ")";
    };
    return "global-memory race between programs: address " + elementStr(b, elem) + ": " + side(r.earlier) + ", and " +
           side(r.later) + ", with nothing ordering them (no atomic release of the first program that the second "
           "acquired before its access)";
  }

  void execLdGlobal(Warp& w, const COp& op, uint32_t mask) {
    const MemOperands m = memOperands(w, op, false);
    Slot* out = &w.regs[op.out[0].off];
    const size_t rec = beginRecords(w, op, m, MemSpace::Global, false);
    forLanes(mask, [&](int l) {
      for (uint32_t g = 0; g < m.n / m.vec; ++g) {
        const uint32_t i = static_cast<uint32_t>(l) * m.n + g * m.vec;
        const uint32_t on = groupOn(m, i);
        const Slot* addr = m.addr + i;
        if (on) {
          addr = checkGroup(w, op, m, i, l, false);
          noteAccess(rec, g, l, addr[0]);
        }
        for (uint32_t e = 0; e < m.vec; ++e) {
          if (!(on >> e & 1)) {
            out[i + e] = m.other ? m.other[i + e] : 0;
            continue;
          }
          const uint8_t* p = globalElement(w, op, m, addr[e], l, false);
          if (globalChecks_) checkGlobal(w, op, addr[e], l, sim::GlobalAccessKind::Read);
          out[i + e] = sim::loadElement(p, m.dtype);
        }
      }
    });
    endRecords(rec);
  }

  void execStGlobal(Warp& w, const COp& op, uint32_t mask) {
    const MemOperands m = memOperands(w, op, true);
    const size_t rec = beginRecords(w, op, m, MemSpace::Global, true);
    pending_.clear();
    const uint32_t instance = conflicts_.nextInstance(w.id, op.instr);
    sim::WriteConflict conflict;
    forLanes(mask, [&](int l) {  // check everything first: a faulting store writes nothing
      for (uint32_t g = 0; g < m.n / m.vec; ++g) {
        const uint32_t i = static_cast<uint32_t>(l) * m.n + g * m.vec;
        const uint32_t on = groupOn(m, i);
        if (!on) continue;
        const Slot* addr = checkGroup(w, op, m, i, l, false);
        noteAccess(rec, g, l, addr[0]);
        for (uint32_t e = 0; e < m.vec; ++e) {
          if (!(on >> e & 1)) continue;
          uint8_t* dst = globalElement(w, op, m, addr[e], l, true);
          pending_.push_back({dst, m.value[i + e]});
          uint64_t bits = 0;
          sim::storeElement(reinterpret_cast<uint8_t*>(&bits), m.dtype, m.value[i + e]);
          if (globalChecks_)
            checkGlobal(w, op, addr[e], l, sim::GlobalAccessKind::Write, true, sameBytes(dst, bits, m.elemBytes));
          const int reg = static_cast<int>(g * m.vec + e);
          if (conflicts_.onWrite(addr[e], op.instr, instance, w.id * 32 + l, reg, bits, conflict))
            writeConflictError(op, m, addr[e], conflict);
        }
      }
    });
    for (const PendingWrite& p : pending_) sim::storeElement(p.dst, m.dtype, p.value);  // lane order
    endRecords(rec);
  }

  // atom_global / atom_cas_global: lane by lane in increasing lane order, register by register,
  // each element read, combined and written before the next one starts. The executor runs one
  // warp instruction at a time and blocks one after another, so nothing else touches memory
  // in between: each element's read-modify-write is indivisible across lanes, warps and
  // blocks (docs/executor.md). Masked-off elements give 0. No vectors: one access per register.
  void execAtom(Warp& w, const COp& op, uint32_t mask) {
    const bool cas = op.kind == OpKind::AtomCasGlobal;
    const size_t values = cas ? 2 : 1;
    MemOperands m;
    m.addr = &w.regs[op.in[0].off];
    m.value = &w.regs[op.in[values].off];
    const Slot* cmp = cas ? &w.regs[op.in[1].off] : nullptr;
    if (op.in.size() > values + 1) m.mask = &w.regs[op.in[values + 1].off];
    m.n = op.out[0].n;
    m.vec = 1;
    m.dtype = op.out[0].dtype;
    m.elemBytes = static_cast<uint32_t>(dtypeBytes(m.dtype));
    const auto kind = static_cast<sim::AtomicKind>(op.attr);
    Slot* out = &w.regs[op.out[0].off];
    const size_t rec = beginRecords(w, op, m, MemSpace::Global, true);
    if (opts_.recordAccesses)
      for (size_t i = rec; i < result_.accesses.size(); ++i) result_.accesses[i].atomic = true;
    forLanes(mask, [&](int l) {
      for (uint32_t r = 0; r < m.n; ++r) {
        const uint32_t i = static_cast<uint32_t>(l) * m.n + r;
        if (m.mask && !m.mask[i]) {
          out[i] = 0;
          continue;
        }
        noteAccess(rec, r, l, m.addr[i]);
        uint8_t* p = globalElement(w, op, m, m.addr[i], l, true);
        const Slot old = sim::loadElement(p, m.dtype);
        if (globalChecks_)  // a compare-and-swap that fails only reads
          checkGlobal(w, op, m.addr[i], l, sim::GlobalAccessKind::Atomic,
                      !cas || isFloat(m.dtype) || sim::asI(old) == sim::asI(cmp[i]));
        sim::storeElement(p, m.dtype, sim::atomicSlot(kind, m.dtype, old, m.value[i], cmp ? cmp[i] : 0));
        out[i] = old;
        ++result_.stats.atomics;
      }
    });
    if (programRaces_.enabled()) {
      programRaces_.endAtomicInstruction();
      if (!programRaces_.enabled()) noteRaceStop();
    }
    endRecords(rec);
  }

  [[noreturn]] void writeConflictError(const COp& op, const MemOperands& m, uint64_t addr, const sim::WriteConflict& c) {
    fail(op, sim::describeWriteConflict(c, addr, m.dtype, mem_) + " in " + blockStr() + ", instruction " +
                 std::to_string(op.instr));
  }

  void execLdShared(Warp& w, const COp& op, uint32_t mask) {
    const MemOperands m = memOperands(w, op, false);
    Slot* out = &w.regs[op.out[0].off];
    const size_t rec = beginRecords(w, op, m, MemSpace::Shared, false);
    sim::RaceConflict conflict;
    forLanes(mask, [&](int l) {
      for (uint32_t g = 0; g < m.n / m.vec; ++g) {
        const uint32_t i = static_cast<uint32_t>(l) * m.n + g * m.vec;
        const uint32_t on = groupOn(m, i);
        if (on) {
          checkGroup(w, op, m, i, l, true);
          noteAccess(rec, g, l, m.addr[i]);
        }
        for (uint32_t e = 0; e < m.vec; ++e) {
          if (!(on >> e & 1)) {
            out[i + e] = 0;
            continue;
          }
          const uint8_t* p = sharedElement(w, op, m, m.addr[i + e], l, false);
          if (opts_.detectRaces && races_.onRead(static_cast<uint32_t>(p - shared_.data()), m.elemBytes, w.id * 32 + l, op.instr, conflict))
            raceError(op, conflict);
          checkNoCopyLands(w, op, l, uint32_t(p - shared_.data()), m.elemBytes, "ld_shared reads");
          out[i + e] = sim::loadElement(p, m.dtype);
        }
      }
    });
    endRecords(rec);
  }

  // ldmatrix: `count` 8 x 8 matrices of 16-bit elements; lane 8q + r gives the address of row r
  // of matrix q (16 bytes, 16-byte aligned). One access record per matrix (8 lanes x 16 bytes).
  void execLdmatrix(Warp& w, const COp& op, uint32_t mask) {
    if (mask != 0xffffffffu)
      fail(op, "ldmatrix needs all 32 lanes of the warp active (ldmatrix.sync.aligned), active lanes: " + laneList(mask) +
                   where(w, __builtin_ctz(mask), op));
    const uint32_t count = static_cast<uint32_t>(op.attr & 0xff);
    const bool trans = (op.attr >> 8) & 1;
    const Slot* addr = &w.regs[op.in[0].off];
    MemOperands m;
    m.n = count;
    m.vec = 1;
    m.dtype = op.out[0].dtype;
    m.elemBytes = 16;  // one row
    const size_t rec = beginRecords(w, op, m, MemSpace::Shared, false);
    sim::RaceConflict conflict;
    std::vector<const uint8_t*> row(size_t(count) * 8);
    for (uint32_t q = 0; q < count; ++q)
      for (int r = 0; r < 8; ++r) {
        const int l = int(q) * 8 + r;
        if (sim::asI(addr[l]) % 16 != 0)
          fail(op, "ldmatrix row address " + std::to_string(sim::asI(addr[l])) + " is not 16-byte aligned" + where(w, l, op));
        const uint8_t* p = sharedElement(w, op, m, addr[l], l, false);
        if (opts_.detectRaces && races_.onRead(static_cast<uint32_t>(p - shared_.data()), 16, w.id * 32 + l, op.instr, conflict))
          raceError(op, conflict);
        checkNoCopyLands(w, op, l, uint32_t(p - shared_.data()), 16, "ldmatrix reads");
        noteAccess(rec, q, l, addr[l]);
        row[size_t(q) * 8 + size_t(r)] = p;
      }
    Slot* out = &w.regs[op.out[0].off];
    const uint32_t n = op.out[0].n;
    for (int l = 0; l < 32; ++l)
      for (uint32_t q = 0; q < count; ++q)
        for (int j = 0; j < 2; ++j) {
          const int r = trans ? 2 * (l % 4) + j : l / 4, c = trans ? l / 4 : 2 * (l % 4) + j;
          out[uint32_t(l) * n + 2 * q + uint32_t(j)] = sim::loadElement(row[size_t(q) * 8 + size_t(r)] + 2 * c, m.dtype);
        }
    endRecords(rec);
  }

  void execStShared(Warp& w, const COp& op, uint32_t mask) {
    const MemOperands m = memOperands(w, op, true);
    const size_t rec = beginRecords(w, op, m, MemSpace::Shared, true);
    sim::RaceConflict conflict;
    pending_.clear();
    forLanes(mask, [&](int l) {  // check bounds and races first, then write in lane order
      for (uint32_t g = 0; g < m.n / m.vec; ++g) {
        const uint32_t i = static_cast<uint32_t>(l) * m.n + g * m.vec;
        const uint32_t on = groupOn(m, i);
        if (!on) continue;
        checkGroup(w, op, m, i, l, true);
        noteAccess(rec, g, l, m.addr[i]);
        for (uint32_t e = 0; e < m.vec; ++e) {
          if (!(on >> e & 1)) continue;
          uint8_t* p = sharedElement(w, op, m, m.addr[i + e], l, true);
          if (opts_.detectRaces && races_.onWrite(static_cast<uint32_t>(p - shared_.data()), m.elemBytes, w.id * 32 + l, op.instr, conflict))
            raceError(op, conflict);
          if (!asyncReaders_.empty())
            for (uint32_t b = 0; b < m.elemBytes; ++b)
              if (asyncReaders_[size_t(p - shared_.data()) + b])
                fail(op, "st_shared overwrites shared memory (byte offset " + std::to_string(p - shared_.data() + b) +
                             ") that a wgmma still in flight reads: no wgmma_wait since that wgmma was issued" + where(w, l, op));
          checkNoCopyLands(w, op, l, uint32_t(p - shared_.data()), m.elemBytes, "st_shared overwrites");
          pending_.push_back({p, m.value[i + e]});
        }
      }
    });
    for (const PendingWrite& p : pending_) sim::storeElement(p.dst, m.dtype, p.value);
    endRecords(rec);
  }

  // A byte some cp_async has not yet written (its group not waited for) may not be touched.
  void checkNoCopyLands(const Warp& w, const COp& op, int lane, uint32_t off, uint32_t bytes, const char* what) {
    if (asyncWriters_.empty()) return;
    for (uint32_t b = 0; b < bytes; ++b)
      if (asyncWriters_[off + b])
        fail(op, std::string(what) + " shared memory (byte offset " + std::to_string(off + b) +
                     ") that a cp_async has not finished writing: no cp_async_wait covering its group (and a barrier, "
                     "for another thread's copy) since it was issued" + where(w, lane, op));
  }

  // cp_async: each group of `vec` registers, its source read now (bounds, alignment, the memory
  // records of a global load), its bytes held until the cp_async_wait that covers its group. A
  // masked-off group reads nothing and will write zeros. Lanes in lane order.
  void execCpAsync(Warp& w, const COp& op, uint32_t mask) {
    MemOperands m;
    m.addr = &w.regs[op.in[1].off];
    if (op.in.size() > 2) m.mask = &w.regs[op.in[2].off];
    m.n = op.in[1].n;
    m.vec = static_cast<uint32_t>(op.attr);
    m.dtype = op.in[1].dtype;
    m.elemBytes = static_cast<uint32_t>(dtypeBytes(m.dtype));
    MemOperands d = m;  // the shared destinations
    d.addr = &w.regs[op.in[0].off];
    d.mask = nullptr;
    d.elemBytes = m.vec * m.elemBytes;
    d.vec = 1;
    if (asyncWriters_.empty()) asyncWriters_.assign(shared_.size(), 0);
    if (asyncReaders_.empty()) asyncReaders_.assign(shared_.size(), 0);
    const size_t rec = beginRecords(w, op, m, MemSpace::Global, false);
    std::vector<AsyncCopy>& open = copiesOpen_[size_t(w.id)];
    forLanes(mask, [&](int l) {
      for (uint32_t g = 0; g < m.n / m.vec; ++g) {
        const uint32_t i = static_cast<uint32_t>(l) * m.n + g * m.vec;
        const uint32_t on = groupOn(m, i);
        if (on != 0 && on != (1u << m.vec) - 1)
          fail(op, "cp_async group with some elements masked off (internal compiler error): the group's mask must agree" +
                       where(w, l, op) + ", register " + std::to_string(i % m.n));
        AsyncCopy c;
        c.bytes = static_cast<uint8_t>(d.elemBytes);
        c.thread = w.id * 32 + l;
        uint8_t* dst = sharedElement(w, op, d, d.addr[i], l, true);
        c.off = static_cast<uint32_t>(dst - shared_.data());
        if (c.off % c.bytes)
          fail(op, "cp_async destination byte offset " + std::to_string(c.off) + " is not a multiple of its " +
                       std::to_string(c.bytes) + " bytes" + where(w, l, op));
        for (uint32_t b = 0; b < c.bytes; ++b) {
          if (asyncReaders_[c.off + b])
            fail(op, "cp_async overwrites shared memory (byte offset " + std::to_string(c.off + b) +
                         ") that a wgmma still in flight reads: no wgmma_wait since that wgmma was issued" + where(w, l, op));
          if (asyncWriters_[c.off + b])
            fail(op, "cp_async writes shared memory (byte offset " + std::to_string(c.off + b) +
                         ") that an earlier cp_async has not finished writing" + where(w, l, op));
        }
        if (on) {
          const Slot* addr = checkGroup(w, op, m, i, l, false);
          noteAccess(rec, g, l, addr[0]);
          for (uint32_t e = 0; e < m.vec; ++e) {
            const uint8_t* p = globalElement(w, op, m, addr[e], l, false);
            if (globalChecks_) checkGlobal(w, op, addr[e], l, sim::GlobalAccessKind::Read);
            std::copy(p, p + m.elemBytes, c.data + e * m.elemBytes);
          }
        }
        for (uint32_t b = 0; b < c.bytes; ++b) ++asyncWriters_[c.off + b];
        open.push_back(c);
      }
    });
    endRecords(rec);
  }

  // cp_async_commit / cp_async_wait {pending}: the warp's copies since the last commit become a
  // group; a wait lands every committed group but the newest `pending` (in issue order).
  void execCpAsyncSync(Warp& w, const COp& op) {
    auto& groups = copiesCommitted_[size_t(w.id)];
    if (op.kind == OpKind::CpAsyncCommit) {
      groups.push_back(std::exchange(copiesOpen_[size_t(w.id)], {}));
      return;
    }
    const size_t keep = static_cast<size_t>(op.attr);
    sim::RaceConflict conflict;
    while (groups.size() > keep) {
      for (const AsyncCopy& c : groups.front()) {
        if (opts_.detectRaces && races_.onWrite(c.off, c.bytes, c.thread, op.instr, conflict)) raceError(op, conflict);
        std::copy(c.data, c.data + c.bytes, shared_.data() + c.off);
        for (uint32_t b = 0; b < c.bytes; ++b) --asyncWriters_[c.off + b];
      }
      groups.erase(groups.begin());
    }
  }
};

}  // namespace tl::sim::exec
