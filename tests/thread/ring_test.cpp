// Load rings (stages/thread/LowerRing.cpp; ThreadOps.def cp_async, cp_async_commit,
// cp_async_wait; lib/ir/PipelineLoads.cpp issuing a dot operand's loads num_stages - 1
// iterations ahead):
//   - tests/thread/kernels/ring_dot.tl on the thread executor, f16 and bf16, mma.sync and wgmma,
//     num_stages 2, 3 and 4, against a C++ reference (products of the exact inputs summed in
//     double): ragged M, N and K (masked groups copy zeros), fewer iterations than the ring is
//     ahead, k-major b, 4 and 8 warps;
//   - the thread IR: cp_async into a ring buffer of num_stages (or + 1) slots, no st_shared
//     staging of the dot's operands, a wgmma left in flight (wait 1) across iterations;
//   - what the executor catches: a pipeline that waits too little reads bytes a copy has not
//     landed; the verifier's rules for cp_async.
#include <gtest/gtest.h>

#include <functional>

#include "ir/Parser.h"
#include "ir/Printer.h"
#include "ir/Verifier.h"
#include "rank3_util.h"
#include "thread/Layouts.h"

namespace tl {
namespace {

using S = std::vector<LaunchOverride>;

struct Compiled {
  std::unique_ptr<CompiledKernel> kernel;
  ThreadCompilation tc;
};

Compiled compileRing(const S& sets, int warps, bool wgmma) {
  std::ostringstream err;
  Compiled c;
  c.kernel = compileKernelFile(rank3::kernelFile("ring_dot"), sets, err);
  EXPECT_TRUE(c.kernel) << err.str();
  if (!c.kernel) return c;
  ThreadCompileOptions opts;
  opts.numWarps = warps;
  opts.wgmma = wgmma;
  c.tc = compileToThreadIR(*c.kernel->ir, c.kernel->launch, opts);
  return c;
}

int64_t count(const Function& fn, OpKind kind) {
  int64_t n = 0;
  walk(fn.body, [&](Op& op) { n += op.kind == kind; });
  return n;
}

// Runs the thread IR and compares c with the reference; returns the number of bad elements.
int64_t runAgainstReference(const Function& thread, const CompiledKernel& k) {
  Memory m = Memory::fromLaunch(k.launch);
  const int64_t M = rank3::launchInt(k.launch, "M"), N = rank3::launchInt(k.launch, "N"), K = rank3::launchInt(k.launch, "K");
  const bool bt = rank3::launchInt(k.launch, "BT") != 0;
  std::vector<double> want(size_t(M * N));
  const Buffer *a = m.find("a_ptr"), *b = m.find("b_ptr");
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      double s = 0;
      for (int64_t kk = 0; kk < K; ++kk) s += a->getF(i * K + kk) * b->getF(bt ? j * K + kk : kk * N + j);
      want[size_t(i * N + j)] = s;
    }
  ExecOptions opts;
  opts.detectRaces = true;
  runThreadIR(thread, k.launch, m, opts);
  const Buffer* c = m.find("c_ptr");
  int64_t bad = 0;
  for (int64_t i = 0; i < M * N; ++i) bad += !(std::fabs(c->getF(i) - want[size_t(i)]) <= 1e-3 + 1e-4 * std::fabs(want[size_t(i)]));
  return bad;
}

std::string dtypeSets(const char* d, bool bt) {
  return std::string("randn(") + (bt ? "(N, K)" : "(K, N)") + ", dtype=" + d + ", seed=22)";
}

// One configuration: compiled, checked to use the ring (cp_async, a ring buffer of `slots`
// slots, no staging stores), and run against the reference.
void runRing(const char* dtype, S sets, int warps, bool wgmma, int64_t slots) {
  bool bt = false;
  for (const LaunchOverride& o : sets) bt = bt || (o.name == "BT" && o.expr == "1");
  sets.push_back({"a_ptr", std::string("randn((M, K), dtype=") + dtype + ", seed=21)"});
  sets.push_back({"b_ptr", dtypeSets(dtype, bt)});
  std::string what = std::string(dtype) + (wgmma ? " wgmma" : " mma.sync");
  for (const LaunchOverride& o : sets) what += " " + o.name + "=" + o.expr;
  SCOPED_TRACE(what);
  Compiled c = compileRing(sets, warps, wgmma);
  ASSERT_TRUE(c.kernel);
  const Function& fn = *c.tc.threadIR;
  EXPECT_GT(count(fn, OpKind::CpAsync), 0) << printFunction(fn);
  EXPECT_EQ(count(fn, OpKind::Wgmma) > 0, wgmma) << explainDots(*c.tc.blockIR, warps, wgmma);
  int rings = 0;
  for (const SharedBuffer& b : c.tc.shared.buffers) {
    EXPECT_NE(b.purpose.rfind("dot operand", 0), 0u) << "a dot operand staged through registers: " << c.tc.shared.str();
    if (b.purpose.rfind("ring of " + std::to_string(slots) + " slots", 0) == 0) ++rings;
    if (wgmma) {
      EXPECT_EQ(b.offset % 1024, 0) << c.tc.shared.str();
    }
  }
  EXPECT_EQ(rings, 2) << c.tc.shared.str();
  EXPECT_EQ(runAgainstReference(fn, *c.kernel), 0);
}

TEST(Ring, MmaSyncAtEveryDepth) {
  for (const char* d : {"f16", "bf16"})
    for (int stages : {2, 3, 4}) runRing(d, {{"num_stages", std::to_string(stages)}}, 4, false, stages);
}

TEST(Ring, WgmmaAtEveryDepthLeavesOneGroupInFlight) {
  for (const char* d : {"f16", "bf16"})
    for (int stages : {2, 3, 4}) runRing(d, {{"num_stages", std::to_string(stages)}}, 4, true, stages + 1);
  Compiled c = compileRing({{"num_stages", "3"}}, 4, true);
  const std::string ir = printFunction(*c.tc.threadIR);
  std::vector<int64_t> pending;  // in the loop, on the wgmma's registers; after it, on the loop's result
  walk(c.tc.threadIR->body, [&](Op& op) {
    if (op.kind != OpKind::WgmmaWait) return;
    pending.push_back(op.intAttr("pending"));
    EXPECT_EQ(op.numOperands(), 1u) << ir;
    if (op.numOperands() == 1 && !op.operand(0)->isRegionArg())
      EXPECT_EQ(op.operand(0)->def->kind, pending.back() == 1 ? OpKind::Wgmma : OpKind::For) << ir;
  });
  EXPECT_EQ(pending, (std::vector<int64_t>{1, 0})) << ir;
  EXPECT_NE(ir.find("cp_async_wait {pending = 2}"), std::string::npos) << ir;  // L - 1 = 1 iteration, 2 rings
}

TEST(Ring, RaggedShortAndKMajor) {
  for (bool wgmma : {false, true}) {
    const int64_t extra = wgmma ? 1 : 0;
    runRing("bf16", {{"M", "100"}, {"N", "90"}, {"K", "70"}, {"num_stages", "3"}}, 4, wgmma, 3 + extra);
    runRing("f16", {{"K", "32"}, {"num_stages", "4"}}, 4, wgmma, 4 + extra);  // one iteration, 3 ahead
    runRing("f16", {{"K", "16"}, {"BK", "16"}, {"num_stages", "2"}}, 4, wgmma, 2 + extra);
    runRing("bf16", {{"BT", "1"}, {"K", "160"}, {"BK", "64"}, {"num_stages", "3"}}, 4, wgmma, 3 + extra);
    runRing("bf16", {{"M", "256"}, {"N", "128"}, {"K", "192"}, {"BM", "128"}, {"BN", "128"}, {"BK", "64"}, {"num_stages", "3"}}, 8,
            wgmma, 3 + extra);
  }
}

// Loads that do not feed a dot directly (mma_dot converts them first) stay in registers.
TEST(Ring, OnlyLoadsThatFeedADotAreCopied) {
  std::ostringstream err;
  auto k = compileKernelFile(rank3::kernelFile("mma_dot"), {{"MODE", "1"}, {"num_stages", "3"}}, err);
  ASSERT_TRUE(k) << err.str();
  ThreadCompilation tc = compileToThreadIR(*k->ir, k->launch, ThreadCompileOptions{4, false, nullptr, false});
  EXPECT_EQ(count(*tc.threadIR, OpKind::CpAsync), 0);
  Compiled one = compileRing({{"num_stages", "1"}}, 4, false);  // not pipelined: no ring either
  EXPECT_EQ(count(*one.tc.threadIR, OpKind::CpAsync), 0);
}

void dropAll(Function& fn, OpKind kind) {
  std::function<void(Region&)> drop = [&](Region& r) {
    std::erase_if(r.ops, [&](const std::unique_ptr<Op>& op) { return op->kind == kind; });
    for (auto& op : r.ops)
      for (auto& sub : op->regions) drop(*sub);
  };
  drop(fn.body);
}

std::string runError(const Function& fn, const CompiledKernel& k) {
  Memory m = Memory::fromLaunch(k.launch);
  try {
    runThreadIR(fn, k.launch, m);
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

// A pipeline that waits too little: the dot reads bytes whose copy has not landed.
TEST(Ring, ReadingBeforeTheCopyLandsIsAnError) {
  for (bool wgmma : {false, true}) {
    Compiled c = compileRing({{"num_stages", "3"}}, 4, wgmma);
    ASSERT_TRUE(c.kernel);
    EXPECT_EQ(runError(*c.tc.threadIR, *c.kernel), "");
    auto noWait = cloneFunction(*c.tc.threadIR);
    dropAll(*noWait, OpKind::CpAsyncWait);
    const std::string e = runError(*noWait, *c.kernel);
    EXPECT_NE(e.find("that a cp_async has not finished writing"), std::string::npos) << e;
    // Waiting for one group fewer than the loop needs: the second ring's copy is still out.
    auto tooFew = cloneFunction(*c.tc.threadIR);
    walk(tooFew->body, [](Op& op) {
      if (op.kind == OpKind::CpAsyncWait && op.intAttr("pending") == 2) op.setAttr("pending", int64_t(3));
    });
    const std::string e2 = runError(*tooFew, *c.kernel);
    EXPECT_NE(e2.find("has not finished writing"), std::string::npos) << e2;
    // No commit: the copies never form a group, and the warps return with them in flight.
    auto noCommit = cloneFunction(*c.tc.threadIR);
    dropAll(*noCommit, OpKind::CpAsyncCommit);
    const std::string e3 = runError(*noCommit, *c.kernel);
    EXPECT_NE(e3.find("cp_async"), std::string::npos) << e3;
  }
}

TEST(Ring, ThreadIrRoundTripsAndTheVerifierChecksCpAsync) {
  Compiled c = compileRing({{"num_stages", "3"}}, 4, true);
  ASSERT_TRUE(c.kernel);
  EXPECT_EQ(verifyFunction(*c.tc.threadIR), "");
  const std::string text = printFunction(*c.tc.threadIR);
  DiagEngine diag;
  auto parsed = parseFunction(text, diag);
  ASSERT_TRUE(parsed) << diag.renderAll();
  EXPECT_EQ(printFunction(*parsed), text);
  Op* cp = nullptr;
  walk(parsed->body, [&](Op& op) { if (op.kind == OpKind::CpAsync && !cp) cp = &op; });
  ASSERT_TRUE(cp);
  cp->setAttr("vec", int64_t(1));  // 2 bytes: not a cp.async size
  EXPECT_NE(verifyFunction(*parsed).find("must be 4, 8 or 16"), std::string::npos) << verifyFunction(*parsed);
}

}  // namespace
}  // namespace tl
