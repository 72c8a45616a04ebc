// Helpers for the memory-model tests: hand-made warp accesses and small GPU descriptions.
//
//   WarpAccess a = warpAccess(MemSpace::Global, 4, [](int lane) { return 0x1000 + 4 * lane; });
#pragma once

#include <cstdint>
#include <functional>

#include "sim/Gpu.h"
#include "sim/ThreadExecutor.h"

namespace tl::test {

// A load of `bytes` per lane by the lanes of `mask`, lane l at address addrOf(l).
inline WarpAccess warpAccess(MemSpace space, int bytes, const std::function<uint64_t(int)>& addrOf,
                             uint32_t mask = 0xFFFFFFFFu, bool store = false, int instr = 0, int64_t block = 0) {
  WarpAccess a;
  a.block = block;
  a.instr = instr;
  a.space = space;
  a.store = store;
  a.bytes = static_cast<uint8_t>(bytes);
  a.activeMask = mask;
  a.loc = Loc{uint32_t(10 + instr), 5};
  for (int l = 0; l < 32; ++l)
    if (mask >> l & 1u) a.addr[l] = addrOf(l);
  return a;
}

// A GPU with the given L2 size and SM count, 32-byte sectors in 128-byte lines.
inline GpuSpec smallGpu(int l2Bytes, int smCount = 1, int l1Bytes = 0) {
  GpuSpec g;
  g.name = "test GPU";
  g.key = "test";
  g.smCount = smCount;
  g.l1BytesPerSM = l1Bytes;
  g.l2Bytes = l2Bytes;
  return g;
}

// An H200-like description (sim/gpus/h200.json is the real one): 132 SMs, 256 KB unified L1
// per SM, 50 MB of L2.
inline GpuSpec h200Like() {
  GpuSpec g = smallGpu(50 * 1024 * 1024, 132, 256 * 1024);
  g.key = "h200-like";
  g.sharedCarveoutsKB = {0, 8, 16, 32, 64, 100, 132, 164, 196, 228};
  return g;
}

}  // namespace tl::test
