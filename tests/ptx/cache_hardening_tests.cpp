// The JIT cache against what it did not write itself (issue 11, item 8): every manifest field is
// checked (a num_warps of 2^40 once gave a "cache hit"), an entry path blocked by a file, a
// symbolic link or a FIFO is repaired, special files inside an entry are misses that neither
// block nor fill memory, and a writer killed by SIGKILL mid-store leaves nothing behind once the
// next store runs. Whatever could hang or exhaust memory without the fix runs in a child process
// with a time and an address-space limit.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <random>
#include <thread>

#include "../common/InChild.h"
#include "../common/TempDir.h"
#include "ptx/JitCache.h"

namespace fs = std::filesystem;
using namespace tl;
using Json = nlohmann::json;

namespace {

using test::inChild;

// A fresh temporary directory per test (tests/common/TempDir.h), named "tl-cache-hardening.*".
struct TempDir : test::TempDir {
  TempDir() : test::TempDir("tl-cache-hardening") {}
};

CacheKey key(const std::string& version = "test 1") {
  CacheKey k;
  k.source = "@jit\ndef k(x_ptr, N):\n    pass\n";
  k.specialization = "N:i32,x_ptr:ptr<f32>;BLOCK=1024";
  k.hints = "N: divisible by 16";
  k.numWarps = 4;
  k.arch = "sm_90";
  k.options = "O3 fast-math";
  k.toolVersion = version;
  return k;
}

// A valid entry: one .entry named like the kernel, 512 bytes of static shared memory, an ELF
// cubin; `padding` bytes of PTX comment make a store take a while.
CacheEntry entry(size_t padding = 3000) {
  CacheEntry e;
  e.kernelName = "k";
  e.numWarps = 4;
  e.sharedBytes = 512;
  e.ptx = ".version 8.5\n.target sm_90\n.visible .entry k(\n)\n{\n\t.shared .align 16 .b8 tl_shared[512];\n}\n// " +
          std::string(padding, 'p') + "\n";
  e.cubin = std::string("\x7f" "ELF", 4) + std::string(5000, '\0');
  e.ptxas.ran = e.ptxas.ok = true;
  e.ptxas.registers = 24;
  e.ptxas.sharedBytes = 512;
  e.ptxas.log = "ptxas info    : Used 24 registers";
  e.threadMs = 1.5;
  e.codegenMs = 7.25;
  e.ptxasMs = 30;
  return e;
}

Json readJson(const fs::path& p) {
  std::ifstream in(p);
  return Json::parse(in);
}

void writeAll(const fs::path& p, const std::string& data) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out << data;
}

// In a child: lookup must miss with a reason containing `word`.
std::string missesWith(const JitCache& cache, const CacheKey& k, const std::string& word) {
  std::string why;
  if (cache.lookup(k, &why)) return "a hit";
  return why.find(word) != std::string::npos ? "" : "missed, but said: " + why;
}

// The ".tmp-*" names in `dir`.
std::vector<std::string> temporaries(const fs::path& dir) {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (e.path().filename().string().rfind(".tmp-", 0) == 0) names.push_back(e.path().filename().string());
  return names;
}

}  // namespace

TEST(JitCacheHardening, EveryManifestFieldIsChecked) {
  TempDir dir;
  JitCache cache(dir.path());
  const CacheKey k = key();
  const fs::path manifest = fs::path(cache.entryDir(k)) / "manifest.json";
  struct Edit {
    const char* what;
    std::function<void(Json&)> apply;
    const char* word;  // the miss reason names it
  };
  const std::vector<Edit> edits = {
      {"num_warps 2^40", [](Json& m) { m["num_warps"] = int64_t(1) << 40; }, "num_warps"},
      {"num_warps not the key's", [](Json& m) { m["num_warps"] = 8; }, "num_warps is 8, not the key's 4"},
      {"num_warps a string", [](Json& m) { m["num_warps"] = "4"; }, "num_warps is not an integer"},
      {"num_warps a float", [](Json& m) { m["num_warps"] = 4.5; }, "num_warps"},
      {"shared_bytes not the PTX's", [](Json& m) { m["shared_bytes"] = 4096; }, "shared_bytes is 4096"},
      {"shared_bytes negative", [](Json& m) { m["shared_bytes"] = -1; }, "shared_bytes"},
      {"kernel not the .entry", [](Json& m) { m["kernel"] = "other"; }, "'other'"},
      {"kernel a number", [](Json& m) { m["kernel"] = 7; }, "kernel is not a string"},
      {"ptx_bytes negative", [](Json& m) { m["ptx_bytes"] = -5; }, "ptx_bytes"},
      {"ptx_bytes 2^62", [](Json& m) { m["ptx_bytes"] = int64_t(1) << 62; }, "ptx_bytes"},
      {"cubin_bytes 2^64-1", [](Json& m) { m["cubin_bytes"] = ~uint64_t(0); }, "cubin_bytes"},
      {"cubin_sha256 not hex", [](Json& m) { m["cubin_sha256"] = "zz"; }, "cubin_sha256"},
      {"ptxas registers 10^6", [](Json& m) { m["ptxas"]["registers"] = 1000000; }, "ptxas.registers"},
      {"ptxas registers 2^40", [](Json& m) { m["ptxas"]["registers"] = int64_t(1) << 40; }, "ptxas.registers"},
      {"ptxas spills negative", [](Json& m) { m["ptxas"]["spill_load_bytes"] = -8; }, "ptxas.spill_load_bytes"},
      {"ptxas ran a string", [](Json& m) { m["ptxas"]["ran"] = "yes"; }, "ptxas.ran"},
      {"ptxas rejected it", [](Json& m) { m["ptxas"]["ok"] = false; }, "rejected"},
      {"ptxas did not run, yet a cubin", [](Json& m) { m["ptxas"]["ran"] = false; }, "did not run"},
      {"ptxas log a number", [](Json& m) { m["ptxas"]["log"] = 1; }, "ptxas.log"},
      {"ptxas unknown field", [](Json& m) { m["ptxas"]["extra"] = 1; }, "unknown field 'ptxas.extra'"},
      {"ptxas not an object", [](Json& m) { m["ptxas"] = Json::array(); }, "ptxas is not an object"},
      {"compile time negative", [](Json& m) { m["compile_ms"]["ptxas"] = -1; }, "compile_ms.ptxas"},
      {"compile time 1e300", [](Json& m) { m["compile_ms"]["llvm_codegen"] = 1e300; }, "compile_ms.llvm_codegen"},
      {"compile_ms missing a part", [](Json& m) { m["compile_ms"].erase("ptxas"); }, "compile_ms.ptxas is missing"},
      {"created a number", [](Json& m) { m["created"] = 5; }, "created"},
      {"unknown top-level field", [](Json& m) { m["trust_me"] = true; }, "unknown field 'trust_me'"},
      {"format 2", [](Json& m) { m["format"] = 2; }, "format"},
      {"key parts of another key", [](Json& m) { m["parts"]["num_warps"] = 8; }, "key parts"},
  };
  for (const Edit& edit : edits) {
    SCOPED_TRACE(edit.what);
    std::string err;
    ASSERT_TRUE(cache.store(k, entry(), &err)) << err;
    ASSERT_TRUE(cache.lookup(k));
    Json m = readJson(manifest);
    edit.apply(m);
    writeAll(manifest, m.dump(2));
    std::string why;
    EXPECT_FALSE(cache.lookup(k, &why)) << "a hit with " << edit.what;
    EXPECT_NE(why.find(edit.word), std::string::npos) << why;
    // The next store replaces the entry with a valid one.
    ASSERT_TRUE(cache.store(k, entry(), &err)) << err;
    auto hit = cache.lookup(k, &why);
    ASSERT_TRUE(hit) << why;
    EXPECT_EQ(hit->numWarps, 4);
  }
}

TEST(JitCacheHardening, StoreRefusesAnEntryLookupWouldReject) {
  TempDir dir;
  JitCache cache(dir.path());
  struct Bad {
    const char* what;
    std::function<void(CacheEntry&)> apply;
    const char* word;
  };
  const std::vector<Bad> bads = {
      {"name not the .entry", [](CacheEntry& e) { e.kernelName = "other"; }, "'other'"},
      {"num_warps not the key's", [](CacheEntry& e) { e.numWarps = 8; }, "num_warps"},
      {"shared bytes not the PTX's", [](CacheEntry& e) { e.sharedBytes = 0; }, "shared_bytes"},
      {"no .entry", [](CacheEntry& e) { e.ptx = "// nothing\n"; }, ".entry"},
      {"cubin not ELF", [](CacheEntry& e) { e.cubin = "not an elf"; }, "ELF"},
      {"ptxas ran without a cubin", [](CacheEntry& e) { e.cubin.clear(); }, "no cubin"},
      {"a NaN time", [](CacheEntry& e) { e.codegenMs = std::nan(""); }, "compile time"},
      {"a manifest over its limit", [](CacheEntry& e) { e.ptxas.log = std::string(2 << 20, 'w'); }, "limit"},
  };
  for (const Bad& b : bads) {
    SCOPED_TRACE(b.what);
    CacheEntry e = entry();
    b.apply(e);
    std::string err;
    EXPECT_FALSE(cache.store(key(), e, &err));
    EXPECT_NE(err.find(b.word), std::string::npos) << err;
    EXPECT_FALSE(cache.lookup(key()));
    EXPECT_FALSE(fs::exists(cache.entryDir(key())));
    EXPECT_TRUE(temporaries(fs::path(cache.entryDir(key())).parent_path()).empty());
  }
}

TEST(JitCacheHardening, BlockedEntryPathsAreRepaired) {
  TempDir dir;
  const CacheKey k = key();
  const fs::path elsewhere = fs::path(dir.path()) / "elsewhere";
  const fs::path root = fs::path(dir.path()) / "cache";
  struct Blocker {
    const char* what;
    std::function<void(const fs::path& entry)> apply;
    const char* word;  // lookup's reason before the repair
  };
  const std::vector<Blocker> blockers = {
      {"a regular file", [](const fs::path& e) { writeAll(e, "x"); }, "a regular file, not a directory"},
      {"a FIFO", [](const fs::path& e) { mkfifo(e.c_str(), 0600); }, "a FIFO, not a directory"},
      {"a dangling symbolic link", [](const fs::path& e) { fs::create_symlink("/nonexistent/entry", e); },
       "a symbolic link"},
      // A link to a copy of a valid entry was followed and read as a hit; the cache writes no links.
      {"a symbolic link to a valid entry elsewhere", [&](const fs::path& e) { fs::create_directory_symlink(elsewhere, e); },
       "a symbolic link"},
      {"a file where the shard directory goes",
       [](const fs::path& e) {
         fs::remove_all(e.parent_path());
         writeAll(e.parent_path(), "x");
       },
       "no entry"},
      {"a link where v1/ goes",
       [&](const fs::path& e) {
         fs::remove_all(e.parent_path().parent_path());
         fs::create_directory_symlink(elsewhere, e.parent_path().parent_path());
       },
       ""},
  };
  for (const Blocker& b : blockers) {
    SCOPED_TRACE(b.what);
    fs::remove_all(root);
    fs::remove_all(elsewhere);
    JitCache cache(root.string());
    const fs::path entryPath = cache.entryDir(k);
    ASSERT_TRUE(cache.store(k, entry()));
    fs::copy(entryPath, elsewhere, fs::copy_options::recursive);
    fs::remove_all(entryPath);
    b.apply(entryPath);
    EXPECT_EQ(inChild([&] {
                std::string r = missesWith(cache, k, b.word), err;
                if (r.empty() && !cache.store(k, entry(), &err)) r = "not repaired: " + err;
                return r;
              }),
              "");
    std::string why;
    auto hit = cache.lookup(k, &why);
    ASSERT_TRUE(hit) << why;
    EXPECT_EQ(fs::symlink_status(entryPath).type(), fs::file_type::directory);
    EXPECT_EQ(fs::symlink_status(entryPath.parent_path()).type(), fs::file_type::directory);
    EXPECT_EQ(fs::symlink_status(entryPath.parent_path().parent_path()).type(), fs::file_type::directory);
    // What a link pointed to is left as it was: the copy alone, nothing written into it.
    int files = 0;
    for (const auto& f : fs::recursive_directory_iterator(elsewhere)) files += f.is_regular_file();
    EXPECT_EQ(files, 3);
  }
}

TEST(JitCacheHardening, SpecialFilesInAnEntryAreMissesThatNeitherBlockNorFillMemory) {
  TempDir dir;
  JitCache cache(dir.path());
  const CacheKey k = key();
  const fs::path e = cache.entryDir(k);
  struct Damage {
    const char* what;
    std::function<void()> apply;
    const char* word;
  };
  const std::vector<Damage> damages = {
      // Both once read without end: the first OOM-killed tl-ptx at 22 GB, the second blocked it.
      {"manifest linked to /dev/zero",
       [&] {
         fs::remove(e / "manifest.json");
         fs::create_symlink("/dev/zero", e / "manifest.json");
       },
       "manifest.json: it is a symbolic link"},
      {"manifest a FIFO",
       [&] {
         fs::remove(e / "manifest.json");
         mkfifo((e / "manifest.json").c_str(), 0600);
       },
       "manifest.json: it is a FIFO"},
      {"manifest a directory",
       [&] {
         fs::remove(e / "manifest.json");
         fs::create_directory(e / "manifest.json");
       },
       "manifest.json: it is a directory"},
      {"manifest over its limit", [&] { fs::resize_file(e / "manifest.json", 2 << 20); }, "over the 1 MiB limit"},
      {"PTX linked to /dev/zero",
       [&] {
         fs::remove(e / "kernel.ptx");
         fs::create_symlink("/dev/zero", e / "kernel.ptx");
       },
       "kernel.ptx: it is a symbolic link"},
      {"PTX a FIFO",
       [&] {
         fs::remove(e / "kernel.ptx");
         mkfifo((e / "kernel.ptx").c_str(), 0600);
       },
       "kernel.ptx: it is a FIFO"},
      {"cubin a sparse 64 GiB file", [&] { fs::resize_file(e / "kernel.cubin", uintmax_t(64) << 30); },
       "kernel.cubin has the wrong size"},
      {"PTX longer than recorded",
       [&] {
         std::ofstream out(e / "kernel.ptx", std::ios::app);
         out << std::string(1 << 20, 'x');
       },
       "kernel.ptx has the wrong size"},
      {"manifest missing", [&] { fs::remove(e / "manifest.json"); }, "manifest.json is missing"},
  };
  for (const Damage& d : damages) {
    SCOPED_TRACE(d.what);
    std::string err;
    ASSERT_TRUE(cache.store(k, entry(), &err)) << err;
    ASSERT_TRUE(cache.lookup(k));
    d.apply();
    // The repair runs in the child too: a store looks the broken entry up before replacing it.
    EXPECT_EQ(inChild([&] {
                std::string r = missesWith(cache, k, d.word), err;
                if (r.empty() && !cache.store(k, entry(), &err)) r = "not repaired: " + err;
                if (r.empty() && !cache.lookup(k)) r = "no hit after the repair";
                return r;
              }),
              "");
    ASSERT_TRUE(cache.lookup(k));
  }
}

// A writer killed by SIGKILL while storing leaves its temporary directory. The next store removes
// it at once, since its writer is gone (once it stayed an hour), in the writer's shard and, on a
// fresh JitCache's first store, in every other shard.
TEST(JitCacheHardening, KilledWritersTemporariesAreRemoved) {
  TempDir dir;
  const CacheKey k = key();
  // Another key in another shard.
  CacheKey other = key("other 0");
  for (int i = 1; JitCache(dir.path()).entryDir(other).substr(0, dir.path().size() + 6) ==
                  JitCache(dir.path()).entryDir(k).substr(0, dir.path().size() + 6);
       ++i)
    other = key("other " + std::to_string(i));
  const fs::path shard = fs::path(JitCache(dir.path()).entryDir(k)).parent_path();
  const CacheEntry big = entry(16 << 20);  // 16 MiB of PTX: a store takes long enough to be caught mid-way
  std::mt19937 rng(7);
  for (const bool sameShard : {true, false}) {
    SCOPED_TRACE(sameShard ? "next store in the same shard" : "next store in another shard");
    std::vector<std::string> left;
    for (int attempt = 0; attempt < 100 && left.empty(); ++attempt) {
      pid_t pid = fork();
      ASSERT_GE(pid, 0);
      if (pid == 0) {
        JitCache cache(dir.path());
        for (;;) cache.store(k, big);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5 + rng() % 60));
      kill(pid, SIGKILL);
      waitpid(pid, nullptr, 0);
      left = temporaries(shard);
    }
    ASSERT_FALSE(left.empty()) << "no store was caught mid-way";
    std::string err;
    JitCache fresh(dir.path());
    ASSERT_TRUE(fresh.store(sameShard ? k : other, entry(), &err)) << err;
    EXPECT_TRUE(temporaries(shard).empty()) << left.front();
    EXPECT_TRUE(fresh.lookup(sameShard ? k : other));
  }
}
