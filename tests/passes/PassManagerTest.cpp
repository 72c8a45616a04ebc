// The pass manager: order, print-after-all with "(unchanged)", verification after each pass
// (a broken pass is named), snapshots; and the standard pipeline on a softmax-like kernel.
#include <cmath>
#include <sstream>

#include "PassTestUtil.h"
#include "ir/Pass.h"
#include "ir/Printer.h"

namespace tl {
namespace {

using passtest::countOps;
using passtest::Kernel;

// out[pid] = (pid + 0) * 1, with a duplicate and a dead op: every pass has something to do.
void buildSmall(Kernel& k) {
  Value* out = k.ptrParam("out", DType::I32);
  Value* pid = k.b.programId(0);
  Value* x = k.b.binary(OpKind::Add, pid, k.i32(0));
  Value* two = k.b.binary(OpKind::Add, k.i32(1), k.i32(1));
  Value* y = k.b.binary(OpKind::Mul, x, two);
  Value* y2 = k.b.binary(OpKind::Mul, x, two);
  k.b.binary(OpKind::Sub, y, y2);  // unused
  k.b.store(k.b.addptr(out, y), y2);
  k.finish();
}

TEST(PassManager, BlockPipelineOrderAndSummaries) {
  PassManager pm = blockPipeline();
  std::vector<std::string> names;
  for (const Pass& p : pm.passes()) {
    names.push_back(p.name);
    EXPECT_FALSE(p.summary.empty());
    EXPECT_EQ(p.summary.find('\n'), std::string::npos);
  }
  EXPECT_EQ(names, (std::vector<std::string>{"canonicalize", "fold-constants", "pipeline-loads", "cse", "dce"}));
}

TEST(PassManager, PrintsAfterEachPassAndMarksUnchanged) {
  Kernel k;
  buildSmall(k);
  PassManager pm = blockPipeline();
  pm.add({"cse-again", "a second cse finds nothing", cse});
  std::ostringstream log;
  pm.setPrintAfterAll(&log);
  pm.run(k.fn);
  std::string s = log.str();
  for (const char* header : {"// ----- IR after canonicalize -----\n", "// ----- IR after fold-constants -----\n",
                             "// ----- IR after cse -----\n", "// ----- IR after dce -----\n",
                             "// ----- IR after cse-again (unchanged) -----\n"})
    EXPECT_NE(s.find(header), std::string::npos) << header << "\nin:\n" << s;
  // The unchanged pass prints its header only: it is the last line of the log.
  std::string last = "// ----- IR after cse-again (unchanged) -----\n";
  EXPECT_EQ(s.substr(s.size() - last.size()), last);
  // The log ends with the final IR just before that header.
  std::string finalIR = printFunction(k.fn);
  EXPECT_EQ(s.substr(s.size() - last.size() - finalIR.size(), finalIR.size()), finalIR);
}

TEST(PassManager, SnapshotsInputThenOnePerPass) {
  Kernel k;
  buildSmall(k);
  std::string input = printFunction(k.fn);
  PassManager pm = blockPipeline();
  pm.add({"nothing", "changes nothing", [](Function&) { return false; }});
  pm.setKeepSnapshots(true);
  pm.run(k.fn);
  const auto& snaps = pm.snapshots();
  ASSERT_EQ(snaps.size(), pm.passes().size() + 1);
  EXPECT_EQ(snaps[0].pass, "input");
  EXPECT_EQ(snaps[0].ir, input);
  for (size_t i = 0; i < pm.passes().size(); ++i) EXPECT_EQ(snaps[i + 1].pass, pm.passes()[i].name);
  // The small kernel has no loop: pipeline-loads (the third) changes nothing, the others do.
  for (size_t i = 1; i <= 5; ++i) EXPECT_EQ(snaps[i].changed, i != 3) << snaps[i].pass;
  EXPECT_FALSE(snaps.back().changed);
  EXPECT_EQ(snaps.back().ir, snaps[snaps.size() - 2].ir);
  EXPECT_EQ(snaps.back().ir, printFunction(k.fn));
  // Running again starts a fresh list.
  pm.run(k.fn);
  EXPECT_EQ(pm.snapshots().size(), pm.passes().size() + 1);
}

TEST(PassManager, ABrokenPassIsReportedByName) {
  Kernel k;
  buildSmall(k);
  PassManager pm;
  pm.add({"cse", "fine", cse});
  // Drops the return: the body no longer ends with its terminator.
  pm.add({"drop-return", "breaks the IR", [](Function& fn) {
            fn.body.ops.pop_back();
            return true;
          }});
  pm.add({"dce", "never reached", [](Function&) -> bool { ADD_FAILURE() << "ran after a broken pass"; return false; }});
  try {
    pm.run(k.fn);
    FAIL() << "expected an IRError";
  } catch (const IRError& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("'drop-return'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("return"), std::string::npos) << msg;
  }
}

TEST(PassManager, APassThatThrowsIsReportedByName) {
  Kernel k;
  buildSmall(k);
  PassManager pm;
  pm.add({"thrower", "throws", [](Function& fn) -> bool { throw IRError(fn.loc, "boom"); }});
  try {
    pm.run(k.fn);
    FAIL() << "expected an IRError";
  } catch (const IRError& e) {
    EXPECT_NE(std::string(e.what()).find("pass 'thrower' failed: boom"), std::string::npos) << e.what();
  }
}

TEST(PassManager, PipelineSimplifiesTheSmallKernel) {
  Kernel k;
  buildSmall(k);
  blockPipeline().run(k.fn);
  EXPECT_VERIFIES(k.fn);
  // program_id, constant 2, mul, addptr, store, return
  EXPECT_EQ(passtest::countAllOps(k.fn), 6u);
  EXPECT_EQ(countOps(k.fn, OpKind::Add), 0u);
  EXPECT_EQ(countOps(k.fn, OpKind::Mul), 1u);
}

// A softmax row kernel as the front end would build it, with its redundancies: the offsets
// and mask are computed twice (load and store) and splats of constants appear.
TEST(PassManager, PipelineOnSoftmax) {
  Kernel k;
  Value* x = k.ptrParam("x_ptr");
  Value* out = k.ptrParam("out_ptr");
  Value* n = k.scalarParam("N");
  Value* stride = k.scalarParam("stride");
  auto offsets = [&](Value* base) {
    Value* row = k.b.programId(0);
    Value* cols = k.b.arange(0, 1024);
    Value* rowOff = k.b.binary(OpKind::Mul, row, stride);
    Value* ptrs = k.b.addptr(k.b.splat(k.b.addptr(base, rowOff), {1024}), cols);
    Value* mask = k.b.cmp("lt", cols, k.b.splat(n, {1024}));
    return std::pair{ptrs, mask};
  };
  auto [inPtrs, inMask] = offsets(x);
  Value* v = k.b.load(inPtrs, inMask, k.b.splat(k.f32(-INFINITY), {1024}));
  Value* mx = k.b.reduce("max", v, 0);
  Value* shifted = k.b.binary(OpKind::Sub, v, k.b.splat(mx, {1024}));
  Value* num = k.b.unary(OpKind::Exp, shifted);
  Value* den = k.b.reduce("sum", num, 0);
  Value* res = k.b.binary(OpKind::Div, num, k.b.splat(den, {1024}));
  res = k.b.binary(OpKind::Mul, res, k.b.splat(k.f32(1.0), {1024}));  // a no-op scale
  k.b.load(inPtrs);                                                  // an unused load
  auto [outPtrs, outMask] = offsets(out);
  k.b.store(outPtrs, res, outMask);
  k.finish();
  size_t before = passtest::countAllOps(k.fn);

  PassManager pm = blockPipeline();
  pm.setKeepSnapshots(true);
  pm.run(k.fn);
  EXPECT_VERIFIES(k.fn);
  EXPECT_LT(passtest::countAllOps(k.fn), before);
  EXPECT_EQ(countOps(k.fn, OpKind::ProgramId), 1u);
  EXPECT_EQ(countOps(k.fn, OpKind::Arange), 1u);
  EXPECT_EQ(countOps(k.fn, OpKind::Cmp), 1u);
  EXPECT_EQ(countOps(k.fn, OpKind::Load), 1u);
  EXPECT_EQ(countOps(k.fn, OpKind::Mul), 1u);  // row * stride; the * 1.0 is gone
  // The -inf splat became one tile constant.
  // Splats left: the two row pointers, N (merged), max and sum.
  EXPECT_EQ(countOps(k.fn, OpKind::Splat), 5u);
  // A second run of the pipeline finds nothing left to do on this kernel (docs/passes.md,
  // "Why run once").
  PassManager again = blockPipeline();
  again.setKeepSnapshots(true);
  again.run(k.fn);
  for (size_t i = 1; i < again.snapshots().size(); ++i)
    EXPECT_FALSE(again.snapshots()[i].changed) << again.snapshots()[i].pass;
}

}  // namespace
}  // namespace tl
