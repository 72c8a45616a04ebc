// Every kernel of kernels/ lowers to verified thread IR that prints and parses back, at
// num_warps 1, 2, 4 and 8; the softmax's reductions have the structure the docs describe.
#include <filesystem>

#include "ir/Parser.h"
#include "ir/Printer.h"
#include "lower_helpers.h"

namespace tl::lowertest {
namespace {

std::vector<std::string> kernelStems() {
  std::vector<std::string> stems;
  for (const auto& e : std::filesystem::directory_iterator(std::string(TL_SOURCE_DIR) + "/kernels"))
    if (e.path().extension() == ".tl") stems.push_back(e.path().stem().string());
  std::sort(stems.begin(), stems.end());
  return stems;
}

struct Lowered {
  std::unique_ptr<CompiledKernel> kernel;
  std::unique_ptr<Function> thread;
  SharedMemoryReport report;
};

Lowered lowerKernel(const std::string& stem, int numWarps) {
  Lowered l;
  l.kernel = compileTestKernel(stem);
  if (!l.kernel) return l;
  assignTestLayouts(*l.kernel->ir, numWarps);
  std::string err = verifyFunction(*l.kernel->ir);
  EXPECT_EQ(err, "") << "test layouts are invalid for " << stem;
  if (!err.empty()) return l;
  l.thread = lowerToThreadIR(*l.kernel->ir, &l.report);
  return l;
}

class LowerKernel : public ::testing::TestWithParam<std::tuple<std::string, int>> {};

TEST_P(LowerKernel, VerifiesAndRoundTrips) {
  auto [stem, nw] = GetParam();
  Lowered l = lowerKernel(stem, nw);
  ASSERT_TRUE(l.thread);
  const Function& t = *l.thread;
  EXPECT_EQ(t.level, IRLevel::Thread);
  EXPECT_EQ(t.numWarps, nw);
  EXPECT_EQ(t.sharedBytes, l.report.peakBytes);
  EXPECT_EQ(verifyFunction(t), "");
  // No block-only op survives.
  walk(t.body, [&](Op& op) { EXPECT_TRUE(op.info().allowedIn(IRLevel::Thread)) << mnemonic(op.kind); });
  std::string text = printFunction(t);
  DiagEngine diag;
  auto parsed = parseFunction(text, diag);
  ASSERT_TRUE(parsed) << diag.renderAll() << "\n" << text;
  EXPECT_EQ(printFunction(*parsed), text);
}

INSTANTIATE_TEST_SUITE_P(Kernels, LowerKernel,
                         ::testing::Combine(::testing::ValuesIn(kernelStems()), ::testing::Values(1, 2, 4, 8)),
                         [](const auto& info) {
                           return std::get<0>(info.param) + "_w" + std::to_string(std::get<1>(info.param));
                         });

// softmax at num_warps 4: BLOCK_N = 1024 over 128 threads, 8 registers each. Each of the two
// row reductions (max, then sum) becomes one in-thread reg_reduce, a 5-step butterfly over the
// 32 lanes, and a round through shared memory across the 4 warps with two barriers.
TEST(LowerSoftmax, ReductionStructure) {
  Lowered l = lowerKernel("softmax", 4);
  ASSERT_TRUE(l.thread);
  const Function& t = *l.thread;
  EXPECT_EQ(countOps(t, OpKind::RegReduce), 2);
  EXPECT_EQ(countOps(t, OpKind::ShflXor), 10);
  EXPECT_EQ(countOps(t, OpKind::Barrier), 4);
  EXPECT_EQ(countOps(t, OpKind::StShared), 2);
  EXPECT_EQ(countOps(t, OpKind::LdShared), 8);  // 4 partials per reduction
  EXPECT_EQ(countOps(t, OpKind::LdGlobal), 1);
  EXPECT_EQ(countOps(t, OpKind::StGlobal), 1);
  std::vector<int64_t> offsets;
  walk(t.body, [&](Op& op) {
    if (op.kind == OpKind::ShflXor) offsets.push_back(op.intAttr("offset"));
    if (op.kind == OpKind::RegReduce) {
      EXPECT_EQ(op.intAttr("group"), 8);
    }
  });
  EXPECT_EQ(offsets, (std::vector<int64_t>{1, 2, 4, 8, 16, 1, 2, 4, 8, 16}));
  // Two reductions, never live together: one 16-byte buffer (4 warps x f32) reused.
  ASSERT_EQ(l.report.buffers.size(), 2u);
  EXPECT_EQ(l.report.buffers[0].offset, 0);
  EXPECT_EQ(l.report.buffers[1].offset, 0);
  EXPECT_EQ(t.sharedBytes, 16);
  EXPECT_NE(l.report.str().find("reduce across warps"), std::string::npos);
}

// At num_warps 1 nothing crosses warps: no shared memory and no barrier.
TEST(LowerSoftmax, OneWarpNeedsNoSharedMemory) {
  Lowered l = lowerKernel("softmax", 1);
  ASSERT_TRUE(l.thread);
  EXPECT_EQ(countOps(*l.thread, OpKind::Barrier), 0);
  EXPECT_EQ(l.thread->sharedBytes, 0);
  EXPECT_EQ(countOps(*l.thread, OpKind::ShflXor), 10);
}

// matmul: the dot stages a [32x16] transposed (16 x (32 + 4 of pad)) and b [16x32] f32 through two
// buffers live together, and runs a thread-level k loop of fma, unrolled.
TEST(LowerMatmul, DotStructure) {
  Lowered l = lowerKernel("matmul", 4);
  ASSERT_TRUE(l.thread);
  EXPECT_GE(countOps(*l.thread, OpKind::Fma), 1);
  int64_t aBytes = -1, bBytes = -1, aOff = -1, bOff = -1;
  for (const auto& b : l.report.buffers) {
    if (b.purpose.find("dot operand a") == 0) aBytes = b.bytes, aOff = b.offset;
    if (b.purpose.find("dot operand b") == 0) bBytes = b.bytes, bOff = b.offset;
  }
  EXPECT_EQ(aBytes, 16 * (32 + 4) * 4);
  EXPECT_EQ(bBytes, 16 * 32 * 4);
  EXPECT_TRUE(aOff + aBytes <= bOff || bOff + bBytes <= aOff) << l.report.str();
  EXPECT_GE(l.thread->sharedBytes, aBytes + bBytes);
}

}  // namespace
}  // namespace tl::lowertest
