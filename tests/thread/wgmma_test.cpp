// Warpgroup MMAs (wgmma.mma_async; stages/thread/LowerWgmma.cpp, ThreadOps.def `wgmma`):
//   - the shared-memory layouts of ir/MmaLayout.h against the PTX ISA's canonical layouts and its
//     worked examples (9.7.15.5.1.2), and the descriptor's bit fields;
//   - tests/thread/kernels/mma_dot.tl with --wgmma on the thread executor, f16, bf16, fp8 and tf32, against
//     a C++ reference (inputs rounded to the dtype, products summed in double; fp8 within 2^-7 of
//     the largest output, since its wgmma keeps 13 bits) at every swizzle
//     width (K, N = 16, 32, 64 elements), 128-byte column blocks (K, N = 128), two wgmmas per row
//     of blocks (N = 512), 4 and 8 warps, k-major b, ragged sizes and num_stages;
//   - which dots the plan puts on wgmma, why not the others, and the 1024-byte alignment;
//   - attention's p v with a from registers (the RS form) against tl-scalar.
#include <gtest/gtest.h>

#include <functional>

#include "ir/MmaLayout.h"
#include "ir/Parser.h"
#include "ir/Verifier.h"
#include "ir/Printer.h"
#include "rank3_util.h"
#include "sim/ElementOps.h"
#include "thread/Layouts.h"

namespace tl {
namespace {

// CuTe's Swizzle<B, 4, 3> on a byte address: bits 4 .. 4+B-1 ^= bits 7 .. 7+B-1.
int64_t swizzle(int64_t addr, int bits) { return addr ^ (((addr >> 7) & ((1 << bits) - 1)) << 4); }

// The ISA's worked example "MN-major, 64B swizzling, bf16": Swizzle<2,4,3> o
// ((8,4,2),(8,2)):((1,8,256),(32,512)) in elements, LBO = 256 and SBO = 512 elements.
TEST(WgmmaLayout, MnMajor64BExampleOfTheIsa) {
  WgmmaOperandLayout l{64, 256 * 2, 512 * 2, true};
  for (int64_t n = 0; n < 64; ++n)
    for (int64_t k = 0; k < 16; ++k) {
      const int64_t e = (n % 8) + (n / 8 % 4) * 8 + (n / 32) * 256 + (k % 8) * 32 + (k / 8) * 512;
      ASSERT_EQ(wgmmaAddress(l, 0, n, k), swizzle(2 * e, 2)) << "n " << n << " k " << k;
    }
}

// "MN-major, 32B swizzling, bf16": Swizzle<1,4,3> o ((8,2,2),(8,2)):((1,8,128),(16,256)).
TEST(WgmmaLayout, MnMajor32BExampleOfTheIsa) {
  WgmmaOperandLayout l{32, 128 * 2, 256 * 2, true};
  for (int64_t n = 0; n < 32; ++n)
    for (int64_t k = 0; k < 16; ++k) {
      const int64_t e = (n % 8) + (n / 8 % 2) * 8 + (n / 16) * 128 + (k % 8) * 16 + (k / 8) * 256;
      ASSERT_EQ(wgmmaAddress(l, 0, n, k), swizzle(2 * e, 1)) << "n " << n << " k " << k;
    }
}

// K-major canonical layouts ((8,m),(T,2k)):((S/2,SBO),(1,T)) for T = 8 (16-bit elements), the
// rows of an S-byte swizzle atom contiguous (SBO = 8 S): row r, element k at r S + 2k, swizzled;
// and a start inside the atom (a k step of 16 elements) reads the next 32 bytes of each row.
TEST(WgmmaLayout, KMajorCanonicalLayouts) {
  for (int S : {32, 64, 128}) {
    const int bits = S == 128 ? 3 : S == 64 ? 2 : 1;
    WgmmaOperandLayout l{S, 0, 8 * S, false};
    for (int64_t r = 0; r < 64; ++r)
      for (int64_t k = 0; k < 16; ++k) {
        ASSERT_EQ(wgmmaAddress(l, 1024, r, k), swizzle(1024 + r * S + 2 * k, bits)) << S << " r " << r << " k " << k;
        if (S == 128) ASSERT_EQ(wgmmaAddress(l, 1024 + 32, r, k), swizzle(1024 + r * S + 32 + 2 * k, bits));
      }
  }
}

// The descriptor (PTX ISA "Matrix Descriptor Format"): (addr & 0x3FFFF) >> 4 in bits 0-13, LBO
// >> 4 in 16-29 (1 for a swizzled K-major operand), SBO >> 4 in 32-45, the mode in 62-63.
TEST(WgmmaLayout, DescriptorFields) {
  WgmmaOperandLayout mn{64, 512, 1024, true};
  const uint64_t d = wgmmaDescriptor(mn, 0x1400);
  EXPECT_EQ(d & 0x3FFF, 0x140u);
  EXPECT_EQ(d >> 16 & 0x3FFF, 32u);
  EXPECT_EQ(d >> 32 & 0x3FFF, 64u);
  EXPECT_EQ(d >> 49 & 0x7, 0u);
  EXPECT_EQ(d >> 62, 2u);
  WgmmaOperandLayout k{128, 0, 1024, false};
  const uint64_t e = wgmmaDescriptor(k, 0x40000 + 0x800);  // bits above 17 are dropped
  EXPECT_EQ(e & 0x3FFF, 0x80u);
  EXPECT_EQ(e >> 16 & 0x3FFF, 1u);
  EXPECT_EQ(e >> 62, 1u);
  EXPECT_EQ(wgmmaDescriptor(WgmmaOperandLayout{32, 0, 256, false}, 0) >> 62, 3u);
}

// mma_dot with --wgmma, checked against the rounded reference.
void runWgmma(int mode, const std::vector<LaunchOverride>& sets, int warps, bool expectWgmma = true) {
  std::ostringstream err;
  std::vector<LaunchOverride> o{{"MODE", std::to_string(mode)}};
  o.insert(o.end(), sets.begin(), sets.end());
  auto k = compileKernelFile(rank3::kernelFile("mma_dot"), o, err);
  ASSERT_TRUE(k) << err.str();
  ThreadCompileOptions opts;
  opts.numWarps = warps;
  opts.wgmma = true;
  ThreadCompilation tc = compileToThreadIR(*k->ir, k->launch, opts);
  int64_t wgmmas = 0, f16Acc = 0;
  walk(tc.threadIR->body, [&](Op& op) {
    wgmmas += op.kind == OpKind::Wgmma;
    f16Acc += op.kind == OpKind::Wgmma && op.result()->type.dtype == DType::F16;
  });
  EXPECT_EQ(wgmmas > 0, expectWgmma) << explainDots(*tc.blockIR, warps, true);
  EXPECT_EQ(f16Acc, mode == 7 ? wgmmas : 0) << "mode 7's wgmmas accumulate in f16";
  for (const SharedBuffer& b : tc.shared.buffers)
    if (b.purpose.find("(wgmma)") != std::string::npos) EXPECT_EQ(b.offset % 1024, 0) << tc.shared.str();
  Memory m = Memory::fromLaunch(k->launch);
  const int64_t M = rank3::launchInt(k->launch, "M"), N = rank3::launchInt(k->launch, "N"), K = rank3::launchInt(k->launch, "K");
  const bool bt = rank3::launchInt(k->launch, "BT") != 0;
  // mma_dot.tl's MODEs (5 ieee and 6 tf32x3 take no wgmma; 7 is f16 with an f16 accumulator).
  const DType modes[] = {DType::F16, DType::BF16, DType::F8E4M3, DType::F8E5M2, DType::F32, DType::F32, DType::F32, DType::F16};
  const DType d = modes[mode];
  // The inputs as the tensor core reads them: rounded to the dtype, or (tf32) their low 13
  // mantissa bits dropped (wgmma reads the staged f32 as tf32; no cvt.rna).
  auto in = [d](double x) {
    if (d != DType::F32) return double(sim::roundFloat(float(x), d));
    return double(sim::asF(sim::fromF(float(x)) & ~sim::Slot(0x1fff)));
  };
  std::vector<double> want(size_t(M * N));
  {
    const Buffer *a = m.find("a_ptr"), *b = m.find("b_ptr");
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j) {
        double s = 0;
        for (int64_t kk = 0; kk < K; ++kk) s += in(a->getF(i * K + kk)) * in(b->getF(bt ? j * K + kk : kk * N + j));
        want[size_t(i * N + j)] = s;
      }
  }
  runThreadIR(*tc.threadIR, k->launch, m);
  const Buffer* c = m.find("c_ptr");
  // fp8 wgmma keeps 13 bits of its sum (sim/TensorCoreSum.h): within 2^-7 of the largest output,
  // as Compare.cpp's fp8 tolerance.
  // An f16 accumulator keeps 11 bits of sums up to ~50 and rounds every 16 k (mma_test.cpp).
  double atol = mode == 7 ? 0.25 : 2e-3;
  const double rtol = mode == 7 ? 1e-2 : 1e-3;
  if (d == DType::F8E4M3 || d == DType::F8E5M2)
    for (double v : want) atol = std::max(atol, 0x1p-7 * std::fabs(v));
  int64_t bad = 0;
  for (int64_t i = 0; i < M * N; ++i) bad += !(std::fabs(c->getF(i) - want[size_t(i)]) <= atol + rtol * std::fabs(want[size_t(i)]));
  EXPECT_EQ(bad, 0) << "of " << M * N;
}

using S = std::vector<LaunchOverride>;

TEST(Wgmma, SwizzleWidths) {
  for (int mode : {0, 1}) {
    runWgmma(mode, {{"BM", "64"}, {"BN", "16"}, {"BK", "16"}}, 4);   // 32-byte rows
    runWgmma(mode, {{"BM", "64"}, {"BN", "32"}, {"BK", "32"}}, 4);   // 64
    runWgmma(mode, {{"BM", "64"}, {"BN", "64"}, {"BK", "64"}}, 4);   // 128
  }
}

TEST(Wgmma, ColumnBlocksAndWideTiles) {
  runWgmma(1, {{"M", "128"}, {"N", "256"}, {"K", "256"}, {"BM", "128"}, {"BN", "128"}, {"BK", "128"}}, 4);
  runWgmma(0, {{"M", "64"}, {"N", "512"}, {"BM", "64"}, {"BN", "512"}, {"BK", "32"}}, 4);  // two m64n256
  runWgmma(1, {{"M", "128"}, {"N", "256"}, {"BM", "128"}, {"BN", "256"}, {"BK", "64"}}, 8);
}

TEST(Wgmma, KMajorBRaggedAndPipelined) {
  runWgmma(0, {{"BM", "64"}, {"BK", "64"}, {"BT", "1"}}, 4);
  runWgmma(1, {{"M", "100"}, {"N", "90"}, {"K", "70"}, {"BM", "64"}}, 4);
  runWgmma(1, {{"M", "128"}, {"N", "128"}, {"K", "192"}, {"BM", "128"}, {"BN", "64"}, {"BK", "64"}, {"num_stages", "2"}}, 8);
  runWgmma(0, {{"M", "128"}, {"BM", "64"}, {"BT", "1"}, {"num_stages", "3"}}, 4);
}

// out_dtype=tl.float16 (mode 7): wgmma...f16.f16.f16 on f16 accumulator registers, with 64- and
// 128-byte swizzles, B K-major, ragged sizes, m64n256 tiles and load rings at 8 warps.
TEST(Wgmma, F16Accumulator) {
  runWgmma(7, {{"BM", "64"}, {"BN", "32"}, {"BK", "32"}}, 4);
  runWgmma(7, {{"BM", "64"}, {"BN", "64"}, {"BK", "64"}, {"BT", "1"}}, 4);
  runWgmma(7, {{"M", "100"}, {"N", "90"}, {"K", "70"}, {"BM", "64"}}, 4);
  runWgmma(7, {{"M", "128"}, {"N", "512"}, {"K", "192"}, {"BM", "128"}, {"BN", "256"}, {"BK", "64"}, {"num_stages", "3"}}, 8);
}

// tf32 (mode 4) and fp8 (2: e4m3, 3: e5m2) read both operands K-major (the ISA has no MN-major
// form for them): b is staged [N][K] whether its registers run along k (BT = 1) or along n (one
// element per store), every wgmma has trans_b 0 and a k step of 32 bytes (k8, k32). Each swizzle
// width, column blocks (tf32 rows of 64 k = 256 bytes), ragged sizes, 8 warps, and load rings
// (tf32 loads feed the dot directly).
TEST(Wgmma, Tf32AndFp8ReadKMajorOperands) {
  for (int mode : {2, 3, 4}) {
    const bool tf32 = mode == 4;
    for (const char* bt : {"0", "1"}) {
      runWgmma(mode, {{"BM", "64"}, {"BN", "64"}, {"BK", "64"}, {"BT", bt}}, 4);
      runWgmma(mode, {{"BM", "64"}, {"BN", "32"}, {"BK", tf32 ? "8" : "32"}, {"BT", bt}}, 4);  // 32-byte rows
      runWgmma(mode, {{"M", "100"}, {"N", "90"}, {"K", "70"}, {"BM", "64"}, {"BK", tf32 ? "16" : "64"}, {"BT", bt}}, 4);
    }
    runWgmma(mode, {{"M", "128"}, {"N", "128"}, {"K", "192"}, {"BM", "128"}, {"BN", "64"}, {"BK", "64"}, {"num_stages", "3"}}, 8);
  }
  std::ostringstream err;
  for (int mode : {2, 4}) {
    auto k = compileKernelFile(rank3::kernelFile("mma_dot"), {{"MODE", std::to_string(mode)}, {"BM", "64"}, {"BK", "32"}}, err);
    ASSERT_TRUE(k) << err.str();
    ThreadCompilation tc = compileToThreadIR(*k->ir, k->launch, ThreadCompileOptions{4, false, nullptr, true});
    const std::string why = explainDots(*tc.blockIR, 4, true);
    EXPECT_NE(why.find(mode == 4 ? "wgmma.mma_async.m64n32k8.f32.tf32" : "wgmma.mma_async.m64n32k32.f32.e4m3"), std::string::npos) << why;
    walk(tc.threadIR->body, [&](Op& op) {
      if (op.kind == OpKind::Wgmma) EXPECT_EQ(op.intAttr("trans_b"), 0);
    });
  }
  // fp8 rows of 16 k are 16 bytes: no swizzle atom, so mma.sync, and the plan says why.
  auto k = compileKernelFile(rank3::kernelFile("mma_dot"), {{"MODE", "2"}, {"BM", "64"}, {"BK", "16"}}, err);
  ASSERT_TRUE(k) << err.str();
  ThreadCompilation tc = compileToThreadIR(*k->ir, k->launch, ThreadCompileOptions{4, false, nullptr, true});
  EXPECT_NE(explainDots(*tc.blockIR, 4, true).find("FMAs: K = 16 is not a multiple of m16n8k32"), std::string::npos)
      << explainDots(*tc.blockIR, 4, true);
}

// The ring of a tf32 operand copies 16 bytes (4 f32) per cp.async: the loads feed the dot
// directly, so num_stages 3 gives rings for a (registers along k) and for a k-major b.
TEST(Wgmma, Tf32OperandsComeThroughLoadRings) {
  std::ostringstream err;
  auto k = compileKernelFile(rank3::kernelFile("mma_dot"),
                             {{"MODE", "4"}, {"M", "128"}, {"BM", "64"}, {"BK", "32"}, {"BT", "1"}, {"num_stages", "3"}}, err);
  ASSERT_TRUE(k) << err.str();
  ThreadCompilation tc = compileToThreadIR(*k->ir, k->launch, ThreadCompileOptions{4, false, nullptr, true});
  int64_t copies = 0;
  walk(tc.threadIR->body, [&](Op& op) { copies += op.kind == OpKind::CpAsync; });
  EXPECT_GT(copies, 0) << printFunction(*tc.threadIR);
  runWgmma(4, {{"M", "128"}, {"BM", "64"}, {"BK", "32"}, {"BT", "1"}, {"num_stages", "3"}}, 4);
}

// Where wgmma does not fit, mma.sync (or FMAs) run, and the plan says why.
TEST(Wgmma, PlanFallsBackWithAReason) {
  runWgmma(1, {}, 4, false);                  // 32 x 32 tiles: M is not a multiple of 16 x 4
  runWgmma(1, {{"BM", "64"}}, 2, false);      // 2 warps: no whole warpgroup
  runWgmma(1, {{"BM", "64"}, {"BN", "8"}}, 4, false);  // N = 8: not a swizzle row
  std::ostringstream err;
  auto k = compileKernelFile(rank3::kernelFile("mma_dot"), {{"MODE", "1"}}, err);
  ASSERT_TRUE(k) << err.str();
  ThreadCompilation tc = compileToThreadIR(*k->ir, k->launch, ThreadCompileOptions{4, false, nullptr, true});
  const std::string why = explainDots(*tc.blockIR, 4, true);
  EXPECT_NE(why.find("mma.sync.aligned"), std::string::npos) << why;
  ThreadCompilation two = compileToThreadIR(*k->ir, k->launch, ThreadCompileOptions{2, false, nullptr, true});
  EXPECT_NE(explainDots(*two.blockIR, 2, true).find("mma.sync"), std::string::npos);
  std::unique_ptr<CompiledKernel> big = compileKernelFile(rank3::kernelFile("mma_dot"), {{"MODE", "1"}, {"BM", "64"}}, err);
  ASSERT_TRUE(big) << err.str();
  ThreadCompilation w = compileToThreadIR(*big->ir, big->launch, ThreadCompileOptions{4, false, nullptr, true});
  EXPECT_NE(explainDots(*w.blockIR, 4, true).find("wgmma.mma_async.m64n32k16.f32.bf16, 1 warpgroup along M"), std::string::npos)
      << explainDots(*w.blockIR, 4, true);
  // The thread IR: staging, the async-proxy fence, one wgmma_fence, the wgmmas, commit, wait 0.
  const std::string ir = printFunction(*w.threadIR);
  for (const char* s : {"fence_proxy_async", "wgmma_fence", "wgmma_commit", "wgmma_wait"}) EXPECT_NE(ir.find(s), std::string::npos) << s;
  // The wait hands on the accumulators: its results are what the rest of the kernel reads.
  int64_t waits = 0;
  walk(w.threadIR->body, [&](Op& op) {
    if (op.kind != OpKind::WgmmaWait) return;
    ++waits;
    EXPECT_EQ(op.intAttr("pending"), 0);
    EXPECT_GT(op.numOperands(), 0u);
    for (const Value* v : op.operands) EXPECT_EQ(v->isRegionArg() ? OpKind::Return : v->def->kind, OpKind::Wgmma);
  });
  EXPECT_GT(waits, 0);
}

// Attention's second dot (p v) takes p from the first dot's registers: a wgmma whose a is this
// warp's A fragment (the RS form), no shared buffer for p, its m-tile rows those of D's
// registers. On the executor against tl-scalar at head dims 64 and 128, causal and not, with
// and without load rings; the thread IR round-trips.
TEST(Wgmma, AChainedDotTakesItsAFromRegisters) {
  for (const char* d : {"64", "128"})
    for (const char* stage : {"1", "3"})
      for (const char* stages : {"1", "3"}) {
        const std::string what = std::string("HEAD_DIM ") + d + " STAGE " + stage + " num_stages " + stages;
        std::ostringstream err;
        auto k = compileKernelFile(std::string(TL_SOURCE_DIR) + "/kernels/triton/t06_attention_fwd.tl",
                                   {{"Z", "1"}, {"H", "1"}, {"N_CTX", "256"}, {"HEAD_DIM", d}, {"BLOCK_M", "128"},
                                    {"BLOCK_N", "64"}, {"STAGE", stage}, {"num_stages", stages}, {"sm_scale", "0.125"},
                                    {"Q", "randn((Z,H,N_CTX,HEAD_DIM),dtype=bf16,seed=1)"},
                                    {"K", "randn((Z,H,N_CTX,HEAD_DIM),dtype=bf16,seed=2)"},
                                    {"V", "randn((Z,H,N_CTX,HEAD_DIM),dtype=bf16,seed=3)"},
                                    {"Out", "zeros((Z,H,N_CTX,HEAD_DIM),dtype=bf16,output=True)"}},
                                   err);
        ASSERT_TRUE(k) << err.str();
        ThreadCompilation tc = compileToThreadIR(*k->ir, k->launch, ThreadCompileOptions{8, false, nullptr, true});
        const std::string why = explainDots(*tc.blockIR, 8, true);
        const size_t first = why.find("wgmma.mma_async");
        ASSERT_NE(first, std::string::npos) << why;
        EXPECT_NE(why.find("wgmma.mma_async", first + 1), std::string::npos) << what << "\n" << why;
        const uint32_t pv = 52;  // acc = tl.dot(p.to(v.dtype), v, acc)
        int64_t fromRegs = 0, fromShared = 0;
        walk(tc.threadIR->body, [&](Op& op) {
          if (op.kind != OpKind::Wgmma || op.loc.line != pv) return;
          ++(op.operand(0)->type.isTile() ? fromRegs : fromShared);
          EXPECT_EQ(op.attr("a_swizzle"), nullptr);
        });
        EXPECT_EQ(fromRegs, 4 * (std::string(stage) == "3" ? 2 : 1)) << what;  // BLOCK_N / 16 k steps per loop
        EXPECT_EQ(fromShared, 0) << what;
        for (const SharedBuffer& b : tc.shared.buffers)
          EXPECT_FALSE(b.loc.line == pv && b.purpose.find("operand a") != std::string::npos) << tc.shared.str();
        DiagEngine diag;
        auto parsed = parseFunction(printFunction(*tc.threadIR), diag);
        ASSERT_TRUE(parsed && !diag.hasErrors()) << diag.renderAll();
        EXPECT_EQ(printFunction(*parsed), printFunction(*tc.threadIR));
        Memory want = Memory::fromLaunch(k->launch), got = Memory::fromLaunch(k->launch);
        runScalar(*k->ir, k->launch, want);
        runThreadIR(*tc.threadIR, k->launch, got);
        const Buffer *w = want.find("Out"), *g = got.find("Out");
        ASSERT_TRUE(w && g);
        int64_t bad = 0;
        for (int64_t i = 0; i < w->numel(); ++i) bad += !(std::fabs(g->getF(i) - w->getF(i)) <= 2e-2 + 2e-2 * std::fabs(w->getF(i)));
        EXPECT_EQ(bad, 0) << what;
      }
}

// The thread IR with wgmmas verifies, prints and parses back to the same text; a wgmma with a
// wrong attribute is rejected by the verifier with the reason.
TEST(Wgmma, ThreadIrRoundTripsAndTheVerifierChecksIt) {
  std::ostringstream err;
  auto k = compileKernelFile(rank3::kernelFile("mma_dot"), {{"MODE", "1"}, {"BM", "64"}, {"BT", "1"}}, err);
  ASSERT_TRUE(k) << err.str();
  ThreadCompilation tc = compileToThreadIR(*k->ir, k->launch, ThreadCompileOptions{4, false, nullptr, true});
  EXPECT_EQ(verifyFunction(*tc.threadIR), "");
  const std::string text = printFunction(*tc.threadIR);
  DiagEngine diag;
  auto parsed = parseFunction(text, diag);
  ASSERT_TRUE(parsed) << diag.renderAll();
  EXPECT_EQ(printFunction(*parsed), text);
  Op* w = nullptr;
  walk(parsed->body, [&](Op& op) { if (op.kind == OpKind::Wgmma && !w) w = &op; });
  ASSERT_TRUE(w);
  w->setAttr("n", int64_t(12));
  EXPECT_NE(verifyFunction(*parsed).find("n must be a multiple of 8"), std::string::npos);
  w->setAttr("n", int64_t(32));
  w->setAttr("a_swizzle", int64_t(48));
  EXPECT_NE(verifyFunction(*parsed).find("a_swizzle must be 32, 64 or 128"), std::string::npos);
  w->setAttr("a_swizzle", int64_t(128));
  w->setAttr("dtype", std::string("i32"));
  EXPECT_NE(verifyFunction(*parsed).find("dtype must be"), std::string::npos);
  w->setAttr("trans_b", int64_t(1));  // b N-major: valid for bf16, which tf32 and fp8 have not
  w->setAttr("dtype", std::string("bf16"));
  EXPECT_EQ(verifyFunction(*parsed), "");
  w->setAttr("dtype", std::string("f32"));
  EXPECT_NE(verifyFunction(*parsed).find("trans_b must be 0 for tf32 and fp8"), std::string::npos);
}

// A wgmma writes its registers until the wgmma_wait that covers it: whatever else reads them
// takes the wait's results. Reading the wgmma's own result past the wait is a verifier error.
TEST(Wgmma, ReadingAnAccumulatorBeforeItsWaitIsAVerifierError) {
  std::ostringstream err;
  auto k = compileKernelFile(rank3::kernelFile("mma_dot"), {{"MODE", "1"}, {"BM", "64"}}, err);
  ASSERT_TRUE(k) << err.str();
  ThreadCompilation tc = compileToThreadIR(*k->ir, k->launch, ThreadCompileOptions{4, false, nullptr, true});
  EXPECT_EQ(verifyFunction(*tc.threadIR), "");
  Op* wait = nullptr;
  walk(tc.threadIR->body, [&](Op& op) {
    if (op.kind == OpKind::WgmmaWait && !wait) wait = &op;
  });
  ASSERT_TRUE(wait && wait->numOperands() > 0);
  replaceAllUsesWith(tc.threadIR->body, wait->result(0), wait->operand(0));
  EXPECT_NE(verifyFunction(*tc.threadIR).find("reads a wgmma's accumulator registers before a wgmma_wait hands them on"),
            std::string::npos)
      << verifyFunction(*tc.threadIR);
}

// On the GPU a wgmma reads its operands some time after it is issued, until the wgmma_wait that
// covers it: without the wait, the next K step's staging stores overwrite what it may still read.
// The executor says so at the store; and a warp that returns with wgmmas in flight is an error.
TEST(Wgmma, AStoreOverAnInFlightWgmmasOperandsIsAnError) {
  std::ostringstream err;
  auto k = compileKernelFile(rank3::kernelFile("mma_dot"), {{"MODE", "1"}, {"BM", "64"}, {"K", "128"}}, err);
  ASSERT_TRUE(k) << err.str();
  ThreadCompilation tc = compileToThreadIR(*k->ir, k->launch, ThreadCompileOptions{4, false, nullptr, true});
  // A wait that waits for nothing (pending 7): its registers flow on, its groups stay in flight.
  auto waitForNothing = [](Function& fn) {
    walk(fn.body, [](Op& op) {
      if (op.kind == OpKind::WgmmaWait) op.setAttr("pending", int64_t(7));
    });
  };
  {
    Memory m = Memory::fromLaunch(k->launch);
    EXPECT_NO_THROW(runThreadIR(*tc.threadIR, k->launch, m));
  }
  auto noWait = cloneFunction(*tc.threadIR);
  waitForNothing(*noWait);
  Memory m = Memory::fromLaunch(k->launch);
  try {
    runThreadIR(*noWait, k->launch, m);
    ADD_FAILURE() << "no error without wgmma_wait";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("that a wgmma still in flight reads"), std::string::npos) << e.what();
  }
  // One K step: no later store, but the warps return with the group in flight.
  auto one = compileKernelFile(rank3::kernelFile("mma_dot"), {{"MODE", "1"}, {"BM", "64"}, {"K", "32"}, {"N", "32"}, {"BN", "32"}}, err);
  ASSERT_TRUE(one) << err.str();
  ThreadCompilation tc1 = compileToThreadIR(*one->ir, one->launch, ThreadCompileOptions{4, false, nullptr, true});
  auto noWait1 = cloneFunction(*tc1.threadIR);
  waitForNothing(*noWait1);
  Memory m1 = Memory::fromLaunch(one->launch);
  try {
    runThreadIR(*noWait1, one->launch, m1);
    ADD_FAILURE() << "no error for a warp returning with wgmmas in flight";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("in flight"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace tl
