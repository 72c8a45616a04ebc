// Every kernel of kernels/ lowers to verified thread IR that prints and parses back, at
// num_warps 1, 2, 4 and 8; the softmax's reductions have the structure the docs describe.
#include <filesystem>
#include <fstream>

#include "ir/Parser.h"
#include "ir/Printer.h"
#include "lower_helpers.h"
#include "sim/ThreadExecutor.h"
#include "thread/Pipeline.h"

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
// 32 lanes, and a round through shared memory across the 4 warps: a barrier, then lane l reads
// partial l % 4 and a 2-step butterfly combines the four. Both run once (the function's top
// level), so each keeps its 16 bytes to the end and needs no barrier after its reads.
TEST(LowerSoftmax, ReductionStructure) {
  Lowered l = lowerKernel("softmax", 4);
  ASSERT_TRUE(l.thread);
  const Function& t = *l.thread;
  EXPECT_EQ(countOps(t, OpKind::RegReduce), 2);
  EXPECT_EQ(countOps(t, OpKind::ShflXor), 14);
  EXPECT_EQ(countOps(t, OpKind::Barrier), 2);
  EXPECT_EQ(countOps(t, OpKind::StShared), 2);
  EXPECT_EQ(countOps(t, OpKind::LdShared), 2);  // one partial a lane per reduction
  EXPECT_EQ(countOps(t, OpKind::LdGlobal), 1);
  EXPECT_EQ(countOps(t, OpKind::StGlobal), 1);
  std::vector<int64_t> offsets;
  walk(t.body, [&](Op& op) {
    if (op.kind == OpKind::ShflXor) offsets.push_back(op.intAttr("offset"));
    if (op.kind == OpKind::RegReduce) {
      EXPECT_EQ(op.intAttr("group"), 8);
    }
  });
  EXPECT_EQ(offsets, (std::vector<int64_t>{1, 2, 4, 8, 16, 1, 2, 1, 2, 4, 8, 16, 1, 2}));
  // Two reductions, each buffer kept to the end: 16 bytes (4 warps x f32) each, apart.
  ASSERT_EQ(l.report.buffers.size(), 2u);
  EXPECT_EQ(l.report.buffers[0].offset, 0);
  EXPECT_EQ(l.report.buffers[1].offset, 16);
  EXPECT_EQ(t.sharedBytes, 32);
  EXPECT_NE(l.report.str().find("reduce across warps (kept to the end: no barrier after)"), std::string::npos);
}

// A reduction inside a loop runs again in the next iteration, into the same bytes: it keeps
// the barrier after its reads. So does a user's debug_barrier at the end of a kernel, which
// may order global memory: only the lowering's own barriers are dropped.
TEST(LowerReduce, InALoopTheBarrierAfterTheReadsStays) {
  const std::string path = ::testing::TempDir() + "/rows_in_loop.tl";
  std::ofstream(path) << R"(@launch(M=8, N=256, BLOCK=256, grid=(1,), X=randn((M, N), seed=1), S=zeros(M, output=True))
@jit
def rows(X, S, M, N, BLOCK: constexpr):
    cols = arange(0, BLOCK)
    for r in range(0, M):
        s = sum(load(X + r * N + cols, mask=cols < N, other=0.0), axis=0)
        store(S + r, s)
    debug_barrier()
)";
  std::ostringstream err;
  auto k = compileKernelFile(path, {}, err);
  ASSERT_TRUE(k) << err.str();
  ThreadCompilation tc = compileToThreadIR(*k->ir, k->launch, 4);
  const Function& t = *tc.threadIR;
  const Op* loop = nullptr;
  for (const auto& op : t.body.ops)
    if (op->kind == OpKind::For) loop = op.get();
  ASSERT_TRUE(loop) << printFunction(t);
  int64_t inLoop = 0;
  walk(loop->region(0), [&](Op& op) { inLoop += op.kind == OpKind::Barrier; });
  EXPECT_EQ(inLoop, 2) << printFunction(t);  // before the reads and after them
  EXPECT_EQ(t.body.ops.back()->kind, OpKind::Return);
  ASSERT_GE(t.body.ops.size(), 2u);
  EXPECT_EQ(t.body.ops[t.body.ops.size() - 2]->kind, OpKind::Barrier) << printFunction(t);  // the debug_barrier
  EXPECT_EQ(tc.shared.str().find("kept to the end"), std::string::npos) << tc.shared.str();
  // And it computes the row sums.
  Memory m = Memory::fromLaunch(k->launch);
  runThreadIR(t, k->launch, m);
  const Buffer *x = m.find("X"), *sums = m.find("S");
  for (int64_t r = 0; r < 8; ++r) {
    double want = 0;
    for (int64_t c = 0; c < 256; ++c) want += x->getF(r * 256 + c);
    EXPECT_NEAR(sums->getF(r), want, 1e-4);
  }
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
