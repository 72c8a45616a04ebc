// Kernel arguments, bound the same way by every engine (tl-scalar, tl-block, the executor, the
// GPU runtime): a pointer parameter is the base address of the buffer named as the parameter;
// a scalar parameter is the launch's value, which each engine converts to the parameter's dtype
// exactly like a `convert` op.
#pragma once

#include <vector>

#include "frontend/Launch.h"
#include "ir/IR.h"
#include "runtime/Memory.h"

namespace tl {

struct KernelArgument {
  const Param* param = nullptr;
  const Type* type = nullptr;      // the parameter's type in the function
  const Buffer* buffer = nullptr;  // pointer parameters: the bound buffer
  ScalarValue value;               // scalar parameters: the launch value, not yet converted
};

// One argument per runtime parameter, in order. Throws RuntimeError located at the parameter
// when a buffer or value is missing or a buffer's dtype differs from the pointer's.
std::vector<KernelArgument> bindArguments(const Function& fn, const LaunchConfig& launch, const Memory& memory);

}  // namespace tl
