// ptxas' register count for the simulator (Registers.h): compile, assemble, read `ptxas -v`.
#include "ptx/Registers.h"

#include <exception>

#include "ptx/Codegen.h"
#include "ptx/Ptxas.h"

namespace tl {
namespace {

RegisterEstimate fallback(const Function& threadIR, const std::string& why) {
  RegisterEstimate e = estimateRegisters(threadIR);
  e.source += "; ptxas: " + why;
  return e;
}

}  // namespace

RegisterEstimate ptxasRegisters(const Function& threadIR, const std::string& gpuArch) {
  // Warpgroup MMAs exist only in Hopper's arch-specific target: IR with them is assembled for it.
  bool wgmma = false;
  walk(threadIR.body, [&](Op& op) { wgmma |= op.kind == OpKind::Wgmma; });
  const std::string arch = wgmma && gpuArch == "sm_90" ? "sm_90a" : gpuArch;
  if (!isSupportedArch(arch)) return fallback(threadIR, "no code generator for " + arch);
  std::string why;
  if (findPtxas(&why).empty()) return fallback(threadIR, why);
  try {
    PtxOptions po;
    po.arch = arch;
    PtxasInfo info = runPtxas(compileToPTX(threadIR, po).ptx, arch);
    if (!info.ran) return fallback(threadIR, info.skipped);
    if (!info.ok) return fallback(threadIR, "rejected the PTX");
    return compiledRegisters(info.registers, "ptxas -v (" + arch + ")");
  } catch (const std::exception& e) {
    return fallback(threadIR, std::string("code generation failed: ") + e.what());
  }
}

std::function<RegisterEstimate(const Function&)> ptxasRegisterSource(const std::string& arch) {
  return [arch](const Function& threadIR) { return ptxasRegisters(threadIR, arch); };
}

}  // namespace tl
