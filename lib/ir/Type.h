// Types shared by every IR level.
//
// A type is an element dtype (i1, i32, i64, f16, bf16, f32, f8e4m3, f8e5m2), optionally "pointer to" that dtype, with an optional static shape:
//
//   i32                 a scalar
//   ptr<f32>            a scalar pointer to f32 (a kernel's pointer parameter)
//   <1024xf32>          a 1-D tile (block) of 1024 f32
//   <64x32xptr<f16>>    a 2-D tile of pointers to f16 (what `x_ptr + offsets` makes)
//
// Tile dimensions are static powers of two and a tile has at most kMaxTileRank (3) dimensions
// (checked by the verifier). After layout assignment a
// tile type also carries a layout (ir/Layout.h), printed after the element:
//
//   <1024xf32, #blocked<spt=[4], tpw=[32], wpc=[4], order=[0]>>
//
// In thread IR (Function::level == Thread) a 1-D "tile" type <Nxf32> is the N registers one
// thread holds, and carries no layout.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tl {

// Element dtypes. Order matters for promotion only through dtypeRank().
enum class DType : uint8_t {
  I1,    // boolean (masks, comparison results)
  I32,   // 32-bit signed integer (indices, sizes)
  I64,   // 64-bit signed integer
  F16,   // IEEE binary16
  BF16,  // bfloat16 (8-bit exponent, 7-bit mantissa)
  F32,   // IEEE binary32
  F8E4M3,  // fp8 OCP e4m3 "fn" (Triton's tl.float8e4nv): bias 7, no inf, max 448, NaN S.1111.111
  F8E5M2,  // fp8 e5m2 (Triton's tl.float8e5): bias 15, IEEE-like inf and NaN, max 57344
};

const char* dtypeName(DType d);                         // "f32"
std::optional<DType> parseDType(std::string_view name);  // "f32" or "float32" -> F32
int dtypeBytes(DType d);                                 // I1 counts as 1 byte in memory
bool isFloat(DType d);
bool isFp8(DType d);  // F8E4M3, F8E5M2: storage and conversion dtypes, no arithmetic (docs/language.md)
bool isInt(DType d);  // I1, I32, I64

using Shape = std::vector<int64_t>;

class Layout;  // ir/Layout.h

struct Type {
  DType dtype = DType::I32;  // element dtype (the pointee's dtype when isPtr)
  bool isPtr = false;        // elements are pointers to `dtype`
  Shape shape;               // empty: a scalar
  std::shared_ptr<const Layout> layout;  // tiles after layout assignment; null otherwise

  static Type scalar(DType d) { return Type{d, false, {}, nullptr}; }
  static Type ptr(DType d) { return Type{d, true, {}, nullptr}; }
  static Type tile(DType d, Shape s) { return Type{d, false, std::move(s), nullptr}; }

  bool isScalar() const { return shape.empty(); }
  bool isTile() const { return !shape.empty(); }
  int rank() const { return static_cast<int>(shape.size()); }
  int64_t numel() const;  // 1 for scalars

  // Same element (dtype and pointer-ness) with another shape, and no layout.
  Type withShape(Shape s) const { return Type{dtype, isPtr, std::move(s), nullptr}; }
  Type scalarType() const { return Type{dtype, isPtr, {}, nullptr}; }
  // Same shape and layout with another element.
  Type withDType(DType d) const { return Type{d, false, shape, layout}; }
  // Same type with another layout (nullptr: none).
  Type withLayout(std::shared_ptr<const Layout> l) const { return Type{dtype, isPtr, shape, std::move(l)}; }
  Type withoutLayout() const { return withLayout(nullptr); }
  // Bytes one element occupies in memory (8 for pointers).
  int elemBytes() const { return isPtr ? 8 : dtypeBytes(dtype); }

  // Layouts compare by value.
  bool operator==(const Type& o) const;

  std::string str() const;  // the printed form above
};

// Parses the printed form of a type; std::nullopt when malformed. `rest` receives what follows.
std::optional<Type> parseType(std::string_view text, size_t* consumed = nullptr);

bool isPowerOfTwo(int64_t v);

// The most dimensions a tile may have (the verifier's and the front end's limit).
constexpr int kMaxTileRank = 3;

}  // namespace tl
