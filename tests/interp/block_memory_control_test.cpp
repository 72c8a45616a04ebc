// tl-block: loads and stores (masks, `other`, out-of-bounds errors that write nothing), loops
// with carried tiles, if, program ids over the grid, and parameter binding.
#include <cmath>
#include <limits>

#include "block/BlockInterpreter.h"
#include "block_helpers.h"

namespace tl {
namespace {

using blocktest::addF;
using blocktest::addI;
using blocktest::KernelBuilder;
using blocktest::readF;
using blocktest::readI;

// The message of the RuntimeError `f` throws ("" if none), and its location.
template <class F>
std::string errorOf(F&& f, Loc* loc = nullptr) {
  try {
    f();
  } catch (const RuntimeError& e) {
    if (loc) *loc = e.loc;
    return e.what();
  }
  return "";
}

TEST(BlockMemory, MaskedLoadUsesOtherAndTouchesNothingOutside) {
  // The softmax edge: 13 valid columns in a 16-wide block; masked-off lanes get -inf.
  KernelBuilder k;
  Value* px = k.ptrParam("x", DType::F32);
  Value* po = k.ptrParam("out", DType::F32);
  Value* ptrs = k.ptrs1D(px, 16);
  Value* mask = k.b.cmp("lt", k.b.arange(0, 16), k.b.splat(k.i32(13), {16}));
  Value* other = k.b.constFloat(Type::tile(DType::F32, {16}), -std::numeric_limits<double>::infinity());
  Value* x = k.b.load(ptrs, mask, other);
  Value* maskedZero = k.b.load(ptrs, mask);  // no other: 0
  k.store1D(po, k.b.binary(OpKind::Maximum, x, maskedZero));
  k.b.store(k.b.addptr(k.ptrs1D(po, 16), k.b.constInt(Type::tile(DType::I32, {16}), 16)), x);
  Memory m;
  std::vector<double> xs(13);
  for (int i = 0; i < 13; ++i) xs[i] = -i;
  addF(m, "x", DType::F32, {13}, xs);
  m.add("out", DType::F32, {32}, true);
  runBlock(k.finish(), LaunchConfig{}, m);
  std::vector<double> got = readF(m, "out");
  for (int i = 0; i < 13; ++i) {
    EXPECT_EQ(got[i], -i);
    EXPECT_EQ(got[16 + i], -i);
  }
  for (int i = 13; i < 16; ++i) {
    EXPECT_EQ(got[i], 0.0);
    EXPECT_EQ(got[16 + i], -std::numeric_limits<double>::infinity());
  }
}

TEST(BlockMemory, ScalarLoadStoreAndGatherAcrossBuffers) {
  // A tile whose pointers are in two buffers (chosen by select) takes the per-element path.
  KernelBuilder k;
  Value* pa = k.ptrParam("a", DType::I32);
  Value* pb = k.ptrParam("b", DType::I32);
  Value* po = k.ptrParam("out", DType::I32);
  Value* even = k.b.cmp("eq", k.b.binary(OpKind::Rem, k.b.arange(0, 8), k.b.constInt(Type::tile(DType::I32, {8}), 2)),
                        k.b.constInt(Type::tile(DType::I32, {8}), 0));
  Value* ptrs = k.b.select(even, k.ptrs1D(pa, 8), k.ptrs1D(pb, 8));
  k.store1D(po, k.b.load(ptrs));
  k.b.store(k.b.addptr(po, k.i32(8)), k.b.load(k.b.addptr(pb, k.i32(3))));  // scalar pointer
  Memory m;
  addI(m, "a", DType::I32, {8}, {0, 1, 2, 3, 4, 5, 6, 7});
  addI(m, "b", DType::I32, {8}, {10, 11, 12, 13, 14, 15, 16, 17});
  m.add("out", DType::I32, {9}, true);
  runBlock(k.finish(), LaunchConfig{}, m);
  EXPECT_EQ(readI(m, "out"), (std::vector<int64_t>{0, 11, 2, 13, 4, 15, 6, 17, 13}));
}

TEST(BlockMemory, OutOfBoundsLoadIsALocatedError) {
  // 781 columns, a 1024-wide block without a mask: element 781 is the first one outside.
  KernelBuilder k;
  Value* px = k.ptrParam("x_ptr", DType::F32);
  Value* pid = k.b.programId(0);
  Value* row = k.b.binary(OpKind::Mul, pid, k.i32(781));
  Value* base = k.b.addptr(px, row);
  k.b.setLoc(Loc{6, 9});
  Value* x = k.b.load(k.ptrs1D(base, 1024));
  k.b.setLoc(Loc{7, 1});
  k.b.store(k.ptrs1D(base, 1024), x);
  Function& fn = k.finish();
  Memory m;
  m.add("x_ptr", DType::F32, {781}, false);
  LaunchConfig launch;
  Loc loc;
  std::string msg = errorOf([&] { runBlock(fn, launch, m); }, &loc);
  EXPECT_EQ(msg, "load out of bounds: address 0x10000c34 is 0 bytes past the end of buffer 'x_ptr' "
                 "(781 x f32) in program (0, 0, 0), element [781]" +
                     outOfBoundsHint(false, false));
  EXPECT_EQ(loc, (Loc{6, 9}));
  // With two rows of data, program 1 (rows start at pid * 781) is the first to run past the end.
  Memory m2;
  m2.add("x_ptr", DType::F32, {2, 781}, false);
  launch.grid = {4, 1, 1};
  msg = errorOf([&] { runBlock(fn, launch, m2); });
  EXPECT_EQ(msg, "load out of bounds: address 0x10001868 is 0 bytes past the end of buffer 'x_ptr' "
                 "(2 x 781 x f32) in program (1, 0, 0), element [781]" +
                     outOfBoundsHint(false, false));
}

TEST(BlockMemory, OutOfBoundsStoreWritesNothing) {
  // A 2-D store of 4 x 4 into a 15-element buffer: element [3, 3] is outside, so nothing of
  // the store may be written, not even the 15 valid elements before it.
  KernelBuilder k;
  Value* po = k.ptrParam("out", DType::I32);
  k.b.setLoc(Loc{3, 5});
  k.store2D(po, k.b.constInt(Type::tile(DType::I32, {4, 4}), 42));
  Function& fn = k.finish();
  Memory m;
  m.add("out", DType::I32, {15}, true);
  Loc loc;
  std::string msg = errorOf([&] { runBlock(fn, LaunchConfig{}, m); }, &loc);
  EXPECT_EQ(msg, "store out of bounds: address 0x1000003c is 0 bytes past the end of buffer 'out' "
                 "(15 x i32) in program (0, 0, 0), element [3, 3]" +
                     outOfBoundsHint(true, false));
  EXPECT_EQ(loc, (Loc{3, 5}));
  EXPECT_EQ(readI(m, "out"), std::vector<int64_t>(15, 0));
}

TEST(BlockMemory, AddressBeforeABufferAndMisalignedAccess) {
  KernelBuilder k;
  Value* px = k.ptrParam("x", DType::F32);
  Value* off = k.b.binary(OpKind::Sub, k.b.arange(0, 4), k.b.constInt(Type::tile(DType::I32, {4}), 1));
  k.b.store(k.b.addptr(k.b.splat(px, {4}), off), k.b.constFloat(Type::tile(DType::F32, {4}), 1.0));
  Function& fn = k.finish();
  Memory m;
  m.add("x", DType::F32, {4}, true);
  EXPECT_EQ(errorOf([&] { runBlock(fn, LaunchConfig{}, m); }),
            "store out of bounds: address 0xffffffc is 4 bytes before the start of buffer 'x' (4 x f32) "
            "in program (0, 0, 0), element [0]" +
                outOfBoundsHint(true, false));
  EXPECT_EQ(readF(m, "x"), std::vector<double>(4, 0.0));

  // A negative offset that takes the address below 0 (x - 10^9 elements = 4e9 bytes below the
  // first buffer) is before the start of the first buffer, not 2^64 - 4e9 bytes past the last.
  KernelBuilder kw;
  Value* pw = kw.ptrParam("x", DType::F32);
  kw.ptrParam("out_ptr", DType::F32);
  Value* far = kw.b.binary(OpKind::Sub, kw.b.arange(0, 4), kw.b.constInt(Type::tile(DType::I32, {4}), 1000000000));
  kw.b.load(kw.b.addptr(kw.b.splat(pw, {4}), far));
  Function& fw = kw.finish();
  Memory mw;
  mw.add("x", DType::F32, {4}, false);
  mw.add("out_ptr", DType::F32, {4}, true);
  EXPECT_EQ(errorOf([&] { runBlock(fw, LaunchConfig{}, mw); }),
            "load out of bounds: address 0xffffffff2194d800 (-3731564544) is 4000000000 bytes before the start of "
            "buffer 'x' (4 x f32) in program (0, 0, 0), element [0]" +
                outOfBoundsHint(false, false));

  // An i32 view of an f32 buffer is not an element of it.
  KernelBuilder k2;
  Value* pi = k2.ptrParam("x", DType::F32);
  (void)pi;
  Value* pj = k2.ptrParam("y", DType::I32);
  k2.b.load(k2.ptrs1D(pj, 4));
  Memory m2;
  m2.add("x", DType::F32, {4}, false);
  m2.add("y", DType::F32, {4}, false);
  std::string msg = errorOf([&] { runBlock(k2.finish(), LaunchConfig{}, m2); });
  EXPECT_NE(msg.find("holds f32 but the parameter has type ptr<i32>"), std::string::npos) << msg;
}

TEST(BlockControl, ForCarriesTilesAndSwapsInYieldOrder) {
  // acc = zeros; (a, b) = (x, 1): for i in range(0, 5): acc += x * i; (a, b) = (b, a)
  KernelBuilder k;
  Value* px = k.ptrParam("x", DType::I32);
  Value* po = k.ptrParam("out", DType::I32);
  Value* x = k.load1D(px, 8);
  Value* acc0 = k.b.constInt(Type::tile(DType::I32, {8}), 0);
  Value* one = k.b.constInt(Type::tile(DType::I32, {8}), 1);
  Op* loop = k.b.forOp(k.i32(0), k.i32(5), k.i32(1), {acc0, x, one});
  Region& body = loop->region(0);
  Builder inner(&body);
  Value* iv = body.arg(0);
  Value* term = inner.binary(OpKind::Mul, x, inner.splat(iv, {8}));
  Value* acc = inner.binary(OpKind::Add, body.arg(1), term);
  inner.yield({acc, body.arg(3), body.arg(2)});
  k.b.setInsertionPointToEnd(&k.fn.body);
  k.store1D(po, loop->result(0));
  k.b.store(k.b.addptr(k.ptrs1D(po, 8), k.b.constInt(Type::tile(DType::I32, {8}), 8)), loop->result(1));
  Memory m;
  addI(m, "x", DType::I32, {8}, {1, 2, 3, 4, 5, 6, 7, 8});
  m.add("out", DType::I32, {16}, true);
  runBlock(k.finish(), LaunchConfig{}, m);
  std::vector<int64_t> got = readI(m, "out");
  for (int j = 0; j < 8; ++j) {
    EXPECT_EQ(got[j], (j + 1) * 10);  // (0+1+2+3+4) * x
    EXPECT_EQ(got[8 + j], 1);         // five swaps: a ends as the initial b
  }
}

// Sum of iv over range(lo, hi, step) in an i32 loop (carried scalar), stored to out[0], and
// the iteration count to out[1].
std::vector<int64_t> runRange(int64_t lo, int64_t hi, int64_t step, std::string* error = nullptr) {
  KernelBuilder k;
  Value* po = k.ptrParam("out", DType::I32);
  Value* plo = k.scalarParam("lo", DType::I32);
  Value* phi = k.scalarParam("hi", DType::I32);
  Value* pstep = k.scalarParam("step", DType::I32);
  k.b.setLoc(Loc{4, 5});
  Op* loop = k.b.forOp(plo, phi, pstep, {k.i32(0), k.i32(0)});
  Builder inner(&loop->region(0));
  Region& body = loop->region(0);
  inner.yield({inner.binary(OpKind::Add, body.arg(1), body.arg(0)),
               inner.binary(OpKind::Add, body.arg(2), inner.constInt(Type::scalar(DType::I32), 1))});
  k.b.setInsertionPointToEnd(&k.fn.body);
  k.b.store(po, loop->result(0));
  k.b.store(k.b.addptr(po, k.i32(1)), loop->result(1));
  Memory m;
  m.add("out", DType::I32, {2}, true);
  LaunchConfig launch;
  launch.scalars["lo"] = ScalarValue{DType::I32, lo, 0};
  launch.scalars["hi"] = ScalarValue{DType::I32, hi, 0};
  launch.scalars["step"] = ScalarValue{DType::I32, step, 0};
  std::string msg = errorOf([&] { runBlock(k.finish(), launch, m); });
  if (error) *error = msg;
  return readI(m, "out");
}

TEST(BlockControl, ForRangesNegativeStepZeroTripAndZeroStep) {
  EXPECT_EQ(runRange(0, 5, 1), (std::vector<int64_t>{10, 5}));
  EXPECT_EQ(runRange(10, 0, -3), (std::vector<int64_t>{10 + 7 + 4 + 1, 4}));
  EXPECT_EQ(runRange(3, 3, 1), (std::vector<int64_t>{0, 0}));
  EXPECT_EQ(runRange(5, 0, 1), (std::vector<int64_t>{0, 0}));
  // Near INT32_MAX the iv never overflows: 2147483640, 2147483645 only.
  EXPECT_EQ(runRange(2147483640, 2147483647, 5)[1], 2);
  std::string err;
  runRange(0, 5, 0, &err);
  EXPECT_EQ(err, "range() step is zero in program (0, 0, 0)");
}

TEST(BlockControl, IfRunsOnlyTheTakenBranch) {
  // out[pid] = pid < 2 ? pid * 100 : x[pid] / 0 (the else branch would divide by zero).
  KernelBuilder k;
  Value* px = k.ptrParam("x", DType::I32);
  Value* po = k.ptrParam("out", DType::I32);
  Value* pid = k.b.programId(0);
  Value* cond = k.b.cmp("lt", pid, k.i32(2));
  Op* branch = k.b.ifOp(cond, {Type::scalar(DType::I32)});
  Builder thenB(&branch->region(0));
  thenB.yield({thenB.binary(OpKind::Mul, pid, thenB.constInt(Type::scalar(DType::I32), 100))});
  Builder elseB(&branch->region(1));
  Value* xv = elseB.load(elseB.addptr(px, pid));
  elseB.yield({elseB.binary(OpKind::Div, xv, elseB.constInt(Type::scalar(DType::I32), 0))});
  k.b.setInsertionPointToEnd(&k.fn.body);
  k.b.store(k.b.addptr(po, pid), branch->result(0));
  Function& fn = k.finish();
  Memory m;
  m.add("x", DType::I32, {4}, false);
  m.add("out", DType::I32, {4}, true);
  LaunchConfig launch;
  launch.grid = {2, 1, 1};
  runBlock(fn, launch, m);
  EXPECT_EQ(readI(m, "out"), (std::vector<int64_t>{0, 100, 0, 0}));
  launch.grid = {3, 1, 1};
  EXPECT_EQ(errorOf([&] { runBlock(fn, launch, m); }), "integer division by zero in program (2, 0, 0)");
}

TEST(BlockControl, ProgramIdsCoverTheGridXFastest) {
  // out[order] = pid_x + 10 * pid_y + 100 * pid_z + 1000 * num_programs(0), where `order` is
  // a running counter kept in out[24] (so the visiting order is visible).
  KernelBuilder k;
  Value* po = k.ptrParam("out", DType::I32);
  Value* counterPtr = k.b.addptr(po, k.i32(24));
  Value* order = k.b.load(counterPtr);
  Value* v = k.b.programId(0);
  v = k.b.binary(OpKind::Add, v, k.b.binary(OpKind::Mul, k.b.programId(1), k.i32(10)));
  v = k.b.binary(OpKind::Add, v, k.b.binary(OpKind::Mul, k.b.programId(2), k.i32(100)));
  v = k.b.binary(OpKind::Add, v, k.b.binary(OpKind::Mul, k.b.numPrograms(0), k.i32(1000)));
  k.b.store(k.b.addptr(po, order), v);
  k.b.store(counterPtr, k.b.binary(OpKind::Add, order, k.i32(1)));
  Function& fn = k.finish();
  Memory m;
  m.add("out", DType::I32, {25}, true);
  LaunchConfig launch;
  launch.grid = {3, 2, 4};
  BlockRunStats stats = runBlock(fn, launch, m);
  EXPECT_EQ(stats.programs, 24);
  EXPECT_GT(stats.tileOps, 0);
  std::vector<int64_t> got = readI(m, "out");
  int n = 0;
  for (int z = 0; z < 4; ++z)
    for (int y = 0; y < 2; ++y)
      for (int x = 0; x < 3; ++x) EXPECT_EQ(got[n++], 3000 + x + 10 * y + 100 * z);
  EXPECT_EQ(got[24], 24);
}

TEST(BlockParams, ScalarsAreConvertedAndMissingBindingsAreErrors) {
  KernelBuilder k;
  Value* po = k.ptrParam("out", DType::F16);
  Value* s = k.scalarParam("s", DType::F16);   // from an f32 launch value
  Value* n = k.scalarParam("n", DType::I32);   // from an i64 launch value (wraps)
  k.b.store(po, s);
  k.b.store(k.b.addptr(po, k.i32(1)), k.b.convert(n, DType::F16));
  Function& fn = k.finish();
  Memory m;
  m.add("out", DType::F16, {2}, true);
  LaunchConfig launch;
  launch.scalars["s"] = ScalarValue{DType::F32, 0, 0.1};
  launch.scalars["n"] = ScalarValue{DType::I64, (int64_t(1) << 32) + 3, 0};
  runBlock(fn, launch, m);
  EXPECT_EQ(readF(m, "out"), (std::vector<double>{0.0999755859375, 3.0}));
  launch.scalars.erase("n");
  EXPECT_NE(errorOf([&] { runBlock(fn, launch, m); }).find("no value for parameter 'n'"), std::string::npos);
  Memory empty;
  launch.scalars["n"] = ScalarValue{DType::I32, 1, 0};
  EXPECT_EQ(errorOf([&] { runBlock(fn, launch, empty); }), "no buffer is bound to pointer parameter 'out'");
}

TEST(BlockParams, InvalidIRIsRejectedBeforeRunning) {
  KernelBuilder k;
  k.ptrParam("out", DType::F32);
  // No return: the verifier complains and nothing runs.
  Memory m;
  m.add("out", DType::F32, {1}, true);
  EXPECT_THROW(runBlock(k.fn, LaunchConfig{}, m), IRError);
}

}  // namespace
}  // namespace tl
