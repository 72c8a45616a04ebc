// In-process PTX assembly with NVIDIA's libnvJitLink (CUDA 12+), loaded at run time.
//
// tilelab never links libnvJitLink: NvJitLink::open() dlopen()s it and looks its entry points up
// by their plain exported names (nvJitLinkCreate, ...), so tl-ptx builds and starts on machines
// without it; there open() returns nullptr and says why, and the caller (assemblePtx in Ptxas.h)
// runs the ptxas process instead. The library is looked up in:
//   $TL_NVJITLINK (when set: only there),
//   libnvJitLink.so.13, then libnvJitLink.so on the loader's path (LD_LIBRARY_PATH, ld.so.cache),
//   /usr/local/cuda/lib64, then $CUDA_HOME/lib64 and $CUDA_PATH/lib64 (when set).
// It is opened with RTLD_NODELETE: the first open in a process loads it (a few ms for its
// ~100 MB), later opens find it loaded.
//
//   std::string why;
//   if (auto lib = NvJitLink::open(&why)) {
//     std::string cubin;
//     PtxasInfo info = lib->assemble(ptx, "sm_90", &cubin);   // "-arch=sm_90 -verbose -no-cache"
//   }
//
// What it does differently from the ptxas process: nvJitLink compiles its PTX input as
// relocatable device code (what `ptxas -c` does) and then links it, so the cubin is not the one
// `ptxas` without -c writes: ptxas may allocate more registers (the softmax at its default launch:
// 47 instead of 40; the matmul: 72 instead of 47) and reports a little more static shared memory.
// Its -verbose info log holds ptxas' own report lines, parsed by parsePtxasReport (Ptxas.h).
// `-no-cache` keeps nvJitLink from keeping its own copy in the driver's compute cache
// (~/.nv/ComputeCache, used when libcuda is present): tilelab's JIT cache already keeps the
// cubin, and a second cache would make a "cold" compile not cold.
//
// Expects: a PTX module as produced by compileToPTX; an arch "sm_XX". Guarantees: never throws;
// every call's result is checked; a rejected PTX gives ran = true, ok = false and the error log
// (ptxas' "ptxas application ptx input, line N; error : ..." lines, then nvJitLink's own line).
#pragma once

#include <memory>
#include <string>

#include "ptx/Ptxas.h"

namespace tl {

class NvJitLink {
 public:
  // Looks the library up (see above) and resolves every entry point. nullptr with *why set
  // ("libnvJitLink not found (...)", "$TL_NVJITLINK=/x cannot be loaded: ...", "... lacks
  // nvJitLinkGetInfoLog") when it cannot be used. Never throws.
  static std::unique_ptr<NvJitLink> open(std::string* why);
  ~NvJitLink();
  NvJitLink(const NvJitLink&) = delete;
  NvJitLink& operator=(const NvJitLink&) = delete;

  // "nvJitLink 13.0" (nvJitLinkVersion).
  const std::string& version() const { return version_; }
  // The file (or loader name) it was opened as.
  const std::string& path() const { return path_; }

  // Assembles `ptx` for `arch` (-arch=<arch> -verbose -no-cache); when `cubinOut` is not null
  // and the PTX was accepted, it receives the cubin. PtxasInfo::assembler is version().
  PtxasInfo assemble(const std::string& ptx, const std::string& arch, std::string* cubinOut = nullptr) const;

  struct Api;  // the entry points (NvJitLink.cpp)

 private:
  NvJitLink();
  void* lib_ = nullptr;
  std::unique_ptr<Api> api_;
  std::string path_, version_;
};

}  // namespace tl
