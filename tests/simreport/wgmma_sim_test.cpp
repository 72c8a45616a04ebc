// The simulator's warpgroup MMAs (sim/Timing.cpp: a wgmma keeps its warp's sub-partition's tensor
// core busy N/8 x wgmmaCyclesF16 cycles; wgmma_wait waits for every wgmma before it): a bf16
// matmul with --wgmma keeps the tensor cores busy and is predicted faster than with mma.sync (the
// H200's 457 against 272 TFLOP/s, bench/results/gpu/), and the report says it was compiled so.
#include <gtest/gtest.h>

#include <sstream>

#include "runtime/Driver.h"
#include "sim/SimReport.h"

namespace tl {
namespace {

SimReport simulateMatmul(bool wgmma) {
  std::ostringstream err;
  auto k = compileKernelFile(std::string(TL_SOURCE_DIR) + "/kernels/matmul_tc.tl",
                             {{"M", "512"}, {"N", "512"}, {"K", "512"}, {"BLOCK_M", "128"}, {"BLOCK_N", "128"},
                              {"BLOCK_K", "64"}, {"a_ptr", "randn((M, K), dtype=bf16, seed=1)"},
                              {"b_ptr", "randn((K, N), dtype=bf16, seed=2)"}, {"c_ptr", "zeros((M, N), dtype=bf16, output=True)"}},
                             err);
  EXPECT_TRUE(k) << err.str();
  SimOptions o;
  o.unfused = false;
  o.numWarps = 8;
  o.wgmma = wgmma;
  return simulateKernel(*k->ir, k->launch, o);
}

TEST(WgmmaSim, TensorCoresBusyAndFasterThanMmaSync) {
  SimReport w = simulateMatmul(true), m = simulateMatmul(false);
  EXPECT_EQ(w.json["compile"]["wgmma"], true);
  EXPECT_EQ(m.json["compile"]["wgmma"], false);
  const double tw = w.json["timing"]["tensor_utilization"].get<double>(), tm = m.json["timing"]["tensor_utilization"].get<double>();
  EXPECT_GT(tw, 0.05);
  EXPECT_GT(tm, 0.05);
  EXPECT_LT(w.json["timing"]["time_us"].get<double>(), m.json["timing"]["time_us"].get<double>());
}

}  // namespace
}  // namespace tl
