// The launch's maxnreg (Triton's kernel option): the Function carries it (printed and parsed
// back as max_registers(N)), the PTX entry gets `.maxnreg N`, and ptxas stays within it. t06
// attention, causal, head dim 64, 128 x 64 tiles, 8 warps on wgmma: 155 registers (one block
// per SM) by ptxas's own choice, 128 (two) with maxnreg=128, without spills (skipped where ptxas
// is not installed).
#include "codegen_util.h"
#include "ir/Parser.h"
#include "ir/Printer.h"

namespace tl::ptxtest {
namespace {

struct Compiled {
  std::string threadIR;
  PtxResult ptx;
};

Compiled causalAttention(const std::vector<LaunchOverride>& extra) {
  std::vector<LaunchOverride> sets = {{"Z", "1"}, {"H", "2"}, {"N_CTX", "256"}, {"HEAD_DIM", "64"}, {"BLOCK_M", "128"},
                                      {"BLOCK_N", "64"}, {"STAGE", "3"}, {"num_stages", "2"}, {"sm_scale", "0.125"},
                                      {"Q", "randn((Z,H,N_CTX,HEAD_DIM),dtype=bf16,seed=1)"},
                                      {"K", "randn((Z,H,N_CTX,HEAD_DIM),dtype=bf16,seed=2)"},
                                      {"V", "randn((Z,H,N_CTX,HEAD_DIM),dtype=bf16,seed=3)"},
                                      {"Out", "zeros((Z,H,N_CTX,HEAD_DIM),dtype=bf16,output=True)"}};
  sets.insert(sets.end(), extra.begin(), extra.end());
  std::ostringstream err;
  auto k = compileKernelFile(std::string(TL_SOURCE_DIR) + "/kernels/triton/t06_attention_fwd.tl", sets, err);
  if (!k) throw std::runtime_error(err.str());
  ThreadCompileOptions o;
  o.numWarps = 8;
  o.wgmma = true;
  ThreadCompilation tc = compileToThreadIR(*k->ir, k->launch, o);
  PtxOptions opts;
  opts.arch = "sm_90a";
  return {printFunction(*tc.threadIR), compileToPTX(*tc.threadIR, opts)};
}

TEST(MaxRegisters, LaunchMaxnregBoundsPtxas) {
  const Compiled free = causalAttention({});
  const Compiled bound = causalAttention({{"maxnreg", "128"}});
  EXPECT_FALSE(contains(free.ptx.ptx, ".maxnreg"));
  EXPECT_FALSE(contains(free.threadIR, "max_registers"));
  EXPECT_TRUE(contains(bound.ptx.ptx, ".maxnreg 128")) << bound.ptx.ptx.substr(0, 2000);
  EXPECT_TRUE(contains(bound.threadIR, " max_registers(128) "));
  // The printed thread IR parses back to the same text.
  DiagEngine diag(std::make_shared<SourceFile>("<thread IR>", bound.threadIR));
  auto parsed = parseFunction(bound.threadIR, diag);
  ASSERT_TRUE(parsed) << diag.renderAll();
  EXPECT_EQ(printFunction(*parsed), bound.threadIR);
  TL_REQUIRE_PTXAS();
  const PtxasInfo a = runPtxas(free.ptx.ptx, "sm_90a"), b = runPtxas(bound.ptx.ptx, "sm_90a");
  ASSERT_TRUE(a.ok && b.ok) << a.log << b.log;
  EXPECT_GT(a.registers, 128) << "the premise: ptxas alone takes more than 128";
  EXPECT_LE(b.registers, 128);
  EXPECT_EQ(b.spillStoreBytes, 0) << b.log;
}

}  // namespace
}  // namespace tl::ptxtest
