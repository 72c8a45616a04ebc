// End-to-end tests of the thread stage: every kernel in kernels/*.tl, at its default and its
// ragged size, at num_warps 1, 2, 4 and 8, goes through the layout passes and the lowering to
// thread IR (with and without keepLayouts), runs on the warp-level executor (with race detection
// on), and every output is compared with tl-scalar's. Also: a lowered reduction with one barrier removed is reported as
// a shared-memory race at its source line, and an out-of-bounds access at the load's line.
#include <gtest/gtest.h>

#include <tuple>

#include "Harness.h"
#include "ir/Printer.h"
#include "ir/Verifier.h"
#include "sim/ThreadExecutor.h"
#include "thread/Pipeline.h"

namespace tl::e2e {
namespace {

using ThreadParam = std::tuple<KernelCase, Size, int>;

std::string threadParamName(const testing::TestParamInfo<ThreadParam>& info) {
  return std::get<0>(info.param).stem + "_" + sizeName(std::get<1>(info.param)) + "_w" +
         std::to_string(std::get<2>(info.param));
}

// The thread IR compiled with `keepLayouts` (or not) against tl-scalar's outputs.
void checkThreadVsScalar(const KernelCase& kernel, Size size, int numWarps, bool keepLayouts);

class ThreadRun : public testing::TestWithParam<ThreadParam> {};
TEST_P(ThreadRun, ThreadVsScalar) {
  const auto& [kernel, size, numWarps] = GetParam();
  checkThreadVsScalar(kernel, size, numWarps, false);
}

// The same with --keep-layouts: the layouts the source implies (stores uncoalesced where the
// source makes them so) compute the same outputs.
class ThreadRunKeepLayouts : public testing::TestWithParam<ThreadParam> {};
TEST_P(ThreadRunKeepLayouts, ThreadVsScalar) {
  const auto& [kernel, size, numWarps] = GetParam();
  checkThreadVsScalar(kernel, size, numWarps, true);
}

void checkThreadVsScalar(const KernelCase& kernel, Size size, int numWarps, bool keepLayouts) {
  const ScalarRun& ref = scalarRun(kernel, size);
  ASSERT_TRUE(ref.error.empty()) << ref.error;

  ThreadCompilation tc;
  try {
    tc = compileToThreadIR(*ref.compiled.fn, ref.compiled.launch, ThreadCompileOptions{numWarps, keepLayouts});
  } catch (const IRError& e) {
    FAIL() << kernel.stem << ": internal compiler error at " << e.loc.line << ":" << e.loc.col << ": " << e.what();
  }
  ASSERT_EQ(tc.threadIR->numWarps, numWarps);

  Memory memory = Memory::fromLaunch(ref.compiled.launch);
  try {
    runThreadIR(*tc.threadIR, ref.compiled.launch, memory);
  } catch (const RuntimeError& e) {
    FAIL() << renderDiagnostic(ref.compiled.file.get(), Severity::Error, e.loc, e.what());
  }
  int outputs = 0;
  for (const Buffer& want : ref.memory.buffers()) {
    if (!want.output) continue;
    ++outputs;
    const Buffer* got = memory.find(want.name);
    ASSERT_NE(got, nullptr) << want.name;
    Comparison c = compareBuffers(want, *got);
    EXPECT_TRUE(c.pass) << kernel.stem << " " << want.name << ": " << c.mismatches << " mismatches, max abs err "
                        << c.maxAbsErr << ", worst element " << c.worstIndex << " " << c.reason;
  }
  EXPECT_GT(outputs, 0);
}

std::vector<ThreadParam> allThreadCases() {
  std::vector<ThreadParam> out;
  for (const auto& k : discoverKernels())
    for (Size s : {Size::Default, Size::Ragged})
      for (int w : {1, 2, 4, 8}) out.emplace_back(k, s, w);
  return out;
}

INSTANTIATE_TEST_SUITE_P(Kernels, ThreadRun, testing::ValuesIn(allThreadCases()), threadParamName);
INSTANTIATE_TEST_SUITE_P(Kernels, ThreadRunKeepLayouts, testing::ValuesIn(allThreadCases()), threadParamName);

// Compiles kernels/<stem>.tl at its default launch to thread IR.
ThreadCompilation lowerDefault(const std::string& stem, Compiled& compiled) {
  KernelCase k{stem, std::string(TL_SOURCE_DIR) + "/kernels/" + stem + ".tl"};
  std::string error;
  EXPECT_TRUE(compileCase(k, Size::Default, compiled, error)) << error;
  return compileToThreadIR(*compiled.fn, compiled.launch);
}

// Removes the `n`-th barrier (pre-order) of the function; false when there are fewer.
bool removeBarrier(Function& fn, int n) {
  int seen = 0;
  bool removed = false;
  std::function<void(Region&)> visit = [&](Region& r) {
    for (size_t i = 0; i < r.ops.size() && !removed; ++i) {
      if (r.ops[i]->kind == OpKind::Barrier && seen++ == n) {
        r.ops.erase(r.ops.begin() + static_cast<std::ptrdiff_t>(i));
        removed = true;
        return;
      }
      for (auto& sub : r.ops[i]->regions) visit(*sub);
    }
  };
  visit(fn.body);
  return removed;
}

TEST(ThreadRaces, RemovingTheReductionBarrierIsReportedAtItsLine) {
  Compiled compiled;
  ThreadCompilation tc = lowerDefault("softmax", compiled);
  // The softmax's row max (kernels/softmax.tl line 15) is the first cross-warp reduction: its
  // partials go through shared memory, then a barrier, then every thread reads them.
  ASSERT_TRUE(removeBarrier(*tc.threadIR, 0));
  ASSERT_EQ(verifyFunction(*tc.threadIR), "");
  Memory memory = Memory::fromLaunch(compiled.launch);
  try {
    runThreadIR(*tc.threadIR, compiled.launch, memory);
    FAIL() << "the race was not detected";
  } catch (const RuntimeError& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("race"), std::string::npos) << msg;
    EXPECT_EQ(e.loc.line, 15u) << msg;
    EXPECT_NE(msg.find("15:"), std::string::npos) << "the message names the reduction's line: " << msg;
  }
}

TEST(ThreadRaces, TheIntactReductionHasNoRace) {
  Compiled compiled;
  ThreadCompilation tc = lowerDefault("softmax", compiled);
  Memory memory = Memory::fromLaunch(compiled.launch);
  EXPECT_NO_THROW(runThreadIR(*tc.threadIR, compiled.launch, memory));
}

TEST(ThreadBounds, OutOfBoundsLoadIsReportedAtTheLoad) {
  KernelCase k{"softmax", std::string(TL_SOURCE_DIR) + "/kernels/softmax.tl"};
  DiagEngine diag;
  auto file = SourceFile::load(k.path);
  diag.setFile(file);
  auto parsed = parseKernelFile(file, diag);
  ASSERT_TRUE(parsed && !diag.hasErrors()) << diag.renderAll();
  // A row stride larger than the row makes the last rows read past the buffer.
  LaunchConfig launch = evalLaunch(*parsed, {{"stride", "800"}}, diag);
  auto fn = compileKernel(*parsed, specializationFor(*parsed, launch), diag);
  ASSERT_TRUE(fn) << diag.renderAll();
  ThreadCompilation tc = compileToThreadIR(*fn, launch);
  Memory memory = Memory::fromLaunch(launch);
  try {
    runThreadIR(*tc.threadIR, launch, memory);
    FAIL() << "the out-of-bounds load was not detected";
  } catch (const RuntimeError& e) {
    std::string msg = e.what();
    EXPECT_EQ(e.loc.line, 14u) << msg;
    EXPECT_NE(msg.find("out of bounds"), std::string::npos) << msg;
    EXPECT_NE(msg.find("x_ptr"), std::string::npos) << msg;
  }
}

TEST(ThreadLayouts, ContiguousF32LoadsBecome16ByteAccessesWhereAligned) {
  // vector_add's rows start 256-byte aligned and N is not needed for alignment: every load and
  // store is a 16-byte vector access.
  Compiled compiled;
  ThreadCompilation tc = lowerDefault("vector_add", compiled);
  int memOps = 0;
  walk(tc.threadIR->body, [&](Op& op) {
    if (op.kind != OpKind::LdGlobal && op.kind != OpKind::StGlobal) return;
    ++memOps;
    EXPECT_EQ(op.intAttr("vec"), 4) << printFunction(*tc.threadIR);
  });
  EXPECT_EQ(memOps, 3);
}

}  // namespace
}  // namespace tl::e2e
