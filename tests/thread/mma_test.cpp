// Tensor cores through the CPU stages: tests/thread/kernels/mma_dot.tl (a tiled matmul whose
// tl.dot takes f16, bf16, fp8 e4m3 / e5m2, f32 as tf32 or tf32x3, or f32 in IEEE precision) on tl-scalar,
// tl-block and the thread executor at 1-8 warps, with and without --keep-layouts, against a C++
// reference from the run's own inputs: each input rounded to the dot's dtype (tf32: its low 13
// mantissa bits dropped), the products summed in double. Also: the layout pass puts exactly the dots whose
// shapes fit on tensor cores (the thread IR has `mma` ops), the unrolled and the looped k steps,
// ragged sizes, and the plan's explanation.
#include <gtest/gtest.h>

#include <functional>

#include "ir/Printer.h"
#include "rank3_util.h"
#include "runtime/FloatOps.h"
#include "sim/ElementOps.h"
#include "thread/Layouts.h"

namespace tl {
namespace {

using rank3::Engine;
using rank3::Outputs;

const char* kModeName[] = {"f16", "bf16", "e4m3", "e5m2", "tf32", "ieee", "tf32x3", "f16acc"};
const DType kModeDtype[] = {DType::F16,  DType::BF16, DType::F8E4M3, DType::F8E5M2,
                            DType::F32,  DType::F32,  DType::F32,    DType::F16};
constexpr int kModes = 8;

double rounded(double v, int mode) {
  if (mode == 4) return truncToTf32(static_cast<float>(v));
  return sim::roundFloat(static_cast<float>(v), kModeDtype[mode]);
}

rank3::Reference reference(int mode) {
  return [mode](const Memory& in, const LaunchConfig& launch) {
    const int64_t M = rank3::launchInt(launch, "M"), N = rank3::launchInt(launch, "N"), K = rank3::launchInt(launch, "K");
    const bool bt = rank3::launchInt(launch, "BT") != 0;
    const Buffer *a = in.find("a_ptr"), *b = in.find("b_ptr");
    std::vector<double> c(size_t(M * N));
    for (int64_t m = 0; m < M; ++m)
      for (int64_t n = 0; n < N; ++n) {
        double s = 0;
        for (int64_t k = 0; k < K; ++k) s += rounded(a->getF(m * K + k), mode) * rounded(b->getF(bt ? n * K + k : k * N + n), mode);
        c[size_t(m * N + n)] = s;
      }
    return Outputs{{"c_ptr", c}};
  };
}

struct Case {
  std::string name;
  std::vector<std::pair<std::string, std::string>> sets;  // --set NAME=EXPR
};

std::vector<LaunchOverride> overrides(const Case& c, int mode) {
  std::vector<LaunchOverride> o{{"MODE", std::to_string(mode)}};
  for (auto& [n, e] : c.sets) o.push_back({n, e});
  return o;
}

const std::vector<Case> kCases = {
    {"Default64", {}},
    {"Ragged", {{"M", "50"}, {"N", "40"}, {"K", "40"}}},
    {"Tile64", {{"M", "128"}, {"N", "64"}, {"BM", "64"}, {"BN", "64"}, {"BK", "64"}}},
    // 256 / 16 = 16 k steps (f16; tf32 32, fp8 8): the looped form.
    {"LongK", {{"M", "32"}, {"N", "32"}, {"K", "256"}, {"BK", "256"}}},
    // 16 x 8 per program: too small for 4 warps on tensor cores, so FMAs.
    {"SmallTile", {{"M", "32"}, {"N", "16"}, {"BM", "16"}, {"BN", "8"}, {"BK", "16"}}},
    // The launch's num_stages: the loads of iteration k + 1 are carried into iteration k
    // (ir/PipelineLoads.cpp): two iterations, a ragged one (the last prefetch masked off), and one.
    {"Pipelined", {{"num_stages", "3"}}},
    {"PipelinedRagged", {{"M", "50"}, {"N", "40"}, {"K", "40"}, {"num_stages", "2"}}},
    {"PipelinedOneStep", {{"K", "32"}, {"num_stages", "2"}}},
    // B stored [N][K]: the loaded tile runs along k; staged transposed, ldmatrix without .trans.
    {"KMajorB", {{"BT", "1"}}},
    {"KMajorBRagged", {{"BT", "1"}, {"M", "50"}, {"N", "40"}, {"K", "40"}, {"num_stages", "2"}}},
};

class MmaDot : public testing::TestWithParam<std::tuple<int, size_t>> {};

TEST_P(MmaDot, EveryEngineMatchesTheRoundedReference) {
  const auto [mode, ci] = GetParam();
  const Case& c = kCases[ci];
  const auto o = overrides(c, mode);
  // f32 outputs of a sum of up to 256 products of N(0,1) values; an f16 accumulator (mode 7)
  // keeps 11 bits of sums up to ~50 (f16's spacing there 2^-5) and is rounded every 16 k.
  const double atol = mode == 7 ? 0.25 : 2e-3, rtol = mode == 7 ? 1e-2 : 1e-3;
  rank3::runOn(Engine::Scalar, "mma_dot", o, 4, false, reference(mode), atol, rtol);
  rank3::runOn(Engine::Block, "mma_dot", o, 4, false, reference(mode), atol, rtol);
  for (int warps : {1, 2, 4, 8})
    for (bool keep : {false, true}) rank3::runOn(Engine::Thread, "mma_dot", o, warps, keep, reference(mode), atol, rtol);
}

INSTANTIATE_TEST_SUITE_P(Modes, MmaDot, testing::Combine(testing::Range(0, kModes), testing::Range(size_t(0), kCases.size())),
                         [](const auto& info) {
                           return std::string(kModeName[std::get<0>(info.param)]) + "_" + kCases[std::get<1>(info.param)].name;
                         });

int64_t countMma(const Function& fn) {
  int64_t n = 0;
  walk(fn.body, [&](Op& op) { n += op.kind == OpKind::Mma; });
  return n;
}

ThreadCompilation compile(int mode, const std::vector<std::pair<std::string, std::string>>& sets, int warps,
                          std::unique_ptr<CompiledKernel>& k) {
  std::ostringstream err;
  std::vector<LaunchOverride> o{{"MODE", std::to_string(mode)}};
  for (auto& [n, e] : sets) o.push_back({n, e});
  k = compileKernelFile(rank3::kernelFile("mma_dot"), o, err);
  EXPECT_TRUE(k) << err.str();
  ThreadCompileOptions opts;
  opts.numWarps = warps;
  return compileToThreadIR(*k->ir, k->launch, opts);
}

TEST(MmaPlan, TensorCoresExactlyWhereTheShapeFits) {
  std::unique_ptr<CompiledKernel> k;
  for (int mode = 0; mode < kModes; ++mode) {
    // 32 x 32 per program, 4 warps 2 x 2: 1 m-tile x 2 n-tiles per warp, BK / k steps; tf32x3
    // three mma per tile.
    ThreadCompilation tc = compile(mode, {}, 4, k);
    const int64_t kSteps = mode == 4 ? 4 : mode == 6 ? 12 : (mode == 2 || mode == 3) ? 1 : 2;  // f16acc: 2
    EXPECT_EQ(countMma(*tc.threadIR), mode == 5 ? 0 : 2 * kSteps) << kModeName[mode];
    const std::string why = explainDots(*tc.blockIR, 4);
    EXPECT_NE(why.find(mode == 5 ? "FMAs: f32 inputs in IEEE precision" : "tensor cores: mma.sync.aligned"), std::string::npos)
        << kModeName[mode] << ": " << why;
    // f16 / bf16 fragments come by ldmatrix (A x4, B x4.trans: 1 + 1 per k step here), the
    // others by 4-byte ld_shared.
    int64_t ldm = 0;
    walk(tc.threadIR->body, [&](Op& op) { ldm += op.kind == OpKind::Ldmatrix; });
    EXPECT_EQ(ldm, mode < 2 || mode == 7 ? 2 * kSteps : 0) << kModeName[mode];
    // The accumulator carries the mma layout through the loop; the stores convert from it.
    if (mode != 5) EXPECT_NE(printFunction(*tc.withLayouts).find("wpc=[2,2], order=[1,0]"), std::string::npos);
  }
  // 16 x 8 with 4 warps does not divide: FMAs, and the reason.
  ThreadCompilation small = compile(0, {{"BM", "16"}, {"BN", "8"}, {"BK", "16"}}, 4, k);
  EXPECT_EQ(countMma(*small.threadIR), 0);
  EXPECT_NE(explainDots(*small.blockIR, 4).find("does not divide into 16 x 8 pieces"), std::string::npos);
  // ... but one warp takes it: 1 mma per k step.
  ThreadCompilation one = compile(0, {{"BM", "16"}, {"BN", "8"}, {"BK", "16"}}, 1, k);
  EXPECT_EQ(countMma(*one.threadIR), 1);
  // K = 256 in one step: the k steps are a loop (one mma per tile in its body), not 16 copies.
  ThreadCompilation loop = compile(0, {{"M", "32"}, {"N", "32"}, {"K", "256"}, {"BK", "256"}}, 4, k);
  EXPECT_EQ(countMma(*loop.threadIR), 2);
  // num_stages = 2: both operand loads are carried, the same mma count.
  ThreadCompilation piped = compile(0, {{"num_stages", "2"}}, 4, k);
  EXPECT_EQ(countMma(*piped.threadIR), 4);
  bool carried = false;
  walk(piped.blockIR->body, [&](Op& op) { carried |= op.kind == OpKind::For && op.hasAttr("pipelined_loads") && op.intAttr("pipelined_loads") == 2; });
  EXPECT_TRUE(carried) << printFunction(*piped.blockIR);
  // B stored [N][K]: the tile runs along k, so the dot stages it [N][K] and loads B fragments with
  // ldmatrix without .trans (A x4 and B x4 per k step, 2 steps).
  ThreadCompilation kmajor = compile(0, {{"BT", "1"}}, 4, k);
  int64_t trans = 0, plain = 0;
  walk(kmajor.threadIR->body, [&](Op& op) {
    if (op.kind == OpKind::Ldmatrix) ++(op.intAttr("trans") ? trans : plain);
  });
  EXPECT_EQ(trans, 0);
  EXPECT_EQ(plain, 4);
  EXPECT_NE(kmajor.shared.str().find("dot operand b transposed [N][K] swizzled"), std::string::npos) << kmajor.shared.str();
}

// tf32x3 is Triton's route to fp32 accuracy on tensor cores: on the executor (which adds as the
// H200's tensor cores do, sim/TensorCoreSum.h) its error against the exact sum of the inputs is
// a hundredth of tf32's or less, and below 1e-5 of the largest output, at a K of 256 and at a
// ragged size, on 1 and 4 warps.
TEST(MmaPlan, Tf32x3IsNearlyAsAccurateAsFp32) {
  auto maxError = [](int mode, const std::vector<std::pair<std::string, std::string>>& sets, int warps) {
    std::unique_ptr<CompiledKernel> k;
    ThreadCompilation tc = compile(mode, sets, warps, k);
    Memory m = Memory::fromLaunch(k->launch);
    const rank3::Outputs want = reference(5)(m, k->launch);  // the exact sum of the unrounded inputs
    runThreadIR(*tc.threadIR, k->launch, m);
    const Buffer* c = m.find("c_ptr");
    double err = 0, largest = 0;
    for (size_t i = 0; i < want.at("c_ptr").size(); ++i) {
      err = std::max(err, std::fabs(c->getF(int64_t(i)) - want.at("c_ptr")[i]));
      largest = std::max(largest, std::fabs(want.at("c_ptr")[i]));
    }
    return std::pair<double, int64_t>{err / largest, countMma(*tc.threadIR)};
  };
  const std::vector<std::vector<std::pair<std::string, std::string>>> shapes = {
      {{"M", "32"}, {"N", "32"}, {"K", "256"}, {"BK", "256"}}, {{"M", "50"}, {"N", "40"}, {"K", "72"}}};
  for (const auto& sets : shapes)
    for (int warps : {1, 4}) {
      const auto [tf32, tf32Mma] = maxError(4, sets, warps);
      const auto [x3, x3Mma] = maxError(6, sets, warps);
      EXPECT_EQ(x3Mma, 3 * tf32Mma);
      EXPECT_GT(tf32, 1e-4) << "tf32 drops 13 bits of every input";
      EXPECT_LT(x3, 1e-5) << "tf32x3, relative to the largest output";
      EXPECT_LT(x3 * 100, tf32) << x3 << " against " << tf32;
    }
  // An infinite input: its low part is 0 (inf - inf would be NaN), so a[0][0] = inf makes row 0
  // of C infinite with b[0][n]'s sign and leaves the other rows finite, as in IEEE fp32.
  std::unique_ptr<CompiledKernel> k;
  ThreadCompilation tc = compile(6, {}, 4, k);
  Memory m = Memory::fromLaunch(k->launch);
  m.find("a_ptr")->setF(0, INFINITY);
  const Buffer b = *m.find("b_ptr");
  runThreadIR(*tc.threadIR, k->launch, m);
  const Buffer* c = m.find("c_ptr");
  const int64_t N = rank3::launchInt(k->launch, "N");
  for (int64_t n = 0; n < N; ++n) {
    EXPECT_EQ(c->getF(n), b.getF(n) > 0 ? INFINITY : -INFINITY) << "c[0][" << n << "]";
    EXPECT_TRUE(std::isfinite(c->getF(N + n))) << "c[1][" << n << "]";
  }
}

// Attention's q is loaded before the key loop: its dot stages it once, before the loop, into a
// buffer live for the whole loop; the loop's stores are only k^T's, p's and v's.
TEST(MmaPlan, ALoopInvariantOperandIsStagedOnceBeforeTheLoop) {
  std::ostringstream err;
  auto k = compileKernelFile(std::string(TL_SOURCE_DIR) + "/kernels/triton/t06_attention_fwd.tl", {{"STAGE", "1"}}, err);
  ASSERT_TRUE(k) << err.str();
  ThreadCompilation tc = compileToThreadIR(*k->ir, k->launch);
  const std::string plan = tc.shared.str();
  EXPECT_NE(plan.find("dot operand a [M][K] swizzled (tensor cores), staged once before the loop"), std::string::npos) << plan;
  int64_t inLoop = 0, before = 0;
  std::function<void(const Region&, bool)> visit = [&](const Region& r, bool looped) {
    for (const auto& op : r.ops) {
      if (op->kind == OpKind::StShared) ++(looped ? inLoop : before);
      for (const auto& sub : op->regions) visit(*sub, looped || op->kind == OpKind::For);
    }
  };
  visit(tc.threadIR->body, false);
  EXPECT_GT(before, 0);
  EXPECT_GT(inLoop, 0);
  for (const SharedBuffer& b : tc.shared.buffers)
    if (b.purpose.find("staged once") != std::string::npos) EXPECT_GT(b.lastOp, b.firstOp) << plan;
}

// Attention's two dots are chained (p = exp2(q k^T - m) feeds p v): both put every warp along M,
// so a warp holds whole rows of p, and the second dot takes its A fragments from p's registers:
// no shared buffer and no ldmatrix for its a; the first dot's row max and sum need no shared
// memory either (a row is one warp's).
TEST(MmaPlan, AChainedDotTakesItsAFromTheFirstDotsRegisters) {
  std::ostringstream err;
  auto k = compileKernelFile(std::string(TL_SOURCE_DIR) + "/kernels/triton/t06_attention_fwd.tl",
                             {{"STAGE", "1"}, {"BLOCK_M", "128"}, {"BLOCK_N", "64"}, {"HEAD_DIM", "64"}, {"N_CTX", "256"}}, err);
  ASSERT_TRUE(k) << err.str();
  ThreadCompilation tc = compileToThreadIR(*k->ir, k->launch, ThreadCompileOptions{8, false});
  const std::string why = explainDots(*tc.blockIR, 8);
  EXPECT_EQ(why.find("warps 4 x 2"), std::string::npos) << why;
  size_t first = why.find("warps 8 x 1");
  ASSERT_NE(first, std::string::npos) << why;
  EXPECT_NE(why.find("warps 8 x 1", first + 1), std::string::npos) << why;
  const uint32_t pv = 52;  // acc = tl.dot(p.to(v.dtype), v, acc)
  int64_t ldmAtPv = 0;
  walk(tc.threadIR->body, [&](Op& op) { ldmAtPv += op.kind == OpKind::Ldmatrix && op.loc.line == pv; });
  // 4 k steps of 16 over BLOCK_N = 64, each with 4 ldmatrix.x4.trans of v (8 n-tiles) and none of p.
  EXPECT_EQ(ldmAtPv, 4 * 4);
  for (const SharedBuffer& b : tc.shared.buffers) {
    EXPECT_FALSE(b.loc.line == pv && b.purpose.find("operand a") != std::string::npos) << tc.shared.str();
    EXPECT_NE(b.purpose, "reduce across warps") << tc.shared.str();
  }
}

}  // namespace
}  // namespace tl
