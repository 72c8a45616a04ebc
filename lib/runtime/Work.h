// What a launch does, counted from its block IR without running it (Work.cpp).
#pragma once

#include <string>

#include "frontend/Launch.h"
#include "ir/IR.h"

namespace tl {

// Floating-point operations of a dot kernel: 2*M*N*K from the launch's names M, N and K when
// the block IR has a dot and the launch defines them; else the dot ops' own tile sizes times
// loop trip counts times programs; 0 when the kernel has no dot.
double dotFlops(const Function& blockIR, const LaunchConfig& launch);

// An estimate of the element operations tl-scalar would evaluate for this launch: every op's
// result elements (a dot's M*N*K), loops multiplied by their trip counts when the bounds are
// constants or scalar parameters (else counted once), times the grid's programs.
double estimateScalarOps(const Function& blockIR, const LaunchConfig& launch);

// UTC now as "2025-01-31T12:34:56Z".
std::string utcTimestamp();

}  // namespace tl
