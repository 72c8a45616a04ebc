// The visualizer's session (viz/model/Session.h), without a window: the softmax through every
// stage, line links back to the source, located errors for edited sources, superseded jobs.
// Measured results and their pairing: measured_test.cpp.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "ir/Printer.h"
#include "thread/OwnershipMap.h"
#include "viz/model/LineLinks.h"
#include "viz/model/Measured.h"
#include "viz/model/Session.h"

namespace fs = std::filesystem;

namespace tl::viz {
namespace {

std::string kernelPath(const std::string& stem) { return std::string(TL_SOURCE_DIR) + "/kernels/" + stem + ".tl"; }

std::string readFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The 1-based line of the first line of `text` containing `needle` (0: none).
int lineOf(const std::string& text, const std::string& needle) {
  auto lines = splitLines(text);
  for (size_t i = 0; i < lines.size(); ++i)
    if (lines[i].find(needle) != std::string_view::npos) return static_cast<int>(i) + 1;
  return 0;
}

SessionInputs softmaxInputs() {
  SessionInputs in;
  in.path = kernelPath("softmax");
  in.predictTimings = false;
  return in;
}

// The softmax at its default launch, run once for the tests that only read it.
const SessionData& softmax() {
  static std::shared_ptr<const SessionData> data = runSession(softmaxInputs());
  return *data;
}

std::string errorsOf(const SessionData& d) {
  std::string s;
  for (const auto& e : d.errors) s += e.rendered;
  return s;
}

TEST(Session, SoftmaxGoesThroughEveryStage) {
  const SessionData& d = softmax();
  ASSERT_TRUE(d.errors.empty()) << errorsOf(d);
  EXPECT_EQ(d.phase, Phase::Simulated);
  EXPECT_EQ(d.kernelName, "softmax_kernel");
  EXPECT_NE(d.launchText.find("grid=(256,1,1)"), std::string::npos) << d.launchText;
  EXPECT_EQ(d.numWarps, 4);
  ASSERT_EQ(d.stages.size(), 6u);
  const char* names[] = {"source", "block IR", "layouts", "thread IR", "LLVM IR", "PTX"};
  for (size_t i = 0; i < 6; ++i) EXPECT_EQ(d.stages[i].name, names[i]);
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_FALSE(d.stages[i].text.empty()) << names[i];
    EXPECT_EQ(d.stages[i].sourceLine.size(), splitLines(d.stages[i].text).size()) << names[i];
  }
#if TL_VIZ_HAVE_PTX
  EXPECT_NE(d.stages[4].text.find("define"), std::string::npos);
  EXPECT_NE(d.stages[5].text.find(".entry softmax_kernel"), std::string::npos);
#else
  EXPECT_FALSE(d.stages[4].unavailable.empty());
  EXPECT_FALSE(d.stages[5].unavailable.empty());
#endif
  EXPECT_NE(d.stages[2].text.find("#blocked"), std::string::npos);
  EXPECT_NE(d.stages[3].text.find("thread_func"), std::string::npos);
}

TEST(Session, StagesLinkBackToTheSourceLine) {
  const SessionData& d = softmax();
  ASSERT_TRUE(d.errors.empty()) << errorsOf(d);
  int maxLine = lineOf(d.source, "max(x, axis=0)");
  ASSERT_GT(maxLine, 0);
  // Source: the line itself.
  EXPECT_EQ(linesForSourceLine(d.stages[0], maxLine), std::vector<int>{maxLine - 1});
  // Block IR: the reduce (and the subtraction on the same line).
  auto blockLines = splitLines(d.stages[1].text);
  bool sawReduce = false;
  for (int l : linesForSourceLine(d.stages[1], maxLine)) sawReduce |= blockLines[l].find("reduce") != std::string_view::npos;
  EXPECT_TRUE(sawReduce) << d.stages[1].text;
  // Thread IR: the cross-lane part of the max (shuffles) comes from the same line.
  auto threadLines = splitLines(d.stages[3].text);
  bool sawShuffle = false;
  for (int l : linesForSourceLine(d.stages[3], maxLine))
    sawShuffle |= threadLines[l].find("shfl_xor") != std::string_view::npos;
  EXPECT_TRUE(sawShuffle) << d.stages[3].text;
  // A line with no code (the comment header) has nothing.
  EXPECT_TRUE(linesForSourceLine(d.stages[3], 1).empty());
}

TEST(Session, ValuesAreNamedAsPrinted) {
  const SessionData& d = softmax();
  ASSERT_TRUE(d.errors.empty()) << errorsOf(d);
  ASSERT_TRUE(d.detail);
  ASSERT_FALSE(d.values.empty());
  const Function& withLayouts = *d.detail->compilation.withLayouts;
  std::string printed = printFunction(withLayouts);
  bool sawX1 = false;
  for (const auto& v : d.values) {
    ASSERT_TRUE(v.layout) << v.name;
    const Value* found = findValueByName(withLayouts, v.name);
    ASSERT_NE(found, nullptr) << v.name;
    EXPECT_EQ(found->type.str(), v.typeText) << v.name;
    EXPECT_NE(printed.find("  " + v.name + " = "), std::string::npos) << v.name;
    sawX1 |= v.name == "%x.1";
  }
  EXPECT_TRUE(sawX1);  // x is assigned twice: the printer's second name
  // Exactly one value is a load's result: the softmax's row, %x.
  int loaded = 0;
  for (const auto& v : d.values)
    if (v.loaded) {
      ++loaded;
      EXPECT_EQ(v.name, "%x");
    }
  EXPECT_EQ(loaded, 1);
}

TEST(Session, SimulationDetailAndSweep) {
  const SessionData& d = softmax();
  ASSERT_TRUE(d.errors.empty()) << errorsOf(d);
  ASSERT_TRUE(d.detail);
  EXPECT_TRUE(d.report.contains("timing"));
  EXPECT_TRUE(d.report.contains("fusion"));
  EXPECT_EQ(d.gpu.key, "h200");
  bool load = false, store = false;
  for (const auto& m : d.memInstrs) {
    load |= m.op == "ld_global" && !m.store && m.space == MemSpace::Global;
    store |= m.op == "st_global" && m.store;
    ASSERT_LT(static_cast<size_t>(m.instr), d.detail->instrs.size());
    EXPECT_EQ(std::string(mnemonic(d.detail->instrs[m.instr]->kind)), m.op);
  }
  EXPECT_TRUE(load && store);
  ASSERT_FALSE(d.byResident.empty());
  EXPECT_LE(d.byResident.size(), 32u);
  EXPECT_GE(d.defaultResident, 1);
  EXPECT_LE(d.defaultResident, static_cast<int>(d.byResident.size()));
  for (size_t r = 0; r < d.byResident.size(); ++r) {
    EXPECT_EQ(d.byResident[r].residentBlocksPerSM, static_cast<int>(r) + 1);
    EXPECT_GT(d.byResident[r].timeUs, 0);
  }
}

TEST(Session, EditedSourceWithAnErrorIsLocated) {
  SessionInputs in = softmaxInputs();
  in.source = readFile(in.path);
  ASSERT_FALSE(in.source.empty());
  int numLine = lineOf(in.source, "num = exp(x)");
  ASSERT_GT(numLine, 0);
  std::string edited = in.source;
  edited.replace(edited.find("num = exp(x)"), 12, "num = exp(y)");
  in.source = edited;
  auto d = runSession(in);
  ASSERT_FALSE(d->errors.empty());
  EXPECT_EQ(d->errors[0].line, numLine);
  EXPECT_GT(d->errors[0].col, 0);
  EXPECT_NE(d->errors[0].rendered.find("softmax.tl:" + std::to_string(numLine) + ":"), std::string::npos)
      << d->errors[0].rendered;
  EXPECT_NE(d->errors[0].rendered.find('^'), std::string::npos);
  ASSERT_EQ(d->stages.size(), 6u);
  EXPECT_EQ(d->stages[0].text, edited);
  EXPECT_FALSE(d->stages[1].unavailable.empty());
  EXPECT_FALSE(d->detail);
}

TEST(Session, SyntaxErrorsAndGarbageNeverCrash) {
  for (std::string src : {"@jit\ndef k(:\n", "\x01\x02\xff", "@launch(grid=(0,))\n@jit\ndef k():\n    pass\n", "x"}) {
    SessionInputs in = softmaxInputs();
    in.source = src;
    auto d = runSession(in);
    EXPECT_FALSE(d->errors.empty()) << src;
    EXPECT_EQ(d->phase, Phase::Simulated);
  }
}

TEST(Session, BadSetsGpuAndMissingFileAreErrors) {
  SessionInputs in = softmaxInputs();
  in.sets = {"N"};
  auto d = runSession(in);
  ASSERT_EQ(d->errors.size(), 1u);
  EXPECT_NE(d->errors[0].message.find("NAME=EXPR"), std::string::npos);

  in = softmaxInputs();
  in.sets = {"NOPE=undefined_name"};
  d = runSession(in);
  EXPECT_FALSE(d->errors.empty());

  in = softmaxInputs();
  in.gpu = "no_such_gpu";
  d = runSession(in);
  ASSERT_FALSE(d->errors.empty());
  EXPECT_FALSE(d->stages[3].text.empty());  // compiled; only the simulation failed

  in = softmaxInputs();
  in.path = "/nonexistent/kernel.tl";
  d = runSession(in);
  EXPECT_FALSE(d->errors.empty());
}

TEST(Session, OverridesAndNumWarpsApply) {
  SessionInputs in = softmaxInputs();
  in.sets = {"M=8", "N=100"};
  in.numWarps = 2;
  auto d = runSession(in);
  ASSERT_TRUE(d->errors.empty()) << errorsOf(*d);
  EXPECT_EQ(d->launch.grid[0], 8);
  EXPECT_EQ(d->numWarps, 2);
  EXPECT_NE(d->launchText.find("N=100"), std::string::npos);
  EXPECT_NE(d->stages[2].text.find("wpc=[2]"), std::string::npos);
  EXPECT_FALSE(d->measured.has_value());  // measured at other sizes: not this launch
}

// --keep-layouts reaches the layouts stage and the simulation: the naive transpose keeps its
// strided store (no convert_layout), which the compiler otherwise converts.
TEST(Session, KeepLayoutsReachesEveryStage) {
  SessionInputs in = softmaxInputs();
  in.path = std::string(TL_SOURCE_DIR) + "/kernels/transpose.tl";
  in.predictTimings = false;
  auto storeSectorsPerIdeal = [](const SessionData& d) {
    double worst = 0;
    for (const auto& i : d.report["memory"]["instructions"])
      if (i["space"] == "global" && i["store"].get<bool>())
        worst = std::max(worst, i["counters"]["sectors_per_ideal"].get<double>());
    return worst;
  };
  auto converted = runSession(in);
  ASSERT_TRUE(converted->errors.empty()) << errorsOf(*converted);
  in.keepLayouts = true;
  auto kept = runSession(in);
  ASSERT_TRUE(kept->errors.empty()) << errorsOf(*kept);
  EXPECT_NE(converted->stages[2].text.find("convert_layout"), std::string::npos);
  EXPECT_EQ(kept->stages[2].text.find("convert_layout"), std::string::npos);
  EXPECT_LT(storeSectorsPerIdeal(*converted), 1.5);
  EXPECT_GT(storeSectorsPerIdeal(*kept), 2.0);
  EXPECT_EQ(kept->report["compile"]["keep_layouts"], true);
}

// --grid and --input as the stage tools apply them (runtime/Driver's overridesFrom).
TEST(Session, GridAndInputOverrides) {
  SessionInputs in = softmaxInputs();
  in.sets = {"M=8", "N=100"};
  in.grid = "(4,)";
  auto d = runSession(in);
  ASSERT_TRUE(d->errors.empty()) << errorsOf(*d);
  EXPECT_EQ(d->launch.grid[0], 4);
  EXPECT_NE(d->launchText.find("grid=(4,1,1)"), std::string::npos) << d->launchText;
  in.grid.clear();
  in.inputs = {"x_ptr=/nonexistent/x.npy"};
  d = runSession(in);
  ASSERT_FALSE(d->errors.empty());
  EXPECT_NE(errorsOf(*d).find("/nonexistent/x.npy"), std::string::npos) << errorsOf(*d);
  in.inputs = {"no_equals_sign"};
  d = runSession(in);
  ASSERT_FALSE(d->errors.empty());
  EXPECT_NE(d->errors[0].message.find("--input expects PARAM=FILE"), std::string::npos) << d->errors[0].message;
}

TEST(Session, PublishesCompiledBeforeSimulatedAndHonoursCancel) {
  std::vector<Phase> phases;
  Progress progress;
  auto d = runSession(softmaxInputs(), 7, [&](std::shared_ptr<const SessionData> s) {
    phases.push_back(s->phase);
    EXPECT_EQ(s->generation, 7u);
    EXPECT_FALSE(s->stages.empty());
  }, nullptr, &progress);
  ASSERT_FALSE(phases.empty());
  EXPECT_EQ(phases[0], Phase::Compiled);
  EXPECT_FALSE(progress.busy);
  EXPECT_EQ(d->generation, 7u);

  std::atomic<bool> cancelled{true};
  bool published = false;
  d = runSession(softmaxInputs(), 8, [&](std::shared_ptr<const SessionData>) { published = true; }, &cancelled);
  EXPECT_FALSE(published);
  EXPECT_FALSE(d->detail);
  ASSERT_EQ(d->errors.size(), 1u);  // a partial result says it was cancelled
  EXPECT_NE(d->errors[0].message.find("cancelled"), std::string::npos);
}

TEST(Session, NewerSubmitSupersedesOlder) {
  Session s;
  EXPECT_EQ(s.current()->phase, Phase::Empty);
  SessionInputs a = softmaxInputs();
  SessionInputs b = softmaxInputs();
  b.sets = {"M=4", "N=64"};
  uint64_t g1 = s.submit(a);
  uint64_t g2 = s.submit(b);
  EXPECT_GT(g2, g1);
  ASSERT_TRUE(s.waitFor(g2, 300));
  auto d = s.current();
  EXPECT_EQ(d->generation, g2);
  EXPECT_EQ(d->phase, Phase::Simulated);
  EXPECT_EQ(d->launch.grid[0], 4);
  EXPECT_FALSE(s.progress().busy);
  // Waiting for an older generation returns at once once a newer one finished.
  EXPECT_TRUE(s.waitFor(g1, 0.01));
}

TEST(Session, DestroyingWhileBusyDoesNotHang) {
  Session s;
  s.submit(softmaxInputs());
  // The destructor cancels the job; the test finishing at all is the check.
}

TEST(Session, AbandonedSessionReturnsAtOnce) {
  auto start = std::chrono::steady_clock::now();
  {
    Session s;
    SessionInputs in = softmaxInputs();
    in.sets = {"M=4096"};  // seconds of simulation
    s.submit(in);
    std::this_thread::sleep_for(std::chrono::milliseconds(200));  // into the simulation step
    s.abandonOnDestroy();
  }
  // The destructor did not wait for the step in progress (the worker finishes it on its own).
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 1.0);
  std::this_thread::sleep_for(std::chrono::seconds(4));  // let it end before the test binary exits
}

// --wgmma (the Controls' "warpgroup MMAs" box): the session compiles and simulates the dot as
// warpgroup MMAs, and the thread-IR stage shows them.
TEST(Session, WgmmaRunsTheDotAsWarpgroupMmas) {
  SessionInputs in;
  in.path = kernelPath("matmul_tc");
  in.sets = {"BLOCK_M=64", "BLOCK_K=64", "a_ptr=randn((M, K), dtype=bf16, seed=1)", "b_ptr=randn((K, N), dtype=bf16, seed=2)"};
  in.predictTimings = false;
  in.wgmma = true;
  auto d = runSession(in);
  ASSERT_TRUE(d->errors.empty()) << errorsOf(*d);
  EXPECT_EQ(d->phase, Phase::Simulated);
  EXPECT_NE(d->stages[3].text.find("= wgmma "), std::string::npos);
  in.wgmma = false;
  auto m = runSession(in);
  ASSERT_TRUE(m->errors.empty()) << errorsOf(*m);
  EXPECT_EQ(m->stages[3].text.find("= wgmma "), std::string::npos);
}

}  // namespace
}  // namespace tl::viz
