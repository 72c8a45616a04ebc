// Tiles of rank 3 through tl-ptx: the rank-3 test kernels of tests/thread/kernels/ (elementwise
// and reductions, reshape / permute / join / split, batched dot) and Triton tutorial 09's
// descriptor matmul with its reshape-permute-split epilogue compile to PTX that ptxas accepts
// for sm_90 at num_warps 1 and 4 (and 8 for t09). Their results on the GPU: run
// `tl-ptx tests/thread/kernels/<name>.tl` and `tl-ptx kernels/triton/t09_matmul_descriptor.tl`
// on the H200.
#include <sstream>

#include "codegen_util.h"

namespace tl::ptxtest {
namespace {

PtxResult filePTX(const std::string& path, int numWarps) {
  std::ostringstream err;
  auto k = compileKernelFile(std::string(TL_SOURCE_DIR) + "/" + path, {}, err);
  if (!k) throw std::runtime_error(path + ": " + err.str());
  ThreadCompilation tc = compileToThreadIR(*k->ir, k->launch, numWarps);
  return compileToPTX(*tc.threadIR);
}

void expectAssembles(const std::string& path, int numWarps) {
  PtxResult r = filePTX(path, numWarps);
  PtxasInfo info = runPtxas(r.ptx, "sm_90");
  ASSERT_TRUE(info.ran) << info.skipped;
  EXPECT_TRUE(info.ok) << path << " at num_warps " << numWarps << ":\n" << info.log;
}

TEST(Rank3Ptx, TestKernelsAssemble) {
  TL_REQUIRE_PTXAS();
  for (const char* stem : {"rank3_elementwise", "rank3_shape", "rank3_dot"})
    for (int nw : {1, 4}) expectAssembles(std::string("tests/thread/kernels/") + stem + ".tl", nw);
}

TEST(Rank3Ptx, ShapeOpsUseSharedMemoryOnlyWhereThreadsDiffer) {
  // rank3_shape's reshape to [M, 2, N/2] changes owners: it goes through shared memory, with
  // barriers; the PTX has st.shared / ld.shared and bar.sync.
  PtxResult r = filePTX("tests/thread/kernels/rank3_shape.tl", 4);
  EXPECT_TRUE(contains(r.ptx, "st.shared")) << r.ptx;
  EXPECT_TRUE(contains(r.ptx, "ld.shared")) << r.ptx;
  EXPECT_TRUE(contains(r.ptx, "bar.sync")) << r.ptx;
}

TEST(Rank3Ptx, TutorialNineDescriptorMatmulAssembles) {
  TL_REQUIRE_PTXAS();
  for (int nw : {1, 4, 8}) expectAssembles("kernels/triton/t09_matmul_descriptor.tl", nw);
}

}  // namespace
}  // namespace tl::ptxtest
