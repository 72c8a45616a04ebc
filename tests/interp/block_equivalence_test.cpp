// tl-block vs tl-scalar (the reference) on the same IR and inputs.
//
// Random elementwise programs (seeded chains of unary/binary/cmp+select/convert/max-min-reduce
// ops per dtype, with NaN, infinities, signed zeros and extreme integers in the inputs) must
// give BIT-IDENTICAL outputs, or the same RuntimeError message. Kernels whose float sums use
// another order in tl-block (softmax, long row sums) must agree within the comparison
// tolerance; dot and column sums, which add in the reference's order, must agree exactly.
#include <cmath>
#include <limits>
#include <random>

#include "block/BlockInterpreter.h"
#include "block_helpers.h"
#include "scalar/ScalarInterpreter.h"

namespace tl {
namespace {

using blocktest::KernelBuilder;

constexpr int64_t kM = 8, kN = 16;

// Runs `fn` on a copy of `memory` with each engine; returns the error message ("" if none).
struct Outcome {
  Memory memory;
  std::string error;
};

template <class Run>
Outcome runOn(const Memory& input, const Function& fn, const LaunchConfig& launch, Run run) {
  Outcome o{input, ""};
  try {
    run(fn, launch, o.memory);
  } catch (const RuntimeError& e) {
    o.error = e.what();
  }
  return o;
}

// Both engines; checks that they agree. `exact`: bit-identical floats (NaN matches NaN), else
// compareBuffers' tolerance.
void expectEnginesAgree(const Function& fn, const LaunchConfig& launch, const Memory& input, bool exact,
                        const std::string& what) {
  Outcome ref = runOn(input, fn, launch, [](const Function& f, const LaunchConfig& l, Memory& m) { runScalar(f, l, m); });
  Outcome got = runOn(input, fn, launch, [](const Function& f, const LaunchConfig& l, Memory& m) { runBlock(f, l, m); });
  ASSERT_EQ(got.error, ref.error) << what;
  for (const Buffer& r : ref.memory.buffers()) {
    const Buffer* g = got.memory.find(r.name);
    ASSERT_NE(g, nullptr);
    if (!exact) {
      Comparison c = compareBuffers(r, *g);
      EXPECT_TRUE(c.pass) << what << ": buffer " << r.name << " differs at " << c.worstIndex << " (max abs err "
                          << c.maxAbsErr << ")";
      continue;
    }
    for (int64_t i = 0; i < r.numel(); ++i) {
      if (isInt(r.dtype)) {
        ASSERT_EQ(g->getI(i), r.getI(i)) << what << ": buffer " << r.name << " element " << i;
      } else {
        double a = r.getF(i), b = g->getF(i);
        bool same = (std::isnan(a) && std::isnan(b)) || (a == b && std::signbit(a) == std::signbit(b));
        ASSERT_TRUE(same) << what << ": buffer " << r.name << " element " << i << ": reference " << a
                          << ", tl-block " << b;
      }
    }
  }
}

// Fills a buffer with values that exercise the edge cases of its dtype.
void fillRandom(Buffer& b, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> unit(0, 1);
  std::normal_distribution<double> normal(0, 3);
  const double specials[] = {std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity(),
                             -std::numeric_limits<double>::infinity(), 0.0, -0.0, 1e30, -1e-30, 65504, 3e38};
  const int64_t ispecials[] = {0, 1, -1, INT32_MAX, INT32_MIN, INT64_MAX, INT64_MIN, 7, -7};
  for (int64_t i = 0; i < b.numel(); ++i) {
    double u = unit(rng);
    if (isFloat(b.dtype)) {
      b.setF(i, u < 0.1 ? specials[rng() % 9] : normal(rng));
    } else {
      int64_t v = u < 0.15 ? ispecials[rng() % 9] : static_cast<int64_t>(normal(rng) * 20);
      if (u > 0.9) v = static_cast<int64_t>(rng());
      b.setI(i, v);
    }
  }
}

// One random elementwise program over <kM x kN> tiles of dtype d.
std::unique_ptr<KernelBuilder> randomChain(DType d, std::mt19937_64& rng, int steps) {
  auto k = std::make_unique<KernelBuilder>();
  Builder& b = k->b;
  const Type tileT = Type::tile(d, {kM, kN});
  Value* pa = k->ptrParam("a", d);
  Value* pb = k->ptrParam("b", d);
  Value* pc = k->ptrParam("c", d);
  Value* po = k->ptrParam("out", d);
  Value* pm = k->ptrParam("mask_out", DType::I32);
  std::vector<Value*> pool{k->load2D(pa, kM, kN), k->load2D(pb, kM, kN),
                           b.broadcast(b.expandDims(k->load1D(pc, kN), 0), {kM, kN})};
  auto pick = [&] { return pool[rng() % pool.size()]; };
  const bool fl = isFloat(d);
  const std::vector<OpKind> unaryF{OpKind::Neg, OpKind::Abs, OpKind::Exp, OpKind::Exp2, OpKind::Log,
                                   OpKind::Sqrt, OpKind::Rsqrt, OpKind::Sigmoid};
  const std::vector<OpKind> unaryI{OpKind::Neg, OpKind::Abs, OpKind::Not};
  const std::vector<OpKind> binaryF{OpKind::Add, OpKind::Sub, OpKind::Mul, OpKind::Div,
                                    OpKind::Rem, OpKind::Maximum, OpKind::Minimum};
  const std::vector<OpKind> binaryI{OpKind::Add, OpKind::Sub, OpKind::Mul, OpKind::Div, OpKind::Rem,
                                    OpKind::Maximum, OpKind::Minimum, OpKind::And, OpKind::Or, OpKind::Xor};
  const char* preds[] = {"lt", "le", "gt", "ge", "eq", "ne"};
  const DType dtypes[] = {DType::I1, DType::I32, DType::I64, DType::F16, DType::BF16, DType::F32};
  Value* lastMask = nullptr;
  for (int s = 0; s < steps; ++s) {
    Value* r = nullptr;
    switch (rng() % 6) {
      case 0: {
        const auto& ops = fl ? unaryF : unaryI;
        r = b.unary(ops[rng() % ops.size()], pick());
        break;
      }
      case 1:
      case 2: {
        const auto& ops = fl ? binaryF : binaryI;
        OpKind op = ops[rng() % ops.size()];
        Value* y = pick();
        // Integer divisors are made odd (never zero) most of the time.
        if (!fl && (op == OpKind::Div || op == OpKind::Rem) && rng() % 8 != 0)
          y = b.binary(OpKind::Or, y, b.constInt(tileT, 1));
        r = b.binary(op, pick(), y);
        break;
      }
      case 3: {
        lastMask = b.cmp(preds[rng() % 6], pick(), pick());
        r = b.select(lastMask, pick(), pick());
        break;
      }
      case 4: {  // through another dtype and back
        r = b.convert(b.convert(pick(), dtypes[rng() % 6]), d);
        break;
      }
      case 5: {  // max/min/argmax along an axis, broadcast back (order-independent: exact)
        int axis = static_cast<int>(rng() % 2);
        Value* red = rng() % 3 == 0 ? b.convert(b.argmax(pick(), axis), d)
                                    : b.reduce(rng() % 2 ? "max" : "min", pick(), axis);
        r = b.broadcast(b.expandDims(red, axis), {kM, kN});
        break;
      }
    }
    if (r->type != tileT) r = b.convert(r, d);
    pool.push_back(r);
  }
  k->store2D(po, pool.back());
  if (!lastMask) lastMask = b.cmp("lt", pool[0], pool.back());
  k->store2D(pm, b.convert(lastMask, DType::I32));
  return k;
}

Memory randomInputs(DType d, std::mt19937_64& rng) {
  Memory m;
  fillRandom(m.add("a", d, {kM, kN}, false), rng);
  fillRandom(m.add("b", d, {kM, kN}, false), rng);
  fillRandom(m.add("c", d, {kN}, false), rng);
  m.add("out", d, {kM, kN}, true);
  m.add("mask_out", DType::I32, {kM, kN}, true);
  return m;
}

TEST(BlockEquivalence, RandomElementwiseProgramsAreBitIdentical) {
  const DType dtypes[] = {DType::F32, DType::F16, DType::BF16, DType::I32, DType::I64};
  int errors = 0, runs = 0;
  for (DType d : dtypes) {
    for (uint64_t seed = 1; seed <= 40; ++seed) {
      std::mt19937_64 rng(seed * 1000 + static_cast<uint64_t>(d));
      auto k = randomChain(d, rng, 12);
      Function& fn = k->finish();
      Memory input = randomInputs(d, rng);
      expectEnginesAgree(fn, LaunchConfig{}, input, true,
                         std::string(dtypeName(d)) + " seed " + std::to_string(seed));
      if (HasFatalFailure()) return;
      ++runs;
      try {
        Memory probe = input;
        runBlock(fn, LaunchConfig{}, probe);
      } catch (const RuntimeError&) {
        ++errors;
      }
    }
  }
  // Most programs run to the end (some integer ones divide by zero, on purpose).
  EXPECT_LT(errors, runs / 4);
}

// softmax over rows of a kM x 781 matrix with a 1024-wide masked block, one program per row.
Function& buildSoftmax(KernelBuilder& k, int64_t block) {
  Builder& b = k.b;
  Value* px = k.ptrParam("x_ptr", DType::F32);
  Value* po = k.ptrParam("out_ptr", DType::F32);
  Value* n = k.scalarParam("N", DType::I32);
  Value* row = b.binary(OpKind::Mul, b.programId(0), n);
  Value* cols = b.arange(0, block);
  Value* mask = b.cmp("lt", cols, b.splat(n, {block}));
  Value* offs = b.binary(OpKind::Add, b.splat(row, {block}), cols);
  Value* x = b.load(b.addptr(b.splat(px, {block}), offs), mask,
                    b.constFloat(Type::tile(DType::F32, {block}), -std::numeric_limits<double>::infinity()));
  x = b.binary(OpKind::Sub, x, b.splat(b.reduce("max", x, 0), {block}));
  Value* num = b.unary(OpKind::Exp, x);
  Value* out = b.binary(OpKind::Div, num, b.splat(b.reduce("sum", num, 0), {block}));
  b.store(b.addptr(b.splat(po, {block}), offs), out, mask);
  return k.finish();
}

TEST(BlockEquivalence, SoftmaxWithinTolerance) {
  KernelBuilder k;
  Function& fn = buildSoftmax(k, 1024);
  Memory m;
  std::mt19937_64 rng(7);
  Buffer& x = m.add("x_ptr", DType::F32, {kM, 781}, false);
  std::normal_distribution<double> normal(0, 2);
  for (int64_t i = 0; i < x.numel(); ++i) x.setF(i, normal(rng));
  m.add("out_ptr", DType::F32, {kM, 781}, true);
  LaunchConfig launch;
  launch.grid = {kM, 1, 1};
  launch.scalars["N"] = ScalarValue{DType::I32, 781, 0};
  expectEnginesAgree(fn, launch, m, false, "softmax");
}

TEST(BlockEquivalence, ReductionsAndDot) {
  // sums along both axes of a 32 x 64 tile (f32 and f16), and dot with an accumulator.
  for (DType d : {DType::F32, DType::F16, DType::BF16}) {
    KernelBuilder k;
    Builder& b = k.b;
    Value* pa = k.ptrParam("a", d);
    Value* pw = k.ptrParam("w", d);
    Value* prow = k.ptrParam("rows", d);
    Value* pcol = k.ptrParam("cols", d);
    Value* pd = k.ptrParam("dot", DType::F32);
    Value* a = k.load2D(pa, 32, 64);
    k.store1D(prow, b.reduce("sum", a, 1));
    k.store1D(pcol, b.reduce("sum", a, 0));
    Value* acc = b.constFloat(Type::tile(DType::F32, {32, 16}), 0.5);
    k.store2D(pd, b.dot(a, k.load2D(pw, 64, 16), acc));
    Function& fn = k.finish();
    Memory m;
    std::mt19937_64 rng(11);
    std::normal_distribution<double> normal(0, 1);
    Buffer& ba = m.add("a", d, {32, 64}, false);
    for (int64_t i = 0; i < ba.numel(); ++i) ba.setF(i, normal(rng));
    Buffer& bw = m.add("w", d, {64, 16}, false);
    for (int64_t i = 0; i < bw.numel(); ++i) bw.setF(i, normal(rng));
    m.add("rows", d, {32}, true);
    m.add("cols", d, {64}, true);
    m.add("dot", DType::F32, {32, 16}, true);
    expectEnginesAgree(fn, LaunchConfig{}, m, false, std::string("reductions ") + dtypeName(d));

    // Column sums (axis 0) and dot add in the reference's order: bit-identical.
    Memory ref = m, got = m;
    runScalar(fn, LaunchConfig{}, ref);
    runBlock(fn, LaunchConfig{}, got);
    EXPECT_EQ(ref.find("cols")->bytes, got.find("cols")->bytes) << dtypeName(d);
    EXPECT_EQ(ref.find("dot")->bytes, got.find("dot")->bytes) << dtypeName(d);
  }
}

TEST(BlockEquivalence, OutOfBoundsMessagesMatch) {
  // The softmax without its mask runs past the end of the last row: same error in both.
  KernelBuilder k;
  Builder& b = k.b;
  Value* px = k.ptrParam("x_ptr", DType::F32);
  Value* row = b.binary(OpKind::Mul, b.programId(0), k.i32(781));
  Value* ptrs = b.addptr(b.splat(b.addptr(px, row), {1024}), b.arange(0, 1024));
  b.store(ptrs, b.unary(OpKind::Neg, b.load(ptrs)));
  Function& fn = k.finish();
  Memory m;
  m.add("x_ptr", DType::F32, {3, 781}, true);
  LaunchConfig launch;
  launch.grid = {3, 1, 1};
  expectEnginesAgree(fn, launch, m, true, "out of bounds");
}

}  // namespace
}  // namespace tl
