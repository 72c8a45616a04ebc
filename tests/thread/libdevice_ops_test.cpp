// The libdevice / tl.math float functions (tests/thread/kernels/libdevice_ops.tl) in every CPU
// engine (tl-scalar, tl-block, the executor at num_warps 1, 2, 4, 8): each matches libm's float
// function bit for bit (runtime/FloatOps.h: what every CPU engine computes), on random inputs
// and on edge values (signed zeros, halves for the roundings, infinities, NaN, a negative base
// with integer and non-integer exponents); libm's results are held to the double-precision
// functions within 2 ulp; round is halves away from zero and rint/nearbyint halves to even;
// libdevice.X and tl.math.X are the same built-in; the front end refuses pointers.
#include <cmath>
#include <cstring>
#include <limits>

#include <array>
#include <fstream>
#include "new_ops_util.h"

namespace tl::newops {
namespace {

bool sameFloat(float a, float b) { return (std::isnan(a) && std::isnan(b)) || std::memcmp(&a, &b, 4) == 0; }

// |a - b| in units of f32's last place at b (b: the double-precision value).
double ulps(float a, double b) {
  if (std::isnan(a) && std::isnan(b)) return 0;
  if (std::isinf(b) || std::isinf(a)) return float(b) == a ? 0 : 1e9;
  const double ulp = std::ldexp(1.0, std::max(std::ilogb(float(b)), -126) - 23);
  return std::fabs(double(a) - b) / ulp;
}

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNan = std::numeric_limits<float>::quiet_NaN();

struct Fn {
  const char* out;
  float (*f32)(float, float, float);  // libm's float function of (x, y, z)
  double (*f64)(double, double, double);
};

const std::vector<Fn>& functions() {
  static const std::vector<Fn> fns = {
      {"asin_ptr", [](float, float, float z) { return asinf(z); }, [](double, double, double z) { return std::asin(z); }},
      {"acos_ptr", [](float, float, float z) { return acosf(z); }, [](double, double, double z) { return std::acos(z); }},
      {"atan_ptr", [](float x, float, float) { return atanf(x); }, [](double x, double, double) { return std::atan(x); }},
      {"tan_ptr", [](float x, float, float) { return tanf(x); }, [](double x, double, double) { return std::tan(x); }},
      {"sinh_ptr", [](float x, float, float) { return sinhf(x); }, [](double x, double, double) { return std::sinh(x); }},
      {"cosh_ptr", [](float x, float, float) { return coshf(x); }, [](double x, double, double) { return std::cosh(x); }},
      {"tanh_ptr", [](float x, float, float) { return tanhf(x); }, [](double x, double, double) { return std::tanh(x); }},
      {"log10_ptr", [](float x, float, float) { return log10f(std::fabs(x) + 0.001f); },
       [](double x, double, double) { return std::log10(double(std::fabs(float(x)) + 0.001f)); }},
      {"log1p_ptr", [](float, float, float z) { return log1pf(z); }, [](double, double, double z) { return std::log1p(z); }},
      {"expm1_ptr", [](float x, float, float) { return expm1f(x); }, [](double x, double, double) { return std::expm1(x); }},
      {"exp10_ptr", [](float x, float, float) { return exp10f(x); }, [](double x, double, double) { return std::pow(10.0, x); }},
      {"cbrt_ptr", [](float x, float, float) { return cbrtf(x); }, [](double x, double, double) { return std::cbrt(x); }},
      {"rcp_ptr", [](float x, float, float) { return 1.0f / x; }, [](double x, double, double) { return 1.0 / x; }},
      {"trunc_ptr", [](float x, float, float) { return truncf(x); }, [](double x, double, double) { return std::trunc(x); }},
      {"round_ptr", [](float x, float, float) { return roundf(x); }, [](double x, double, double) { return std::round(x); }},
      {"rint_ptr", [](float x, float, float) { return nearbyintf(x); }, [](double x, double, double) { return std::nearbyint(x); }},
      {"nearbyint_ptr", [](float x, float, float) { return nearbyintf(x); },
       [](double x, double, double) { return std::nearbyint(x); }},
      {"atan2_ptr", [](float x, float y, float) { return atan2f(x, y); },
       [](double x, double y, double) { return std::atan2(x, y); }},
      {"pow_ptr", [](float x, float y, float) { return powf(x, y); }, [](double x, double y, double) { return std::pow(x, y); }},
      {"hypot_ptr", [](float x, float y, float) { return hypotf(x, y); },
       [](double x, double y, double) { return std::hypot(x, y); }},
  };
  return fns;
}

// Edge values: (x, y, z) at the first elements.
const std::vector<std::array<float, 3>>& edges() {
  static const std::vector<std::array<float, 3>> e = {
      {0.0f, 0.0f, 0.0f},     {-0.0f, -0.0f, -0.0f}, {2.5f, 2.0f, 1.0f},    {-2.5f, 3.0f, -1.0f},
      {0.5f, -0.0f, 0.5f},    {-0.5f, 0.5f, -0.5f},  {1.5f, -2.0f, 1e-6f},  {-1.5f, 2.5f, -1e-6f},
      {kInf, 1.0f, 1.0f},     {-kInf, 3.0f, -1.0f},  {kNan, 0.0f, kNan},    {1.0f, kNan, 0.999f},
      {-2.0f, -3.0f, 0.25f},  {-8.0f, 1.0f / 3, 0.1f}, {1e-7f, kInf, 2.0f}, {88.0f, -kInf, -2.0f},
      {-0.0f, -1.0f, 0.0f},   {0.0f, -1.0f, 0.0f},   {3.5f, kInf, 0.0f},    {-kInf, -kInf, 0.0f}};
  return e;
}

TEST(Libdevice, EveryEngineMatchesLibm) {
  auto prepare = [](Memory& m) {
    Buffer *x = m.find("x_ptr"), *y = m.find("y_ptr"), *z = m.find("z_ptr");
    for (size_t i = 0; i < edges().size(); ++i) {
      x->setF(int64_t(i), edges()[i][0]);
      y->setF(int64_t(i), edges()[i][1]);
      z->setF(int64_t(i), edges()[i][2]);
    }
  };
  int checked = 0;
  forEachEngine("libdevice_ops", {}, prepare, [&](const Memory& m, const std::string& engine) {
    const Buffer &x = *m.find("x_ptr"), &y = *m.find("y_ptr"), &z = *m.find("z_ptr");
    for (const Fn& fn : functions()) {
      int bad = 0;
      const Buffer& out = *m.find(fn.out);
      for (int64_t i = 0; i < x.numel(); ++i) {
        const float xi = float(x.getF(i)), yi = float(y.getF(i)), zi = float(z.getF(i));
        const float want = fn.f32(xi, yi, zi), got = float(out.getF(i));
        if (!sameFloat(got, want) && bad++ < 3)
          ADD_FAILURE() << engine << ": " << fn.out << "[" << i << "] (x=" << xi << ", y=" << yi << ", z=" << zi
                        << ") = " << got << ", libm: " << want;
      }
    }
    ++checked;
  });
  EXPECT_EQ(checked, 6);  // tl-scalar, tl-block, 4 executor runs
}

// What the engines compute (libm's float functions) is within 2 ulp of the true function.
TEST(Libdevice, LibmIsWithinTwoUlpOfDouble) {
  auto k = compileNewOpsKernel("libdevice_ops");
  ASSERT_TRUE(k);
  Memory m = Memory::fromLaunch(k->launch);
  runScalar(*k->ir, k->launch, m);
  const Buffer &x = *m.find("x_ptr"), &y = *m.find("y_ptr"), &z = *m.find("z_ptr");
  for (const Fn& fn : functions()) {
    double worst = 0;
    for (int64_t i = 0; i < x.numel(); ++i) {
      const double want = fn.f64(x.getF(i), y.getF(i), z.getF(i));
      if (!std::isfinite(want) || std::fabs(want) < 1e-30 || std::fabs(want) > 3e38) continue;
      worst = std::max(worst, ulps(float(m.find(fn.out)->getF(i)), want));
    }
    EXPECT_LE(worst, 2.0) << fn.out;
  }
}

// The roundings and a few values by hand (what libdevice's round and rint mean).
TEST(Libdevice, RoundingAndSpecialValues) {
  auto prepare = [](Memory& m) {
    Buffer *x = m.find("x_ptr"), *y = m.find("y_ptr");
    const float xs[] = {2.5f, -2.5f, 0.5f, -0.5f, 3.5f, 1.5f, -8.0f, -2.0f, -2.0f};
    const float ys[] = {0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 3.0f, 0.5f, -0.0f};
    for (int i = 0; i < 9; ++i) {
      x->setF(i, xs[i]);
      y->setF(i, ys[i]);
    }
  };
  forEachEngine("libdevice_ops", {}, prepare, [](const Memory& m, const std::string& engine) {
    auto at = [&](const char* out, int i) { return m.find(out)->getF(i); };
    EXPECT_EQ(at("round_ptr", 0), 3.0) << engine;   // halves away from zero
    EXPECT_EQ(at("round_ptr", 1), -3.0) << engine;
    EXPECT_EQ(at("round_ptr", 2), 1.0) << engine;
    EXPECT_EQ(at("rint_ptr", 0), 2.0) << engine;    // halves to even
    EXPECT_EQ(at("rint_ptr", 1), -2.0) << engine;
    EXPECT_EQ(at("rint_ptr", 2), 0.0) << engine;
    EXPECT_TRUE(std::signbit(at("rint_ptr", 3))) << engine;  // rint(-0.5) = -0
    EXPECT_EQ(at("rint_ptr", 4), 4.0) << engine;
    EXPECT_EQ(at("nearbyint_ptr", 5), 2.0) << engine;
    EXPECT_EQ(at("trunc_ptr", 1), -2.0) << engine;
    EXPECT_EQ(at("cbrt_ptr", 6), -2.0) << engine;   // the real cube root
    EXPECT_EQ(at("pow_ptr", 6), -512.0) << engine;  // (-8)^3
    EXPECT_TRUE(std::isnan(at("pow_ptr", 7))) << engine;  // (-2)^0.5
    EXPECT_EQ(at("pow_ptr", 8), 1.0) << engine;     // x^-0 = 1
    EXPECT_EQ(at("atan2_ptr", 6), std::atan2(-8.0f, 3.0f)) << engine;
    EXPECT_EQ(at("hypot_ptr", 6), hypotf(-8.0f, 3.0f)) << engine;
  }, {1, 4});
}

// libdevice.X and tl.math.X are one built-in; the functions refuse pointers with a located error.
std::unique_ptr<CompiledKernel> compileBody(const std::string& body, std::string& errors) {
  // One file per test: ctest runs the tests of this executable in parallel processes.
  const std::string path = ::testing::TempDir() + "/libdevice_frontend_" +
                           ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".tl";
  {
    std::ofstream out(path);
    out << "import triton\nimport triton.language as tl\nfrom triton.language.extra import libdevice\n\n"
           "@launch(grid=(1,), x_ptr=uniform(64, seed=1), y_ptr=zeros(64, output=True))\n"
           "@triton.jit\ndef k(x_ptr, y_ptr):\n"
           "    offs = tl.arange(0, 64)\n    x = tl.load(x_ptr + offs)\n"
        << body;
  }
  std::ostringstream err;
  auto k = compileKernelFile(path, {}, err);
  errors = err.str();
  return k;
}

TEST(Libdevice, FrontEndNamesAndErrors) {
  std::string errors;
  auto a = compileBody("    tl.store(y_ptr + offs, libdevice.tanh(x) + tl.math.tanh(x) + libdevice.pow(x, 2))\n", errors);
  ASSERT_TRUE(a) << errors;
  int tanh = 0, pow = 0;
  walk(a->ir->body, [&](Op& op) {
    tanh += op.kind == OpKind::Tanh;
    pow += op.kind == OpKind::Pow;
  });
  EXPECT_EQ(tanh, 2);
  EXPECT_EQ(pow, 1);
  auto b = compileBody("    tl.store(y_ptr + offs, libdevice.atan2(x_ptr + offs, x))\n", errors);
  EXPECT_FALSE(b);
  EXPECT_NE(errors.find("libdevice_frontend_FrontEndNamesAndErrors.tl:10:"), std::string::npos) << errors;
  EXPECT_NE(errors.find("atan2() needs numbers or tiles"), std::string::npos) << errors;
  auto c = compileBody("    tl.store(y_ptr + offs, libdevice.asin(x_ptr))\n", errors);
  EXPECT_FALSE(c);
  EXPECT_NE(errors.find("asin() needs a number or a tile"), std::string::npos) << errors;
}

// fold-constants evaluates the functions of constants as the engines do (libm's float ones).
TEST(Libdevice, ConstantsFold) {
  std::string errors;
  auto k = compileBody("    tl.store(y_ptr + offs, x + libdevice.tanh(0.5) + libdevice.atan2(1.0, 3.0) + libdevice.cbrt(-27.0))\n",
                       errors);
  ASSERT_TRUE(k) << errors;
  auto opt = cloneFunction(*k->ir);
  blockPipeline().run(*opt);
  walk(opt->body, [](Op& op) {
    EXPECT_TRUE(op.kind != OpKind::Tanh && op.kind != OpKind::Atan2 && op.kind != OpKind::Cbrt) << mnemonic(op.kind);
  });
  Memory a = Memory::fromLaunch(k->launch), b = Memory::fromLaunch(k->launch);
  runScalar(*k->ir, k->launch, a);
  runBlock(*opt, k->launch, b);
  for (int64_t i = 0; i < 64; ++i) {
    const float x = float(a.find("x_ptr")->getF(i));
    const float want = ((x + tanhf(0.5f)) + atan2f(1.0f, 3.0f)) + cbrtf(-27.0f);
    EXPECT_EQ(float(a.find("y_ptr")->getF(i)), want) << i;
    EXPECT_EQ(float(b.find("y_ptr")->getF(i)), want) << i;
  }
}

// isnan, isinf, isfinite, signbit: i1 results, every engine, on the edge values (signbit of
// -0 is true; of a NaN false: the IR has no bit casts, docs in SemaMath.cpp).
TEST(Libdevice, Predicates) {
  const std::vector<float> xs = {kNan, kInf, -kInf, 0.0f, -0.0f, 1e-40f, -1e-40f, 3e38f, -3e38f, 1.0f, -1.0f};
  auto prepare = [&](Memory& m) {
    for (size_t i = 0; i < xs.size(); ++i) m.find("x_ptr")->setF(int64_t(i), xs[i]);
  };
  int checked = 0;
  forEachEngine("libdevice_predicates", {}, prepare, [&](const Memory& m, const std::string& engine) {
    const Buffer& x = *m.find("x_ptr");
    for (int64_t i = 0; i < x.numel(); ++i) {
      const float v = float(x.getF(i));
      const bool sign = std::isnan(v) ? false : std::signbit(v);
      ASSERT_EQ(m.find("isnan_ptr")->getI(i), std::isnan(v) ? 1 : 0) << engine << " " << v;
      ASSERT_EQ(m.find("isinf_ptr")->getI(i), std::isinf(v) ? 1 : 0) << engine << " " << v;
      ASSERT_EQ(m.find("isfinite_ptr")->getI(i), std::isfinite(v) ? 1 : 0) << engine << " " << v;
      ASSERT_EQ(m.find("signbit_ptr")->getI(i), sign ? 1 : 0) << engine << " " << v;
    }
    EXPECT_EQ(m.find("signbit_ptr")->getI(4), 1) << engine;  // -0
    ++checked;
  });
  EXPECT_EQ(checked, 6);
}

}  // namespace
}  // namespace tl::newops
