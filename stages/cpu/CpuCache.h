// tl-cpu's JIT cache: a kernel's machine code is compiled once per (block IR after the passes,
// with every op's source location; CPU model, features and ISA; code-generation options; tool
// version) and kept on disk as an object file, so the next run skips LLVM's optimizer and code
// generator and only links the object (a "cache hit").
//
// The design is tl-ptx's (stages/ptx/JitCache.h): the root is defaultCacheRoot(), an entry is
// <root>/cpu-v1/<first 2 hex digits>/<key>/{kernel.o, manifest.json}, <key> the SHA-256 of the
// key's text; store() writes both files into a private temporary directory and rename(2)s it
// into place, so an entry appears whole or not at all; lookup() reads bounded regular files only
// (no symbolic links), checks the object's size and SHA-256 against the manifest and every
// manifest field's type, and anything missing or inconsistent is a miss with its reason.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cpu/CpuCodegen.h"

namespace tl::cpu {

struct JitOptions;

// What an entry holds besides the object: what CpuKernel needs that code generation computed.
struct CachedKernel {
  std::string object;                // the ELF object with tl_cpu_program
  int64_t scratchBytes = 0;
  std::vector<int64_t> opOrdinals;   // CpuModule::ops as pre-order indices of the function's ops
  bool prints = false;
};

class CpuCache {
 public:
  explicit CpuCache(std::string root);
  // The key of `fn` (after the block pipeline) compiled for `target` with these options.
  static std::string keyOf(const Function& fn, const CpuTarget& target, const CodegenOptions& cg, const JitOptions& jo);
  std::optional<CachedKernel> lookup(const std::string& key, std::string* missReason) const;
  bool store(const std::string& key, const CachedKernel& entry, std::string* error) const;
  std::string entryDir(const std::string& key) const;

 private:
  std::string root_;
};

// Pre-order indices of ops in fn, and back.
std::vector<int64_t> opOrdinals(const Function& fn, const std::vector<const Op*>& ops);
std::vector<const Op*> opsAt(const Function& fn, const std::vector<int64_t>& ordinals);

}  // namespace tl::cpu
