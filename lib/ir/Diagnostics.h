// Diagnostics: source files, locations and the error list every stage reports into.
//
// Every token, AST node and IR op carries a Loc, so any stage — the parser, semantic analysis,
// a verifier, an interpreter finding an out-of-bounds load — can say
//
//   kernels/softmax.tl:6:9: error: load outside buffer 'x_ptr' ...
//       x = load(x_ptr + row * stride + cols, mask=mask, other=-inf)
//           ^
//
// Diagnostics are collected in a list (never exit on the first one): the front end goes on after
// an error where it can, and the visualizer recompiles on every edit.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace tl {

// A loaded source file with its line table. Shared (by pointer) between the tokens, AST and IR
// built from it, so that a diagnostic can always show the source line.
class SourceFile {
 public:
  SourceFile(std::string path, std::string text);
  static std::shared_ptr<SourceFile> load(const std::string& path);  // throws std::runtime_error

  const std::string& path() const { return path_; }
  const std::string& text() const { return text_; }
  int numLines() const { return static_cast<int>(lineStarts_.size()); }
  // The text of 1-based line `line`, without its newline ("" when out of range).
  std::string_view line(int line) const;

 private:
  std::string path_;
  std::string text_;
  std::vector<size_t> lineStarts_;
};

// A position in a source file: 1-based line and column. line == 0 means "unknown".
struct Loc {
  uint32_t line = 0;
  uint32_t col = 0;
  bool known() const { return line != 0; }
  bool operator==(const Loc&) const = default;
};

enum class Severity {
  Error,    // the input is wrong; the run fails with exit code 1
  Warning,  // suspicious but accepted
  Note,     // extra context attached to the previous error or warning
};

struct Diagnostic {
  Severity severity = Severity::Error;
  Loc loc;
  std::string message;
};

// Collects diagnostics for one compilation or run and renders them chibicc-style.
class DiagEngine {
 public:
  explicit DiagEngine(std::shared_ptr<const SourceFile> file = nullptr) : file_(std::move(file)) {}

  void setFile(std::shared_ptr<const SourceFile> file) { file_ = std::move(file); }
  const SourceFile* file() const { return file_.get(); }

  void error(Loc loc, std::string message);
  void warning(Loc loc, std::string message);
  void note(Loc loc, std::string message);

  // What the kernel printed at compile time (tl.static_print), one line each, in order: the
  // tools write them to stdout; a library caller (the visualizer) shows or drops them.
  void compileOutput(std::string line) { outputs_.push_back(std::move(line)); }
  const std::vector<std::string>& compileOutputs() const { return outputs_; }

  bool hasErrors() const { return numErrors_ > 0; }
  int numErrors() const { return numErrors_; }
  const std::vector<Diagnostic>& diagnostics() const { return diags_; }
  void clear() { diags_.clear(); numErrors_ = 0; }

  // "path:line:col: error: message\n<source line>\n<caret>\n"
  std::string render(const Diagnostic& d) const;
  std::string renderAll() const;
  void print(std::ostream& os) const;

  // Stop collecting after this many errors (keeps cascades readable).
  static constexpr int kMaxErrors = 20;

 private:
  std::shared_ptr<const SourceFile> file_;
  std::vector<Diagnostic> diags_;
  std::vector<std::string> outputs_;
  int numErrors_ = 0;
};

// Renders one located message without a DiagEngine.
std::string renderDiagnostic(const SourceFile* file, Severity sev, Loc loc,
                             std::string_view message);

// Thrown by the interpreters (and later the simulator) when a run must stop: an unmasked
// out-of-bounds access, a barrier not reached by every thread, ... The driver catches it,
// renders it at its location and exits with code 1.
struct RuntimeError : std::runtime_error {
  Loc loc;
  RuntimeError(Loc l, const std::string& msg) : std::runtime_error(msg), loc(l) {}
};

// Thrown by IR builders and the verifier for malformed IR: a bug in a pass or a lowering,
// never the user's fault. Carries the op's location for context.
struct IRError : std::logic_error {
  Loc loc;
  IRError(Loc l, const std::string& msg) : std::logic_error(msg), loc(l) {}
};

}  // namespace tl
