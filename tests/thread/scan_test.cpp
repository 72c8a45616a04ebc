// tl.cumsum, tl.cumprod and tl.associative_scan (the block op `scan`) in every CPU engine:
// tl-scalar and tl-block against C++ references computed here from the input (sequential, in
// double for floats, wrapping for ints), tl-block equal to tl-scalar bit for bit (the same
// order), the thread executor after the real pipeline at num_warps 1, 2, 4 and 8 (and with
// --keep-layouts' layouts) within the float tolerance and exactly for ints, max/min and
// counts. Sizes put the axis in registers, lanes, warps and several repetitions of the layout
// tile, or make the tile smaller than the threads along it (replicas); a scan of a reduction's
// result (a slice layout) and scans in a loop (scan_slice.tl). Also: the lowering uses
// only existing thread ops (shfl_idx, shared memory, barriers) with one shared buffer per scan
// across warps; a missing barrier is a race the executor reports; the verifier's rules; the
// printer/parser round trip; the front end's located errors.
#include <cmath>
#include <fstream>

#include "../common/TempDir.h"
#include "ir/Parser.h"
#include "ir/Printer.h"
#include "ir/Verifier.h"
#include "new_ops_util.h"

namespace tl::newops {
namespace {

using Ref = std::vector<double>;

// The inclusive scan of line `v` (sequential, from the end when reverse).
template <class F>
Ref scanLine(const Ref& v, bool reverse, F combine) {
  Ref out(v.size());
  const size_t n = v.size();
  for (size_t j = 0; j < n; ++j) {
    const size_t k = reverse ? n - 1 - j : j;
    out[k] = j == 0 ? v[k] : combine(out[reverse ? k + 1 : k - 1], v[k]);
  }
  return out;
}

// The scan of an M x N row-major tile along `axis`.
template <class F>
Ref scanTile(const Ref& x, int64_t M, int64_t N, int axis, bool reverse, F combine) {
  Ref out(x.size());
  const int64_t lines = axis == 0 ? N : M, len = axis == 0 ? M : N;
  for (int64_t l = 0; l < lines; ++l) {
    Ref line(static_cast<size_t>(len));
    auto at = [&](int64_t k) { return static_cast<size_t>(axis == 0 ? k * N + l : l * N + k); };
    for (int64_t k = 0; k < len; ++k) line[static_cast<size_t>(k)] = x[at(k)];
    Ref s = scanLine(line, reverse, combine);
    for (int64_t k = 0; k < len; ++k) out[at(k)] = s[static_cast<size_t>(k)];
  }
  return out;
}

Ref values(const Buffer& b) {
  Ref r(static_cast<size_t>(b.numel()));
  for (int64_t i = 0; i < b.numel(); ++i) r[static_cast<size_t>(i)] = b.getF(i);
  return r;
}

int32_t wrap32(int64_t v) { return static_cast<int32_t>(static_cast<uint32_t>(v)); }

// Floats: within 1e-5 of the prefix's magnitude (a sum of |terms|), which rounding in any order
// stays inside and a wrong or missing element does not.
void expectClose(const Buffer& got, const Ref& want, const Ref& scale, const std::string& what) {
  int bad = 0;
  for (int64_t i = 0; i < got.numel(); ++i) {
    const double g = got.getF(i), w = want[static_cast<size_t>(i)];
    const double tol = 1e-5 * scale[static_cast<size_t>(i)] + 1e-6;
    if (!(std::fabs(g - w) <= tol) && bad++ < 5) ADD_FAILURE() << what << "[" << i << "] = " << g << ", expected " << w;
  }
}

void expectExact(const Buffer& got, const Ref& want, const std::string& what) {
  int bad = 0;
  for (int64_t i = 0; i < got.numel(); ++i)
    if (got.getF(i) != want[static_cast<size_t>(i)] && bad++ < 5)
      ADD_FAILURE() << what << "[" << i << "] = " << got.getF(i) << ", expected " << want[static_cast<size_t>(i)];
}

// Every engine, plus the executor with keep-layouts' layouts, with one check.
void everyEngine(const std::string& stem, const std::vector<LaunchOverride>& ov, const Check& check, int& runs) {
  forEachEngine(stem, ov, nullptr, [&](const Memory& m, const std::string& engine) {
    check(m, engine);
    ++runs;
  });
  auto k = compileNewOpsKernel(stem, ov);
  ASSERT_TRUE(k);
  for (int nw : {1, 4}) {
    ThreadCompileOptions o;
    o.numWarps = nw;
    o.keepLayouts = true;
    ThreadCompilation tc = compileToThreadIR(*k->ir, k->launch, o);
    Memory t = Memory::fromLaunch(k->launch);
    runThreadIR(*tc.threadIR, k->launch, t);
    check(t, "executor --keep-layouts, num_warps " + std::to_string(nw));
    ++runs;
  }
}

TEST(Scan, OneDimEveryFormEveryEngine) {
  for (int64_t n : {8, 32, 256, 4096})  // smaller than 128 threads, one warp, lanes and warps, 8 layout tiles
    for (int rev : {0, 1}) {
      const std::vector<LaunchOverride> ov = {{"N", std::to_string(n)}, {"REV", std::to_string(rev)}};
      const std::string tag = "N=" + std::to_string(n) + " REV=" + std::to_string(rev) + ", ";
      std::vector<uint8_t> scalarFs;
      int runs = 0;
      everyEngine("scan_1d", ov, [&](const Memory& m, const std::string& engine) {
        const Ref x = values(*m.find("x_ptr"));
        Ref xi(x.size()), sign(x.size()), pos(x.size()), absx(x.size()), near1(x.size());
        for (size_t i = 0; i < x.size(); ++i) {
          const float xf = static_cast<float>(x[i]);
          xi[i] = static_cast<int32_t>(xf * 8.0f);
          sign[i] = xi[i] > 0 ? 1 : -1;
          pos[i] = xf > 0;
          absx[i] = std::fabs(x[i]);
          near1[i] = 1.0f + xf * 0.01f;
        }
        const bool r = rev != 0;
        auto add = [](double a, double b) { return a + b; };
        const Ref scale = scanLine(absx, r, add);
        const std::string at = tag + engine + ": ";
        expectClose(*m.find("fs_ptr"), scanLine(x, r, add), scale, at + "cumsum");
        expectClose(*m.find("fa_ptr"), scanLine(x, r, add), scale, at + "associative_scan(a + b)");
        const Ref prod = scanLine(near1, r, [](double a, double b) { return a * b; });
        expectClose(*m.find("fp_ptr"), prod, prod, at + "x.cumprod");
        expectExact(*m.find("is_ptr"), scanLine(xi, r, [](double a, double b) { return double(wrap32(int64_t(a) + int64_t(b))); }),
                    at + "cumsum i32");
        expectExact(*m.find("ip_ptr"), scanLine(sign, r, [](double a, double b) { return a * b; }), at + "cumprod i32");
        expectExact(*m.find("im_ptr"), scanLine(xi, r, [](double a, double b) { return std::min(a, b); }),
                    at + "associative_scan(minimum(b, a))");
        expectExact(*m.find("cnt_ptr"), scanLine(pos, r, add), at + "cumsum of i1");
        // tl-block adds in the reference's order: bit for bit equal to tl-scalar.
        if (engine == "tl-scalar") scalarFs = m.find("fs_ptr")->bytes;
        if (engine == "tl-block") EXPECT_EQ(m.find("fs_ptr")->bytes, scalarFs) << at;
      }, runs);
      EXPECT_EQ(runs, 8) << tag;  // scalar, block, 4 executor runs, 2 with keep-layouts
    }
}

TEST(Scan, TwoDimAlongEachAxisEveryEngine) {
  // (M, N): lanes along both dims, a long row (layout repetitions), two columns (a tile smaller
  // than the threads along it), a tiny tile.
  const std::vector<std::pair<int64_t, int64_t>> sizes = {{16, 64}, {4, 1024}, {128, 2}, {2, 2}};
  for (auto [M, N] : sizes)
    for (int axis : {0, 1})
      for (int rev : {0, 1}) {
        const std::vector<LaunchOverride> ov = {{"M", std::to_string(M)}, {"N", std::to_string(N)},
                                                {"AXIS", std::to_string(axis)}, {"REV", std::to_string(rev)}};
        const std::string tag = "M=" + std::to_string(M) + " N=" + std::to_string(N) + " AXIS=" + std::to_string(axis) +
                                " REV=" + std::to_string(rev) + ", ";
        int runs = 0;
        everyEngine("scan_2d", ov, [&](const Memory& m, const std::string& engine) {
          const Ref x = values(*m.find("x_ptr"));
          Ref absx(x.size()), near1(x.size());
          for (size_t i = 0; i < x.size(); ++i) {
            absx[i] = std::fabs(x[i]);
            near1[i] = 1.0f + static_cast<float>(x[i]) * 0.01f;
          }
          const bool r = rev != 0;
          auto add = [](double a, double b) { return a + b; };
          const std::string at = tag + engine + ": ";
          expectClose(*m.find("s_ptr"), scanTile(x, M, N, axis, r, add), scanTile(absx, M, N, axis, r, add), at + "cumsum");
          const Ref prod = scanTile(near1, M, N, axis, r, [](double a, double b) { return a * b; });
          expectClose(*m.find("p_ptr"), prod, prod, at + "cumprod");
          expectExact(*m.find("m_ptr"), scanTile(x, M, N, axis, r, [](double a, double b) { return std::max(a, b); }),
                      at + "associative_scan(maximum)");
        }, runs);
        EXPECT_EQ(runs, 8) << tag;
      }
}

// A scan of a reduction's result (its operand in a slice layout) and scans in a loop.
TEST(Scan, SliceOperandAndLoop) {
  for (const char* rows : {"64", "16"}) {
    int runs = 0;
    everyEngine("scan_slice", {{"M", rows}}, [&](const Memory& m, const std::string& engine) {
      const Buffer& xb = *m.find("x_ptr");
      const int64_t M = xb.shape[0], N = xb.shape[1];
      const Ref x = values(xb);
      Ref rowMax(static_cast<size_t>(M), -INFINITY), absMax(static_cast<size_t>(M));
      for (int64_t i = 0; i < M; ++i)
        for (int64_t j = 0; j < N; ++j) rowMax[size_t(i)] = std::max(rowMax[size_t(i)], x[size_t(i * N + j)]);
      for (int64_t i = 0; i < M; ++i) absMax[size_t(i)] = std::fabs(rowMax[size_t(i)]);
      auto add = [](double a, double b) { return a + b; };
      const std::string at = engine + ": ";
      expectClose(*m.find("y_ptr"), scanLine(rowMax, true, add), scanLine(absMax, true, add), at + "cumsum of a row max");
      Ref acc(x.size(), 0.0), scale(x.size(), 0.0), absx(x.size());
      for (size_t e = 0; e < x.size(); ++e) absx[e] = std::fabs(x[e]);
      const Ref colAbs = scanTile(absx, M, N, 0, false, add);
      for (int i = 0; i < 3; ++i) {
        Ref xs(x.size());
        for (size_t e = 0; e < x.size(); ++e) xs[e] = x[e] * (i + 1);
        const Ref c = scanTile(xs, M, N, 0, false, add);
        for (size_t e = 0; e < x.size(); ++e) {
          acc[e] += c[e];
          scale[e] += colAbs[e] * (i + 1) * N;  // every running max may carry any earlier column's sum
        }
        acc = scanTile(acc, M, N, 1, false, [](double a, double b) { return std::max(a, b); });
      }
      expectClose(*m.find("z_ptr"), acc, scale, at + "loop of cumsum and running max");
    }, runs);
    EXPECT_EQ(runs, 8);
  }
}

// The thread IR of a 1-D cumsum across 4 warps: shuffles by lane index, one "scan across
// warps" buffer with a barrier on each side; at one warp no shared memory at all. Only ops
// that existed before the scan (so the executor, the timing model and PTX need nothing new).
TEST(Scan, LoweringUsesExistingThreadOps) {
  for (int nw : {1, 4}) {
    auto k = compileNewOpsKernel("scan_1d", {{"N", "1024"}});
    ASSERT_TRUE(k);
    ThreadCompilation tc = compileToThreadIR(*k->ir, k->launch, nw);
    int shfl = 0, barriers = 0, scans = 0;
    walk(tc.threadIR->body, [&](Op& op) {
      shfl += op.kind == OpKind::ShflIdx;
      barriers += op.kind == OpKind::Barrier;
      scans += op.kind == OpKind::Scan;
      EXPECT_TRUE(op.info().levels != OpLevels::Block) << mnemonic(op.kind);
    });
    EXPECT_EQ(scans, 0);
    EXPECT_GT(shfl, 0) << nw;
    // 7 scans, of which cumsum(x) and associative_scan(x, 0, _add) are one op after cse: two
    // barriers each across warps, none in one warp; the last scan's second barrier is dropped
    // (nothing after it touches shared memory).
    EXPECT_EQ(barriers, nw == 1 ? 0 : 11) << nw;
    EXPECT_EQ(tc.threadIR->sharedBytes > 0, nw > 1) << nw;
  }
}

// Removing the barrier after the partials are stored is a race the executor reports.
TEST(Scan, MissingBarrierIsARace) {
  auto k = compileNewOpsKernel("scan_1d", {{"N", "1024"}});
  ASSERT_TRUE(k);
  ThreadCompilation tc = compileToThreadIR(*k->ir, k->launch, 4);
  Op* first = nullptr;
  walk(tc.threadIR->body, [&](Op& op) {
    if (!first && op.kind == OpKind::Barrier) first = &op;
  });
  ASSERT_TRUE(first);
  Region* r = first->parent;
  for (size_t i = 0; i < r->ops.size(); ++i)
    if (r->ops[i].get() == first) {
      r->ops.erase(r->ops.begin() + static_cast<std::ptrdiff_t>(i));
      break;
    }
  Memory m = Memory::fromLaunch(k->launch);
  try {
    runThreadIR(*tc.threadIR, k->launch, m);
    ADD_FAILURE() << "no race reported";
  } catch (const RuntimeError& e) {
    EXPECT_NE(std::string(e.what()).find("race"), std::string::npos) << e.what();
    EXPECT_EQ(e.loc.line, 34u);  // the first scan: tl.cumsum(x, 0, reverse=REV)
  }
}

TEST(Scan, VerifierAndRoundTrip) {
  auto k = compileNewOpsKernel("scan_2d", {{"REV", "1"}});
  ASSERT_TRUE(k);
  const std::string text = printFunction(*k->ir);
  EXPECT_NE(text.find("scan %x {kind = \"sum\", axis = 1, reverse = 1}"), std::string::npos) << text;
  DiagEngine diag;
  auto back = parseFunction(text, diag);
  ASSERT_TRUE(back) << diag.renderAll();
  EXPECT_EQ(printFunction(*back), text);
  // The rules: a known kind, reverse 0 or 1, the operand's type, no i1.
  auto bad = [&](const std::string& from, const std::string& to, const char* message) {
    std::string t = text;
    const size_t at = t.find(from);
    ASSERT_NE(at, std::string::npos) << from;
    t.replace(at, from.size(), to);
    DiagEngine d;
    auto f = parseFunction(t, d);
    const std::string err = f ? verifyFunction(*f) : d.renderAll();
    EXPECT_NE(err.find(message), std::string::npos) << to << ": " << err;
  };
  bad("kind = \"sum\", axis = 1, reverse = 1}", "kind = \"xor\", axis = 1, reverse = 1}", "unknown value 'xor'");
  bad("kind = \"sum\", axis = 1, reverse = 1}", "kind = \"sum\", axis = 1, reverse = 2}", "'reverse' = 2 out of range");
  bad("kind = \"sum\", axis = 1, reverse = 1}", "kind = \"sum\", axis = 2, reverse = 1}", "'axis' = 2 out of range");
}

// Compiles `body` as a kernel with x_ptr (f32, 8 x 4) and a @jit helper `comb` written as `combine`.
std::unique_ptr<CompiledKernel> compileScanBody(const std::string& combine, const std::string& body, std::string& errors) {
  const std::string path = test::uniqueTempFile("scan_frontend");
  {
    std::ofstream out(path);
    out << "import triton\nimport triton.language as tl\n@triton.jit\ndef comb(a, b):\n    " << combine << "\n"
        << "@launch(grid=(1,), x_ptr=zeros((8, 4), output=True), n=3)\n"
           "@triton.jit\ndef k(x_ptr, n):\n"
           "    x = tl.load(x_ptr + tl.arange(0, 8)[:, None] * 4 + tl.arange(0, 4)[None, :])\n"
        << body;
  }
  std::ostringstream err;
  auto k = compileKernelFile(path, {}, err);
  errors = err.str();
  return k;
}

TEST(Scan, FrontEndErrorsAreLocated) {
  struct Case {
    const char* combine;
    const char* body;
    const char* message;
  };
  const Case cases[] = {
      {"return a + b", "    y = tl.cumsum(x, 2)\n", "cumsum() axis 2 is out of range for <8x4xf32>"},
      {"return a + b", "    y = tl.cumprod(x, -3)\n", "cumprod() axis -3 is out of range"},
      {"return a + b", "    y = tl.cumsum(n)\n", "cumsum() scans a tile along an axis"},
      {"return a + b", "    y = tl.cumsum(x, n)\n", "must be a compile-time constant"},
      {"return a + b", "    y = tl.cumsum(x, 0, reverse=n > 1)\n", "reverse must be a compile-time True or False"},
      {"return a - b", "    y = tl.associative_scan(x, 0, comb)\n", "combine_fn 'comb' is not supported"},
      {"return a + a", "    y = tl.associative_scan(x, 0, comb)\n", "combine_fn 'comb' is not supported"},
      {"return a + b", "    y = tl.associative_scan(x, 0, 3)\n", "combine_fn must be a @jit function"},
      {"return a + b", "    y = tl.associative_scan(x > 0, 0, comb)\n", "associative_scan() of an int1 tile"},
      {"return a + b", "    y = tl.associative_scan((x, x), 0, comb)\n", "multi-operand scan"},
  };
  for (const Case& c : cases) {
    std::string errors;
    auto k = compileScanBody(c.combine, c.body, errors);
    EXPECT_FALSE(k) << c.body;
    EXPECT_NE(errors.find(c.message), std::string::npos) << c.body << errors;
    EXPECT_NE(errors.find("scan_frontend.tl:10:"), std::string::npos) << errors;  // the line of the call
  }
}

// The accepted combine forms give the matching kind; negative axes count from the end.
TEST(Scan, FrontEndKinds) {
  struct Case {
    const char* combine;
    const char* kind;
  };
  const Case cases[] = {{"return a + b", "sum"},           {"return b * a", "prod"},
                        {"return tl.maximum(a, b)", "max"}, {"return tl.minimum(b, a)", "min"},
                        {"\"\"\"doc\"\"\"\n    return max(a, b)", "max"}};
  for (const Case& c : cases) {
    std::string errors;
    auto k = compileScanBody(c.combine, "    tl.store(x_ptr + tl.arange(0, 8)[:, None] * 4 + tl.arange(0, 4)[None, :], "
                                        "tl.associative_scan(x, -1, comb, reverse=True))\n",
                             errors);
    ASSERT_TRUE(k) << c.combine << errors;
    int found = 0;
    walk(k->ir->body, [&](Op& op) {
      if (op.kind != OpKind::Scan) return;
      ++found;
      EXPECT_EQ(op.strAttr("kind"), c.kind) << c.combine;
      EXPECT_EQ(op.intAttr("axis"), 1);
      EXPECT_EQ(op.intAttr("reverse"), 1);
    });
    EXPECT_EQ(found, 1) << c.combine;
  }
}

}  // namespace
}  // namespace tl::newops

namespace tl::newops {
namespace {

// tl.reduce with each recognized combine function, against C++ sums, maxima and minima.
TEST(UserReduce, CombineFunctionsEveryEngine) {
  for (auto [m, n] : std::vector<std::pair<int, int>>{{8, 32}, {4, 256}, {16, 8}}) {
    const std::vector<LaunchOverride> ov = {{"M", std::to_string(m)}, {"N", std::to_string(n)}};
    forEachEngine("reduce_fn", ov, nullptr, [&](const Memory& mem, const std::string& engine) {
      const Buffer& x = *mem.find("x_ptr");
      const std::string at = std::to_string(m) + "x" + std::to_string(n) + ", " + engine + ": ";
      double all = INFINITY;
      for (int i = 0; i < m; ++i) {
        double sum = 0, absSum = 0;
        int32_t imin = INT32_MAX;
        for (int j = 0; j < n; ++j) {
          const double v = x.getF(i * n + j);
          sum += v;
          absSum += std::fabs(v);
          all = std::min(all, v);
          imin = std::min(imin, static_cast<int32_t>(static_cast<float>(v) * 16.0f));
        }
        EXPECT_NEAR(mem.find("rows_ptr")->getF(i), sum, 1e-5 * absSum + 1e-6) << at << "row " << i;
        EXPECT_EQ(mem.find("imin_ptr")->getI(i), imin) << at << "row " << i;
      }
      for (int j = 0; j < n; ++j) {
        double mx = -INFINITY;
        for (int i = 0; i < m; ++i) mx = std::max(mx, x.getF(i * n + j));
        EXPECT_EQ(mem.find("cols_ptr")->getF(j), mx) << at << "column " << j;
      }
      EXPECT_EQ(mem.find("all_ptr")->getF(0), all) << at;
    });
  }
}

TEST(UserReduce, FrontEndErrorsAreLocated) {
  struct Case {
    const char* combine;
    const char* body;
    const char* message;
  };
  const Case cases[] = {
      {"return a - b", "    y = tl.reduce(x, 0, comb)\n", "reduce() combine_fn 'comb' is not supported"},
      {"return a * b", "    y = tl.reduce(x, 0, comb)\n", "reduce() with a product combine_fn is not supported"},
      {"return a + b", "    y = tl.reduce(x, 2, comb)\n", "reduce() axis 2 is out of range for <8x4xf32>"},
      {"return a + b", "    y = tl.reduce(n, 0, comb)\n", "reduce() reduces a tile along an axis"},
      {"return a + b", "    y = tl.reduce(x, 0, 3)\n", "reduce() combine_fn must be a @jit function"},
  };
  for (const Case& c : cases) {
    std::string errors;
    auto k = compileScanBody(c.combine, c.body, errors);
    EXPECT_FALSE(k) << c.body;
    EXPECT_NE(errors.find(c.message), std::string::npos) << c.body << errors;
    EXPECT_NE(errors.find("scan_frontend.tl:10:"), std::string::npos) << errors;
  }
}

}  // namespace
}  // namespace tl::newops
