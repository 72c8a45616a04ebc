// Correctness against intent (runtime/Checks.h) in every CPU stage, and the command line every
// stage tool shares (runtime/Driver.h). The kernels are in tests/checks/kernels: each wrong one
// PASSes stage agreement — the bug is in the kernel, so tl-scalar runs it too — and must be caught
// by --reference, --expect or the never-written report.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "block/BlockInterpreter.h"
#include "ir/Pass.h"
#include "runtime/Driver.h"
#include "scalar/ScalarInterpreter.h"
#include "sim/ThreadExecutor.h"
#include "thread/Pipeline.h"

namespace tl {
namespace {

namespace fs = std::filesystem;

std::string kernel(const std::string& name) { return std::string(TL_SOURCE_DIR) + "/tests/checks/kernels/" + name; }

std::unique_ptr<CompiledKernel> compile(const std::string& name, const std::vector<LaunchOverride>& sets = {}) {
  std::ostringstream err;
  auto k = compileKernelFile(kernel(name), sets, err);
  EXPECT_TRUE(k) << err.str();
  return k;
}

// The three CPU stages, each run over a fresh memory from the kernel's launch.
enum class Stage { Scalar, Block, Thread };
Memory runStageOn(Stage s, CompiledKernel& k) {
  Memory m = Memory::fromLaunch(k.launch);
  switch (s) {
    case Stage::Scalar: runScalar(*k.ir, k.launch, m); break;
    case Stage::Block: {
      auto fn = cloneFunction(*k.ir);
      blockPipeline().run(*fn);
      runBlock(*fn, k.launch, m);
      break;
    }
    case Stage::Thread: {
      ThreadCompilation tc = compileToThreadIR(*k.ir, k.launch, 0, nullptr);
      ExecOptions eo;
      eo.recordAccesses = false;
      runThreadIR(*tc.threadIR, k.launch, m, eo);
      break;
    }
  }
  return m;
}

class EveryStage : public ::testing::TestWithParam<Stage> {};

TEST_P(EveryStage, ReportsNeverWrittenOutputs) {
  auto k = compile("floor_grid.tl");
  ASSERT_TRUE(k);
  Memory m = runStageOn(GetParam(), *k);
  std::vector<UnwrittenOutput> u = findUnwritten(m);
  ASSERT_EQ(u.size(), 1u);
  EXPECT_EQ(u[0].output, "out_ptr");
  EXPECT_EQ(u[0].unwritten.count, 673);  // 100001 - 97 * 1024
  EXPECT_EQ(u[0].unwritten.first, 99328);
  EXPECT_EQ(describeUnwritten(u[0]), "673 of 100001 elements of out_ptr were never stored (first at [99328])");

  // The intended kernel stores every element: nothing to report.
  auto good = compile("scale.tl");
  ASSERT_TRUE(good);
  EXPECT_TRUE(findUnwritten(runStageOn(GetParam(), *good)).empty());
}

TEST_P(EveryStage, ReferenceCatchesWhatStageAgreementCannot) {
  auto bad = compile("transpose_wrong_axis.tl");
  ASSERT_TRUE(bad);
  Memory got = runStageOn(GetParam(), *bad);
  std::ostringstream out;
  // Stage agreement passes: tl-scalar runs the same bug.
  const Engine scalar = scalarEngine();
  CheckReport agree = runChecks(*bad, got, IntentOptions{}, {}, scalar, &scalar, nullptr, out);
  EXPECT_TRUE(agree.pass()) << out.str();
  EXPECT_FALSE(agree.intentChecked);
  EXPECT_NE(out.str().find("vs tl-scalar (stage agreement)"), std::string::npos) << out.str();

  IntentOptions intent;
  intent.reference = kernel("transpose.tl");
  out.str("");
  CheckReport r = runChecks(*bad, got, intent, {}, scalar, &scalar, nullptr, out);
  EXPECT_TRUE(r.intentChecked);
  EXPECT_FALSE(r.pass()) << out.str();
  ASSERT_EQ(r.outputs.size(), 2u);  // the reference, then stage agreement
  EXPECT_EQ(r.outputs[0].kind, CheckAgainst::Reference);
  EXPECT_FALSE(r.outputs[0].cmp.pass);
  EXPECT_TRUE(r.outputs[1].cmp.pass);
  // The FAIL line names the reference and gives a 2-D index into out (64 x 96).
  EXPECT_NE(out.str().find("FAIL out_ptr    vs reference transpose.tl (tl-scalar)  64x96 f32"), std::string::npos)
      << out.str();
  EXPECT_NE(out.str().find("worst element ["), std::string::npos) << out.str();
  EXPECT_NE(out.str().find(", "), std::string::npos);

  // The right kernel passes against the reference.
  auto good = compile("transpose.tl");
  ASSERT_TRUE(good);
  Memory right = runStageOn(GetParam(), *good);
  out.str("");
  EXPECT_TRUE(runChecks(*good, right, intent, {}, scalar, nullptr, nullptr, out).pass()) << out.str();
}

INSTANTIATE_TEST_SUITE_P(Checks, EveryStage, ::testing::Values(Stage::Scalar, Stage::Block, Stage::Thread),
                         [](const auto& info) {
                           switch (info.param) {
                             case Stage::Scalar: return std::string("tl_scalar");
                             case Stage::Block: return std::string("tl_block");
                             default: return std::string("tl_thread");
                           }
                         });

TEST(Checks, ReferenceRunsOnTheKernelsOwnInputs) {
  // scale_seed2.tl's own @launch fills x with seed 2 and uses another BLOCK: the reference must
  // still compute from the checked kernel's inputs (seed 1), with its own grid.
  auto k = compile("scale.tl");
  ASSERT_TRUE(k);
  Memory got = runStageOn(Stage::Scalar, *k);
  IntentOptions intent;
  intent.reference = kernel("scale_seed2.tl");
  std::ostringstream out;
  CheckReport r = runChecks(*k, got, intent, {}, scalarEngine(), nullptr, nullptr, out);
  EXPECT_TRUE(r.pass()) << out.str();
  ASSERT_EQ(r.outputs.size(), 1u);
  EXPECT_EQ(r.outputs[0].cmp.maxAbsErr, 0.0);
}

TEST(Checks, ReferenceWithOtherSizesIsAnErrorWithTheReason) {
  auto k = compile("scale.tl", {{"N", "5000"}});
  ASSERT_TRUE(k);
  Memory got = runStageOn(Stage::Scalar, *k);
  IntentOptions intent;
  intent.reference = kernel("scale_seed2.tl");
  std::ostringstream out;
  try {
    runChecks(*k, got, intent, {}, scalarEngine(), nullptr, nullptr, out);
    FAIL() << "a reference of another size must be refused";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("give both the same sizes (--set)"), std::string::npos) << e.what();
  }
  // With the same overrides both kernels describe one problem.
  out.str("");
  EXPECT_TRUE(runChecks(*k, got, intent, {{"N", "5000"}}, scalarEngine(), nullptr, nullptr, out).pass()) << out.str();
}

TEST(Checks, ExpectComparesWithAFile) {
  fs::path dir = fs::temp_directory_path() / ("tl-checks-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  auto good = compile("scale.tl");
  auto bad = compile("floor_grid.tl");
  ASSERT_TRUE(good && bad);
  Memory expected = runStageOn(Stage::Scalar, *good);
  std::string file = (dir / "out.npy").string();
  writeNpy(file, *expected.find("out_ptr"));

  IntentOptions intent;
  intent.expects = {"out_ptr=" + file};
  std::ostringstream out;
  CheckReport r = runChecks(*bad, runStageOn(Stage::Block, *bad), intent, {}, scalarEngine(), nullptr, nullptr, out);
  ASSERT_EQ(r.outputs.size(), 1u);
  EXPECT_FALSE(r.pass());
  EXPECT_EQ(r.outputs[0].cmp.mismatches, 673) << out.str();
  EXPECT_NE(out.str().find("vs expected out.npy"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("warning: 673 of 100001 elements of out_ptr were never stored"), std::string::npos);
  nlohmann::json j = toJson(r);
  EXPECT_EQ(j["unwritten"][0]["count"], 673);
  EXPECT_EQ(j["outputs"][0]["against"], "expected");

  intent.expects = {"x_ptr=" + file};  // an input, not an output
  EXPECT_THROW(runChecks(*bad, runStageOn(Stage::Block, *bad), intent, {}, scalarEngine(), nullptr, nullptr, out),
               std::runtime_error);
  fs::remove_all(dir);
}

TEST(Checks, OutOfBoundsSuggestsTheMask) {
  auto k = compile("unmasked.tl");
  ASSERT_TRUE(k);
  for (Stage s : {Stage::Scalar, Stage::Block, Stage::Thread}) {
    try {
      runStageOn(s, *k);
      ADD_FAILURE() << "the unmasked load must fault";
    } catch (const RuntimeError& e) {
      EXPECT_NE(std::string(e.what()).find("this load has no mask: guard the ragged edge with mask="),
                std::string::npos)
          << e.what();
    }
  }
}

TEST(Checks, FormatIndexIsMultiDimensional) {
  EXPECT_EQ(formatIndex({100001}, 99328), "[99328]");
  EXPECT_EQ(formatIndex({64, 96}, 96 * 3 + 17), "[3, 17]");
  EXPECT_EQ(formatIndex({2, 3, 4}, 23), "[1, 2, 3]");
  EXPECT_EQ(plural(1, "kernel"), "1 kernel");
  EXPECT_EQ(plural(3, "kernel"), "3 kernels");
}

// ----- the command line, as a user runs the tools

struct ToolRun {
  int status = -1;
  std::string out;
};
ToolRun runTool(const std::string& tool, const std::string& args) {
  fs::path log = fs::temp_directory_path() / ("tl-checks-log-" + std::to_string(::getpid()) + ".txt");
  std::string exe = std::string(TL_BINARY_DIR) + "/stages/" + tool;
  std::string cmd = "cd " + std::string(TL_SOURCE_DIR) + " && " + exe + " " + args + " > " + log.string() + " 2>&1";
  ToolRun r;
  int st = std::system(cmd.c_str());
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  std::ifstream f(log);
  r.out.assign(std::istreambuf_iterator<char>(f), {});
  fs::remove(log);
  return r;
}

TEST(StageCli, RepeatableOptionsNeverEatTheKernelPath) {
  // Before: `--set N=30 k.tl` took k.tl as a second --set value and failed.
  ToolRun r = runTool("scalar/tl-scalar", "--set N=30 tests/checks/kernels/scale.tl");
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("N=30"), std::string::npos) << r.out;
  // Before: `--show-map x k.tl` ran every shipped kernel.
  r = runTool("thread/tl-thread", "--show-map x kernels/softmax.tl --quiet");
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_EQ(r.out.find("kernels/vector_add.tl"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("== kernels/softmax.tl"), std::string::npos) << r.out;
}

TEST(StageCli, EveryToolHasVersionAndTheSameCheckOptions) {
  for (const char* tool : {"scalar/tl-scalar", "block/tl-block", "thread/tl-thread"}) {
    ToolRun v = runTool(tool, "--version");
    EXPECT_EQ(v.status, 0) << tool << v.out;
    EXPECT_NE(v.out.find("tilelab "), std::string::npos) << tool << v.out;
    ToolRun h = runTool(tool, "--help");
    EXPECT_NE(h.out.find("--expect"), std::string::npos) << tool;
    EXPECT_NE(h.out.find("--reference"), std::string::npos) << tool;
    EXPECT_EQ(h.out.find("--no-compare"), std::string::npos) << tool;
  }
  // tl-scalar is the reference: it has no stage to agree with, so no --no-check.
  EXPECT_EQ(runTool("scalar/tl-scalar", "--help").out.find("--no-check"), std::string::npos);
  ToolRun t = runTool("thread/tl-thread", "--help");
  EXPECT_NE(t.out.find("--race-check"), std::string::npos);
  EXPECT_NE(t.out.find("--no-race-check"), std::string::npos);
  EXPECT_NE(runTool("thread/tl-thread", "--num-warps 0 kernels/softmax.tl").status, 0);
}

// tl-ptx names its output folder --results-dir (tl-sim and tl-viz read results with --measured)
// and its stage-agreement engine --check-stage (--reference is the intent check everywhere).
TEST(StageCli, TlPtxUsesTheSharedNames) {
  if (!fs::exists(std::string(TL_BINARY_DIR) + "/stages/ptx/tl-ptx")) GTEST_SKIP() << "tl-ptx is not built";
  ToolRun v = runTool("ptx/tl-ptx", "--version");
  EXPECT_EQ(v.status, 0) << v.out;
  EXPECT_NE(v.out.find("tilelab "), std::string::npos) << v.out;
  std::string help = runTool("ptx/tl-ptx", "--help").out;
  for (const char* opt : {"--results-dir", "--check-stage", "--reference", "--expect", "--no-check", "--keep-layouts"})
    EXPECT_NE(help.find(opt), std::string::npos) << opt;
  EXPECT_EQ(help.find("--results "), std::string::npos) << help;
  EXPECT_NE(runTool("ptx/tl-ptx", "--reference block kernels/softmax.tl").status, 0);  // no longer an engine name
  // Missing files are refused when the options are read, even where no GPU would open them.
  ToolRun r = runTool("ptx/tl-ptx", "kernels/softmax.tl --expect out_ptr=/nonexistent.npy");
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.out.find("no such file: /nonexistent.npy"), std::string::npos) << r.out;
  r = runTool("ptx/tl-ptx", "kernels/softmax.tl --input x_ptr=/nonexistent.npy");
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.out.find("no such file: /nonexistent.npy"), std::string::npos) << r.out;
}

TEST(StageCli, ReferenceFailsAWrongKernelWithExitCode1) {
  ToolRun r = runTool("block/tl-block", "tests/checks/kernels/floor_grid.tl --reference tests/checks/kernels/scale.tl");
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_NE(r.out.find("FAIL out_ptr    vs reference scale.tl (tl-scalar)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("PASS out_ptr    vs tl-scalar (stage agreement)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("warning: 673 of 100001 elements of out_ptr were never stored (first at [99328])"),
            std::string::npos)
      << r.out;
  // Only stage agreement: the closing note says what that PASS means.
  ToolRun s = runTool("block/tl-block", "tests/checks/kernels/floor_grid.tl");
  EXPECT_EQ(s.status, 0) << s.out;
  EXPECT_NE(s.out.find("PASS above means the stages agree"), std::string::npos) << s.out;
}

}  // namespace
}  // namespace tl
