// assign-layouts and remove-conversions on every kernel of kernels/ and on small IR texts:
// the result verifies (the pass manager checks after each pass), every tile has a layout for
// the function's warps, loads and stores carry a sound `vec`, conversions are left only where
// two memory anchors disagree, and the IR with layouts prints, parses and prints the same.
#include <gtest/gtest.h>

#include "ir/Parser.h"
#include "ir/Printer.h"
#include "ir/Verifier.h"
#include "layout_test_util.h"
#include "thread/Layouts.h"

using namespace tl;
using namespace tl::layout_test;

namespace {

// Every tile-typed op result and region argument, with a description for messages.
void forEachTile(const Function& fn, const std::function<void(const Value&, const std::string&)>& f) {
  walk(fn.body, [&](Op& op) {
    for (const auto& r : op.results)
      if (r->type.isTile()) f(*r, std::string(mnemonic(op.kind)) + " result");
    for (const auto& reg : op.regions)
      for (const auto& a : reg->args)
        if (a->type.isTile()) f(*a, std::string(mnemonic(op.kind)) + " region argument");
  });
}

std::vector<int64_t> vecs(const Function& fn, OpKind kind) {
  std::vector<int64_t> v;
  for (Op* op : opsOfKind(fn, kind)) v.push_back(op->intAttr(kVecAttr));
  return v;
}

}  // namespace

class KernelLayouts : public ::testing::TestWithParam<std::tuple<std::string, int>> {};

TEST_P(KernelLayouts, EveryTileHasALayoutAndAccessesAreSound) {
  auto [name, w] = GetParam();
  const int warps = w;  // a lambda below uses it (clang 14 cannot capture a structured binding)
  auto k = compileWithLayouts(name, warps);
  ASSERT_TRUE(k);
  const Function& fn = *k->ir;
  EXPECT_EQ(verifyFunction(fn), "");
  EXPECT_EQ(fn.numWarps, warps);
  int tiles = 0;
  forEachTile(fn, [&](const Value& v, const std::string& what) {
    ++tiles;
    ASSERT_TRUE(v.type.layout) << what << " " << v.name << " has no layout";
    EXPECT_EQ(v.type.layout->numWarps(), warps) << what;
    EXPECT_EQ(v.type.layout->rank(), v.type.rank()) << what;
  });
  EXPECT_GT(tiles, 0);
  for (OpKind kind : {OpKind::Load, OpKind::Store})
    for (Op* op : opsOfKind(fn, kind)) {
      ASSERT_TRUE(op->hasAttr(kVecAttr));
      int64_t vec = op->intAttr(kVecAttr);
      const Type& p = op->operand(0)->type;
      EXPECT_TRUE(isPowerOfTwo(vec));
      EXPECT_LE(vec * dtypeBytes(p.dtype), 16);
      if (p.isScalar()) {
        EXPECT_EQ(vec, 1);
        continue;
      }
      // The pointer, mask and value/result are all in the anchor layout, and vec divides the
      // contiguous registers each thread holds along order[0].
      const Layout& l = *p.layout;
      ASSERT_EQ(l.kind(), Layout::Kind::Blocked);
      EXPECT_EQ(l.sizePerThread()[l.order()[0]] % vec, 0);
      for (Value* o : op->operands) EXPECT_TRUE(*o->type.layout == l);
    }
}

INSTANTIATE_TEST_SUITE_P(AllKernels, KernelLayouts,
                         ::testing::Combine(::testing::ValuesIn(allKernels()), ::testing::Values(1, 2, 4, 8)),
                         [](const auto& info) {
                           return std::get<0>(info.param) + "_w" + std::to_string(std::get<1>(info.param));
                         });

// The row kernels keep every value in the layout of their loads: nothing to convert.
TEST(KernelLayoutsNoConversions, RowKernelsAndMatmul) {
  for (const char* name : {"softmax", "vector_add", "rmsnorm", "layernorm", "softmax_online", "row_sum", "matmul"})
    for (int warps : {1, 2, 4, 8}) {
      auto k = compileWithLayouts(name, warps);
      ASSERT_TRUE(k);
      EXPECT_EQ(opsOfKind(*k->ir, OpKind::ConvertLayout).size(), 0u) << name << " at " << warps << " warps\n"
                                                                     << printFunction(*k->ir);
    }
}

// Where two memory anchors disagree, exactly one conversion is left (docs/layouts.md).
TEST(KernelLayoutsNoConversions, OneConversionWhereAnchorsDisagree) {
  for (const char* name : {"transpose", "bias_gelu", "strided_copy"}) {
    auto k = compileWithLayouts(name, 4);
    ASSERT_TRUE(k);
    auto converts = opsOfKind(*k->ir, OpKind::ConvertLayout);
    ASSERT_EQ(converts.size(), 1u) << name << "\n" << printFunction(*k->ir);
    // ... and it converts a loaded value, not index arithmetic (that is recomputed instead).
    const Op* src = converts[0]->operand(0)->def;
    ASSERT_TRUE(src);
    EXPECT_EQ(src->kind, OpKind::Load) << name;
  }
}

// The vector widths at the default launches (num_warps 4), and why (docs/layouts.md).
TEST(KernelVectorWidths, DefaultLaunches) {
  auto check = [](const std::string& name, const std::vector<std::string>& sets, std::vector<int64_t> loads,
                  std::vector<int64_t> stores, int warps = 4) {
    auto k = compileWithLayouts(name, warps, sets);
    ASSERT_TRUE(k);
    EXPECT_EQ(vecs(*k->ir, OpKind::Load), loads) << name;
    EXPECT_EQ(vecs(*k->ir, OpKind::Store), stores) << name;
  };
  check("vector_add", {}, {4, 4}, {4});          // N = 98432 = 16 x 6152: the ragged mask flips at a multiple of 16
  check("vector_add", {"N=98433"}, {1, 1}, {1});  // odd N: the mask may flip anywhere
  check("rmsnorm", {}, {4, 4}, {4});             // N = stride = 700 = 4 x 175: rows start 16-byte aligned
  check("softmax_online", {}, {4, 4}, {4});      // N = 3000 = 8 x 375
  check("softmax", {}, {1}, {1});                // N = stride = 781 is odd: row r starts at byte 3124 r
  check("softmax", {"N=1024"}, {4}, {4});
  check("softmax", {"N=780"}, {4}, {4});         // 780 = 4 x 195: aligned rows, mask flips at a multiple of 4
  check("layernorm", {}, {2, 2, 2, 2, 2}, {1, 1, 2});  // 256 elements / 128 threads = 2 each
  check("layernorm", {}, {4, 4, 4, 4, 4}, {1, 1, 4}, 2);  // 64 threads: 4 each
  check("row_sum", {}, {2}, {1});
  check("strided_copy", {}, {1}, {4});           // x[i * 3] is not contiguous; out[i] is
  check("transpose", {}, {2}, {4});              // N = 170: rows of `in` 8-byte aligned; out columns
  check("transpose", {"stride_on=2"}, {2}, {1});  // no unit stride: the store is not contiguous
  check("transpose_tiled", {}, {2}, {4});        // trans(tile) stored along the rows of `out`
  check("matmul", {}, {4, 4}, {4});
  check("bias_gelu", {}, {4, 1}, {4});           // the 64-element bias: fewer elements than threads
}

// print -> parse -> print is the identity on IR with layouts, and the parsed IR verifies.
TEST(KernelLayoutsRoundTrip, PrintParsePrint) {
  for (const auto& name : allKernels()) {
    auto k = compileWithLayouts(name, 4);
    ASSERT_TRUE(k);
    std::string text = printFunction(*k->ir);
    DiagEngine diag;
    auto parsed = parseFunction(text, diag);
    ASSERT_TRUE(parsed) << diag.renderAll();
    EXPECT_EQ(verifyFunction(*parsed), "") << name;
    EXPECT_EQ(printFunction(*parsed), text) << name;
    EXPECT_EQ(parsed->numWarps, 4);
  }
}

// Running the pipeline on parsed IR gives the same text as on the front end's IR.
TEST(KernelLayoutsRoundTrip, PassesOnParsedIR) {
  auto k = compileBlock("bias_gelu");
  ASSERT_TRUE(k);
  DiagEngine diag;
  auto parsed = parseFunction(printFunction(*k->ir), diag);
  ASSERT_TRUE(parsed) << diag.renderAll();
  ParamHints hints = paramHintsFromLaunch(k->launch);
  layoutPipeline(4, hints).run(*k->ir);
  layoutPipeline(4, hints).run(*parsed);
  EXPECT_EQ(printFunction(*parsed), printFunction(*k->ir));
}

TEST(AssignLayouts, RejectsBadInput) {
  auto k = compileWithLayouts("vector_add", 4);
  ASSERT_TRUE(k);
  EXPECT_THROW(assignLayouts(*k->ir, 4), IRError);  // already has layouts
  auto b = compileBlock("vector_add");
  ASSERT_TRUE(b);
  EXPECT_THROW(assignLayouts(*b->ir, 3), IRError);
  EXPECT_THROW(assignLayouts(*b->ir, 64), IRError);
}

TEST(RemoveConversions, SecondRunChangesNothing) {
  for (const auto& name : allKernels()) {
    auto k = compileWithLayouts(name, 4);
    ASSERT_TRUE(k);
    std::string before = printFunction(*k->ir);
    EXPECT_FALSE(removeConversions(*k->ir)) << name;
    EXPECT_EQ(printFunction(*k->ir), before);
  }
}

namespace {

const char* kL1 = "#blocked<spt=[1], tpw=[32], wpc=[1], order=[0]>";
const char* kL4 = "#blocked<spt=[4], tpw=[32], wpc=[1], order=[0]>";

std::string fill(std::string text) {
  for (auto [key, val] : {std::pair{"L1", kL1}, std::pair{"L4", kL4}})
    for (size_t at; (at = text.find(std::string("$") + key)) != std::string::npos;) text.replace(at, 3, val);
  return text;
}

std::unique_ptr<Function> parse(const std::string& text) {
  DiagEngine diag;
  auto fn = parseFunction(fill(text), diag);
  EXPECT_TRUE(fn) << diag.renderAll() << fill(text);
  if (fn) {
    EXPECT_EQ(verifyFunction(*fn), "") << fill(text);
  }
  return fn;
}

}  // namespace

TEST(RemoveConversions, IdentityChainsAndRematerialization) {
  auto fn = parse(
      "func @k(%p: ptr<f32>) num_warps(1) {\n"
      "  %r = arange {start = 0, end = 128} : <128xi32, $L1>\n"
      "  %same = convert_layout %r : <128xi32, $L1>\n"
      "  %a = convert_layout %r : <128xi32, $L4>\n"
      "  %b = convert_layout %a : <128xi32, $L1>\n"
      "  %sp = splat %p : <128xptr<f32>, $L4>\n"
      "  %ptr = addptr %sp, %a : <128xptr<f32>, $L4>\n"
      "  %x = load %ptr {vec = 4} : <128xf32, $L4>\n"
      "  %sp1 = splat %p : <128xptr<f32>, $L1>\n"
      "  %ptr1 = addptr %sp1, %b : <128xptr<f32>, $L1>\n"
      "  %s = addptr %sp1, %same : <128xptr<f32>, $L1>\n"
      "  %x1 = convert_layout %x : <128xf32, $L1>\n"
      "  store %ptr1, %x1 {vec = 1}\n"
      "  store %s, %x1 {vec = 1}\n"
      "  return\n"
      "}\n");
  ASSERT_TRUE(fn);
  EXPECT_TRUE(removeConversions(*fn));
  EXPECT_EQ(verifyFunction(*fn), "");
  // Left: only the conversion of the loaded value; arange was recomputed in L4.
  auto converts = opsOfKind(*fn, OpKind::ConvertLayout);
  ASSERT_EQ(converts.size(), 1u) << printFunction(*fn);
  EXPECT_EQ(converts[0]->operand(0)->def->kind, OpKind::Load);
  auto aranges = opsOfKind(*fn, OpKind::Arange);
  ASSERT_EQ(aranges.size(), 2u) << printFunction(*fn);
  EXPECT_EQ(aranges[0]->result()->type.layout->str(), kL1);
  EXPECT_EQ(aranges[1]->result()->type.layout->str(), kL4);
  // The chain convert(convert(r)) back to L1 reads r itself.
  auto stores = opsOfKind(*fn, OpKind::Store);
  EXPECT_EQ(stores[0]->operand(0)->def->operand(1), aranges[0]->result());
}

// A loaded value converted inside a loop is converted once, before the loop.
TEST(RemoveConversions, HoistsConversionsOutOfLoops) {
  auto fn = parse(
      "func @k(%p: ptr<f32>, %n: i32) num_warps(1) {\n"
      "  %sp = splat %p : <128xptr<f32>, $L4>\n"
      "  %r = arange {start = 0, end = 128} : <128xi32, $L4>\n"
      "  %ptr = addptr %sp, %r : <128xptr<f32>, $L4>\n"
      "  %x = load %ptr {vec = 4} : <128xf32, $L4>\n"
      "  %lo = constant {value = 0} : i32\n"
      "  %st = constant {value = 1} : i32\n"
      "  %z = constant {value = 0.0} : <128xf32, $L1>\n"
      "  %res = for %i = %lo to %n step %st iter_args(%acc = %z) : <128xf32, $L1> {\n"
      "    %x1 = convert_layout %x : <128xf32, $L1>\n"
      "    %next = add %acc, %x1 : <128xf32, $L1>\n"
      "    yield %next\n"
      "  }\n"
      "  %res4 = convert_layout %res : <128xf32, $L4>\n"
      "  store %ptr, %res4 {vec = 4}\n"
      "  return\n"
      "}\n");
  ASSERT_TRUE(fn);
  EXPECT_TRUE(removeConversions(*fn));
  EXPECT_EQ(verifyFunction(*fn), "") << printFunction(*fn);
  auto converts = opsOfKind(*fn, OpKind::ConvertLayout);
  ASSERT_EQ(converts.size(), 2u);
  EXPECT_EQ(converts[0]->parent, &fn->body) << printFunction(*fn);
  EXPECT_EQ(converts[0]->operand(0)->def->kind, OpKind::Load);
}

// Control flow: tiles carried by a loop and merged by an if get layouts that agree across the
// region boundaries (iter args = results = yields; if results = both yields).
TEST(AssignLayouts, LoopsAndIfsAgreeAcrossRegions) {
  auto fn = parse(
      "func @k(%p: ptr<f32>, %n: i32) {\n"
      "  %lo = constant {value = 0} : i32\n"
      "  %st = constant {value = 1} : i32\n"
      "  %z = constant {value = 0.0} : <256xf32>\n"
      "  %r = arange {start = 0, end = 256} : <256xi32>\n"
      "  %sp = splat %p : <256xptr<f32>>\n"
      "  %ptr = addptr %sp, %r : <256xptr<f32>>\n"
      "  %res = for %i = %lo to %n step %st iter_args(%acc = %z) : <256xf32> {\n"
      "    %x = load %ptr : <256xf32>\n"
      "    %c = cmp %i, %lo {pred = \"eq\"} : i1\n"
      "    %v = if %c : <256xf32> {\n"
      "      yield %x\n"
      "    } else {\n"
      "      %e = exp %x : <256xf32>\n"
      "      yield %e\n"
      "    }\n"
      "    %next = add %acc, %v : <256xf32>\n"
      "    yield %next\n"
      "  }\n"
      "  %s = reduce %res {kind = \"sum\", axis = 0} : f32\n"
      "  store %p, %s\n"
      "  return\n"
      "}\n");
  ASSERT_TRUE(fn);
  layoutPipeline(2).run(*fn);
  EXPECT_EQ(verifyFunction(*fn), "");
  EXPECT_EQ(opsOfKind(*fn, OpKind::ConvertLayout).size(), 0u) << printFunction(*fn);
  auto loads = opsOfKind(*fn, OpKind::Load);
  ASSERT_EQ(loads.size(), 1u);
  // 256 contiguous f32 from a 256-byte aligned buffer, 64 threads: 4 each.
  EXPECT_EQ(loads[0]->intAttr(kVecAttr), 4);
  const Op* forOp = opsOfKind(*fn, OpKind::For)[0];
  EXPECT_TRUE(*forOp->result()->type.layout == *loads[0]->result()->type.layout);
  EXPECT_EQ(opsOfKind(*fn, OpKind::Store)[0]->intAttr(kVecAttr), 1);  // a scalar store
}
