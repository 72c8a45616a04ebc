// Register-wise element semantics: every elementwise op thread IR reuses from block IR, on every
// dtype it accepts, run on edge-case data by tl-scalar (block IR, 64-element tiles) and by the
// executor (thread IR, one warp, 32 registers per lane) must give bit-identical outputs. Plus
// fma (one rounding) and the integer division by zero error.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <random>

#include "SimTestUtil.h"
#include "ir/Builder.h"
#include "scalar/ScalarInterpreter.h"

namespace tl {
namespace {

using test::gridLaunch;
using test::runError;

constexpr int64_t kRegs = 32;        // registers per lane in the thread-IR kernel
constexpr int64_t kN = 32 * kRegs;   // elements: every pair of edge cases, then random values

// Builds (inputs...) -> op -> out in block IR (level Block) or thread IR (level Thread).
using OpBuilder = std::function<Value*(Builder&, const std::vector<Value*>&)>;

std::unique_ptr<Function> buildKernel(IRLevel level, const std::vector<DType>& ins, DType outType, const OpBuilder& op) {
  auto fn = std::make_unique<Function>();
  fn->name = "elementwise";
  fn->level = level;
  fn->loc = {1, 1};
  if (level == IRLevel::Thread) fn->numWarps = 1;
  std::vector<Value*> ptrs;
  for (size_t k = 0; k < ins.size(); ++k) {
    std::string name = "in" + std::to_string(k);
    fn->params.push_back({name, Param::Kind::Pointer, Loc{1, 1}});
    ptrs.push_back(fn->body.addArg(Type::ptr(ins[k]), name));
  }
  fn->params.push_back({"out", Param::Kind::Pointer, Loc{1, 1}});
  Value* outPtr = fn->body.addArg(Type::ptr(outType), "out");
  Builder b(&fn->body);
  b.setLoc({2, 3});
  Value* idx = nullptr;
  Shape shape;
  if (level == IRLevel::Block) {
    idx = b.arange(0, kN);
    shape = {kN};
  } else {
    // element = lane * kRegs + reg
    Value* lane = b.create(OpKind::LaneId, {}, {Type::scalar(DType::I32)})->result();
    Value* reg = b.create(OpKind::RegIndex, {}, {Type::tile(DType::I32, {kRegs})})->result();
    Value* l2 = b.binary(OpKind::Mul, lane, b.constInt(Type::scalar(DType::I32), kRegs));
    idx = b.binary(OpKind::Add, b.splat(l2, {kRegs}), reg);
    shape = {kRegs};
  }
  auto load = [&](Value* p) {
    Value* ptr = b.addptr(b.splat(p, shape), idx);
    if (level == IRLevel::Block) return b.load(ptr);
    Type t = ptr->type;
    t.isPtr = false;
    return b.create(OpKind::LdGlobal, {ptr}, {t}, {{"vec", int64_t(1)}})->result();
  };
  std::vector<Value*> vals;
  for (Value* p : ptrs) vals.push_back(load(p));
  b.setLoc({3, 5});
  Value* r = op(b, vals);
  b.setLoc({4, 3});
  Value* po = b.addptr(b.splat(outPtr, shape), idx);
  if (level == IRLevel::Block) b.store(po, r);
  else b.create(OpKind::StGlobal, {po, r}, {}, {{"vec", int64_t(1)}});
  b.ret();
  return fn;
}

// Edge cases first, then seeded random values, for one dtype. Operand `role` k takes edge case
// (e / L^k) % L at element e (L edge cases), so two operands see every pair of edge cases.
void fillInput(Buffer& buf, int role, bool nonZero) {
  const uint64_t seed = 17 + static_cast<uint64_t>(role);
  std::mt19937_64 rng(seed);
  const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  std::vector<double> floats = {0.0, -0.0, 1.0, -1.0, inf, -inf, nan, 0.5, -2.25, 3.0, 1e-30, -1e-30, 65504.0,
                                70000.0, 1e-7, 3.4e38, -3.4e38, 2.5, -2.5, 100.75, 1e20, -0.1, 7.0, 1.0 / 3};
  std::vector<int64_t> ints = {0, 1, -1, 7, -7, 3, -3, INT32_MIN, INT32_MAX, int64_t(INT32_MAX) + 1, INT64_MIN, INT64_MAX,
                               13, -13, 255, -256, 1 << 20, -(1 << 20), 12345678, -99, 2, -2, 64, 31};
  if (ints.size() != floats.size()) throw std::logic_error("edge-case lists must have one length");
  for (int64_t i = 0; i < buf.numel(); ++i) {
    const size_t L = floats.size(), k = static_cast<size_t>(i);
    const size_t edge = role == 0 ? k % L : role == 1 ? (k / L) % L : (k * 7) % L;
    const bool useEdge = k < L * L;
    if (isFloat(buf.dtype)) {
      double v = useEdge ? floats[edge] : std::uniform_real_distribution<double>(-50, 50)(rng);
      if (nonZero && v == 0) v = 1.5;
      buf.setF(i, v);
    } else {
      int64_t v = useEdge ? ints[edge] : static_cast<int64_t>(rng() % 2001) - 1000;
      if (buf.dtype == DType::I1) v = static_cast<int64_t>(rng() & 1);
      buf.setI(i, v);
      if (nonZero && buf.getI(i) == 0) buf.setI(i, 3);  // after wrapping (INT64_MIN is 0 as i32)
    }
  }
}

// Runs both engines on the same inputs and compares the output bytes (NaNs compare equal).
void compareEngines(const std::string& what, const std::vector<DType>& ins, DType outType, const OpBuilder& op,
                    bool nonZeroDivisor = false) {
  SCOPED_TRACE(what);
  auto blockFn = buildKernel(IRLevel::Block, ins, outType, op);
  auto threadFn = buildKernel(IRLevel::Thread, ins, outType, op);
  Memory m1, m2;
  for (size_t k = 0; k < ins.size(); ++k) {
    std::string name = "in" + std::to_string(k);
    bool nz = nonZeroDivisor && k == 1;
    fillInput(m1.add(name, ins[k], {kN}, false), static_cast<int>(k), nz);
    fillInput(m2.add(name, ins[k], {kN}, false), static_cast<int>(k), nz);
  }
  m1.add("out", outType, {kN}, true);
  m2.add("out", outType, {kN}, true);
  runScalar(*blockFn, gridLaunch(1), m1);
  ASSERT_EQ(runError(*threadFn, gridLaunch(1), m2), "");
  const Buffer &ref = *m1.find("out"), &got = *m2.find("out");
  for (int64_t i = 0; i < kN; ++i) {
    if (isFloat(outType) && std::isnan(ref.getF(i)) && std::isnan(got.getF(i))) continue;
    const int eb = dtypeBytes(outType);
    ASSERT_EQ(std::memcmp(ref.bytes.data() + i * eb, got.bytes.data() + i * eb, static_cast<size_t>(eb)), 0)
        << "element " << i << ": tl-scalar " << ref.getF(i) << ", executor " << got.getF(i) << " (inputs "
        << m1.find("in0")->getF(i) << (ins.size() > 1 ? ", " + std::to_string(m1.find("in1")->getF(i)) : "") << ")";
  }
}

const std::vector<DType> kFloats = {DType::F32, DType::F16, DType::BF16};
const std::vector<DType> kInts = {DType::I32, DType::I64};

TEST(ExecElementwise, UnaryOpsMatchTheScalarInterpreter) {
  for (DType d : kFloats)
    for (OpKind k : {OpKind::Neg, OpKind::Exp, OpKind::Exp2, OpKind::Log, OpKind::Sqrt, OpKind::Rsqrt, OpKind::Abs,
                     OpKind::Sigmoid})
      compareEngines(std::string(mnemonic(k)) + " " + dtypeName(d), {d}, d,
                     [k](Builder& b, const std::vector<Value*>& v) { return b.unary(k, v[0]); });
  for (DType d : kInts)
    for (OpKind k : {OpKind::Neg, OpKind::Not, OpKind::Abs})
      compareEngines(std::string(mnemonic(k)) + " " + dtypeName(d), {d}, d,
                     [k](Builder& b, const std::vector<Value*>& v) { return b.unary(k, v[0]); });
  compareEngines("not i1", {DType::I1}, DType::I1, [](Builder& b, const std::vector<Value*>& v) { return b.unary(OpKind::Not, v[0]); });
}

TEST(ExecElementwise, BinaryOpsMatchTheScalarInterpreter) {
  for (DType d : kFloats)
    for (OpKind k : {OpKind::Add, OpKind::Sub, OpKind::Mul, OpKind::Div, OpKind::Rem, OpKind::Maximum, OpKind::Minimum})
      compareEngines(std::string(mnemonic(k)) + " " + dtypeName(d), {d, d}, d,
                     [k](Builder& b, const std::vector<Value*>& v) { return b.binary(k, v[0], v[1]); });
  for (DType d : kInts)
    for (OpKind k : {OpKind::Add, OpKind::Sub, OpKind::Mul, OpKind::Div, OpKind::Rem, OpKind::Maximum, OpKind::Minimum,
                     OpKind::And, OpKind::Or, OpKind::Xor})
      compareEngines(std::string(mnemonic(k)) + " " + dtypeName(d), {d, d}, d,
                     [k](Builder& b, const std::vector<Value*>& v) { return b.binary(k, v[0], v[1]); },
                     /*nonZeroDivisor=*/true);
  for (OpKind k : {OpKind::And, OpKind::Or, OpKind::Xor})
    compareEngines(std::string(mnemonic(k)) + " i1", {DType::I1, DType::I1}, DType::I1,
                   [k](Builder& b, const std::vector<Value*>& v) { return b.binary(k, v[0], v[1]); });
}

TEST(ExecElementwise, CompareSelectConvertAddptrMatchTheScalarInterpreter) {
  for (DType d : {DType::F32, DType::F16, DType::I32, DType::I64})
    for (const char* pred : {"lt", "le", "gt", "ge", "eq", "ne"})
      compareEngines(std::string("cmp ") + pred + " " + dtypeName(d), {d, d}, DType::I1,
                     [pred](Builder& b, const std::vector<Value*>& v) { return b.cmp(pred, v[0], v[1]); });
  compareEngines("select f32", {DType::I1, DType::F32, DType::F32}, DType::F32,
                 [](Builder& b, const std::vector<Value*>& v) { return b.select(v[0], v[1], v[2]); });
  const std::vector<DType> all = {DType::F32, DType::F16, DType::BF16, DType::I32, DType::I64, DType::I1};
  for (DType from : all)
    for (DType to : all)
      if (from != to)
        compareEngines(std::string("convert ") + dtypeName(from) + " -> " + dtypeName(to), {from}, to,
                       [to](Builder& b, const std::vector<Value*>& v) { return b.convert(v[0], to); });
  // addptr then a load through the computed pointers: in[1 + (i % 3)] for each element.
  compareEngines("addptr + load", {DType::F32, DType::I32}, DType::F32, [](Builder& b, const std::vector<Value*>& v) {
    Value* base = b.region()->parentOp ? nullptr : b.region()->arg(0);  // the in0 pointer parameter
    Shape s = v[1]->type.shape;
    Value* off = b.binary(OpKind::And, v[1], b.constInt(Type::tile(DType::I32, s), 7));
    Value* ptrs = b.addptr(b.splat(base, s), off);
    if (s[0] == kN) return b.load(ptrs);
    return b.create(OpKind::LdGlobal, {ptrs}, {Type::tile(DType::F32, s)}, {{"vec", int64_t(1)}})->result();
  });
  // Constants of every dtype, including values that round or wrap.
  for (DType d : all)
    for (double c : {0.1, -3.0, 70000.0, 1e-8})
      compareEngines(std::string("constant ") + dtypeName(d), {d}, d, [d, c](Builder& b, const std::vector<Value*>& v) {
        Type t = v[0]->type;
        // Integer constants must fit their dtype (the verifier checks): an i1 is 0 or 1.
        const int64_t i = static_cast<int64_t>(c * 1000);
        Value* k = isFloat(d) ? b.constFloat(t, c) : b.constInt(t, d == DType::I1 ? int64_t(i != 0) : i);
        return d == DType::I1 ? b.binary(OpKind::Xor, v[0], k) : b.binary(OpKind::Add, v[0], k);
      });
}

// fma rounds once: for a = 1 + 2^-12, a*a - (1 + 2^-11) = 2^-24 exactly, while the unfused
// product rounds a*a to 1 + 2^-11 and the difference is 0.
TEST(ExecElementwise, FmaRoundsOnce) {
  auto fn = test::parseThread(R"(thread_func @fma(%out: ptr<f32>) num_warps(1) shared_bytes(0) {
  %a = constant {value = 1.000244140625} : f32
  %c = constant {value = -1.00048828125} : f32
  %f = fma %a, %a, %c : f32
  %p = mul %a, %a : f32
  %u = add %p, %c : f32
  %lane = lane_id : i32
  %c2 = constant {value = 2} : i32
  %i0 = mul %lane, %c2 : i32
  %c1 = constant {value = 1} : i32
  %i1 = add %i0, %c1 : i32
  %q0 = addptr %out, %i0 : ptr<f32>
  %q1 = addptr %out, %i1 : ptr<f32>
  st_global %q0, %f {vec = 1}
  st_global %q1, %u {vec = 1}
  return
}
)");
  ASSERT_NE(fn, nullptr);
  Memory mem;
  mem.add("out", DType::F32, {64}, true);
  ASSERT_EQ(runError(*fn, gridLaunch(1), mem), "");
  EXPECT_EQ(test::getF32(*mem.find("out"), 0), std::ldexp(1.0f, -24));
  EXPECT_EQ(test::getF32(*mem.find("out"), 1), 0.0f);
  EXPECT_EQ(test::getF32(*mem.find("out"), 63), 0.0f);
}

TEST(ExecElementwise, IntegerDivisionByZeroNamesTheThread) {
  auto fn = test::parseThread(R"(thread_func @div(%out: ptr<i32>) num_warps(2) shared_bytes(0) {
  %tid = thread_id : i32
  %c37 = constant {value = 37} : i32
  %d = sub %tid, %c37 : i32
  %c100 = constant {value = 100} : i32
  %q = div %c100, %d : i32
  %p = addptr %out, %tid : ptr<i32>
  st_global %p, %q {vec = 1}
  return
}
)");
  ASSERT_NE(fn, nullptr);
  Memory mem;
  mem.add("out", DType::I32, {64}, true);
  std::string err = runError(*fn, gridLaunch(2), mem);
  EXPECT_EQ(err, "6:3: integer division by zero in block (0, 0, 0), thread 37 (warp 1, lane 5), instruction 4, register 0");
  // Warp 0 ran to completion before warp 1 faulted: its stores happened (100 / (t - 37)).
  EXPECT_EQ(test::getI32(*mem.find("out"), 0), -2);
  EXPECT_EQ(test::getI32(*mem.find("out"), 40), 0);
}

}  // namespace
}  // namespace tl
