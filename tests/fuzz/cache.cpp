// Fuzz harness: the JIT cache's reader (ptx/JitCache.h, JitCache::lookup). A valid entry for one
// fixed key is stored once; each input then replaces one of its files, chosen by the first byte:
//   0  manifest.json                       (every manifest field's validation)
//   1  kernel.ptx, manifest re-hashed      (the PTX's .entry and .shared parsing behind the hash)
//   2  kernel.cubin, manifest re-hashed    (the ELF check)
//   3  manifest.json, its hashes kept      (fields edited around payloads that still match)
// lookup() must never crash, throw or hang; a hit must be an entry store() would write back: its
// PTX and cubin are the files' bytes and its num_warps the key's. Anything else aborts.
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "ptx/JitCache.h"
#include "runtime/Hash.h"

namespace {

namespace fs = std::filesystem;

const char* kPtx = R"(//
.version 8.0
.target sm_90
.address_size 64
.visible .entry fuzzed(.param .u64 p)
{
  .shared .align 4 .b8 smem[256];
  ret;
}
)";

struct Fixture {
  std::string root;
  tl::JitCache cache{""};
  tl::CacheKey key;
  std::string dir, manifest;
  Fixture() {
    const char* tmp = std::getenv("TMPDIR");
    root = std::string(tmp && *tmp ? tmp : "/tmp") + "/tl_fuzz_cache_" + std::to_string(getpid());
    fs::remove_all(root);
    cache = tl::JitCache(root);
    key.source = "def fuzzed(p): pass\n";
    key.specialization = "p:ptr<f32>";
    key.numWarps = 4;
    key.arch = "sm_90";
    key.options = "O3";
    key.toolVersion = tl::toolVersion();
    tl::CacheEntry e;
    e.kernelName = "fuzzed";
    e.numWarps = 4;
    e.sharedBytes = 256;
    e.ptx = kPtx;
    std::string err;
    if (!cache.store(key, e, &err)) std::abort();
    if (!cache.lookup(key)) std::abort();  // the fixture itself must hit
    dir = cache.entryDir(key);
    manifest = read(dir + "/manifest.json");
  }
  ~Fixture() { fs::remove_all(root); }
  static std::string read(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(f), {});
  }
  void write(const std::string& name, const std::string& bytes) const {
    std::ofstream(dir + "/" + name, std::ios::binary | std::ios::trunc) << bytes;
  }
  // The stored manifest with a payload's size and hash replaced (a payload the fuzzer wrote).
  std::string rehashed(const char* prefix, const std::string& payload) const {
    nlohmann::json m = nlohmann::json::parse(manifest);
    m[std::string(prefix) + "_bytes"] = payload.size();
    m[std::string(prefix) + "_sha256"] = tl::sha256Hex(payload);
    return m.dump(2);
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static Fixture fx;
  if (size == 0) return 0;
  const int mode = data[0] % 4;
  const std::string bytes(reinterpret_cast<const char*>(data) + 1, size - 1);
  // Each input starts from the valid entry.
  fx.write("manifest.json", fx.manifest);
  fx.write("kernel.ptx", kPtx);
  fx.write("kernel.cubin", "");
  switch (mode) {
    case 0: fx.write("manifest.json", bytes); break;
    case 1:
      fx.write("kernel.ptx", bytes);
      fx.write("manifest.json", fx.rehashed("ptx", bytes));
      break;
    case 2:
      fx.write("kernel.cubin", bytes);
      fx.write("manifest.json", fx.rehashed("cubin", bytes));
      break;
    default: {
      // The input is JSON merged over the manifest (RFC 7386), payloads untouched.
      nlohmann::json patch = nlohmann::json::parse(bytes, nullptr, /*allow_exceptions=*/false);
      if (patch.is_discarded()) return 0;
      nlohmann::json m = nlohmann::json::parse(fx.manifest);
      m.merge_patch(patch);
      fx.write("manifest.json", m.dump());
    }
  }
  std::string why;
  std::optional<tl::CacheEntry> hit = fx.cache.lookup(fx.key, &why);
  if (hit) {
    if (hit->numWarps != fx.key.numWarps) std::abort();
    if (hit->ptx != Fixture::read(fx.dir + "/kernel.ptx")) std::abort();
    if (hit->cubin != Fixture::read(fx.dir + "/kernel.cubin")) std::abort();
    if (hit->kernelName.empty() || hit->ptx.find(hit->kernelName) == std::string::npos) std::abort();
  } else if (why.empty()) {
    std::abort();  // a miss always says why
  }
  return 0;
}
