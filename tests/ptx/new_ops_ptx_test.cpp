// Issue 12's new ops through tl-ptx: the test kernels of tests/thread/kernels/ (elementwise
// math, shifts and umulhi, while loops, atomics) compile to PTX that ptxas accepts at
// num_warps 1 and 4, with the instructions each op is meant to become. (Their results on the
// GPU: run `tl-ptx tests/thread/kernels/<name>.tl` on the H200.)
#include <sstream>

#include "codegen_util.h"

namespace tl::ptxtest {
namespace {

PtxResult newOpsPTX(const std::string& stem, int numWarps, const std::vector<LaunchOverride>& overrides = {}) {
  return fileToPTX("tests/thread/kernels/" + stem + ".tl", numWarps, overrides);
}

TEST(NewOpsPtx, ElementwiseMath) {
  TL_REQUIRE_PTXAS();
  for (int nw : {1, 4}) {
    PtxResult r = newOpsPTX("new_elementwise", nw);
    expectAssembles(r, "new_elementwise");
    EXPECT_TRUE(contains(r.ptx, "lg2.approx")) << r.ptx;
    EXPECT_TRUE(contains(r.ptx, "sin.approx")) << r.ptx;
    EXPECT_TRUE(contains(r.ptx, "cos.approx")) << r.ptx;
    EXPECT_TRUE(contains(r.ptx, "cvt.rmi.f32.f32")) << r.ptx;  // floor
    EXPECT_TRUE(contains(r.ptx, "cvt.rpi.f32.f32")) << r.ptx;  // ceil
    EXPECT_TRUE(contains(r.ptx, "fma.rn.f32")) << r.ptx;
  }
}

TEST(NewOpsPtx, ShiftsAndUmulhi) {
  TL_REQUIRE_PTXAS();
  PtxResult r = newOpsPTX("new_intops", 4);
  expectAssembles(r, "new_intops");
  EXPECT_TRUE(contains(r.ptx, "shl.b32")) << r.ptx;
  EXPECT_TRUE(contains(r.ptx, "shr.s32")) << r.ptx;
  EXPECT_TRUE(contains(r.ptx, "shl.b64")) << r.ptx;
  EXPECT_TRUE(contains(r.ptx, "shr.s64")) << r.ptx;
  EXPECT_TRUE(contains(r.ptx, "mul.hi.u32")) << r.ptx;
  EXPECT_TRUE(contains(r.ptx, "mul.hi.u64")) << r.ptx;
}

TEST(NewOpsPtx, WhileLoops) {
  TL_REQUIRE_PTXAS();
  for (const char* stem : {"while_data", "while_forever"})
    for (int nw : {1, 4}) {
      PtxResult r = newOpsPTX(stem, nw);
      expectAssembles(r, stem);
      EXPECT_TRUE(contains(r.ptx, "bra")) << r.ptx;  // the back edge
    }
  // The data-dependent condition's reduction inside the loop: shuffles and barriers in the cond region.
  PtxResult r = newOpsPTX("while_data", 4);
  EXPECT_TRUE(contains(r.ptx, "shfl.sync.bfly")) << r.ptx;
  EXPECT_TRUE(contains(r.ptx, "bar.sync")) << r.ptx;
}

TEST(NewOpsPtx, Atomics) {
  TL_REQUIRE_PTXAS();
  for (int nw : {1, 4}) {
    PtxResult r = newOpsPTX("atomic_counter", nw);
    expectAssembles(r, "atomic_counter");
    for (const char* want : {"atom.acq_rel.gpu.global.add.u32", "red.relaxed.gpu.global.add.u32",
                             "atom.acq_rel.gpu.global.max.s32", "atom.acquire.cta.global.min.s32",
                             "atom.acq_rel.gpu.global.and.b32", "red.release.gpu.global.or.b32",
                             "atom.acq_rel.sys.global.xor.b32", "atom.acq_rel.gpu.global.add.f32",
                             "atom.acq_rel.gpu.global.exch.b64"})
      EXPECT_TRUE(contains(r.ptx, want)) << want << "\n" << r.ptx;
    PtxResult lock = newOpsPTX("atomic_lock", nw);
    expectAssembles(lock, "atomic_lock");
    EXPECT_TRUE(contains(lock.ptx, "atom.acq_rel.gpu.global.cas.b32")) << lock.ptx;
    EXPECT_TRUE(contains(lock.ptx, "atom.acq_rel.gpu.global.exch.b32")) << lock.ptx;
    EXPECT_TRUE(contains(lock.ptx, "bar.sync")) << lock.ptx;  // debug_barrier, and the old value's broadcast
  }
}

// Pointers loaded from memory (ptrcast): inttoptr / ptrtoint in the LLVM IR, loads through the
// loaded addresses, PTX that ptxas accepts; and tutorial 08's grouped GEMM itself.
TEST(NewOpsPtx, PointerCasts) {
  TL_REQUIRE_PTXAS();
  for (int nw : {1, 4}) {
    PtxResult r = newOpsPTX("ptr_table", nw);
    expectAssembles(r, "ptr_table");
    EXPECT_TRUE(contains(r.llvmIR, "inttoptr")) << r.llvmIR;
    EXPECT_TRUE(contains(r.ptx, "ld.global")) << r.ptx;
  }
  std::ostringstream err;
  auto k = compileKernelFile(std::string(TL_SOURCE_DIR) + "/kernels/triton/t08_grouped_gemm.tl", {}, err);
  ASSERT_TRUE(k) << err.str();
  for (int nw : {1, 4}) {
    ThreadCompilation tc = compileToThreadIR(*k->ir, k->launch, nw);
    PtxResult r = compileToPTX(*tc.threadIR);
    expectAssembles(r, "t08_grouped_gemm");
    EXPECT_TRUE(contains(r.llvmIR, "inttoptr")) << r.llvmIR;
  }
}

}  // namespace
}  // namespace tl::ptxtest
