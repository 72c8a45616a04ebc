// Shared-memory bank conflicts of one warp access: see sim/Banks.h for the rules.
#include "sim/Banks.h"

#include <algorithm>

#include "sim/Coalescing.h"  // checkWarpAccess, kMaxAccessBytes

namespace tl {

int sharedLanesPerGroup(int bytes) {
  if (bytes > 8) return 8;   // 16-byte: quarter-warps (8 lanes x 16 B = 128 B)
  if (bytes > 4) return 16;  // 8-byte: half-warps (16 lanes x 8 B = 128 B)
  return 32;                 // up to 4 bytes: the whole warp
}

BankAccess banks(const WarpAccess& a) {
  checkWarpAccess(a);
  BankAccess r;
  r.lanesPerGroup = sharedLanesPerGroup(a.bytes);
  // Distinct words each bank must deliver in the current group, in first-request order. A lane
  // spans at most 5 consecutive words (16 misaligned bytes), all in different banks, so a bank
  // holds at most one word per lane: at most 32.
  constexpr int kMaxWordsPerBank = 32;
  std::array<std::array<uint64_t, kMaxWordsPerBank>, kBanks> words;
  std::array<int, kBanks> count;

  for (int g0 = 0; g0 < 32; g0 += r.lanesPerGroup) {
    count.fill(0);
    bool any = false;
    for (int lane = g0; lane < g0 + r.lanesPerGroup; ++lane) {
      if (!(a.activeMask >> lane & 1u)) continue;
      any = true;
      LaneBank& l = r.lanes[lane];
      uint64_t first = a.addr[lane] / kBankBytes, last = (a.addr[lane] + a.bytes - 1) / kBankBytes;
      l = LaneBank{true, a.addr[lane], a.bytes, first, int(last - first + 1), int(first % kBanks), g0 / r.lanesPerGroup, 0};
      int latest = 0;  // the lane's wavefront within the group: its latest word's rank
      for (uint64_t w = first; w <= last; ++w) {
        int b = int(w % kBanks);
        int rank = int(std::find(words[b].begin(), words[b].begin() + count[b], w) - words[b].begin());
        if (rank == count[b]) words[b][count[b]++] = w;
        latest = std::max(latest, rank);
      }
      l.wavefront = latest;  // made absolute once the group's base is known
    }
    if (!any) continue;
    int groupWavefronts = *std::max_element(count.begin(), count.end());
    for (int lane = g0; lane < g0 + r.lanesPerGroup; ++lane)
      if (r.lanes[lane].active) r.lanes[lane].wavefront += r.wavefronts;
    r.wavefronts += groupWavefronts;
    r.idealWavefronts += 1;
    r.maxWays = std::max(r.maxWays, groupWavefronts);
  }
  r.bankConflicts = r.wavefronts - r.idealWavefronts;
  return r;
}

}  // namespace tl
