// Assembles a PTX text into a cubin and reports what ptxas says about the kernel: registers,
// shared memory, spills, stack frame. Two assemblers (tl-ptx --assembler, docs/gpu.md
// "Assembling: nvJitLink or the ptxas process"):
//   - runPtxas: the ptxas process, `ptxas -arch=<arch> -v in.ptx -o out.cubin`;
//   - NvJitLink (ptx/NvJitLink.h): libnvJitLink in process, loaded with dlopen; it compiles the
//     PTX as relocatable code (like `ptxas -c`), so its cubin and register count can differ;
//   - assemblePtx picks one: Auto takes nvJitLink when it loads and falls back to the process.
// Both reports are read by one parser, parsePtxasReport.
//
// Expects: a PTX module as produced by compileToPTX, and its target arch ("sm_90", ...).
// Guarantees: never throws for a missing assembler — `ran` is false and `skipped` says why; ptxas
// is looked up in $TL_PTXAS, then /usr/local/cuda/bin/ptxas, then PATH. Temporary files are
// created with mkstemp in $TMPDIR (or /tmp) and removed afterwards. When the assembler rejects
// the PTX, `ran` is true, `ok` is false and `log` holds its error output.
#pragma once

#include <string>
#include <vector>

namespace tl {

// Which assembler turns PTX into a cubin.
enum class Assembler {
  Auto,       // nvJitLink in process when the library loads, else the ptxas process
  Ptxas,      // always the ptxas process
  NvJitLink,  // always nvJitLink; when it cannot be loaded nothing runs (`skipped` says why)
};

// "auto", "ptxas", "nvjitlink": tl-ptx's --assembler values and the JIT cache key's spelling.
const char* assemblerName(Assembler a);

struct PtxasInfo {
  bool ran = false;          // an assembler was found and executed
  bool ok = false;           // ... and accepted the PTX (exit status 0, NVJITLINK_SUCCESS)
  std::string skipped;       // why no assembler ran (empty when one ran)
  std::string assembler;     // which one ran: "nvJitLink 13.0", or the ptxas binary's path
  std::string assemblerNote; // Auto fell back to the process: why nvJitLink was not used ("" else)
  int registers = 0;         // registers per thread
  int sharedBytes = 0;       // static shared memory per block ("smem")
  int spillStoreBytes = 0;   // bytes of spill stores
  int spillLoadBytes = 0;    // bytes of spill loads
  int stackFrameBytes = 0;   // bytes of stack frame
  std::string log;           // ptxas' full output (stdout + stderr), or nvJitLink's info and error logs
};

// Reads ptxas' report (`ptxas -v`, or nvJitLink's -verbose info log) into info's registers,
// sharedBytes, spill and stack fields; with several kernels, the largest of each. Only ptxas'
// own lines count (those starting with "ptxas" or indented, the "N bytes stack frame" line):
// nvJitLink's linker summary ("info    : used 47 registers, ..., 1040 bytes smem", the 1 KB the
// driver reserves included) is not ptxas' report.
void parsePtxasReport(const std::string& log, PtxasInfo& info);

// ptxas' performance notes in its report, one per line without the "ptxas info    : " prefix:
// "(C7514) Potential Performance Loss: wgmma.mma_async instructions are serialized due to ...".
std::vector<std::string> ptxasPerformanceNotes(const std::string& log);

// Whether `arch` is an "sm_XX" ptxas and nvJitLink accept as -arch; else *why says so.
bool isAssemblerArch(const std::string& arch, std::string* why);

// Where ptxas is, or "" (with *why set) when none is found.
std::string findPtxas(std::string* why = nullptr);

// Assembles `ptx` for `arch` with the ptxas process (`ptxas -v`); when `cubinOut` is not null and
// ptxas succeeded, it receives the cubin bytes.
PtxasInfo runPtxas(const std::string& ptx, const std::string& arch, std::string* cubinOut = nullptr);

// Assembles with the assembler `which` asks for (NvJitLink.h, runPtxas). Auto: nvJitLink when
// NvJitLink::open() succeeds, else the process with assemblerNote saying why. A PTX nvJitLink
// rejects is reported as rejected (ok = false), never retried with the process.
PtxasInfo assemblePtx(const std::string& ptx, const std::string& arch, std::string* cubinOut = nullptr,
                      Assembler which = Assembler::Auto);

}  // namespace tl
