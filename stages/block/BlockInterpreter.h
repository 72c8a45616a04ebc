// tl-block's engine: a tile-at-a-time interpreter of block IR.
//
// Each op processes a whole tile in one tight, typed loop the C++ compiler can vectorize (no
// per-element dispatch), which is why it is many times faster than tl-scalar while computing the
// same thing.
//
// Expects: verified block IR (any point in the block pipeline; runBlock runs the verifier first
// and throws IRError otherwise), a Memory with one buffer per pointer parameter (named as the
// parameter, of its dtype) and a LaunchConfig value for every runtime scalar parameter.
// Guarantees: bit-for-bit the results of runScalar, except float sums along rows of 32 or more
// elements, which add in another order (equal within rounding; BlockInterpreter.cpp lists the
// semantics); out-of-bounds unmasked accesses, integer division by zero, a zero loop step and
// missing bindings stop the run with a located RuntimeError (program id, element index,
// address); nothing is accessed outside a buffer.
#pragma once

#include "frontend/Launch.h"
#include "ir/IR.h"
#include "runtime/DevicePrint.h"
#include "runtime/Memory.h"

namespace tl {

struct BlockRunStats {
  int64_t programs = 0;    // program instances run
  int64_t tileOps = 0;     // ops executed (each on a whole tile)
};

// `print`: where device_print's lines go (runtime/DevicePrint.h: tl-scalar's order and text);
// nullptr: nowhere. device_assert stops the run at the first failing element, as tl-scalar.
BlockRunStats runBlock(const Function& fn, const LaunchConfig& launch, Memory& memory,
                       DeviceOutput* print = nullptr);

}  // namespace tl
