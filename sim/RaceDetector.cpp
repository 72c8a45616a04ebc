// Shared-memory race detection: the shadow-state rules of RaceDetector.h.
#include "sim/RaceDetector.h"

namespace tl::sim {

void RaceDetector::reset(int64_t sharedBytes) {
  shadow_.assign(static_cast<size_t>(sharedBytes), ByteShadow{});
  epoch_ = 1;
}

void RaceDetector::newEpoch() {
  if (++epoch_ == 0) {  // wrapped after 4 billion epochs: forget everything and start again
    for (auto& s : shadow_) s = ByteShadow{};
    epoch_ = 1;
  }
}

bool RaceDetector::onRead(uint32_t offset, uint32_t bytes, int thread, int instr, RaceConflict& out) {
  const int warp = thread / 32;
  for (uint32_t b = offset; b < offset + bytes; ++b) {
    ByteShadow& s = shadow_[b];
    // Read after another warp's write in this epoch.
    if (s.writeEpoch == epoch_ && s.writer / 32 != warp) {
      out = RaceConflict{b, {s.writer, s.writeInstr, true}, {thread, instr, false}};
      return true;
    }
    if (s.readEpoch != epoch_) {
      s.readEpoch = epoch_;
      s.reader1 = static_cast<uint16_t>(thread);
      s.read1Instr = instr;
      s.reader2 = kNone;
    } else if (s.reader2 == kNone && s.reader1 / 32 != warp) {
      s.reader2 = static_cast<uint16_t>(thread);
      s.read2Instr = instr;
    }
  }
  return false;
}

bool RaceDetector::onWrite(uint32_t offset, uint32_t bytes, int thread, int instr, RaceConflict& out) {
  const int warp = thread / 32;
  for (uint32_t b = offset; b < offset + bytes; ++b) {
    ByteShadow& s = shadow_[b];
    // Write after another warp's write (even of the same value).
    if (s.writeEpoch == epoch_ && s.writer / 32 != warp) {
      out = RaceConflict{b, {s.writer, s.writeInstr, true}, {thread, instr, true}};
      return true;
    }
    // Write after another warp's read.
    if (s.readEpoch == epoch_) {
      if (s.reader1 / 32 != warp) {
        out = RaceConflict{b, {s.reader1, s.read1Instr, false}, {thread, instr, true}};
        return true;
      }
      if (s.reader2 != kNone && s.reader2 / 32 != warp) {
        out = RaceConflict{b, {s.reader2, s.read2Instr, false}, {thread, instr, true}};
        return true;
      }
    }
    s.writeEpoch = epoch_;
    s.writer = static_cast<uint16_t>(thread);
    s.writeInstr = instr;
  }
  return false;
}

}  // namespace tl::sim
