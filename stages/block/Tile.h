// Tiles: the values tl-block computes with, stored as typed contiguous arrays.
//
// A tile keeps its elements in one std::vector of the C++ type that holds its dtype:
//
//   dtype          storage     notes
//   f16/bf16/f32   float       f16 and bf16 values are kept rounded to their dtype
//   f8e4m3/f8e5m2  float       kept rounded to their dtype (runtime/Fp8.h)
//   i32            int32_t
//   i64            int64_t
//   i1             uint8_t     always 0 or 1
//   ptr<...>       uint64_t    byte addresses (runtime/Memory.h)
//
// A scalar is a tile of rank 0 holding one element. Elements are row-major: element [i, j] of
// a rank-2 tile is at i * cols + j (a rank-3 tile is rows = dims[0] * dims[1] rows of cols). Every op of the interpreter dispatches once on the storage
// (withStorage below) and then runs a plain loop over the raw array, which the C++ compiler can
// vectorize. Tiles are reused across loop iterations: reshape() keeps the vector's capacity, so
// a tile recomputed with the same type never reallocates.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "ir/Type.h"

namespace tl::block {

// Which C++ array holds a tile's elements.
enum class Storage : uint8_t {
  F32,  // float: f16, bf16, f32 and fp8 tiles
  I32,  // int32_t: i32 tiles
  I64,  // int64_t: i64 tiles
  I1,   // uint8_t (0 or 1): i1 tiles
  Ptr,  // uint64_t byte addresses: pointer tiles
};

inline Storage storageOf(DType dtype, bool isPtr) {
  if (isPtr) return Storage::Ptr;
  switch (dtype) {
    case DType::I1: return Storage::I1;
    case DType::I32: return Storage::I32;
    case DType::I64: return Storage::I64;
    case DType::F16:
    case DType::BF16:
    case DType::F32:
    case DType::F8E4M3:
    case DType::F8E5M2: return Storage::F32;
  }
  return Storage::F32;
}

struct Tile {
  DType dtype = DType::I32;  // element dtype (the pointee's when isPtr)
  bool isPtr = false;
  Storage storage = Storage::I32;
  int rank = 0;              // 0 (scalar), 1, 2 or 3
  int64_t rows = 1;          // rank >= 2: the product of every dim but the last; rank 1: 1
  int64_t cols = 1;          // rank >= 1: the last dim
  int64_t n = 1;             // number of elements (1 for scalars)
  std::array<int64_t, kMaxTileRank> dims{};  // dims[0..rank): the shape

  // Exactly one of these is in use (the one `storage` names); the others stay empty.
  std::vector<float> f32;
  std::vector<int32_t> i32;
  std::vector<int64_t> i64;
  std::vector<uint8_t> i1;
  std::vector<uint64_t> ptr;

  // Gives the tile type `t` and sizes its storage (keeping capacity; contents unspecified).
  void reshape(const Type& t) {
    dtype = t.dtype;
    isPtr = t.isPtr;
    storage = storageOf(t.dtype, t.isPtr);
    rank = t.rank();
    rows = 1;
    for (int d = 0; d + 1 < rank; ++d) rows *= t.shape[d];
    cols = rank == 0 ? 1 : t.shape[rank - 1];
    n = rows * cols;
    for (int d = 0; d < rank && d < kMaxTileRank; ++d) dims[static_cast<size_t>(d)] = t.shape[d];
    switch (storage) {
      case Storage::F32: f32.resize(static_cast<size_t>(n)); break;
      case Storage::I32: i32.resize(static_cast<size_t>(n)); break;
      case Storage::I64: i64.resize(static_cast<size_t>(n)); break;
      case Storage::I1: i1.resize(static_cast<size_t>(n)); break;
      case Storage::Ptr: ptr.resize(static_cast<size_t>(n)); break;
    }
  }

  // The storage array as T* (T must be the storage's type).
  template <class T>
  T* data();
  template <class T>
  const T* data() const { return const_cast<Tile*>(this)->data<T>(); }

  // A scalar tile's value widened to int64 (for loop bounds and conditions; ints and i1 only).
  int64_t scalarInt() const {
    switch (storage) {
      case Storage::I32: return i32[0];
      case Storage::I64: return i64[0];
      case Storage::I1: return i1[0];
      default: return 0;
    }
  }
};

template <> inline float* Tile::data<float>() { return f32.data(); }
template <> inline int32_t* Tile::data<int32_t>() { return i32.data(); }
template <> inline int64_t* Tile::data<int64_t>() { return i64.data(); }
template <> inline uint8_t* Tile::data<uint8_t>() { return i1.data(); }
template <> inline uint64_t* Tile::data<uint64_t>() { return ptr.data(); }

// A type carried as a value, so one generic lambda can be called with each storage type.
template <class T>
struct Tag {
  using type = T;
};

// Calls f(Tag<T>{}) with T the C++ type of storage `s`: the one dtype dispatch per op.
template <class F>
decltype(auto) withStorage(Storage s, F&& f) {
  switch (s) {
    case Storage::F32: return f(Tag<float>{});
    case Storage::I32: return f(Tag<int32_t>{});
    case Storage::I64: return f(Tag<int64_t>{});
    case Storage::I1: return f(Tag<uint8_t>{});
    case Storage::Ptr: return f(Tag<uint64_t>{});
  }
  return f(Tag<float>{});
}

}  // namespace tl::block
