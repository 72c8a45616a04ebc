// The JIT cache on disk (see JitCache.h for the layout and the atomicity argument). Entries are
// named by the SHA-256 of their key (runtime/Hash.h).
#include "ptx/JitCache.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "ir/Printer.h"
#include "ptx/Results.h"
#include "thread/Layouts.h"
#include "thread/Pipeline.h"

namespace tl {

namespace fs = std::filesystem;

// ---------------------------------------------------------------------------------------------
// Files.

namespace {

// Reads a whole file; nullopt when it cannot be opened or read.
std::optional<std::string> readFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) return std::nullopt;
  return ss.str();
}

// Removes ".tmp-*" files and directories older than an hour in `dir` (left by killed writers).
void removeStaleTemps(const fs::path& dir) {
  std::error_code ec;
  auto now = fs::file_time_type::clock::now();
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    if (e.path().filename().string().rfind(".tmp-", 0) != 0) continue;
    std::error_code ec2;
    auto t = fs::last_write_time(e.path(), ec2);
    if (!ec2 && now - t > std::chrono::hours(1)) fs::remove_all(e.path(), ec2);
  }
}

}  // namespace

bool writeFileAtomic(const std::string& path, std::string_view data, std::string* error) {
  fs::path target(path);
  fs::path dir = target.parent_path().empty() ? fs::path(".") : target.parent_path();
  std::string tmpl = (dir / (".tmp-" + target.filename().string() + ".XXXXXX")).string();
  std::vector<char> name(tmpl.begin(), tmpl.end());
  name.push_back('\0');
  auto fail = [&](const std::string& what) {
    if (error) *error = "cannot write " + path + ": " + what + ": " + std::strerror(errno);
    return false;
  };
  int fd = mkstemp(name.data());
  if (fd < 0) return fail("mkstemp");
  // mkstemp creates the file 0600; a cache or results file is as readable as any other.
  fchmod(fd, 0644);
  size_t done = 0;
  while (done < data.size()) {
    ssize_t w = ::write(fd, data.data() + done, data.size() - done);
    if (w < 0) {
      if (errno == EINTR) continue;
      int saved = errno;
      ::close(fd);
      ::unlink(name.data());
      errno = saved;
      return fail("write");
    }
    done += size_t(w);
  }
  if (::close(fd) != 0) {
    int saved = errno;
    ::unlink(name.data());
    errno = saved;
    return fail("close");
  }
  if (std::rename(name.data(), path.c_str()) != 0) {
    int saved = errno;
    ::unlink(name.data());
    errno = saved;
    return fail("rename");
  }
  return true;
}


// ---------------------------------------------------------------------------------------------
// Keys.

std::string CacheKey::digest() const {
  // name, length, bytes for every part: unambiguous whatever the parts contain.
  std::string s = "tilelab-jit-cache-key v1\n";
  auto add = [&](const char* name, const std::string& value) {
    s += name;
    s += ' ';
    s += std::to_string(value.size());
    s += '\n';
    s += value;
    s += '\n';
  };
  add("source", source);
  add("specialization", specialization);
  add("hints", hints);
  add("num_warps", std::to_string(numWarps));
  add("arch", arch);
  add("options", options);
  add("tool_version", toolVersion);
  return sha256Hex(s);
}

nlohmann::json CacheKey::parts() const {
  return {{"source_sha256", sha256Hex(source)},
          {"source_bytes", source.size()},
          {"specialization", specialization},
          {"hints", hints},
          {"num_warps", numWarps},
          {"arch", arch},
          {"options", options},
          {"tool_version", toolVersion}};
}

// ---------------------------------------------------------------------------------------------
// The cache.

static constexpr int kFormat = 1;  // manifest format; the v1/ directory level matches it

std::string JitCache::defaultRoot() {
  auto env = [](const char* name) -> std::string {
    const char* v = std::getenv(name);
    return v && *v ? v : "";
  };
  if (std::string d = env("TL_CACHE_DIR"); !d.empty()) return d;
  if (std::string d = env("XDG_CACHE_HOME"); !d.empty()) return (fs::path(d) / "tilelab").string();
  if (std::string d = env("HOME"); !d.empty()) return (fs::path(d) / ".cache" / "tilelab").string();
  return ".tilelab-cache";
}

std::string JitCache::entryDir(const CacheKey& key) const {
  std::string k = key.digest();
  return (fs::path(root_) / "v1" / k.substr(0, 2) / k).string();
}

std::optional<CacheEntry> JitCache::lookup(const CacheKey& key, std::string* why) const {
  auto miss = [&](const std::string& reason) -> std::optional<CacheEntry> {
    if (why) *why = reason;
    return std::nullopt;
  };
  std::string digest = key.digest();
  fs::path dir = fs::path(root_) / "v1" / digest.substr(0, 2) / digest;
  auto text = readFile((dir / "manifest.json").string());
  if (!text) return miss("no entry");
  nlohmann::json m = nlohmann::json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (m.is_discarded() || !m.is_object()) return miss("manifest.json is not valid JSON");
  try {
    if (m.value("format", 0) != kFormat) return miss("manifest.json has another format");
    if (m.value("key", "") != digest) return miss("manifest.json names another key");
    if (m.value("parts", nlohmann::json()) != key.parts()) return miss("manifest.json's key parts differ");
    CacheEntry e;
    e.kernelName = m.at("kernel").get<std::string>();
    e.numWarps = m.at("num_warps").get<int>();
    e.sharedBytes = m.at("shared_bytes").get<int64_t>();
    e.ptxas = ptxasFromJson(m.value("ptxas", nlohmann::json::object()));
    const auto& times = m.at("compile_ms");
    e.threadMs = times.at("passes_layouts_lowering").get<double>();
    e.codegenMs = times.at("llvm_codegen").get<double>();
    e.ptxasMs = times.at("ptxas").get<double>();
    // Each file must be there with the size and hash the manifest recorded.
    struct File {
      const char* name;
      const char* prefix;
      std::string* out;
    };
    for (File f : {File{"kernel.ptx", "ptx", &e.ptx}, File{"kernel.cubin", "cubin", &e.cubin}}) {
      uint64_t bytes = m.at(std::string(f.prefix) + "_bytes").get<uint64_t>();
      if (bytes == 0 && std::string(f.prefix) == "cubin") continue;  // ptxas did not run
      auto data = readFile((dir / f.name).string());
      if (!data) return miss(std::string(f.name) + " is missing");
      if (data->size() != bytes) return miss(std::string(f.name) + " has the wrong size (partial write?)");
      if (sha256Hex(*data) != m.at(std::string(f.prefix) + "_sha256").get<std::string>())
        return miss(std::string(f.name) + " does not match its hash");
      *f.out = std::move(*data);
    }
    if (e.kernelName.empty() || e.ptx.empty()) return miss("manifest.json has no kernel");
    return e;
  } catch (const nlohmann::json::exception& ex) {
    return miss(std::string("manifest.json is incomplete (") + ex.what() + ")");
  }
}

namespace {

// Writes a file that nobody else can see yet (inside a private temporary directory).
bool writePlain(const fs::path& path, std::string_view data, std::string* error) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(data.data(), std::streamsize(data.size()));
  out.close();
  if (!out) {
    if (error) *error = "cannot write " + path.string();
    return false;
  }
  return true;
}

// A fresh, empty directory ".tmp-<tag>.XXXXXX" under `parent`, or "" (with *error).
std::string makeTempDir(const fs::path& parent, const std::string& tag, std::string* error) {
  std::string tmpl = (parent / (".tmp-" + tag + ".XXXXXX")).string();
  std::vector<char> name(tmpl.begin(), tmpl.end());
  name.push_back('\0');
  if (!mkdtemp(name.data())) {
    if (error) *error = "cannot create a temporary directory in " + parent.string() + ": " + std::strerror(errno);
    return "";
  }
  return name.data();
}

}  // namespace

bool JitCache::store(const CacheKey& key, const CacheEntry& e, std::string* error) const {
  std::string digest = key.digest();
  fs::path parent = fs::path(root_) / "v1" / digest.substr(0, 2);
  fs::path dir = parent / digest;
  std::error_code ec;
  fs::create_directories(parent, ec);
  if (ec) {
    if (error) *error = "cannot create " + parent.string() + ": " + ec.message();
    return false;
  }
  removeStaleTemps(parent);

  // 1. The whole entry goes into a private temporary directory...
  std::string tmp = makeTempDir(parent, digest, error);
  if (tmp.empty()) return false;
  nlohmann::json m = {
      {"format", kFormat},
      {"key", digest},
      {"parts", key.parts()},
      {"kernel", e.kernelName},
      {"num_warps", e.numWarps},
      {"shared_bytes", e.sharedBytes},
      {"ptx_bytes", e.ptx.size()},
      {"ptx_sha256", sha256Hex(e.ptx)},
      {"cubin_bytes", e.cubin.size()},
      {"cubin_sha256", sha256Hex(e.cubin)},
      {"ptxas", ptxasToJson(e.ptxas)},
      {"compile_ms", {{"passes_layouts_lowering", e.threadMs}, {"llvm_codegen", e.codegenMs}, {"ptxas", e.ptxasMs}}},
      {"created", utcTimestamp()},
  };
  bool ok = writePlain(fs::path(tmp) / "kernel.ptx", e.ptx, error) &&
            (e.cubin.empty() || writePlain(fs::path(tmp) / "kernel.cubin", e.cubin, error)) &&
            writePlain(fs::path(tmp) / "manifest.json", m.dump(2) + "\n", error);
  // 2. ... which one rename(2) turns into the entry. rename() refuses to replace a non-empty
  // directory: then another writer got there first (keep theirs if it is valid) or a broken
  // entry is in the way (move it aside into a temporary directory, delete it, try again).
  for (int attempt = 0; ok && attempt < 3; ++attempt) {
    if (std::rename(tmp.c_str(), dir.c_str()) == 0) return true;
    if (errno != ENOTEMPTY && errno != EEXIST) {
      if (error) *error = "cannot rename " + tmp + " to " + dir.string() + ": " + std::strerror(errno);
      ok = false;
      break;
    }
    if (lookup(key)) break;  // a concurrent writer stored a valid entry: keep it
    std::string trash = makeTempDir(parent, "trash", error);
    if (trash.empty()) {
      ok = false;
      break;
    }
    std::rename(dir.c_str(), (fs::path(trash) / "old").c_str());  // may race with another writer: fine
    fs::remove_all(trash, ec);
  }
  fs::remove_all(tmp, ec);
  if (!ok) return false;
  if (lookup(key)) return true;
  if (error) *error = "could not replace the cache entry " + dir.string();
  return false;
}

// ---------------------------------------------------------------------------------------------
// Compiling through the cache.

// The code generator's options, and with line info the source path `.file` names (the PTX
// text differs with either).
static std::string optionsText(const CompiledKernel& k, const PtxOptions& o) {
  std::string text = describePtxOptions(o);
  if (o.lineInfo)
    text += " file=" + (!o.sourcePath.empty() ? o.sourcePath : k.parsed && k.parsed->file ? k.parsed->file->path() : "");
  return text;
}

CacheKey cacheKeyFor(const CompiledKernel& k, const PtxOptions& opts, bool keepLayouts) {
  CacheKey key;
  // The kernel file's text; for IR that comes from no file (tl-ptx --unfused compiles the
  // unfused kernels, block IR made from the front end's), the printed IR is its source.
  key.source = k.parsed && k.parsed->file ? k.parsed->file->text() : (k.ir ? printFunction(*k.ir) : "");
  key.specialization = k.spec.key();
  key.hints = describeHints(paramHintsFromLaunch(k.launch));  // what compileToThreadIR assumes
  key.numWarps = k.launch.numWarps;
  key.arch = opts.arch;
  key.options = optionsText(k, opts) + (keepLayouts ? " keep-layouts" : "");
  key.toolVersion = toolVersion();
  return key;
}

JitResult jitCompile(const CompiledKernel& k, const JitOptions& opts, const JitCache* cache) {
  JitResult r;
  CacheKey key = cacheKeyFor(k, opts.ptx, opts.keepLayouts);
  if (cache && opts.useCache) {
    auto start = std::chrono::steady_clock::now();
    r.times.cacheKey = key.digest();
    std::optional<CacheEntry> hit = cache->lookup(key, &r.cacheNote);
    r.times.cacheMs = msSince(start);
    if (hit) {
      r.entry = std::move(*hit);
      r.cacheHit = r.times.cacheHit = true;
      r.cacheNote.clear();
      if (!opts.wantLLVM) return r;
    }
  } else {
    r.cacheNote = "cache disabled";
  }

  // A miss (or --print-llvm): the whole compiler.
  auto start = std::chrono::steady_clock::now();
  ThreadCompileOptions tco;
  tco.numWarps = k.launch.numWarps;
  tco.keepLayouts = opts.keepLayouts;
  ThreadCompilation tc = compileToThreadIR(*k.ir, k.launch, tco);
  double threadMs = msSince(start);
  PtxResult pr = compileToPTX(*tc.threadIR, opts.ptx);
  r.llvmIR = std::move(pr.llvmIR);
  if (r.cacheHit) return r;  // only the LLVM IR was wanted; keep the cached PTX and cubin
  r.times.threadMs = threadMs;
  r.times.codegenMs = pr.codegenMs;

  CacheEntry& e = r.entry;
  e.kernelName = pr.kernelName;
  e.numWarps = tc.numWarps;
  e.sharedBytes = tc.threadIR->sharedBytes;
  e.ptx = std::move(pr.ptx);
  start = std::chrono::steady_clock::now();
  e.ptxas = runPtxas(e.ptx, opts.ptx.arch, &e.cubin);
  r.times.ptxasMs = e.ptxas.ran ? msSince(start) : 0;
  if (e.ptxas.ran && !e.ptxas.ok)
    throw std::runtime_error("ptxas rejected the PTX of " + e.kernelName + " (" + opts.ptx.arch + "):\n" +
                             e.ptxas.log);
  e.threadMs = r.times.threadMs;
  e.codegenMs = r.times.codegenMs;
  e.ptxasMs = r.times.ptxasMs;

  if (cache && opts.useCache) {
    auto storeStart = std::chrono::steady_clock::now();
    std::string err;
    if (!cache->store(key, e, &err)) r.cacheNote += (r.cacheNote.empty() ? "" : "; ") + ("not stored: " + err);
    r.times.cacheMs += msSince(storeStart);
  }
  return r;
}

}  // namespace tl
