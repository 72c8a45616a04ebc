// Issue 12, section 6: the thread stage's shared-memory plan must fit the target GPU's per-block
// limit (stages/thread/SharedMemory.cpp; sim/Gpu.h targetGpu(), default h200: maxSharedPerBlock
// 232448 bytes = 227 KB). A plan that does not is a RuntimeError at the first op whose buffers
// end past the limit, with the bytes it needs, its buffers, the limit and the GPU; a plan up to
// the limit passes, on every GPU description with its own limit.
//
// The kernels are kernels/matmul.tl with its tiles sized by --set: dot stages both operands in
// shared memory, live together, so it needs (BLOCK_M x BLOCK_K + BLOCK_K x BLOCK_N) x 4 bytes.
#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include "ir/Diagnostics.h"
#include "runtime/Driver.h"
#include "sim/Gpu.h"
#include "thread/Pipeline.h"

namespace tl {
namespace {

std::string matmulPath() { return std::string(TL_SOURCE_DIR) + "/kernels/matmul.tl"; }

// matmul.tl with tiles BM x BN x BK through the thread pipeline at 4 warps.
ThreadCompilation matmulThreadIR(int bm, int bn, int bk) {
  std::ostringstream err;
  auto k = compileKernelFile(matmulPath(),
                             {{"BLOCK_M", std::to_string(bm)}, {"BLOCK_N", std::to_string(bn)},
                              {"BLOCK_K", std::to_string(bk)}, {"M", "64"}, {"N", "64"}, {"K", std::to_string(bk)}},
                             err);
  if (!k) throw std::runtime_error(err.str());
  return compileToThreadIR(*k->ir, k->launch, 4);
}

// The line and column of `acc = dot(a, b, acc=acc)`'s `dot` in kernels/matmul.tl.
Loc dotLoc() {
  auto file = SourceFile::load(matmulPath());
  for (int line = 1; line <= file->numLines(); ++line) {
    std::string_view text = file->line(line);
    if (size_t col = text.find("dot(a, b"); col != std::string_view::npos) return {uint32_t(line), uint32_t(col + 1)};
  }
  return {};
}

// Restores the default target GPU after a test that changed it.
struct TargetGpuGuard {
  ~TargetGpuGuard() { resetTargetGpu(); }
};

TEST(SharedLimit, TheDefaultTargetIsTheH200) {
  TargetGpuGuard guard;
  resetTargetGpu();
  GpuSpec g = targetGpu();
  EXPECT_EQ(g.key, "h200");
  EXPECT_EQ(g.maxSharedPerBlock, 232448);  // 227 KB, the opt-in maximum
}

TEST(SharedLimit, ADotOverTheLimitIsALocatedErrorWithTheNumbers) {
  TargetGpuGuard guard;
  resetTargetGpu();
  // a, transposed and padded by 16 bytes a row: 4096 x (16 + 4) x 4 = 327680 bytes; b: 4096 x 16 x 4 =
  // 262144: 589824 bytes at the dot.
  try {
    matmulThreadIR(16, 16, 4096);
    FAIL() << "a 512 KB dot compiled";
  } catch (const RuntimeError& e) {
    std::string msg = e.what();
    EXPECT_EQ(e.loc, dotLoc()) << msg;
    EXPECT_NE(msg.find("dot needs 589824 bytes (576 KB) of shared memory per block"), std::string::npos) << msg;
    EXPECT_NE(msg.find("dot operand a, transposed [K][M + pad] 327680 + dot operand b [K][N] 262144 bytes, live together"),
              std::string::npos)
        << msg;
    EXPECT_NE(msg.find("more than the 232448 bytes (227 KB) one block may use on h200 (NVIDIA H200"),
              std::string::npos)
        << msg;
  }
}

TEST(SharedLimit, UpToTheLimitCompilesAndRecordsThePeak) {
  TargetGpuGuard guard;
  resetTargetGpu();
  // a, transposed with a 16-byte pad a row: 512 x (32 + 4) x 4 = 73728, b: 512 x 16 x 4 = 32768:
  // 106496 bytes (104 KB), over 48 KB, under 227.
  ThreadCompilation tc = matmulThreadIR(32, 16, 512);
  EXPECT_EQ(tc.threadIR->sharedBytes, 106496);
  EXPECT_EQ(tc.shared.peakBytes, 106496);
  // 48 KB exactly (512 x (16 + 4) x 4 + 512 x 4 x 4), the static case.
  EXPECT_EQ(matmulThreadIR(16, 4, 512).threadIR->sharedBytes, 49152);
}

TEST(SharedLimit, TheLimitIsTheTargetGpus) {
  TargetGpuGuard guard;
  // a: 512 x (64 + 4) x 4 = 139264, b: 512 x 32 x 4 = 65536: 204800 bytes (200 KB): fits the
  // H200's 227 KB, not the A100's 163 KB.
  setTargetGpu(loadGpu("h200"));
  EXPECT_EQ(matmulThreadIR(64, 32, 512).threadIR->sharedBytes, 204800);
  GpuSpec a100 = loadGpu("a100");
  ASSERT_EQ(a100.maxSharedPerBlock, 166912);
  setTargetGpu(a100);
  try {
    matmulThreadIR(64, 32, 512);
    FAIL() << "200 KB compiled for the A100";
  } catch (const RuntimeError& e) {
    std::string msg = e.what();
    EXPECT_EQ(e.loc, dotLoc()) << msg;
    EXPECT_NE(msg.find("dot needs 204800 bytes (200 KB)"), std::string::npos) << msg;
    EXPECT_NE(msg.find("more than the 166912 bytes (163 KB) one block may use on a100"), std::string::npos) << msg;
  }
}

SharedBuffer buf(const char* op, uint32_t line, int64_t bytes, int64_t index, const char* purpose = "staging") {
  SharedBuffer b;
  b.op = op;
  b.purpose = purpose;
  b.loc = {line, 5};
  b.bytes = bytes;
  b.firstOp = b.lastOp = index;
  return b;
}

TEST(SharedLimit, TheBoundaryIsInclusiveAndTheFirstOpOverItIsBlamed) {
  TargetGpuGuard guard;
  resetTargetGpu();
  const int64_t limit = targetGpu().maxSharedPerBlock;
  // Exactly the limit fits.
  std::vector<SharedBuffer> fits{buf("convert_layout", 3, limit, 0)};
  EXPECT_EQ(allocateSharedMemory(fits), limit);
  std::vector<SharedBuffer> one{buf("convert_layout", 3, limit + 16, 0, "convert_layout")};
  try {
    allocateSharedMemory(one);
    FAIL() << "16 bytes over the limit were allocated";
  } catch (const RuntimeError& e) {
    EXPECT_NE(std::string(e.what()).find("convert_layout needs " + std::to_string(limit + 16) +
                                         " bytes of shared memory per block (one buffer: convert_layout), "),
              std::string::npos)
        << e.what();
  }
  // One byte more does not; of two ops over the limit, the earlier one in program order is named.
  std::vector<SharedBuffer> over{buf("reduce", 9, 1024, 4), buf("dot", 7, limit + 1, 2), buf("convert_layout", 8, 2 * limit, 3)};
  try {
    allocateSharedMemory(over);
    FAIL() << "one byte over the limit was allocated";
  } catch (const RuntimeError& e) {
    EXPECT_EQ(e.loc.line, 7u);
    EXPECT_NE(std::string(e.what()).find("dot needs " + std::to_string(limit + 1) + " bytes"), std::string::npos)
        << e.what();
  }
  // Two buffers of one op that each fit but not together: their sum, aligned, is what it needs.
  std::vector<SharedBuffer> pair{buf("dot", 4, limit / 2 + 8, 1, "a"), buf("dot", 4, limit / 2 + 8, 1, "b")};
  try {
    allocateSharedMemory(pair);
    FAIL() << "two halves over the limit were allocated";
  } catch (const RuntimeError& e) {
    std::string msg = e.what();
    EXPECT_EQ(e.loc.line, 4u);
    EXPECT_NE(msg.find("a " + std::to_string(limit / 2 + 8) + " + b " + std::to_string(limit / 2 + 8)), std::string::npos)
        << msg;
  }
}

}  // namespace
}  // namespace tl
