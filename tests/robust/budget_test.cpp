// Issue 11, item 11: every CPU engine runs within a work budget (runtime/Budget.h). A run past
// it is a RuntimeError at the op that was running, naming the budget and how to raise it; a run
// within it is untouched; the budget is the process's (--max-steps) and each engine has a
// default. The CLI: exit 1 with the located message.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <sys/wait.h>

#include "../common/TempDir.h"
#include "block/BlockInterpreter.h"
#include "runtime/Budget.h"
#include "runtime/Driver.h"
#include "scalar/ScalarInterpreter.h"
#include "sim/ThreadExecutor.h"
#include "thread/Pipeline.h"

namespace tl {
namespace {

// 2^31 - 1 iterations of a 64-element add: hours on any engine without a budget.
const char* kLoop = R"(@launch(N=64, BLOCK=64, grid=(1,), x_ptr=randn(N, seed=1), out_ptr=zeros(N, output=True))
@jit
def spin(x_ptr, out_ptr, N, BLOCK: constexpr):
    offs = arange(0, BLOCK)
    acc = load(x_ptr + offs)
    for i in range(0, 2147483647):
        acc = acc + 1.0
    store(out_ptr + offs, acc)
)";

// Many cheap programs: the grid, not a loop, is what runs long.
const char* kGrid = R"(@launch(N=100000000, BLOCK=4, grid=(cdiv(N, BLOCK),), out_ptr=zeros(8, output=True))
@jit
def wide(out_ptr, N, BLOCK: constexpr):
    offs = arange(0, BLOCK)
    store(out_ptr + offs, offs.to(f32), mask=offs < 0)
)";

struct BudgetTest : ::testing::Test {
  test::TempDir dir{"tl-budget"};
  void TearDown() override { workLimits() = WorkLimits{}; }
  std::unique_ptr<CompiledKernel> compile(const char* text) {
    std::ofstream(dir / "k.tl") << text;
    std::ostringstream err;
    auto k = compileKernelFile(dir / "k.tl", {}, err);
    EXPECT_TRUE(k) << err.str();
    return k;
  }
};

// The message every engine gives, at the loop's body or the for itself.
void expectBudgetError(const RuntimeError& e, const char* engine, int64_t budget) {
  std::string msg = e.what();
  EXPECT_NE(msg.find("exceeded its work budget of " + shortCount(budget) + " steps"), std::string::npos) << msg;
  EXPECT_NE(msg.find(engine), std::string::npos) << msg;
  EXPECT_NE(msg.find("--max-steps"), std::string::npos) << msg;
  EXPECT_TRUE(e.loc.line == 6 || e.loc.line == 7) << e.loc.line;
}

TEST_F(BudgetTest, ALongLoopStopsAtTheBudgetInEveryEngine) {
  auto k = compile(kLoop);
  ASSERT_TRUE(k);
  workLimits().maxSteps = 200000;
  workLimits().progress = false;
  {
    Memory m = Memory::fromLaunch(k->launch);
    try {
      runScalar(*k->ir, k->launch, m);
      ADD_FAILURE() << "tl-scalar ran past its budget";
    } catch (const RuntimeError& e) {
      expectBudgetError(e, "tl-scalar", 200000);
    }
  }
  {
    Memory m = Memory::fromLaunch(k->launch);
    try {
      runBlock(*k->ir, k->launch, m);
      ADD_FAILURE() << "tl-block ran past its budget";
    } catch (const RuntimeError& e) {
      expectBudgetError(e, "tl-block", 200000);
    }
  }
  {
    ThreadCompilation tc = compileToThreadIR(*k->ir, k->launch);
    Memory m = Memory::fromLaunch(k->launch);
    try {
      runThreadIR(*tc.threadIR, k->launch, m);
      ADD_FAILURE() << "the executor ran past its budget";
    } catch (const RuntimeError& e) {
      expectBudgetError(e, "thread executor", 200000);
      EXPECT_NE(std::string(e.what()).find("one warp instruction"), std::string::npos);
    }
  }
}

TEST_F(BudgetTest, AWideGridStopsAtTheBudgetAndSaysWhichProgram) {
  auto k = compile(kGrid);
  ASSERT_TRUE(k);
  workLimits().maxSteps = 1000;
  workLimits().progress = false;
  Memory m = Memory::fromLaunch(k->launch);
  try {
    runBlock(*k->ir, k->launch, m);
    ADD_FAILURE() << "25 million programs ran within 1000 steps";
  } catch (const RuntimeError& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find(" of 25000000 "), std::string::npos) << msg;
    EXPECT_EQ(msg.find("program 0 of"), std::string::npos) << msg;  // it ran some programs first
  }
}

TEST_F(BudgetTest, ARunWithinTheBudgetIsUntouched) {
  auto k = compile(R"(@launch(N=100, BLOCK=64, grid=(cdiv(N, BLOCK),), x_ptr=randn(N, seed=3), out_ptr=zeros(N, output=True))
@jit
def twice(x_ptr, out_ptr, N, BLOCK: constexpr):
    offs = program_id(0) * BLOCK + arange(0, BLOCK)
    x = load(x_ptr + offs, mask=offs < N)
    for i in range(0, 3):
        x = x + 0.0
    store(out_ptr + offs, x * 2.0, mask=offs < N)
)");
  ASSERT_TRUE(k);
  // A small budget, ample for 2 programs of about 20 ops on 64 elements.
  workLimits().maxSteps = 100000;
  Memory a = Memory::fromLaunch(k->launch), b = Memory::fromLaunch(k->launch);
  EXPECT_NO_THROW(runScalar(*k->ir, k->launch, a));
  EXPECT_NO_THROW(runBlock(*k->ir, k->launch, b));
  EXPECT_EQ(a.find("out_ptr")->bytes, b.find("out_ptr")->bytes);
  EXPECT_FLOAT_EQ(float(a.find("out_ptr")->getF(99)), float(2.0 * a.find("x_ptr")->getF(99)));
}

TEST_F(BudgetTest, EachEngineHasADefaultAndTheOptionReplacesIt) {
  WorkMeter scalar("tl-scalar", "program", 1, kScalarDefaultSteps, "x");
  EXPECT_EQ(scalar.budget(), kScalarDefaultSteps);
  workLimits().maxSteps = 12345;
  WorkMeter block("tl-block", "program", 1, kBlockDefaultSteps, "x");
  EXPECT_EQ(block.budget(), 12345);
  EXPECT_EQ(shortCount(kExecutorDefaultSteps), "1e10");
  EXPECT_EQ(shortCount(150000), "1.5e5");
  EXPECT_EQ(shortCount(999), "999");
}

// The tools, as a student runs them: exit 1 and a located error with a caret.
TEST_F(BudgetTest, TheStageToolsExitOneWithTheLocatedError) {
  std::ofstream(dir / "spin.tl") << kLoop;
  for (const char* tool : {"scalar/tl-scalar", "block/tl-block", "thread/tl-thread"}) {
    std::string cmd = std::string(TL_BINARY_DIR) + "/stages/" + tool + " " + (dir / "spin.tl") +
                      " --max-steps 100000 --no-progress 2>&1";
    FILE* p = popen(cmd.c_str(), "r");
    ASSERT_TRUE(p);
    std::string out;
    char buf[4096];
    while (size_t n = fread(buf, 1, sizeof buf, p)) out.append(buf, n);
    int status = pclose(p);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 1) << tool << "\n" << out;
    EXPECT_NE(out.find("spin.tl:"), std::string::npos) << out;
    EXPECT_NE(out.find(": error: the run exceeded its work budget of 1e5 steps"), std::string::npos) << out;
    EXPECT_NE(out.find("^"), std::string::npos) << out;
  }
}

}  // namespace
}  // namespace tl
