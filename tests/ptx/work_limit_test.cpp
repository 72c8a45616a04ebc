// Issue 11, item 11: the code generator's work limit (ptx/Codegen.h). A tile that gives each
// thread more than kMaxElemsPerThread elements (softmax with BLOCK_N = 2^20 over 128 threads
// kept tl-ptx in LLVM and ptxas for over 400 s at 2.2 GB, and 526 s at 24 GB once ptxas ran)
// is a RuntimeError at the source line that made the tile, with the numbers and the way out;
// at the limit it still compiles. Too many statements in all is an error too.
#include <sstream>

#include "codegen_util.h"
#include "ir/Builder.h"

namespace tl::ptxtest {
namespace {

TEST(PtxWorkLimit, AHugeTilePerThreadIsALocatedError) {
  for (int64_t n : {int64_t(1) << 18, int64_t(1) << 20}) {
    ThreadCompilation tc = kernelToThreadIR("softmax", 4, {{"M", "2"}, {"N", std::to_string(n)}});
    try {
      compileToPTX(*tc.threadIR);
      ADD_FAILURE() << "N=" << n << " compiled";
    } catch (const RuntimeError& e) {
      std::string msg = e.what();
      EXPECT_EQ(e.loc.line, 12u) << msg;  // cols = arange(0, BLOCK_N)
      EXPECT_NE(msg.find("each of the 128 threads " + std::to_string(n / 128) + " elements"), std::string::npos) << msg;
      EXPECT_NE(msg.find("at most " + std::to_string(kMaxElemsPerThread)), std::string::npos) << msg;
      EXPECT_NE(msg.find("--num-warps"), std::string::npos) << msg;
    }
  }
  // More warps bring the same row under the limit: 2^18 over 32 warps is 256 per thread.
  ThreadCompilation tc = kernelToThreadIR("softmax", 32, {{"M", "2"}, {"N", std::to_string(1 << 18)}});
  EXPECT_NO_THROW(compileToPTX(*tc.threadIR));
}

TEST(PtxWorkLimit, TooManyElementOperationsInAllIsAnError) {
  // One thread function of kMaxUnrolledElements + 1 scalar adds (no tile anywhere).
  Function fn;
  fn.name = "long";
  fn.level = IRLevel::Thread;
  fn.numWarps = 1;
  fn.loc = {1, 1};
  Value* x = fn.body.addArg(Type::scalar(DType::I32), "x");
  fn.params = {{"x", Param::Kind::Scalar, {}}};
  Builder b(&fn.body);
  b.setLoc({2, 5});
  Value* v = x;
  for (int64_t i = 0; i < kMaxUnrolledElements; ++i) v = b.binary(OpKind::Add, v, x);
  b.ret();
  try {
    compileToPTX(fn);
    ADD_FAILURE() << "compiled";
  } catch (const RuntimeError& e) {
    EXPECT_NE(std::string(e.what()).find("unrolls to " + std::to_string(kMaxUnrolledElements + 1)), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace tl::ptxtest
