// Global-memory checks between programs: the shadow-state and vector-clock rules of
// GlobalRaces.h.
#include "sim/GlobalRaces.h"

#include <algorithm>

#include "ir/FileRead.h"  // formatByteLimit

namespace tl::sim {

namespace {

// Clock work (vector-clock entries joined) a run may do before detection stops: a lock that
// every one of a million programs takes would otherwise cost a million squared.
constexpr int64_t kMaxClockWork = int64_t(1) << 28;


}  // namespace

void GlobalRaceDetector::reset(std::vector<std::pair<std::string, int64_t>> buffers, int64_t numBlocks,
                               int64_t maxBytes) {
  bufs_.clear();
  for (auto& [name, numel] : buffers) {
    Buf b;
    b.name = std::move(name);
    b.numel = numel;
    b.pages.resize(static_cast<size_t>((numel + (int64_t(1) << kPageBits) - 1) >> kPageBits));
    bufs_.push_back(std::move(b));
  }
  releases_.clear();
  vcGen_.clear();
  vcClock_.clear();
  vcList_.clear();
  vcActive_ = false;
  cur_ = 0;
  clock_ = 1;
  released_ = false;
  numBlocks_ = numBlocks;
  bytes_ = 0;
  maxBytes_ = maxBytes;
  clockWork_ = 0;
  stopReason_.clear();
  enabled_ = true;
  if (numBlocks >= int64_t(kNone)) stop("the grid has more than 2^32 - 2 blocks");
}

void GlobalRaceDetector::stop(const std::string& why) {
  if (!enabled_) return;
  enabled_ = false;
  stopReason_ = "race detection between programs stopped at program " + std::to_string(cur_) + ": " + why +
                "; accesses from there on are not checked against other programs";
  finish();  // give the memory back now: the run goes on without the detector
}

void GlobalRaceDetector::finish() {
  enabled_ = false;
  bufs_.clear();
  releases_.clear();
  vcGen_ = {};
  vcClock_ = {};
}

bool GlobalRaceDetector::charge(int64_t bytes, const std::string& what) {
  if (bytes_ + bytes <= maxBytes_) {
    bytes_ += bytes;
    return true;
  }
  stop("its shadow state would pass " + formatByteLimit(uint64_t(maxBytes_)) + " (" + what + ")");
  return false;
}

bool GlobalRaceDetector::tooLarge(int thread, int instr) {
  stop("thread " + std::to_string(thread) + " or instruction " + std::to_string(instr) + " is past what the shadow encodes");
  return false;
}

void GlobalRaceDetector::beginBlock(int64_t block) {
  cur_ = static_cast<uint32_t>(block);
  clock_ = 1;
  released_ = false;
  vcActive_ = false;
  vcList_.clear();
}

GlobalRaceDetector::Shadow* GlobalRaceDetector::newPage(int buf, int64_t elem) {
  Buf& b = bufs_[static_cast<size_t>(buf)];
  std::unique_ptr<Shadow[]>& page = b.pages[static_cast<size_t>(elem >> kPageBits)];
  const int64_t full = int64_t(1) << kPageBits, start = elem & ~(full - 1);
  const int64_t n = std::min(full, b.numel - start);  // a small buffer gets a small page
  if (!charge(n * int64_t(sizeof(Shadow)), "at buffer '" + b.name + "', " + std::to_string(b.numel) + " elements"))
    return nullptr;
  page.reset(new Shadow[static_cast<size_t>(n)]);
  return &page[static_cast<size_t>(elem - start)];
}

GlobalAccess GlobalRaceDetector::describe(const Access& a, GlobalAccessKind kind) {
  return GlobalAccess{int64_t(a.block), int(a.info & 1023u), int(a.info >> 11), kind};
}

// Keeps x as a reader: readers that happened before x are dropped (a write ordered after x is
// ordered after them too), unless x is an atomic read and they are plain (a later atomic write
// must still be checked against them); two concurrent readers are kept, the older forgotten.
void GlobalRaceDetector::addReader(Shadow& s, const Access& x) {
  const bool xAtomic = x.info & kAtomicBit;
  for (Access& r : s.read)
    if (r.block != kNone && ordered(r) && (!xAtomic || (r.info & kAtomicBit))) r.block = kNone;
  for (Access& r : s.read)
    if (r.block == kNone) {
      r = x;
      return;
    }
  s.read[0] = s.read[1];
  s.read[1] = x;
}

bool GlobalRaceDetector::onRead(int buf, int64_t elem, int thread, int instr, GlobalRace& out) {
  if (!enabled_ || !fits(thread, instr)) return false;
  Shadow* s = shadow(buf, elem);
  if (!s) return false;
  const Access x = now(thread, instr, false);
  if (race(s->write, GlobalAccessKind::Write, x, GlobalAccessKind::Read, out)) return true;
  if (race(s->atomicWrite, GlobalAccessKind::Atomic, x, GlobalAccessKind::Read, out)) return true;
  addReader(*s, x);
  return false;
}

bool GlobalRaceDetector::onWrite(int buf, int64_t elem, int thread, int instr, bool sameBytes, GlobalRace& out) {
  if (!enabled_ || !fits(thread, instr)) return false;
  Shadow* s = shadow(buf, elem);
  if (!s) return false;
  const Access x = now(thread, instr, false);
  if (!sameBytes && race(s->write, GlobalAccessKind::Write, x, GlobalAccessKind::Write, out)) return true;
  if (race(s->atomicWrite, GlobalAccessKind::Atomic, x, GlobalAccessKind::Write, out)) return true;
  for (const Access& r : s->read)
    if (race(r, readKind(r), x, GlobalAccessKind::Write, out)) return true;
  // Everything recorded happened before x: x alone stands for it from now on.
  s->write = x;
  s->atomicWrite = Access{};
  s->read[0] = s->read[1] = Access{};
  return false;
}

bool GlobalRaceDetector::onAtomic(int buf, int64_t elem, int thread, int instr, bool acq, bool rel, bool wrote,
                                  GlobalRace& out) {
  if (!enabled_ || !fits(thread, instr)) return false;
  const uint64_t key = uint64_t(buf) << 40 | uint64_t(elem);
  if (acq) acquire(key);
  if (!enabled_) return false;
  Shadow* s = shadow(buf, elem);
  if (!s) return false;
  const Access x = now(thread, instr, true);
  const GlobalAccessKind kind = wrote ? GlobalAccessKind::Atomic : GlobalAccessKind::AtomicRead;
  if (race(s->write, GlobalAccessKind::Write, x, kind, out)) return true;
  if (!wrote) {
    addReader(*s, x);
    return false;
  }
  for (const Access& r : s->read)
    if (!(r.info & kAtomicBit) && race(r, GlobalAccessKind::Read, x, kind, out)) return true;
  for (Access& r : s->read)  // plain readers are all ordered before x now; atomic ones may not be
    if (r.block != kNone && (!(r.info & kAtomicBit) || ordered(r))) r.block = kNone;
  s->atomicWrite = x;
  if (rel) release(key);
  return false;
}

void GlobalRaceDetector::acquire(uint64_t key) {
  auto it = releases_.find(key);
  if (it == releases_.end()) return;
  ReleaseClock& rc = it->second;
  if (rc.acquiredBy == cur_ && rc.acquiredVersion == rc.version) return;  // nothing new since
  rc.acquiredBy = cur_;
  rc.acquiredVersion = rc.version;
  if (vcGen_.empty()) {
    if (!charge(numBlocks_ * 8, "the vector clock of " + std::to_string(numBlocks_) + " programs")) return;
    vcGen_.assign(static_cast<size_t>(numBlocks_), 0);
    vcClock_.assign(static_cast<size_t>(numBlocks_), 0);
  }
  const uint32_t gen = cur_ + 1;
  for (const auto& [blk, clk] : rc.vc) {
    if (blk == cur_) continue;
    if (vcGen_[blk] != gen) {
      vcGen_[blk] = gen;
      vcClock_[blk] = clk;
      vcList_.push_back(blk);
    } else {
      vcClock_[blk] = std::max(vcClock_[blk], clk);
    }
  }
  vcActive_ = true;
  clockWork_ += int64_t(rc.vc.size());
  if (clockWork_ > kMaxClockWork) stop("the programs synchronize too often to track (" + std::to_string(kMaxClockWork) + " clock entries joined)");
}

void GlobalRaceDetector::release(uint64_t key) {
  ReleaseClock& rc = releases_[key];
  if (rc.vc.empty() && !charge(96, "the release clocks of atomics")) return;
  const size_t before = rc.vc.size();
  if (vcList_.empty()) {
    // Only the block's own clock; blocks run in increasing order, so it goes last.
    if (!rc.vc.empty() && rc.vc.back().first == cur_) rc.vc.back().second = std::max(rc.vc.back().second, clock_);
    else rc.vc.emplace_back(cur_, clock_);
  } else {
    std::vector<std::pair<uint32_t, uint32_t>> mine;
    mine.reserve(vcList_.size() + 1);
    for (uint32_t blk : vcList_) mine.emplace_back(blk, vcClock_[blk]);
    std::sort(mine.begin(), mine.end());
    mine.emplace_back(cur_, clock_);  // the largest block id
    std::vector<std::pair<uint32_t, uint32_t>> merged;
    merged.reserve(rc.vc.size() + mine.size());
    size_t i = 0, j = 0;
    while (i < rc.vc.size() || j < mine.size()) {
      if (j == mine.size() || (i < rc.vc.size() && rc.vc[i].first < mine[j].first)) merged.push_back(rc.vc[i++]);
      else if (i == rc.vc.size() || mine[j].first < rc.vc[i].first) merged.push_back(mine[j++]);
      else {
        merged.emplace_back(rc.vc[i].first, std::max(rc.vc[i].second, mine[j].second));
        ++i, ++j;
      }
    }
    clockWork_ += int64_t(merged.size());
    rc.vc.swap(merged);
  }
  ++rc.version;
  released_ = true;
  if (rc.vc.size() > before && !charge(int64_t(rc.vc.size() - before) * 8, "the release clocks of atomics")) return;
  if (clockWork_ > kMaxClockWork) stop("the programs synchronize too often to track (" + std::to_string(kMaxClockWork) + " clock entries joined)");
}

void GlobalRaceDetector::endAtomicInstruction() {
  if (!released_) return;
  released_ = false;
  if (++clock_ == kNone) stop("a program released more than 2^32 - 2 times");
}

void InitShadow::reset(const std::vector<int64_t>& uninitializedNumel) {
  written_.assign(uninitializedNumel.size(), {});
  any_ = false;
  for (size_t k = 0; k < uninitializedNumel.size(); ++k)
    if (uninitializedNumel[k] > 0) {
      written_[k].assign(static_cast<size_t>(uninitializedNumel[k]), 0);
      any_ = true;
    }
}

}  // namespace tl::sim
