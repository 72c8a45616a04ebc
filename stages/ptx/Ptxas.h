// Runs NVIDIA's PTX assembler (ptxas) on a PTX text and reports what `ptxas -v` says about the
// kernel: registers, shared memory, spills, stack frame.
//
// Expects: a PTX module as produced by compileToPTX, and its target arch ("sm_90", ...).
// Guarantees: never throws for a missing ptxas — `ran` is false and `skipped` says why; ptxas is
// looked up in $TL_PTXAS, then /usr/local/cuda/bin/ptxas, then PATH. Temporary files are created
// with mkstemp in $TMPDIR (or /tmp) and removed afterwards. When ptxas rejects the PTX, `ran` is
// true, `ok` is false and `log` holds its error output.
#pragma once

#include <string>

namespace tl {

struct PtxasInfo {
  bool ran = false;          // ptxas was found and executed
  bool ok = false;           // ... and accepted the PTX (exit status 0)
  std::string skipped;       // why ptxas did not run (empty when it ran)
  std::string ptxasPath;     // the ptxas binary used
  int registers = 0;         // registers per thread
  int sharedBytes = 0;       // static shared memory per block ("smem")
  int spillStoreBytes = 0;   // bytes of spill stores
  int spillLoadBytes = 0;    // bytes of spill loads
  int stackFrameBytes = 0;   // bytes of stack frame
  std::string log;           // ptxas' full output (stdout + stderr)
};

// Where ptxas is, or "" (with *why set) when none is found.
std::string findPtxas(std::string* why = nullptr);

// Assembles `ptx` for `arch` with `ptxas -v`; when `cubinOut` is not null and ptxas succeeded,
// it receives the cubin bytes.
PtxasInfo runPtxas(const std::string& ptx, const std::string& arch, std::string* cubinOut = nullptr);

}  // namespace tl
