// Races between programs and initcheck in the thread executor (issue 12, section 7;
// sim/GlobalRaces.h, docs/executor.md section 9), on kernels of tests/thread/kernels/ and
// kernels/triton/, at several num_warps and sizes:
//   - a one-pass sum with load + add + store into one accumulator is caught, naming both
//     programs, both threads, both source lines (the error is located at the later access) and
//     the element; the same sum with atomic_add is clean and right;
//   - the spin-lock kernels (t05_layer_norm_bwd_dx.tl, atomic_lock.tl) are clean, and the same
//     lock with a relaxed release, or without the barrier before it, is caught;
//   - programs writing disjoint halves are clean; a program reading another's block without
//     ordering is caught; programs storing the same bytes to one element are clean, other bytes
//     race (and the run goes on to its end before the race is reported);
//   - the "last program" ticket (acq_rel atomic_add whose old value is used) orders the partials;
//     relaxed, it does not;
//   - initcheck: reading an element of an empty() buffer before any write is caught (line,
//     program, element); after the program's own write it is clean;
//   - detectRaces = false turns the check off; a tiny shadow cap stops it with a note, no error.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>

#include "runtime/Driver.h"
#include "sim/ThreadExecutor.h"
#include "thread/Pipeline.h"

namespace tl {
namespace {

std::string testKernel(const std::string& stem) { return std::string(TL_SOURCE_DIR) + "/tests/thread/kernels/" + stem + ".tl"; }

std::unique_ptr<CompiledKernel> compile(const std::string& path, const std::vector<LaunchOverride>& overrides = {}) {
  std::ostringstream err;
  auto k = compileKernelFile(path, overrides, err);
  EXPECT_TRUE(k) << path << ": " << err.str();
  return k;
}

// How a run ended: "" when clean, else the RuntimeError's message; `loc` gets its location.
struct Outcome {
  std::string error;
  Loc loc;
  ExecResult result;
  Memory memory;
};

Outcome run(const CompiledKernel& k, int numWarps, const ExecOptions& eo = {}) {
  ThreadCompilation tc = compileToThreadIR(*k.ir, k.launch, numWarps);
  Outcome o;
  o.memory = Memory::fromLaunch(k.launch);
  try {
    o.result = runThreadIR(*tc.threadIR, k.launch, o.memory, eo);
  } catch (const RuntimeError& e) {
    o.error = e.what();
    o.loc = e.loc;
  }
  return o;
}

// "line:col" of the first occurrence of `text` in the kernel's source (1-based, as Loc).
std::string locOf(const std::string& path, const std::string& text) {
  std::ifstream in(path);
  std::string line;
  for (int n = 1; std::getline(in, line); ++n)
    if (auto c = line.find(text); c != std::string::npos) return std::to_string(n) + ":" + std::to_string(c + 1);
  ADD_FAILURE() << "'" << text << "' is not in " << path;
  return "?";
}

std::string str(Loc l) { return std::to_string(l.line) + ":" + std::to_string(l.col); }

// A copy of `from` with `what` replaced by `with`, for a variant of a kernel.
std::string variant(const std::string& from, const std::string& what, const std::string& with, const std::string& name) {
  std::ifstream in(from);
  std::stringstream ss;
  ss << in.rdbuf();
  std::string text = ss.str();
  const size_t at = text.find(what);
  EXPECT_NE(at, std::string::npos) << what;
  if (at != std::string::npos) text.replace(at, what.size(), with);
  const std::string path = testing::TempDir() + "/" + name + ".tl";
  std::ofstream(path) << text;
  return path;
}

TEST(ProgramRaces, OnePassSumWithLoadAndStoreIsCaught) {
  const std::string path = testKernel("race_sum_load_store");
  const std::string load = locOf(path, "load(out_ptr)"), store = locOf(path, "store(out_ptr");
  for (int nw : {1, 4, 8})
    for (const char* n : {"4000", "1025"}) {
      auto k = compile(path, {{"N", n}});
      ASSERT_TRUE(k);
      Outcome o = run(*k, nw);
      SCOPED_TRACE("num_warps " + std::to_string(nw) + ", N " + n);
      ASSERT_NE(o.error, "") << "the lost-update sum must be reported";
      EXPECT_NE(o.error.find("global-memory race between programs: address "), std::string::npos) << o.error;
      EXPECT_NE(o.error.find("(out_ptr[0])"), std::string::npos) << o.error;
      // Program 0 stored the total; program 1 then loads it with nothing ordering the two.
      EXPECT_NE(o.error.find("program 0 (block (0, 0, 0)), thread 0 (warp 0, lane 0), wrote it at " + store), std::string::npos)
          << o.error;
      EXPECT_NE(o.error.find("program 1 (block (1, 0, 0)), thread "), std::string::npos) << o.error;
      EXPECT_NE(o.error.find("read it at " + load + " (instruction "), std::string::npos) << o.error;
      EXPECT_EQ(str(o.loc), load) << "the caret goes to the later access";
    }
}

TEST(ProgramRaces, OnePassSumWithAtomicAddIsCleanAndRight) {
  for (int nw : {1, 4, 8})
    for (const char* n : {"4000", "1025"}) {
      auto k = compile(testKernel("race_sum_atomic"), {{"N", n}});
      ASSERT_TRUE(k);
      Outcome o = run(*k, nw);
      ASSERT_EQ(o.error, "") << "num_warps " << nw;
      const Buffer& x = *o.memory.find("x_ptr");
      double want = 0;
      for (int64_t i = 0; i < x.numel(); ++i) want += x.getF(i);
      EXPECT_NEAR(o.memory.find("out_ptr")->getF(0), want, 1e-3);
    }
}

TEST(ProgramRaces, SpinLockKernelsAreClean) {
  const std::string t05 = std::string(TL_SOURCE_DIR) + "/kernels/triton/t05_layer_norm_bwd_dx.tl";
  for (int nw : {1, 2, 4, 8}) {
    for (const std::vector<LaunchOverride>& ov :
         {std::vector<LaunchOverride>{}, {{"M", "70"}, {"GROUP_SIZE_M", "3"}}, {{"M", "5"}, {"N", "40"}}}) {
      auto k = compile(t05, ov);
      ASSERT_TRUE(k);
      EXPECT_EQ(run(*k, nw).error, "") << "t05, num_warps " << nw;
    }
    auto lock = compile(testKernel("atomic_lock"));
    ASSERT_TRUE(lock);
    Outcome o = run(*lock, nw);
    EXPECT_EQ(o.error, "") << "atomic_lock, num_warps " << nw;
    EXPECT_EQ(o.memory.find("count_ptr")->getI(0), 24);
  }
}

TEST(ProgramRaces, TheLockIsWhatOrdersTheCriticalSections) {
  // A relaxed release publishes nothing: the next program's load of the count races with the
  // store before it.
  const std::string relaxed = variant(testKernel("atomic_lock"), "atomic_xchg(lock_ptr, 0)",
                                      "atomic_xchg(lock_ptr, 0, sem=\"relaxed\")", "atomic_lock_relaxed");
  auto k = compile(relaxed);
  ASSERT_TRUE(k);
  Outcome o = run(*k, 4);
  EXPECT_NE(o.error.find("global-memory race between programs: address "), std::string::npos) << o.error;
  EXPECT_NE(o.error.find("(count_ptr[0])"), std::string::npos) << o.error;
  EXPECT_EQ(str(o.loc), locOf(relaxed, "load(count_ptr)"));
  // Without the barrier before the release, warps 1-3 read the count after warp 0 let go of the
  // lock (the executor runs warp 0 to its end first, as a GPU may).
  const std::string nobar = variant(testKernel("atomic_lock"), "debug_barrier()", "pass", "atomic_lock_nobarrier");
  auto kb = compile(nobar);
  ASSERT_TRUE(kb);
  Outcome ob = run(*kb, 4);
  EXPECT_NE(ob.error.find("global-memory race between programs"), std::string::npos) << ob.error;
  EXPECT_EQ(run(*kb, 1).error, "") << "one warp: program order, the release comes after every access";
}

TEST(ProgramRaces, DisjointHalvesAreClean) {
  for (int nw : {1, 2, 4}) {
    auto k = compile(testKernel("race_halves"));
    ASSERT_TRUE(k);
    Outcome o = run(*k, nw);
    ASSERT_EQ(o.error, "");
    EXPECT_FLOAT_EQ(o.memory.find("out_ptr")->getF(300), float(o.memory.find("x_ptr")->getF(300) * 2.0 + 1.0));
  }
}

TEST(ProgramRaces, StoresOfTheSameBytesAreFineOtherBytesRace) {
  const std::string path = testKernel("race_same_value");
  for (int nw : {1, 2}) {
    auto same = compile(path);
    ASSERT_TRUE(same);
    EXPECT_EQ(run(*same, nw).error, "");
    auto diff = compile(path, {{"DIFF", "1"}});
    ASSERT_TRUE(diff);
    Outcome o = run(*diff, nw);
    EXPECT_NE(o.error.find("global-memory race between programs: address "), std::string::npos) << o.error;
    EXPECT_NE(o.error.find("(out_ptr[0])"), std::string::npos) << o.error;
    const std::string store = locOf(path, "store(out_ptr");
    EXPECT_NE(o.error.find("program 0 (block (0, 0, 0)), thread 0 (warp 0, lane 0), wrote it at " + store), std::string::npos)
        << o.error;
    EXPECT_NE(o.error.find("program 1 (block (1, 0, 0)), thread 0 (warp 0, lane 0), wrote it at " + store), std::string::npos)
        << o.error;
    // The run went on to the end before reporting: every program stored, the last one last.
    EXPECT_EQ(o.memory.find("out_ptr")->getF(5), 5.0 + 3.0);
  }
}

TEST(ProgramRaces, ReadingAnotherProgramsWriteIsCaught) {
  const std::string path = testKernel("race_read_other");
  for (int nw : {1, 2, 4})
    for (const char* n : {"1024", "2048"}) {
      auto k = compile(path, {{"N", n}});
      ASSERT_TRUE(k);
      Outcome o = run(*k, nw);
      SCOPED_TRACE("num_warps " + std::to_string(nw) + ", N " + n);
      EXPECT_NE(o.error.find("global-memory race between programs: address "), std::string::npos) << o.error;
      EXPECT_NE(o.error.find("(tmp_ptr[0])"), std::string::npos) << o.error;  // program 1 reads program 0's block
      EXPECT_NE(o.error.find("program 0 (block (0, 0, 0)), thread 0 (warp 0, lane 0), wrote it at " +
                             locOf(path, "store(tmp_ptr")), std::string::npos) << o.error;
      EXPECT_NE(o.error.find("program 1 (block (1, 0, 0)), thread 0 (warp 0, lane 0), read it at " +
                             locOf(path, "load(tmp_ptr")), std::string::npos) << o.error;
    }
}

TEST(ProgramRaces, AnAcquiredTicketOrdersAndARelaxedOneDoesNot) {
  const std::string path = testKernel("race_last_program");
  for (const char* p : {"8", "5"}) {
    auto k = compile(path, {{"P", p}});
    ASSERT_TRUE(k);
    Outcome o = run(*k, 2);
    ASSERT_EQ(o.error, "") << "P " << p;
    const Buffer& x = *o.memory.find("x_ptr");
    double want = 0;
    for (int64_t i = 0; i < x.numel(); ++i) want += x.getF(i);
    EXPECT_NEAR(o.memory.find("out_ptr")->getF(0), want, 1e-3);
    auto relaxed = compile(path, {{"P", p}, {"SEM", "\"relaxed\""}});
    ASSERT_TRUE(relaxed);
    Outcome r = run(*relaxed, 2);
    EXPECT_NE(r.error.find("global-memory race between programs: address "), std::string::npos) << r.error;
    EXPECT_NE(r.error.find("(part_ptr[0])"), std::string::npos) << r.error;
    EXPECT_NE(r.error.find("program " + std::to_string(std::stoi(p) - 1) + " (block ("), std::string::npos) << r.error;
  }
}

TEST(ProgramRaces, EmptyBufferReadBeforeAnyWriteIsCaught) {
  const std::string path = testKernel("initcheck_empty");
  for (int nw : {1, 2}) {
    auto k = compile(path, {{"W", "100"}});
    ASSERT_TRUE(k);
    Outcome o = run(*k, nw);
    EXPECT_NE(o.error.find("read of uninitialized memory: "), std::string::npos) << o.error;
    // The first element read unwritten is one of W..BLOCK-1 of program 0's block (which one
    // depends on the layout: the first lane in lane order holding one).
    std::smatch m;
    ASSERT_TRUE(std::regex_search(o.error, m, std::regex(R"(\(tmp_ptr\[(\d+)\]\) is in 'tmp_ptr', which the launch allocates with empty\(\))")))
        << o.error;
    EXPECT_GE(std::stoi(m[1]), 100) << o.error;
    EXPECT_LT(std::stoi(m[1]), 256) << o.error;
    EXPECT_NE(o.error.find("in program 0 (block (0, 0, 0)), thread "), std::string::npos) << o.error;
    EXPECT_EQ(str(o.loc), locOf(path, "load(tmp_ptr"));
    // Written first by the program itself: clean, and the data went through.
    auto full = compile(path);
    ASSERT_TRUE(full);
    Outcome c = run(*full, nw);
    ASSERT_EQ(c.error, "");
    EXPECT_FLOAT_EQ(c.memory.find("out_ptr")->getF(511), float((c.memory.find("x_ptr")->getF(511) + 1.0) * 3.0));
    // initCheck off: the poison (NaN) flows through instead.
    ExecOptions off;
    off.initCheck = false;
    Outcome n = run(*k, nw, off);
    ASSERT_EQ(n.error, "");
    EXPECT_TRUE(std::isnan(n.memory.find("out_ptr")->getF(100)));
  }
}

TEST(ProgramRaces, DetectRacesOffTurnsTheCheckOff) {
  auto k = compile(testKernel("race_sum_load_store"));
  ASSERT_TRUE(k);
  ExecOptions off;
  off.detectRaces = false;
  Outcome o = run(*k, 4, off);
  EXPECT_EQ(o.error, "");
  EXPECT_TRUE(o.result.notes.empty());
}

TEST(ProgramRaces, TheShadowCapStopsDetectionWithANote) {
  // Program 1 races on out_ptr[0]; with a cap smaller than one shadow page nothing is checked.
  auto k = compile(testKernel("race_sum_load_store"));
  ASSERT_TRUE(k);
  ExecOptions capped;
  capped.maxRaceShadowBytes = 1000;
  Outcome o = run(*k, 4, capped);
  EXPECT_EQ(o.error, "");
  ASSERT_EQ(o.result.notes.size(), 1u);
  EXPECT_NE(o.result.notes[0].find("race detection between programs stopped at program 0: its shadow state would "
                                   "pass 1000 bytes (at buffer 'x_ptr', 4000 elements)"), std::string::npos)
      << o.result.notes[0];
  // A cap that fits the shadow of this launch (two pages) still finds the race.
  capped.maxRaceShadowBytes = 1 << 20;
  EXPECT_NE(run(*k, 4, capped).error.find("global-memory race between programs"), std::string::npos);
}

}  // namespace
}  // namespace tl
