// The oracles' own building blocks, checked against published values, so a kernel that is
// blocked today meets a reference that is already known to be right when it starts to run:
// Philox-4x32-10 against the known-answer vectors of Random123 (kat_vectors, philox4x32_10),
// fp8 e4m3 rounding against the values the format defines, the softmax helper against a
// hand-computed case.
#include <gtest/gtest.h>

#include <cmath>

#include "../fp8_reference.h"
#include "TritonOracles.h"
#include "runtime/Memory.h"

namespace tl::triton_tests {
namespace {

TEST(TritonOracleMath, PhiloxMatchesRandom123KnownAnswers) {
  using A4 = std::array<uint32_t, 4>;
  EXPECT_EQ(philox4x32x10({0, 0, 0, 0}, {0, 0}), (A4{0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u}));
  EXPECT_EQ(philox4x32x10({0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu}, {0xffffffffu, 0xffffffffu}),
            (A4{0x408f276du, 0x41c83b0eu, 0xa20bc7c6u, 0x6d5451fdu}));
  EXPECT_EQ(philox4x32x10({0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u}, {0xa4093822u, 0x299f31d0u}),
            (A4{0xd16cfe09u, 0x94fdccebu, 0x5001e420u, 0x24126ea1u}));
}

TEST(TritonOracleMath, TritonRandIsUniformInZeroOne) {
  double sum = 0;
  const int n = 20000;
  for (int i = 0; i < n; ++i) {
    const double r = tritonRand(123, static_cast<uint32_t>(i));
    ASSERT_GE(r, 0.0);
    ASSERT_LT(r, 1.0);
    sum += r;
  }
  EXPECT_NEAR(sum / n, 0.5, 0.01);
  EXPECT_NE(tritonRand(123, 0), tritonRand(124, 0)) << "the seed must matter";
}

TEST(TritonOracleMath, E4M3RoundsToNearestEvenAndSaturates) {
  EXPECT_EQ(roundToE4M3(1.0), 1.0);
  EXPECT_EQ(roundToE4M3(1.0625), 1.0);      // halfway between 1 and 1.125: to the even mantissa
  EXPECT_EQ(roundToE4M3(1.1875), 1.25);     // halfway between 1.125 and 1.25: to 1.25 (even)
  EXPECT_EQ(roundToE4M3(-3.3), -3.25);
  EXPECT_EQ(roundToE4M3(448.0), 448.0);     // the largest finite value
  EXPECT_EQ(roundToE4M3(1e6), 448.0);       // saturates
  EXPECT_EQ(roundToE4M3(std::ldexp(1.0, -9)), std::ldexp(1.0, -9));      // the smallest subnormal
  EXPECT_EQ(roundToE4M3(std::ldexp(1.0, -11)), 0.0);                       // below half of it
  EXPECT_EQ(roundToE4M3(std::ldexp(3.0, -10)), std::ldexp(1.0, -8));     // 1.5 * 2^-9: tie to even (2 * 2^-9)
}

// The oracle's rounding (by quantum, in double) and the nearest-value search of
// tests/fp8_reference.h agree on every f16 value, the inputs of t09_matmul_fp8.
TEST(TritonOracleMath, E4M3AgreesWithTheNearestValueSearchOnEveryHalf) {
  EXPECT_EQ(roundToE4M3(INFINITY), 448.0);
  EXPECT_EQ(roundToE4M3(-INFINITY), -448.0);
  for (uint32_t h = 0; h < 0x10000; ++h) {
    const double v = halfToFloat(static_cast<uint16_t>(h));
    const double want = fp8ref::decode(fp8ref::kE4M3, fp8ref::encode(fp8ref::kE4M3, v));
    const double got = roundToE4M3(v);
    if (std::isnan(want)) ASSERT_TRUE(std::isnan(got)) << v;
    else ASSERT_EQ(got, want) << v;
  }
}

TEST(TritonOracleMath, SoftmaxAndLogSumExp) {
  std::vector<double> v = {0.0, std::log(3.0)};
  double lse = 0;
  softmaxInPlace(v, &lse);
  EXPECT_NEAR(v[0], 0.25, 1e-15);
  EXPECT_NEAR(v[1], 0.75, 1e-15);
  EXPECT_NEAR(lse, std::log(4.0), 1e-15);
}

}  // namespace
}  // namespace tl::triton_tests
