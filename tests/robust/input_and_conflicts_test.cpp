// Issue 11, items 5 and 13: robust on careless input.
//   - `--input` mistakes are errors or do what they say: naming no parameter is a located error;
//     an output read from a file stays an output (compared, its never-written elements tracked);
//     an unannotated pointer takes its dtype from the .npy file (docs/language.md, file());
//     an annotated one still rejects a file of another dtype.
//   - write conflicts (docs/language.md, "Write conflicts"): two elements of one store writing one
//     address with different values are a located RuntimeError in tl-scalar, tl-block and the
//     thread executor, naming the elements (or threads: block, warps, lanes, registers); equal
//     values, a loop's iterations and two store ops writing one address are not conflicts.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <unistd.h>

#include "block/BlockInterpreter.h"
#include "runtime/Checks.h"
#include "runtime/Driver.h"
#include "scalar/ScalarInterpreter.h"
#include "sim/ThreadExecutor.h"
#include "thread/Pipeline.h"

namespace tl {
namespace {

namespace fs = std::filesystem;

// A scratch folder per test process, removed at exit.
struct Scratch {
  fs::path dir = fs::temp_directory_path() / ("tl-robust-" + std::to_string(::getpid()));
  Scratch() { fs::create_directories(dir); }
  ~Scratch() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
  std::string file(const std::string& name, const std::string& text) const {
    std::ofstream(dir / name) << text;
    return (dir / name).string();
  }
  std::string npy(const std::string& name, DType d, int64_t n, double (*value)(int64_t)) const {
    Memory m;
    Buffer& b = m.add(name, d, {n}, false);
    for (int64_t i = 0; i < n; ++i) isFloat(d) ? b.setF(i, value(i)) : b.setI(i, static_cast<int64_t>(value(i)));
    std::string path = (dir / name).string();
    writeNpy(path, b);
    return path;
  }
};
const Scratch& scratch() {
  static Scratch s;
  return s;
}

// `text` with its one occurrence of `from` replaced by `to`.
std::string replaced(std::string text, const std::string& from, const std::string& to) {
  size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return at == std::string::npos ? text : text.replace(at, from.size(), to);
}

std::unique_ptr<CompiledKernel> compile(const std::string& path, const StageOptions& opts, std::string* err = nullptr) {
  std::ostringstream e;
  auto k = compileKernelFile(path, overridesFrom(opts), e);
  if (err) *err = e.str();
  return k;
}

// out[i] = 2 * x[i] for i < N; the last program's tail past N is never stored when the output
// buffer is longer than N.
const char* kDouble = R"(@launch(N=100, BLOCK=64, grid=(cdiv(N, BLOCK),), x_ptr=randn(N, seed=3), out_ptr=zeros(N, output=True))
@jit
def double(x_ptr, out_ptr, N, BLOCK: constexpr):
    offs = program_id(0) * BLOCK + arange(0, BLOCK)
    x = load(x_ptr + offs, mask=offs < N)
    store(out_ptr + offs, x.to(f32) * 2.0, mask=offs < N)
)";

// ----- item 5: --input -------------------------------------------------------------------------

TEST(Input, NamingNoPointerParameterIsAnError) {
  std::string kernel = scratch().file("double.tl", kDouble);
  StageOptions o;
  o.inputs = {"nope=" + scratch().npy("x.npy", DType::F32, 100, [](int64_t i) { return double(i); })};
  std::string err;
  EXPECT_EQ(compile(kernel, o, &err), nullptr);
  EXPECT_NE(err.find("has no parameter 'nope'"), std::string::npos) << err;
}

TEST(Input, AnOutputReadFromAFileStaysAnOutput) {
  std::string kernel = scratch().file("double.tl", kDouble);
  // 120 elements for N=100: 20 are never stored, and the never-written report must say so.
  StageOptions o;
  o.inputs = {"out_ptr=" + scratch().npy("o.npy", DType::F32, 120, [](int64_t) { return 7.0; })};
  auto k = compile(kernel, o);
  ASSERT_TRUE(k);
  ASSERT_TRUE(k->launch.buffer("out_ptr"));
  EXPECT_TRUE(k->launch.buffer("out_ptr")->output);
  Memory got = Memory::fromLaunch(k->launch);
  runBlock(*k->ir, k->launch, got);
  EXPECT_DOUBLE_EQ(got.find("out_ptr")->getF(110), 7.0);  // the file's bytes where nothing stored
  std::ostringstream out;
  Engine scalar = scalarEngine();
  CheckReport r = runChecks(*k, got, {}, overridesFrom(o), scalar, &scalar, k->ir.get(), out);
  ASSERT_EQ(r.outputs.size(), 1u) << out.str();
  EXPECT_TRUE(r.pass()) << out.str();
  EXPECT_NE(out.str().find("PASS out_ptr"), std::string::npos) << out.str();
  ASSERT_EQ(r.unwritten.size(), 1u) << out.str();
  EXPECT_NE(out.str().find("20 of 120 elements of out_ptr were never stored (first at [100])"), std::string::npos)
      << out.str();
}

TEST(Input, OutputFalseOnAFileOverrideIsAnInput) {
  std::string kernel = scratch().file("double.tl", kDouble);
  StageOptions o;
  o.sets = {"out_ptr=file(\"" + scratch().npy("o2.npy", DType::F32, 100, [](int64_t) { return 0.0; }) +
            "\", output=False)"};
  auto k = compile(kernel, o);
  ASSERT_TRUE(k);
  EXPECT_FALSE(k->launch.buffer("out_ptr")->output);
  // And an input stays an input.
  StageOptions in;
  in.inputs = {"x_ptr=" + scratch().npy("x.npy", DType::F32, 100, [](int64_t i) { return double(i); })};
  k = compile(kernel, in);
  ASSERT_TRUE(k);
  EXPECT_FALSE(k->launch.buffer("x_ptr")->output);
}

TEST(Input, AnUnannotatedPointerTakesTheFilesDType) {
  std::string kernel = scratch().file("double.tl", kDouble);
  for (DType d : {DType::I32, DType::I64, DType::F16, DType::F32}) {
    StageOptions o;
    o.inputs = {"x_ptr=" + scratch().npy(std::string("x_") + dtypeName(d) + ".npy", d, 100,
                                         [](int64_t i) { return double(i % 17) - 5.0; })};
    std::string err;
    auto k = compile(kernel, o, &err);
    ASSERT_TRUE(k) << err;
    EXPECT_EQ(k->spec.paramTypes.at("x_ptr"), Type::ptr(d)) << dtypeName(d);
    Memory mem = Memory::fromLaunch(k->launch);
    EXPECT_EQ(mem.find("x_ptr")->dtype, d);
    runScalar(*k->ir, k->launch, mem);
    for (int64_t i = 0; i < 100; ++i) ASSERT_DOUBLE_EQ(mem.find("out_ptr")->getF(i), 2.0 * (double(i % 17) - 5.0));
  }
}

TEST(Input, AnAnnotatedPointerRejectsAFileOfAnotherDType) {
  std::string kernel = scratch().file("typed.tl", replaced(kDouble, "x_ptr, out", "x_ptr: *f32, out"));
  StageOptions o;
  o.inputs = {"x_ptr=" + scratch().npy("xi.npy", DType::I32, 100, [](int64_t i) { return double(i); })};
  auto k = compile(kernel, o);
  ASSERT_TRUE(k);
  try {
    Memory::fromLaunch(k->launch);
    FAIL() << "an i32 file for *f32 was accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("holds i32 data but the launch expects f32"), std::string::npos) << e.what();
  }
}

// ----- item 13: write conflicts ----------------------------------------------------------------

// What each stage says, or "" when it ran without a RuntimeError.
std::string scalarError(const CompiledKernel& k) {
  Memory m = Memory::fromLaunch(k.launch);
  try {
    runScalar(*k.ir, k.launch, m);
  } catch (const RuntimeError& e) {
    return renderRuntimeError(k, e);
  }
  return "";
}
std::string blockError(const CompiledKernel& k) {
  Memory m = Memory::fromLaunch(k.launch);
  try {
    runBlock(*k.ir, k.launch, m);
  } catch (const RuntimeError& e) {
    return renderRuntimeError(k, e);
  }
  return "";
}
std::string threadError(const CompiledKernel& k, bool keepLayouts, int numWarps = 0, Memory* out = nullptr) {
  ThreadCompileOptions opts;
  opts.keepLayouts = keepLayouts;
  opts.numWarps = numWarps;
  ThreadCompilation tc = compileToThreadIR(*k.ir, k.launch, opts);
  Memory m = Memory::fromLaunch(k.launch);
  try {
    runThreadIR(*tc.threadIR, k.launch, m);
  } catch (const RuntimeError& e) {
    return renderRuntimeError(k, e);
  }
  if (out) *out = std::move(m);
  return "";
}

TEST(WriteConflict, TheTransposeReproducerIsAConflictInEveryStage) {
  StageOptions o;
  o.kernels = {std::string(TL_SOURCE_DIR) + "/kernels/transpose.tl"};
  o.sets = {"M=5", "N=100", "stride_on=0"};
  auto k = compile(o.kernels[0], o);
  ASSERT_TRUE(k);
  // Element [i, j] of the tile writes out[j, 0]: rows 0..4 of column j collide.
  const std::string want =
      "transpose.tl:23:5: error: write conflict: elements [0, 0] and [1, 0] of this store both write address ";
  std::string s = scalarError(*k), b = blockError(*k);
  EXPECT_NE(s.find(want), std::string::npos) << s;
  EXPECT_NE(s.find("(out_ptr[0, 0]) with different values ("), std::string::npos) << s;
  EXPECT_NE(s.find("which one lands is undefined (on a GPU, whichever lane wins) in program (0, 0, 0)"),
            std::string::npos) << s;
  EXPECT_EQ(b, s);  // tl-block finds the same pair and says the same
  for (bool keep : {false, true}) {
    std::string t = threadError(*k, keep);
    EXPECT_NE(t.find("transpose.tl:23:5: error: write conflict: thread "), std::string::npos) << t;
    EXPECT_NE(t.find("(out_ptr[0, 0]) with different values"), std::string::npos) << t;
    EXPECT_NE(t.find("in block (0, 0, 0), instruction "), std::string::npos) << t;
  }
}

// Every row of a [4, 64] tile writes the same 64 addresses (out[c] for element [r, c]). With 4
// warps the rows are spread over the warps (warp r holds row r, the test checks the warps it
// names), so the first collision is row 0 (warp 0) with row 1 (another warp).
const char* kFold = R"(@launch(grid=(2,), num_warps=4, x_ptr=arange(512), out_ptr=zeros(128, output=True))
@jit
def fold(x_ptr, out_ptr):
    rows = arange(0, 4)
    cols = arange(0, 64)
    offs = program_id(0) * 256 + rows[:, None] * 64 + cols[None, :]
    x = load(x_ptr + offs)
    store(out_ptr + program_id(0) * 64 + rows[:, None] * 0 + cols[None, :], x)
)";

TEST(WriteConflict, AcrossTheWarpsOfABlock) {
  std::string kernel = scratch().file("fold.tl", kFold);
  auto k = compile(kernel, StageOptions{});
  ASSERT_TRUE(k);
  EXPECT_NE(scalarError(*k).find("elements [0, 0] and [1, 0] of this store both write address"), std::string::npos)
      << scalarError(*k);
  EXPECT_NE(scalarError(*k).find("(out_ptr[0]) with different values (0 and 64)"), std::string::npos);
  EXPECT_EQ(blockError(*k), scalarError(*k));
  for (bool keep : {false, true}) {
    std::string t = threadError(*k, keep);
    std::smatch m;
    ASSERT_TRUE(std::regex_search(t, m, std::regex(R"(write conflict: thread (\d+) \(warp (\d+), lane (\d+)\) register (\d+) and thread (\d+) \(warp (\d+), lane (\d+)\) register (\d+) of this store both write address 0x[0-9a-f]+ \(out_ptr\[0\]\) with different values \(0 and 64\))")))
        << t;
    EXPECT_NE(m[2].str(), m[6].str()) << t;  // two warps of one block
    EXPECT_EQ(m[2].str(), "0") << t;
    EXPECT_NE(t.find("in block (0, 0, 0)"), std::string::npos) << t;
  }
}

TEST(WriteConflict, WithinOneWarpNamesBothLanes) {
  // num_warps=1: rows 0 and 1 are in one warp, in different lanes or registers.
  std::string kernel = scratch().file("fold1.tl", replaced(kFold, "num_warps=4", "num_warps=1"));
  auto k = compile(kernel, StageOptions{});
  ASSERT_TRUE(k);
  std::string t = threadError(*k, false);
  EXPECT_NE(t.find("write conflict: thread "), std::string::npos) << t;
  EXPECT_NE(t.find("(warp 0, lane "), std::string::npos) << t;
  EXPECT_EQ(t.find("(warp 1"), std::string::npos) << t;
}

TEST(WriteConflict, EqualValuesLoopsAndSeparateStoresAreFine) {
  // Several elements store one value at one address (equal bytes); a loop stores one address
  // per iteration; two store ops write one address; a reduction's scalar is stored by every
  // thread of the block (replicated). Each program has its own 8 elements of out_ptr (programs
  // storing different values to one element would be a race between programs).
  const char* text = R"(@launch(BLOCK=256, grid=(3,), num_warps=4, x_ptr=randn(768, seed=2), out_ptr=zeros(24, output=True), s_ptr=zeros(3, output=True))
@jit
def fine(x_ptr, out_ptr, s_ptr, BLOCK: constexpr):
    pid = program_id(0)
    offs = arange(0, BLOCK)
    x = load(x_ptr + pid * BLOCK + offs)
    out = out_ptr + pid * 8
    store(out + offs % 4, (offs % 4).to(f32) * 1.5)
    for k in range(0, 3):
        store(out + 4 + offs % 2, x * 0.0 + k.to(f32))
    store(out + 6 + offs * 0, zeros((BLOCK,), dtype=f32) + 2.0)
    store(out + 6 + offs * 0, zeros((BLOCK,), dtype=f32) + 3.0)
    store(s_ptr + pid, sum(x, axis=0))
)";
  std::string kernel = scratch().file("fine.tl", text);
  auto k = compile(kernel, StageOptions{});
  ASSERT_TRUE(k);
  EXPECT_EQ(scalarError(*k), "");
  EXPECT_EQ(blockError(*k), "");
  for (bool keep : {false, true})
    for (int nw : {1, 2, 4, 8}) {
      Memory m;
      EXPECT_EQ(threadError(*k, keep, nw, &m), "") << "num_warps " << nw;
      const Buffer* out = m.find("out_ptr");
      ASSERT_TRUE(out);
      const double want[8] = {0, 1.5, 3, 4.5, 2, 2, 3, 0};
      for (int i = 0; i < 24; ++i) EXPECT_DOUBLE_EQ(out->getF(i), want[i % 8]) << i << " num_warps " << nw;
    }
}

TEST(WriteConflict, MaskedOffElementsDoNotConflict) {
  // Only one element of each colliding pair is let through.
  std::string kernel = scratch().file("foldmask.tl", replaced(kFold, "cols[None, :], x)", "cols[None, :], x, mask=rows[:, None] + cols[None, :] * 0 == 2)"));
  auto k = compile(kernel, StageOptions{});
  ASSERT_TRUE(k);
  EXPECT_EQ(scalarError(*k), "");
  EXPECT_EQ(blockError(*k), "");
  EXPECT_EQ(threadError(*k, false), "");
}

// tl-block proves most stores distinct without the exact check (increasing addresses, an affine
// one-to-one tile, rows increasing under a mask): over many strides, with and without masks and
// with colliding and non-colliding patterns, it must report exactly what tl-scalar reports (and
// the thread executor must find a conflict exactly when tl-scalar does).
TEST(WriteConflict, TlBlocksShortcutsAgreeWithTlScalar) {
  const char* text = R"(@launch(SR=1, SC=1, NR=8, NC=16, BASE=2048, x_ptr=arange(128), out_ptr=zeros(4096, output=True))
@jit
def strides(x_ptr, out_ptr, SR, SC, NR, NC, BASE):
    rows = arange(0, 8)
    cols = arange(0, 16)
    x = load(x_ptr + rows[:, None] * 16 + cols[None, :])
    store(out_ptr + BASE + rows[:, None] * SR + cols[None, :] * SC, x, mask=(rows[:, None] < NR) & (cols[None, :] < NC))
)";
  std::string kernel = scratch().file("strides.tl", text);
  int conflicts = 0, clean = 0;
  for (int sr : {0, 1, -1, 2, 5, 10, 15, 16, 17, -16, 100})
    for (int sc : {0, 1, -1, 2, 8, 9, -8})
      for (const char* mask : {"NR=8", "NC=10", "NR=3", "NR=1"}) {
        StageOptions o;
        o.sets = {"SR=" + std::to_string(sr), "SC=" + std::to_string(sc), mask};
        auto k = compile(kernel, o);
        ASSERT_TRUE(k);
        std::string want = scalarError(*k);
        EXPECT_EQ(blockError(*k), want) << "SR=" << sr << " SC=" << sc << " " << mask;
        std::string t = threadError(*k, false);  // the executor: a conflict exactly when tl-scalar sees one
        EXPECT_EQ(t.empty(), want.empty()) << "SR=" << sr << " SC=" << sc << " " << mask << "\n" << t << want;
        (want.empty() ? clean : conflicts)++;
      }
  EXPECT_GT(conflicts, 50);  // both kinds are well represented
  EXPECT_GT(clean, 50);
}

}  // namespace
}  // namespace tl
