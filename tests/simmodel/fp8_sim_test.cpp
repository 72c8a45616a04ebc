// fp8 in the simulator's memory model (issue 12): one byte per element, so a thread's 16
// contiguous fp8 values are one 16-byte access, and the bytes requested and sectors fetched are
// a quarter of the same count of f32 values (tests/thread/kernels/fp8_cast.tl).
#include <gtest/gtest.h>

#include <sstream>

#include "runtime/Driver.h"
#include "sim/MemoryModel.h"
#include "thread/Pipeline.h"

namespace tl::test {
namespace {

TEST(Fp8Sim, BytesAndVectorWidthsAreOneBytePerElement) {
  std::ostringstream err;
  auto k = compileKernelFile(std::string(TL_SOURCE_DIR) + "/tests/thread/kernels/fp8_cast.tl",
                             {{"N", "4096"}, {"BLOCK", "2048"}}, err);
  ASSERT_TRUE(k) << err.str();
  ThreadCompilation tc = compileToThreadIR(*k->ir, k->launch, 4);
  Memory mem = Memory::fromLaunch(k->launch);
  ExecOptions eo;
  eo.traceWarps = true;
  ExecResult run = runThreadIR(*tc.threadIR, k->launch, mem, eo);
  const GpuSpec gpu = loadGpu("h200");
  MemoryModelOptions mo;
  mo.sharedBytesPerSM = tc.threadIR->sharedBytes;
  MemoryReport r = analyzeMemory(run.accesses, gpu, mo);
  const InstrMemStats *x = nullptr, *q = nullptr;  // the f32 load of x (line 15), the fp8 load of q (line 22)
  for (const InstrMemStats& i : r.instructions) {
    if (i.store || i.space != MemSpace::Global) continue;
    if (i.loc.line == 15) x = &i;
    if (i.loc.line == 22) q = &i;
  }
  ASSERT_TRUE(x && q);
  EXPECT_EQ(q->bytesPerLane, 16);                       // 16 x fp8 in one 16-byte access
  EXPECT_EQ(q->counters.bytesRequested, 4096);          // N elements, one byte each
  EXPECT_EQ(x->counters.bytesRequested, 4 * 4096);      // the same N as f32
  EXPECT_EQ(q->counters.sectors, 4096 / 32);            // fully coalesced: 128 sectors of 32 bytes
  EXPECT_EQ(q->counters.sectors * 4, x->counters.sectors);
}

}  // namespace
}  // namespace tl::test
