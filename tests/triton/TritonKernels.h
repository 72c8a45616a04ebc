// Compiling and running one kernel of kernels/triton/ at one of its two sizes, for the tests.
//
//   Default  its @launch decorator as written (sizes already ragged where the kernel masks);
//   Alt      the decorator with altOverrides(stem) applied: other ragged sizes, or the
//            puzzle's / tutorial's own sizes, so no kernel is tested at one size only.
// The scalar run of each (kernel, size) is computed once per process (several tests compare
// against it). Nothing throws: failures come back as rendered, located text in `error`.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "../e2e/Harness.h"
#include "frontend/Launch.h"
#include "runtime/Memory.h"

namespace tl::triton_tests {

enum class Variant {
  Default,  // the decorator as written
  Alt,      // with altOverrides(stem)
};
const char* variantName(Variant v);  // "default" / "alt"
// GoogleTest prints parameters it cannot format as raw bytes; name them instead.
inline void PrintTo(Variant v, std::ostream* os) { *os << variantName(v); }

// The second size of a kernel, or nullptr when none is listed.
const std::vector<LaunchOverride>* altOverrides(const std::string& stem);

// The stems MANIFEST.md marks "passes", in manifest order (empty when it is unreadable).
std::vector<std::string> passingKernels();

// Parses, evaluates the launch for `variant` and compiles kernels/triton/<stem>.tl; false with
// the rendered diagnostics in `error`.
bool compileVariant(const std::string& stem, Variant variant, e2e::Compiled& out, std::string& error);

struct ScalarResult {
  std::string error;  // empty when compile and run both succeeded
  e2e::Compiled compiled;
  Memory memory;      // the buffers after tl-scalar
};
const ScalarResult& scalarResult(const std::string& stem, Variant variant);

}  // namespace tl::triton_tests
