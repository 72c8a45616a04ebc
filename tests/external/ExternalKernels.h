// Real Triton kernels (tests/external/*.tl, copied unchanged from Triton's repository and from
// libraries built on it, plus a @launch decorator) compiled and run for the tests.
//
// README.md in this folder is the source of truth for each kernel's status: its table has one
// row per .tl file, `runs`, `blocked: <the first tilelab error, verbatim>` (the front end or the
// @launch refuses it) or `fails: <stage>: <the error, verbatim>` (it compiles; a later stage
// stops). readReadme() parses
// that table; compileKernelFile() and scalarRun() compile and run one kernel at its own launch
// or at a second size, collecting failures as rendered, located text (nothing throws into a test).
// Expects: TL_SOURCE_DIR (a compile definition) pointing at the repository root.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "frontend/Frontend.h"
#include "frontend/Launch.h"
#include "ir/IR.h"
#include "runtime/Memory.h"

namespace tl::external {

enum class Status {
  Runs,     // every stage passes
  Blocked,  // the front end or the @launch refuses the file
  Fails,    // it compiles, but a stage (tl-scalar, tl-block or tl-thread) stops
};

// One row of README.md's kernel table.
struct ReadmeRow {
  std::string stem;        // file name without .tl: "triton__01-vector-add__add_kernel"
  Status status = Status::Blocked;
  std::string firstError;  // for blocked / fails: the quoted error message (between the backticks)
  std::string stage;       // for fails: the stage that stops ("tl-thread"); the ones before it pass
};

// The rows of the table in tests/external/README.md, in order; `problem` is set (and the result
// empty) when the file is missing or a row is malformed.
std::vector<ReadmeRow> readReadme(std::string& problem);

// Every tests/external/*.tl stem, sorted.
std::vector<std::string> kernelFiles();
std::string kernelPath(const std::string& stem);

// A kernel compiled for its launch: the front end's output before any pass.
struct Compiled {
  std::shared_ptr<const SourceFile> file;
  std::unique_ptr<ParsedKernel> parsed;
  LaunchConfig launch;
  std::unique_ptr<Function> fn;
};

// Parses, evaluates the launch (with `overrides`) and compiles; false with every rendered
// diagnostic in `error`.
bool compileKernelFile(const std::string& stem, const std::vector<LaunchOverride>& overrides,
                       Compiled& out, std::string& error);

// Every running kernel is tested at two sizes: its own @launch, and the launch with a few
// `--set`-style overrides (altOverrides) that make the sizes awkward in another way (one live
// lane, sizes that are not multiples of the blocks, fewer programs than rows, ...).
enum class Size {
  Own,  // the @launch decorator as written
  Alt,  // with altOverrides(stem)
};
const char* sizeName(Size size);  // "own" / "alt"
// The second size of a kernel, or nullptr when none is listed.
const std::vector<LaunchOverride>* altOverrides(const std::string& stem);

// The tl-scalar run of a kernel at a size, computed once per process.
struct ScalarRun {
  std::string error;  // empty when compile and run both succeeded
  Compiled compiled;
  Memory memory;      // the buffers after the run
};
const ScalarRun& scalarRun(const std::string& stem, Size size);

// Runs `body` (an engine run), turning what an engine throws into rendered, located text.
bool runEngine(const Compiled& compiled, const char* engine, std::string& error,
               const std::function<void()>& body);

}  // namespace tl::external
