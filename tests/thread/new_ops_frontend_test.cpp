// The front end of issue 12's new built-ins (lib/frontend/SemaMath.cpp, SemaAtomics.cpp): << and
// >> (Sema::shift) fold two constants with Python's rules and refuse floats, negative counts and
// results outside 64 bits; fma, umulhi and clamp check their operands; clamp of constants folds;
// every error is located at the call or operator.
#include <fstream>

#include "new_ops_util.h"

namespace tl::newops {
namespace {

// Compiles `body` as the body of a one-program kernel with x_ptr (f32), i_ptr (i32) and n (i32).
std::unique_ptr<CompiledKernel> compileBody(const std::string& body, std::string& errors) {
  // One file per test: ctest runs the tests of this file in parallel processes.
  const std::string path = ::testing::TempDir() + "/new_ops_frontend." +
                           ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".tl";
  {
    std::ofstream out(path);
    out << "@launch(grid=(1,), x_ptr=zeros(8, output=True), i_ptr=zeros(8, dtype=i32, output=True), n=3)\n"
           "@jit\ndef k(x_ptr, i_ptr, n):\n"
        << body;
  }
  std::ostringstream err;
  auto k = compileKernelFile(path, {}, err);
  errors = err.str();
  return k;
}

TEST(NewOpsFrontEnd, Errors) {
  struct Case {
    const char* body;
    const char* message;
    int line;
  };
  const Case cases[] = {
      {"    store(i_ptr, n << 1.5)\n", "'<<' needs integer operands", 4},
      {"    store(i_ptr, 1 >> -1)\n", "negative shift count -1", 4},
      {"    store(i_ptr, (1 << 62) << 2)\n", "does not fit in 64 bits", 4},
      {"    x = load(x_ptr + arange(0, 8))\n    store(x_ptr + arange(0, 8), x >> 1)\n", "'>>' needs integer operands", 5},
      {"    store(i_ptr, umulhi(n, 1.5))\n", "umulhi() needs i32 or i64 integers or tiles", 4},
      {"    store(x_ptr, fma(x_ptr, 1.0, 2.0))\n", "fma() needs numbers or tiles", 4},
      {"    store(x_ptr, clamp(1.0, x_ptr, 2.0))\n", "clamp() needs numbers or tiles", 4},
  };
  for (const Case& c : cases) {
    std::string errors;
    auto k = compileBody(c.body, errors);
    EXPECT_FALSE(k) << c.body;
    EXPECT_NE(errors.find(c.message), std::string::npos) << c.body << errors;
    EXPECT_NE(errors.find(".tl:" + std::to_string(c.line) + ":"), std::string::npos) << errors;
  }
}

// Constants fold at compile time: the stored values are immediate constants in the IR.
TEST(NewOpsFrontEnd, ConstantsFold) {
  std::string errors;
  auto k = compileBody("    store(i_ptr + 0, (-8 >> 1) + (1 << 4) + (-1 >> 100))\n"
                       "    store(x_ptr + 0, clamp(5.0, -1.0, 2.5) + fma(2.0, 3.0, 1.0))\n",
                       errors);
  ASSERT_TRUE(k) << errors;
  int shifts = 0, fmas = 0;
  walk(k->ir->body, [&](Op& op) {
    shifts += op.kind == OpKind::Shl || op.kind == OpKind::Shr;
    fmas += op.kind == OpKind::Fma;
  });
  EXPECT_EQ(shifts, 0);
  EXPECT_EQ(fmas, 0);
  Memory m = Memory::fromLaunch(k->launch);
  runScalar(*k->ir, k->launch, m);
  EXPECT_EQ(m.find("i_ptr")->getI(0), -4 + 16 - 1);
  EXPECT_EQ(m.find("x_ptr")->getF(0), 2.5 + 7.0);
}

// Weak literals take the tile's dtype: an i64 tile shifted by a literal stays i64, and an i32
// scalar shifted by an i64 tile promotes to i64.
TEST(NewOpsFrontEnd, ShiftDtypes) {
  std::string errors;
  auto k = compileBody("    a = arange(0, 8).to(i64)\n    b = a << 40\n    c = n << a\n"
                       "    store(i_ptr + arange(0, 8), (b >> 40).to(i32) + c.to(i32))\n",
                       errors);
  ASSERT_TRUE(k) << errors;
  bool sawI64Shift = false;
  walk(k->ir->body, [&](Op& op) {
    if (op.kind == OpKind::Shl || op.kind == OpKind::Shr) {
      EXPECT_EQ(op.result()->type.dtype, DType::I64);
      sawI64Shift = true;
    }
  });
  EXPECT_TRUE(sawI64Shift);
  Memory m = Memory::fromLaunch(k->launch);
  runScalar(*k->ir, k->launch, m);
  for (int64_t i = 0; i < 8; ++i) EXPECT_EQ(m.find("i_ptr")->getI(i), i + (int64_t(3) << i)) << i;
}

}  // namespace
}  // namespace tl::newops
