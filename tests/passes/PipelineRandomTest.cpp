// The whole pipeline on random straight-line integer programs: the stored values must be the
// same before and after (checked with a small reference evaluator written here), and the IR must
// verify. This exercises the passes together: rewrites that expose folds, CSE of commuted ops,
// DCE of what the others left behind.
#include <random>
#include <unordered_map>

#include "PassTestUtil.h"
#include "ir/Pass.h"

namespace tl {
namespace {

using passtest::Kernel;

// Evaluates a straight-line function of i32/i1 scalars; returns the stored values in order.
std::vector<int64_t> evaluate(const Function& fn, int64_t n, int64_t m) {
  std::unordered_map<const Value*, int64_t> val{{fn.param(1), n}, {fn.param(2), m}};
  std::vector<int64_t> stored;
  auto w = [](int64_t v) { return static_cast<int64_t>(static_cast<int32_t>(static_cast<uint32_t>(v))); };
  for (const auto& op : fn.body.ops) {
    auto in = [&](size_t i) { return val.at(op->operand(i)); };
    bool i1 = op->numResults() && op->result()->type.dtype == DType::I1;
    int64_t r = 0;
    switch (op->kind) {
      case OpKind::Constant: r = op->intAttr("value"); break;
      case OpKind::Add: r = w(int64_t(uint64_t(in(0)) + uint64_t(in(1)))); break;
      case OpKind::Sub: r = w(int64_t(uint64_t(in(0)) - uint64_t(in(1)))); break;
      case OpKind::Mul: r = w(int64_t(uint64_t(in(0)) * uint64_t(in(1)))); break;
      case OpKind::And: r = in(0) & in(1); break;
      case OpKind::Or: r = in(0) | in(1); break;
      case OpKind::Xor: r = in(0) ^ in(1); break;
      case OpKind::Maximum: r = std::max(in(0), in(1)); break;
      case OpKind::Minimum: r = std::min(in(0), in(1)); break;
      case OpKind::Neg: r = w(int64_t(0 - uint64_t(in(0)))); break;
      case OpKind::Not: r = i1 ? !in(0) : w(~in(0)); break;
      case OpKind::Cmp: {
        const std::string& p = op->strAttr("pred");
        int64_t a = in(0), b = in(1);
        r = p == "lt" ? a < b : p == "le" ? a <= b : p == "gt" ? a > b : p == "ge" ? a >= b : p == "eq" ? a == b : a != b;
        break;
      }
      case OpKind::Select: r = in(0) ? in(1) : in(2); break;
      case OpKind::Store: stored.push_back(in(1)); break;
      case OpKind::Return: break;
      default: ADD_FAILURE() << "unexpected op " << mnemonic(op->kind); break;
    }
    if (op->numResults()) val[op->result()] = i1 ? (r != 0) : w(r);
  }
  return stored;
}

// Builds a random program over params n, m and a few interesting constants.
void buildRandom(Kernel& k, std::mt19937& rng) {
  Value* out = k.ptrParam("out", DType::I32);
  std::vector<Value*> ints{k.scalarParam("n"), k.scalarParam("m")};
  for (int64_t c : {0, 1, -1, 2, 2147483647, -2147483647 - 1}) ints.push_back(k.i32(c));
  std::vector<Value*> bools{k.i1(true), k.i1(false)};
  auto pick = [&](std::vector<Value*>& pool) { return pool[rng() % pool.size()]; };
  const OpKind binary[] = {OpKind::Add, OpKind::Sub, OpKind::Mul, OpKind::And, OpKind::Or,
                           OpKind::Xor, OpKind::Maximum, OpKind::Minimum};
  const char* preds[] = {"lt", "le", "gt", "ge", "eq", "ne"};
  for (int i = 0; i < 40; ++i) {
    switch (rng() % 7) {
      case 0: case 1: case 2: ints.push_back(k.b.binary(binary[rng() % 8], pick(ints), pick(ints))); break;
      case 3: ints.push_back(k.b.unary(rng() % 2 ? OpKind::Neg : OpKind::Not, pick(ints))); break;
      case 4: bools.push_back(k.b.cmp(preds[rng() % 6], pick(ints), pick(ints))); break;
      case 5: bools.push_back(k.b.binary(binary[3 + rng() % 3], pick(bools), pick(bools))); break;
      case 6: ints.push_back(k.b.select(pick(bools), pick(ints), pick(ints))); break;
    }
  }
  for (int i = 0; i < 3; ++i) k.keep(out, pick(ints));
  k.keep(out, k.b.select(pick(bools), k.i32(1), k.i32(0)));
  k.finish();
}

TEST(PipelineRandom, PreservesStoredValues) {
  const int64_t inputs[][2] = {{0, 0}, {7, -3}, {-2147483647 - 1, 1}, {2147483647, -1}, {123456, 654321}};
  for (unsigned seed = 1; seed <= 300; ++seed) {
    std::mt19937 rng(seed);
    Kernel k;
    buildRandom(k, rng);
    ASSERT_EQ(verifyFunction(k.fn), "") << "seed " << seed;
    std::unique_ptr<Function> original = cloneFunction(k.fn);
    blockPipeline().run(k.fn);  // verifies after each pass (throws otherwise)
    EXPECT_LE(passtest::countAllOps(k.fn), passtest::countAllOps(*original));
    for (const auto& in : inputs)
      ASSERT_EQ(evaluate(k.fn, in[0], in[1]), evaluate(*original, in[0], in[1]))
          << "seed " << seed << ", n = " << in[0] << ", m = " << in[1];
  }
}

}  // namespace
}  // namespace tl
