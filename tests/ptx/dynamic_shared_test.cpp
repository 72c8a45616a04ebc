// Issue 12, section 6: shared memory beyond 48 KB (stages/ptx/DynamicShared.h). Up to 48 KB the
// PTX declares the block's shared memory statically (unchanged); above, as an `.extern .shared`
// array that ptxas accepts (it refused a static one: "uses too much shared data (0x18000
// bytes, 0xc000 max)") and whose size the launch passes. The JIT cache's consistency check
// holds for both forms and refuses a manifest that mixes them; results files record the
// dynamic bytes and read older files without them as 0.
//
// The kernels are kernels/matmul.tl with its tiles sized by --set: dot stages both operands in
// shared memory, (BLOCK_M x BLOCK_K + BLOCK_K x BLOCK_N) x 4 bytes.
#include <fstream>

#include "../common/TempDir.h"
#include "codegen_util.h"
#include "ptx/DynamicShared.h"
#include "ptx/JitCache.h"
#include "ptx/Results.h"
#include "sim/Gpu.h"

namespace tl::ptxtest {
namespace {

std::vector<LaunchOverride> matmulTiles(int bm, int bn, int bk) {
  return {{"BLOCK_M", std::to_string(bm)}, {"BLOCK_N", std::to_string(bn)}, {"BLOCK_K", std::to_string(bk)},
          {"M", "64"},
          {"N", "64"},
          {"K", std::to_string(2 * bk)}};
}

TEST(DynamicShared, TheRule) {
  EXPECT_EQ(ptx::kMaxStaticSharedBytes, 0xc000);  // ptxas' "0xc000 max"
  EXPECT_FALSE(ptx::usesDynamicShared(0));
  EXPECT_FALSE(ptx::usesDynamicShared(49152));
  EXPECT_TRUE(ptx::usesDynamicShared(49153));
  EXPECT_EQ(ptx::staticSharedBytes(49152), 49152);
  EXPECT_EQ(ptx::dynamicSharedBytes(49152), 0);
  EXPECT_EQ(ptx::staticSharedBytes(98304), 0);
  EXPECT_EQ(ptx::dynamicSharedBytes(98304), 98304);
}

// 104 KB: a 32 x 512 tile of A, staged transposed with 16 bytes of pad a row (512 x 36 x 4 =
// 72 KB), and a 512 x 16 tile of B (32 KB).
TEST(DynamicShared, A104KBDotIsDeclaredDynamicAndPtxasAcceptsIt) {
  ThreadCompilation tc = kernelToThreadIR("matmul", 4, matmulTiles(32, 16, 512));
  ASSERT_EQ(tc.threadIR->sharedBytes, 106496);
  PtxResult r = compileToPTX(*tc.threadIR);
  EXPECT_TRUE(contains(r.ptx, ".extern .shared .align 16 .b8 tl_shared[];")) << r.ptx.substr(0, 2000);
  EXPECT_FALSE(contains(r.ptx, ".shared .align 16 .b8 tl_shared[106496]"));
  // (the optimizer adds local_unnamed_addr between the two)
  EXPECT_TRUE(contains(r.llvmIR, "@tl_shared = external ")) << r.llvmIR.substr(0, 2000);
  EXPECT_TRUE(contains(r.llvmIR, "addrspace(3) global [0 x i8], align 16")) << r.llvmIR.substr(0, 2000);
  EXPECT_TRUE(contains(r.ptx, "st.shared")) << "the dot stages its operands in shared memory";
  TL_REQUIRE_PTXAS();
  PtxasInfo info = runPtxas(r.ptx, "sm_90");
  EXPECT_TRUE(info.ok) << info.log;
  EXPECT_EQ(info.sharedBytes, 0) << info.log;  // dynamic memory is the launch's, not ptxas'
}

// 48 KB exactly: a 16 x 512 tile of A, transposed and padded (512 x 20 x 4 = 40 KB), and a 512 x 4
// tile of B (8 KB): static, as before.
TEST(DynamicShared, The48KBCaseStaysStatic) {
  ThreadCompilation tc = kernelToThreadIR("matmul", 4, matmulTiles(16, 4, 512));
  ASSERT_EQ(tc.threadIR->sharedBytes, 49152);
  PtxResult r = compileToPTX(*tc.threadIR);
  EXPECT_TRUE(contains(r.ptx, ".shared .align 16 .b8 tl_shared[49152];")) << r.ptx.substr(0, 2000);
  EXPECT_FALSE(contains(r.ptx, ".extern .shared"));
  TL_REQUIRE_PTXAS();
  PtxasInfo info = runPtxas(r.ptx, "sm_90");
  EXPECT_TRUE(info.ok) << info.log;
  EXPECT_EQ(info.sharedBytes, 49152) << info.log;
}

// jitCompile stores and finds both forms; the entry's shared_bytes is the whole amount.
TEST(DynamicShared, TheJitCacheHoldsBothForms) {
  test::TempDir dir("tl-dynshared-test");
  JitCache cache(dir.path());
  for (int bk : {256, 512}) {
    std::ostringstream err;
    auto k = compileKernelFile(kernelPath("matmul"), bk == 256 ? matmulTiles(16, 4, 512) : matmulTiles(32, 16, bk), err);
    ASSERT_TRUE(k) << err.str();
    JitOptions opts;
    JitResult first = jitCompile(*k, opts, &cache);
    EXPECT_EQ(first.entry.sharedBytes, bk == 256 ? 49152 : 106496);
    EXPECT_FALSE(first.cacheHit);
    JitResult second = jitCompile(*k, opts, &cache);
    EXPECT_TRUE(second.cacheHit) << bk << ": " << second.cacheNote;
    EXPECT_EQ(second.entry.ptx, first.entry.ptx);
    EXPECT_EQ(second.entry.sharedBytes, first.entry.sharedBytes);
  }
}

// A kernel cached under the H200's 227 KB is no hit under the A100's 163 KB: the limit is part of
// the key, so the thread stage runs again and reports the dot.
TEST(DynamicShared, TheCacheKeyHoldsTheTargetsLimit) {
  test::TempDir dir("tl-dynshared-test");
  JitCache cache(dir.path());
  std::ostringstream err;
  auto k = compileKernelFile(kernelPath("matmul"), matmulTiles(64, 32, 512), err);  // 200 KB
  ASSERT_TRUE(k) << err.str();
  setTargetGpu(loadGpu("h200"));
  JitResult h200 = jitCompile(*k, JitOptions{}, &cache);
  EXPECT_EQ(h200.entry.sharedBytes, 204800);
  EXPECT_TRUE(jitCompile(*k, JitOptions{}, &cache).cacheHit);
  setTargetGpu(loadGpu("a100"));
  EXPECT_THROW(jitCompile(*k, JitOptions{}, &cache), RuntimeError);
  resetTargetGpu();
  EXPECT_TRUE(jitCompile(*k, JitOptions{}, &cache).cacheHit);  // the default, h200, again
}

CacheKey key() {
  CacheKey k;
  k.source = "@jit\ndef k(x_ptr):\n    pass\n";
  k.numWarps = 4;
  k.arch = "sm_90";
  k.toolVersion = "test";
  return k;
}

CacheEntry entry(int64_t sharedBytes, const std::string& declaration) {
  CacheEntry e;
  e.kernelName = "k";
  e.numWarps = 4;
  e.sharedBytes = sharedBytes;
  e.ptx = ".version 8.5\n.target sm_90\n" + declaration + "\n.visible .entry k(\n)\n{\n}\n";
  e.ptxas.skipped = "ptxas not found";
  return e;
}

TEST(DynamicShared, TheCacheRefusesAManifestThatMixesTheForms) {
  test::TempDir dir("tl-dynshared-test");
  JitCache cache(dir.path());
  std::string why;
  // Consistent: dynamic above 48 KB, static up to it.
  EXPECT_TRUE(cache.store(key(), entry(98304, ".extern .shared .align 16 .b8 tl_shared[];"), &why)) << why;
  ASSERT_TRUE(cache.lookup(key(), &why)) << why;
  EXPECT_EQ(cache.lookup(key())->sharedBytes, 98304);
  EXPECT_TRUE(cache.store(key(), entry(4096, ".shared .align 16 .b8 tl_shared[4096];"), &why)) << why;
  // 96 KB declared statically (what ptxas refuses), none at all, or dynamic memory with a static
  // array beside it; dynamic memory for a 4 KB kernel.
  EXPECT_FALSE(cache.store(key(), entry(98304, ".shared .align 16 .b8 tl_shared[98304];"), &why));
  EXPECT_NE(why.find("shared_bytes is 98304 but kernel.ptx does not declare dynamic (.extern .shared) memory"),
            std::string::npos)
      << why;
  EXPECT_FALSE(cache.store(key(), entry(98304, ""), &why));
  EXPECT_NE(why.find("does not declare dynamic"), std::string::npos) << why;
  EXPECT_FALSE(cache.store(
      key(), entry(98304, ".extern .shared .align 16 .b8 tl_shared[];\n.shared .align 16 .b8 other[64];"), &why));
  EXPECT_NE(why.find("declares 64 bytes of static shared memory (expected 0: above 48 KB it is dynamic)"),
            std::string::npos)
      << why;
  EXPECT_FALSE(cache.store(key(), entry(4096, ".extern .shared .align 16 .b8 tl_shared[];"), &why));
  EXPECT_NE(why.find("shared_bytes is 4096 but kernel.ptx declares dynamic (.extern .shared) memory"),
            std::string::npos)
      << why;
}

TEST(DynamicShared, ResultsRecordTheDynamicBytes) {
  RunResults r;
  r.kernel = "matmul_kernel";
  r.sharedBytes = 0;
  r.dynamicSharedBytes = 98304;
  nlohmann::ordered_json j = resultsToJson(r);
  EXPECT_EQ(j["resources"]["dynamic_shared_bytes"], 98304);
  EXPECT_EQ(resultsFromJson(j), r);
  // A file written before the field existed reads as 0.
  j["resources"].erase("dynamic_shared_bytes");
  EXPECT_EQ(resultsFromJson(j).dynamicSharedBytes, 0);
}

}  // namespace
}  // namespace tl::ptxtest
