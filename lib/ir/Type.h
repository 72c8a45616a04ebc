// Types shared by every IR level.
//
// A type is an element dtype, optionally "pointer to" that dtype, with an optional static shape:
//
//   i32                 a scalar
//   ptr<f32>            a scalar pointer to f32 (a kernel's pointer parameter)
//   <1024xf32>          a 1-D tile (block) of 1024 f32
//   <64x32xptr<f16>>    a 2-D tile of pointers to f16 (what `x_ptr + offsets` makes)
//
// Tile dimensions are static powers of two (checked by the verifier). The thread-mapped level
// attaches a layout to tile types (see the layouts issue); the `layout` slot is reserved for it.
#pragma once

#include <cstdint>
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
};

const char* dtypeName(DType d);                         // "f32"
std::optional<DType> parseDType(std::string_view name);  // "f32" or "float32" -> F32
int dtypeBytes(DType d);                                 // I1 counts as 1 byte in memory
bool isFloat(DType d);
bool isInt(DType d);  // I1, I32, I64

using Shape = std::vector<int64_t>;

struct Type {
  DType dtype = DType::I32;  // element dtype (the pointee's dtype when isPtr)
  bool isPtr = false;        // elements are pointers to `dtype`
  Shape shape;               // empty: a scalar

  static Type scalar(DType d) { return Type{d, false, {}}; }
  static Type ptr(DType d) { return Type{d, true, {}}; }
  static Type tile(DType d, Shape s) { return Type{d, false, std::move(s)}; }

  bool isScalar() const { return shape.empty(); }
  bool isTile() const { return !shape.empty(); }
  int rank() const { return static_cast<int>(shape.size()); }
  int64_t numel() const;  // 1 for scalars

  // Same element (dtype and pointer-ness) with another shape.
  Type withShape(Shape s) const { return Type{dtype, isPtr, std::move(s)}; }
  Type scalarType() const { return Type{dtype, isPtr, {}}; }
  // Same shape with another element.
  Type withDType(DType d) const { return Type{d, false, shape}; }
  // Bytes one element occupies in memory (8 for pointers).
  int elemBytes() const { return isPtr ? 8 : dtypeBytes(dtype); }

  bool operator==(const Type&) const = default;

  std::string str() const;  // the printed form above
};

// Parses the printed form of a type; std::nullopt when malformed. `rest` receives what follows.
std::optional<Type> parseType(std::string_view text, size_t* consumed = nullptr);

bool isPowerOfTwo(int64_t v);

}  // namespace tl
