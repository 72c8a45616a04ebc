// The typed loops behind tl-block's ops (see TileKernels.h for the contract and
// BlockInterpreter.cpp's header for the element semantics they implement).
//
// Pattern: each public function calls withStorage() once, which hands a lambda the C++ element
// type T; the lambda switches once on the op kind and calls a small loop template (map1, map2,
// reduceRow, ...) with an inlined element function. The loops take __restrict pointers and
// have no calls or branches the compiler cannot turn into vector selects, except where a libm
// call (expf, ...) or an integer division makes that impossible.
#include "block/TileKernels.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <type_traits>

#include "runtime/DevicePrint.h"
#include "runtime/FloatOps.h"
#include "runtime/Memory.h"

namespace tl::block {

namespace {

template <class T>
constexpr bool kIsFloat = std::is_same_v<T, float>;

// --- wrapping (two's complement) integer arithmetic, done in the unsigned type --------------
template <class T>
T wrapAdd(T a, T b) {
  using U = std::make_unsigned_t<T>;
  return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
}
template <class T>
T wrapSub(T a, T b) {
  using U = std::make_unsigned_t<T>;
  return static_cast<T>(static_cast<U>(a) - static_cast<U>(b));
}
template <class T>
T wrapMul(T a, T b) {
  using U = std::make_unsigned_t<T>;
  return static_cast<T>(static_cast<U>(a) * static_cast<U>(b));
}
template <class T>
T wrapNeg(T a) {
  using U = std::make_unsigned_t<T>;
  return static_cast<T>(U(0) - static_cast<U>(a));
}

// --- the combine step of each reduction; `maximum`/`minimum` use the same functions ---------
// Floats: a NaN operand gives that NaN (acc's first); equal operands (+0 and -0) give +0 for
// max and -0 for min (the bitwise AND / OR of the two); otherwise the larger / smaller. Written
// as selects so loops over them vectorize. Max/min are then associative and commutative (up to
// which NaN comes out), so any reduction order gives the reference's result.
inline uint32_t bitsOf(float v) { return std::bit_cast<uint32_t>(v); }

template <class T>
T combineSum(T acc, T x) {
  if constexpr (kIsFloat<T>) return acc + x;
  else return wrapAdd(acc, x);
}
template <class T>
T combineMax(T acc, T x) {
  if constexpr (kIsFloat<T>) {
    T r = acc > x ? acc : x;
    r = acc == x ? std::bit_cast<float>(bitsOf(acc) & bitsOf(x)) : r;
    r = x != x ? x : r;
    return acc != acc ? acc : r;
  } else {
    return acc > x ? acc : x;
  }
}
template <class T>
T combineMin(T acc, T x) {
  if constexpr (kIsFloat<T>) {
    T r = acc < x ? acc : x;
    r = acc == x ? std::bit_cast<float>(bitsOf(acc) | bitsOf(x)) : r;
    r = x != x ? x : r;
    return acc != acc ? acc : r;
  } else {
    return acc < x ? acc : x;
  }
}

// Float -> integer: truncate toward zero, saturate at the type's range, NaN -> 0.
template <class I>
I floatToIntSat(float x) {
  constexpr float kLimit = -static_cast<float>(std::numeric_limits<I>::min());  // 2^31 or 2^63
  if (x != x) return 0;
  if (x >= kLimit) return std::numeric_limits<I>::max();
  if (x < -kLimit) return std::numeric_limits<I>::min();
  return static_cast<I>(x);
}

// --- loop templates -------------------------------------------------------------------------
template <class T, class R, class F>
void map1(const T* __restrict x, R* __restrict y, int64_t n, F f) {
  for (int64_t i = 0; i < n; ++i) y[i] = f(x[i]);
}

template <class T, class R, class F>
void map2(const T* __restrict a, const T* __restrict b, R* __restrict y, int64_t n, F f) {
  for (int64_t i = 0; i < n; ++i) y[i] = f(a[i], b[i]);
}

// Reduces x[0..n) (n >= 1) with `combine`. Short rows go sequentially from x[0], exactly like
// the reference. Longer rows use kLanes independent accumulators (lane k starts at x[k] and
// sees x[k + kLanes], x[k + 2 kLanes], ...) combined pairwise at the end: the inner loop has a
// fixed trip count, so it becomes vector operations, and float sums round less than one
// sequential accumulator would. For integers and max/min the order does not change the result.
template <class T, class C>
T reduceRow(const T* __restrict x, int64_t n, C combine) {
  constexpr int kLanes = 16;
  if (n < 2 * kLanes) {
    T acc = x[0];
    for (int64_t i = 1; i < n; ++i) acc = combine(acc, x[i]);
    return acc;
  }
  T lanes[kLanes];
  for (int k = 0; k < kLanes; ++k) lanes[k] = x[k];
  int64_t i = kLanes;
  for (; i + kLanes <= n; i += kLanes)
    for (int k = 0; k < kLanes; ++k) lanes[k] = combine(lanes[k], x[i + k]);
  for (; i < n; ++i) lanes[0] = combine(lanes[0], x[i]);
  for (int width = kLanes / 2; width >= 1; width /= 2)
    for (int k = 0; k < width; ++k) lanes[k] = combine(lanes[k], lanes[k + width]);
  return lanes[0];
}

// A tile seen around dim `axis`: `outer` blocks (the dims before it) of `len` (its extent)
// times `inner` (the dims after it) elements.
struct AxisSplit {
  int64_t outer, len, inner;
};
AxisSplit splitAt(const Tile& t, int axis) {
  AxisSplit a{1, t.dims[static_cast<size_t>(axis)], 1};
  for (int d = 0; d < axis; ++d) a.outer *= t.dims[static_cast<size_t>(d)];
  for (int d = axis + 1; d < t.rank; ++d) a.inner *= t.dims[static_cast<size_t>(d)];
  return a;
}

// Reduces each column of a rows x cols array into y[cols]: y starts as row 0 and every later
// row is combined in order (the reference's order, so even float sums match it bit for bit);
// the inner loop runs along a row and vectorizes.
template <class T, class C>
void reduceColumns(const T* __restrict x, int64_t rows, int64_t cols, T* __restrict y, C combine) {
  std::copy_n(x, cols, y);
  for (int64_t i = 1; i < rows; ++i) {
    const T* row = x + i * cols;
    for (int64_t j = 0; j < cols; ++j) y[j] = combine(y[j], row[j]);
  }
}

// Does v replace the current best in argmax? Greater wins; for floats a NaN beats any number
// and the first NaN stays (NaN counts as the maximum; ties keep the first index).
template <class T>
bool argmaxBetter(T v, T best) {
  if constexpr (kIsFloat<T>) return v > best || (v != v && best == best);
  else return v > best;
}

// First index of the maximum of x[0], x[stride], ..., x[(n-1)*stride].
template <class T>
int32_t argmaxStrided(const T* x, int64_t n, int64_t stride) {
  T best = x[0];
  int64_t bestIndex = 0;
  for (int64_t k = 1; k < n; ++k) {
    T v = x[k * stride];
    if (argmaxBetter(v, best)) {
      best = v;
      bestIndex = k;
    }
  }
  return static_cast<int32_t>(bestIndex);
}

}  // namespace

// ---------------------------------------------------------------------------------------------
float roundFloat(float v, DType dtype) {
  switch (dtype) {
    case DType::F16: return halfToFloat(floatToHalf(v));
    case DType::BF16: return bf16ToFloat(floatToBf16(v));
    case DType::F8E4M3:
    case DType::F8E5M2: return roundToFp8(dtype, v);
    default: return v;
  }
}

void roundToOwnDType(Tile& t) {
  if (t.storage != Storage::F32 || t.dtype == DType::F32) return;
  float* x = t.f32.data();
  if (t.dtype == DType::F16)
    for (int64_t i = 0; i < t.n; ++i) x[i] = halfToFloat(floatToHalf(x[i]));
  else if (isFp8(t.dtype))
    for (int64_t i = 0; i < t.n; ++i) x[i] = roundToFp8(t.dtype, x[i]);
  else
    for (int64_t i = 0; i < t.n; ++i) x[i] = bf16ToFloat(floatToBf16(x[i]));
}

void fillInt(Tile& out, int64_t value) {
  switch (out.storage) {
    case Storage::I32: std::fill_n(out.i32.data(), out.n, static_cast<int32_t>(value)); break;
    case Storage::I64: std::fill_n(out.i64.data(), out.n, value); break;
    case Storage::I1: std::fill_n(out.i1.data(), out.n, uint8_t(value != 0)); break;
    case Storage::F32: fillFloat(out, static_cast<double>(value)); break;
    case Storage::Ptr: std::fill_n(out.ptr.data(), out.n, static_cast<uint64_t>(value)); break;
  }
}

void fillFloat(Tile& out, double value) {
  if (out.storage != Storage::F32) {
    fillInt(out, static_cast<int64_t>(value));
    return;
  }
  // Rounded straight from the double attribute, as the reference does.
  float v = static_cast<float>(roundToDType(value, out.dtype));
  std::fill_n(out.f32.data(), out.n, v);
}

void fillArange(Tile& out, int64_t start) {
  int32_t* y = out.i32.data();
  for (int64_t i = 0; i < out.n; ++i) y[i] = static_cast<int32_t>(start + i);
}

void splat(const Tile& scalar, Tile& out) {
  withStorage(out.storage, [&](auto tag) {
    using T = typename decltype(tag)::type;
    std::fill_n(out.data<T>(), out.n, scalar.data<T>()[0]);
  });
}

// Row-major strides of a tile's dims, 0 where the dim has extent 1 (a broadcast reads it again).
static std::array<int64_t, kMaxTileRank> broadcastStrides(const Tile& t) {
  std::array<int64_t, kMaxTileRank> st{};
  int64_t s = 1;
  for (int d = t.rank - 1; d >= 0; --d) {
    st[static_cast<size_t>(d)] = t.dims[static_cast<size_t>(d)] == 1 ? 0 : s;
    s *= t.dims[static_cast<size_t>(d)];
  }
  return st;
}

void broadcast(const Tile& in, Tile& out) {
  // Rank 1 is the rank-2 case with one row (Tile keeps rows = 1 for it).
  withStorage(out.storage, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* x = in.data<T>();
    T* y = out.data<T>();
    if (out.rank == 3) {  // one row of out at a time, each read with in's strides
      const auto st = broadcastStrides(in);
      for (int64_t i = 0; i < out.dims[0]; ++i)
        for (int64_t j = 0; j < out.dims[1]; ++j) {
          const T* src = x + i * st[0] + j * st[1];
          T* dst = y + (i * out.dims[1] + j) * out.cols;
          for (int64_t k = 0; k < out.cols; ++k) dst[k] = src[k * st[2]];
        }
      return;
    }
    for (int64_t i = 0; i < out.rows; ++i) {
      const T* src = x + (in.rows == 1 ? 0 : i * in.cols);
      T* dst = y + i * out.cols;
      if (in.cols == 1) std::fill_n(dst, out.cols, src[0]);
      else std::copy_n(src, out.cols, dst);
    }
  });
}

void copyElements(const Tile& in, Tile& out) {
  withStorage(out.storage, [&](auto tag) {
    using T = typename decltype(tag)::type;
    std::copy_n(in.data<T>(), out.n, out.data<T>());
  });
}

void transpose(const Tile& in, Tile& out) {
  withStorage(out.storage, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* x = in.data<T>();
    T* y = out.data<T>();
    for (int64_t i = 0; i < in.rows; ++i)
      for (int64_t j = 0; j < in.cols; ++j) y[j * out.cols + i] = x[i * in.cols + j];
  });
}

void permute(const Tile& in, const std::vector<int>& order, Tile& out) {
  // in's stride for each out dim; then walk out in row-major order.
  std::array<int64_t, kMaxTileRank> inStride{}, st{1, 1, 1}, ext{1, 1, 1};
  int64_t s = 1;
  for (int d = in.rank - 1; d >= 0; --d) {
    inStride[static_cast<size_t>(d)] = s;
    s *= in.dims[static_cast<size_t>(d)];
  }
  const size_t pad = static_cast<size_t>(kMaxTileRank - out.rank);  // out's dims right-aligned in 3
  for (size_t j = 0; j < order.size(); ++j) {
    st[pad + j] = inStride[static_cast<size_t>(order[j])];
    ext[pad + j] = out.dims[j];
  }
  withStorage(out.storage, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* x = in.data<T>();
    T* y = out.data<T>();
    for (int64_t i = 0; i < ext[0]; ++i)
      for (int64_t j = 0; j < ext[1]; ++j)
        for (int64_t k = 0; k < ext[2]; ++k) *y++ = x[i * st[0] + j * st[1] + k * st[2]];
  });
}

void join(const Tile& a, const Tile& b, Tile& out) {
  withStorage(out.storage, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* x = a.data<T>();
    const T* z = b.data<T>();
    T* y = out.data<T>();
    for (int64_t i = 0; i < a.n; ++i) {
      y[2 * i] = x[i];
      y[2 * i + 1] = z[i];
    }
  });
}

void split(const Tile& in, int64_t index, Tile& out) {
  withStorage(out.storage, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* x = in.data<T>();
    T* y = out.data<T>();
    for (int64_t i = 0; i < out.n; ++i) y[i] = x[2 * i + index];
  });
}

// One source/destination storage pair of `convert`.
template <class S, class D>
static void convertLoop(const S* __restrict x, D* __restrict y, int64_t n, DType to) {
  if constexpr (kIsFloat<S>) {
    if constexpr (kIsFloat<D>) {
      if (to == DType::F32) std::copy_n(x, n, y);
      else for (int64_t i = 0; i < n; ++i) y[i] = roundFloat(x[i], to);
    } else if constexpr (std::is_same_v<D, uint8_t>) {
      map1(x, y, n, [](float v) { return uint8_t(v != 0.0f); });  // NaN -> 1
    } else if constexpr (std::is_signed_v<D>) {
      map1(x, y, n, [](float v) { return floatToIntSat<D>(v); });
    }
  } else if constexpr (std::is_integral_v<S>) {
    if constexpr (kIsFloat<D>) {
      // Rounded to f32 first, then to f16/bf16 when that is the target (as the reference does).
      if (to == DType::F32)
        map1(x, y, n, [](S v) { return static_cast<float>(v); });
      else
        for (int64_t i = 0; i < n; ++i) y[i] = roundFloat(static_cast<float>(x[i]), to);
    } else if constexpr (std::is_same_v<D, uint8_t>) {
      map1(x, y, n, [](S v) { return uint8_t(v != 0); });
    } else {
      map1(x, y, n, [](S v) { return static_cast<D>(v); });  // sign-extend or wrap (C++20 modular)
    }
  }
}

void convert(const Tile& in, Tile& out) {
  withStorage(in.storage, [&](auto inTag) {
    using S = typename decltype(inTag)::type;
    withStorage(out.storage, [&](auto outTag) {
      using D = typename decltype(outTag)::type;
      if constexpr (!std::is_same_v<S, uint64_t> && !std::is_same_v<D, uint64_t>)
        convertLoop<S, D>(in.data<S>(), out.data<D>(), in.n, out.dtype);
    });
  });
}

void unary(OpKind kind, const Tile& in, Tile& out) {
  withStorage(in.storage, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* x = in.data<T>();
    T* y = out.data<T>();
    const int64_t n = in.n;
    if constexpr (kIsFloat<T>) {
      switch (kind) {
        case OpKind::Neg: map1(x, y, n, [](float v) { return -v; }); break;
        case OpKind::Abs: map1(x, y, n, [](float v) { return std::fabs(v); }); break;
        case OpKind::Exp: map1(x, y, n, [](float v) { return ::expf(v); }); break;
        case OpKind::Exp2: map1(x, y, n, [](float v) { return ::exp2f(v); }); break;
        case OpKind::Log: map1(x, y, n, [](float v) { return ::logf(v); }); break;
        case OpKind::Sqrt: map1(x, y, n, [](float v) { return ::sqrtf(v); }); break;
        case OpKind::Rsqrt: map1(x, y, n, [](float v) { return 1.0f / ::sqrtf(v); }); break;
        case OpKind::Sigmoid: map1(x, y, n, [](float v) { return 1.0f / (1.0f + ::expf(-v)); }); break;
        case OpKind::Log2: map1(x, y, n, [](float v) { return ::log2f(v); }); break;
        case OpKind::Cos: map1(x, y, n, [](float v) { return ::cosf(v); }); break;
        case OpKind::Sin: map1(x, y, n, [](float v) { return ::sinf(v); }); break;
        case OpKind::Floor: map1(x, y, n, [](float v) { return ::floorf(v); }); break;
        case OpKind::Ceil: map1(x, y, n, [](float v) { return ::ceilf(v); }); break;
        case OpKind::Erf: map1(x, y, n, [](float v) { return ::erff(v); }); break;
        case OpKind::Asin: map1(x, y, n, [](float v) { return ::asinf(v); }); break;
        case OpKind::Acos: map1(x, y, n, [](float v) { return ::acosf(v); }); break;
        case OpKind::Atan: map1(x, y, n, [](float v) { return ::atanf(v); }); break;
        case OpKind::Tan: map1(x, y, n, [](float v) { return ::tanf(v); }); break;
        case OpKind::Sinh: map1(x, y, n, [](float v) { return ::sinhf(v); }); break;
        case OpKind::Cosh: map1(x, y, n, [](float v) { return ::coshf(v); }); break;
        case OpKind::Tanh: map1(x, y, n, [](float v) { return ::tanhf(v); }); break;
        case OpKind::Log10: map1(x, y, n, [](float v) { return ::log10f(v); }); break;
        case OpKind::Log1p: map1(x, y, n, [](float v) { return ::log1pf(v); }); break;
        case OpKind::Expm1: map1(x, y, n, [](float v) { return ::expm1f(v); }); break;
        case OpKind::Exp10: map1(x, y, n, [](float v) { return ::exp10f(v); }); break;
        case OpKind::Cbrt: map1(x, y, n, [](float v) { return ::cbrtf(v); }); break;
        case OpKind::Rcp: map1(x, y, n, [](float v) { return 1.0f / v; }); break;
        case OpKind::Trunc: map1(x, y, n, [](float v) { return ::truncf(v); }); break;
        case OpKind::Round: map1(x, y, n, [](float v) { return ::roundf(v); }); break;
        case OpKind::Rint: map1(x, y, n, [](float v) { return ::nearbyintf(v); }); break;
        default: break;
      }
      roundToOwnDType(out);
    } else if constexpr (std::is_same_v<T, int32_t> || std::is_same_v<T, int64_t>) {
      switch (kind) {
        case OpKind::Neg: map1(x, y, n, [](T v) { return wrapNeg(v); }); break;
        case OpKind::Abs: map1(x, y, n, [](T v) { return v < 0 ? wrapNeg(v) : v; }); break;
        case OpKind::Not: map1(x, y, n, [](T v) { return T(~v); }); break;
        default: break;
      }
    } else if constexpr (std::is_same_v<T, uint8_t>) {
      if (kind == OpKind::Not) map1(x, y, n, [](uint8_t v) { return uint8_t(v ^ 1); });
    }
  });
}

int64_t binary(OpKind kind, const Tile& a, const Tile& b, Tile& out) {
  return withStorage(a.storage, [&](auto tag) -> int64_t {
    using T = typename decltype(tag)::type;
    const T* x = a.data<T>();
    const T* z = b.data<T>();
    T* y = out.data<T>();
    const int64_t n = a.n;
    if constexpr (kIsFloat<T>) {
      switch (kind) {
        case OpKind::Add: map2(x, z, y, n, [](float p, float q) { return p + q; }); break;
        case OpKind::Sub: map2(x, z, y, n, [](float p, float q) { return p - q; }); break;
        case OpKind::Mul: map2(x, z, y, n, [](float p, float q) { return p * q; }); break;
        case OpKind::Div: map2(x, z, y, n, [](float p, float q) { return p / q; }); break;
        case OpKind::Rem: map2(x, z, y, n, [](float p, float q) { return std::fmod(p, q); }); break;
        case OpKind::Maximum: map2(x, z, y, n, [](auto p, auto q) { return combineMax(p, q); }); break;
        case OpKind::Minimum: map2(x, z, y, n, [](auto p, auto q) { return combineMin(p, q); }); break;
        case OpKind::Atan2: map2(x, z, y, n, [](float p, float q) { return ::atan2f(p, q); }); break;
        case OpKind::Pow: map2(x, z, y, n, [](float p, float q) { return ::powf(p, q); }); break;
        case OpKind::Hypot: map2(x, z, y, n, [](float p, float q) { return ::hypotf(p, q); }); break;
        default: break;
      }
      roundToOwnDType(out);
    } else if constexpr (std::is_same_v<T, int32_t> || std::is_same_v<T, int64_t>) {
      if (kind == OpKind::Div || kind == OpKind::Rem) {
        for (int64_t i = 0; i < n; ++i)
          if (z[i] == 0) return i;
      }
      switch (kind) {
        case OpKind::Add: map2(x, z, y, n, [](auto p, auto q) { return wrapAdd(p, q); }); break;
        case OpKind::Sub: map2(x, z, y, n, [](auto p, auto q) { return wrapSub(p, q); }); break;
        case OpKind::Mul: map2(x, z, y, n, [](auto p, auto q) { return wrapMul(p, q); }); break;
        // C truncating division; MIN / -1 wraps to MIN and MIN % -1 is 0 (no trap).
        case OpKind::Div: map2(x, z, y, n, [](T p, T q) { return q == -1 ? wrapNeg(p) : T(p / q); }); break;
        case OpKind::Rem: map2(x, z, y, n, [](T p, T q) { return q == -1 ? T(0) : T(p % q); }); break;
        case OpKind::Maximum: map2(x, z, y, n, [](auto p, auto q) { return combineMax(p, q); }); break;
        case OpKind::Minimum: map2(x, z, y, n, [](auto p, auto q) { return combineMin(p, q); }); break;
        case OpKind::And: map2(x, z, y, n, [](T p, T q) { return T(p & q); }); break;
        case OpKind::Or: map2(x, z, y, n, [](T p, T q) { return T(p | q); }); break;
        case OpKind::Xor: map2(x, z, y, n, [](T p, T q) { return T(p ^ q); }); break;
        // Shift amounts outside [0, bits) give 0 / the sign fill (runtime/FloatOps.h's intShl,
        // intShr): branch-free forms of the same rules.
        case OpKind::Shl:
          map2(x, z, y, n, [](T p, T q) {
            using U = std::make_unsigned_t<T>;
            constexpr T bits = sizeof(T) * 8;
            return (q >= 0 && q < bits) ? T(U(p) << (q & (bits - 1))) : T(0);
          });
          break;
        case OpKind::Shr:
          map2(x, z, y, n, [](T p, T q) {
            constexpr T bits = sizeof(T) * 8;
            return T(p >> ((q >= 0 && q < bits) ? q : bits - 1));
          });
          break;
        case OpKind::Umulhi:
          map2(x, z, y, n, [](T p, T q) {
            if constexpr (sizeof(T) == 4)
              return T(uint32_t((uint64_t(uint32_t(p)) * uint64_t(uint32_t(q))) >> 32));
            else
              return T(uint64_t((static_cast<unsigned __int128>(uint64_t(p)) * uint64_t(q)) >> 64));
          });
          break;
        default: break;
      }
    } else if constexpr (std::is_same_v<T, uint8_t>) {
      switch (kind) {
        case OpKind::And: map2(x, z, y, n, [](uint8_t p, uint8_t q) { return uint8_t(p & q); }); break;
        case OpKind::Or: map2(x, z, y, n, [](uint8_t p, uint8_t q) { return uint8_t(p | q); }); break;
        case OpKind::Xor: map2(x, z, y, n, [](uint8_t p, uint8_t q) { return uint8_t(p ^ q); }); break;
        default: break;
      }
    }
    return -1;
  });
}

void fma(const Tile& a, const Tile& b, const Tile& c, Tile& out) {
  const float* __restrict x = a.f32.data();
  const float* __restrict z = b.f32.data();
  const float* __restrict w = c.f32.data();
  float* __restrict y = out.f32.data();
  for (int64_t i = 0; i < a.n; ++i) y[i] = std::fma(x[i], z[i], w[i]);
  roundToOwnDType(out);
}

void compare(Pred pred, const Tile& a, const Tile& b, Tile& out) {
  withStorage(a.storage, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* x = a.data<T>();
    const T* z = b.data<T>();
    uint8_t* y = out.i1.data();
    const int64_t n = a.n;
    switch (pred) {
      case Pred::Lt: map2(x, z, y, n, [](T p, T q) { return uint8_t(p < q); }); break;
      case Pred::Le: map2(x, z, y, n, [](T p, T q) { return uint8_t(p <= q); }); break;
      case Pred::Gt: map2(x, z, y, n, [](T p, T q) { return uint8_t(p > q); }); break;
      case Pred::Ge: map2(x, z, y, n, [](T p, T q) { return uint8_t(p >= q); }); break;
      case Pred::Eq: map2(x, z, y, n, [](T p, T q) { return uint8_t(p == q); }); break;
      case Pred::Ne: map2(x, z, y, n, [](T p, T q) { return uint8_t(p != q); }); break;
    }
  });
}

void select(const Tile& cond, const Tile& a, const Tile& b, Tile& out) {
  withStorage(a.storage, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const uint8_t* __restrict c = cond.i1.data();
    const T* __restrict x = a.data<T>();
    const T* __restrict z = b.data<T>();
    T* __restrict y = out.data<T>();
    for (int64_t i = 0; i < a.n; ++i) y[i] = c[i] ? x[i] : z[i];
  });
}

void addptr(const Tile& p, const Tile& off, Tile& out) {
  // dtypeBytes is 1, 2, 4 or 8: multiplying by it is a shift (which vectorizes; a 64-bit
  // multiply does not on baseline x86-64).
  const int shift = std::countr_zero(static_cast<unsigned>(dtypeBytes(p.dtype)));
  const uint64_t* __restrict x = p.ptr.data();
  uint64_t* __restrict y = out.ptr.data();
  if (off.storage == Storage::I32) {
    const int32_t* __restrict o = off.i32.data();
    for (int64_t i = 0; i < p.n; ++i) y[i] = x[i] + (static_cast<uint64_t>(int64_t(o[i])) << shift);
  } else {
    const int64_t* __restrict o = off.i64.data();
    for (int64_t i = 0; i < p.n; ++i) y[i] = x[i] + (static_cast<uint64_t>(o[i]) << shift);
  }
}

void ptrcast(const Tile& in, Tile& out) {
  for (int64_t i = 0; i < in.n; ++i) {
    const uint64_t v = in.storage == Storage::Ptr ? in.ptr[i] : static_cast<uint64_t>(in.i64[i]);
    if (out.storage == Storage::Ptr) out.ptr[i] = v;
    else out.i64[i] = static_cast<int64_t>(v);
  }
}

void reduce(ReduceKind kind, int axis, const Tile& in, Tile& out) {
  withStorage(in.storage, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (!std::is_same_v<T, uint64_t>) {
      const T* x = in.data<T>();
      T* y = out.data<T>();
      const bool isSum = kind == ReduceKind::Sum;
      // One contiguous line of `len` elements, or every column, with this kind's combine.
      auto run = [&](auto combine) {
        if (in.rank >= 2 && axis < in.rank - 1) {  // outer blocks of len x inner, reduced down their columns
          const AxisSplit a = splitAt(in, axis);
          for (int64_t o = 0; o < a.outer; ++o) reduceColumns(x + o * a.len * a.inner, a.len, a.inner, y + o * a.inner, combine);
        } else {  // along the last dim: each row is contiguous
          for (int64_t i = 0; i < in.rows; ++i) y[i] = reduceRow(x + i * in.cols, in.cols, combine);
        }
      };
      switch (kind) {
        case ReduceKind::Sum: run([](auto p, auto q) { return combineSum(p, q); }); break;
        case ReduceKind::Max: run([](auto p, auto q) { return combineMax(p, q); }); break;
        case ReduceKind::Min: run([](auto p, auto q) { return combineMin(p, q); }); break;
      }
      if (isSum) roundToOwnDType(out);  // f16/bf16 sums were accumulated in f32
    }
  });
}

void argmax(int axis, const Tile& in, Tile& out) {
  withStorage(in.storage, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* x = in.data<T>();
    int32_t* y = out.i32.data();
    if (in.rank >= 2 && axis < in.rank - 1) {
      const AxisSplit a = splitAt(in, axis);
      for (int64_t o = 0; o < a.outer; ++o)
        for (int64_t j = 0; j < a.inner; ++j) y[o * a.inner + j] = argmaxStrided(x + o * a.len * a.inner + j, a.len, a.inner);
    } else {
      for (int64_t i = 0; i < in.rows; ++i) y[i] = argmaxStrided(x + i * in.cols, in.cols, 1);
    }
  });
}

void scan(ScanKind kind, int axis, bool reverse, const Tile& in, Tile& out) {
  withStorage(in.storage, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (!std::is_same_v<T, uint64_t>) {
      const T* __restrict x = in.data<T>();
      T* __restrict y = out.data<T>();
      // Line l of outer * inner starts at (l / inner) * len * inner + l % inner, stride inner (the
      // last dim: inner = 1, rows of len).
      const AxisSplit a = in.rank == 0 ? AxisSplit{1, 1, 1} : splitAt(in, axis);
      const int64_t lines = a.outer * a.inner, len = a.len, stride = a.inner;
      const bool narrow = in.dtype == DType::F16 || in.dtype == DType::BF16;
      auto run = [&](auto combine) {
        for (int64_t l = 0; l < lines; ++l) {
          const int64_t base = (l / a.inner) * len * a.inner + l % a.inner;
          for (int64_t j = 0; j < len; ++j) {
            const int64_t k = reverse ? len - 1 - j : j, at = base + k * stride;
            if (j == 0) {
              y[at] = x[at];
              continue;
            }
            T v = combine(y[base + (reverse ? k + 1 : k - 1) * stride], x[at]);
            if constexpr (kIsFloat<T>)
              if (narrow) v = roundFloat(v, in.dtype);
            y[at] = v;
          }
        }
      };
      switch (kind) {
        case ScanKind::Sum: run([](auto p, auto q) { return combineSum(p, q); }); break;
        case ScanKind::Prod: run([](auto p, auto q) {
          if constexpr (kIsFloat<decltype(p)>) return p * q;
          else return wrapMul(p, q);
        }); break;
        case ScanKind::Max: run([](auto p, auto q) { return combineMax(p, q); }); break;
        case ScanKind::Min: run([](auto p, auto q) { return combineMin(p, q); }); break;
      }
    }
  });
}

static void dotOne(const float* __restrict A, const float* __restrict B, float* __restrict Y, int64_t M, int64_t K, int64_t N);

void dot(const Tile& a, const Tile& b, const Tile& acc, Tile& out, bool tf32) {
  const int64_t batches = a.rank == 3 ? a.dims[0] : 1;
  const int64_t M = a.rows / batches, K = a.cols, N = b.cols;
  std::copy_n(acc.f32.data(), batches * M * N, out.f32.data());
  std::vector<float> ra, rb;  // the inputs read as tf32
  const float *pa = a.f32.data(), *pb = b.f32.data();
  if (tf32) {
    ra.resize(static_cast<size_t>(batches * M * K));
    rb.resize(static_cast<size_t>(batches * K * N));
    std::transform(pa, pa + ra.size(), ra.begin(), truncToTf32);
    std::transform(pb, pb + rb.size(), rb.begin(), truncToTf32);
    pa = ra.data();
    pb = rb.data();
  }
  for (int64_t bi = 0; bi < batches; ++bi)
    dotOne(pa + bi * M * K, pb + bi * K * N, out.f32.data() + bi * M * N, M, K, N);
  if (out.dtype == DType::F16)  // an f16 accumulator (out_dtype=tl.float16): rounded once per dot, as tl-scalar
    for (int64_t i = 0; i < batches * M * N; ++i) out.f32[size_t(i)] = roundFloat(out.f32[size_t(i)], DType::F16);
}

// Y[M][N] += A[M][K] @ B[K][N].
static void dotOne(const float* __restrict A, const float* __restrict B, float* __restrict Y, int64_t M, int64_t K, int64_t N) {
  // i-k-j order: the innermost loop runs along a row of B and a row of Y (vectorizes). Each
  // Y[i][j] still receives acc + a[i][0]*b[0][j] + a[i][1]*b[1][j] + ... in k order.
  for (int64_t i = 0; i < M; ++i) {
    float* yRow = Y + i * N;
    for (int64_t k = 0; k < K; ++k) {
      const float aik = A[i * K + k];
      const float* bRow = B + k * N;
      for (int64_t j = 0; j < N; ++j) yRow[j] += aik * bRow[j];
    }
  }
}

std::string elementText(const Tile& t, int64_t i, bool hex) {
  return withStorage(t.storage, [&](auto tag) -> std::string {
    using T = typename decltype(tag)::type;
    const T x = t.data<T>()[i];
    if constexpr (std::is_same_v<T, uint64_t>) return printPointer(x);
    else if constexpr (std::is_same_v<T, float>) return printFloat(t.dtype, x, hex);
    else return printInt(t.dtype, int64_t(x), hex);
  });
}

int64_t firstFalse(const Tile& cond) {
  for (int64_t e = 0; e < cond.n; ++e)
    if (cond.i1[size_t(e)] == 0) return e;
  return -1;
}

}  // namespace tl::block
