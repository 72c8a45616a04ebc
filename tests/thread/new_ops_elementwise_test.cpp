// Issue 12's elementwise ops in every CPU engine, against exact C++ references: log2, cos, sin,
// floor, ceil, erf, fma and clamp (tests/thread/kernels/new_elementwise.tl), and shl, shr and
// umulhi on i32 and i64 with the edge cases (tests/thread/kernels/new_intops.tl): shifts by 0,
// 31, 32, 63 and by negative amounts, >> of negative numbers (arithmetic), umulhi of negative
// values read as unsigned. The CPU engines compute floats with libm's float functions, so they
// must match bit for bit; erf is also held to the true (double) erf within 1e-6.
#include <cmath>
#include <cstring>

#include "new_ops_util.h"
#include "runtime/FloatOps.h"

namespace tl::newops {
namespace {

bool sameFloat(float a, float b) { return (std::isnan(a) && std::isnan(b)) || std::memcmp(&a, &b, 4) == 0; }

TEST(NewElementwise, EveryEngineMatchesLibm) {
  // Edge values in x: negatives around integers for floor/ceil, +-0, large arguments for cos/sin.
  const std::vector<float> edges = {-2.5f, -2.0f, -1.5f, -0.5f, -0.0f, 0.0f, 0.5f, 1.0f, 2.999f, -3.0001f, 9.75f, -9.75f};
  auto prepare = [&](Memory& m) {
    Buffer* x = m.find("x_ptr");
    for (size_t i = 0; i < edges.size(); ++i) x->setF(int64_t(i), edges[i]);
    Buffer* y = m.find("y_ptr");
    y->setF(0, 0.0);
    y->setF(1, -3.9);
    y->setF(2, 1e-4);
  };
  int checked = 0;
  forEachEngine("new_elementwise", {}, prepare, [&](const Memory& m, const std::string& engine) {
    const Buffer &x = *m.find("x_ptr"), &y = *m.find("y_ptr"), &z = *m.find("z_ptr");
    const int64_t n = x.numel();
    int bad = 0;
    auto expect = [&](const char* out, int64_t i, float want) {
      const float got = static_cast<float>(m.find(out)->getF(i));
      if (!sameFloat(got, want) && bad++ < 5)
        ADD_FAILURE() << engine << ": " << out << "[" << i << "] = " << got << ", expected " << want;
    };
    for (int64_t i = 0; i < n; ++i) {
      const float xi = float(x.getF(i)), yi = float(y.getF(i)), zi = float(z.getF(i));
      expect("log2_ptr", i, log2f(std::fabs(xi) + 0.001f));
      expect("cos_ptr", i, cosf(xi));
      expect("sin_ptr", i, sinf(xi));
      expect("floor_ptr", i, floorf(xi));
      expect("ceil_ptr", i, ceilf(xi));
      expect("erf_ptr", i, erff(yi));
      expect("fma_ptr", i, fmaf(xi, yi, zi));
      expect("clamp_ptr", i, std::min(std::max(xi, -2.5f), 3.0f));
      // erf against the true erf (double), and floor/ceil of the negative edges by hand
      EXPECT_NEAR(m.find("erf_ptr")->getF(i), std::erf(double(yi)), 1e-6) << engine << " erf(" << yi << ")";
    }
    EXPECT_EQ(m.find("floor_ptr")->getF(0), -3.0) << engine;  // floor(-2.5)
    EXPECT_EQ(m.find("ceil_ptr")->getF(0), -2.0) << engine;   // ceil(-2.5)
    EXPECT_EQ(m.find("floor_ptr")->getF(2), -2.0) << engine;  // floor(-1.5)
    EXPECT_EQ(m.find("ceil_ptr")->getF(3), -0.0) << engine;   // ceil(-0.5) = -0
    EXPECT_TRUE(std::signbit(m.find("ceil_ptr")->getF(3))) << engine;
    EXPECT_EQ(m.find("clamp_ptr")->getF(0), -2.5) << engine;
    EXPECT_EQ(m.find("clamp_ptr")->getF(10), 3.0) << engine;
    ++checked;
  });
  EXPECT_EQ(checked, 6);  // scalar, block, 4 executor runs
}

// fma rounds once: (1 + 2^-23)(1 - 2^-23) - 1 is -2^-46 fused and 0 unfused.
TEST(NewElementwise, FmaRoundsOnce) {
  auto prepare = [](Memory& m) {
    m.find("x_ptr")->setF(0, 1.0 + 0x1p-23);
    m.find("y_ptr")->setF(0, 1.0 - 0x1p-23);
    m.find("z_ptr")->setF(0, -1.0);
  };
  forEachEngine("new_elementwise", {}, prepare, [](const Memory& m, const std::string& engine) {
    EXPECT_EQ(m.find("fma_ptr")->getF(0), -0x1p-46) << engine;
  }, {1, 4});
}

int64_t wrap32(int64_t v) { return static_cast<int32_t>(static_cast<uint32_t>(v)); }

TEST(NewIntOps, ShiftsAndUmulhiOnEdgeCases) {
  // (a, b) pairs for i32 and (c, d) for i64; the rest of the 300 elements keep the launch's
  // aranges (a = -150 + i, b = i: shifts by up to 299, mostly out of range).
  const std::vector<std::pair<int64_t, int64_t>> p32 = {
      {1, 0}, {1, 31}, {1, 32}, {-1, 31}, {-8, 1}, {-8, 31}, {-8, 32}, {-7, 1}, {12345, -1}, {-12345, -1},
      {INT32_MIN, 31}, {INT32_MAX, 31}, {-1, -1}, {-2, 3}, {INT32_MIN, INT32_MIN}, {0x12345678, int64_t(0x9abcdef0) - (int64_t(1) << 32)},
      {7, 4}, {-100, 2}};
  const std::vector<std::pair<int64_t, int64_t>> p64 = {
      {1, 0}, {1, 63}, {1, 64}, {-1, 63}, {-8, 1}, {-8, 63}, {-8, 64}, {-7, 1}, {12345, -1}, {-12345, -1},
      {INT64_MIN, 63}, {INT64_MAX, 63}, {-1, -1}, {-2, 3}, {INT64_MIN, INT64_MIN}, {0x123456789abcdefLL, -0x7edcba9876543210LL},
      {1, 31}, {1, 32}};
  auto prepare = [&](Memory& m) {
    for (size_t i = 0; i < p32.size(); ++i) {
      m.find("a_ptr")->setI(int64_t(i), p32[i].first);
      m.find("b_ptr")->setI(int64_t(i), p32[i].second);
    }
    for (size_t i = 0; i < p64.size(); ++i) {
      m.find("c_ptr")->setI(int64_t(i), p64[i].first);
      m.find("d_ptr")->setI(int64_t(i), p64[i].second);
    }
  };
  int checked = 0;
  forEachEngine("new_intops", {}, prepare, [&](const Memory& m, const std::string& engine) {
    const Buffer &a = *m.find("a_ptr"), &b = *m.find("b_ptr"), &c = *m.find("c_ptr"), &d = *m.find("d_ptr");
    int bad = 0;
    auto expect = [&](const char* out, int64_t i, int64_t want, int64_t x, int64_t y) {
      const int64_t got = m.find(out)->getI(i);
      if (got != want && bad++ < 8)
        ADD_FAILURE() << engine << ": " << out << "[" << i << "] = " << got << ", expected " << want << " for (" << x << ", " << y << ")";
    };
    for (int64_t i = 0; i < a.numel(); ++i) {
      const int64_t x = a.getI(i), y = b.getI(i), u = c.getI(i), v = d.getI(i);
      // Independent definitions (not FloatOps.h's): C++ on the widths, amounts clamped by hand.
      const int64_t shl32 = (y < 0 || y > 31) ? 0 : wrap32(int64_t(uint32_t(x) << y));
      const int64_t shr32 = (y < 0 || y > 31) ? (x < 0 ? -1 : 0) : int64_t(int32_t(x) >> y);
      const int64_t hi32 = wrap32(int64_t((uint64_t(uint32_t(x)) * uint64_t(uint32_t(y))) >> 32));
      const int64_t shl64 = (v < 0 || v > 63) ? 0 : int64_t(uint64_t(u) << v);
      const int64_t shr64 = (v < 0 || v > 63) ? (u < 0 ? -1 : 0) : (u >> v);
      const int64_t hi64 = int64_t(uint64_t((static_cast<unsigned __int128>(uint64_t(u)) * uint64_t(v)) >> 64));
      expect("shl32_ptr", i, shl32, x, y);
      expect("shr32_ptr", i, shr32, x, y);
      expect("hi32_ptr", i, hi32, x, y);
      expect("shl64_ptr", i, shl64, u, v);
      expect("shr64_ptr", i, shr64, u, v);
      expect("hi64_ptr", i, hi64, u, v);
      expect("k_ptr", i, wrap32((x >> 1) + 16 + (i << 2)), x, i);
    }
    // A few by hand.
    EXPECT_EQ(m.find("shl32_ptr")->getI(1), INT32_MIN) << engine;  // 1 << 31
    EXPECT_EQ(m.find("shl32_ptr")->getI(2), 0) << engine;          // 1 << 32
    EXPECT_EQ(m.find("shr32_ptr")->getI(4), -4) << engine;         // -8 >> 1
    EXPECT_EQ(m.find("shr32_ptr")->getI(5), -1) << engine;         // -8 >> 31
    EXPECT_EQ(m.find("shr32_ptr")->getI(7), -4) << engine;         // -7 >> 1 rounds down
    EXPECT_EQ(m.find("hi32_ptr")->getI(12), -2) << engine;         // 0xffffffff^2 >> 32 = 0xfffffffe
    EXPECT_EQ(m.find("hi64_ptr")->getI(12), -2) << engine;
    EXPECT_EQ(m.find("shl64_ptr")->getI(1), INT64_MIN) << engine;  // 1 << 63
    EXPECT_EQ(m.find("shl64_ptr")->getI(17), int64_t(1) << 32) << engine;
    ++checked;
  });
  EXPECT_EQ(checked, 6);
}

}  // namespace
}  // namespace tl::newops
