// The unfused lowering (stages/thread/Unfuse.h): every kernel of kernels/, split into one kernel
// per block-level op, computes the fused kernel's outputs (run in order on the block
// interpreter, and for softmax and vector_add through the thread pipeline and the warp-level
// executor); the softmax's kernel list, scratch buffers and traffic; the rules for gathers,
// in-place kernels and what cannot be split, on small kernels written here.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "block/BlockInterpreter.h"
#include "ir/Pass.h"
#include "ir/Printer.h"
#include "ir/Verifier.h"
#include "runtime/Driver.h"
#include "sim/ThreadExecutor.h"
#include "thread/Pipeline.h"
#include "thread/Unfuse.h"

namespace tl {
namespace {

std::string kernelFile(const std::string& stem) { return std::string(TL_SOURCE_DIR) + "/kernels/" + stem + ".tl"; }

// Front end + block pipeline: what unfuse() expects.
std::unique_ptr<CompiledKernel> compileFile(const std::string& path, const std::vector<LaunchOverride>& overrides = {}) {
  std::ostringstream err;
  auto k = compileKernelFile(path, overrides, err);
  EXPECT_TRUE(k) << err.str();
  if (k) blockPipeline().run(*k->ir);
  return k;
}

// Writes `source` to a .tl file in the test's temporary folder and compiles it.
std::unique_ptr<CompiledKernel> compileSource(const std::string& name, const std::string& source) {
  std::filesystem::path path = std::filesystem::path(::testing::TempDir()) / (name + ".tl");
  std::ofstream(path) << source;
  return compileFile(path.string());
}

// The fused kernel's outputs, on the block interpreter.
Memory runFused(const CompiledKernel& k) {
  Memory mem = Memory::fromLaunch(k.launch);
  runBlock(*k.ir, k.launch, mem);
  return mem;
}

Memory runUnfusedBlock(const UnfusedKernels& u) {
  Memory mem = Memory::fromLaunch(u.launch);
  for (const auto& fn : u.kernels) runBlock(*fn, u.launch, mem);
  return mem;
}

// Every output of the fused run equals the unfused run's (within the dtype's tolerance).
void expectSameOutputs(const Memory& fused, const Memory& unfused, const std::string& what) {
  int outputs = 0;
  for (const Buffer& ref : fused.buffers()) {
    if (!ref.output) continue;
    ++outputs;
    const Buffer* got = unfused.find(ref.name);
    ASSERT_TRUE(got) << what << ": no buffer " << ref.name;
    Comparison c = compareBuffers(ref, *got);
    EXPECT_TRUE(c.pass) << what << ": " << ref.name << " differs: " << c.mismatches << " mismatches, max abs err "
                        << c.maxAbsErr << " " << c.reason;
  }
  EXPECT_GT(outputs, 0) << what;
}

std::vector<std::string> kernelStems() {
  std::vector<std::string> stems;
  for (const auto& e : std::filesystem::directory_iterator(std::string(TL_SOURCE_DIR) + "/kernels"))
    if (e.path().extension() == ".tl") stems.push_back(e.path().stem().string());
  std::sort(stems.begin(), stems.end());
  return stems;
}

// Ragged sizes: partial tiles, programs with few live elements.
std::vector<LaunchOverride> raggedSize(const std::string& stem) {
  static const std::map<std::string, std::vector<LaunchOverride>> sizes{
      {"bias_gelu", {{"M", "37"}, {"N", "45"}}},
      {"layernorm", {{"M", "5"}, {"N", "300"}, {"BLOCK_SIZE", "64"}}},
      {"matmul", {{"M", "33"}, {"N", "17"}, {"K", "21"}, {"BLOCK_M", "16"}, {"BLOCK_N", "16"}, {"BLOCK_K", "8"}}},
      {"rmsnorm", {{"M", "6"}, {"N", "33"}}},
      {"row_sum", {{"M", "7"}, {"N", "130"}, {"BLOCK_N", "32"}}},
      {"softmax", {{"M", "5"}, {"N", "17"}}},
      {"softmax_online", {{"M", "3"}, {"N", "100"}, {"BLOCK_N", "16"}}},
      {"strided_copy", {{"N", "1000"}, {"BLOCK", "64"}}},
      {"transpose", {{"M", "20"}, {"N", "9"}, {"BLOCK_M", "8"}, {"BLOCK_N", "4"}}},
      {"transpose_tiled", {{"M", "20"}, {"N", "9"}, {"BLOCK_M", "8"}, {"BLOCK_N", "4"}}},
      {"vector_add", {{"N", "1000"}, {"BLOCK", "16"}}},
  };
  auto it = sizes.find(stem);
  return it == sizes.end() ? std::vector<LaunchOverride>{} : it->second;
}

// Checks what the contract promises of every unfused list, whatever the kernel.
void expectWellFormed(const CompiledKernel& k, const UnfusedKernels& u) {
  ASSERT_FALSE(u.kernels.empty());
  ASSERT_EQ(u.descriptions.size(), u.kernels.size());
  int64_t programs = k.launch.grid[0] * k.launch.grid[1] * k.launch.grid[2];
  ASSERT_GE(u.launch.buffers.size(), k.launch.buffers.size());
  for (size_t i = k.launch.buffers.size(); i < u.launch.buffers.size(); ++i) {
    const BufferSpec& s = u.launch.buffers[i];
    EXPECT_FALSE(s.output) << s.param;
    EXPECT_EQ(s.fill, Fill::Zeros) << s.param;
    ASSERT_FALSE(s.shape.empty());
    EXPECT_EQ(s.shape[0], programs) << s.param;
  }
  EXPECT_EQ(u.launch.grid, k.launch.grid);
  EXPECT_EQ(u.launch.numWarps, k.launch.numWarps);
  for (size_t i = 0; i < u.kernels.size(); ++i) {
    const Function& fn = *u.kernels[i];
    EXPECT_EQ(verifyFunction(fn), "") << fn.name;
    EXPECT_EQ(fn.name.rfind(k.ir->name + "." + std::to_string(i + 1) + "_", 0), 0u) << fn.name;
    EXPECT_EQ(u.descriptions[i].rfind(fn.name + ": ", 0), 0u) << u.descriptions[i];
    EXPECT_EQ(fn.params.size(), u.launch.buffers.size() + k.launch.scalars.size()) << fn.name;
    // Every op maps back to a source line.
    walk(fn.body, [&](Op& op) { EXPECT_TRUE(op.loc.known()) << fn.name << ": " << mnemonic(op.kind); });
  }
}

class UnfuseKernel : public ::testing::TestWithParam<std::tuple<std::string, bool>> {};

TEST_P(UnfuseKernel, SameOutputsAsFused) {
  auto [stem, ragged] = GetParam();
  auto k = compileFile(kernelFile(stem), ragged ? raggedSize(stem) : std::vector<LaunchOverride>{});
  ASSERT_TRUE(k);
  UnfusedKernels u = unfuse(*k->ir, k->launch);
  expectWellFormed(*k, u);
  expectSameOutputs(runFused(*k), runUnfusedBlock(u), stem);
  // Unfusing never moves fewer bytes than the fused kernel.
  FusionTraffic t = fusionTraffic(*k->ir, k->launch, u);
  EXPECT_GE(t.unfusedBytes, t.fusedBytes) << formatFusionTraffic(t);
  EXPECT_EQ(t.launchesUnfused, static_cast<int>(u.kernels.size()));
}

INSTANTIATE_TEST_SUITE_P(AllKernels, UnfuseKernel, ::testing::Combine(::testing::ValuesIn(kernelStems()), ::testing::Bool()),
                         [](const auto& info) {
                           return std::get<0>(info.param) + (std::get<1>(info.param) ? "_ragged" : "_default");
                         });

// An atomic's unfused kernel reads and writes its buffer (it was described as writing nothing).
TEST(Unfuse, AtomicKernelsReadAndWriteTheirBuffer) {
  auto k = compileFile(std::string(TL_SOURCE_DIR) + "/tests/thread/kernels/histogram_unfused.tl");
  ASSERT_TRUE(k);
  UnfusedKernels u = unfuse(*k->ir, k->launch);
  int atomics = 0;
  for (const auto& d : u.descriptions) {
    if (d.find(": atomic_rmw at") == std::string::npos) continue;
    ++atomics;
    const size_t w = d.find("; writes ");
    ASSERT_NE(w, std::string::npos) << d;
    EXPECT_EQ(d.find("; writes -"), std::string::npos) << d;
    const std::string written = d.substr(w + 9);
    EXPECT_NE(d.substr(0, w).find(written.substr(0, written.find(','))), std::string::npos) << "read too: " << d;
  }
  EXPECT_GE(atomics, 2);
}

// The softmax as PyTorch runs it: max, sub, exp, sum, div.
TEST(Unfuse, SoftmaxKernelList) {
  auto k = compileFile(kernelFile("softmax"));
  ASSERT_TRUE(k);
  UnfusedKernels u = unfuse(*k->ir, k->launch);
  std::vector<std::string> names;
  for (const auto& fn : u.kernels) names.push_back(fn->name);
  EXPECT_EQ(names, (std::vector<std::string>{"softmax_kernel.1_max", "softmax_kernel.2_sub", "softmax_kernel.3_exp",
                                             "softmax_kernel.4_sum", "softmax_kernel.5_div"}));
  // Four intermediates: two per-row scalars, two full tiles per row.
  int64_t M = k->launch.grid[0];
  ASSERT_EQ(u.launch.buffers.size(), 4u + 2u);
  EXPECT_EQ(u.launch.buffers[2].param, "tmp1_max");
  EXPECT_EQ(u.launch.buffers[2].shape, (Shape{M}));
  EXPECT_EQ(u.launch.buffers[3].param, "tmp2_sub");
  EXPECT_EQ(u.launch.buffers[3].shape, (Shape{M, 1024}));
  EXPECT_EQ(u.launch.buffers[4].param, "tmp3_exp");
  EXPECT_EQ(u.launch.buffers[5].param, "tmp4_sum");
  EXPECT_EQ(u.launch.buffers[5].shape, (Shape{M}));
  EXPECT_NE(u.descriptions[0].find("reads x_ptr; writes tmp1_max"), std::string::npos) << u.descriptions[0];
  EXPECT_NE(u.descriptions[1].find("reads x_ptr, tmp1_max; writes tmp2_sub"), std::string::npos) << u.descriptions[1];
  EXPECT_NE(u.descriptions[4].find("reads tmp3_exp, tmp4_sum; writes out_ptr"), std::string::npos) << u.descriptions[4];
  // The exp kernel computes exp at its source line (softmax.tl line 16) and re-reads nothing
  // of x: only its scratch input.
  const Function& expK = *u.kernels[2];
  int exps = 0, loads = 0;
  walk(expK.body, [&](Op& op) {
    if (op.kind == OpKind::Exp) {
      ++exps;
      EXPECT_EQ(op.loc.line, 16u);
    }
    if (op.kind == OpKind::Load) {
      ++loads;
      EXPECT_EQ(op.loc.line, 16u);  // the scratch load is charged to the exp's line
    }
  });
  EXPECT_EQ(exps, 1);
  EXPECT_EQ(loads, 1);
}

// The traffic of the softmax, fused and unfused, from the launch's M and N.
// Trip counts near the int64 limit (issue 11, item 9): range(0, 2^63 - 1, 2^62) runs twice.
// (span + step - 1) / step overflowed int64: the traffic came out as -256 bytes read.
TEST(Unfuse, TripCountsNearTheInt64Limit) {
  auto k = compileSource("trip_int64",
      "@launch(BIG=9223372036854775807, STEP=4611686018427387904, grid=(1,),\n"
      "        x_ptr=randn(64, seed=1), out_ptr=zeros(64, output=True))\n"
      "@jit\ndef k(x_ptr, out_ptr, BIG, STEP):\n    offs = arange(0, 64)\n    acc = zeros(64, dtype=f32)\n"
      "    for i in range(0, BIG, STEP):\n        acc += load(x_ptr + offs)\n    store(out_ptr + offs, acc)\n");
  ASSERT_TRUE(k);
  KernelTraffic t = kernelTraffic(*k->ir, k->launch);
  EXPECT_FALSE(t.estimated);
  EXPECT_EQ(t.readBytes, 64 * 4);  // compulsory: x once, however often the 2 trips read it
  EXPECT_EQ(t.writeBytes, 64 * 4);
}

TEST(Unfuse, SoftmaxTraffic) {
  auto k = compileFile(kernelFile("softmax"));
  ASSERT_TRUE(k);
  UnfusedKernels u = unfuse(*k->ir, k->launch);
  FusionTraffic t = fusionTraffic(*k->ir, k->launch, u);
  const int64_t M = k->launch.grid[0], N = k->launch.scalars.at("N").i, B = 1024, f = 4;
  const int64_t x = M * N * f, tile = M * B * f, scalar = M * f;
  EXPECT_EQ(t.fused.readBytes, x);
  EXPECT_EQ(t.fused.writeBytes, x);
  EXPECT_FALSE(t.fused.estimated);
  ASSERT_EQ(t.unfused.size(), 5u);
  // max: x -> m; sub: x, m -> d; exp: d -> e; sum: e -> s; div: e, s -> out.
  EXPECT_EQ(t.unfused[0].readBytes, x);
  EXPECT_EQ(t.unfused[0].writeBytes, scalar);
  EXPECT_EQ(t.unfused[1].readBytes, x + scalar);
  EXPECT_EQ(t.unfused[1].writeBytes, tile);
  EXPECT_EQ(t.unfused[2].readBytes, tile);
  EXPECT_EQ(t.unfused[2].writeBytes, tile);
  EXPECT_EQ(t.unfused[3].readBytes, tile);
  EXPECT_EQ(t.unfused[3].writeBytes, scalar);
  EXPECT_EQ(t.unfused[4].readBytes, tile + scalar);
  EXPECT_EQ(t.unfused[4].writeBytes, x);
  EXPECT_EQ(t.fusedBytes, 2 * x);
  EXPECT_EQ(t.unfusedBytes, 3 * x + 5 * tile + 4 * scalar);
  EXPECT_GT(t.ratio(), 4.5) << formatFusionTraffic(t);
  EXPECT_LT(t.ratio(), 5.0) << formatFusionTraffic(t);
  EXPECT_EQ(t.launchesUnfused, 5);
  std::string table = formatFusionTraffic(t);
  EXPECT_NE(table.find("softmax_kernel.3_exp"), std::string::npos) << table;
  EXPECT_NE(table.find("(4.7"), std::string::npos) << table;
}

// Kernels that are one op already, or whose work is all inside one loop, stay one kernel.
TEST(Unfuse, KernelCounts) {
  const std::map<std::string, size_t> expected{
      {"vector_add", 1},      // load x, load y, add + store: one kernel, as x + y in PyTorch
      {"strided_copy", 1},    // a copy: the store re-reads its input
      {"transpose", 1},
      {"transpose_tiled", 1}, // trans + its store: one kernel, as x.t().contiguous()
      {"matmul", 1},          // the K loop with its store
      {"row_sum", 2},         // the accumulating loop, then sum + store
      {"softmax_online", 2},  // two loops
      {"rmsnorm", 7},         // x*x, sum, /N, +eps, rsqrt, x*rstd, *w + store
  };
  for (const auto& [stem, n] : expected) {
    auto k = compileFile(kernelFile(stem));
    ASSERT_TRUE(k);
    UnfusedKernels u = unfuse(*k->ir, k->launch);
    std::string all;
    for (const auto& d : u.descriptions) all += d + "\n";
    EXPECT_EQ(u.kernels.size(), n) << stem << ":\n" << all;
    if (n == 1) {
      FusionTraffic t = fusionTraffic(*k->ir, k->launch, u);
      EXPECT_EQ(t.unfusedBytes, t.fusedBytes) << stem << "\n" << formatFusionTraffic(t);
    }
  }
}

// Loops stay whole: layernorm's three passes, with the per-row mean and rstd in scratch; the
// trip counts come from N and BLOCK_SIZE, so X counts once per kernel that reads it.
TEST(Unfuse, LayernormLoopsStayWhole) {
  auto k = compileFile(kernelFile("layernorm"));
  ASSERT_TRUE(k);
  UnfusedKernels u = unfuse(*k->ir, k->launch);
  int loops = 0;
  for (const auto& fn : u.kernels)
    for (const auto& op : fn->body.ops) loops += op->kind == OpKind::For;
  EXPECT_EQ(loops, 3);
  FusionTraffic t = fusionTraffic(*k->ir, k->launch, u);
  EXPECT_FALSE(t.fused.estimated);
  const int64_t M = 128, N = 1000;
  int64_t xBytes = 0;
  for (const BufferTraffic& b : t.fused.buffers)
    if (b.param == "X") xBytes = b.readBytes;
  EXPECT_EQ(xBytes, M * N * 4);  // three passes over X, at most X's size with an ideal cache
}

// The unfused kernels through the whole thread pipeline and the warp-level executor.
class UnfuseThread : public ::testing::TestWithParam<std::string> {};

TEST_P(UnfuseThread, ExecutorMatchesFused) {
  const std::string stem = GetParam();
  auto k = compileFile(kernelFile(stem));
  ASSERT_TRUE(k);
  UnfusedKernels u = unfuse(*k->ir, k->launch);
  Memory mem = Memory::fromLaunch(u.launch);
  ExecOptions opts;
  opts.recordAccesses = false;
  for (const auto& fn : u.kernels) {
    ThreadCompilation tc = compileToThreadIR(*fn, u.launch);
    ASSERT_TRUE(tc.threadIR) << fn->name;
    runThreadIR(*tc.threadIR, u.launch, mem, opts);
  }
  expectSameOutputs(runFused(*k), mem, stem + " on the executor");
}

INSTANTIATE_TEST_SUITE_P(Kernels, UnfuseThread, ::testing::Values("softmax", "vector_add"),
                         [](const auto& info) { return info.param; });

// A gather: the load whose address is data is a kernel of its own.
TEST(Unfuse, GatherLoadIsAKernel) {
  auto k = compileSource("gather", R"(
@launch(N=256, BLOCK=64, grid=(cdiv(N, BLOCK),),
        idx_ptr=arange(N, start=255, step=-1, dtype=i32), x_ptr=randn(N, seed=1),
        out_ptr=zeros(N, output=True))
@jit
def gather(idx_ptr, x_ptr, out_ptr, N, BLOCK: constexpr):
    offs = program_id(0) * BLOCK + arange(0, BLOCK)
    idx = load(idx_ptr + offs)
    y = load(x_ptr + idx)
    store(out_ptr + offs, exp(y))
)");
  ASSERT_TRUE(k);
  UnfusedKernels u = unfuse(*k->ir, k->launch);
  ASSERT_EQ(u.kernels.size(), 2u);
  EXPECT_EQ(u.kernels[0]->name, "gather.1_load");
  EXPECT_EQ(u.kernels[1]->name, "gather.2_exp");
  EXPECT_NE(u.descriptions[0].find("reads idx_ptr, x_ptr; writes tmp1_load"), std::string::npos) << u.descriptions[0];
  expectSameOutputs(runFused(*k), runUnfusedBlock(u), "gather");
}

// In place: the kernel loads and stores one buffer, so nothing moves: the load is a kernel
// (it cannot be re-read after the store) and the store keeps its place, in its own kernel.
TEST(Unfuse, InPlaceKeepsMemoryOrder) {
  auto k = compileSource("inplace", R"(
@launch(N=300, BLOCK=128, grid=(cdiv(N, BLOCK),), x_ptr=randn(N, seed=1, output=True))
@jit
def scale_inplace(x_ptr, N, BLOCK: constexpr):
    offs = program_id(0) * BLOCK + arange(0, BLOCK)
    mask = offs < N
    x = load(x_ptr + offs, mask=mask)
    store(x_ptr + offs, exp(x) * 2.0, mask=mask)
)");
  ASSERT_TRUE(k);
  UnfusedKernels u = unfuse(*k->ir, k->launch);
  std::vector<std::string> names;
  for (const auto& fn : u.kernels) names.push_back(fn->name);
  EXPECT_EQ(names, (std::vector<std::string>{"scale_inplace.1_load", "scale_inplace.2_exp", "scale_inplace.3_mul",
                                             "scale_inplace.4_store"}));
  expectSameOutputs(runFused(*k), runUnfusedBlock(u), "in place");
}

// What cannot be split: a pointer carried out of a loop into a later kernel.
TEST(Unfuse, PointerOutOfALoopIsALocatedError) {
  auto k = compileSource("carried_ptr", R"(
@launch(BLOCK=64, grid=(1,), x_ptr=randn(256, seed=1), out_ptr=zeros(320, output=True))
@jit
def carried(x_ptr, out_ptr, BLOCK: constexpr):
    acc = zeros(BLOCK, dtype=f32)
    p = out_ptr
    for i in range(0, 4):
        acc += load(x_ptr + i * BLOCK + arange(0, BLOCK))
        p += BLOCK
    store(p + arange(0, BLOCK), exp(acc))
)");
  ASSERT_TRUE(k);
  try {
    unfuse(*k->ir, k->launch);
    FAIL() << "expected an IRError";
  } catch (const IRError& e) {
    EXPECT_EQ(e.loc.line, 7u) << e.what();  // the for
    EXPECT_NE(std::string(e.what()).find("pointer"), std::string::npos) << e.what();
  }
}


// A data-dependent mask (x > 0) is materialized as an i1 scratch buffer and read back by the
// select's kernel; through the block interpreter and the executor alike.
TEST(Unfuse, BooleanIntermediate) {
  auto k = compileSource("relu", R"(
@launch(N=1000, BLOCK=256, grid=(cdiv(N, BLOCK),), x_ptr=randn(N, seed=3), out_ptr=zeros(N, output=True))
@jit
def relu2(x_ptr, out_ptr, N, BLOCK: constexpr):
    offs = program_id(0) * BLOCK + arange(0, BLOCK)
    mask = offs < N
    x = load(x_ptr + offs, mask=mask)
    store(out_ptr + offs, where(x > 0.0, x, 0.0) * 2.0, mask=mask)
)");
  ASSERT_TRUE(k);
  UnfusedKernels u = unfuse(*k->ir, k->launch);
  ASSERT_EQ(u.kernels.size(), 3u);
  EXPECT_EQ(u.kernels[0]->name, "relu2.1_cmp");
  ASSERT_EQ(u.launch.buffers.size(), 4u);
  EXPECT_EQ(u.launch.buffers[2].dtype, DType::I1);
  Memory fused = runFused(*k);
  expectSameOutputs(fused, runUnfusedBlock(u), "relu");
  Memory mem = Memory::fromLaunch(u.launch);
  for (const auto& fn : u.kernels) runThreadIR(*compileToThreadIR(*fn, u.launch).threadIR, u.launch, mem);
  expectSameOutputs(fused, mem, "relu on the executor");
}


// The input must be block IR before the layout passes.
TEST(Unfuse, RejectsLayouts) {
  auto k = compileFile(kernelFile("vector_add"));
  ASSERT_TRUE(k);
  ThreadCompilation tc = compileToThreadIR(*k->ir, k->launch);
  EXPECT_THROW(unfuse(*tc.withLayouts, k->launch), IRError);
  EXPECT_THROW(unfuse(*tc.threadIR, k->launch), IRError);
}

}  // namespace
}  // namespace tl
