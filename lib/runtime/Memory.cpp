// Device memory for the CPU stages: buffers at virtual addresses, their deterministic fills, and
// the 16-bit float conversions every stage shares.
//
// Expects: a LaunchConfig from the front end (one BufferSpec per pointer parameter).
// Guarantees:
//   - Layout. Buffers are placed in declaration order from Memory::kBaseAddress, each base
//     aligned to kAlignment (256 bytes, like cudaMalloc), with at least kGuardBytes of unmapped
//     space after every buffer, so an access a few elements past the end belongs to no buffer.
//   - Fills are bit-for-bit reproducible on every machine and standard library: the only random
//     source is std::mt19937_64 (whose output sequence the C++ standard fixes), and the
//     transformations below are written out here instead of using std::*_distribution (whose
//     algorithms are implementation-defined). Element i of a buffer is filled in index order:
//       u(k)     = (mt() >> 11) * 2^-53                  the k-th draw, uniform in [0, 1)
//       Uniform: v = a + (b - a) * u(i); rounded to the dtype; float results that round up to b
//                are replaced by the largest value of the dtype below b; ints take floor(v), so
//                uniform(lo=0, hi=10, dtype=i32) gives 0..9.
//       Randn:   Box-Muller on pairs of draws: for elements 2j and 2j+1,
//                  u1 = 1 - u(2j)  (in (0, 1], so log never sees 0),  u2 = u(2j+1),
//                  r = sqrt(-2 ln u1),  t = 2 pi u2,
//                  z(2j) = r cos t,  z(2j+1) = r sin t    (all in double),
//                and v = a + b * z rounded to the dtype (an odd count drops the last sin).
//       Arange:  v = a + i * b (double), rounded to the dtype.
//       Full:    v = a rounded to the dtype.   Zeros: 0.
//       Empty:   every byte 0xFF ("allocated, not initialized": f32 NaN, i32 -1, like the
//                executor's fresh shared memory), so a read of it shows up as a wrong result.
//       Values:  element k is values[k]: ints stored exactly (wrapping like setI), floats
//                rounded to the dtype.
//       Pointers: element k is the base address of buffer pointees[k] (i64), written once every
//                buffer has its address.
//   - f16/bf16 conversions round to nearest even, handle subnormals, infinities and NaN (NaN
//     stays a quiet NaN with the sign kept). The fp8 conversions are runtime/Fp8.h's.
#include "runtime/Memory.h"

#include <sstream>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <stdexcept>

namespace tl {

// ---------------------------------------------------------------------------------------------
// 16-bit floats.

static uint32_t floatBits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

static float bitsFloat(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

// binary16: 1 sign bit, 5 exponent bits (bias 15), 10 mantissa bits.
uint16_t floatToHalf(float f) {
  uint32_t x = floatBits(f);
  uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000);
  uint32_t ax = x & 0x7fffffff;
  if (ax >= 0x7f800000) {                     // inf or NaN
    if (ax == 0x7f800000) return sign | 0x7c00;
    return static_cast<uint16_t>(sign | 0x7e00 | ((ax >> 13) & 0x3ff));  // quiet NaN
  }
  if (ax >= 0x477ff000) return sign | 0x7c00;  // >= 65520 (halfway past 65504): rounds to inf
  if (ax >= 0x38800000) {                      // normal half (>= 2^-14)
    uint32_t h = ((((ax >> 23) - 127 + 15) << 10) | ((ax >> 13) & 0x3ff));
    uint32_t rem = ax & 0x1fff;                // the 13 dropped mantissa bits
    if (rem > 0x1000 || (rem == 0x1000 && (h & 1))) ++h;  // a carry into the exponent is right
    return static_cast<uint16_t>(sign | h);
  }
  if (ax < 0x33000000) return sign;            // below 2^-25 (half the smallest subnormal): 0
  // Subnormal half: value = m * 2^-24 with m < 1024. The float is mant * 2^(e-150), so
  // m = mant * 2^(e-126) = mant >> (126 - e), rounded to nearest even.
  uint32_t e = ax >> 23;
  uint32_t mant = (ax & 0x7fffff) | 0x800000;
  uint32_t shift = 126 - e;                    // 14..24
  uint32_t m = mant >> shift;
  uint32_t rem = mant & ((1u << shift) - 1);
  uint32_t halfway = 1u << (shift - 1);
  if (rem > halfway || (rem == halfway && (m & 1))) ++m;  // m == 1024 encodes 2^-14: right
  return static_cast<uint16_t>(sign | m);
}

float halfToFloat(uint16_t h) {
  uint32_t sign = static_cast<uint32_t>(h & 0x8000) << 16;
  uint32_t e = (h >> 10) & 0x1f;
  uint32_t m = h & 0x3ff;
  if (e == 0x1f) return bitsFloat(sign | 0x7f800000 | (m << 13));  // inf / NaN
  if (e == 0) {                                                      // zero / subnormal
    float v = std::ldexp(static_cast<float>(m), -24);               // exact
    return sign ? -v : v;
  }
  return bitsFloat(sign | ((e - 15 + 127) << 23) | (m << 13));
}

// bfloat16 is the top half of a float: same exponent, 7 mantissa bits. Rounding adds just
// under half an ulp (plus the lsb, for ties to even) and truncates; this is also right for
// subnormals and overflows to inf exactly when it should.
uint16_t floatToBf16(float f) {
  uint32_t x = floatBits(f);
  if ((x & 0x7fffffff) > 0x7f800000) return static_cast<uint16_t>((x >> 16) | 0x0040);  // quiet NaN
  uint32_t lsb = (x >> 16) & 1;
  return static_cast<uint16_t>((x + 0x7fff + lsb) >> 16);
}

float bf16ToFloat(uint16_t h) { return bitsFloat(static_cast<uint32_t>(h) << 16); }

// Float -> integer: truncate toward zero, saturate at the type's limits, NaN -> 0.
static int64_t truncSaturate(double v, double lo, double hiExclusive, int64_t loI, int64_t hiI) {
  if (std::isnan(v)) return 0;
  if (v < lo) return loI;
  if (v >= hiExclusive) return hiI;
  return static_cast<int64_t>(std::trunc(v));
}

int64_t floatToInt(double v, DType dtype) {
  switch (dtype) {
    case DType::I1: return v != 0 ? 1 : 0;
    case DType::I32:
      return truncSaturate(v, -2147483648.0, 2147483648.0, std::numeric_limits<int32_t>::min(),
                           std::numeric_limits<int32_t>::max());
    default:
      return truncSaturate(v, -9223372036854775808.0, 9223372036854775808.0,
                           std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max());
  }
}

double roundToDType(double v, DType dtype) {
  switch (dtype) {
    case DType::F32: return static_cast<float>(v);
    case DType::F16: return halfToFloat(floatToHalf(static_cast<float>(v)));
    case DType::BF16: return bf16ToFloat(floatToBf16(static_cast<float>(v)));
    case DType::F8E4M3:
    case DType::F8E5M2: return roundToFp8(dtype, static_cast<float>(v));
    case DType::I1:  // NaN != 0 is true
    case DType::I32:
    case DType::I64: return static_cast<double>(floatToInt(v, dtype));
  }
  return v;
}

// ---------------------------------------------------------------------------------------------
// Buffer element access. Storage is little-endian host layout (the build machines are x86-64 /
// aarch64 little-endian), one dtypeBytes(dtype) slot per element.

int64_t Buffer::numel() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

template <typename T>
static T loadAs(const std::vector<uint8_t>& bytes, int64_t i) {
  T v;
  std::memcpy(&v, bytes.data() + i * static_cast<int64_t>(sizeof(T)), sizeof(T));
  return v;
}

template <typename T>
static void storeAs(std::vector<uint8_t>& bytes, int64_t i, T v) {
  std::memcpy(bytes.data() + i * static_cast<int64_t>(sizeof(T)), &v, sizeof(T));
}

double Buffer::getF(int64_t i) const {
  switch (dtype) {
    case DType::F32: return loadAs<float>(bytes, i);
    case DType::F16: return halfToFloat(loadAs<uint16_t>(bytes, i));
    case DType::BF16: return bf16ToFloat(loadAs<uint16_t>(bytes, i));
    case DType::F8E4M3:
    case DType::F8E5M2: return fp8ToFloat(dtype, loadAs<uint8_t>(bytes, i));
    case DType::I1: return loadAs<uint8_t>(bytes, i) != 0 ? 1 : 0;
    case DType::I32: return loadAs<int32_t>(bytes, i);
    case DType::I64: return static_cast<double>(loadAs<int64_t>(bytes, i));
  }
  return 0;
}

int64_t Buffer::getI(int64_t i) const {
  switch (dtype) {
    case DType::I1: return loadAs<uint8_t>(bytes, i) != 0 ? 1 : 0;
    case DType::I32: return loadAs<int32_t>(bytes, i);
    case DType::I64: return loadAs<int64_t>(bytes, i);
    default: return floatToInt(getF(i), DType::I64);
  }
}

void Buffer::setF(int64_t i, double v) {
  switch (dtype) {
    case DType::F32: storeAs<float>(bytes, i, static_cast<float>(v)); break;
    case DType::F16: storeAs<uint16_t>(bytes, i, floatToHalf(static_cast<float>(v))); break;
    case DType::BF16: storeAs<uint16_t>(bytes, i, floatToBf16(static_cast<float>(v))); break;
    case DType::F8E4M3:
    case DType::F8E5M2: storeAs<uint8_t>(bytes, i, floatToFp8(dtype, static_cast<float>(v))); break;
    case DType::I1: storeAs<uint8_t>(bytes, i, v != 0 ? 1 : 0); break;
    case DType::I32: storeAs<int32_t>(bytes, i, static_cast<int32_t>(floatToInt(v, DType::I32))); break;
    case DType::I64: storeAs<int64_t>(bytes, i, floatToInt(v, DType::I64)); break;
  }
}

// Integers are stored modulo 2^bits (two's complement), i1 as `v != 0`.
void Buffer::setI(int64_t i, int64_t v) {
  switch (dtype) {
    case DType::I1: storeAs<uint8_t>(bytes, i, v != 0 ? 1 : 0); break;
    case DType::I32: storeAs<int32_t>(bytes, i, static_cast<int32_t>(static_cast<uint32_t>(v))); break;
    case DType::I64: storeAs<int64_t>(bytes, i, v); break;
    default: setF(i, static_cast<double>(v)); break;
  }
}

std::string Buffer::describe() const {
  std::string s;
  for (int64_t d : shape) s += std::to_string(d) + " x ";
  return s + dtypeName(dtype);
}

// ---------------------------------------------------------------------------------------------
// Memory layout.

static uint64_t alignUp(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

Buffer& Memory::add(std::string name, DType dtype, Shape shape, bool output) {
  uint64_t bytes = static_cast<uint64_t>(dtypeBytes(dtype));
  for (int64_t d : shape) {
    if (d < 0) throw std::runtime_error("buffer '" + name + "' has a negative dimension (" + std::to_string(d) + ")");
    if (d != 0 && bytes > kMaxBufferBytes / static_cast<uint64_t>(d))
      throw std::runtime_error("buffer '" + name + "' is larger than the " +
                               std::to_string(kMaxBufferBytes >> 20) + " MiB limit");
    bytes *= static_cast<uint64_t>(d);
  }
  if (bytes > kMaxBufferBytes)
    throw std::runtime_error("buffer '" + name + "' is larger than the " +
                             std::to_string(kMaxBufferBytes >> 20) + " MiB limit");
  Buffer b;
  b.name = std::move(name);
  b.dtype = dtype;
  b.shape = std::move(shape);
  b.output = output;
  b.base = alignUp(next_, kAlignment);
  b.bytes.assign(bytes, 0);
  if (output) b.stored.assign(static_cast<size_t>(bytes / static_cast<uint64_t>(dtypeBytes(dtype))), 0);
  next_ = b.base + bytes + kGuardBytes;
  buffers_.push_back(std::move(b));
  return buffers_.back();
}

Buffer* Memory::find(const std::string& name) {
  for (auto& b : buffers_)
    if (b.name == name) return &b;
  return nullptr;
}

const Buffer* Memory::find(const std::string& name) const {
  for (const auto& b : buffers_)
    if (b.name == name) return &b;
  return nullptr;
}

Buffer* Memory::resolve(uint64_t addr, uint64_t size) {
  for (auto& b : buffers_)
    if (addr >= b.base && addr < b.end() && size <= b.end() - addr) return &b;
  return nullptr;
}

namespace {

// Addresses are compared as signed 64-bit numbers: a pointer moved below 0 by a negative offset
// (x_ptr - 5000000000) wraps to 0xfffffffe...; it lies below every buffer, not 2^64 bytes past
// the last one. Buffers live far below 2^63, so an address with the top bit set is one of those.
bool belowZero(uint64_t addr) { return (addr >> 63) != 0; }

// Where an address lies relative to one buffer.
struct Placement {
  enum Where { Before, Inside, Past } where;
  uint64_t bytes;  // Before: bytes before the start; Past: bytes past the end; Inside: 0
};

// Exact, with no wrap: for an address below zero b.base - addr is b.base + |addr| < 2^64,
// since b.base < 2^63.
Placement placeOf(const Buffer& b, uint64_t addr) {
  if (belowZero(addr) || addr < b.base) return {Placement::Before, b.base - addr};
  if (addr >= b.end()) return {Placement::Past, addr - b.end()};
  return {Placement::Inside, 0};
}

}  // namespace

std::string Memory::describeAddress(uint64_t addr, uint64_t size) const {
  std::ostringstream os;
  os << "address 0x" << std::hex << addr << std::dec;
  if (belowZero(addr)) os << " (" << static_cast<int64_t>(addr) << ")";  // a negative offset's result
  const Buffer* b = nearest(addr);
  if (!b) return os.str() + " is in no buffer (none are allocated)";
  std::string name = "buffer '" + b->name + "' (" + b->describe() + ")";
  Placement p = placeOf(*b, addr);
  if (p.where == Placement::Past) os << " is " << p.bytes << " bytes past the end of " << name;
  else if (p.where == Placement::Before) os << " is " << p.bytes << " bytes before the start of " << name;
  else if (size > b->end() - addr) os << " (" << size << " bytes) straddles the end of " << name;
  else os << " (" << size << " bytes) is inside " << name;
  return os.str();
}

std::string outOfBoundsHint(bool store, bool masked, const std::string* unchecked) {
  const char* what = store ? "store" : "load";
  if (unchecked)
    return std::string("; this ") + what + " is through a block pointer whose " + *unchecked +
           ": an element past the block pointer's shape there is accessed; add the dimension to boundary_check";
  if (!masked)
    return std::string("; this ") + what + " has no mask: guard the ragged edge with mask=, e.g. " + what +
           "(ptr + offs" + (store ? ", value" : "") + ", mask=offs < N)";
  return std::string("; this ") + what + "'s mask lets the element through: check the bound the mask compares with";
}

Unwritten unwrittenElements(const Buffer& b) {
  Unwritten u;
  for (size_t i = 0; i < b.stored.size(); ++i)
    if (!b.stored[i]) {
      if (u.count++ == 0) u.first = static_cast<int64_t>(i);
    }
  return u;
}

std::string formatIndex(const Shape& shape, int64_t flat) {
  std::vector<int64_t> idx(shape.size(), 0);
  for (size_t k = shape.size(); k-- > 0;) {
    int64_t d = shape[k] > 0 ? shape[k] : 1;
    idx[k] = flat % d;
    flat /= d;
  }
  std::string s = "[";
  for (size_t k = 0; k < idx.size(); ++k) s += (k ? ", " : "") + std::to_string(idx[k]);
  return s + "]";
}

const Buffer* Memory::nearest(uint64_t addr) const {
  const Buffer* best = nullptr;
  uint64_t bestDist = 0;
  for (const auto& b : buffers_) {
    Placement p = placeOf(b, addr);
    uint64_t dist = p.where == Placement::Inside ? 0 : p.bytes + (p.where == Placement::Past);
    if (!best || dist < bestDist) {
      best = &b;
      bestDist = dist;
    }
  }
  return best;
}

// ---------------------------------------------------------------------------------------------
// Fills (the algorithms are in the header comment).

static double uniform01(std::mt19937_64& rng) { return static_cast<double>(rng() >> 11) * 0x1.0p-53; }

// The largest value of float dtype `d` strictly below `v` (v representable in d).
static double nextBelow(double v, DType d) {
  float f = static_cast<float>(v);
  if (d == DType::F32) return std::nextafter(f, -std::numeric_limits<float>::infinity());
  if (isFp8(d)) {  // the same step on the 8-bit pattern
    uint8_t c = floatToFp8(d, f);
    if ((c & 0x7f) == 0) c = 0x81;
    else if (c & 0x80) ++c;
    else --c;
    return fp8ToFloat(d, c);
  }
  // 16-bit formats: step the bit pattern one ulp toward -inf.
  bool isHalf = d == DType::F16;
  uint16_t h = isHalf ? floatToHalf(f) : floatToBf16(f);
  if ((h & 0x7fff) == 0) h = 0x8001;            // +-0 -> the smallest negative subnormal
  else if (h & 0x8000) ++h;                     // negative: magnitude grows
  else --h;                                     // positive: magnitude shrinks
  return isHalf ? halfToFloat(h) : bf16ToFloat(h);
}

static void fillBuffer(Buffer& buf, const BufferSpec& spec) {
  const int64_t n = buf.numel();
  std::mt19937_64 rng(spec.seed);
  switch (spec.fill) {
    case Fill::Zeros:
      break;  // add() zeroed the storage
    case Fill::Full:
      for (int64_t i = 0; i < n; ++i) buf.setF(i, spec.a);
      break;
    case Fill::Arange:
      for (int64_t i = 0; i < n; ++i) buf.setF(i, spec.a + static_cast<double>(i) * spec.b);
      break;
    case Fill::Uniform:
      for (int64_t i = 0; i < n; ++i) {
        double v = spec.a + (spec.b - spec.a) * uniform01(rng);
        if (isInt(buf.dtype)) {
          buf.setF(i, std::floor(v));
          continue;
        }
        double r = roundToDType(v, buf.dtype);
        if (r >= spec.b && spec.b > spec.a) r = nextBelow(roundToDType(spec.b, buf.dtype), buf.dtype);
        buf.setF(i, r);
      }
      break;
    case Fill::Randn:
      for (int64_t i = 0; i < n; i += 2) {
        double u1 = 1.0 - uniform01(rng);
        double u2 = uniform01(rng);
        double r = std::sqrt(-2.0 * std::log(u1));
        double t = 2.0 * 3.14159265358979323846 * u2;
        buf.setF(i, spec.a + spec.b * (r * std::cos(t)));
        if (i + 1 < n) buf.setF(i + 1, spec.a + spec.b * (r * std::sin(t)));
      }
      break;
    case Fill::File:
      break;  // handled by fromLaunch
    case Fill::Empty:
      std::fill(buf.bytes.begin(), buf.bytes.end(), uint8_t(0xFF));
      break;
    case Fill::Values:
      for (int64_t i = 0; i < n && i < static_cast<int64_t>(spec.values.size()); ++i) {
        const ScalarValue& v = spec.values[static_cast<size_t>(i)];
        if (isFloat(v.dtype)) buf.setF(i, v.f);
        else buf.setI(i, v.i);
      }
      break;
    case Fill::Pointers:
      break;  // fromLaunch writes the addresses once every buffer has one
  }
}

Memory Memory::fromLaunch(const LaunchConfig& launch) {
  Memory mem;
  for (const BufferSpec& spec : launch.buffers) {
    if (spec.fill == Fill::File) {
      Buffer file = readNpy(spec.file);
      if (file.dtype != spec.dtype)
        throw std::runtime_error("buffer '" + spec.param + "': '" + spec.file + "' holds " +
                                 dtypeName(file.dtype) + " data but the launch expects " +
                                 dtypeName(spec.dtype));
      if (!spec.shape.empty() && spec.shape != file.shape)
        throw std::runtime_error("buffer '" + spec.param + "': '" + spec.file + "' has shape (" +
                                 file.describe() + ") but the launch expects another shape");
      Buffer& b = mem.add(spec.param, file.dtype, file.shape, spec.output);
      b.bytes = std::move(file.bytes);
      continue;
    }
    if (spec.shape.empty()) throw std::runtime_error("buffer '" + spec.param + "' has no shape");
    Buffer& b = mem.add(spec.param, spec.dtype, spec.shape, spec.output);
    fillBuffer(b, spec);
  }
  for (const BufferSpec& spec : launch.buffers) {
    if (spec.fill != Fill::Pointers) continue;
    Buffer* table = mem.find(spec.param);
    if (table->dtype != DType::I64 || table->numel() != static_cast<int64_t>(spec.pointees.size()))
      throw std::runtime_error("pointer table '" + spec.param + "' must be " + std::to_string(spec.pointees.size()) +
                               " x i64, got " + table->describe());
    table->pointees = spec.pointees;
    for (size_t k = 0; k < spec.pointees.size(); ++k) {
      const Buffer* target = mem.find(spec.pointees[k]);
      if (!target)
        throw std::runtime_error("pointer table '" + spec.param + "' names buffer '" + spec.pointees[k] +
                                 "', which the launch does not have");
      mem.find(spec.param)->setI(static_cast<int64_t>(k), static_cast<int64_t>(target->base));
    }
  }
  return mem;
}

}  // namespace tl
