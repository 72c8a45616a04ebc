// Registers per thread as the compiler allocates them, for the simulator's occupancy model:
// the thread IR through compileToPTX and `ptxas -v` (what the driver would load), instead of
// the thread-IR estimate (sim/Occupancy.h, estimateRegisters).
//
//   SimOptions o;  o.registers = ptxasRegisterSource("sm_90");   // tl-sim, tl-viz
//
// Expects: verified thread IR; an arch compileToPTX accepts (isSupportedArch).
// Guarantees: never throws for a missing or failing ptxas, nor for IR the code generator does
// not support: the result is then estimateRegisters(threadIR), still labelled an estimate, with
// the reason appended to its source ("estimate from thread IR ...; ptxas: not found").
#pragma once

#include <functional>
#include <string>

#include "ir/IR.h"
#include "sim/Occupancy.h"

namespace tl {

// One kernel: ptxas' count, or the labelled estimate.
RegisterEstimate ptxasRegisters(const Function& threadIR, const std::string& arch);

// ptxasRegisters bound to an arch, in the shape SimOptions::registers takes.
std::function<RegisterEstimate(const Function&)> ptxasRegisterSource(const std::string& arch);

}  // namespace tl
