// Each op family, lowered from a small kernel written as text, has the expected thread-IR
// structure and (run on the thread executor with race detection) matches tl-scalar: 2-D
// reductions along either axis with lanes and warps on the axis, full reductions to a scalar,
// f16 and int sums, argmax with ties and NaNs, if with carried tiles, 16-byte vector accesses,
// vector exchanges between layouts, and the errors for a bad `vec` and a pointer convert_layout. Also: removing the barrier of a
// lowered reduction makes the race detector name the race.
#include <vector>

#include "frontend/Frontend.h"
#include "lower_helpers.h"
#include "scalar/ScalarInterpreter.h"
#include "sim/ThreadExecutor.h"

namespace tl::lowertest {
namespace {

struct Source {
  std::unique_ptr<ParsedKernel> parsed;
  LaunchConfig launch;
  std::unique_ptr<Function> fn;  // block IR straight from the front end
};

Source compileText(const std::string& text, const std::vector<LaunchOverride>& overrides = {}) {
  Source s;
  auto file = std::make_shared<SourceFile>("test.tl", text);
  DiagEngine diag(file);
  s.parsed = parseKernelFile(file, diag);
  if (s.parsed && !diag.hasErrors()) s.launch = evalLaunch(*s.parsed, overrides, diag);
  if (s.parsed && !diag.hasErrors()) s.fn = compileKernel(*s.parsed, specializationFor(*s.parsed, s.launch), diag);
  EXPECT_FALSE(diag.hasErrors()) << diag.renderAll();
  return s;
}

// Lowers `text` at `nw` warps (test layouts, or `layouts` when given), runs it on the thread
// executor and tl-scalar, and compares every output. Returns the thread IR for structure checks.
std::unique_ptr<Function> checkAgainstScalar(const std::string& text, int nw,
                                             const std::vector<LaunchOverride>& overrides = {},
                                             const std::function<void(Function&)>& layouts = nullptr) {
  Source s = compileText(text, overrides);
  if (!s.fn) return nullptr;
  Memory ref = Memory::fromLaunch(s.launch);
  runScalar(*s.fn, s.launch, ref);
  auto block = cloneFunction(*s.fn);
  blockPipeline().run(*block);
  if (layouts) layouts(*block);
  else assignTestLayouts(*block, nw);
  EXPECT_EQ(verifyFunction(*block), "");
  auto t = lowerToThreadIR(*block);
  Memory got = Memory::fromLaunch(s.launch);
  try {
    runThreadIR(*t, s.launch, got);
  } catch (const RuntimeError& e) {
    ADD_FAILURE() << "line " << e.loc.line << ": " << e.what();
    return t;
  }
  for (const Buffer& r : ref.buffers()) {
    if (!r.output) continue;
    Comparison c = compareBuffers(r, *got.find(r.name));
    EXPECT_TRUE(c.pass) << r.name << " at num_warps " << nw << ": " << c.reason << " max abs err " << c.maxAbsErr
                        << " at element " << c.worstIndex << " (" << c.mismatches << " mismatches)";
  }
  return t;
}

const char* kReduce2D = R"(
@launch(BM=4, BN=64, grid=(1,), x_ptr=randn((BM, BN), seed=3),
        s0=zeros(BN, output=True), s1=zeros(BM, output=True), m0=zeros(BN, output=True),
        m1=zeros(BM, output=True), i0=zeros(BN, dtype=i32, output=True), i1=zeros(BM, dtype=i32, output=True),
        h0=zeros(BN, dtype=f16, output=True), total=zeros(2, output=True))
@jit
def reduce2d(x_ptr, s0, s1, m0, m1, i0, i1, h0, total, BM: constexpr, BN: constexpr):
    rows = arange(0, BM)
    cols = arange(0, BN)
    x = load(x_ptr + rows[:, None] * BN + cols[None, :])
    store(s0 + cols, sum(x, axis=0))
    store(s1 + rows, sum(x, axis=1))
    store(m0 + cols, max(x, axis=0))
    store(m1 + rows, min(x, axis=1))
    store(i0 + cols, sum((x * 100.0).to(i32), axis=0))
    store(i1 + rows, sum((x * 100.0).to(i32), axis=1))
    store(h0 + cols, sum(x.to(f16), axis=0))
    store(total, sum(sum(x, axis=1), axis=0))
    store(total + 1, max(max(x, axis=0), axis=0))
)";

// Shapes with lanes and warps along either axis, tiles smaller than the block (wrap-around),
// and a 1-row tile.
class Reduce2D : public ::testing::TestWithParam<std::tuple<int, int, int>> {};

TEST_P(Reduce2D, MatchesScalar) {
  auto [bm, bn, nw] = GetParam();
  checkAgainstScalar(kReduce2D, nw, {{"BM", std::to_string(bm)}, {"BN", std::to_string(bn)}});
}

INSTANTIATE_TEST_SUITE_P(Shapes, Reduce2D,
                         ::testing::Combine(::testing::Values(1, 2, 4, 64), ::testing::Values(4, 64), ::testing::Values(1, 2, 4, 8)),
                         [](const auto& info) {
                           return std::to_string(std::get<0>(info.param)) + "x" + std::to_string(std::get<1>(info.param)) +
                                  "_w" + std::to_string(std::get<2>(info.param));
                         });

const char* kArgmax = R"(
@launch(BM=8, BN=32, grid=(1,), x_ptr=randn((BM, BN), seed=5),
        a0=zeros(BN, dtype=i32, output=True), a1=zeros(BM, dtype=i32, output=True),
        t0=zeros(BN, dtype=i32, output=True), t1=zeros(BM, dtype=i32, output=True),
        n0=zeros(BN, dtype=i32, output=True), n1=zeros(BM, dtype=i32, output=True),
        k1=zeros(BM, dtype=i32, output=True), flat=zeros(1, dtype=i32, output=True))
@jit
def argmaxes(x_ptr, a0, a1, t0, t1, n0, n1, k1, flat, BM: constexpr, BN: constexpr):
    rows = arange(0, BM)
    cols = arange(0, BN)
    x = load(x_ptr + rows[:, None] * BN + cols[None, :])
    store(a0 + cols, argmax(x, axis=0))
    store(a1 + rows, argmax(x, axis=1))
    t = where(x > 0.3, 0.3, x)                    # many equal maxima: the first index wins
    store(t0 + cols, argmax(t, axis=0))
    store(t1 + rows, argmax(t, axis=1))
    n = where(x > 1.0, sqrt(x - 10.0), x)        # NaNs: the first NaN wins
    store(n0 + cols, argmax(n, axis=0))
    store(n1 + rows, argmax(n, axis=1))
    store(k1 + rows, argmax((x * 4.0).to(i32), axis=1))
    store(flat, argmax(sum(x, axis=1), axis=0))
)";

TEST(LowerArgmax, TiesAndNaNsMatchScalar) {
  for (int nw : {1, 2, 4, 8})
    for (auto [bm, bn] : {std::pair{8, 32}, std::pair{64, 4}, std::pair{2, 128}}) {
      SCOPED_TRACE(std::to_string(bm) + "x" + std::to_string(bn) + " w" + std::to_string(nw));
      auto t = checkAgainstScalar(kArgmax, nw, {{"BM", std::to_string(bm)}, {"BN", std::to_string(bn)}});
      ASSERT_TRUE(t);
      walk(t->body, [](Op& op) {  // argmax combines with cmp/select; only the sum uses reg_reduce
        if (op.kind == OpKind::RegReduce) {
          EXPECT_EQ(op.strAttr("kind"), "sum");
        }
      });
    }
}

const char* kIf = R"(
@launch(BLOCK=64, flag=1, grid=(2,), x_ptr=randn(128, seed=2), out_ptr=zeros(128, output=True))
@jit
def branchy(x_ptr, out_ptr, flag, BLOCK: constexpr):
    offs = program_id(0) * BLOCK + arange(0, BLOCK)
    x = load(x_ptr + offs)
    if flag > 0:
        x = x * 2.0
    else:
        x = x + 1.0
    s = 0.0
    if flag > 0:
        s = sum(x, axis=0)
    store(out_ptr + offs, x + s)
)";

TEST(LowerControl, IfWithCarriedTiles) {
  for (int nw : {1, 4})
    for (const char* flag : {"1", "0"}) {
      auto t = checkAgainstScalar(kIf, nw, {{"flag", flag}});
      ASSERT_TRUE(t);
      EXPECT_EQ(countOps(*t, OpKind::If), 2);
    }
}

// vector_add with 4 elements per thread and vec = 4 on every access: 16-byte accesses.
TEST(LowerMemory, VectorAccesses) {
  std::string text = R"(
@launch(N=1000, BLOCK=1024, grid=(cdiv(N, BLOCK),), x_ptr=randn(N, seed=1), y_ptr=randn(N, seed=2),
        out_ptr=zeros(N, output=True))
@jit
def vector_add(x_ptr, y_ptr, out_ptr, N, BLOCK: constexpr):
    offs = program_id(0) * BLOCK + arange(0, BLOCK)
    mask = offs < N
    store(out_ptr + offs, load(x_ptr + offs, mask=mask) + load(y_ptr + offs, mask=mask), mask=mask)
)";
  auto vec4 = [](Function& fn) {
    TestLayouts(4).run(fn);
    LayoutPtr l = defaultBlockedLayout({1024}, 4, 4);
    walk(fn.body, [&](Op& op) {
      for (auto& r : op.results)
        if (r->type.isTile()) r->type = r->type.withLayout(l);
      if (op.kind == OpKind::Load || op.kind == OpKind::Store) op.setAttr("vec", int64_t(4));
    });
  };
  auto t = checkAgainstScalar(text, 4, {}, vec4);
  ASSERT_TRUE(t);
  int vecAccesses = 0;
  walk(t->body, [&](Op& op) {
    if (op.kind == OpKind::LdGlobal || op.kind == OpKind::StGlobal) {
      EXPECT_EQ(op.intAttr("vec"), 4);
      EXPECT_EQ(op.operand(0)->type.str(), "<8xptr<f32>>");
      ++vecAccesses;
    }
  });
  EXPECT_EQ(vecAccesses, 3);
}

std::unique_ptr<Function> vectorAddWithVec(int64_t vec) {
  auto k = compileTestKernel("vector_add");
  assignTestLayouts(*k->ir, 4);  // spt = 1: one element per register run
  walk(k->ir->body, [&](Op& op) {
    if (op.kind == OpKind::Load) op.setAttr("vec", vec);
  });
  return std::move(k->ir);
}

TEST(LowerMemory, VecWiderThanTheLayoutIsAnError) {
  auto fn = vectorAddWithVec(4);
  try {
    lowerToThreadIR(*fn);
    FAIL() << "expected an IRError";
  } catch (const IRError& e) {
    EXPECT_NE(std::string(e.what()).find("vec = 4 exceeds the 1 consecutive elements"), std::string::npos) << e.what();
    EXPECT_GT(e.loc.line, 0u);
  }
  EXPECT_THROW(lowerToThreadIR(*vectorAddWithVec(3)), IRError);
}

TEST(LowerConvert, PointerTilesCannotChangeLayout) {
  Function fn;
  fn.name = "k";
  fn.numWarps = 1;
  fn.params.push_back(Param{"p", Param::Kind::Pointer, Loc{1, 1}});
  Value* p = fn.body.addArg(Type::ptr(DType::F32), "p");
  Builder b(&fn.body);
  b.setLoc(Loc{2, 3});
  LayoutPtr rowsL = Layout::blocked({1, 1}, {1, 32}, {1, 1}, {1, 0}), colsL = Layout::blocked({1, 1}, {32, 1}, {1, 1}, {0, 1});
  Value* tile = b.create(OpKind::Splat, {p}, {Type::ptr(DType::F32).withShape({32, 32}).withLayout(rowsL)})->result();
  Value* moved = b.create(OpKind::ConvertLayout, {tile}, {tile->type.withLayout(colsL)})->result();
  b.load(moved);
  b.ret();
  ASSERT_EQ(verifyFunction(fn), "");
  try {
    lowerToThreadIR(fn);
    FAIL() << "expected an IRError";
  } catch (const IRError& e) {
    EXPECT_NE(std::string(e.what()).find("pointer tile"), std::string::npos) << e.what();
    EXPECT_EQ(e.loc.line, 2u);
  }
}

// transpose with test layouts moves tiles between layouts: convert_layout through shared
// memory, with replicas masked off (the race detector, on, would flag two writers).
TEST(LowerConvert, TransposeGoesThroughSharedMemory) {
  auto k = compileTestKernel("transpose");
  assignTestLayouts(*k->ir, 4);
  int converts = 0;
  walk(k->ir->body, [&](Op& op) { converts += op.kind == OpKind::ConvertLayout; });
  ASSERT_GT(converts, 0);
  SharedMemoryReport report;
  auto t = lowerToThreadIR(*k->ir, &report);
  EXPECT_GT(countOps(*t, OpKind::StShared), 0);
  // A barrier on each side of every buffer, less the last one: nothing after it touches shared
  // memory (dropTrailingBarriers).
  EXPECT_EQ(countOps(*t, OpKind::Barrier), 2 * static_cast<int>(report.buffers.size()) - 1);
  EXPECT_NE(t->body.ops[t->body.ops.size() - 2]->kind, OpKind::Barrier);
  EXPECT_GT(t->sharedBytes, 0);
}

// A tile moved through four layouts (default -> column pairs, replicated across warps like a
// small mma accumulator -> 8 x f16 per thread, replicated across lanes -> registers along the rows
// -> default): the exchanges move vectors where each thread's consecutive registers are
// consecutive in the buffer (2 and 8 elements: 4- and 16-byte accesses), single elements where
// they run down a column, and a group of replicas is masked as one (the executor's race
// detector would name two writers of one address); the result matches tl-scalar.
TEST(LowerConvert, ExchangesMoveVectors) {
  std::string text = R"(
@launch(R=8, C=64, grid=(1,), x_ptr=randn((R, C), dtype=f16, seed=1), out_ptr=zeros((R, C), dtype=f16, output=True))
@jit
def copy2d(x_ptr, out_ptr, R: constexpr, C: constexpr):
    offs = arange(0, R)[:, None] * C + arange(0, C)[None, :]
    store(out_ptr + offs, load(x_ptr + offs))
)";
  const LayoutPtr pairs = Layout::blocked({1, 2}, {8, 4}, {4, 1}, {1, 0});    // rows wrap: warps 1-3 replicate
  const LayoutPtr eights = Layout::blocked({1, 8}, {4, 8}, {1, 4}, {1, 0});   // columns wrap: replicas
  const LayoutPtr down = Layout::blocked({2, 1}, {4, 8}, {1, 4}, {0, 1});     // registers along the rows
  auto chain = [&](Function& fn) {
    assignTestLayouts(fn, 4);
    auto& ops = fn.body.ops;
    for (size_t i = 0; i < ops.size(); ++i) {
      if (ops[i]->kind != OpKind::Store) continue;
      Op& store = *ops[i];
      Value* v = store.operand(1);
      const LayoutPtr home = v->type.layout;
      Builder b;
      b.setInsertionPoint(&fn.body, i);
      b.setLoc(store.loc);
      for (const LayoutPtr& l : {pairs, eights, down, home}) v = b.create(OpKind::ConvertLayout, {v}, {v->type.withLayout(l)})->result();
      store.operands[1] = v;
      break;
    }
  };
  auto t = checkAgainstScalar(text, 4, {}, chain);
  ASSERT_TRUE(t);
  // The f16 exchanges, in order (the i32 offsets' converts come from the test layouts).
  std::vector<int64_t> stores, loads;
  bool maskedPairs = false;
  walk(t->body, [&](Op& op) {
    if (op.kind == OpKind::StShared && op.operand(1)->type.dtype == DType::F16) {
      stores.push_back(op.intAttr("vec"));
      if (stores.size() == 2) maskedPairs = op.numOperands() == 3;
    }
    if (op.kind == OpKind::LdShared && op.result()->type.dtype == DType::F16) loads.push_back(op.intAttr("vec"));
  });
  // eights -> down stores 8 x f16 per thread, or 4 where the row padding that keeps the column
  // reads of `down` conflict-free (4 elements) leaves only 8-byte alignment.
  ASSERT_EQ(stores.size(), 4u);
  EXPECT_EQ(stores[0], 1);
  EXPECT_EQ(stores[1], 2);
  EXPECT_TRUE(stores[2] == 8 || stores[2] == 4) << stores[2];
  EXPECT_EQ(stores[3], 1);
  EXPECT_TRUE(maskedPairs) << "the replicas of `pairs` must be masked off";
  EXPECT_EQ(loads, (std::vector<int64_t>{2, 8, 1, 1}));
}

// The issue's race test: drop the barrier between a reduction's st_shared and ld_shared.
TEST(LowerReduce, MissingBarrierIsARace) {
  auto k = compileTestKernel("softmax");
  assignTestLayouts(*k->ir, 4);
  auto t = lowerToThreadIR(*k->ir);
  auto& ops = t->body.ops;
  size_t st = 0;
  while (st < ops.size() && ops[st]->kind != OpKind::StShared) ++st;
  ASSERT_LT(st + 1, ops.size());
  ASSERT_EQ(ops[st + 1]->kind, OpKind::Barrier);
  ops.erase(ops.begin() + static_cast<std::ptrdiff_t>(st + 1));
  ASSERT_EQ(verifyFunction(*t), "");
  Memory mem = Memory::fromLaunch(k->launch);
  try {
    runThreadIR(*t, k->launch, mem);
    FAIL() << "expected a race";
  } catch (const RuntimeError& e) {
    EXPECT_NE(std::string(e.what()).find("race"), std::string::npos) << e.what();
    EXPECT_EQ(e.loc.line, 15u);  // x - max(x, axis=0)
  }
}

}  // namespace
}  // namespace tl::lowertest
