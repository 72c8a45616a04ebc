// The executor's compiled form of a thread-level Function: the same tree of regions and ops,
// with every value replaced by its place in a warp's register file and every attribute the
// executor needs decoded once, so running an op does no map lookup and no string compare.
//
// Register file of a warp: one flat array of 64-bit slots (sim/ElementOps.h encodings). Value v
// with n registers per lane occupies 32*n consecutive slots starting at ValRef::off, laid out
// [lane][reg]: register r of lane l is slot off + l*n + r. Scalars have n = 1.
//
// Expects: a verified thread-level Function.
// Guarantees: instruction ids equal instructionTable() (a pre-order walk); `maxDepth` bounds the
// nesting of regions (the executor reserves its per-warp stacks with it, so they never grow);
// an atomic's acquire/release flags follow its `sem` (an acquire whose old value no op uses is
// dropped: it could not tell the program what another program did).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "ir/IR.h"
#include "sim/ElementOps.h"

namespace tl::sim {

// Where a value lives in a warp's register file.
struct ValRef {
  uint32_t off = 0;  // first slot (lane 0, register 0)
  uint32_t n = 1;    // registers per lane (1 for a scalar)
  DType dtype = DType::I32;
  bool isPtr = false;
};

struct CRegion;

// One op, ready to run.
struct COp {
  const Op* op = nullptr;    // the IR op (for its Loc, mnemonic and messages)
  OpKind kind = OpKind::Return;
  int32_t instr = 0;         // stable instruction id (pre-order index)
  std::vector<ValRef> in;    // operands
  std::vector<ValRef> out;   // results
  std::vector<CRegion> regions;
  // Decoded attributes (meaning depends on the kind):
  int64_t attr = 0;          // vec (memory), offset (shfl_xor), index (extract), axis (ids), group (reg_reduce),
                             //   the AtomicKind (atom_global, atom_cas_global)
  OpKind combine = OpKind::Add;  // reg_reduce: Add / Maximum / Minimum
  CmpPred pred = CmpPred::Eq;    // cmp
  Slot constant = 0;             // constant: the value every register gets
  std::vector<int64_t> indices;  // permute
  // atom_global / atom_cas_global, from `sem` (sim/GlobalRaces.h's ordering rule): release for
  // acq_rel and release; acquire for acq_rel and acquire, only when the old value is used.
  bool acquire = false, release = false;
};

struct CRegion {
  std::vector<ValRef> args;  // region arguments (for: iv, carried values)
  std::vector<COp> ops;
};

struct Program {
  CRegion body;                  // args = the kernel parameters
  uint32_t slotsPerWarp = 0;     // size of one warp's register file
  int maxDepth = 1;              // deepest region nesting (the body is depth 1)
  std::vector<const Op*> instructions;  // instructions[id] = the op with that id
};

// Compiles a verified thread-level function. Throws IRError for an op the executor does not
// run (a block-only op) or a register file larger than the executor allows.
std::unique_ptr<Program> compileProgram(const Function& fn);

}  // namespace tl::sim
