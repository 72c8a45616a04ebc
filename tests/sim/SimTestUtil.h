// Helpers for the executor tests: thread IR written as text (with locations added
// automatically, so messages name real lines), buffers, launches and a runner that returns the
// error message of a failing run.
#pragma once

#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "ir/Parser.h"
#include "ir/Printer.h"
#include "runtime/Memory.h"
#include "sim/ThreadExecutor.h"

namespace tl::test {

// Appends `loc(LINE:COL)` to every op of IR text: LINE is the op's 1-based line in `text`, COL
// the column of its first character. An op with regions ends at its closing `}` line, which
// gets the loc of the line that opened it. The function header and its closing brace get none.
inline std::string annotateLocs(const std::string& text) {
  std::istringstream in(text);
  std::string line, out;
  std::vector<std::string> openers;  // loc text of each open region-owning op ("" for the function)
  for (int lineNo = 1; std::getline(in, line); ++lineNo) {
    size_t first = line.find_first_not_of(' ');
    size_t last = line.find_last_not_of(' ');
    std::string loc = " loc(" + std::to_string(lineNo) + ":" + std::to_string(first + 1) + ")";
    if (first == std::string::npos) {
      out += line + "\n";
      continue;
    }
    std::string trimmed = line.substr(first, last - first + 1);
    if (trimmed.rfind("thread_func", 0) == 0 || trimmed.rfind("func", 0) == 0) {
      openers.push_back("");
      out += line + "\n";
    } else if (trimmed == "} else {") {
      out += line + "\n";
    } else if (trimmed == "}") {
      std::string l = openers.empty() ? "" : openers.back();
      if (!openers.empty()) openers.pop_back();
      out += line + l + "\n";
    } else if (trimmed.back() == '{') {
      openers.push_back(loc);
      out += line + "\n";
    } else {
      out += line + loc + "\n";
    }
  }
  return out;
}

// Parses thread IR text (locations added by annotateLocs). Fails the test and returns null on
// a parse or verification error.
inline std::unique_ptr<Function> parseThread(const std::string& text) {
  std::string annotated = annotateLocs(text);
  DiagEngine diag(std::make_shared<SourceFile>("test.tir", annotated));
  auto fn = parseFunction(annotated, diag);
  if (!fn || diag.hasErrors()) {
    ADD_FAILURE() << diag.renderAll() << "\n" << annotated;
    return nullptr;
  }
  return fn;
}

inline LaunchConfig gridLaunch(int64_t x, int64_t y = 1, int64_t z = 1) {
  LaunchConfig l;
  l.grid = {x, y, z};
  return l;
}

inline void setInt(LaunchConfig& l, const std::string& name, int64_t v) { l.scalars[name] = ScalarValue{DType::I32, v, 0}; }

// Runs and returns the RuntimeError's message prefixed with its "line:col: ", or "" on success.
inline std::string runError(const Function& fn, const LaunchConfig& launch, Memory& mem, const ExecOptions& opts = {},
                            ExecResult* result = nullptr) {
  try {
    ExecResult r = runThreadIR(fn, launch, mem, opts);
    if (result) *result = std::move(r);
  } catch (const RuntimeError& e) {
    return std::to_string(e.loc.line) + ":" + std::to_string(e.loc.col) + ": " + e.what();
  }
  return "";
}

inline float getF32(const Buffer& b, int64_t i) {
  float f;
  std::memcpy(&f, b.bytes.data() + i * 4, 4);
  return f;
}
inline int32_t getI32(const Buffer& b, int64_t i) {
  int32_t v;
  std::memcpy(&v, b.bytes.data() + i * 4, 4);
  return v;
}

}  // namespace tl::test
