// The end-to-end harness: finds the kernels in kernels/*.tl, compiles them at the sizes the
// tests use, runs them on tl-scalar and tl-block, and reports failures with located messages.
//
// Every kernel is tested at two sizes:
//   Default  its @launch decorator as written;
//   Ragged   the decorator with a few `--set`-style overrides (raggedOverrides()) that make the
//            sizes awkward: not multiples of the blocks, a last block with one live lane, ...
// Expects: TL_SOURCE_DIR (a compile definition) pointing at the repository root.
// Guarantees: nothing here throws into a test: compile and run failures come back as text
// (the rendered diagnostics), so a broken kernel fails its own tests and no other.
#pragma once

#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "frontend/Frontend.h"
#include "frontend/Launch.h"
#include "ir/IR.h"
#include "runtime/Memory.h"

namespace tl::e2e {

// One kernel file.
struct KernelCase {
  std::string stem;  // "softmax"
  std::string path;  // absolute path of kernels/softmax.tl
};

enum class Size {
  Default,  // the @launch decorator as written
  Ragged,   // with raggedOverrides(stem) applied
};
const char* sizeName(Size size);  // "default" / "ragged"

// GoogleTest prints test parameters it cannot format as raw bytes; name them instead.
inline void PrintTo(const KernelCase& k, std::ostream* os) { *os << k.stem; }
inline void PrintTo(Size s, std::ostream* os) { *os << sizeName(s); }

// Every kernels/*.tl file, sorted by stem (empty if the folder is missing).
std::vector<KernelCase> discoverKernels();

// The overrides that give a kernel its ragged size, or nullptr when none are listed for it.
const std::vector<LaunchOverride>* raggedOverrides(const std::string& stem);

// A kernel compiled for one launch: the front end's output before any pass.
struct Compiled {
  std::shared_ptr<const SourceFile> file;
  std::unique_ptr<ParsedKernel> parsed;
  LaunchConfig launch;
  std::unique_ptr<Function> fn;  // verified block IR straight from the front end
};

// Parses, evaluates the launch (with the overrides for `size`) and compiles. On failure returns
// false and sets `error` to the rendered diagnostics.
bool compileCase(const KernelCase& kernel, Size size, Compiled& out, std::string& error);

// A copy of `fn` after tl::blockPipeline(); nullptr with `error` set when a pass throws.
std::unique_ptr<Function> optimizedCopy(const Function& fn, std::string& error);

// The scalar reference run of a kernel at a size, computed once per process and cached (the
// oracle test and the block-vs-scalar test both need it; tl-scalar is the slow part).
struct ScalarRun {
  std::string error;   // empty when compile and run both succeeded
  Compiled compiled;
  Memory memory;       // the buffers after the run
  int64_t elementOps = 0;
};
const ScalarRun& scalarRun(const KernelCase& kernel, Size size);

// "out_ptr: 12 of 200192 elements outside |got - ref| <= atol + rtol*|ref| ..." for a failure.
std::string describeComparison(const Comparison& c, const Buffer& ref, const Buffer& got);

// Every output of the scalar run `ref` against the same buffer in `memory` (gtest expectations,
// `what` names the run); at least one output must exist.
void expectOutputsMatch(const ScalarRun& ref, const Memory& memory, const std::string& what);

// Runs tl-block on `fn` over `memory`; false with a rendered, located `error` when it stops.
bool runBlockChecked(const Compiled& compiled, const Function& fn, Memory& memory,
                     std::string& error);

// A unified-style line diff (`--- a`, `+++ b`, `@@` hunks with `context` lines around each
// change); empty when the texts are equal.
std::string unifiedDiff(const std::string& a, const std::string& b, const std::string& aName,
                        const std::string& bName, int context = 3);

}  // namespace tl::e2e
