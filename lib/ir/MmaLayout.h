// Tensor-core fragments: which lane of a warp holds which element of each operand of one
// `mma.sync` instruction, exactly as the PTX ISA defines them (section 9.7.14.5, "Matrix
// Fragments for mma.m16n8k*"), and the accumulator layout tilelab gives a dot that runs on
// tensor cores.
//
// One warp-wide mma computes D[m x n] = A[m x k] @ B[k x n] + C[m x n]. Each of the 32 lanes
// holds a fragment of each operand: `regs(op)` elements, element e of lane l being the matrix
// element mmaFragmentCoord(instr, op, l, e). With groupID g = lane / 4 and t = lane % 4:
//
//   m16n8k16 f16 / bf16   A a0..a7: row g (+8 for a2,a3,a6,a7), col 2t + (e & 1) (+8 for e >= 4)
//                         B b0..b3: row 2t + (e & 1) (+8 for e >= 2), col g
//   m16n8k8  tf32         A a0..a3: row g (+8 for a1,a3), col t (+4 for a2,a3)
//                         B b0,b1:  row t (+4 for b1), col g
//   m16n8k32 e4m3 / e5m2  A a0..a15: row g (+8 for a4..a7, a12..a15), col 4t + (e & 3) (+16 for e >= 8)
//                         B b0..b7:  row 4t + (e & 3) (+16 for e >= 4), col g
//   every shape, f32 C/D  c0..c3: row g (+8 for c2,c3), col 2t + (e & 1)
//
// tests/ir/mma_layout_test.cpp holds these functions to the ISA's formulas and figures.
//
// The accumulator layout. A dot on tensor cores keeps its accumulator in the blocked layout
//   #blocked<spt=[1,2], tpw=[8,4], wpc=[W0,W1], order=[1,0]>
// (mmaAccumulatorLayout): lane 4g + t holds two consecutive columns 2t, 2t+1 of row g of each
// 8 x 8 piece, exactly the C fragment's rows g and columns; the layout tile is 8*W0 rows by 8*W1
// columns and repeats. One mma's 16 x 8 C fragment is two row-repeats of a warp: fragment row
// g is row (2i)*8*W0 + 8*w0 + g and fragment row g+8 is row (2i+1)*8*W0 + 8*w0 + g (m-tile i
// of warp (w0, w1)). The instruction does not care which tile rows its 16 fragment rows are, as
// long as A's fragment rows are the same rows, so the lowering loads A for exactly those rows.
// (Triton's MMA v2 layout puts fragment row g+8 eight rows below row g instead; ours is a plain
// blocked layout, so every lowering, conversion and ownership map of tilelab works on it.)
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>

#include "ir/Layout.h"
#include "ir/Type.h"

namespace tl {

enum class MmaOperand { A, B, C };

// One mma.sync.aligned instruction shape, for the inputs' dtype (accumulating in f32).
struct MmaInstr {
  int m = 16, n = 8, k = 16;
  DType in = DType::F16;  // F16, BF16, F32 (as tf32), F8E4M3, F8E5M2
  // Elements per lane of operand `op` (A: m*k/32, B: k*n/32, C: m*n/32).
  int regs(MmaOperand op) const;
  // Consecutive fragment elements that are consecutive along k, in A and in B (2 for f16/bf16,
  // 1 for tf32, 4 for fp8): the width of one shared-memory load of a fragment.
  int kRun() const;
  // "m16n8k16"
  std::string shapeName() const;
  // The PTX type of the inputs: "f16", "bf16", "tf32", "e4m3", "e5m2".
  const char* typeName() const;
  // "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32"
  std::string ptx(DType acc = DType::F32) const;  // acc f16 (f16 inputs only): ...row.col.f16.f16.f16.f16
  // The lowest sm this instruction exists on (80; fp8: 89).
  int minArch() const;
  bool operator==(const MmaInstr& o) const { return m == o.m && n == o.n && k == o.k && in == o.in; }
};

// The instruction for a dot of `in` inputs; `tf32` selects m16n8k8 for f32 inputs (Triton's
// input_precision="tf32"). std::nullopt when there is none (f32 in IEEE precision).
std::optional<MmaInstr> mmaInstrFor(DType in, bool tf32);
// The instruction a thread-IR `mma` op with these operand types runs (A's dtype and register
// count decide); std::nullopt when no instruction matches.
std::optional<MmaInstr> mmaInstrOf(DType in, int aRegs);

// (row, col) in operand `op`'s matrix (A: m x k, B: k x n, C: m x n) of element `e` of lane
// `lane`'s fragment. lane in [0, 32), e in [0, regs(op)).
std::pair<int, int> mmaFragmentCoord(const MmaInstr& instr, MmaOperand op, int lane, int e);

// The accumulator layout for an M x N dot on tensor cores run by `numWarps` warps, or nullptr
// when the shape does not fit: M a multiple of 16*W0 and N of 8*W1 for the warp arrangement
// chosen (warps go where the tile has more 16 x 8 pieces left per warp, M first on a tie, as
// Triton's warpsPerTile). `why` (may be null) receives the reason when nullptr is returned.
// `rowsOnly` puts every warp along M (W1 = 1) when M allows it, as Triton does for chained dots
// (attention's p = softmax(q k^T) feeding p v): each warp then holds whole rows of the first
// dot's result, which are exactly the A fragments of the second's (mmaAFromAccumulator).
LayoutPtr mmaAccumulatorLayout(int64_t M, int64_t N, int numWarps, std::string* why = nullptr, bool rowsOnly = false);

// Warpgroup MMA (wgmma.mma_async, sm_90a; PTX ISA 9.7.15.5.1.2, "Shared Memory Matrix Layout").
// A and B are read from shared memory through matrix descriptors: a start address, a swizzle
// mode of S = 32, 64 or 128 bytes, a leading (LBO) and a stride (SBO) byte offset. In the ISA's
// canonical layouts (CuTe notation, T = 8 elements of 16 bits = 16 bytes):
//   K-major (A; B with trans-b 0), S-byte swizzle:  ((8,m),(T,2k)):((S/2,SBO),(1,T))
//     row r of the operand (m of A, n of B) at (r % 8) * S + (r / 8) * SBO, its k-th element at
//     E k more for E-byte elements (k < 32 / E: one instruction's 32 bytes, inside one S-byte
//     row; tf32 (E = 4) and fp8 (E = 1) operands are K-major only);
//   MN-major (B with trans-b 1), S-byte swizzle:   ((T,S/16,m),(8,k)):((1,T,LBO),(S/2,SBO))
//     element (k, n) at (n % (S/2)) * 2 + (n / (S/2)) * LBO + (k % 8) * S + (k / 8) * SBO.
// Then Swizzle<log2(S/16),4,3> acts on the address: its 16-byte chunk bits 4.. are XORed with
// bits 7.. (addr ^ ((addr >> 7) & (S/16 - 1)) << 4), so a buffer must start on a multiple of
// 8 * S bytes (base offset 0 in the descriptor). wgmmaOffset gives the swizzled byte offset from
// `start` (itself a byte offset into shared memory, 16-byte aligned) of one element.
struct WgmmaOperandLayout {
  int swizzle = 128;   // S: 32, 64 or 128
  int64_t lbo = 0;     // bytes (MN-major only: the next S/2 columns)
  int64_t sbo = 0;     // bytes (the next 8 rows of the K-major operand, the next 8 k of an MN-major one)
  bool mnMajor = false;
  int elemBytes = 2;   // E: 2 (f16, bf16), 4 (tf32), 1 (fp8); MN-major needs 2
};
// The shared-memory byte address of element (row, k) of a K-major operand or (k, n) of an
// MN-major one (`major` = row or n, `k` = k), for a descriptor starting at `start`.
int64_t wgmmaAddress(const WgmmaOperandLayout& l, int64_t start, int64_t major, int64_t k);
// The swizzle mode's code in the descriptor's bits 62-63 (128 B: 1, 64 B: 2, 32 B: 3).
int wgmmaSwizzleCode(int swizzle);
// The 64-bit descriptor (PTX ISA "Matrix Descriptor Format") for a start address.
uint64_t wgmmaDescriptor(const WgmmaOperandLayout& l, uint64_t start);

}  // namespace tl
