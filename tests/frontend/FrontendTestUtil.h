// Helpers shared by the front-end tests: run the front end on a source string and look at the
// result (the Function, the diagnostics, op counts).
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "frontend/Frontend.h"
#include "ir/IR.h"

namespace tl::test {

// The outcome of running parse -> evalLaunch -> compile on a source text, stopping after the
// first phase that reports errors.
struct FrontendRun {
  std::shared_ptr<SourceFile> file;
  DiagEngine diag;
  std::unique_ptr<ParsedKernel> parsed;
  LaunchConfig launch;
  Specialization spec;
  std::unique_ptr<Function> fn;
  std::string phase;  // the phase that failed: "parse", "launch", "compile", or "" when all passed

  std::string errors() const { return diag.renderAll(); }
};

inline std::unique_ptr<FrontendRun> runFrontend(const std::string& text, const std::vector<LaunchOverride>& overrides = {},
                                                const std::string& path = "test.tl") {
  auto r = std::make_unique<FrontendRun>();
  r->file = std::make_shared<SourceFile>(path, text);
  r->diag.setFile(r->file);
  r->parsed = parseKernelFile(r->file, r->diag);
  if (r->diag.hasErrors() || !r->parsed) {
    r->phase = "parse";
    return r;
  }
  r->launch = evalLaunch(*r->parsed, overrides, r->diag);
  if (r->diag.hasErrors()) {
    r->phase = "launch";
    return r;
  }
  r->spec = specializationFor(*r->parsed, r->launch);
  r->fn = compileKernel(*r->parsed, r->spec, r->diag);
  if (r->diag.hasErrors() || !r->fn) r->phase = "compile";
  return r;
}

// Number of ops of `kind` anywhere in the function.
inline int countOps(const Function& fn, OpKind kind) {
  int n = 0;
  walk(fn.body, [&](Op& op) { n += op.kind == kind; });
  return n;
}

// The first op of `kind` (pre-order), or nullptr.
inline Op* findOp(const Function& fn, OpKind kind) {
  Op* found = nullptr;
  walk(fn.body, [&](Op& op) {
    if (!found && op.kind == kind) found = &op;
  });
  return found;
}

// The softmax of the language spec, exactly as written there.
inline const char* kSoftmax = R"(@launch(M=256, N=781, stride=N, BLOCK_N=next_pow2(N), grid=(M,), num_warps=4,
        x_ptr=randn((M, N), seed=1), out_ptr=zeros((M, N), output=True))
@jit
def softmax_kernel(x_ptr, out_ptr, N, stride, BLOCK_N: constexpr):
    row = program_id(0)              # which row this instance handles
    cols = arange(0, BLOCK_N)         # a whole block of column indices
    mask = cols < N                   # guard the ragged edge
    x = load(x_ptr + row * stride + cols, mask=mask, other=-inf)
    x = x - max(x, axis=0)            # the whole row, in registers
    num = exp(x)
    out = num / sum(num, axis=0)
    store(out_ptr + row * stride + cols, out, mask=mask)
)";

// Wraps a kernel body (indented 4 spaces by the caller) with a launch and a signature.
inline std::string kernelWith(const std::string& launch, const std::string& params, const std::string& body) {
  return "@launch(" + launch + ")\n@jit\ndef k(" + params + "):\n" + body;
}

// A --set override parsed from "NAME=EXPR" (a test failure when it does not parse).
inline LaunchOverride ov(const std::string& text) {
  LaunchOverride o;
  EXPECT_TRUE(parseOverride(text, o)) << text;
  return o;
}

}  // namespace tl::test
