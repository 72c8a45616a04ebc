// The values of the @launch expression language (lib/frontend/LaunchEval.cpp evaluates it) and
// how they print: numbers, tuples, dtypes, strings and buffer descriptions (randn(...), file(...),
// pointers(...), values([...])). Internal to the front end's launch evaluation.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "frontend/Launch.h"

namespace tl::launchexpr {

// A value of the launch expression language.
struct LVal {
  enum class Kind {
    Error,   // evaluation failed (already reported): silences follow-up errors
    Int,     // Python int
    Float,   // Python float
    Bool,    // True / False
    Tuple,   // (a, b, ...)
    Buffer,  // randn(...), zeros(...), ...: a buffer description
    DType,   // a bare dtype name: f16
    String,  // "path.npy"
    None,    // None
  };
  Kind kind = Kind::Error;
  int64_t i = 0;
  double f = 0;
  std::vector<LVal> items;
  BufferSpec buf;
  DType dtype = DType::F32;
  std::string str;
  bool outputGiven = false;  // a buffer call said output= (a file() override keeps the replaced one's otherwise)

  static LVal integer(int64_t v) { LVal r; r.kind = Kind::Int; r.i = v; return r; }
  static LVal real(double v) { LVal r; r.kind = Kind::Float; r.f = v; return r; }
  bool isNumber() const { return kind == Kind::Int || kind == Kind::Float || kind == Kind::Bool; }
  bool isIntLike() const { return kind == Kind::Int || kind == Kind::Bool; }
  double asDouble() const { return kind == Kind::Float ? f : static_cast<double>(i); }
};

// "%.9g", with ".0" added to an integral value (a float prints as one).
std::string fmtDouble(double v);
// The launch function that makes a fill: "randn", "pointers", ...
const char* fillName(Fill f);
// A value as the summaries print it: 3, (4, 1), randn(50x30 f16), pointers(A0, A1).
std::string show(const LVal& v);
// "an int", "a buffer", ...: for messages.
const char* kindName(const LVal& v);
// The dtype in a .npy file's header, or nothing when the file cannot be read as one.
std::optional<DType> npyHeaderDType(const std::string& path);

}  // namespace tl::launchexpr
