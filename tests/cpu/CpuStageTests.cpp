// tl-cpu against tl-scalar and tl-block (issue 14): every kernel it must run, at two sizes, on
// the host's widest ISA and on SSE (4-lane vectors: other chunk widths and tails), and on one
// thread and on many; and every .tl kernel of the test corpora and the labs against tl-block,
// outputs or the very same located error.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "../e2e/Harness.h"
#include "../triton/TritonKernels.h"
#include "block/BlockInterpreter.h"
#include "cpu/CpuCache.h"
#include "cpu/CpuRuntime.h"
#include "ir/Diagnostics.h"
#include "ir/Pass.h"
#include "runtime/Budget.h"
#include "runtime/Driver.h"

namespace tl::cpu {
namespace {

namespace fs = std::filesystem;

const CpuTarget& host() {
  static const CpuTarget t = hostTarget();
  return t;
}
const CpuTarget& sse() {
  static const CpuTarget t = hostTarget("sse4.2");
  return t;
}

// Compiles the block pipeline's output of `fn` and runs it over `memory`; "" or the located error.
std::string runCpu(const e2e::Compiled& c, const Function& optimized, Memory& memory, const CpuTarget& target,
                   int threads, int64_t maxIterations = 0) {
  try {
    CpuKernel k = compileKernel(optimized, target);
    RunOptions ro;
    ro.threads = threads;
    ro.maxIterations = maxIterations;
    runKernel(k, optimized, c.launch, memory, ro);
  } catch (const RuntimeError& e) {
    return renderDiagnostic(c.file.get(), Severity::Error, e.loc, e.what());
  } catch (const IRError& e) {
    return "internal compiler error: " + renderDiagnostic(c.file.get(), Severity::Error, e.loc, e.what());
  }
  return "";
}

bool sameBytes(const Memory& a, const Memory& b, std::string& which) {
  for (const Buffer& x : a.buffers()) {
    const Buffer* y = b.find(x.name);
    if (!y || y->bytes != x.bytes) {
      which = x.name;
      return false;
    }
  }
  return true;
}

// Every output of `want` against `got`, at the tolerance of the kernel's dots (tensor-core
// precisions, and tl-cpu's FMAs) and of its float sums (tl-cpu adds them in vector-wide partial
// sums, whose width depends on the host's ISA).
void expectOutputsMatch(const Memory& want, const Memory& got, const Function& fn, const std::string& what) {
  ToleranceOverride tol;
  markDotPrecisions(fn, tol);
  markFmaDots(fn, tol);
  markReorderedSums(fn, tol);
  int checked = 0;
  for (const Buffer& b : want.buffers()) {
    if (!b.output) continue;
    const Buffer* g = got.find(b.name);
    ASSERT_NE(g, nullptr) << b.name;
    Comparison c = compareBuffers(b, *g, tol);
    EXPECT_TRUE(c.pass) << what << ": " << b.name << ": max abs err " << c.maxAbsErr << ", " << c.mismatches << " mismatches";
    ++checked;
  }
  EXPECT_GT(checked, 0) << "the launch marks no buffer output=True";
}

// --- kernels/*.tl ---------------------------------------------------------------------------------

using KernelParam = std::tuple<e2e::KernelCase, e2e::Size>;
class CpuKernelRun : public testing::TestWithParam<KernelParam> {};

TEST_P(CpuKernelRun, HostIsaVsScalar) {
  const auto& [kernel, size] = GetParam();
  const e2e::ScalarRun& ref = e2e::scalarRun(kernel, size);
  ASSERT_TRUE(ref.error.empty()) << ref.error;
  std::string error;
  std::unique_ptr<Function> opt = e2e::optimizedCopy(*ref.compiled.fn, error);
  ASSERT_TRUE(opt) << error;
  Memory memory = Memory::fromLaunch(ref.compiled.launch);
  ASSERT_EQ(runCpu(ref.compiled, *opt, memory, host(), 2), "");
  expectOutputsMatch(ref.memory, memory, *ref.compiled.fn, "tl-cpu (" + host().isa + ", 2 threads)");
  for (const Buffer& b : memory.buffers()) {
    if (!b.output) continue;
    EXPECT_EQ(unwrittenElements(b).count, unwrittenElements(*ref.memory.find(b.name)).count) << b.name;
  }
}

// SSE's 4 lanes chunk every tile differently; one thread runs the programs in grid order. The
// outputs must equal the host ISA's on two threads bit for bit where no float is summed
// (sums add in lane-wide partials, so the widths round differently) and pass against tl-scalar.
TEST_P(CpuKernelRun, SseOneThreadVsScalar) {
  const auto& [kernel, size] = GetParam();
  const e2e::ScalarRun& ref = e2e::scalarRun(kernel, size);
  ASSERT_TRUE(ref.error.empty()) << ref.error;
  std::string error;
  std::unique_ptr<Function> opt = e2e::optimizedCopy(*ref.compiled.fn, error);
  ASSERT_TRUE(opt) << error;
  Memory memory = Memory::fromLaunch(ref.compiled.launch);
  ASSERT_EQ(runCpu(ref.compiled, *opt, memory, sse(), 1), "");
  expectOutputsMatch(ref.memory, memory, *ref.compiled.fn, "tl-cpu (sse4.2, 1 thread)");
}

TEST_P(CpuKernelRun, ThreadCountDoesNotChangeResults) {
  const auto& [kernel, size] = GetParam();
  const e2e::ScalarRun& ref = e2e::scalarRun(kernel, size);
  ASSERT_TRUE(ref.error.empty()) << ref.error;
  std::string error;
  std::unique_ptr<Function> opt = e2e::optimizedCopy(*ref.compiled.fn, error);
  ASSERT_TRUE(opt) << error;
  Memory one = Memory::fromLaunch(ref.compiled.launch), many = Memory::fromLaunch(ref.compiled.launch);
  ASSERT_EQ(runCpu(ref.compiled, *opt, one, host(), 1), "");
  ASSERT_EQ(runCpu(ref.compiled, *opt, many, host(), 7), "");
  std::string which;
  EXPECT_TRUE(sameBytes(one, many, which)) << which << " differs between 1 and 7 threads";
}

std::vector<KernelParam> kernelParams() {
  std::vector<KernelParam> out;
  for (const e2e::KernelCase& k : e2e::discoverKernels())
    for (e2e::Size s : {e2e::Size::Default, e2e::Size::Ragged})
      if (s == e2e::Size::Default || e2e::raggedOverrides(k.stem)) out.emplace_back(k, s);
  return out;
}

INSTANTIATE_TEST_SUITE_P(Kernels, CpuKernelRun, testing::ValuesIn(kernelParams()),
                         [](const testing::TestParamInfo<KernelParam>& info) {
                           return std::get<0>(info.param).stem + "_" + e2e::sizeName(std::get<1>(info.param));
                         });

// --- kernels/triton/*.tl --------------------------------------------------------------------------

using TritonParam = std::tuple<std::string, triton_tests::Variant>;
class CpuTriton : public testing::TestWithParam<TritonParam> {};

TEST_P(CpuTriton, VsScalar) {
  const auto& [stem, variant] = GetParam();
  const triton_tests::ScalarResult& ref = triton_tests::scalarResult(stem, variant);
  ASSERT_TRUE(ref.error.empty()) << ref.error;
  std::string error;
  std::unique_ptr<Function> opt = e2e::optimizedCopy(*ref.compiled.fn, error);
  ASSERT_TRUE(opt) << error;
  Memory memory = Memory::fromLaunch(ref.compiled.launch);
  ASSERT_EQ(runCpu(ref.compiled, *opt, memory, host(), 2), "");
  expectOutputsMatch(ref.memory, memory, *ref.compiled.fn, "tl-cpu");
}

std::vector<TritonParam> tritonParams() {
  std::vector<TritonParam> out;
  for (const std::string& stem : triton_tests::passingKernels())
    for (auto v : {triton_tests::Variant::Default, triton_tests::Variant::Alt}) out.emplace_back(stem, v);
  return out;
}

INSTANTIATE_TEST_SUITE_P(Collection, CpuTriton, testing::ValuesIn(tritonParams()),
                         [](const testing::TestParamInfo<TritonParam>& info) {
                           return std::get<0>(info.param) + "_" + triton_tests::variantName(std::get<1>(info.param));
                         });

// --- the test corpora and the labs: tl-cpu does what tl-block does --------------------------------

std::vector<std::string> corpus() {
  std::vector<std::string> out;
  for (const char* dir : {"tests", "labs"})
    for (const auto& e : fs::recursive_directory_iterator(fs::path(TL_SOURCE_DIR) / dir))
      // tests/bad: front-end errors only; ill_conditioned_*: sums that cancel, so the result
      // depends on the order of the additions, which differs between engines by design.
      if (e.is_regular_file() && e.path().extension() == ".tl" && e.path().string().find("/tests/bad/") == std::string::npos &&
          e.path().filename().string().rfind("ill_conditioned", 0) != 0)
        out.push_back(fs::relative(e.path(), TL_SOURCE_DIR).string());
  std::sort(out.begin(), out.end());
  return out;
}

class CpuCorpus : public testing::TestWithParam<std::string> {};

// Same outputs as tl-block (within the dtype's tolerance), or the same first error line. One
// thread: a kernel with a race between programs (labs/*/wrong/) gives tl-block's answer only
// when the programs run in grid order, as tl-block runs them. A kernel tl-block stops for its
// work budget is left out (tl-cpu's budget counts loop iterations: another message).
TEST_P(CpuCorpus, AgreesWithBlock) {
  const std::string path = (fs::path(TL_SOURCE_DIR) / GetParam()).string();
  std::ostringstream diag;
  auto k = compileKernelFile(path, {}, diag);
  if (!k) GTEST_SKIP() << "does not compile (a test of the front end)";
  std::unique_ptr<Function> fn = cloneFunction(*k->ir);
  blockPipeline().run(*fn);
  workLimits().maxSteps = 300'000'000;
  workLimits().progress = false;
  Memory want = Memory::fromLaunch(k->launch), got = Memory::fromLaunch(k->launch);
  std::string blockError, cpuError;
  try {
    runBlock(*fn, k->launch, want);
  } catch (const RuntimeError& e) {
    blockError = e.what();
  }
  if (blockError.find("work budget") != std::string::npos) GTEST_SKIP() << "tl-block stops for its budget";
  try {
    CpuKernel ck = compileKernel(*fn, host());
    RunOptions ro;
    ro.threads = 1;
    runKernel(ck, *fn, k->launch, got, ro);
  } catch (const RuntimeError& e) {
    cpuError = e.what();
  }
  workLimits().maxSteps = 0;
  ASSERT_EQ(cpuError, blockError);
  if (!blockError.empty()) return;
  expectOutputsMatch(want, got, *fn, "tl-cpu against tl-block");
  for (const Buffer& b : want.buffers()) {
    if (!b.output) continue;
    EXPECT_EQ(unwrittenElements(*got.find(b.name)).count, unwrittenElements(b).count) << b.name;
  }
}

INSTANTIATE_TEST_SUITE_P(Files, CpuCorpus, testing::ValuesIn(corpus()), [](const testing::TestParamInfo<std::string>& info) {
  std::string n = info.param;
  for (char& ch : n)
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return n;
});

// --- targeted behaviour ---------------------------------------------------------------------------

std::unique_ptr<CompiledKernel> compileText(const std::string& text, const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / "tl_cpu_tests";
  fs::create_directories(dir);
  const fs::path file = dir / name;
  std::ofstream(file) << text;
  std::ostringstream diag;
  auto k = compileKernelFile(file.string(), {}, diag);
  EXPECT_TRUE(k) << diag.str();
  if (k) blockPipeline().run(*k->ir);
  return k;
}

std::string runError(CompiledKernel& k, int threads = 2, int64_t maxIterations = 0) {
  Memory memory = Memory::fromLaunch(k.launch);
  try {
    CpuKernel ck = compileKernel(*k.ir, host());
    RunOptions ro;
    ro.threads = threads;
    ro.maxIterations = maxIterations;
    runKernel(ck, *k.ir, k.launch, memory, ro);
  } catch (const RuntimeError& e) {
    return std::to_string(e.loc.line) + ":" + std::to_string(e.loc.col) + ": " + e.what();
  }
  return "";
}

// Out of bounds: the first failing program in grid order is reported, whichever thread ran it.
TEST(CpuErrors, OutOfBoundsIsTheFirstFailingProgram) {
  auto k = compileText(R"(@launch(N=1000, grid=(40,), x=randn(1000), y=zeros(1000, output=True))
@jit
def k(x, y, N, BLOCK: constexpr = 64):
    offs = program_id(0) * BLOCK + arange(0, BLOCK)
    store(y + offs, load(x + offs, mask=offs < N + 3))
)", "oob.tl");
  ASSERT_TRUE(k);
  for (int threads : {1, 3, 8}) {
    const std::string e = runError(*k, threads);
    EXPECT_NE(e.find("5:21: load out of bounds: address"), std::string::npos) << e;
    EXPECT_NE(e.find("in program (15, 0, 0), element [40]"), std::string::npos) << threads << " threads: " << e;
  }
}

TEST(CpuErrors, DivisionByZeroNamesTheElement) {
  auto k = compileText(R"(@launch(grid=(2,), y=zeros(16, output=True))
@jit
def k(y):
    i = arange(0, 16)
    store(y + i, (i + 1) // (i - 9 + program_id(0) * 100))
)", "div0.tl");
  ASSERT_TRUE(k);
  const std::string e = runError(*k);
  EXPECT_NE(e.find("integer division by zero in program (0, 0, 0), element [9]"), std::string::npos) << e;
}

TEST(CpuErrors, AnEndlessLoopStopsAtTheBudget) {
  auto k = compileText(R"(@launch(grid=(1,), y=zeros(1, output=True))
@jit
def k(y):
    i = 0
    while i >= 0:
        i = i * 1
    store(y, i)
)", "forever.tl");
  ASSERT_TRUE(k);
  const std::string e = runError(*k, 1, 100000);
  EXPECT_NE(e.find("the program ran more than 100000 loop iterations"), std::string::npos) << e;
  EXPECT_EQ(e.rfind("5:5:", 0), 0u) << e;
}

TEST(CpuErrors, AssertReportsTheFirstFalseElement) {
  auto k = compileText(R"(@launch(grid=(3,), y=zeros(8, output=True))
@jit
def k(y):
    i = arange(0, 8)
    device_assert(i < 6 + program_id(0), "i is small")
    store(y + i, i)
)", "assert.tl");
  ASSERT_TRUE(k);
  const std::string e = runError(*k);
  EXPECT_NE(e.find("i is small"), std::string::npos) << e;
  EXPECT_NE(e.find("pid (0, 0, 0) idx (6)"), std::string::npos) << e;
}

// Offsets that wrap in i32 (program 1's pid * 2^31 - 1 + i): the compile-time affine addresses
// hold only without wrapping, so the run takes the op-by-op path and stops exactly where
// tl-block does, with its message.
TEST(CpuErrors, WrappingOffsetsGiveTlBlocksError) {
  auto k = compileText(R"(@launch(grid=(2,), x=randn(64), y=zeros(64, output=True))
@jit
def k(x, y):
    offs = program_id(0) * 2147483647 + arange(0, 16)
    store(y + offs, load(x + offs))
)", "wrap.tl");
  ASSERT_TRUE(k);
  Memory memory = Memory::fromLaunch(k->launch);
  std::string blockError;
  try {
    runBlock(*k->ir, k->launch, memory);
  } catch (const RuntimeError& e) {
    blockError = std::to_string(e.loc.line) + ":" + std::to_string(e.loc.col) + ": " + e.what();
  }
  ASSERT_NE(blockError, "");
  EXPECT_EQ(runError(*k, 1), blockError);
  EXPECT_EQ(runError(*k, 2), blockError);
}

TEST(CpuTarget, IsasAreNarrowerOrEqual) {
  EXPECT_TRUE(host().isa == "avx512" || host().isa == "avx2" || host().isa == "sse4.2");
  EXPECT_EQ(sse().vectorBytes, 16);
  EXPECT_LE(sse().vectorBytes, host().vectorBytes);
  EXPECT_THROW(hostTarget("neon"), std::invalid_argument);
}

}  // namespace
}  // namespace tl::cpu

namespace tl::cpu {
namespace {

// The JIT cache: a second compile of the same kernel is a hit that computes the same bytes; a
// corrupted object is a miss with its reason; another ISA or store tracking is another key.
TEST(CpuCacheTest, HitComputesTheSameAndCorruptionIsAMiss) {
  const std::string root = (std::filesystem::temp_directory_path() / "tl_cpu_cache_test").string();
  std::filesystem::remove_all(root);
  const CpuCache cache(root);
  auto k = compileText(R"(@launch(N=5000, grid=(5,), x=randn(5000), y=zeros(5000, output=True))
@jit
def k(x, y, N, BLOCK: constexpr = 1024):
    offs = program_id(0) * BLOCK + arange(0, BLOCK)
    store(y + offs, exp(load(x + offs, mask=offs < N)), mask=offs < N)
)", "cached.tl");
  ASSERT_TRUE(k);
  JitOptions jo;
  jo.cache = &cache;
  CpuKernel miss = compileKernel(*k->ir, host(), {}, jo);
  EXPECT_FALSE(miss.times.cacheHit);
  EXPECT_EQ(miss.times.cacheMiss, "no entry");
  CpuKernel hit = compileKernel(*k->ir, host(), {}, jo);
  EXPECT_TRUE(hit.times.cacheHit) << hit.times.cacheMiss;
  EXPECT_EQ(hit.times.cacheKey, miss.times.cacheKey);
  EXPECT_EQ(hit.scratchBytes, miss.scratchBytes);
  ASSERT_EQ(hit.ops.size(), miss.ops.size());
  for (size_t i = 0; i < hit.ops.size(); ++i) EXPECT_EQ(hit.ops[i], miss.ops[i]);
  Memory a = Memory::fromLaunch(k->launch), b = Memory::fromLaunch(k->launch);
  runKernel(miss, *k->ir, k->launch, a);
  runKernel(hit, *k->ir, k->launch, b);
  EXPECT_EQ(a.find("y")->bytes, b.find("y")->bytes);

  CodegenOptions untracked;
  untracked.trackStores = false;
  EXPECT_NE(CpuCache::keyOf(*k->ir, host(), untracked, jo), miss.times.cacheKey);
  EXPECT_NE(CpuCache::keyOf(*k->ir, sse(), {}, jo), miss.times.cacheKey);

  const std::string object = cache.entryDir(miss.times.cacheKey) + "/kernel.o";
  std::fstream f(object, std::ios::in | std::ios::out | std::ios::binary);
  f.seekp(100);
  f.put('\x55');
  f.close();
  std::string why;
  EXPECT_FALSE(cache.lookup(miss.times.cacheKey, &why));
  EXPECT_EQ(why, "kernel.o does not match its manifest");
  CpuKernel again = compileKernel(*k->ir, host(), {}, jo);  // recompiled, and the entry replaced
  EXPECT_FALSE(again.times.cacheHit);
  EXPECT_TRUE(cache.lookup(miss.times.cacheKey, &why)) << why;
  std::filesystem::remove_all(root);
}

}  // namespace
}  // namespace tl::cpu

namespace tl::cpu {
namespace {

// Atomics are indivisible across threads: the atomic kernels of the corpus on 7 threads give
// tl-block's integer results exactly (counters, contention on one address, a spin lock that
// programs take in turn, a histogram) and its float sums within rounding.
class CpuAtomics : public testing::TestWithParam<std::string> {};

TEST_P(CpuAtomics, SevenThreadsAgreeWithBlock) {
  const std::string path = (fs::path(TL_SOURCE_DIR) / GetParam()).string();
  std::ostringstream diag;
  auto k = compileKernelFile(path, {}, diag);
  ASSERT_TRUE(k) << diag.str();
  blockPipeline().run(*k->ir);
  Memory want = Memory::fromLaunch(k->launch), got = Memory::fromLaunch(k->launch);
  runBlock(*k->ir, k->launch, want);
  CpuKernel ck = compileKernel(*k->ir, host());
  RunOptions ro;
  ro.threads = 7;
  runKernel(ck, *k->ir, k->launch, got, ro);
  expectOutputsMatch(want, got, *k->ir, "7 threads");
}

INSTANTIATE_TEST_SUITE_P(Kernels, CpuAtomics,
                         testing::Values("tests/thread/kernels/atomic_counter.tl", "tests/thread/kernels/atomic_contention.tl",
                                         "tests/thread/kernels/atomic_lock.tl", "tests/thread/kernels/histogram_unfused.tl"),
                         [](const testing::TestParamInfo<std::string>& info) {
                           return fs::path(info.param).stem().string();
                         });

}  // namespace
}  // namespace tl::cpu
