// Lowering block IR with layouts to thread IR: the program one thread runs.
//
// Expects: verified block IR in which every tile carries a layout (stages/thread/Layouts.h),
// Function::numWarps set.
// Guarantees: a verified thread-level Function (level Thread, same params and constexprs,
// numWarps, sharedBytes = the block's peak shared memory) computing exactly what the block IR
// computes when run by 32*numWarps threads per program: each tile value becomes the registers
// each thread owns under its layout (ir/Layout.h register order), reductions become in-thread
// combines, butterfly shuffles and shared memory with barriers, dot becomes FMAs on operands
// staged through shared memory, convert_layout goes through shared memory.
#pragma once

#include <memory>

#include "ir/IR.h"

namespace tl {

std::unique_ptr<Function> lowerToThreadIR(const Function& blockWithLayouts);

}  // namespace tl
