// Tests of runtime/Fp8.h (the fp8 conversions every engine uses) against an independent model
// of the formats (tests/fp8_reference.h: the textbook formula and a nearest-value search), and
// of the runtime around it: Buffer get/set, fills, .npy files, comparison tolerances.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <random>
#include <vector>

#include <unistd.h>

#include "../fp8_reference.h"
#include "runtime/Memory.h"

namespace tl {
namespace {

const float kInf = std::numeric_limits<float>::infinity();
const float kNaN = std::numeric_limits<float>::quiet_NaN();

struct Case {
  DType dtype;
  fp8ref::Format ref;
  const char* name;
};
const Case kFormats[] = {{DType::F8E4M3, fp8ref::kE4M3, "e4m3"}, {DType::F8E5M2, fp8ref::kE5M2, "e5m2"}};

float fromBits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

// Every one of the 256 codes of both formats decodes to the value the format defines.
TEST(Fp8, DecodeEveryCode) {
  for (const Case& c : kFormats)
    for (int code = 0; code < 256; ++code) {
      const double want = fp8ref::decode(c.ref, static_cast<uint8_t>(code));
      const float got = fp8ToFloat(c.dtype, static_cast<uint8_t>(code));
      if (std::isnan(want)) EXPECT_TRUE(std::isnan(got)) << c.name << " code " << code;
      else EXPECT_EQ(static_cast<double>(got), want) << c.name << " code " << code;
    }
  // e5m2 is the top byte of an IEEE binary16: a second, independent decoder.
  for (int code = 0; code < 256; ++code) {
    const float viaHalf = halfToFloat(static_cast<uint16_t>(code << 8));
    const float got = e5m2ToFloat(static_cast<uint8_t>(code));
    if (std::isnan(viaHalf)) EXPECT_TRUE(std::isnan(got)) << code;
    else EXPECT_EQ(got, viaHalf) << code;
  }
}

// Values named by the format definitions themselves.
TEST(Fp8, KnownCodes) {
  EXPECT_EQ(e4m3ToFloat(0x7e), 448.0f);           // S.1111.110: the largest finite
  EXPECT_EQ(e4m3ToFloat(0xfe), -448.0f);
  EXPECT_TRUE(std::isnan(e4m3ToFloat(0x7f)));     // S.1111.111: the only NaNs
  EXPECT_TRUE(std::isnan(e4m3ToFloat(0xff)));
  EXPECT_EQ(e4m3ToFloat(0x78), 256.0f);           // S.1111.000 is finite (no infinities)
  EXPECT_EQ(e4m3ToFloat(0x38), 1.0f);             // exponent 7 = bias
  EXPECT_EQ(e4m3ToFloat(0x08), 0x1p-6f);          // the smallest normal
  EXPECT_EQ(e4m3ToFloat(0x01), 0x1p-9f);          // the smallest subnormal
  EXPECT_EQ(e4m3ToFloat(0x07), 7 * 0x1p-9f);      // the largest subnormal
  EXPECT_EQ(e4m3ToFloat(0x80), 0.0f);
  EXPECT_TRUE(std::signbit(e4m3ToFloat(0x80)));
  EXPECT_EQ(e5m2ToFloat(0x7b), 57344.0f);         // S.11110.11
  EXPECT_EQ(e5m2ToFloat(0x7c), kInf);             // S.11111.00
  EXPECT_EQ(e5m2ToFloat(0xfc), -kInf);
  for (uint8_t nan : {0x7d, 0x7e, 0x7f, 0xfd, 0xfe, 0xff}) EXPECT_TRUE(std::isnan(e5m2ToFloat(nan)));
  EXPECT_EQ(e5m2ToFloat(0x3c), 1.0f);
  EXPECT_EQ(e5m2ToFloat(0x01), 0x1p-16f);
  EXPECT_EQ(e5m2ToFloat(0x04), 0x1p-14f);
}

// Round to nearest even with saturation, at the cases that tell rounding modes apart.
TEST(Fp8, EncodeRoundingAndSaturation) {
  struct E { float x; uint8_t e4m3, e5m2; };
  const E cases[] = {
      {1.0f, 0x38, 0x3c},
      {1.0625f, 0x38, 0x3c},        // e4m3: halfway between 1 and 1.125 -> 1 (even)
      {1.1875f, 0x3a, 0x3d},        // e4m3: halfway between 1.125 and 1.25 -> 1.25 (even); e5m2: 1.25
      {1.0625001f, 0x39, 0x3c},     // just above the e4m3 tie: up
      {448.0f, 0x7e, 0x5f},         // e5m2: 448 = 1.75 * 2^8 exactly
      {464.0f, 0x7e, 0x5f},         // e4m3: the tie between 448 and (unrepresentable) 480: 448
      {465.0f, 0x7e, 0x5f},         // beyond: .satfinite keeps 448 (no NaN)
      {1e6f, 0x7e, 0x7b},           // far beyond: the largest finite
      {57344.0f, 0x7e, 0x7b},
      {61440.0f, 0x7e, 0x7b},       // e5m2: the tie to inf rounds to inf, then saturates
      {kInf, 0x7e, 0x7b},           // inf: satfinite gives the largest finite, not inf
      {-kInf, 0xfe, 0xfb},
      {std::numeric_limits<float>::max(), 0x7e, 0x7b},
      {-3.3f, 0xc5, 0xc3},          // e4m3 -3.25, e5m2 -3.5
      {0x1p-9f, 0x01, 0x18},        // the smallest e4m3 subnormal (an e5m2 normal)
      {0x1p-10f, 0x00, 0x14},       // e4m3: exactly half of it: ties to even (0)
      {0x1.000002p-10f, 0x01, 0x14},// just above half: up
      {3 * 0x1p-10f, 0x02, 0x1a},   // e4m3: 1.5 * 2^-9 ties to 2 * 2^-9 (even)
      {0x1p-17f, 0x00, 0x00},       // e5m2: half the smallest subnormal: 0 (even)
      {0x1.8p-17f, 0x00, 0x01},     // e5m2: above half: the smallest subnormal
      {-0x1p-30f, 0x80, 0x80},      // a tiny negative becomes -0
      {0.0f, 0x00, 0x00},
      {-0.0f, 0x80, 0x80},
      {0x1p-140f, 0x00, 0x00},      // an f32 subnormal
      {0.9375f, 0x37, 0x3c},        // e4m3 exact (1.111 * 2^-1); e5m2: halfway 0.875/1.0 -> 1.0
  };
  for (const E& c : cases) {
    EXPECT_EQ(floatToE4M3(c.x), c.e4m3) << c.x;
    EXPECT_EQ(floatToE5M2(c.x), c.e5m2) << c.x;
    // The hand-written expectations agree with the reference model too.
    EXPECT_EQ(fp8ref::encode(fp8ref::kE4M3, c.x), c.e4m3) << c.x;
    EXPECT_EQ(fp8ref::encode(fp8ref::kE5M2, c.x), c.e5m2) << c.x;
  }
  EXPECT_EQ(floatToE4M3(kNaN), 0x7f);
  EXPECT_EQ(floatToE5M2(-kNaN), 0x7f);
  EXPECT_TRUE(std::isnan(roundToFp8(DType::F8E4M3, kNaN)));
}

// Encoding agrees with the nearest-value search on every f16 value, on every midpoint between
// neighbouring fp8 values (and one f32 ulp either side), and on random f32 bit patterns.
TEST(Fp8, EncodeMatchesNearestValueSearch) {
  for (const Case& c : kFormats) {
    std::vector<float> xs;
    for (uint32_t h = 0; h < 0x10000; ++h) xs.push_back(halfToFloat(static_cast<uint16_t>(h)));
    for (int code = 0; code < 0x7f; ++code) {
      const double lo = fp8ref::decode(c.ref, static_cast<uint8_t>(code));
      const double hi = fp8ref::decode(c.ref, static_cast<uint8_t>(code + 1));
      if (!std::isfinite(lo) || !std::isfinite(hi)) continue;
      const float mid = static_cast<float>((lo + hi) / 2);  // exact: a few bits
      for (float x : {mid, std::nextafter(mid, 0.0f), std::nextafter(mid, kInf)}) {
        xs.push_back(x);
        xs.push_back(-x);
      }
    }
    std::mt19937 rng(12);
    for (int i = 0; i < 200000; ++i) xs.push_back(fromBits(static_cast<uint32_t>(rng())));
    int mismatches = 0;
    for (float x : xs) {
      const uint8_t want = fp8ref::encode(c.ref, x);
      const uint8_t got = floatToFp8(c.dtype, x);
      if (want != got && ++mismatches <= 10) ADD_FAILURE() << c.name << ": " << x << " -> " << int(got) << ", want " << int(want);
    }
    EXPECT_EQ(mismatches, 0) << c.name;
  }
}

// Decoding then encoding gives every non-NaN code back (a round trip through f32).
TEST(Fp8, RoundTripEveryCode) {
  for (const Case& c : kFormats)
    for (int code = 0; code < 256; ++code) {
      const float v = fp8ToFloat(c.dtype, static_cast<uint8_t>(code));
      if (std::isnan(v)) continue;
      if (std::isinf(v)) {  // e5m2's infinities saturate on the way back
        EXPECT_EQ(floatToFp8(c.dtype, v), code & 0x80 ? 0xfb : 0x7b);
        continue;
      }
      EXPECT_EQ(floatToFp8(c.dtype, v), code) << c.name;
    }
}

TEST(Fp8, BufferRoundsOnSet) {
  Memory mem;
  Buffer& b = mem.add("q", DType::F8E4M3, {4}, false);
  EXPECT_EQ(b.bytes.size(), 4u);  // one byte per element
  b.setF(0, 1.1);
  b.setF(1, 1e9);
  b.setF(2, -0.001);
  b.setI(3, 3);
  EXPECT_EQ(b.bytes[0], 0x39);  // 1.125
  EXPECT_EQ(b.getF(0), 1.125);
  EXPECT_EQ(b.getF(1), 448);
  EXPECT_EQ(b.getF(2), -0x1p-9);  // 0.001 is 0.51 subnormal steps of 2^-9: rounds to one step
  EXPECT_EQ(b.getI(3), 3);
  EXPECT_EQ(roundToDType(1e9, DType::F8E5M2), 57344);
  EXPECT_EQ(roundToDType(0.3, DType::F8E4M3), 0.3125);
}

// Fills are values of the dtype; a uniform fill stays below its upper bound.
TEST(Fp8, FillsAreRepresentable) {
  for (const Case& c : kFormats) {
    LaunchConfig launch;
    BufferSpec u;
    u.param = "u";
    u.fill = Fill::Uniform;
    u.shape = {4096};
    u.a = 0;
    u.b = 1;
    u.seed = 3;
    u.dtype = c.dtype;
    BufferSpec r = u;
    r.param = "r";
    r.fill = Fill::Randn;
    r.b = 100;
    launch.buffers = {u, r};
    Memory mem = Memory::fromLaunch(launch);
    for (int64_t i = 0; i < 4096; ++i) {
      const double x = mem.find("u")->getF(i);
      ASSERT_GE(x, 0) << c.name;
      ASSERT_LT(x, 1) << c.name;  // 1 is representable: the rounding up to it is stepped back
      const uint8_t code = mem.find("r")->bytes[static_cast<size_t>(i)];
      ASSERT_TRUE(std::isfinite(fp8ToFloat(c.dtype, code))) << c.name;
    }
    Memory again = Memory::fromLaunch(launch);
    EXPECT_EQ(again.find("r")->bytes, mem.find("r")->bytes);  // deterministic
  }
}

TEST(Fp8, NpyUsesUint8WithANote) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("tl_fp8_test_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  for (const Case& c : kFormats) {
    Memory mem;
    Buffer& b = mem.add("q", c.dtype, {2, 3}, false);
    for (int i = 0; i < 6; ++i) b.bytes[static_cast<size_t>(i)] = static_cast<uint8_t>(0x30 + i);
    const std::string path = (dir / (std::string(c.name) + ".npy")).string();
    writeNpy(path, b);
    std::ifstream in(path, std::ios::binary);
    std::string raw((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    EXPECT_NE(raw.find("'descr': '|u1'"), std::string::npos);
    EXPECT_NE(raw.find(c.dtype == DType::F8E4M3 ? "# tilelab: float8e4nv" : "# tilelab: float8e5"), std::string::npos);
    Buffer r = readNpy(path);
    EXPECT_EQ(r.dtype, c.dtype);
    EXPECT_EQ(r.bytes, b.bytes);
  }
  // A plain uint8 file is no fp8 file.
  {
    Memory mem;
    Buffer& b = mem.add("q", DType::F8E4M3, {2}, false);
    const std::string path = (dir / "plain.npy").string();
    writeNpy(path, b);
    std::ifstream in(path, std::ios::binary);
    std::string raw((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const size_t note = raw.find("# tilelab: float8e4nv");
    ASSERT_NE(note, std::string::npos);
    raw.replace(note, 21, std::string(21, ' '));
    std::ofstream(path, std::ios::binary) << raw;
    EXPECT_THROW(readNpy(path), std::runtime_error);
  }
  std::filesystem::remove_all(dir);
}

TEST(Fp8, ToleranceIsOneStep) {
  double atol = 0, rtol = 0;
  toleranceFor(DType::F8E4M3, atol, rtol);
  EXPECT_EQ(rtol, 0.125);
  toleranceFor(DType::F8E5M2, atol, rtol);
  EXPECT_EQ(rtol, 0.25);
}

}  // namespace
}  // namespace tl
