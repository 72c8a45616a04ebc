#include "ir/Type.h"

#include <cctype>

#include "ir/Layout.h"

namespace tl {

const char* dtypeName(DType d) {
  switch (d) {
    case DType::I1: return "i1";
    case DType::I32: return "i32";
    case DType::I64: return "i64";
    case DType::F16: return "f16";
    case DType::BF16: return "bf16";
    case DType::F32: return "f32";
    case DType::F8E4M3: return "f8e4m3";
    case DType::F8E5M2: return "f8e5m2";
  }
  return "?";
}

std::optional<DType> parseDType(std::string_view n) {
  if (n == "i1" || n == "int1" || n == "bool") return DType::I1;
  if (n == "i32" || n == "int32") return DType::I32;
  if (n == "i64" || n == "int64") return DType::I64;
  if (n == "f16" || n == "float16" || n == "fp16") return DType::F16;
  if (n == "bf16" || n == "bfloat16") return DType::BF16;
  if (n == "f32" || n == "float32" || n == "fp32") return DType::F32;
  if (n == "f8e4m3" || n == "float8e4nv" || n == "fp8e4nv") return DType::F8E4M3;  // Triton's names
  if (n == "f8e5m2" || n == "float8e5" || n == "fp8e5") return DType::F8E5M2;
  return std::nullopt;
}

int dtypeBytes(DType d) {
  switch (d) {
    case DType::I1: return 1;
    case DType::I32: return 4;
    case DType::I64: return 8;
    case DType::F16: return 2;
    case DType::BF16: return 2;
    case DType::F32: return 4;
    case DType::F8E4M3:
    case DType::F8E5M2: return 1;
  }
  return 4;
}

bool isFloat(DType d) { return d == DType::F16 || d == DType::BF16 || d == DType::F32 || isFp8(d); }
bool isFp8(DType d) { return d == DType::F8E4M3 || d == DType::F8E5M2; }
bool isInt(DType d) { return !isFloat(d); }

int64_t Type::numel() const {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  return n;
}

bool Type::operator==(const Type& o) const {
  if (dtype != o.dtype || isPtr != o.isPtr || shape != o.shape) return false;
  if (!layout || !o.layout) return !layout && !o.layout;
  return *layout == *o.layout;
}

std::string Type::str() const {
  std::string elem = isPtr ? std::string("ptr<") + dtypeName(dtype) + ">" : dtypeName(dtype);
  if (shape.empty()) return elem;
  std::string s = "<";
  for (int64_t d : shape) s += std::to_string(d) + "x";
  if (layout) elem += ", " + layout->str();
  return s + elem + ">";
}

bool isPowerOfTwo(int64_t v) { return v > 0 && (v & (v - 1)) == 0; }

// elem := dtype | 'ptr<' dtype '>'
static std::optional<Type> parseElem(std::string_view t, size_t& pos) {
  auto ident = [&]() {
    size_t b = pos;
    while (pos < t.size() && std::isalnum(static_cast<unsigned char>(t[pos]))) ++pos;
    return t.substr(b, pos - b);
  };
  std::string_view name = ident();
  if (name == "ptr") {
    if (pos >= t.size() || t[pos] != '<') return std::nullopt;
    ++pos;
    auto d = parseDType(ident());
    if (!d || pos >= t.size() || t[pos] != '>') return std::nullopt;
    ++pos;
    return Type::ptr(*d);
  }
  auto d = parseDType(name);
  if (!d) return std::nullopt;
  return Type::scalar(*d);
}

// type := elem | '<' (int 'x')+ elem '>'
std::optional<Type> parseType(std::string_view t, size_t* consumed) {
  size_t pos = 0;
  std::optional<Type> result;
  if (!t.empty() && t[0] == '<') {
    pos = 1;
    Shape shape;
    while (pos < t.size() && std::isdigit(static_cast<unsigned char>(t[pos]))) {
      int64_t v = 0;
      while (pos < t.size() && std::isdigit(static_cast<unsigned char>(t[pos]))) {
        v = v * 10 + (t[pos] - '0');
        if (v > (int64_t(1) << 40)) return std::nullopt;
        ++pos;
      }
      if (pos >= t.size() || t[pos] != 'x') return std::nullopt;
      ++pos;
      shape.push_back(v);
    }
    if (shape.empty()) return std::nullopt;
    auto elem = parseElem(t, pos);
    if (!elem) return std::nullopt;
    result = elem->withShape(std::move(shape));
    if (pos + 1 < t.size() && t[pos] == ',' && t[pos + 1] == ' ') {  // `, #layout`
      size_t used = 0;
      auto layout = parseLayout(t.substr(pos + 2), &used);
      if (!layout || layout->rank() != result->rank()) return std::nullopt;
      result->layout = layout;
      pos += 2 + used;
    }
    if (pos >= t.size() || t[pos] != '>') return std::nullopt;
    ++pos;
  } else {
    result = parseElem(t, pos);
  }
  if (result && consumed) *consumed = pos;
  return result;
}

}  // namespace tl
