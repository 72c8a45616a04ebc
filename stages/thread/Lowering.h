// Lowering block IR with layouts to thread IR: the program one thread runs.
//
// Expects: verified block IR in which every tile carries a layout (stages/thread/Layouts.h),
// Function::numWarps set; loads and stores may carry `vec` (elements per thread per access,
// default 1), which must fit the layout (a power of two, at most 16 bytes, at most the run of
// registers the thread holds contiguously along the fastest dimension).
// Guarantees: a verified thread-level Function (level Thread, same params and constexprs,
// numWarps, sharedBytes = the block's peak shared memory) computing exactly what the block IR
// computes when run by 32*numWarps threads per program: each tile value becomes the registers
// each thread owns under its layout (ir/Layout.h register order), reductions become in-thread
// combines, butterfly shuffles and shared memory with barriers, dot becomes FMAs on operands
// staged through shared memory, convert_layout goes through shared memory. It is not cleaned up
// here: the thread stage's pipeline (Pipeline.h) runs licm on it.
// Floating-point sums and dot products may differ from tl-scalar by rounding (the combining
// order is a tree, and dot uses fused multiply-adds); see docs/thread-ir.md.
// Throws IRError (located at the block op) when the input breaks the expectations above.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ir/IR.h"

namespace tl {

// One shared-memory buffer a lowering asked for.
struct SharedBuffer {
  std::string purpose;  // "reduce across warps", "dot operand a", "convert_layout", ...
  std::string op;       // mnemonic of the block op that requested it
  Loc loc;              // that op's source location
  int64_t bytes = 0;    // size requested
  int64_t offset = 0;   // byte offset assigned by the allocator (a multiple of align)
  int64_t align = 16;   // 16, or 1024 for a wgmma operand (its swizzle reads address bits 4-9)
  int64_t firstOp = 0;  // lifetime, inclusive: indices of block ops in a pre-order walk
  int64_t lastOp = 0;
};

// The block's shared-memory plan: every buffer and the peak (Function::sharedBytes).
struct SharedMemoryReport {
  std::vector<SharedBuffer> buffers;
  int64_t peakBytes = 0;
  // A table, one buffer per line: offset, bytes, lifetime, requesting op (line:col), purpose.
  std::string str() const;
};

// Linear-scan allocation: visits buffers by the start of their lifetime and gives each the
// lowest 16-byte-aligned offset that overlaps no buffer whose lifetime overlaps its own, so
// buffers that are never live together share space. Sets every `offset`; returns the peak.
int64_t allocateSharedMemory(std::vector<SharedBuffer>& buffers);

// How to lower.
struct LowerOptions {
  // A 2-D convert_layout's buffer gets the row padding with the fewest bank conflicts
  // (LowerConvert.cpp); false (tl-thread --keep-layouts) keeps it row-major, the textbook layout.
  bool padExchanges = true;
  // Dots of f16 / bf16 whose shapes allow it run as warpgroup MMAs (wgmma.mma_async, sm_90a:
  // tl-ptx --arch sm_90a, tl-thread / tl-sim --wgmma), else as mma.sync (LowerDot.cpp).
  bool wgmma = false;
};

// Lowers `blockWithLayouts`; fills `report` (when given) with the shared-memory plan.
std::unique_ptr<Function> lowerToThreadIR(const Function& blockWithLayouts,
                                          SharedMemoryReport* report = nullptr, const LowerOptions& options = {});

}  // namespace tl
