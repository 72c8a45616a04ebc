// Compiler hints feeding the axis analysis (stages/thread/AxisAnalysis.cpp): tl.multiple_of and
// tl.max_contiguous on offsets whose base is only known at run time turn scalar loads and stores
// into vector ones (tests/thread/kernels/hint_copy.tl); the result is right on every engine; a
// hint that lies is reported by the executor at the access (never wrong data); the hint
// attributes survive printing and parsing, canonicalize (moved to the value's new op) and CSE
// (two ops with different hints are not merged); max_constancy raises constancy.
#include <gtest/gtest.h>

#include <string>

#include "ir/Parser.h"
#include "ir/Printer.h"
#include "ir/Verifier.h"
#include "new_ops_util.h"
#include "ir/Diagnostics.h"
#include "thread/Layouts.h"

namespace tl {
namespace {

using newops::compileNewOpsKernel;

std::vector<LaunchOverride> sets(int hint, int base, int n = 1024) {
  return {{"HINT", std::to_string(hint)}, {"BASE", std::to_string(base)}, {"N", std::to_string(n)}};
}

// The `vec` of every ld_global / st_global of the thread IR.
std::vector<int64_t> vecs(const Function& fn) {
  std::vector<int64_t> out;
  walk(fn.body, [&](Op& op) {
    if (op.kind == OpKind::LdGlobal || op.kind == OpKind::StGlobal)
      out.push_back(op.attr("vec") ? op.intAttr("vec") : 1);
  });
  return out;
}

// y = x + 1 on [base, base + n), 0 elsewhere (x[j] = j).
void expectCopied(const Memory& m, int base, int n, const std::string& engine) {
  const Buffer& y = *m.find("y_ptr");
  for (int j = 0; j < n + 2 * 256; ++j) {
    const float want = j >= base && j < base + n ? float(j) + 1.0f : 0.0f;
    ASSERT_EQ(y.getF(size_t(j)), want) << engine << " at " << j;
  }
}

TEST(AxisHints, MultipleOfAndMaxContiguousWidenTheVectors) {
  for (int nw : {1, 2, 4, 8}) {
    auto plain = compileNewOpsKernel("hint_copy", sets(0, 0));
    auto hinted = compileNewOpsKernel("hint_copy", sets(1, 0));
    ASSERT_TRUE(plain && hinted);
    ThreadCompilation p = compileToThreadIR(*plain->ir, plain->launch, nw);
    ThreadCompilation h = compileToThreadIR(*hinted->ir, hinted->launch, nw);
    // Without the hint base + i has contiguity 256 but divisibility 1: one element per access.
    EXPECT_EQ(vecs(*p.threadIR), (std::vector<int64_t>{1, 1, 1})) << nw;  // base, x, y
    // With it: runs of 256 starting at multiples of 256, so 16 bytes (4 x f32) per access.
    // (The tile of 256 gives each thread 256 / (32 x nw) elements: 8 warps hold 1 each.)
    const int64_t want = std::min<int64_t>(4, 256 / (32 * nw));
    EXPECT_EQ(vecs(*h.threadIR), (std::vector<int64_t>{1, want, want})) << nw << "\n" << printFunction(*h.withLayouts);
  }
  auto hinted = compileNewOpsKernel("hint_copy", sets(1, 0));
  ASSERT_TRUE(hinted);
  auto opt = cloneFunction(*hinted->ir);
  blockPipeline().run(*opt);
  auto axes = analyzeAxes(*opt, paramHintsFromLaunch(hinted->launch));
  bool found = false;
  walk(opt->body, [&](Op& op) {
    if (op.kind != OpKind::Load || op.operand(0)->type.isScalar()) return;
    found = true;
    EXPECT_EQ(axes.at(op.operand(0)).str(), "contiguity=[256] divisibility=[256] constancy=[1]");  // bytes: the buffer's 256
  });
  EXPECT_TRUE(found);
}

// A hint that holds (base a multiple of BLOCK) gives the same data on every engine, at several
// sizes (a partial last block included).
TEST(AxisHints, HintedCopyIsRightOnEveryEngine) {
  for (int base : {0, 256, 512})
    for (int n : {1024, 300}) {
      newops::forEachEngine("hint_copy", sets(1, base, n), nullptr,
                            [&](const Memory& m, const std::string& engine) { expectCopied(m, base, n, engine); });
    }
}

// A hint that lies (base = 1: not a multiple of 256, and every group of 4 misaligned): tl-scalar
// ignores hints and is right; the executor stops at the first misaligned vector access with a
// located error naming the addresses, before any load or store of it happened.
TEST(AxisHints, ALyingHintIsReportedNotRead) {
  auto k = compileNewOpsKernel("hint_copy", sets(1, 1));
  ASSERT_TRUE(k);
  Memory s = Memory::fromLaunch(k->launch);
  runScalar(*k->ir, k->launch, s);
  expectCopied(s, 1, 1024, "tl-scalar");
  ThreadCompilation tc = compileToThreadIR(*k->ir, k->launch, 1);
  Memory t = Memory::fromLaunch(k->launch);
  try {
    runThreadIR(*tc.threadIR, k->launch, t);
    FAIL() << "a misaligned vector load ran";
  } catch (const RuntimeError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("misaligned vector access"), std::string::npos) << what;
    EXPECT_NE(what.find("ld_global of 4 x f32"), std::string::npos) << what;
    EXPECT_EQ(e.loc.line, 21u) << what;  // x = tl.load(x_ptr + offs, mask=m)
  }
  // Nothing was stored.
  const Buffer& y = *t.find("y_ptr");
  for (size_t j = 0; j < 1024 + 512; ++j) ASSERT_EQ(y.getF(j), 0.0) << j;
}

std::unique_ptr<Function> parse(const std::string& text) {
  DiagEngine diag;
  auto fn = parseFunction(text, diag);
  EXPECT_TRUE(fn) << diag.renderAll();
  if (fn) EXPECT_EQ(verifyFunction(*fn), "");
  return fn;
}

int count(const Function& fn, OpKind kind) {
  int n = 0;
  walk(fn.body, [&](Op& op) { n += op.kind == kind; });
  return n;
}

TEST(AxisHints, AttributesSurviveTheTextFormAndThePasses) {
  // The front end's IR prints the hints; the text parses back to the same text.
  auto k = compileNewOpsKernel("hint_copy", sets(1, 0));
  ASSERT_TRUE(k);
  const std::string text = printFunction(*k->ir);
  EXPECT_NE(text.find("multiple_of = [256]"), std::string::npos) << text;
  EXPECT_NE(text.find("max_contiguous = [256]"), std::string::npos) << text;
  auto back = parse(text);
  ASSERT_TRUE(back);
  EXPECT_EQ(printFunction(*back), text);
  // The block pipeline keeps them.
  blockPipeline().run(*back);
  EXPECT_NE(printFunction(*back).find("max_contiguous = [256]"), std::string::npos) << printFunction(*back);

  // CSE: the same add with and without a hint are two values.
  auto f = parse(
      "func @k(%p: ptr<i32>) {\n"
      "  %a = arange {start = 0, end = 64} : <64xi32>\n"
      "  %s = splat %p : <64xptr<i32>>\n"
      "  %q = addptr %s, %a : <64xptr<i32>>\n"
      "  %x = load %q : <64xi32>\n"
      "  %y = add %x, %a {multiple_of = [16]} : <64xi32>\n"
      "  %z = add %x, %a : <64xi32>\n"
      "  %w = add %y, %z : <64xi32>\n"
      "  store %q, %w\n"
      "  return\n"
      "}\n");
  ASSERT_TRUE(f);
  cse(*f);
  EXPECT_EQ(count(*f, OpKind::Add), 3) << printFunction(*f);

  // canonicalize: x + 0 with a hint becomes x, and x's op takes the hint.
  auto g = parse(
      "func @k(%p: ptr<i32>) {\n"
      "  %a = arange {start = 0, end = 64} : <64xi32>\n"
      "  %s = splat %p : <64xptr<i32>>\n"
      "  %q = addptr %s, %a : <64xptr<i32>>\n"
      "  %x = load %q : <64xi32>\n"
      "  %zero = constant {value = 0} : <64xi32>\n"
      "  %y = add %x, %zero {max_contiguous = [8], max_constancy = [2]} : <64xi32>\n"
      "  %r = addptr %s, %y : <64xptr<i32>>\n"
      "  store %r, %a\n"
      "  return\n"
      "}\n");
  ASSERT_TRUE(g);
  canonicalize(*g);
  const std::string gt = printFunction(*g);
  EXPECT_EQ(count(*g, OpKind::Add), 0) << gt;
  EXPECT_NE(gt.find("load %q {max_contiguous = [8], max_constancy = [2]}"), std::string::npos) << gt;
  auto axes = analyzeAxes(*g);
  walk(g->body, [&](Op& op) {
    if (op.kind == OpKind::Load) EXPECT_EQ(axes.at(op.result()).str(), "contiguity=[8] divisibility=[1] constancy=[2]");
  });

  // ... but a hinted x + 0 whose x is a parameter has no op to take the hint: it stays.
  auto h = parse(
      "func @k(%p: ptr<i32>, %n: i32) {\n"
      "  %zero = constant {value = 0} : i32\n"
      "  %y = add %n, %zero {multiple_of = [16]} : i32\n"
      "  %q = addptr %p, %y : ptr<i32>\n"
      "  store %q, %n\n"
      "  return\n"
      "}\n");
  ASSERT_TRUE(h);
  canonicalize(*h);
  EXPECT_EQ(count(*h, OpKind::Add), 1) << printFunction(*h);
  auto hx = analyzeAxes(*h);
  walk(h->body, [&](Op& op) {
    if (op.kind == OpKind::Add) EXPECT_EQ(hx.at(op.result()).str(), "contiguity=[1] divisibility=[16] constancy=[1]");
  });
}

// A hint never lowers what was proved; values that are not powers of two count as the largest
// power of two dividing them (multiple_of(x, 24) is a multiple of 8).
TEST(AxisHints, HintsOnlyRaiseAndRoundToPowersOfTwo) {
  auto f = parse(
      "func @k(%p: ptr<i32>) {\n"
      "  %a = arange {start = 0, end = 64} : <64xi32>\n"
      "  %b = arange {start = 4, end = 68, multiple_of = [24], max_contiguous = [2], max_constancy = [12]} : <64xi32>\n"
      "  %s = splat %p : <64xptr<i32>>\n"
      "  %q = addptr %s, %b : <64xptr<i32>>\n"
      "  store %q, %a\n"
      "  return\n"
      "}\n");
  ASSERT_TRUE(f);
  auto axes = analyzeAxes(*f);
  std::vector<std::string> got;
  walk(f->body, [&](Op& op) {
    if (op.kind == OpKind::Arange) got.push_back(axes.at(op.result()).str());
  });
  ASSERT_EQ(got.size(), 2u);
  // start 4: divisibility 4 proved, the hint's 24 counts as 8 (raised); contiguity 64 proved
  // beats the hint's 2; constancy 1 proved, the hint's 12 counts as 4.
  EXPECT_EQ(got[0], "contiguity=[64] divisibility=[1073741824] constancy=[1]");
  EXPECT_EQ(got[1], "contiguity=[64] divisibility=[8] constancy=[4]");
}

}  // namespace
}  // namespace tl
