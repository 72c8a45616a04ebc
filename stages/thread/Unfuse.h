// The unfused lowering: one kernel per block-level op, as an eager framework runs the same
// computation (PyTorch's `x.max(1)`, `x - m`, `exp`, `sum`, `/`: five kernels for a softmax),
// with every intermediate materialized in global memory. Comparing it with the fused kernel
// (same model: DRAM bytes, launches, predicted time) shows what fusion saves. docs/sim.md,
// section "Fusion", walks through the softmax.
//
// Expects: verified block IR after the block pipeline (tl::blockPipeline()), without layouts,
// and the LaunchConfig it runs with (its grid sizes the scratch buffers).
// Guarantees: an ordered list of verified block-IR kernels (each tidied by the block pipeline,
// as its input was), each with the fused kernel's grid and num_warps and the same parameters
// plus one pointer parameter per scratch buffer (every kernel lists them all), and a
// copy of the LaunchConfig with the scratch buffers appended (zeros-filled, not outputs), such
// that running the kernels in order over one Memory::fromLaunch(launch) writes the same outputs
// as the fused kernel. Throws IRError (located) for input with layouts or that does not verify
// and for what it cannot split (a pointer carried out of a loop into a later kernel), and
// std::runtime_error for an empty grid or a scratch buffer over Memory::kMaxBufferBytes.
//
// The rule: what becomes a kernel, what is recomputed. Top-level ops of the kernel body are
// classified once, in order. A value is DATA when it depends on a load (a load's result, any
// result of an op with a data operand, the results of a for/if that loads or reads data).
//   - Kernel ops (each becomes one kernel, named `<kernel>.<k>_<mnemonic>`, k from 1):
//       * an op with a data result that computes: elementwise math (incl. convert, cmp,
//         select), reductions, argmax, dot, trans (PyTorch's x.t().contiguous(): a copy);
//       * a for or if that touches data or memory at all: it stays fused with everything inside
//         it (see "Loops" below);
//       * a load that cannot simply be re-read: its address, mask or `other` is data (a gather),
//         or its buffer is also written by the kernel.
//     A kernel op's results that any other op uses are MATERIALIZED: stored to a scratch buffer
//     and loaded back by each kernel that needs them.
//   - Recomputed ops (each kernel re-creates what it needs of them, as an eager framework
//     computes indices inside each op): program_id, num_programs, constants, arange, splat,
//     broadcast, expand_dims, addptr, int arithmetic and compares on indices (anything not
//     data), and loads of read-only inputs with non-data address/mask/other: every kernel that
//     uses the loaded tile re-reads it from the original buffer, keeping its mask and `other`
//     (an eager framework's input tensor is simply read by each op that uses it). A shape op or
//     addptr applied to data is recomputed too, from its operand's scratch copy: PyTorch's
//     `x - m[:, None]` broadcasts inside the subtraction's kernel.
//   - Stores join the kernel that computes the stored value (PyTorch's div writes `out`
//     directly) when that is safe: every other operand is available by then, and the kernel
//     never loads a buffer it stores to nor stores one buffer from two places; otherwise (or
//     when the value is no kernel op's result: a plain copy) a store is its own kernel.
//
// Softmax (kernels/softmax.tl) becomes five kernels:
//   .1_max   reads x             writes m    (scalar per row)
//   .2_sub   reads x, m          writes x-m  (1024 per row)
//   .3_exp   reads x-m           writes num
//   .4_sum   reads num           writes s    (scalar per row)
//   .5_div   reads num, s        writes out  (the original store, masked as before)
//
// Scratch layout: a materialized tile of shape S in program p (p = pid0 + g0*(pid1 + g1*pid2))
// lives at scratch[p * numel(S) + row-major index] (buffer shape [programs, S...], the value's
// dtype, i1 for a mask); a scalar at scratch[p]. Scratch parameters are named
// `tmp<k>_<op>` after the kernel that writes them (`tmp1_max`). Intermediates hold every tile element, masked-off ones
// included, as the fused kernel computes them; scratch accesses are unmasked (always in bounds).
//
// Loops: a for or if (with everything inside it) stays ONE kernel: its inputs from outside are
// loaded from scratch (or recomputed) before it, its used results stored to scratch after it.
// Splitting a loop body into per-op kernels would need per-iteration scratch (an eager
// framework runs a Python loop of small kernels): out of scope. Kernels whose work is all
// inside loops (matmul, row_sum's accumulation, layernorm's passes) therefore save little here.
//
// Assumes, as any GPU run does, that no program reads what another program writes.
//
// Locations: every cloned op keeps its own source location; the scratch loads and stores (and
// their address arithmetic) take the location of the op the kernel computes, so per-line
// reports charge the intermediates' traffic to the line that made them.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "frontend/Launch.h"
#include "ir/IR.h"

namespace tl {

struct UnfusedKernels {
  std::vector<std::unique_ptr<Function>> kernels;  // run in this order over one Memory
  LaunchConfig launch;                             // the input launch + the scratch buffers
  std::vector<std::string> descriptions;           // one line per kernel: what it computes, reads, writes
};

// Throws std::runtime_error when there would be more than kMaxUnfusedKernelsBuilt kernels.
UnfusedKernels unfuse(const Function& blockIR, const LaunchConfig& launch);

// How many kernels unfuse() would build (it plans them, builds none).
int64_t countUnfusedKernels(const Function& blockIR, const LaunchConfig& launch);
constexpr int64_t kMaxUnfusedKernelsBuilt = 4096;

// ---------------------------------------------------------------------------------------------
// Compulsory traffic: the bytes a kernel must move between DRAM and the chip with an ideal
// cache: for each buffer it loads (stores), the footprint of its loads (stores) — elements of
// the pointer tile x element bytes x programs x loop trips — capped at the buffer's size (a
// buffer is fetched at most once; masked-off lanes past the end fetch nothing). Static: masks
// are not evaluated, so a partly-masked access that does not cover its whole buffer counts its
// full tile; loop trip counts are evaluated from constants, scalar arguments and the grid
// (`estimated` when one cannot be, counting one trip, or when an if's branches are both counted).

struct BufferTraffic {
  std::string param;        // the pointer parameter ("?" when a pointer's buffer is unknown)
  int64_t readBytes = 0;
  int64_t writeBytes = 0;
};

struct KernelTraffic {
  std::string name;         // the kernel's name
  int64_t programs = 0;     // grid size
  int64_t readBytes = 0;    // sum over buffers
  int64_t writeBytes = 0;
  bool estimated = false;   // some trip count or branch was not known exactly
  std::vector<BufferTraffic> buffers;  // in parameter order, buffers it touches only
  int64_t totalBytes() const { return readBytes + writeBytes; }
};

KernelTraffic kernelTraffic(const Function& fn, const LaunchConfig& launch);

struct FusionTraffic {
  KernelTraffic fused;                 // the fused kernel
  std::vector<KernelTraffic> unfused;  // one per unfused kernel, in order
  int64_t fusedBytes = 0;              // fused.totalBytes()
  int64_t unfusedBytes = 0;            // sum over the unfused kernels
  int launchesFused = 1;
  int launchesUnfused = 0;
  double ratio() const { return fusedBytes ? double(unfusedBytes) / double(fusedBytes) : 0.0; }
};

FusionTraffic fusionTraffic(const Function& fusedBlockIR, const LaunchConfig& launch, const UnfusedKernels& unfused);

// A readable table: one line per kernel (reads, writes, total), the totals and the ratio.
std::string formatFusionTraffic(const FusionTraffic& t);

}  // namespace tl
