// The JIT cache: a kernel is compiled once per (source, argument dtypes, constexpr values,
// specialization hints, num_warps, target arch, code-generation options, the target GPU's
// shared-memory limit (sim/Gpu.h targetGpu(): the thread stage checks it), tool version) and the
// PTX and cubin are kept on disk, so the next run skips the whole compiler and says "cache hit".
//
// Location: $TL_CACHE_DIR, else $XDG_CACHE_HOME/tilelab, else ~/.cache/tilelab (docs/gpu.md).
// Layout: <root>/v1/<first 2 hex digits of the key>/<key>/{kernel.ptx, kernel.cubin, manifest.json}
// where <key> is the SHA-256 (hex) of the key's parts. The manifest holds the key's parts, the
// SHA-256 and size of the PTX and cubin files, ptxas' report (with the assembler that ran:
// nvJitLink and the ptxas process write different cubins, so the assembler asked for is in the
// key) and the compile times.
//
// Trust: only the key (the entry's name, and every part compared) and the files' hashes are
// taken on trust. Every other manifest field is checked for its type and range and against what
// the hashed files say (the kernel name is the PTX's only .entry, shared_bytes its static
// .shared arrays up to 48 KB and an .extern .shared array above, ptx/DynamicShared.h; num_warps
// the key's, ptxas ran exactly when there is a cubin, which is ELF);
// an unknown field is a miss too. store() refuses an entry lookup() would reject. Every read is
// bounded (ir/FileRead.h: the manifest 1 MiB, a payload the size its manifest recorded) and is of
// a regular file, never through a symbolic link: a FIFO, a device or a link in an entry is a
// miss, never a hang or a read without end.
//
// Atomicity: store() writes the three files into a private temporary directory
// (".tmp-<key>+<pid>@<host>.XXXXXX", mkdtemp next to the entry) and rename(2)s that directory
// into place: the entry appears whole or not at all. A reader opens only <key>/..., checks the
// manifest and the files' sizes and hashes; anything missing, partial or inconsistent is a miss
// (with the reason), and the next store moves the broken entry aside and replaces it. Whatever
// blocks an entry path or its v1/ and v1/<xx>/ directories (a file, a symbolic link, a FIFO:
// nothing the cache writes) is removed by the next store, never followed. So a writer killed
// at any point leaves the old entry or a temporary directory that readers never look at; two
// concurrent writers of one key leave one valid entry (the second finds the first's and keeps
// it). Atomic against process death; not fsync'ed, so not against power loss.
//
// Stale temporaries: a store removes the temporaries in its shard whose writer is gone (the PID
// in the name names no process on this host: kill(pid, 0) fails with ESRCH), and any other one
// older than an hour (another host's, or a PID a new process took over); a JitCache's first
// store does the same in every shard. (A live writer in another PID namespace under the same
// host name could lose its temporary: its store then fails, it never leaves a broken entry.)
#pragma once

#include "runtime/AtomicFile.h"  // writeFileAtomic

#include <nlohmann/json.hpp>

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "ptx/Codegen.h"
#include "ptx/Ptxas.h"
#include "ptx/Results.h"
#include "runtime/Driver.h"
#include "runtime/Hash.h"  // sha256Hex, toolVersion

namespace tl {


// Everything the compiled code depends on. Each field is hashed with its name and length, so
// no two different keys serialize alike.
struct CacheKey {
  std::string source;          // the kernel file's text
  std::string specialization;  // Specialization::key(): parameter dtypes and constexpr values
  std::string hints;           // describeHints(): the divisibility facts the layouts rely on
  int numWarps = 4;
  std::string arch;            // "sm_90"
  std::string options;         // code-generation options ("O3 fast-math")
  std::string toolVersion;

  std::string digest() const;  // SHA-256 hex of the parts
  // The parts as stored in a manifest (the source as its SHA-256 and size).
  nlohmann::json parts() const;
};

// A cached compilation.
struct CacheEntry {
  std::string kernelName;      // the PTX .entry
  int numWarps = 4;            // threads per block = 32 * numWarps
  int64_t sharedBytes = 0;     // shared memory per block the thread IR asked for (static up
                               // to 48 KB, dynamic above: ptx/DynamicShared.h)
  std::string ptx;
  std::string cubin;           // empty when ptxas did not run
  PtxasInfo ptxas;
  double threadMs = 0, codegenMs = 0, ptxasMs = 0;  // what compiling it cost (when stored)
};

class JitCache {
 public:
  explicit JitCache(std::string root) : root_(std::move(root)), sweepOnce_(std::make_shared<std::once_flag>()) {}
  // $TL_CACHE_DIR, else $XDG_CACHE_HOME/tilelab, else $HOME/.cache/tilelab, else ./.tilelab-cache.
  static std::string defaultRoot();

  const std::string& root() const { return root_; }
  std::string entryDir(const CacheKey& key) const;

  // The entry for `key`, or nullopt with *why ("no entry", "manifest is not valid JSON",
  // "kernel.ptx does not match its hash", ...). Never throws for anything found on disk.
  std::optional<CacheEntry> lookup(const CacheKey& key, std::string* why = nullptr) const;
  // Stores `entry` under `key` (replacing whatever is there). Returns false with *error set
  // when the directory cannot be written; the cache is optional, so callers go on without it.
  bool store(const CacheKey& key, const CacheEntry& entry, std::string* error = nullptr) const;

 private:
  std::string root_;
  // The first store() also removes dead writers' temporaries from every shard (copies share it).
  std::shared_ptr<std::once_flag> sweepOnce_;
};

// ---------------------------------------------------------------------------------------------
// Compiling through the cache: what tl-ptx does for every kernel.

struct JitOptions {
  PtxOptions ptx;              // arch, optimization level, fast math
  bool useCache = true;        // false: --no-cache (neither looked up nor stored)
  bool wantLLVM = false;       // also produce the LLVM IR (recompiles on a hit; not cached)
  bool keepLayouts = false;    // --keep-layouts: no automatic convert_layout (part of the key)
  Assembler assembler = Assembler::Ptxas;  // --assembler (part of the key: the cubins differ)
};

struct JitResult {
  CacheEntry entry;            // the PTX, the cubin, ptxas' report
  std::string llvmIR;          // when JitOptions::wantLLVM
  bool cacheHit = false;
  std::string cacheNote;       // why it missed ("no entry", ...), or why storing failed
  CompileTimes times;          // thread/codegen/ptxas/cache filled (front end and module load: caller)
};

// The key of a compiled kernel: its source, specialization, the launch's divisibility facts,
// num_warps, arch, options (with the target GPU's maxSharedPerBlock and the assembler asked for)
// and this binary's version.
CacheKey cacheKeyFor(const CompiledKernel& k, const PtxOptions& opts, bool keepLayouts = false,
                     Assembler assembler = Assembler::Ptxas);

// Looks the kernel up in `cache` (may be null) and on a miss compiles it: compileToThreadIR,
// compileToPTX, assemblePtx (nvJitLink or the ptxas process, when one is there), then stores the
// result. Throws IRError for IR the code generator rejects and std::runtime_error (naming the
// assembler, with its log) when the assembler rejects the PTX; nothing is cached then.
JitResult jitCompile(const CompiledKernel& k, const JitOptions& opts, const JitCache* cache);

}  // namespace tl
