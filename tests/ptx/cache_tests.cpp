// The JIT cache (stages/ptx/JitCache.h): SHA-256 against FIPS 180-4's vectors, keys that change
// with every part, miss then hit, broken entries (a writer killed mid-write, truncated and
// corrupted files) read as misses and get rewritten, concurrent writers (threads and processes)
// leave one valid entry, and the cache location's environment variables.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <set>
#include <thread>

#include "../common/TempDir.h"
#include "ptx/JitCache.h"

namespace fs = std::filesystem;
using namespace tl;

namespace {

// A fresh temporary directory per test (tests/common/TempDir.h), named "tl-cache-test.*".
struct TempDir : test::TempDir {
  TempDir() : test::TempDir("tl-cache-test") {}
};

CacheKey sampleKey() {
  CacheKey k;
  k.source = "@jit\ndef k(x_ptr, N):\n    pass\n";
  k.specialization = "N:i32,x_ptr:ptr<f32>;BLOCK=1024";
  k.hints = "N: divisible by 16";
  k.numWarps = 4;
  k.arch = "sm_90";
  k.options = "O3 fast-math";
  k.toolVersion = "test 1";
  return k;
}

CacheEntry sampleEntry(const std::string& tag = "A") {
  CacheEntry e;
  e.kernelName = "k";
  e.numWarps = 4;
  e.sharedBytes = 512;
  // What the cache checks the manifest against: one .entry named like the kernel, and static
  // shared memory of sharedBytes.
  e.ptx = "// PTX " + tag + "\n.version 8.5\n.target sm_90\n.visible .entry k(\n)\n{\n" +
          "\t.shared .align 16 .b8 tl_shared[512];\n" + std::string(3000, 'p') + tag;
  e.cubin = std::string("\x7f" "ELF", 4) + std::string(5000, '\0') + tag;  // binary, with NULs
  e.ptxas.ran = e.ptxas.ok = true;
  e.ptxas.registers = 24;
  e.ptxas.sharedBytes = 512;
  e.ptxas.spillStoreBytes = 8;
  e.ptxas.log = "ptxas info    : Used 24 registers";
  e.threadMs = 1.5;
  e.codegenMs = 7.25;
  e.ptxasMs = 30;
  return e;
}

std::string readAll(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void writeAll(const fs::path& p, const std::string& data) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out << data;
}

}  // namespace

TEST(CacheSha256, FipsVectors) {
  EXPECT_EQ(sha256Hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256Hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(sha256Hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(sha256Hex(std::string(1000000, 'a')), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(CacheSha256, PaddingBoundaries) {
  // Lengths around the 55/56-byte and 64-byte block boundaries (values from Python's hashlib).
  const std::pair<size_t, const char*> cases[] = {
      {55, "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318"},
      {56, "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a"},
      {63, "7d3e74a05d7db15bce4ad9ec0658ea98e3f06eeecf16b4c6fff2da457ddc2f34"},
      {64, "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb"},
      {65, "635361c48bb9eab14198e76ea8ab7f1a41685d6ad62aa9146d301d4f17eb0ae0"},
      {119, "31eba51c313a5c08226adf18d4a359cfdfd8d2e816b13f4af952f7ea6584dcfb"},
      {120, "2f3d335432c70b580af0e8e1b3674a7c020d683aa5f73aaaedfdc55af904c21c"},
      {1000, "41edece42d63e8d9bf515a9ba6932e1c20cbc9f5a5d134645adb5db1b9737ea3"},
  };
  for (const auto& [n, hex] : cases) EXPECT_EQ(sha256Hex(std::string(n, 'a')), hex) << n << " bytes";
  std::string bytes;
  for (int rep = 0; rep < 3; ++rep)
    for (int i = 0; i < 256; ++i) bytes += char(i);
  EXPECT_EQ(sha256Hex(bytes), "f3a25aa93aa2fbba28d79260535bbd6a5eb0fc1c24a8b0f04e12b484c1dfe363");
}

TEST(CacheKey, EveryPartChangesTheDigest) {
  CacheKey base = sampleKey();
  EXPECT_EQ(base.digest(), sampleKey().digest());
  EXPECT_EQ(base.digest().size(), 64u);
  std::vector<CacheKey> variants(7, base);
  variants[0].source += " ";
  variants[1].specialization = "N:i32,x_ptr:ptr<f32>;BLOCK=512";  // another constexpr
  variants[2].hints = "N: divisible by 4";                         // another divisibility fact
  variants[3].numWarps = 8;
  variants[4].arch = "sm_80";
  variants[5].options = "O3 precise-math";
  variants[6].toolVersion = "test 2";
  std::set<std::string> digests{base.digest()};
  for (const auto& v : variants) digests.insert(v.digest());
  EXPECT_EQ(digests.size(), variants.size() + 1);
  // Length-prefixed parts: moving text from one part to the next changes the digest.
  CacheKey a = base, b = base;
  a.specialization = "xy";
  a.hints = "z";
  b.specialization = "x";
  b.hints = "yz";
  EXPECT_NE(a.digest(), b.digest());
}

TEST(JitCache, MissThenHit) {
  TempDir dir;
  JitCache cache(dir.path());
  CacheKey key = sampleKey();
  std::string why;
  EXPECT_FALSE(cache.lookup(key, &why));
  EXPECT_EQ(why, "no entry");
  CacheEntry e = sampleEntry();
  std::string err;
  ASSERT_TRUE(cache.store(key, e, &err)) << err;
  auto hit = cache.lookup(key, &why);
  ASSERT_TRUE(hit) << why;
  EXPECT_EQ(hit->kernelName, e.kernelName);
  EXPECT_EQ(hit->numWarps, 4);
  EXPECT_EQ(hit->sharedBytes, 512);
  EXPECT_EQ(hit->ptx, e.ptx);
  EXPECT_EQ(hit->cubin, e.cubin);
  EXPECT_EQ(hit->ptxas.registers, 24);
  EXPECT_EQ(hit->ptxas.spillStoreBytes, 8);
  EXPECT_EQ(hit->ptxas.log, e.ptxas.log);
  EXPECT_DOUBLE_EQ(hit->codegenMs, 7.25);
  // The entry's files are where the header says.
  fs::path entry = cache.entryDir(key);
  EXPECT_TRUE(fs::exists(entry / "kernel.ptx"));
  EXPECT_TRUE(fs::exists(entry / "kernel.cubin"));
  EXPECT_TRUE(fs::exists(entry / "manifest.json"));
  EXPECT_EQ(entry.parent_path().filename().string(), key.digest().substr(0, 2));
  // Another key misses.
  CacheKey other = key;
  other.arch = "sm_80";
  EXPECT_FALSE(cache.lookup(other, &why));
}

TEST(JitCache, EntryWithoutCubin) {
  TempDir dir;
  JitCache cache(dir.path());
  CacheEntry e = sampleEntry();
  e.cubin.clear();
  e.ptxas = PtxasInfo{};
  e.ptxas.skipped = "ptxas not found";
  ASSERT_TRUE(cache.store(sampleKey(), e));
  auto hit = cache.lookup(sampleKey());
  ASSERT_TRUE(hit);
  EXPECT_TRUE(hit->cubin.empty());
  EXPECT_EQ(hit->ptxas.skipped, "ptxas not found");
}

TEST(JitCache, BrokenEntriesAreMissesAndGetRewritten) {
  TempDir dir;
  JitCache cache(dir.path());
  CacheKey key = sampleKey();
  CacheEntry e = sampleEntry();
  fs::path entry = cache.entryDir(key);
  struct Damage {
    const char* what;
    std::function<void()> apply;
    const char* reason;  // a word the miss reason contains
  };
  std::vector<Damage> damages = {
      {"truncated PTX", [&] { fs::resize_file(entry / "kernel.ptx", 100); }, "size"},
      {"flipped cubin byte",
       [&] {
         std::string c = readAll(entry / "kernel.cubin");
         c[10] ^= 1;
         writeAll(entry / "kernel.cubin", c);
       },
       "hash"},
      {"missing cubin", [&] { fs::remove(entry / "kernel.cubin"); }, "missing"},
      {"truncated manifest", [&] { fs::resize_file(entry / "manifest.json", 40); }, "JSON"},
      {"empty manifest", [&] { writeAll(entry / "manifest.json", ""); }, "JSON"},
      {"manifest of another key",
       [&] {
         std::string m = readAll(entry / "manifest.json");
         m.replace(m.find(key.digest()), 64, std::string(64, '0'));
         writeAll(entry / "manifest.json", m);
       },
       "key"},
      {"manifest without fields", [&] { writeAll(entry / "manifest.json", "{\"format\": 1}"); }, "key"},
      {"manifest that is an array", [&] { writeAll(entry / "manifest.json", "[1, 2]"); }, "JSON"},
  };
  for (const auto& d : damages) {
    SCOPED_TRACE(d.what);
    ASSERT_TRUE(cache.store(key, e));
    ASSERT_TRUE(cache.lookup(key));
    d.apply();
    std::string why;
    EXPECT_FALSE(cache.lookup(key, &why));
    EXPECT_NE(why.find(d.reason), std::string::npos) << why;
    // The next store replaces the broken entry.
    std::string err;
    ASSERT_TRUE(cache.store(key, e, &err)) << err;
    auto hit = cache.lookup(key, &why);
    ASSERT_TRUE(hit) << why;
    EXPECT_EQ(hit->ptx, e.ptx);
    EXPECT_EQ(hit->cubin, e.cubin);
  }
}

TEST(JitCache, WriterKilledMidWrite) {
  // What a killed writer leaves: its temporary directory with part of an entry, next to an
  // entry directory holding a corrupted manifest and no data. Neither is a hit or a crash.
  TempDir dir;
  JitCache cache(dir.path());
  CacheKey key = sampleKey();
  fs::path entry = cache.entryDir(key);
  fs::path tmp = entry.parent_path() / (".tmp-" + key.digest() + ".abc123");
  fs::create_directories(tmp);
  writeAll(tmp / "kernel.ptx", "// half a PTX");
  fs::create_directories(entry);
  writeAll(entry / "manifest.json", "{\"format\": 1, \"key\": \"" + key.digest() + "\", \"par");
  std::string why;
  EXPECT_FALSE(cache.lookup(key, &why));
  ASSERT_TRUE(cache.store(key, sampleEntry()));
  ASSERT_TRUE(cache.lookup(key, &why)) << why;
  // A fresh temporary directory (another writer may still be busy) is left alone; one older
  // than an hour is removed by the next store.
  EXPECT_TRUE(fs::exists(tmp));
  fs::last_write_time(tmp, fs::file_time_type::clock::now() - std::chrono::hours(2));
  ASSERT_TRUE(cache.store(key, sampleEntry()));
  EXPECT_FALSE(fs::exists(tmp));
  // Nothing else is left behind in the entry's parent but the entry.
  int others = 0;
  for (const auto& f : fs::directory_iterator(entry.parent_path())) others += f.path() != entry;
  EXPECT_EQ(others, 0);
}

TEST(JitCache, ConcurrentThreadsLeaveOneValidEntry) {
  TempDir dir;
  JitCache cache(dir.path());
  CacheKey key = sampleKey();
  // Writers store different contents (tags A..F) while readers look the key up: every hit
  // must be one writer's complete entry (PTX and cubin with the same tag), never a mix.
  std::atomic<bool> bad{false};
  std::atomic<int> hits{0};
  std::vector<std::thread> threads;
  for (int w = 0; w < 6; ++w)
    threads.emplace_back([&, w] {
      CacheEntry e = sampleEntry(std::string(1, char('A' + w)));
      for (int i = 0; i < 20; ++i)
        if (!cache.store(key, e)) bad = true;
    });
  for (int r = 0; r < 2; ++r)
    threads.emplace_back([&] {
      for (int i = 0; i < 200; ++i) {
        auto hit = cache.lookup(key);
        if (!hit) continue;
        ++hits;
        if (hit->ptx.back() != hit->cubin.back()) bad = true;
      }
    });
  for (auto& t : threads) t.join();
  EXPECT_FALSE(bad);
  auto hit = cache.lookup(key);
  ASSERT_TRUE(hit);
  EXPECT_EQ(hit->ptx.back(), hit->cubin.back());
  int entries = 0;
  for (const auto& f : fs::directory_iterator(fs::path(cache.entryDir(key)).parent_path())) {
    (void)f;
    ++entries;
  }
  EXPECT_EQ(entries, 1);  // no temporary directory left behind
}

TEST(JitCache, ConcurrentProcessesLeaveOneValidEntry) {
  TempDir dir;
  CacheKey key = sampleKey();
  std::vector<pid_t> pids;
  for (int p = 0; p < 3; ++p) {
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      JitCache cache(dir.path());
      CacheEntry e = sampleEntry(std::string(1, char('P' + p)));
      bool ok = true;
      for (int i = 0; i < 30; ++i) ok = cache.store(key, e) && ok;
      _exit(ok ? 0 : 1);
    }
    pids.push_back(pid);
  }
  for (pid_t pid : pids) {
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  JitCache cache(dir.path());
  std::string why;
  auto hit = cache.lookup(key, &why);
  ASSERT_TRUE(hit) << why;
  EXPECT_EQ(hit->ptx.back(), hit->cubin.back());
}

TEST(JitCache, UnwritableRootFailsCleanly) {
  TempDir dir;
  fs::path file = fs::path(dir.path()) / "not-a-directory";
  writeAll(file, "x");
  JitCache cache(file.string());  // the root is a file: nothing can be created under it
  std::string err;
  EXPECT_FALSE(cache.store(sampleKey(), sampleEntry(), &err));
  EXPECT_FALSE(err.empty());
  EXPECT_FALSE(cache.lookup(sampleKey()));
}

TEST(JitCache, DefaultRootFollowsTheEnvironment) {
  auto save = [](const char* n) -> std::optional<std::string> {
    const char* v = std::getenv(n);
    return v ? std::optional<std::string>(v) : std::nullopt;
  };
  auto restore = [](const char* n, const std::optional<std::string>& v) {
    if (v) setenv(n, v->c_str(), 1);
    else unsetenv(n);
  };
  auto tl = save("TL_CACHE_DIR"), xdg = save("XDG_CACHE_HOME"), home = save("HOME");
  setenv("TL_CACHE_DIR", "/tmp/a", 1);
  setenv("XDG_CACHE_HOME", "/tmp/b", 1);
  setenv("HOME", "/tmp/c", 1);
  EXPECT_EQ(JitCache::defaultRoot(), "/tmp/a");
  unsetenv("TL_CACHE_DIR");
  EXPECT_EQ(JitCache::defaultRoot(), "/tmp/b/tilelab");
  setenv("XDG_CACHE_HOME", "", 1);  // empty counts as unset
  EXPECT_EQ(JitCache::defaultRoot(), "/tmp/c/.cache/tilelab");
  restore("TL_CACHE_DIR", tl);
  restore("XDG_CACHE_HOME", xdg);
  restore("HOME", home);
}

TEST(WriteFileAtomic, WritesReplacesAndFailsCleanly) {
  TempDir dir;
  fs::path p = fs::path(dir.path()) / "f.json";
  std::string err;
  ASSERT_TRUE(writeFileAtomic(p.string(), "first", &err)) << err;
  EXPECT_EQ(readAll(p), "first");
  ASSERT_TRUE(writeFileAtomic(p.string(), std::string("sec\0nd", 6), &err)) << err;
  EXPECT_EQ(readAll(p), std::string("sec\0nd", 6));
  EXPECT_FALSE(writeFileAtomic((fs::path(dir.path()) / "no" / "such" / "dir.json").string(), "x", &err));
  EXPECT_NE(err.find("cannot write"), std::string::npos);
  int files = 0;
  for (const auto& f : fs::directory_iterator(dir.path())) {
    (void)f;
    ++files;
  }
  EXPECT_EQ(files, 1);  // no temporary file left
}

TEST(ToolVersion, NamesTheBuild) {
  std::string v = toolVersion();
  EXPECT_FALSE(v.empty());
  EXPECT_NE(v.find(" build "), std::string::npos) << v;  // the executable's size and mtime
  EXPECT_EQ(v, toolVersion());
}
