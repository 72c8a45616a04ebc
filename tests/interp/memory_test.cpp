// Tests of lib/runtime: buffer layout, deterministic fills, 16-bit float conversions, .npy files
// and output comparison.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <random>
#include <set>

#include <unistd.h>

#include "runtime/Memory.h"

namespace tl {
namespace {

const double kInf = std::numeric_limits<double>::infinity();
const double kNaN = std::numeric_limits<double>::quiet_NaN();

BufferSpec spec(const std::string& param, Fill fill, Shape shape, double a = 0, double b = 1,
                uint64_t seed = 0, DType dtype = DType::F32) {
  BufferSpec s;
  s.param = param;
  s.fill = fill;
  s.shape = std::move(shape);
  s.a = a;
  s.b = b;
  s.seed = seed;
  s.dtype = dtype;
  return s;
}

Memory memoryWith(std::vector<BufferSpec> specs) {
  LaunchConfig launch;
  launch.buffers = std::move(specs);
  return Memory::fromLaunch(launch);
}

// A per-process temporary folder for .npy files, removed when the test program exits.
struct TempDir {
  std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("tl_memory_test_" + std::to_string(::getpid()));
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }
};
TempDir gTempDir;

std::string tempPath(const std::string& name) {
  std::filesystem::create_directories(gTempDir.dir);
  return (gTempDir.dir / name).string();
}

void writeBytes(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

std::string readBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// ---------------------------------------------------------------------------------------------
// Layout

TEST(MemoryLayout, AlignedWithGuardGaps) {
  Memory mem;
  mem.add("a", DType::F32, {781}, false);
  mem.add("b", DType::F16, {3}, false);
  mem.add("c", DType::I1, {0}, true);
  mem.add("d", DType::I64, {2, 5}, false);
  const auto& bufs = mem.buffers();
  ASSERT_EQ(bufs.size(), 4u);
  EXPECT_EQ(bufs[0].base, Memory::kBaseAddress);
  for (size_t i = 0; i < bufs.size(); ++i) {
    EXPECT_EQ(bufs[i].base % Memory::kAlignment, 0u) << bufs[i].name;
    EXPECT_EQ(bufs[i].bytes.size(), static_cast<size_t>(bufs[i].numel() * dtypeBytes(bufs[i].dtype)));
    if (i > 0) {
      EXPECT_GE(bufs[i].base, bufs[i - 1].end() + Memory::kGuardBytes);
    }
  }
  EXPECT_EQ(bufs[0].describe(), "781 x f32");
  EXPECT_EQ(bufs[3].describe(), "2 x 5 x i64");
  EXPECT_EQ(mem.find("d"), &mem.buffers()[3]);
  EXPECT_EQ(mem.find("nope"), nullptr);
}

TEST(MemoryLayout, ResolveAndNearest) {
  Memory mem;
  mem.add("a", DType::F32, {10}, false);
  mem.add("b", DType::F32, {10}, false);
  Buffer* a = mem.find("a");
  Buffer* b = mem.find("b");
  EXPECT_EQ(mem.resolve(a->base, 4), a);
  EXPECT_EQ(mem.resolve(a->base + 36, 4), a);      // last element
  EXPECT_EQ(mem.resolve(a->base + 36, 8), nullptr);  // straddles the end
  EXPECT_EQ(mem.resolve(a->end(), 4), nullptr);      // one past the end
  EXPECT_EQ(mem.resolve(a->base - 4, 4), nullptr);
  EXPECT_EQ(mem.resolve(a->end() + 16, 4), nullptr);  // in the guard gap
  EXPECT_EQ(mem.resolve(b->base, 4), b);
  EXPECT_EQ(mem.resolve(~uint64_t(0) - 1, 4), nullptr);  // no overflow trouble
  EXPECT_EQ(mem.nearest(a->end() + 8), a);
  EXPECT_EQ(mem.nearest(b->base - 8), b);
  EXPECT_EQ(mem.nearest(0), a);
  Memory empty;
  EXPECT_EQ(empty.nearest(Memory::kBaseAddress), nullptr);
}

// Out-of-bounds messages for addresses below the first buffer, at 0, below 0 (a negative offset
// that wrapped), between two buffers and far above the last one. Addresses count as signed: the
// message once said "18446744069709539328 bytes past the end of buffer 'out_ptr'" for an access
// 4000012288 bytes below out_ptr's end (an unsigned wrap).
TEST(MemoryLayout, DescribeAddressAroundEveryBuffer) {
  Memory mem;
  mem.add("x_ptr", DType::F32, {100}, false);
  mem.add("out_ptr", DType::F32, {100}, true);
  const Buffer* x = mem.find("x_ptr");
  const Buffer* out = mem.find("out_ptr");
  ASSERT_EQ(x->base, 0x10000000u);
  const std::string xName = "buffer 'x_ptr' (100 x f32)", outName = "buffer 'out_ptr' (100 x f32)";
  auto hex = [](uint64_t a) {
    char buf[32];
    std::snprintf(buf, sizeof(buf), "0x%llx", static_cast<unsigned long long>(a));
    return std::string(buf);
  };
  auto says = [&](uint64_t addr) { return mem.describeAddress(addr, 4); };

  // Below the first buffer, and the 0 address.
  EXPECT_EQ(says(x->base - 8), "address 0xffffff8 is 8 bytes before the start of " + xName);
  EXPECT_EQ(says(0), "address 0x0 is 268435456 bytes before the start of " + xName);
  EXPECT_EQ(mem.nearest(0), x);
  // Below 0: the issue's access, and x_ptr - 5e9 bytes. The signed value is shown.
  uint64_t issue = out->end() - 4000012288u;
  EXPECT_EQ(says(issue), "address 0xffffffff2194bb90 (-3731571824) is 4000007280 bytes before the start of " + xName);
  EXPECT_EQ(mem.nearest(issue), x);
  uint64_t wrapped = x->base - 5000000000u;
  EXPECT_EQ(says(wrapped), "address 0xfffffffee5fa0e00 (-4731564544) is 5000000000 bytes before the start of " + xName);
  EXPECT_EQ(says(~uint64_t(0)), "address 0xffffffffffffffff (-1) is 268435457 bytes before the start of " + xName);
  EXPECT_EQ(says(uint64_t(1) << 63), "address 0x8000000000000000 (-9223372036854775808) is 9223372037123211264 bytes "
                                     "before the start of " + xName);
  // Between the buffers: the nearer one, the first on a tie.
  uint64_t gap = out->base - x->end();
  ASSERT_EQ(gap % 2, 0u);
  EXPECT_EQ(says(x->end()), "address " + hex(x->end()) + " is 0 bytes past the end of " + xName);
  EXPECT_EQ(says(x->end() + 16), "address " + hex(x->end() + 16) + " is 16 bytes past the end of " + xName);
  EXPECT_EQ(says(out->base - 16), "address " + hex(out->base - 16) + " is 16 bytes before the start of " + outName);
  EXPECT_EQ(mem.nearest(x->end() + gap / 2 - 1), x);
  EXPECT_EQ(mem.nearest(x->end() + gap / 2), out);
  EXPECT_EQ(says(x->end() + gap / 2),
            "address " + hex(x->end() + gap / 2) + " is " + std::to_string(gap / 2) + " bytes before the start of " + outName);
  // Far above the last buffer, up to the largest positive address.
  EXPECT_EQ(says(0x7fff00000000u), "address 0x7fff00000000 is " + std::to_string(0x7fff00000000u - out->end()) +
                                       " bytes past the end of " + outName);
  uint64_t top = (uint64_t(1) << 63) - 1;
  EXPECT_EQ(says(top), "address 0x7fffffffffffffff is " + std::to_string(top - out->end()) + " bytes past the end of " + outName);
  EXPECT_EQ(mem.nearest(top), out);
  // Inside: an access that straddles the end, and (for completeness) one that fits.
  EXPECT_EQ(mem.describeAddress(out->end() - 4, 8),
            "address " + hex(out->end() - 4) + " (8 bytes) straddles the end of " + outName);
  EXPECT_EQ(mem.describeAddress(out->base, 4), "address " + hex(out->base) + " (4 bytes) is inside " + outName);
  Memory empty;
  EXPECT_EQ(empty.describeAddress(~uint64_t(0), 4), "address 0xffffffffffffffff (-1) is in no buffer (none are allocated)");
}

TEST(MemoryLayout, RejectsBadShapes) {
  Memory mem;
  EXPECT_THROW(mem.add("neg", DType::F32, {4, -1}, false), std::runtime_error);
  EXPECT_THROW(mem.add("huge", DType::F32, {int64_t(1) << 40, int64_t(1) << 40}, false), std::runtime_error);
  EXPECT_THROW(mem.add("big", DType::F32, {int64_t(1) << 29}, false), std::runtime_error);  // 2 GiB
  EXPECT_TRUE(mem.buffers().empty());
  EXPECT_THROW(memoryWith({spec("x", Fill::Zeros, {})}), std::runtime_error);
}

// ---------------------------------------------------------------------------------------------
// Fills

TEST(MemoryFill, Deterministic) {
  Memory m1 = memoryWith({spec("x", Fill::Randn, {1001}, 0, 1, 7), spec("y", Fill::Uniform, {333}, -1, 1, 7)});
  Memory m2 = memoryWith({spec("x", Fill::Randn, {1001}, 0, 1, 7), spec("y", Fill::Uniform, {333}, -1, 1, 7)});
  Memory m3 = memoryWith({spec("x", Fill::Randn, {1001}, 0, 1, 8), spec("y", Fill::Uniform, {333}, -1, 1, 8)});
  EXPECT_EQ(m1.find("x")->bytes, m2.find("x")->bytes);
  EXPECT_EQ(m1.find("y")->bytes, m2.find("y")->bytes);
  EXPECT_NE(m1.find("x")->bytes, m3.find("x")->bytes);
  EXPECT_NE(m1.find("y")->bytes, m3.find("y")->bytes);
  // The C++ standard fixes std::mt19937_64's sequence: the 10000th output of the default seed.
  std::mt19937_64 standard;
  standard.discard(9999);
  EXPECT_EQ(standard(), 9981545732273789042ull);
  // The first draw of seed 0 is u = (mt() >> 11) * 2^-53, rounded to f32.
  std::mt19937_64 ref(0);
  double u0 = static_cast<double>(ref() >> 11) * 0x1.0p-53;
  Memory m4 = memoryWith({spec("u", Fill::Uniform, {1}, 0, 1, 0)});
  EXPECT_EQ(m4.find("u")->getF(0), static_cast<float>(u0));
}

TEST(MemoryFill, RandnDistribution) {
  const int64_t n = 100000;
  Memory mem = memoryWith({spec("x", Fill::Randn, {n}, 0, 1, 1), spec("y", Fill::Randn, {100, 1000}, 3, 2, 2)});
  for (const char* name : {"x", "y"}) {
    const Buffer& b = *mem.find(name);
    double mean = 0, sq = 0;
    for (int64_t i = 0; i < n; ++i) mean += b.getF(i);
    mean /= n;
    for (int64_t i = 0; i < n; ++i) sq += (b.getF(i) - mean) * (b.getF(i) - mean);
    double sd = std::sqrt(sq / (n - 1));
    double wantMean = name[0] == 'x' ? 0 : 3, wantSd = name[0] == 'x' ? 1 : 2;
    // The standard error of the mean is sd/sqrt(n) ~ 0.003*sd: allow ~6 of them.
    EXPECT_NEAR(mean, wantMean, 0.02 * wantSd) << name;
    EXPECT_NEAR(sd, wantSd, 0.02 * wantSd) << name;
  }
  // About 68.3% within one standard deviation.
  const Buffer& x = *mem.find("x");
  int64_t within = 0;
  for (int64_t i = 0; i < n; ++i) within += std::fabs(x.getF(i)) < 1;
  EXPECT_NEAR(static_cast<double>(within) / n, 0.6827, 0.01);
}

TEST(MemoryFill, UniformBounds) {
  const int64_t n = 100000;
  Memory mem = memoryWith({spec("x", Fill::Uniform, {n}, -1, 1, 3),
                           spec("h", Fill::Uniform, {n}, 0, 1, 4, DType::F16),
                           spec("i", Fill::Uniform, {n}, 0, 10, 5, DType::I32),
                           spec("n", Fill::Uniform, {n}, -3, 2, 6, DType::I64)});
  const Buffer& x = *mem.find("x");
  double mean = 0;
  for (int64_t i = 0; i < n; ++i) {
    double v = x.getF(i);
    ASSERT_GE(v, -1);
    ASSERT_LT(v, 1);
    mean += v;
  }
  EXPECT_NEAR(mean / n, 0, 0.02);
  // f16 has few values near 1: results that would round up to hi are kept below it.
  const Buffer& h = *mem.find("h");
  for (int64_t i = 0; i < n; ++i) {
    ASSERT_GE(h.getF(i), 0);
    ASSERT_LT(h.getF(i), 1);
  }
  std::set<int64_t> seen;
  for (int64_t i = 0; i < n; ++i) seen.insert(mem.find("i")->getI(i));
  EXPECT_EQ(seen, (std::set<int64_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}));
  seen.clear();
  for (int64_t i = 0; i < n; ++i) seen.insert(mem.find("n")->getI(i));
  EXPECT_EQ(seen, (std::set<int64_t>{-3, -2, -1, 0, 1}));  // floor, not truncation
}

TEST(MemoryFill, ArangeFullZeros) {
  Memory mem = memoryWith({spec("a", Fill::Arange, {4, 3}, 5, 2, 0, DType::I32),
                           spec("f", Fill::Arange, {7}, 0.5, 0.25),
                           spec("c", Fill::Full, {6}, 2.5, 0, 0, DType::BF16),
                           spec("z", Fill::Zeros, {9}, 0, 0, 0, DType::I64),
                           spec("b", Fill::Arange, {4}, 0, 1, 0, DType::I1)});
  for (int64_t i = 0; i < 12; ++i) EXPECT_EQ(mem.find("a")->getI(i), 5 + 2 * i);
  for (int64_t i = 0; i < 7; ++i) EXPECT_EQ(mem.find("f")->getF(i), 0.5 + 0.25 * i);
  for (int64_t i = 0; i < 6; ++i) EXPECT_EQ(mem.find("c")->getF(i), 2.5);
  for (int64_t i = 0; i < 9; ++i) EXPECT_EQ(mem.find("z")->getI(i), 0);
  EXPECT_EQ(mem.find("b")->getI(0), 0);
  EXPECT_EQ(mem.find("b")->getI(3), 1);
}

TEST(MemoryFill, FileFill) {
  Buffer src;
  src.dtype = DType::I32;
  src.shape = {2, 3};
  src.bytes.resize(24);
  for (int64_t i = 0; i < 6; ++i) src.setI(i, i * i - 3);
  std::string path = tempPath("fill.npy");
  writeNpy(path, src);
  BufferSpec s = spec("p", Fill::File, {}, 0, 0, 0, DType::I32);
  s.file = path;
  s.output = true;
  Memory mem = memoryWith({s});
  const Buffer& b = *mem.find("p");
  EXPECT_EQ(b.shape, (Shape{2, 3}));
  EXPECT_TRUE(b.output);
  EXPECT_EQ(b.bytes, src.bytes);
  s.dtype = DType::F32;  // the kernel expects another dtype than the file holds
  EXPECT_THROW(memoryWith({s}), std::runtime_error);
  s.file = tempPath("missing.npy");
  EXPECT_THROW(memoryWith({s}), std::runtime_error);
}

// ---------------------------------------------------------------------------------------------
// Element access and rounding

TEST(MemoryBuffer, GetSetPerDType) {
  Memory mem;
  Buffer& i32 = mem.add("i32", DType::I32, {2}, false);
  i32.setI(0, (int64_t(1) << 32) + 5);  // wraps modulo 2^32
  i32.setF(1, -7.9);                    // truncates toward zero
  EXPECT_EQ(i32.getI(0), 5);
  EXPECT_EQ(i32.getI(1), -7);
  Buffer& f16 = mem.add("f16", DType::F16, {2}, false);
  f16.setF(0, 0.1);
  EXPECT_EQ(f16.getF(0), static_cast<double>(halfToFloat(0x2e66)));
  f16.setI(1, 2049);  // 2049 is not a half: rounds to even 2048
  EXPECT_EQ(f16.getF(1), 2048);
  Buffer& b = mem.add("b", DType::I1, {2}, false);  // (earlier references may now dangle)
  b.setF(0, 0.25);
  b.setI(1, 0);
  EXPECT_EQ(b.getI(0), 1);
  EXPECT_EQ(b.getI(1), 0);
}

TEST(MemoryBuffer, RoundToDType) {
  EXPECT_EQ(roundToDType(2.7, DType::I32), 2);
  EXPECT_EQ(roundToDType(-2.7, DType::I32), -2);
  EXPECT_EQ(roundToDType(1e12, DType::I32), 2147483647);
  EXPECT_EQ(roundToDType(-1e12, DType::I32), -2147483648.0);
  EXPECT_EQ(roundToDType(kNaN, DType::I32), 0);
  EXPECT_EQ(roundToDType(1e30, DType::I64), 9223372036854775807.0);
  EXPECT_EQ(floatToInt(kInf, DType::I64), std::numeric_limits<int64_t>::max());
  EXPECT_EQ(floatToInt(-kInf, DType::I64), std::numeric_limits<int64_t>::min());
  EXPECT_EQ(floatToInt(9223372036854775808.0, DType::I64), std::numeric_limits<int64_t>::max());
  EXPECT_EQ(floatToInt(-9223372036854775808.0, DType::I64), std::numeric_limits<int64_t>::min());
  EXPECT_EQ(floatToInt(-3.99, DType::I32), -3);
  EXPECT_EQ(floatToInt(kNaN, DType::I64), 0);
  EXPECT_EQ(roundToDType(kNaN, DType::I1), 1);
  EXPECT_EQ(roundToDType(0.0, DType::I1), 0);
  EXPECT_EQ(roundToDType(0.1, DType::F32), static_cast<double>(0.1f));
  EXPECT_EQ(roundToDType(1.0 + 1.0 / 256, DType::BF16), 1.0);  // a tie: to even
  EXPECT_EQ(roundToDType(70000, DType::F16), kInf);
}

// ---------------------------------------------------------------------------------------------
// 16-bit floats (bit patterns checked against numpy's float16)

TEST(HalfFloat, KnownBitPatterns) {
  struct Case {
    float value;
    uint16_t bits;
  };
  const Case cases[] = {
      {1.0f, 0x3c00},
      {-2.0f, 0xc000},
      {65504.0f, 0x7bff},                        // largest half
      {65519.98828125f, 0x7bff},                 // just below the rounding boundary
      {65520.0f, 0x7c00},                        // the boundary rounds (to even) to inf
      {std::numeric_limits<float>::infinity(), 0x7c00},
      {-std::numeric_limits<float>::infinity(), 0xfc00},
      {0x1p-14f, 0x0400},                        // smallest normal
      {0x1p-24f, 0x0001},                        // smallest subnormal
      {0x1p-25f, 0x0000},                        // half of it: tie, to even (0)
      {0x1.8p-25f, 0x0001},                      // above the tie
      {0x3p-25f, 0x0002},                        // 1.5 ulp: tie, to even (2)
      {1023 * 0x1p-24f, 0x03ff},                 // largest subnormal
      {0x1p-14f - 0x1p-25f, 0x0400},             // rounds up into the normals
      {0.1f, 0x2e66},
      {1.0f + 0x1p-11f, 0x3c00},                 // tie, to even (down)
      {1.0f + 0x3p-11f, 0x3c02},                 // tie, to even (up)
      {-0.0f, 0x8000},
      {1.0f / 3.0f, 0x3555},
      {1e-10f, 0x0000},
  };
  for (const Case& c : cases) EXPECT_EQ(floatToHalf(c.value), c.bits) << c.value;
  uint16_t nan = floatToHalf(std::numeric_limits<float>::quiet_NaN());
  EXPECT_EQ(nan & 0x7c00, 0x7c00);
  EXPECT_NE(nan & 0x03ff, 0);
  EXPECT_TRUE(std::isnan(halfToFloat(0x7e00)));
  EXPECT_TRUE(std::isnan(halfToFloat(0x7c01)));  // signalling NaN decodes to a NaN too
  EXPECT_EQ(halfToFloat(0x0001), 0x1p-24f);
  EXPECT_EQ(halfToFloat(0x7bff), 65504.0f);
  EXPECT_TRUE(std::signbit(halfToFloat(0x8000)));
}

TEST(HalfFloat, EveryPatternRoundTrips) {
  for (uint32_t h = 0; h <= 0xffff; ++h) {
    float f = halfToFloat(static_cast<uint16_t>(h));
    if (std::isnan(f)) {
      EXPECT_TRUE(std::isnan(halfToFloat(floatToHalf(f))));
      continue;
    }
    ASSERT_EQ(floatToHalf(f), h) << std::hex << h;
  }
}

TEST(Bf16, KnownBitPatterns) {
  struct Case {
    float value;
    uint16_t bits;
  };
  const Case cases[] = {
      {1.0f, 0x3f80},
      {-1.0f, 0xbf80},
      {1.0f + 0x1p-8f, 0x3f80},                  // tie, to even (down)
      {1.0f + 0x3p-8f, 0x3f82},                  // tie, to even (up)
      {1.0f + 0x1.8p-8f, 0x3f81},                // above the tie
      {0.1f, 0x3dcd},
      {std::numeric_limits<float>::max(), 0x7f80},  // rounds up to inf
      {std::numeric_limits<float>::infinity(), 0x7f80},
      {-std::numeric_limits<float>::infinity(), 0xff80},
      {std::numeric_limits<float>::denorm_min(), 0x0000},
      {0x1p-133f, 0x0001},                       // a bf16 subnormal
      {-0.0f, 0x8000},
  };
  for (const Case& c : cases) EXPECT_EQ(floatToBf16(c.value), c.bits) << c.value;
  uint16_t nan = floatToBf16(std::numeric_limits<float>::quiet_NaN());
  EXPECT_TRUE(std::isnan(bf16ToFloat(nan)));
  // A NaN whose payload sits only in the low bits must not become inf.
  float lowNaN;
  uint32_t bits = 0x7f800001;
  std::memcpy(&lowNaN, &bits, 4);
  EXPECT_TRUE(std::isnan(bf16ToFloat(floatToBf16(lowNaN))));
  EXPECT_EQ(bf16ToFloat(0x3f80), 1.0f);
  for (uint32_t h = 0; h <= 0xffff; ++h) {
    float f = bf16ToFloat(static_cast<uint16_t>(h));
    if (!std::isnan(f)) {
      ASSERT_EQ(floatToBf16(f), h) << std::hex << h;
    }
  }
}

// ---------------------------------------------------------------------------------------------
// .npy

TEST(Npy, RoundTripEveryDType) {
  const DType dtypes[] = {DType::F32, DType::F16, DType::BF16, DType::I32, DType::I64, DType::I1,
                          DType::F8E4M3, DType::F8E5M2};
  for (DType d : dtypes) {
    Memory mem = memoryWith({spec("x", Fill::Randn, {3, 5}, 0, 10, 11, d)});
    const Buffer& b = *mem.find("x");
    std::string path = tempPath(std::string("rt_") + dtypeName(d) + ".npy");
    writeNpy(path, b);
    std::string raw = readBytes(path);
    ASSERT_GE(raw.size(), 10u);
    EXPECT_EQ(raw.compare(0, 6, "\x93NUMPY"), 0);
    size_t headerLen = static_cast<unsigned char>(raw[8]) | (static_cast<unsigned char>(raw[9]) << 8);
    EXPECT_EQ((10 + headerLen) % 64, 0u);
    EXPECT_EQ(raw[10 + headerLen - 1], '\n');
    EXPECT_NE(raw.find("'shape': (3, 5)"), std::string::npos);
    Buffer r = readNpy(path);
    EXPECT_EQ(r.dtype, d) << dtypeName(d);
    EXPECT_EQ(r.shape, b.shape);
    EXPECT_EQ(r.bytes, b.bytes);
  }
  // Rank 1 uses Python's one-element tuple syntax.
  Memory mem = memoryWith({spec("v", Fill::Arange, {4})});
  std::string path = tempPath("rank1.npy");
  writeNpy(path, *mem.find("v"));
  EXPECT_NE(readBytes(path).find("'shape': (4,)"), std::string::npos);
  EXPECT_EQ(readNpy(path).shape, (Shape{4}));
}

// A header as numpy writes it, with `dict` as the header text.
std::string npyFile(const std::string& dict, const std::string& data) {
  std::string header = dict;
  header.append((64 - (10 + header.size() + 1) % 64) % 64, ' ');
  header += '\n';
  std::string out = "\x93NUMPY";
  out += '\x01';
  out += '\x00';
  out += static_cast<char>(header.size() & 0xff);
  out += static_cast<char>(header.size() >> 8);
  return out + header + data;
}

void expectRejected(const std::string& bytes, const std::string& expectedWords) {
  std::string path = tempPath("bad.npy");
  writeBytes(path, bytes);
  try {
    readNpy(path);
    ADD_FAILURE() << "accepted a bad file; expected: " << expectedWords;
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(expectedWords), std::string::npos) << e.what();
  }
}

TEST(Npy, ReadsNumpyStyleHeaders) {
  // Double quotes, no trailing comma, a 0-d array, extra spaces: all valid Python.
  std::string path = tempPath("styles.npy");
  float one = 1.5f;
  writeBytes(path, npyFile("{\"descr\": \"<f4\", \"shape\": (),  'fortran_order': False}",
                           std::string(reinterpret_cast<const char*>(&one), 4)));
  Buffer b = readNpy(path);
  EXPECT_EQ(b.shape, (Shape{1}));
  EXPECT_EQ(b.getF(0), 1.5);
}

TEST(Npy, RejectsMalformedFiles) {
  const std::string four(16, '\0');  // data for 4 f32
  expectRejected("not an npy file at all", "magic");
  expectRejected("\x93NUMPY", "magic");
  expectRejected(npyFile("{'descr': '<f4', 'fortran_order': True, 'shape': (4,), }", four), "fortran_order");
  expectRejected(npyFile("{'descr': '>f4', 'fortran_order': False, 'shape': (4,), }", four), "big-endian");
  expectRejected(npyFile("{'descr': '<f8', 'fortran_order': False, 'shape': (2,), }", four), "unsupported dtype '<f8'");
  expectRejected(npyFile("{'descr': '<u2', 'fortran_order': False, 'shape': (8,), }", four), "unsupported dtype '<u2'");
  expectRejected(npyFile("{'descr': '<f4', 'fortran_order': False, 'shape': (5,), }", four), "expected 20 data bytes");
  expectRejected(npyFile("{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }", four), "expected 12 data bytes");
  expectRejected(npyFile("{'descr': '<f4', 'shape': (4,), }", four), "lacks");
  expectRejected(npyFile("{'descr': '<f4', 'fortran_order': False, 'shape': (4,), 'x': 1}", four), "unknown header key");
  expectRejected(npyFile("{'descr': '<f4', 'fortran_order': False, 'shape': (-4,), }", four), "non-negative");
  expectRejected(npyFile("{'descr': '<f4', 'fortran_order': False, 'shape': (4", four), "shape");
  expectRejected(npyFile("{'descr': '<f4, 'fortran_order': False", ""), "bad .npy header");
  expectRejected(npyFile("{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999, 99999999999), }", four),
                 "limit");
  std::string version3 = npyFile("{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }", four);
  version3[6] = 3;
  expectRejected(version3, "unsupported version");
  std::string longHeader = npyFile("{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }", four);
  longHeader[9] = '\x7f';  // header length far past the end of the file
  expectRejected(longHeader, "past the end");
  EXPECT_THROW(readNpy(tempPath("does_not_exist.npy")), std::runtime_error);
}

// ---------------------------------------------------------------------------------------------
// Comparison

Buffer floatBuffer(DType d, std::vector<double> values) {
  Memory mem;
  Buffer& b = mem.add("out", d, {static_cast<int64_t>(values.size())}, true);
  for (size_t i = 0; i < values.size(); ++i) b.setF(static_cast<int64_t>(i), values[i]);
  return b;
}

TEST(Compare, Tolerances) {
  double atol, rtol;
  toleranceFor(DType::F32, atol, rtol);
  EXPECT_EQ(atol, 1e-5);
  EXPECT_EQ(rtol, 1e-4);
  toleranceFor(DType::F16, atol, rtol);
  EXPECT_EQ(atol, 1e-2);
  toleranceFor(DType::BF16, atol, rtol);
  EXPECT_EQ(rtol, 2e-2);
  toleranceFor(DType::I32, atol, rtol);
  EXPECT_EQ(atol + rtol, 0);
}

TEST(Compare, FloatsWithinAndBeyondTolerance) {
  Buffer ref = floatBuffer(DType::F32, {1.0, 100.0, 0.0, kNaN, kInf, -2.0});
  Comparison same = compareBuffers(ref, ref);
  EXPECT_TRUE(same.pass);
  EXPECT_EQ(same.mismatches, 0);
  EXPECT_EQ(same.maxAbsErr, 0);

  // 100 * 1e-4 + 1e-5 = 0.01001 allowed at element 1; 5e-6 at element 2 is within atol.
  Buffer close = floatBuffer(DType::F32, {1.0, 100.0 + 0.009, 5e-6, kNaN, kInf, -2.0});
  Comparison c = compareBuffers(ref, close);
  EXPECT_TRUE(c.pass) << c.mismatches;
  EXPECT_NEAR(c.maxAbsErr, 0.009, 1e-5);
  EXPECT_EQ(c.worstIndex, 1);

  Buffer bad = floatBuffer(DType::F32, {1.001, 100.0 + 0.5, 0.0, 1.0, -kInf, -2.0});
  Comparison d = compareBuffers(ref, bad);
  EXPECT_FALSE(d.pass);
  EXPECT_EQ(d.mismatches, 4);  // elements 0, 1, 3 (NaN vs 1), 4 (inf vs -inf)
  EXPECT_TRUE(d.worstIndex == 3 || d.worstIndex == 4);
  EXPECT_TRUE(std::isinf(d.maxAbsErr));
}

TEST(Compare, IntsExactAndShapeMismatch) {
  Memory mem;
  mem.add("a", DType::I32, {3}, true);
  mem.add("b", DType::I32, {3}, true);
  for (int64_t i = 0; i < 3; ++i) {
    mem.find("a")->setI(i, i);
    mem.find("b")->setI(i, i);
  }
  EXPECT_TRUE(compareBuffers(*mem.find("a"), *mem.find("b")).pass);
  mem.find("b")->setI(2, 3);
  Comparison c = compareBuffers(*mem.find("a"), *mem.find("b"));
  EXPECT_FALSE(c.pass);
  EXPECT_EQ(c.mismatches, 1);
  EXPECT_EQ(c.worstIndex, 2);
  EXPECT_EQ(c.maxAbsErr, 1);

  mem.add("f", DType::F32, {3}, true);
  Comparison d = compareBuffers(*mem.find("a"), *mem.find("f"));
  EXPECT_FALSE(d.pass);
  EXPECT_NE(d.reason.find("dtype"), std::string::npos);
  mem.add("g", DType::I32, {4}, true);
  Comparison e = compareBuffers(*mem.find("a"), *mem.find("g"));
  EXPECT_FALSE(e.pass);
  EXPECT_NE(e.reason.find("shape"), std::string::npos);
}

TEST(Compare, HalfTolerance) {
  Buffer ref = floatBuffer(DType::F16, {1.0, 2.0});
  EXPECT_TRUE(compareBuffers(ref, floatBuffer(DType::F16, {1.0078125, 2.0})).pass);  // 1 ulp
  EXPECT_FALSE(compareBuffers(ref, floatBuffer(DType::F16, {1.03125, 2.0})).pass);
}

}  // namespace
}  // namespace tl
