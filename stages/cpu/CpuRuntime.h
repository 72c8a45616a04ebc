// Running a compiled tl-cpu kernel over the grid: the programs in parallel on a pool of
// threads, each with its own scratch memory, over one host copy of the launch's memory.
//
// Expects: a CpuKernel compiled from `fn` (compileKernel) and a Memory with one buffer per
// pointer parameter (Memory::fromLaunch), as every stage.
// Guarantees:
//   - memory is copied into one host arena laid out like the virtual address space (so a
//     virtual address + one constant is the host address), run, and copied back; stores mark
//     what they wrote (Buffer::markStored) when the kernel was compiled with trackStores;
//   - programs are taken in chunks of consecutive linear indices (x fastest) by `threads`
//     threads (0: every core); results do not depend on the thread count, except through the
//     order of atomics on floats;
//   - the first failing program in grid order is the one reported, with tl-block's message at
//     the op (out of bounds, misaligned, division by zero, zero step, device_assert, the loop
//     budget), as a RuntimeError; nothing is written outside a buffer;
//   - device_print's lines come out in grid order, as tl-scalar prints them.
#pragma once

#include <cstdint>

#include "cpu/CpuJit.h"
#include "frontend/Launch.h"
#include "runtime/DevicePrint.h"
#include "runtime/Memory.h"

namespace tl::cpu {

struct RunOptions {
  int threads = 0;               // 0: std::thread::hardware_concurrency()
  int64_t maxIterations = 0;     // loop iterations per program; 0: kDefaultMaxIterations (or --max-steps)
  DeviceOutput* print = nullptr;  // where device_print goes (nullptr: nowhere)
  int repeat = 1;                // run the grid this many times (timing), over the same memory
  double budgetMs = 0;           // > 0: stop repeating once the runs took this long (at least one run)
};

inline constexpr int64_t kDefaultMaxIterations = 1'000'000'000;

struct RunStats {
  int64_t programs = 0;
  int threads = 0;
  std::vector<double> ms;  // each run of the grid, in milliseconds (memory copies excluded)
};

RunStats runKernel(const CpuKernel& kernel, const Function& fn, const LaunchConfig& launch, Memory& memory,
                   const RunOptions& opts = {});

// The number of threads RunOptions::threads = 0 means.
int defaultThreads();

}  // namespace tl::cpu
