// Global-memory checks between programs for the thread-IR executor (docs/executor.md, section 9):
// races between blocks, like Triton's GSan, and reads of memory no one initialized (initcheck).
//
// A RACE BETWEEN PROGRAMS is two accesses to one element of a buffer by DIFFERENT blocks, with
// nothing ordering them, where at least one is a plain (non-atomic) write, or one is an atomic
// and the other a plain access. Two atomics never race; two plain reads never race; a plain
// store of the very bytes the element holds after another program's plain store is not a race
// either (whichever lands last, memory is the same: the rule write conflicts use for replicas). Accesses of
// one block are never a race here (program order; the shared-memory detector, RaceDetector.h,
// looks inside a block).
//
// WHAT ORDERS TWO PROGRAMS (happens-before): nothing but atomics used the way a lock uses them.
// Every block has a vector clock: its own clock, which ticks after each atomic instruction (of
// one warp) that released something, and what it has acquired of other blocks' clocks. An
// element keeps a release clock (the join of every release made on it).
//   - RELEASE: an atomic that writes (a failed atomic_cas does not) with sem acq_rel or release
//     joins the block's vector clock into the element's release clock;
//   - ACQUIRE: an atomic with sem acq_rel or acquire WHOSE OLD VALUE THE PROGRAM USES joins the
//     element's release clock into the block's vector clock (an atomic_add whose result is
//     dropped cannot tell the program what another did, so it orders nothing: that keeps an
//     accumulator from ordering every program after every other, and a pattern that relies on
//     it is reported, as it can race on a GPU, where the adds come in another order);
//   - relaxed atomics, plain loads and stores, barriers and block order order nothing.
// An access of block w at its clock c happened before the current point of block b when w == b
// or b's vector clock holds at least c for w. A spin lock (atomic_cas acquires, atomic_xchg
// releases) orders the critical sections of its programs, so their plain loads and stores do
// not race.
//
// How (shadow state, in the spirit of FastTrack): per element, the last plain write, the last
// atomic write and up to two reads (plain, or a failed atomic_cas) that are not ordered before
// one another; a read that every kept reader happened before replaces them. Shadow pages of
// 4096 elements are allocated when first touched, 48 bytes per element; the vector clock of the
// running block is dense (allocated at the first acquire); release clocks are sparse.
//
// Bounds: when the shadow and clocks would pass `maxBytes`, or the clock work passes a fixed
// budget, detection STOPS (no error, no crash): stopReason() says why and from which block on,
// and the executor passes it on as a note. Limits, on purpose: readers past two concurrent ones
// and an older concurrent atomic writer are forgotten (a race with them can be missed); one
// clock tick per atomic instruction orders a warp's elements of it as one step.
//
// Expects: blocks begun in increasing order (the executor's grid order), thread ids < 1024,
// instruction ids < 2^21, element indices checked by the executor.
// Guarantees: the first race an access makes is returned with both accesses (the executor keeps
// the first one of the run and reports it when the run ends); O(1) work per
// access when no acquire happened, no allocation per access once a page exists.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

namespace tl::sim {

enum class GlobalAccessKind : uint8_t {
  Read,        // a plain load
  Write,       // a plain store
  Atomic,      // an atomic that wrote (read-modify-write)
  AtomicRead,  // an atomic that only read (a failed atomic_cas)
};

struct GlobalAccess {
  int64_t block = -1;  // linear block id (the program)
  int thread = 0;      // thread in the block
  int instr = 0;       // instruction id
  GlobalAccessKind kind = GlobalAccessKind::Read;
};

struct GlobalRace {
  GlobalAccess earlier;  // the recorded access (an earlier block)
  GlobalAccess later;    // the access being made now
};

class GlobalRaceDetector {
 public:
  // A new run: one entry per buffer (its name, for the stop note, and its element count), the
  // number of blocks that will run, and the memory cap.
  void reset(std::vector<std::pair<std::string, int64_t>> buffers, int64_t numBlocks, int64_t maxBytes);
  bool enabled() const { return enabled_; }
  // Stops without a note and frees the shadow (the executor found its race: one is reported).
  void finish();
  const std::string& stopReason() const { return stopReason_; }

  void beginBlock(int64_t block);

  // One element access of the running block (buffer index, element index). On a race, fill
  // `out` and return true.
  bool onRead(int buf, int64_t elem, int thread, int instr, GlobalRace& out);
  // `sameBytes`: the store writes the bytes the element holds now.
  bool onWrite(int buf, int64_t elem, int thread, int instr, bool sameBytes, GlobalRace& out);
  // An atomic element: acquire (when `acquire`), check and record (an atomic write, or only a
  // read when !wrote), then release (when `release` and it wrote).
  bool onAtomic(int buf, int64_t elem, int thread, int instr, bool acquire, bool release, bool wrote, GlobalRace& out);
  // After one warp's atomic instruction: the block's clock ticks if it released anything.
  void endAtomicInstruction();

  int64_t shadowBytes() const { return bytes_; }

 private:
  static constexpr uint32_t kNone = 0xFFFFFFFFu;
  static constexpr int kPageBits = 12;  // 4096 elements per shadow page
  static constexpr uint32_t kAtomicBit = 1u << 10;
  struct Access {
    uint32_t block = kNone;
    uint32_t clock = 0;
    uint32_t info = 0;  // instr << 11 | atomic << 10 | thread
  };
  struct Shadow {
    Access write;        // last plain write
    Access atomicWrite;  // last atomic write
    Access read[2];      // reads not ordered before one another since the last plain write
  };
  struct Buf {
    std::string name;
    int64_t numel = 0;
    std::vector<std::unique_ptr<Shadow[]>> pages;
  };
  struct ReleaseClock {
    std::vector<std::pair<uint32_t, uint32_t>> vc;  // (block, clock), sorted by block
    uint32_t version = 0;                            // bumped by every release
    uint32_t acquiredBy = kNone, acquiredVersion = 0;  // the last acquire (skips repeats)
  };

  Shadow* shadow(int buf, int64_t elem) {  // the element's shadow; its page allocated on first touch
    const std::unique_ptr<Shadow[]>& page = bufs_[static_cast<size_t>(buf)].pages[static_cast<size_t>(elem >> kPageBits)];
    if (page) [[likely]]
      return &page[static_cast<size_t>(elem & ((int64_t(1) << kPageBits) - 1))];
    return newPage(buf, elem);
  }
  Shadow* newPage(int buf, int64_t elem);
  bool ordered(const Access& a) const {
    if (a.block == cur_) return true;
    return vcActive_ && vcGen_[a.block] == cur_ + 1 && vcClock_[a.block] >= a.clock;
  }
  Access now(int thread, int instr, bool atomic) const {
    return Access{cur_, clock_, uint32_t(instr) << 11 | (atomic ? kAtomicBit : 0) | uint32_t(thread)};
  }
  static GlobalAccess describe(const Access& a, GlobalAccessKind kind);
  static GlobalAccessKind readKind(const Access& a) {
    return a.info & kAtomicBit ? GlobalAccessKind::AtomicRead : GlobalAccessKind::Read;
  }
  bool race(const Access& earlier, GlobalAccessKind earlierKind, const Access& later, GlobalAccessKind laterKind,
            GlobalRace& out) const {
    if (earlier.block == kNone || ordered(earlier)) [[likely]]
      return false;
    out = GlobalRace{describe(earlier, earlierKind), describe(later, laterKind)};
    return true;
  }
  void addReader(Shadow& s, const Access& x);
  void acquire(uint64_t key);
  void release(uint64_t key);
  bool charge(int64_t bytes, const std::string& what);
  void stop(const std::string& why);
  bool fits(int thread, int instr) {
    if (thread < 1024 && instr >= 0 && instr < (1 << 21)) [[likely]]
      return true;
    return tooLarge(thread, instr);
  }
  bool tooLarge(int thread, int instr);

  std::vector<Buf> bufs_;
  std::unordered_map<uint64_t, ReleaseClock> releases_;  // key: buf << 40 | elem
  std::vector<uint32_t> vcGen_, vcClock_;  // the running block's vector clock, valid where gen == cur_ + 1
  std::vector<uint32_t> vcList_;           // the blocks it holds, in acquisition order
  bool vcActive_ = false;                  // the running block has acquired something
  uint32_t cur_ = 0, clock_ = 1;
  bool released_ = false;                  // in the current atomic instruction
  int64_t numBlocks_ = 0, bytes_ = 0, maxBytes_ = 0, clockWork_ = 0;
  bool enabled_ = false;
  std::string stopReason_;
};

// initcheck: which elements of the buffers a launch allocates uninitialized (empty()) some
// program has written. Only those buffers are shadowed, one byte per element.
class InitShadow {
 public:
  // One entry per buffer: its element count when it starts uninitialized, 0 otherwise.
  void reset(const std::vector<int64_t>& uninitializedNumel);
  bool any() const { return any_; }
  // Whether buffer `buf`'s element `elem` may be read: not uninitialized, or written already.
  bool readable(int buf, int64_t elem) const {
    const std::vector<uint8_t>& w = written_[static_cast<size_t>(buf)];
    return w.empty() || w[static_cast<size_t>(elem)];
  }
  void markWritten(int buf, int64_t elem) {
    std::vector<uint8_t>& w = written_[static_cast<size_t>(buf)];
    if (!w.empty()) w[static_cast<size_t>(elem)] = 1;
  }

 private:
  std::vector<std::vector<uint8_t>> written_;
  bool any_ = false;
};

}  // namespace tl::sim
