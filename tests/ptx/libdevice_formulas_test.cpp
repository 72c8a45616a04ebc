// The formulas tl-ptx emits for the libdevice / tl.math functions (stages/ptx/CodegenOps.cpp,
// MathFormulas), transcribed here step for step in f32 (fmaf for each fma, IEEE division and
// sqrt, the same constants, reductions and selects) with the GPU's ex2.approx / lg2.approx
// replaced by exp2f / log2f, and held to the double-precision functions over their ranges:
// this checks each formula's own error (coefficients, reductions, special values); the MUFU's
// ~2 ulp come on top on the GPU, where `tl-ptx tests/thread/kernels/libdevice_ops.tl` compares
// every output with tl-scalar. Bounds: the accuracy CodegenOps.cpp states, in ulps of f32.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <random>

namespace {

constexpr double kPi = 3.14159265358979323846;
constexpr double kLn2 = 0.6931471805599453;
constexpr float kInf = std::numeric_limits<float>::infinity();

float ex2(float x) { return exp2f(x); }
float lg2(float x) { return log2f(x); }
// KernelEmitter::exp (non-fast): Cody-Waite by ln 2, ex2 of the rest, 2^k as two factors.
float scale2k(float p, int32_t k) {
  k = std::max(-252, std::min(254, k));
  const int32_t h1 = k >> 1, h2 = k - h1;
  auto pow2 = [](int32_t e) {
    const uint32_t bits = uint32_t(e + 127) << 23;
    float f;
    std::memcpy(&f, &bits, 4);
    return f;
  };
  return (p * pow2(h1)) * pow2(h2);
}
int32_t toInt(float k) { return std::isnan(k) ? 0 : k > 2147483520.0f ? INT32_MAX : k < -2147483648.0f ? INT32_MIN : int32_t(k); }
float gpuExp(float x) {
  const float xc = std::isnan(x) ? x : std::max(-200.0f, std::min(200.0f, x));
  const float k = rintf(xc * float(1.4426950408889634));
  float r = fmaf(k, -0.693359375f, xc);
  r = fmaf(k, 2.12194440e-4f, r);
  return scale2k(ex2(r * float(1.4426950408889634)), toInt(k));
}
float poly(float x, std::initializer_list<double> cs) {
  float p = 0;
  bool first = true;
  for (double c : cs) {
    p = first ? float(c) : fmaf(p, x, float(c));
    first = false;
  }
  return p;
}
double polyD(double x, std::initializer_list<double> cs) {
  double p = 0;
  bool first = true;
  for (double c : cs) {
    p = first ? c : std::fma(p, x, c);
    first = false;
  }
  return p;
}

float atanNonNeg(float a) {
  const bool big = a > 2.414213562373095f, mid = a > 0.4142135623730950f;
  const float x = big ? -1.0f / a : mid ? (a - 1.0f) / (a + 1.0f) : a;
  const float base = big ? float(kPi / 2) : mid ? float(kPi / 4) : 0.0f;
  const float z = x * x;
  const float p = poly(z, {8.05374449538e-2, -1.38776856032e-1, 1.99777106478e-1, -3.33329491539e-1});
  return base + fmaf(p * z, x, x);
}
float atanF(float x) { return std::copysign(atanNonNeg(std::fabs(x)), x); }
float atan2F(float y, float x) {
  const float ax = std::fabs(x), ay = std::fabs(y);
  const float mx = std::fmax(ax, ay), mn = std::fmin(ax, ay);
  float t = mn / mx;
  if (mx == 0) t = 0;
  if (std::isinf(x) && std::isinf(y)) t = 1;
  float r = atanNonNeg(t);
  if (ay > ax) r = float(kPi / 2) - r;
  if (std::signbit(x)) r = float(kPi) - r;
  r = std::copysign(r, y);
  return std::isnan(x) || std::isnan(y) ? x + y : r;
}
float sqrt1mx2(float x) { return std::sqrt((1.0f - x) * (1.0f + x)); }
float asinF(float x) { return atan2F(x, sqrt1mx2(x)); }
float acosF(float x) { return atan2F(sqrt1mx2(x), x); }
float tanF(float x) {
  const float ax = std::fabs(x);
  const float q = std::floor(ax * float(4.0 / kPi));
  const float y = 2.0f * std::floor((q + 1.0f) * 0.5f);
  double zd = std::fma(double(y), -0.78539816339744830962, double(ax));
  zd = std::fma(double(y), -3.0616169978683830179e-17, zd);
  const float z = float(zd);
  const float zz = z * z;
  const float p = poly(zz, {9.38540185543e-3, 3.11992232697e-3, 2.44301354525e-2, 5.34112807005e-2, 1.33387994085e-1,
                            3.33331568548e-1});
  float t = fmaf(p * zz, z, z);
  if (toInt(y) & 2) t = -1.0f / t;
  return std::signbit(x) ? -t : t;
}
float expm1F(float x) {
  const float p = poly(x, {1.0 / 362880, 1.0 / 40320, 1.0 / 5040, 1.0 / 720, 1.0 / 120, 1.0 / 24, 1.0 / 6, 0.5, 1.0});
  return std::fabs(x) < 0.5f ? p * x : gpuExp(x) - 1.0f;
}
float halfExp(float a) {
  const float e = gpuExp(a * 0.5f);
  return (e * 0.5f) * e;
}
float sinhF(float x) {
  const float a = std::fabs(x), e = expm1F(a);
  const float small = 0.5f * (e + e / (e + 1.0f));
  const float h = halfExp(a);
  return std::copysign(a < 1.0f ? small : h - 0.25f / h, x);
}
float coshF(float x) {
  const float h = halfExp(std::fabs(x));
  return h + 0.25f / h;
}
float tanhF(float x) {
  const float a = std::isnan(x) ? x : std::min(std::fabs(x), 10.0f);
  const float e = expm1F(a * 2.0f);
  return std::copysign(e / (e + 2.0f), x);
}
float log1pF(float x) {
  const float s = x / (2.0f + x), s2 = s * s;
  const float p = poly(s2, {1.0 / 15, 1.0 / 13, 1.0 / 11, 1.0 / 9, 1.0 / 7, 1.0 / 5, 1.0 / 3, 1.0});
  return std::fabs(x) < 0.5f ? (2.0f * s) * p : lg2(1.0f + x) * float(kLn2);
}
float exp10F(float x) {
  const float l = float(3.3219280948873623);
  const float xc = std::isnan(x) ? x : std::max(-60.0f, std::min(60.0f, x));
  const float k = rintf(xc * l);
  float r = fmaf(k, -0.301025390625f, xc);
  r = fmaf(k, -4.6050389811952113e-6f, r);
  return scale2k(ex2(r * l), toInt(k));
}
float cbrtF(float x) {
  const float a = std::fabs(x);
  float r = ex2(lg2(a) * float(1.0 / 3));
  r = r - (r - a / (r * r)) * float(1.0 / 3);
  if (a == 0 || std::isinf(a)) r = a;
  return std::copysign(r, x);
}
float hypotF(float x, float y) {
  const float ax = std::fabs(x), ay = std::fabs(y);
  const float mx = std::fmax(ax, ay), mn = std::fmin(ax, ay);
  const float r = mn / mx;
  float h = mx * std::sqrt(fmaf(r, r, 1.0f));
  if (mx == 0) h = 0;
  if (std::isnan(x) || std::isnan(y)) h = x + y;
  if (std::isinf(x) || std::isinf(y)) h = kInf;
  return h;
}
double log2Double(double d) {
  uint64_t bits;
  std::memcpy(&bits, &d, 8);
  int64_t e = int64_t((bits >> 52) & 0x7ff) - 1023;
  const uint64_t mb = (bits & ((uint64_t(1) << 52) - 1)) | (uint64_t(1023) << 52);
  double m;
  std::memcpy(&m, &mb, 8);
  if (m > 1.4142135623730951) {
    m *= 0.5;
    ++e;
  }
  const double s = (m - 1) / (m + 1), s2 = s * s;
  const double at = s * polyD(s2, {1.0 / 13, 1.0 / 11, 1.0 / 9, 1.0 / 7, 1.0 / 5, 1.0 / 3, 1.0});
  return std::fma(at, 2.0 / kLn2, double(e));
}
float powF(float x, float y) {
  const float ax = std::fabs(x);
  const bool zero = ax == 0, inf = std::isinf(ax), one = ax == 1;
  const float safe = zero || inf || one ? 2.0f : ax;
  double t = double(y) * log2Double(double(safe));
  if (zero || inf) t = (zero != (y > 0)) ? INFINITY : -INFINITY;
  if (one) t = 0;
  if (t > 400) t = 400;
  if (t < -400) t = -400;
  const double k = std::rint(t);
  const double p = double(ex2(float(t - k)));
  const int64_t ki = std::isnan(k) ? 0 : int64_t(k);
  const uint64_t sb = uint64_t(ki + 1023) << 52;
  double scale;
  std::memcpy(&scale, &sb, 8);
  float r = float(p * scale);
  const bool yInt = std::floor(y) == y;
  const float yHalf = y * 0.5f;
  const bool yOdd = yInt && std::floor(yHalf) != yHalf;
  const bool neg = std::signbit(x);
  if (neg && yOdd) r = -r;
  if (neg && !yInt && !(zero || inf)) r = NAN;
  if (std::isnan(x) || std::isnan(y)) r = x + y;
  if (x == 1) r = 1;
  if (y == 0) r = 1;
  return r;
}

// ulps of f32 between a and the double b.
double ulps(float a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b) ? 0 : 1e9;
  if (std::isinf(b) || std::fabs(b) > 3.4028234663852886e38) return float(b) == a ? 0 : 1e9;
  const double ulp = std::ldexp(1.0, std::max(std::ilogb(float(b)), -126) - 23);
  return std::fabs(double(a) - b) / ulp;
}

// The worst ulps of f over n values uniform in [lo, hi] (and the edges lo, hi, 0).
double worst(const std::function<float(float)>& f, const std::function<double(double)>& ref, float lo, float hi,
             int n = 200000) {
  std::mt19937 g(42);
  std::uniform_real_distribution<float> d(lo, hi);
  double w = 0;
  for (int i = 0; i < n + 3; ++i) {
    const float x = i == n ? lo : i == n + 1 ? hi : i == n + 2 ? 0.0f : d(g);
    if (x < lo || x > hi) continue;
    w = std::max(w, ulps(f(x), ref(double(x))));
  }
  return w;
}

TEST(LibdeviceFormulas, UnaryWithinTheirStatedUlps) {
  EXPECT_LE(worst(atanF, [](double x) { return std::atan(x); }, -100, 100), 2.5);
  EXPECT_LE(worst(asinF, [](double x) { return std::asin(x); }, -1, 1), 4);
  EXPECT_LE(worst(acosF, [](double x) { return std::acos(x); }, -1, 1), 4);
  EXPECT_LE(worst(tanF, [](double x) { return std::tan(x); }, -1e5f, 1e5f), 4);
  EXPECT_LE(worst(tanF, [](double x) { return std::tan(x); }, -10, 10), 4);
  EXPECT_LE(worst(expm1F, [](double x) { return std::expm1(x); }, -10, 10), 6);
  EXPECT_LE(worst(expm1F, [](double x) { return std::expm1(x); }, -0.6f, 0.6f), 6);
  EXPECT_LE(worst(sinhF, [](double x) { return std::sinh(x); }, -89, 89), 6);
  EXPECT_LE(worst(sinhF, [](double x) { return std::sinh(x); }, -2, 2), 6);
  EXPECT_LE(worst(coshF, [](double x) { return std::cosh(x); }, -89, 89), 4);
  EXPECT_LE(worst(tanhF, [](double x) { return std::tanh(x); }, -12, 12), 6);
  EXPECT_LE(worst(tanhF, [](double x) { return std::tanh(x); }, -0.1f, 0.1f), 6);
  EXPECT_LE(worst(log1pF, [](double x) { return std::log1p(x); }, -0.999f, 100), 3);
  EXPECT_LE(worst(log1pF, [](double x) { return std::log1p(x); }, -1e-3f, 1e-3f), 3);
  EXPECT_LE(worst(exp10F, [](double x) { return std::pow(10.0, x); }, -37, 38), 2);
  EXPECT_LE(worst(cbrtF, [](double x) { return std::cbrt(x); }, -1e6f, 1e6f), 1.5);
}

TEST(LibdeviceFormulas, BinaryWithinTheirStatedUlps) {
  std::mt19937 g(7);
  std::uniform_real_distribution<float> u(-50, 50), e(-30, 30), pos(0.01f, 100);
  double wAtan2 = 0, wHypot = 0, wPow = 0;
  for (int i = 0; i < 200000; ++i) {
    const float y = u(g), x = u(g);
    wAtan2 = std::max(wAtan2, ulps(atan2F(y, x), std::atan2(double(y), double(x))));
    wHypot = std::max(wHypot, ulps(hypotF(x, y), std::hypot(double(x), double(y))));
    const float b = pos(g), p = e(g);
    wPow = std::max(wPow, ulps(powF(b, p), std::pow(double(b), double(p))));
  }
  EXPECT_LE(wAtan2, 3);
  EXPECT_LE(wHypot, 2);
  EXPECT_LE(wPow, 2);
}

// C's special values, where the formulas select them explicitly.
TEST(LibdeviceFormulas, SpecialValuesAsC) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (float y : {0.0f, -0.0f, 1.0f, -1.0f, kInf, -kInf})
    for (float x : {0.0f, -0.0f, 2.0f, -2.0f, kInf, -kInf}) {
      const float got = atan2F(y, x), want = atan2f(y, x);
      EXPECT_TRUE(got == want && std::signbit(got) == std::signbit(want)) << "atan2(" << y << ", " << x << ") = " << got;
    }
  EXPECT_TRUE(std::isnan(atan2F(nan, 1.0f)));
  for (float x : {0.0f, -0.0f, 1.0f, -1.0f, 2.0f, -2.0f, 0.5f, -0.5f, kInf, -kInf, nan})
    for (float y : {0.0f, -0.0f, 1.0f, -1.0f, 2.0f, 3.0f, -3.0f, 0.5f, -0.5f, kInf, -kInf, nan}) {
      const float got = powF(x, y), want = powf(x, y);
      EXPECT_TRUE((std::isnan(got) && std::isnan(want)) || (got == want && std::signbit(got) == std::signbit(want)))
          << "pow(" << x << ", " << y << ") = " << got << ", C: " << want;
    }
  EXPECT_EQ(hypotF(kInf, nan), kInf);
  EXPECT_EQ(hypotF(0.0f, -0.0f), 0.0f);
  EXPECT_EQ(hypotF(3e38f, 3e38f), kInf);
  EXPECT_EQ(hypotF(1e-40f, 1e-40f), hypotf(1e-40f, 1e-40f));
  EXPECT_EQ(cbrtF(-0.0f), -0.0f);
  EXPECT_TRUE(std::signbit(cbrtF(-0.0f)));
  EXPECT_EQ(cbrtF(-kInf), -kInf);
  EXPECT_EQ(tanhF(100.0f), 1.0f);
  EXPECT_EQ(tanhF(-kInf), -1.0f);
  EXPECT_TRUE(std::isnan(tanhF(nan)));
  EXPECT_EQ(sinhF(-kInf), -kInf);
  EXPECT_EQ(coshF(-kInf), kInf);
  EXPECT_EQ(expm1F(-kInf), -1.0f);
  EXPECT_EQ(log1pF(-1.0f), -kInf);
  EXPECT_TRUE(std::isnan(log1pF(-2.0f)));
  EXPECT_TRUE(std::isnan(asinF(1.5f)));
  EXPECT_EQ(acosF(-1.0f), float(kPi));
  EXPECT_EQ(exp10F(39.0f), kInf);
  EXPECT_EQ(exp10F(-50.0f), 0.0f);
  EXPECT_TRUE(std::isnan(tanF(kInf)));
}

}  // namespace
