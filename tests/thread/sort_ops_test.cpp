// tl.sort, tl.topk, tl.flip, tl.gather, tl.histogram and tl.swizzle2d (lib/frontend/SemaSort.cpp:
// compositions of compare, where, reduce and arange) on every CPU engine — tl-scalar, tl-block
// and the thread executor at num_warps 1, 2, 4 and 8 — against C++ references computed here:
// std::stable_sort with NaN after every number (descending: the reverse order, NaN first),
// reversal, indexing and counting, on 1-D tiles and on 2-D ones (whose selection tiles are
// 3-D). Inputs hold duplicates, -0.0 next to +0.0 (a stable sort
// keeps their order), +-inf and NaN; sizes from smaller than a warp to several warps. Also the
// front end's located errors.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>

#include "../common/TempDir.h"
#include "new_ops_util.h"

namespace tl::newops {
namespace {

uint32_t lcg(uint32_t& s) { return s = s * 1664525u + 1013904223u; }

std::vector<float> mixedFloats(int64_t n) {
  const float pool[] = {-1.5f, 0.0f, -0.0f, 2.0f, INFINITY, -INFINITY, NAN, 0.25f};
  std::vector<float> x(static_cast<size_t>(n));
  uint32_t s = 12345;
  for (auto& v : x) {
    const uint32_t r = lcg(s) >> 8;
    v = r % 3 == 0 ? pool[(r / 3) % 8] : static_cast<float>(static_cast<int>(r % 2001) - 1000) / 64.0f;
  }
  return x;
}

void fill(Buffer& b, const std::vector<float>& v) { std::memcpy(b.bytes.data(), v.data(), v.size() * 4); }
void fill(Buffer& b, const std::vector<int32_t>& v) { std::memcpy(b.bytes.data(), v.data(), v.size() * 4); }

bool sameFloat(float a, float b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  uint32_t x, y;
  std::memcpy(&x, &a, 4);
  std::memcpy(&y, &b, 4);
  return x == y;  // -0.0 and +0.0 differ
}

void expectFloats(const Buffer& got, const std::vector<float>& want, const std::string& what) {
  ASSERT_EQ(got.numel(), static_cast<int64_t>(want.size())) << what;
  int bad = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    float g;
    std::memcpy(&g, got.bytes.data() + i * 4, 4);
    if (!sameFloat(g, want[i]) && bad++ < 5) ADD_FAILURE() << what << "[" << i << "] = " << g << ", expected " << want[i];
  }
}

void expectInts(const Buffer& got, const std::vector<int32_t>& want, const std::string& what) {
  ASSERT_EQ(got.numel(), static_cast<int64_t>(want.size())) << what;
  int bad = 0;
  for (size_t i = 0; i < want.size(); ++i)
    if (got.getI(static_cast<int64_t>(i)) != want[i] && bad++ < 5)
      ADD_FAILURE() << what << "[" << i << "] = " << got.getI(static_cast<int64_t>(i)) << ", expected " << want[i];
}

TEST(SortOps, OneDimEveryEngine) {
  for (int64_t n : {8, 64, 128}) {
    const int64_t k = std::min<int64_t>(8, n), bins = 16;
    const std::vector<float> x = mixedFloats(n);
    std::vector<int32_t> idx(static_cast<size_t>(n)), v(static_cast<size_t>(n));
    uint32_t s = 777;
    for (auto& i : idx) i = static_cast<int32_t>(lcg(s) >> 8) % static_cast<int32_t>(n);
    for (auto& i : v) i = static_cast<int32_t>((lcg(s) >> 8) % (bins + 4)) - 2;

    auto asc = x, desc = x;
    std::stable_sort(asc.begin(), asc.end(), [](float a, float b) { return a < b || (!std::isnan(a) && std::isnan(b)); });
    std::stable_sort(desc.begin(), desc.end(), [](float a, float b) { return a > b || (std::isnan(a) && !std::isnan(b)); });
    const std::vector<float> top(desc.begin(), desc.begin() + k);
    const std::vector<float> flip(x.rbegin(), x.rend());
    std::vector<float> gat;
    for (int32_t i : idx) gat.push_back(x[static_cast<size_t>(i)]);
    std::vector<int32_t> hist(static_cast<size_t>(bins), 0), isort = v;
    for (int32_t i : v)
      if (i >= 0 && i < bins) ++hist[static_cast<size_t>(i)];
    std::stable_sort(isort.begin(), isort.end());

    const std::vector<LaunchOverride> ov = {{"N", std::to_string(n)}, {"K", std::to_string(k)}};
    int runs = 0;
    forEachEngine(
        "sort_ops", ov,
        [&](Memory& m) {
          fill(*m.find("x_ptr"), x);
          fill(*m.find("idx_ptr"), idx);
          fill(*m.find("v_ptr"), v);
        },
        [&](const Memory& m, const std::string& engine) {
          const std::string at = "N=" + std::to_string(n) + ", " + engine + ": ";
          expectFloats(*m.find("asc_ptr"), asc, at + "sort");
          expectFloats(*m.find("desc_ptr"), desc, at + "sort(descending=True)");
          expectFloats(*m.find("top_ptr"), top, at + "topk");
          expectFloats(*m.find("flip_ptr"), flip, at + "flip");
          expectFloats(*m.find("gat_ptr"), gat, at + "gather");
          expectInts(*m.find("hist_ptr"), hist, at + "histogram");
          expectInts(*m.find("isort_ptr"), isort, at + "v.sort()");
          ++runs;
        });
    EXPECT_EQ(runs, 6) << "N=" << n;
  }
}

// A 2-D tile: rows sorted descending, rows reversed (flip along 0), gather along axis 0.
TEST(SortOps, TwoDimEveryEngine) {
  for (auto [m, n] : std::vector<std::pair<int, int>>{{4, 16}, {8, 8}}) {
    const std::vector<float> x = mixedFloats(int64_t(m) * n);
    std::vector<int32_t> idx(x.size());
    uint32_t s = 99;
    for (auto& i : idx) i = static_cast<int32_t>(lcg(s) >> 8) % m;
    std::vector<float> srt(x.size()), flp(x.size()), gat(x.size());
    for (int i = 0; i < m; ++i) {
      std::vector<float> row(x.begin() + i * n, x.begin() + (i + 1) * n);
      std::stable_sort(row.begin(), row.end(), [](float a, float b) { return a > b || (std::isnan(a) && !std::isnan(b)); });
      std::copy(row.begin(), row.end(), srt.begin() + i * n);
      for (int j = 0; j < n; ++j) {
        flp[size_t(i * n + j)] = x[size_t((m - 1 - i) * n + j)];
        gat[size_t(i * n + j)] = x[size_t(idx[size_t(i * n + j)] * n + j)];
      }
    }
    const std::vector<LaunchOverride> ov = {{"M", std::to_string(m)}, {"N", std::to_string(n)}};
    forEachEngine(
        "sort_2d", ov,
        [&](Memory& mem) {
          fill(*mem.find("x"), x);
          fill(*mem.find("idx"), idx);
        },
        [&](const Memory& mem, const std::string& engine) {
          const std::string at = std::to_string(m) + "x" + std::to_string(n) + ", " + engine + ": ";
          expectFloats(*mem.find("srt"), srt, at + "sort(descending=True) of rows");
          expectFloats(*mem.find("flp"), flp, at + "flip(x, 0)");
          expectFloats(*mem.find("gat"), gat, at + "gather(x, idx, 0)");
        });
  }
}

// triton/language/standard.py's swizzle2d, written out: groups of size_g rows walked by column.
TEST(SortOps, Swizzle2dEveryEngine) {
  for (auto [M, N, G] : std::vector<std::array<int, 3>>{{5, 6, 2}, {8, 3, 3}, {4, 4, 4}}) {
    std::vector<int32_t> want(static_cast<size_t>(M * N));
    for (int i = 0; i < M; ++i)
      for (int j = 0; j < N; ++j) {
        const int ij = i * N + j, sizeGj = G * N, group = ij / sizeGj, off = group * G;
        const int rows = std::min(M - off, G);
        const int i2 = off + (ij % sizeGj) % rows, j2 = (ij % sizeGj) / rows;
        want[static_cast<size_t>(ij)] = i2 * N + j2;
      }
    const std::vector<LaunchOverride> ov = {{"M", std::to_string(M)}, {"N", std::to_string(N)}, {"G", std::to_string(G)}};
    forEachEngine("swizzle", ov, nullptr, [&](const Memory& m, const std::string& engine) {
      expectInts(*m.find("out_ptr"), want, "M=" + std::to_string(M) + " G=" + std::to_string(G) + ", " + engine);
    });
  }
}

std::string frontEndError(const std::string& body) {
  const std::string path = test::uniqueTempFile("sort_frontend");
  {
    std::ofstream out(path);
    out << "import triton\nimport triton.language as tl\n\n@launch(N=16, grid=(1,), x_ptr=randn(N), i_ptr=zeros(N, dtype=i32), "
           "y_ptr=zeros(N, output=True))\n@triton.jit\ndef k(x_ptr, i_ptr, y_ptr, N: tl.constexpr):\n"
           "    offs = tl.arange(0, N)\n    x = tl.load(x_ptr + offs)\n    i = tl.load(i_ptr + offs)\n"
        << body;
  }
  std::ostringstream err;
  auto k = compileKernelFile(path, {}, err);
  EXPECT_FALSE(k) << body;
  return err.str();
}

TEST(SortOps, BadUsesAreLocatedErrors) {
  EXPECT_NE(frontEndError("    tl.store(y_ptr + offs, tl.topk(x, 3))\n").find("sort_frontend.tl:10:39: error: topk() k must be a power of two from 1 to 16, got 3"),
            std::string::npos);
  EXPECT_NE(frontEndError("    tl.store(y_ptr + offs, tl.gather(x, x, 0))\n").find("gather() index must be an i32 or i64 tile, got <16xf32>"),
            std::string::npos);
  EXPECT_NE(frontEndError("    tl.store(y_ptr + offs, tl.sort(x, 1))\n").find("sort() dimension 1 is outside a tile of rank 1"),
            std::string::npos);
  EXPECT_NE(frontEndError("    tl.store(y_ptr + offs, tl.histogram(x, 16))\n").find("histogram() input must be a 1-D i32 or i64 tile"),
            std::string::npos);
  EXPECT_NE(frontEndError("    tl.store(y_ptr + offs, tl.sort(3.0))\n").find("sort() input must be a tile"), std::string::npos);
}

}  // namespace
}  // namespace tl::newops
