// Oracles: independent C++ references for the kernels in kernels/*.tl.
//
// Each oracle recomputes, in double precision and straight from the math (softmax is "exp of
// x minus the row max, over the row's sum", not "whatever softmax.tl does"), what a kernel
// should leave in each of its output buffers. It reads the input buffers from a Memory built by
// Memory::fromLaunch and the sizes and strides from the LaunchConfig (launch.scalars and
// launch.constexprs), so it follows `--set` overrides like the kernels do.
//
// Expects: a Memory freshly filled from the same LaunchConfig (inputs untouched, outputs still
// at their initial values). Guarantees: one entry per buffer the kernel writes, holding that
// buffer's full expected contents (elements the kernel never writes keep their initial value);
// every buffer index used is bounds-checked and a missing parameter or buffer, or an index
// outside a buffer, throws std::runtime_error with a message naming it.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "frontend/Launch.h"
#include "runtime/Memory.h"

namespace tl::e2e {

// Expected contents per output buffer, keyed by the pointer parameter's name.
using OracleResult = std::map<std::string, std::vector<double>>;
using OracleFn = std::function<OracleResult(const Memory& inputs, const LaunchConfig& launch)>;

struct Oracle {
  std::string kernel;   // the kernel file's stem: "softmax" for kernels/softmax.tl
  std::string summary;  // the math in one line
  OracleFn compute;
};

// Every oracle, one per kernel file.
const std::vector<Oracle>& allOracles();
// The oracle for kernels/<stem>.tl, or nullptr when there is none.
const Oracle* findOracle(const std::string& stem);

}  // namespace tl::e2e
