// tl-block's engine: a tile-at-a-time interpreter of block IR.
//
// Each op processes a whole tile in one tight, typed loop the C++ compiler can vectorize (no
// per-element dispatch), which is why it is many times faster than tl-scalar while computing the
// same thing.
//
// Expects: verified block IR (any point in the block pipeline) and a Memory with one buffer per
// pointer parameter. Guarantees: the same results as runScalar up to float rounding order in
// reductions and dot; out-of-bounds unmasked accesses stop the run with a located RuntimeError
// (program id, element index, address); nothing is accessed outside a buffer.
#pragma once

#include "frontend/Launch.h"
#include "ir/IR.h"
#include "runtime/Memory.h"

namespace tl {

struct BlockRunStats {
  int64_t programs = 0;    // program instances run
  int64_t tileOps = 0;     // ops executed (each on a whole tile)
};

BlockRunStats runBlock(const Function& fn, const LaunchConfig& launch, Memory& memory);

}  // namespace tl
