#include "runtime/Arguments.h"

namespace tl {

std::vector<KernelArgument> bindArguments(const Function& fn, const LaunchConfig& launch, const Memory& memory) {
  std::vector<KernelArgument> args;
  for (size_t k = 0; k < fn.params.size(); ++k) {
    const Param& p = fn.params[k];
    KernelArgument a;
    a.param = &p;
    a.type = &fn.param(k)->type;
    if (p.kind == Param::Kind::Pointer) {
      a.buffer = memory.find(p.name);
      if (!a.buffer) throw RuntimeError(p.loc, "no buffer is bound to pointer parameter '" + p.name + "'");
      if (a.buffer->dtype != a.type->dtype)
        throw RuntimeError(p.loc, "buffer '" + p.name + "' holds " + dtypeName(a.buffer->dtype) +
                                      " but the parameter has type " + a.type->str());
    } else {
      auto it = launch.scalars.find(p.name);
      if (it == launch.scalars.end())
        throw RuntimeError(p.loc, "no value for parameter '" + p.name + "': add it to @launch or pass --set " +
                                      p.name + "=...");
      a.value = it->second;
    }
    args.push_back(a);
  }
  return args;
}

}  // namespace tl
