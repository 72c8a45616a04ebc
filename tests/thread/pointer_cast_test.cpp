// Pointers loaded from memory (issue 12, tutorial 08's grouped GEMM): `pointers(...)` and
// `values([...])` buffers in @launch, `x.to(tl.pointer_type(d))` (the `ptrcast` op) and a
// pointer's `.to(tl.int64)` / `.to(tl.int1)`, on every CPU engine (tl-scalar, tl-block, the
// thread executor at 1, 2, 4 and 8 warps) against exact C++ references
// (tests/thread/kernels/ptr_table.tl); a wrong address loaded from memory is a located
// out-of-bounds or wrong-dtype error on every engine (tests/thread/kernels/ptr_bad.tl); the axis
// analysis knows nothing of a loaded address unless tl.multiple_of says so.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "ir/Builder.h"
#include "ir/Diagnostics.h"
#include "ir/PassUtils.h"
#include "ir/Printer.h"
#include "new_ops_util.h"
#include "thread/Layouts.h"

namespace tl {
namespace {

using newops::compileNewOpsKernel;

// The 1-based line of the first line of `stem`.tl containing `text` (0 when none).
uint32_t lineOf(const std::string& stem, const std::string& text) {
  std::ifstream in(newops::newOpsKernel(stem));
  std::string line;
  for (uint32_t n = 1; std::getline(in, line); ++n)
    if (line.find(text) != std::string::npos) return n;
  return 0;
}

TEST(PointerCast, TablesOfAddressesOnEveryEngine) {
  for (const char* n : {"100", "33"}) {
    int checked = 0;
    newops::forEachEngine("ptr_table", {{"N", n}}, nullptr, [&](const Memory& m, const std::string& engine) {
      const double scales[3] = {0.5, -2, 3.25};
      const Buffer& addrs = *m.find("addrs");
      const Buffer& heads = *m.find("heads");
      for (int g = 0; g < 3; ++g) {
        const Buffer& x = *m.find("X" + std::to_string(g));
        const Buffer& y = *m.find("Y" + std::to_string(g));
        ASSERT_EQ(x.numel(), std::stoi(n));
        for (int64_t i = 0; i < x.numel(); ++i)
          ASSERT_EQ(float(y.getF(i)), float(x.getF(i)) * float(scales[g])) << engine << " Y" << g << "[" << i << "]";
        EXPECT_EQ(uint64_t(addrs.getI(g)), x.base) << engine << ": the address cast back to int64";
        EXPECT_EQ(m.find("nonnull")->getI(g), 1) << engine;
        EXPECT_EQ(heads.getF(g), x.getF(0)) << engine << ": heads[" << g << "] through a tile of casts";
      }
      ++checked;
    });
    EXPECT_EQ(checked, 6) << n;  // scalar, block, 4 executor widths
  }
}

TEST(PointerCast, TheIRHasOnePtrcastPerCast) {
  auto k = compileNewOpsKernel("ptr_table");
  ASSERT_TRUE(k);
  int toPtr = 0, toInt = 0;
  walk(k->ir->body, [&](Op& op) {
    if (op.kind != OpKind::PtrCast) return;
    (op.result()->type.isPtr ? toPtr : toInt)++;
    if (op.result()->type.isPtr) {
      EXPECT_EQ(op.result()->type.dtype, DType::F32);
    }
  });
  EXPECT_EQ(toPtr, 3);  // src, dst, the tile of addresses
  EXPECT_EQ(toInt, 2);  // .to(tl.int64) and .to(tl.int1) (ptrcast, then != 0)
  // The printed IR names it and parses back (the generic round trip of docs/ir.md).
  EXPECT_NE(printFunction(*k->ir).find("= ptrcast "), std::string::npos);
}

// The load through the cast pointer: scalar unless the loaded address is hinted to be 16-byte
// aligned (divisibility passes through ptrcast; the address's own is unknown).
TEST(PointerCast, LoadedAddressesAreUnknownUnlessHinted) {
  const uint32_t line = lineOf("ptr_table", "x = tl.load(src + offs");
  ASSERT_GT(line, 0u);
  auto vecAt = [&](int hint) {
    auto k = compileNewOpsKernel("ptr_table", {{"N", "256"}, {"BLOCK", "256"}, {"HINT", std::to_string(hint)}});
    EXPECT_TRUE(k);
    if (!k) return int64_t(-1);
    ThreadCompilation tc = compileToThreadIR(*k->ir, k->launch, 1);
    int64_t vec = -1;
    walk(tc.threadIR->body, [&](Op& op) {
      if (op.kind == OpKind::LdGlobal && op.loc.line == line) vec = op.attr("vec") ? op.intAttr("vec") : 1;
    });
    return vec;
  };
  EXPECT_EQ(vecAt(0), 1);
  EXPECT_EQ(vecAt(1), 4);  // 16 bytes of f32
  // And the hinted kernel is still right everywhere (the table's addresses are 256-aligned).
  newops::forEachEngine("ptr_table", {{"N", "256"}, {"BLOCK", "256"}, {"HINT", "1"}}, nullptr,
                        [&](const Memory& m, const std::string& engine) {
                          const Buffer &x = *m.find("X1"), &y = *m.find("Y1");
                          for (int64_t i = 0; i < x.numel(); ++i)
                            ASSERT_EQ(float(y.getF(i)), float(x.getF(i)) * -2.0f) << engine << " " << i;
                        });
}

// Runs ptr_bad on every engine; each must throw a RuntimeError at the load's line whose message
// contains `want`.
void expectLocatedFailure(const std::vector<LaunchOverride>& sets, const newops::Prepare& prepare, const std::string& want,
                          const std::string& loadText) {
  const uint32_t line = lineOf("ptr_bad", loadText);
  ASSERT_GT(line, 0u);
  auto k = compileNewOpsKernel("ptr_bad", sets);
  ASSERT_TRUE(k);
  auto fresh = [&] {
    Memory m = Memory::fromLaunch(k->launch);
    if (prepare) prepare(m);
    return m;
  };
  auto expectThrow = [&](const std::string& engine, const std::function<void(Memory&)>& run) {
    Memory m = fresh();
    try {
      run(m);
      ADD_FAILURE() << engine << ": a bad pointer was followed without an error";
    } catch (const RuntimeError& e) {
      EXPECT_EQ(e.loc.line, line) << engine << ": " << e.what();
      EXPECT_NE(std::string(e.what()).find(want), std::string::npos) << engine << ": " << e.what();
    }
  };
  expectThrow("tl-scalar", [&](Memory& m) { runScalar(*k->ir, k->launch, m); });
  auto opt = cloneFunction(*k->ir);
  blockPipeline().run(*opt);
  expectThrow("tl-block", [&](Memory& m) { runBlock(*opt, k->launch, m); });
  for (int nw : {1, 2}) {
    ThreadCompilation tc = compileToThreadIR(*k->ir, k->launch, nw);
    expectThrow("executor " + std::to_string(nw), [&](Memory& m) { runThreadIR(*tc.threadIR, k->launch, m); });
  }
}

TEST(PointerCast, AWrongAddressIsALocatedOutOfBoundsError) {
  // Past the end of X (64 elements, then 4096 unmapped bytes): no buffer holds it.
  expectLocatedFailure({{"SHIFT", "64"}}, nullptr, "load out of bounds: address", "tl.load(p + offs + SHIFT))");
  // A table entry that is no buffer's address at all.
  expectLocatedFailure({}, [](Memory& m) { m.find("table")->setI(0, 0x1234); }, "is 268430796 bytes before the start",
                       "tl.load(p + offs + SHIFT))");
}

TEST(PointerCast, AWrongPointeeDtypeIsALocatedError) {
  // X holds f32; reading it through *i32 is refused, never reinterpreted.
  expectLocatedFailure({{"AS_I32", "1"}}, nullptr, "is not aligned to an element of buffer 'X'",
                       "tl.load(p + offs + SHIFT).to(tl.float32)");
}

TEST(PointerCast, VerifierRules) {
  Function fn;
  fn.name = "k";
  Builder b{&fn.body};
  Value* i32 = b.constInt(Type::scalar(DType::I32), 0);
  Value* i64 = b.constInt(Type::scalar(DType::I64), 0);
  EXPECT_THROW(b.create(OpKind::PtrCast, {i32}, {Type::ptr(DType::F32)}), IRError);  // not i64
  EXPECT_THROW(b.create(OpKind::PtrCast, {i64}, {Type::scalar(DType::I64)}), IRError);  // no pointer side
  EXPECT_THROW(b.create(OpKind::PtrCast, {i64}, {Type::ptr(DType::F32).withShape({4})}), IRError);  // shape
  Value* p = b.ptrcast(i64, true, DType::F16);
  EXPECT_EQ(p->type, Type::ptr(DType::F16));
  EXPECT_EQ(b.ptrcast(p, false)->type, Type::scalar(DType::I64));
  EXPECT_EQ(b.ptrcast(p, true, DType::F32)->type, Type::ptr(DType::F32));
}

}  // namespace
}  // namespace tl
