// The axis analysis (stages/thread/AxisAnalysis.cpp), rule by rule, on small functions written
// as IR text, plus the claims it makes on the kernels of kernels/.
#include <gtest/gtest.h>

#include <string>

#include "ir/Parser.h"
#include "layout_test_util.h"
#include "thread/Layouts.h"
#include "thread/OwnershipMap.h"

using namespace tl;
using namespace tl::layout_test;

namespace {

struct Analyzed {
  std::unique_ptr<Function> fn;
  std::map<const Value*, AxisInfo> axes;
  std::string info(const std::string& name) const {
    const Value* v = findValueByName(*fn, name);
    if (!v) return "no value " + name;
    auto it = axes.find(v);
    return it == axes.end() ? "no info for " + name : it->second.str();
  }
};

Analyzed analyze(const std::string& body, const ParamHints& hints = {},
                 const std::string& params = "%p: ptr<f32>, %n: i32, %s: i32") {
  std::string text = "func @k(" + params + ") {\n" + body + "  return\n}\n";
  DiagEngine diag;
  Analyzed a;
  a.fn = parseFunction(text, diag);
  EXPECT_TRUE(a.fn) << diag.renderAll() << text;
  if (a.fn) a.axes = analyzeAxes(*a.fn, hints);
  return a;
}

}  // namespace

TEST(AxisAnalysis, ArangeConstantsAndParams) {
  auto a = analyze(
      "  %r = arange {start = 0, end = 128} : <128xi32>\n"
      "  %r8 = arange {start = 8, end = 24} : <16xi32>\n"
      "  %c = constant {value = 48} : <128xi32>\n"
      "  %z = constant {value = 0} : i32\n"
      "  %pid = program_id {axis = 0} : i32\n");
  EXPECT_EQ(a.info("r"), "contiguity=[128] divisibility=[1073741824] constancy=[1]");
  EXPECT_EQ(a.info("r8"), "contiguity=[16] divisibility=[8] constancy=[1]");
  EXPECT_EQ(a.info("c"), "contiguity=[1] divisibility=[16] constancy=[128] value=48");
  EXPECT_EQ(a.info("z"), "contiguity=[1] divisibility=[1073741824] constancy=[1] value=0");
  EXPECT_EQ(a.info("pid"), "contiguity=[1] divisibility=[1] constancy=[1]");
  EXPECT_EQ(a.info("p"), "contiguity=[1] divisibility=[256] constancy=[1]");  // buffers are 256-byte aligned
  EXPECT_EQ(a.info("n"), "contiguity=[1] divisibility=[1] constancy=[1]");    // unknown without hints
}

TEST(AxisAnalysis, HintsFromTheLaunch) {
  LaunchConfig launch;
  launch.scalars["N"] = ScalarValue{DType::I32, 781, 0};
  launch.scalars["M"] = ScalarValue{DType::I32, 700, 0};
  launch.scalars["K"] = ScalarValue{DType::I32, 4096, 0};
  launch.scalars["one"] = ScalarValue{DType::I32, 1, 0};
  launch.scalars["zero"] = ScalarValue{DType::I32, 0, 0};
  launch.scalars["eps"] = ScalarValue{DType::F32, 0, 1e-5};
  ParamHints h = paramHintsFromLaunch(launch);
  EXPECT_EQ(h.at("N").divisibility, 1);
  EXPECT_EQ(h.at("M").divisibility, 4);
  EXPECT_EQ(h.at("K").divisibility, 16);  // at most 16, as Triton
  EXPECT_TRUE(h.at("one").isOne);
  EXPECT_EQ(h.at("zero").divisibility, 16);
  EXPECT_FALSE(h.count("eps"));
  EXPECT_EQ(describeHints(h), "K: divisible by 16; M: divisible by 4; N: divisible by 1; one: equals 1; zero: divisible by 16");
  auto a = analyze("  %x = add %n, %s : i32\n", {{"n", {8, false}}, {"s", {1, true}}});
  EXPECT_EQ(a.info("n"), "contiguity=[1] divisibility=[8] constancy=[1]");
  EXPECT_EQ(a.info("s"), "contiguity=[1] divisibility=[1] constancy=[1] value=1");
}

// pid * BLOCK + arange: the vector_add offsets.
TEST(AxisAnalysis, ProgramIdTimesConstexprPlusArange) {
  auto a = analyze(
      "  %pid = program_id {axis = 0} : i32\n"
      "  %b = constant {value = 1024} : i32\n"
      "  %base = mul %pid, %b : i32\n"
      "  %r = arange {start = 0, end = 1024} : <1024xi32>\n"
      "  %sb = splat %base : <1024xi32>\n"
      "  %offs = add %sb, %r : <1024xi32>\n"
      "  %sp = splat %p : <1024xptr<f32>>\n"
      "  %ptrs = addptr %sp, %offs : <1024xptr<f32>>\n"
      "  %sn = splat %n : <1024xi32>\n"
      "  %mask = cmp %offs, %sn {pred = \"lt\"} : <1024xi1>\n"
      "  %le = cmp %offs, %sn {pred = \"le\"} : <1024xi1>\n",
      {{"n", {16, false}}});
  EXPECT_EQ(a.info("base"), "contiguity=[1] divisibility=[1024] constancy=[1]");
  EXPECT_EQ(a.info("offs"), "contiguity=[1024] divisibility=[1024] constancy=[1]");
  EXPECT_EQ(a.info("ptrs"), "contiguity=[1024] divisibility=[256] constancy=[1]");
  // offs < n flips only where offs == n, a multiple of 16: runs of 16 equal mask bits.
  EXPECT_EQ(a.info("mask"), "contiguity=[1] divisibility=[1] constancy=[16]");
  // offs <= n flips between n and n + 1, inside a run: nothing known.
  EXPECT_EQ(a.info("le"), "contiguity=[1] divisibility=[1] constancy=[1]");
}

TEST(AxisAnalysis, RowTimesRuntimeStride) {
  auto a = analyze(
      "  %row = program_id {axis = 0} : i32\n"
      "  %o = mul %row, %s : i32\n"
      "  %rp = addptr %p, %o : ptr<f32>\n"
      "  %cols = arange {start = 0, end = 1024} : <1024xi32>\n"
      "  %sp = splat %rp : <1024xptr<f32>>\n"
      "  %ptrs = addptr %sp, %cols : <1024xptr<f32>>\n",
      {{"s", {4, false}}});
  EXPECT_EQ(a.info("o"), "contiguity=[1] divisibility=[4] constancy=[1]");
  EXPECT_EQ(a.info("rp"), "contiguity=[1] divisibility=[16] constancy=[1]");  // 4 elements x 4 bytes
  EXPECT_EQ(a.info("ptrs"), "contiguity=[1024] divisibility=[16] constancy=[1]");
}

// A contiguous tile times anything but 1 is not contiguous, and its elements are only known
// divisible by the factor's divisibility (arange's 1, 2, 3... are odd and even).
TEST(AxisAnalysis, MulAndRuns) {
  auto a = analyze(
      "  %r = arange {start = 0, end = 64} : <64xi32>\n"
      "  %c4 = constant {value = 4} : <64xi32>\n"
      "  %m = mul %r, %c4 : <64xi32>\n"
      "  %c1 = constant {value = 1} : <64xi32>\n"
      "  %m1 = mul %r, %c1 : <64xi32>\n"
      "  %ss = splat %s : <64xi32>\n"
      "  %ms = mul %r, %ss : <64xi32>\n"
      "  %neg = neg %r : <64xi32>\n"
      "  %sub = sub %c4, %r : <64xi32>\n"
      "  %sub2 = sub %r, %c4 : <64xi32>\n",
      {{"s", {1, true}}});
  EXPECT_EQ(a.info("m"), "contiguity=[1] divisibility=[4] constancy=[1]");
  EXPECT_EQ(a.info("m1"), "contiguity=[64] divisibility=[1073741824] constancy=[1]");
  EXPECT_EQ(a.info("ms"), "contiguity=[64] divisibility=[1073741824] constancy=[1]");  // s == 1 (specialized)
  EXPECT_EQ(a.info("neg"), "contiguity=[1] divisibility=[1] constancy=[1]");
  EXPECT_EQ(a.info("sub"), "contiguity=[1] divisibility=[1] constancy=[1]");
  EXPECT_EQ(a.info("sub2"), "contiguity=[64] divisibility=[4] constancy=[1]");
}

// Adding a tile with shorter constant runs cuts the contiguous runs, and the later runs start
// at smaller multiples: [0..7] + [16 16 16 16 32 32 32 32] = [16..19, 36..39]: runs of 4 whose
// starts are divisible by 4, not 16.
TEST(AxisAnalysis, ShorterRunsReanchorDivisibility) {
  auto a = analyze(
      "  %r = arange {start = 0, end = 8} : <8xi32>\n"
      "  %c4 = constant {value = 4} : <8xi32>\n"
      "  %c16 = constant {value = 16} : <8xi32>\n"
      "  %c32 = constant {value = 32} : <8xi32>\n"
      "  %lt = cmp %r, %c4 {pred = \"lt\"} : <8xi1>\n"
      "  %t = select %lt, %c16, %c32 : <8xi32>\n"
      "  %sum = add %r, %t : <8xi32>\n");
  EXPECT_EQ(a.info("t"), "contiguity=[1] divisibility=[16] constancy=[4]");
  EXPECT_EQ(a.info("sum"), "contiguity=[4] divisibility=[4] constancy=[1]");
}

// 2-D: rows[:, None] * stride + cols[None, :], the bias_gelu / matmul offsets.
TEST(AxisAnalysis, TwoDimensionalOffsetsAndMasks) {
  auto a = analyze(
      "  %rows = arange {start = 0, end = 32} : <32xi32>\n"
      "  %cols = arange {start = 0, end = 64} : <64xi32>\n"
      "  %r2 = expand_dims %rows {axis = 1} : <32x1xi32>\n"
      "  %ss = splat %s : <32x1xi32>\n"
      "  %rs = mul %r2, %ss : <32x1xi32>\n"
      "  %rb = broadcast %rs : <32x64xi32>\n"
      "  %c2 = expand_dims %cols {axis = 0} : <1x64xi32>\n"
      "  %cb = broadcast %c2 : <32x64xi32>\n"
      "  %offs = add %rb, %cb : <32x64xi32>\n"
      "  %sn = splat %n : <1x64xi32>\n"
      "  %cm = cmp %c2, %sn {pred = \"lt\"} : <1x64xi1>\n"
      "  %cmb = broadcast %cm : <32x64xi1>\n"
      "  %sm = splat %n : <32x1xi32>\n"
      "  %rm = cmp %r2, %sm {pred = \"lt\"} : <32x1xi1>\n"
      "  %rmb = broadcast %rm : <32x64xi1>\n"
      "  %mask = and %rmb, %cmb : <32x64xi1>\n",
      {{"s", {8, false}}, {"n", {4, false}}});
  EXPECT_EQ(a.info("rs"), "contiguity=[1,1] divisibility=[8,8] constancy=[1,1]");
  EXPECT_EQ(a.info("offs"), "contiguity=[1,64] divisibility=[1,8] constancy=[1,1]");
  EXPECT_EQ(a.info("rmb"), "contiguity=[1,1] divisibility=[1,1] constancy=[4,64]");
  EXPECT_EQ(a.info("cmb"), "contiguity=[1,1] divisibility=[1,1] constancy=[32,4]");
  EXPECT_EQ(a.info("mask"), "contiguity=[1,1] divisibility=[1,1] constancy=[4,4]");
}

TEST(AxisAnalysis, SelectDivRemAnd) {
  auto a = analyze(
      "  %r = arange {start = 0, end = 64} : <64xi32>\n"
      "  %c16 = constant {value = 16} : <64xi32>\n"
      "  %c48 = constant {value = 48} : <64xi32>\n"
      "  %lt = cmp %r, %c16 {pred = \"lt\"} : <64xi1>\n"
      "  %r16 = add %r, %c16 : <64xi32>\n"
      "  %sel = select %lt, %r, %r16 : <64xi32>\n"
      "  %sel2 = select %lt, %r, %c48 : <64xi32>\n"
      "  %d = div %r, %c16 : <64xi32>\n"
      "  %rem = rem %c48, %c16 : <64xi32>\n"
      "  %and = and %r, %c16 : <64xi32>\n");
  EXPECT_EQ(a.info("lt"), "contiguity=[1] divisibility=[1] constancy=[16]");
  EXPECT_EQ(a.info("sel"), "contiguity=[16] divisibility=[16] constancy=[1]");
  EXPECT_EQ(a.info("sel2"), "contiguity=[1] divisibility=[1] constancy=[1]");  // runs of r, then 48s
  EXPECT_EQ(a.info("d"), "contiguity=[1] divisibility=[1] constancy=[1]");  // no sign analysis: no claim
  EXPECT_EQ(a.info("rem"), "contiguity=[1] divisibility=[16] constancy=[64]");
  EXPECT_EQ(a.info("and"), "contiguity=[1] divisibility=[16] constancy=[1]");
}

// Loop-carried values: the fixpoint joins the init with what the body yields.
TEST(AxisAnalysis, ForLoopInductionAndCarriedValues) {
  auto a = analyze(
      "  %lo = constant {value = 0} : i32\n"
      "  %st = constant {value = 256} : i32\n"
      "  %init = constant {value = 0} : i32\n"
      "  %c3 = constant {value = 3} : i32\n"
      "  %res = for %off = %lo to %n step %st iter_args(%acc = %init) : i32 {\n"
      "    %cols0 = arange {start = 0, end = 256} : <256xi32>\n"
      "    %so = splat %off : <256xi32>\n"
      "    %cols = add %so, %cols0 : <256xi32>\n"
      "    %next = add %acc, %c3 : i32\n"
      "    yield %next\n"
      "  }\n");
  EXPECT_EQ(a.info("off"), "contiguity=[1] divisibility=[256] constancy=[1]");
  EXPECT_EQ(a.info("cols"), "contiguity=[256] divisibility=[256] constancy=[1]");
  EXPECT_EQ(a.info("acc"), "contiguity=[1] divisibility=[1] constancy=[1]");  // 0, 3, 6, ...
  EXPECT_EQ(a.info("res"), "contiguity=[1] divisibility=[1] constancy=[1]");
}

// The vector widths the anchors get on the kernels' loads and stores, with the launch's hints.
TEST(AxisAnalysis, MemoryAnchorsExplainThemselves) {
  auto k = compileBlock("vector_add");
  ASSERT_TRUE(k);
  auto axes = analyzeAxes(*k->ir, paramHintsFromLaunch(k->launch));
  auto loads = opsOfKind(*k->ir, OpKind::Load);
  ASSERT_EQ(loads.size(), 2u);
  MemoryAnchor a = memoryAnchor(*loads[0], axes, 4);
  EXPECT_EQ(a.vec, 4);
  EXPECT_EQ(a.why, "contiguity 1024, alignment 256 B = 64 elements, mask constancy 16 -> vec 4, order [0]");
  EXPECT_EQ(a.layout->str(), "#blocked<spt=[4], tpw=[32], wpc=[4], order=[0]>");
  // Without the launch's facts about N, the mask could flip anywhere: vec 1.
  auto blind = analyzeAxes(*k->ir);
  EXPECT_EQ(memoryAnchor(*loads[0], blind, 4).vec, 1);
}
