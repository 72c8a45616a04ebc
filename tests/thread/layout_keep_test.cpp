// trans and keepLayouts in the layout passes and the lowering (docs/layouts.md, "trans" and
// "Keeping the layouts the source implies"):
//   - the op's rules: the verifier's (shape, dtype, swapped layout) and the front end's error;
//   - transposedLayout: for every default layout, thread t's register r holds the mirrored
//     element, so trans moves no data; coverage and register counts are the operand's;
//   - without keepLayouts trans is free (no conversion at it); with keepLayouts every
//     convert_layout left in any kernel of kernels/ converts a trans's operand, at the trans's
//     location, at num_warps 1, 2, 4, 8;
//   - executed accesses (sectors per warp instruction, sim/Coalescing.h): the naive transpose
//     under keepLayouts stores uncoalesced and uses no shared memory; the tiled one
//     (trans) is coalesced on both sides in both modes and goes through shared memory once;
//   - trans of non-square tiles of several dtypes at ragged sizes equals a C++ transpose in
//     tl-scalar, tl-block and the thread IR (both modes, num_warps 1..8);
//   - keepLayouts on a reduction stored from its slice layout and on a gather.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>

#include "ir/Parser.h"
#include "ir/Printer.h"
#include "layout_test_util.h"
#include <unistd.h>
#include "sim/Banks.h"
#include "sim/Coalescing.h"
#include "sim/ThreadExecutor.h"
#include "block/BlockInterpreter.h"
#include "scalar/ScalarInterpreter.h"
#include "thread/Pipeline.h"

namespace tl::layout_test {
namespace {

// --- transposedLayout ----------------------------------------------------------------------------

TEST(TransLayout, MirrorsEveryDefaultLayout) {
  for (Shape s : {Shape{32, 32}, Shape{8, 64}, Shape{64, 4}, Shape{1, 128}, Shape{16, 1}, Shape{2, 2}})
    for (int nw : {1, 2, 4, 8})
      for (int vec : {1, 2, 4})
        for (std::vector<int> order : {std::vector<int>{1, 0}, std::vector<int>{0, 1}}) {
          LayoutPtr l = defaultBlockedLayout(s, nw, vec, order);
          LayoutPtr t = transposedLayout(*l);
          Shape ts{s[1], s[0]};
          ASSERT_EQ(*transposedLayout(*t), *l);
          ASSERT_EQ(t->elemsPerThread(ts), l->elemsPerThread(s)) << l->str();
          ASSERT_EQ(t->replication(ts), l->replication(s)) << l->str();
          for (int th = 0; th < l->numThreads(); ++th)
            for (int64_t r = 0; r < l->elemsPerThread(s); ++r) {
              auto c = l->coords(s, th, r);
              auto ct = t->coords(ts, th, r);
              ASSERT_EQ(ct, (std::vector<int64_t>{c[1], c[0]})) << l->str() << " thread " << th << " reg " << r;
            }
        }
}

TEST(TransLayout, NeedsARank2BlockedLayout) {
  EXPECT_THROW(transposedLayout(*defaultBlockedLayout({128}, 4, 1)), std::invalid_argument);
  EXPECT_THROW(transposedLayout(*Layout::slice(0, defaultBlockedLayout({32, 32}, 4, 1))), std::invalid_argument);
}

// --- the op's rules: verifier and front end ------------------------------------------------------

std::string parseError(const std::string& body) {
  std::string text = "func @f() {\n" + body + "  return\n}\n";
  DiagEngine diag(std::make_shared<SourceFile>("<test>", text));
  auto fn = parseFunction(text, diag);
  return diag.hasErrors() ? diag.renderAll() : "";
}

TEST(TransRules, Verifier) {
  const std::string c84 = "  %c = constant {value = 1} : <8x4xi32>\n";
  EXPECT_EQ(parseError(c84 + "  %t = trans %c : <4x8xi32>\n"), "");
  EXPECT_NE(parseError("  %a = arange {start = 0, end = 8} : <8xi32>\n  %t = trans %a : <8xi32>\n")
                .find("trans: operand must be a rank-2 tile"), std::string::npos);
  EXPECT_NE(parseError(c84 + "  %t = trans %c : <8x4xi32>\n").find("trans: result types differ"), std::string::npos);
  EXPECT_NE(parseError(c84 + "  %t = trans %c : <4x8xf32>\n").find("trans: result types differ"), std::string::npos);
  // With layouts: the result's is the operand's with the dims swapped, nothing else.
  const std::string l84 = "#blocked<spt=[1,2], tpw=[8,4], wpc=[2,1], order=[1,0]>";
  const std::string swapped = "#blocked<spt=[2,1], tpw=[4,8], wpc=[1,2], order=[0,1]>";
  const std::string c = "  %c = constant {value = 1} : <8x4xi32, " + l84 + ">\n";
  EXPECT_EQ(parseError(c + "  %t = trans %c : <4x8xi32, " + swapped + ">\n"), "");
  EXPECT_NE(parseError(c + "  %t = trans %c : <4x8xi32, " + l84 + ">\n").find("trans: result layout must be"),
            std::string::npos);
  EXPECT_NE(parseError(c + "  %t = trans %c : <4x8xi32>\n").find("trans: result layout must be"), std::string::npos);
}

TEST(TransRules, FrontEndNeedsA2DTile) {
  namespace fs = std::filesystem;
  fs::path path = fs::temp_directory_path() / ("tl_trans_bad_" + std::to_string(::getpid()) + ".tl");
  std::ofstream(path) << "@launch(N=8, x=zeros((8,), output=True))\n@jit\ndef k(x, N):\n"
                         "    offs = arange(0, 8)\n    store(x + offs, trans(offs))\n";
  std::ostringstream err;
  auto k = compileKernelFile(path.string(), {}, err);
  fs::remove(path);
  EXPECT_FALSE(k);
  EXPECT_NE(err.str().find(":5:27: error: trans() needs a 2-D tile, got"), std::string::npos) << err.str();
}

// --- the passes ----------------------------------------------------------------------------------

std::vector<Op*> usersOf(const Function& fn, const Value* v) {
  std::vector<Op*> out;
  walk(const_cast<Function&>(fn).body, [&](Op& op) {
    if (std::find(op.operands.begin(), op.operands.end(), v) != op.operands.end()) out.push_back(&op);
  });
  return out;
}

std::vector<std::string> everyKernel() {
  std::vector<std::string> stems;
  for (const auto& e : std::filesystem::directory_iterator(std::string(TL_SOURCE_DIR) + "/kernels"))
    if (e.path().extension() == ".tl") stems.push_back(e.path().stem().string());
  std::sort(stems.begin(), stems.end());
  return stems;
}

// Without keepLayouts, trans takes its operand's layout with the dims swapped: nothing converts
// at it; transpose_tiled's one conversion is at the store (the compiler's choice of layout).
TEST(TransPasses, FreeWithoutKeepLayouts) {
  for (int warps : {1, 2, 4, 8}) {
    auto k = compileWithLayouts("transpose_tiled", warps);
    ASSERT_TRUE(k);
    // trans(tile) and trans(mask) (the mask's is recomputed with the index math, in the store's layout).
    auto trans = opsOfKind(*k->ir, OpKind::Trans);
    ASSERT_EQ(trans.size(), 2u) << printFunction(*k->ir);
    for (Op* t : trans) EXPECT_EQ(*t->result()->type.layout, *transposedLayout(*t->operand(0)->type.layout));
    Op* data = trans[0]->operand(0)->def->kind == OpKind::Load ? trans[0] : trans[1];
    ASSERT_EQ(data->operand(0)->def->kind, OpKind::Load) << printFunction(*k->ir);
    auto converts = opsOfKind(*k->ir, OpKind::ConvertLayout);
    ASSERT_EQ(converts.size(), 1u) << printFunction(*k->ir);
    EXPECT_EQ(converts[0]->operand(0), data->result());
    EXPECT_EQ(usersOf(*k->ir, converts[0]->result()).size(), 1u);
  }
}

// keepLayouts: every remaining convert_layout is the one a trans asks for (of its result, right
// after it, at its location), in every kernel, at every warp count; reductions move data inside
// their lowering.
TEST(KeepLayouts, ConversionsOnlyAtTrans) {
  for (const auto& name : everyKernel())
    for (int warps : {1, 2, 4, 8}) {
      auto k = compileWithLayouts(name, warps, {}, true);
      ASSERT_TRUE(k) << name;
      for (Op* c : opsOfKind(*k->ir, OpKind::ConvertLayout)) {
        const Op* t = c->operand(0)->def;
        ASSERT_TRUE(t && t->kind == OpKind::Trans) << name << " at " << warps << " warps\n" << printFunction(*k->ir);
        EXPECT_EQ(c->loc.line, t->loc.line) << name;
        EXPECT_EQ(c->loc.col, t->loc.col) << name;
        EXPECT_EQ(*c->result()->type.layout, *defaultBlockedLayout(c->result()->type.shape, warps,
                                                                    t->operand(0)->type.layout->sizePerThread()[1]))
            << name << ": the default row-major layout with the operand's vector width";
      }
      // No store converts what it stores: a conversion feeding one is a trans's, at the trans.
      for (Op* st : opsOfKind(*k->ir, OpKind::Store))
        if (const Op* d = st->operand(1)->def; d && d->kind == OpKind::ConvertLayout)
          EXPECT_NE(d->loc.line, st->loc.line) << name;
    }
}

// The kernels that had conversions without keepLayouts (docs/layouts.md) keep none.
TEST(KeepLayouts, TheDisagreeingAnchorsConvertNothing) {
  for (const char* name : {"transpose", "bias_gelu", "strided_copy"}) {
    auto k = compileWithLayouts(name, 4, {}, true);
    ASSERT_TRUE(k);
    EXPECT_EQ(opsOfKind(*k->ir, OpKind::ConvertLayout).size(), 0u) << name << "\n" << printFunction(*k->ir);
  }
  // bias[None, :] next to the 2-D tile: the bias is read directly in the tile's column slice.
  auto k = compileWithLayouts("bias_gelu", 4, {}, true);
  auto loads = opsOfKind(*k->ir, OpKind::Load);
  ASSERT_EQ(loads.size(), 2u);
  EXPECT_EQ(loads[1]->result()->type.layout->kind(), Layout::Kind::Slice) << printFunction(*k->ir);
}

// The vector widths keepLayouts leaves (num_warps 4, default launches): the naive transpose's
// store runs across `out`'s contiguous dimension (vec 1); the tiled one's along it.
TEST(KeepLayouts, VectorWidths) {
  auto vecsOf = [](const Function& fn, OpKind kind) {
    std::vector<int64_t> v;
    for (Op* op : opsOfKind(fn, kind)) v.push_back(op->intAttr(kVecAttr));
    return v;
  };
  auto naive = compileWithLayouts("transpose", 4, {}, true);
  EXPECT_EQ(vecsOf(*naive->ir, OpKind::Load), std::vector<int64_t>{2});
  EXPECT_EQ(vecsOf(*naive->ir, OpKind::Store), std::vector<int64_t>{1});
  Op* st = opsOfKind(*naive->ir, OpKind::Store)[0];
  EXPECT_EQ(*st->operand(1)->type.layout, *opsOfKind(*naive->ir, OpKind::Load)[0]->result()->type.layout);
  auto tiled = compileWithLayouts("transpose_tiled", 4, {}, true);
  EXPECT_EQ(vecsOf(*tiled->ir, OpKind::Load), std::vector<int64_t>{2});
  EXPECT_EQ(vecsOf(*tiled->ir, OpKind::Store), std::vector<int64_t>{2});  // the operand's width, kept
  // The layouts are unchanged elsewhere: softmax under keepLayouts is softmax.
  auto a = compileWithLayouts("softmax", 4, {}, false), b = compileWithLayouts("softmax", 4, {}, true);
  EXPECT_EQ(printFunction(*a->ir), printFunction(*b->ir));
}

// --- executed accesses --------------------------------------------------------------------------

struct Sectors {
  int64_t fetched = 0;  // distinct sectors per warp instruction, summed
  int64_t ideal = 0;    // ceil(distinct bytes / 32), summed
  double efficiency() const { return fetched ? double(ideal) / double(fetched) : 0.0; }
};

struct Executed {
  std::map<std::pair<uint32_t, bool>, Sectors> global;  // (source line, store?) -> sectors
  int64_t sharedAccesses = 0;
  int64_t sharedBytes = 0;
  int64_t sharedConflicts = 0;  // wavefronts beyond the ideal (sim/Banks.h), all shared accesses
};

Executed execute(const std::string& stem, bool keepLayouts, int numWarps = 4) {
  std::ostringstream err;
  auto k = compileKernelFile(kernelPath(stem), {}, err);
  EXPECT_TRUE(k) << err.str();
  Executed out;
  if (!k) return out;
  ThreadCompilation tc = compileToThreadIR(*k->ir, k->launch, ThreadCompileOptions{numWarps, keepLayouts});
  out.sharedBytes = tc.threadIR->sharedBytes;
  Memory mem = Memory::fromLaunch(k->launch);
  ExecResult r = runThreadIR(*tc.threadIR, k->launch, mem);
  std::array<SectorUse, kMaxSectorsPerAccess> buf;
  for (const WarpAccess& a : r.accesses) {
    if (a.space == MemSpace::Shared) {
      ++out.sharedAccesses;
      out.sharedConflicts += banks(a).bankConflicts;
      continue;
    }
    int n = collectSectors(a, buf.data());
    int64_t used = 0;
    for (int i = 0; i < n; ++i) used += __builtin_popcount(buf[i].byteMask);
    Sectors& s = out.global[{a.loc.line, a.store}];
    s.fetched += n;
    s.ideal += (used + kSectorBytes - 1) / kSectorBytes;
  }
  return out;
}

Sectors sectorsAt(const Executed& e, uint32_t line, bool store) {
  auto it = e.global.find({line, store});
  return it == e.global.end() ? Sectors{} : it->second;
}

uint32_t lineOf(const std::string& stem, const std::string& text) {
  std::ifstream in(kernelPath(stem));
  std::string line;
  for (uint32_t n = 1; std::getline(in, line); ++n)
    if (line.find(text) != std::string::npos) return n;
  ADD_FAILURE() << text << " not in " << stem;
  return 0;
}

TEST(KeepLayoutsExecuted, NaiveTransposeStoresUncoalesced) {
  uint32_t ld = lineOf("transpose", "tile = load("), st = lineOf("transpose", "store(");
  Executed keep = execute("transpose", true);
  EXPECT_GT(sectorsAt(keep, ld, false).efficiency(), 0.7);
  // The load's layout puts 16 lanes along j (a column of `out`: M x 4 bytes apart) and 2 along i
  // (adjacent in `out`): each 32-byte sector holds 8 useful bytes, a quarter.
  EXPECT_LT(sectorsAt(keep, st, true).efficiency(), 0.3);
  EXPECT_EQ(keep.sharedAccesses, 0);
  EXPECT_EQ(keep.sharedBytes, 0);
  // Without keepLayouts the compiler's shared-memory transpose makes the store coalesced.
  Executed dflt = execute("transpose", false);
  EXPECT_GT(sectorsAt(dflt, st, true).efficiency(), 0.7);
  EXPECT_GT(dflt.sharedAccesses, 0);
  EXPECT_LT(sectorsAt(dflt, st, true).fetched, sectorsAt(keep, st, true).fetched / 3);
}

TEST(KeepLayoutsExecuted, TiledTransposeIsCoalescedOnBothSides) {
  uint32_t ld = lineOf("transpose_tiled", "tile = load("), st = lineOf("transpose_tiled", "store(");
  for (bool keep : {true, false}) {
    for (int nw : {1, 4, 8}) {
      Executed e = execute("transpose_tiled", keep, nw);
      EXPECT_GT(sectorsAt(e, ld, false).efficiency(), 0.7) << keep << " " << nw;
      EXPECT_GT(sectorsAt(e, st, true).efficiency(), 0.7) << keep << " " << nw;
      EXPECT_GT(e.sharedAccesses, 0);  // one exchange: at the trans (keep) or before the store
      // --keep-layouts: the row-major [32][32] buffer the source implies, and its bank conflicts
      // (lab 1 teaches them); otherwise the conversion pads each row by one word: none.
      EXPECT_EQ(e.sharedBytes, keep ? 32 * 32 * 4 : 32 * 33 * 4) << keep << " " << nw;
      if (keep) EXPECT_GT(e.sharedConflicts, 0) << nw;
      else EXPECT_EQ(e.sharedConflicts, 0) << nw;
    }
  }
  // The keepLayouts exchange is at the trans's line.
  std::ostringstream err;
  auto k = compileKernelFile(kernelPath("transpose_tiled"), {}, err);
  ASSERT_TRUE(k) << err.str();
  ThreadCompilation tc = compileToThreadIR(*k->ir, k->launch, ThreadCompileOptions{4, true});
  ASSERT_EQ(tc.shared.buffers.size(), 1u) << tc.shared.str();
  EXPECT_EQ(tc.shared.buffers[0].loc.line, lineOf("transpose_tiled", "t = trans(tile)")) << tc.shared.str();
  EXPECT_TRUE(tc.keepLayouts);
  EXPECT_NE(explainMemoryLayouts(tc).find("in this layout: fastest dim 1"), std::string::npos) << explainMemoryLayouts(tc);
}

// Compiles `source` (written to a temporary file named `stem`.tl) with `sets`.
std::unique_ptr<CompiledKernel> compileSource(const std::string& stem, const std::string& source,
                                              const std::vector<LaunchOverride>& sets = {}) {
  namespace fs = std::filesystem;
  fs::path path = fs::temp_directory_path() / (stem + "_" + std::to_string(::getpid()) + ".tl");
  std::ofstream(path) << source;
  std::ostringstream err;
  auto k = compileKernelFile(path.string(), sets, err);
  fs::remove(path);
  EXPECT_TRUE(k) << err.str();
  return k;
}

// --- trans of non-square tiles, executed ---------------------------------------------------------

// out[j, i] = x[i, j] through trans(), for a DTYPE and tile BMxBN at a ragged size.
std::string transKernel(const std::string& dtype) {
  return "@launch(M=37, N=21, BM=8, BN=32, grid=(cdiv(M, BM), cdiv(N, BN)),\n"
         "        x=uniform((M, N), lo=-1000, hi=1000, seed=7, dtype=" + dtype + "),\n"
         "        y=zeros((N, M), dtype=" + dtype + ", output=True))\n"
         "@jit\n"
         "def t(x, y, M, N, BM: constexpr, BN: constexpr):\n"
         "    i = program_id(0) * BM + arange(0, BM)\n"
         "    j = program_id(1) * BN + arange(0, BN)\n"
         "    v = load(x + i[:, None] * N + j[None, :], mask=(i[:, None] < M) & (j[None, :] < N))\n"
         "    w = trans(v)\n"
         "    store(y + j[:, None] * M + i[None, :], w, mask=(j[:, None] < N) & (i[None, :] < M))\n";
}

// Elements of y that are not x transposed (the C++ oracle: y[j, i] == x[i, j], exactly).
int64_t notTransposed(const Memory& mem) {
  const Buffer *x = mem.find("x"), *y = mem.find("y");
  if (!x || !y) return -1;
  const int64_t m = x->shape[0], n = x->shape[1];
  int64_t wrong = 0;
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) wrong += y->getF(j * m + i) != x->getF(i * n + j);
  return wrong;
}

// tl-scalar (the front end's IR), tl-block (after the block pipeline) and the thread IR (both
// modes, num_warps 1..8) against the oracle.
TEST(TransExecuted, NonSquareRaggedTilesEveryDtypeEveryStage) {
  for (const char* dtype : {"f32", "f16", "i32"})
    for (const std::vector<LaunchOverride>& sets :
         {std::vector<LaunchOverride>{}, {{"BM", "32"}, {"BN", "4"}}, {{"M", "5"}, {"N", "70"}, {"BM", "2"}, {"BN", "64"}}}) {
      auto k = compileSource(std::string("trans_") + dtype, transKernel(dtype), sets);
      ASSERT_TRUE(k);
      std::string where = std::string(dtype) + " " + describeLaunch(*k);
      Memory scalar = Memory::fromLaunch(k->launch);
      runScalar(*k->ir, k->launch, scalar);
      EXPECT_EQ(notTransposed(scalar), 0) << "tl-scalar " << where;
      auto opt = cloneFunction(*k->ir);
      blockPipeline().run(*opt);
      Memory block = Memory::fromLaunch(k->launch);
      runBlock(*opt, k->launch, block);
      EXPECT_EQ(notTransposed(block), 0) << "tl-block " << where;
      for (bool keep : {false, true})
        for (int nw : {1, 2, 4, 8}) {
          ThreadCompilation tc = compileToThreadIR(*k->ir, k->launch, ThreadCompileOptions{nw, keep});
          Memory mem = Memory::fromLaunch(k->launch);
          runThreadIR(*tc.threadIR, k->launch, mem);
          EXPECT_EQ(notTransposed(mem), 0) << "thread keep=" << keep << " num_warps " << nw << " " << where;
        }
    }
}

// --- keepLayouts on stores of reductions and on gathers ----------------------------------------

// Compiled with and without keepLayouts at num_warps 1..8, `check` holds on the outputs; with
// keepLayouts nothing converts.
void runBothModes(const CompiledKernel& k, const std::function<void(const Memory&, int)>& check) {
  for (bool keep : {false, true})
    for (int nw : {1, 2, 4, 8}) {
      ThreadCompilation tc = compileToThreadIR(*k.ir, k.launch, ThreadCompileOptions{nw, keep});
      if (keep) EXPECT_EQ(opsOfKind(*tc.withLayouts, OpKind::ConvertLayout).size(), 0u) << printFunction(*tc.withLayouts);
      Memory mem = Memory::fromLaunch(k.launch);
      runThreadIR(*tc.threadIR, k.launch, mem);
      check(mem, nw);
    }
}

// Row sums of a 2-D tile are stored straight from the reduction's slice layout (replicated
// lanes masked off as the store's first-owner rule says).
TEST(KeepLayoutsExecuted, StoresAReductionInItsSliceLayout) {
  auto k = compileSource("rowsum",
                         "@launch(M=37, N=21, BM=16, BN=32, grid=(cdiv(M, BM),), x=randn((M, N), seed=5),\n"
                         "        y=zeros((M,), output=True))\n@jit\n"
                         "def rs(x, y, M, N, BM: constexpr, BN: constexpr):\n"
                         "    i = program_id(0) * BM + arange(0, BM)\n"
                         "    j = arange(0, BN)\n"
                         "    v = load(x + i[:, None] * N + j[None, :], mask=(i[:, None] < M) & (j[None, :] < N))\n"
                         "    store(y + i, sum(v, axis=1), mask=i < M)\n");
  ASSERT_TRUE(k);
  runBothModes(*k, [](const Memory& mem, int nw) {
    const Buffer *x = mem.find("x"), *y = mem.find("y");
    for (int64_t i = 0; i < 37; ++i) {
      double want = 0;
      for (int64_t j = 0; j < 21; ++j) want += x->getF(i * 21 + j);
      EXPECT_NEAR(y->getF(i), want, 1e-4) << "row " << i << " at " << nw << " warps";
    }
  });
  blockPipeline().run(*k->ir);
  layoutPipeline(4, {}, true).run(*k->ir);
  Op* st = opsOfKind(*k->ir, OpKind::Store)[0];
  EXPECT_EQ(st->operand(1)->type.layout->kind(), Layout::Kind::Slice) << printFunction(*k->ir);
}

// A gather: the second load's addresses are data, so in both modes it reads in the layout of the
// indices (a pointer tile cannot move between threads); with keepLayouts the store follows too.
TEST(KeepLayoutsExecuted, GatherFollowsItsAddresses) {
  auto k = compileSource("gather",
                         "@launch(N=300, BLOCK=128, grid=(cdiv(N, BLOCK),), x=randn((N,), seed=2),\n"
                         "        idx=arange((N,), start=N - 1, step=-1, dtype=i32), out=zeros((N,), output=True))\n"
                         "@jit\ndef g(x, idx, out, N, BLOCK: constexpr):\n"
                         "    offs = program_id(0) * BLOCK + arange(0, BLOCK)\n"
                         "    k = load(idx + offs, mask=offs < N)\n"
                         "    store(out + offs, load(x + k, mask=offs < N), mask=offs < N)\n");
  ASSERT_TRUE(k);
  runBothModes(*k, [](const Memory& mem, int nw) {
    const Buffer *x = mem.find("x"), *out = mem.find("out");
    for (int64_t i = 0; i < 300; ++i) EXPECT_EQ(out->getF(i), x->getF(299 - i)) << i << " at " << nw << " warps";
  });
}

// trans of a data-dependent pointer tile: addresses never move between threads, so the load
// through them follows their (transposed) layout in both modes.
TEST(KeepLayoutsExecuted, TransOfGatheredPointers) {
  auto k = compileSource("transptr",
                         "@launch(M=20, N=12, BM=8, BN=16, grid=(cdiv(M, BM), cdiv(N, BN)), x=randn((M * N,), seed=4),\n"
                         "        idx=arange((M, N), start=M * N - 1, step=-1, dtype=i32), y=zeros((N, M), output=True))\n"
                         "@jit\ndef tp(x, idx, y, M, N, BM: constexpr, BN: constexpr):\n"
                         "    i = program_id(0) * BM + arange(0, BM)\n"
                         "    j = program_id(1) * BN + arange(0, BN)\n"
                         "    m = (i[:, None] < M) & (j[None, :] < N)\n"
                         "    p = trans(x + load(idx + i[:, None] * N + j[None, :], mask=m))\n"
                         "    store(y + j[:, None] * M + i[None, :], load(p, mask=trans(m)), mask=trans(m))\n");
  ASSERT_TRUE(k);
  runBothModes(*k, [](const Memory& mem, int nw) {
    const Buffer *x = mem.find("x"), *y = mem.find("y");
    for (int64_t i = 0; i < 20; ++i)
      for (int64_t j = 0; j < 12; ++j)
        EXPECT_EQ(y->getF(j * 20 + i), x->getF(20 * 12 - 1 - (i * 12 + j))) << i << "," << j << " at " << nw << " warps";
  });
}

// Two loaded tiles in different anchors meet after some math: the one read along the other
// dimension is re-read in the other's layout (its load moves, through the elementwise ops), so
// nothing converts; y = exp(x) + exp(x^T) on a square tile.
TEST(KeepLayoutsExecuted, TilesMeetingAfterMathReadInOneLayout) {
  auto k = compileSource("meet",
                         "@launch(N=40, B=16, grid=(cdiv(N, B), cdiv(N, B)), x=randn((N, N), seed=9), y=zeros((N, N), output=True))\n"
                         "@jit\ndef meet(x, y, N, B: constexpr):\n"
                         "    i = program_id(0) * B + arange(0, B)\n"
                         "    j = program_id(1) * B + arange(0, B)\n"
                         "    m = (i[:, None] < N) & (j[None, :] < N)\n"
                         "    a = exp(load(x + i[:, None] * N + j[None, :], mask=m))\n"
                         "    b = exp(load(x + j[None, :] * N + i[:, None], mask=m) * 2.0)\n"
                         "    store(y + i[:, None] * N + j[None, :], a + b, mask=m)\n");
  ASSERT_TRUE(k);
  runBothModes(*k, [](const Memory& mem, int nw) {
    const Buffer *x = mem.find("x"), *y = mem.find("y");
    for (int64_t i = 0; i < 40; ++i)
      for (int64_t j = 0; j < 40; ++j) {
        double want = std::exp(x->getF(i * 40 + j)) + std::exp(2.0 * x->getF(j * 40 + i));
        EXPECT_NEAR(y->getF(i * 40 + j), want, 1e-4 * std::max(1.0, std::abs(want))) << i << "," << j << " at " << nw;
      }
  });
}

}  // namespace
}  // namespace tl::layout_test
