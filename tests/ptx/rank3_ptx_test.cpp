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

void expectFileAssembles(const std::string& path, int numWarps) {
  expectAssembles(fileToPTX(path, numWarps), path + " at num_warps " + std::to_string(numWarps));
}

TEST(Rank3Ptx, TestKernelsAssemble) {
  TL_REQUIRE_PTXAS();
  for (const char* stem : {"rank3_elementwise", "rank3_shape", "rank3_dot"})
    for (int nw : {1, 4}) expectFileAssembles(std::string("tests/thread/kernels/") + stem + ".tl", nw);
}

TEST(Rank3Ptx, ShapeOpsUseSharedMemoryOnlyWhereThreadsDiffer) {
  // rank3_shape's reshape to [M, 2, N/2] changes owners: it goes through shared memory, with
  // barriers; the PTX has st.shared / ld.shared and bar.sync.
  PtxResult r = fileToPTX("tests/thread/kernels/rank3_shape.tl", 4);
  EXPECT_TRUE(contains(r.ptx, "st.shared")) << r.ptx;
  EXPECT_TRUE(contains(r.ptx, "ld.shared")) << r.ptx;
  EXPECT_TRUE(contains(r.ptx, "bar.sync")) << r.ptx;
}

TEST(Rank3Ptx, TutorialNineDescriptorMatmulAssembles) {
  TL_REQUIRE_PTXAS();
  for (int nw : {1, 4, 8}) expectFileAssembles("kernels/triton/t09_matmul_descriptor.tl", nw);
}

}  // namespace
}  // namespace tl::ptxtest
