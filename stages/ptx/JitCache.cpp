// The JIT cache on disk (see JitCache.h for the layout and the atomicity argument). Entries are
// named by the SHA-256 of their key (runtime/Hash.h).
#include "ptx/JitCache.h"
#include "ptx/DynamicShared.h"
#include "sim/Gpu.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <vector>

#include "ir/FileRead.h"
#include "ir/Printer.h"
#include "ptx/Results.h"
#include "thread/Layouts.h"
#include "thread/Pipeline.h"

namespace tl {

namespace fs = std::filesystem;

// ---------------------------------------------------------------------------------------------
// Files.

namespace {

// How long a temporary directory whose writer cannot be identified (another host, an old name,
// a PID that a new process took over) is left alone: no store takes anywhere near this long.
constexpr auto kTempMaxAge = std::chrono::hours(1);

// This host's name as it may appear in a temporary name: [A-Za-z0-9.-], at most 64 characters.
std::string hostTag() {
  char buf[256] = {};
  if (gethostname(buf, sizeof(buf) - 1) != 0) return "unknown";
  std::string h;
  for (const char* c = buf; *c && h.size() < 64; ++c)
    if (std::isalnum(static_cast<unsigned char>(*c)) || *c == '.' || *c == '-') h += *c;
  return h.empty() ? "unknown" : h;
}

// A temporary name's owner: ".tmp-<tag>+<pid>@<host>.XXXXXX" (what makeTempDir writes). False
// for any other name (a temporary of an older build, or of writeFileAtomic).
bool tempOwner(const std::string& name, pid_t* pid, std::string* host) {
  size_t plus = name.find('+'), at = name.find('@', plus == std::string::npos ? 0 : plus), dot = name.rfind('.');
  if (plus == std::string::npos || at == std::string::npos || dot == std::string::npos || dot < at) return false;
  std::string digits = name.substr(plus + 1, at - plus - 1);
  if (digits.empty() || digits.size() > 9 || digits.find_first_not_of("0123456789") != std::string::npos) return false;
  *pid = pid_t(std::stol(digits));
  *host = name.substr(at + 1, dot - at - 1);
  return *pid > 0;
}

// Whether the writer of a temporary is gone: it names this host and a PID no process has.
bool writerIsGone(const std::string& name) {
  pid_t pid = 0;
  std::string host;
  if (!tempOwner(name, &pid, &host) || host != hostTag()) return false;
  return ::kill(pid, 0) != 0 && errno == ESRCH;
}

// Removes the ".tmp-*" directories in `dir` left by writers killed mid-store: those whose writer
// process is gone at once, any other one older than kTempMaxAge. Never follows a symbolic link
// (fs::remove_all removes the link itself).
void removeStaleTemps(const fs::path& dir) {
  std::error_code ec;
  auto now = fs::file_time_type::clock::now();
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    std::string name = e.path().filename().string();
    if (name.rfind(".tmp-", 0) != 0) continue;
    std::error_code ec2;
    bool stale = writerIsGone(name);
    if (!stale) {
      auto t = fs::symlink_status(e.path(), ec2).type() == fs::file_type::symlink
                   ? fs::file_time_type::min()  // a link is no writer's: no age to wait for
                   : fs::last_write_time(e.path(), ec2);
      stale = !ec2 && now - t > kTempMaxAge;
    }
    if (stale) fs::remove_all(e.path(), ec2);
  }
}

// Every shard's stale temporaries (a writer killed while storing one key leaves its temporary in
// that key's shard, which a store of another key does not visit); once per JitCache.
void removeStaleTempsEverywhere(const fs::path& v1) {
  std::error_code ec;
  for (const auto& shard : fs::directory_iterator(v1, ec))
    if (shard.symlink_status(ec).type() == fs::file_type::directory) removeStaleTemps(shard.path());
}

// What is at `p` without following a link: "a regular file", "a symbolic link", ...; "" for a
// real directory, "none" when nothing is there.
std::string whatIsAt(const fs::path& p) {
  std::error_code ec;
  switch (fs::symlink_status(p, ec).type()) {
    case fs::file_type::not_found: return "none";
    case fs::file_type::directory: return "";
    case fs::file_type::symlink: return "a symbolic link";
    case fs::file_type::regular: return "a regular file";
    case fs::file_type::fifo: return "a FIFO";
    case fs::file_type::socket: return "a socket";
    case fs::file_type::character: return "a character device";
    case fs::file_type::block: return "a block device";
    default: return ec ? "unreadable (" + ec.message() + ")" : "not a directory";
  }
}

// Makes `p` a real directory: creates it, or first removes what blocks it (a file, a symbolic
// link, a FIFO: nothing tilelab writes there). Returns false with *error set when it cannot.
bool ensureDirectory(const fs::path& p, std::string* error) {
  std::error_code ec;
  for (int attempt = 0; attempt < 3; ++attempt) {
    std::string what = whatIsAt(p);
    if (what.empty()) return true;
    if (what != "none") fs::remove(p, ec);  // a link is removed, never what it points to
    ec.clear();
    fs::create_directory(p, ec);
    if (whatIsAt(p).empty()) return true;  // made, by this writer or a concurrent one
  }
  if (error) *error = "cannot create " + p.string() + ": " + (ec ? ec.message() : whatIsAt(p) + " is in the way");
  return false;
}

}  // namespace



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

std::string JitCache::defaultRoot() { return defaultCacheRoot(); }

std::string JitCache::entryDir(const CacheKey& key) const {
  std::string k = key.digest();
  return (fs::path(root_) / "v1" / k.substr(0, 2) / k).string();
}

// ---------------------------------------------------------------------------------------------
// What an entry must be. Only the key (hashed into the entry's name and compared part by part)
// and the files' SHA-256 are taken on trust; every other field is checked against them or
// against its range, so a manifest edited by hand, by a bug or by another build is a miss, never
// a wrong "hit".

namespace {

constexpr double kMaxCompileMs = 1e9;                  // a recorded compile time: ~11 days
constexpr int64_t kMaxPtxasBytes = int64_t(1) << 24;   // ptxas' shared, spill and stack bytes
constexpr int64_t kMaxRegisters = 255;                 // per thread, on every architecture
constexpr size_t kMaxShortText = 4096;                 // ptxas' path, why it was skipped, a date

// What the PTX itself says: its .entry names, the bytes of its static `.shared` arrays
// (`.shared .align 16 .b8 tl_shared[4096];`) and whether it declares dynamic shared memory
// (`.extern .shared .align 16 .b8 tl_shared[];`), CodegenShared.cpp.
struct PtxFacts {
  std::vector<std::string> entries;
  int64_t staticShared = 0;
  bool dynamicShared = false;
};

PtxFacts ptxFacts(std::string_view ptx) {
  PtxFacts f;
  for (size_t pos = 0; pos < ptx.size();) {
    size_t eol = std::min(ptx.find('\n', pos), ptx.size());
    std::string_view line = ptx.substr(pos, eol - pos);
    pos = eol + 1;
    line.remove_prefix(std::min(line.find_first_not_of(" \t"), line.size()));
    for (std::string_view lead : {".visible .entry ", ".weak .entry ", ".entry "}) {
      if (line.substr(0, lead.size()) != lead) continue;
      std::string_view name = line.substr(lead.size());
      f.entries.emplace_back(name.substr(0, name.find_first_of("( \t\r")));
      break;
    }
    if (line.substr(0, 16) == ".extern .shared ") f.dynamicShared = true;
    if (line.substr(0, 8) == ".shared ") {
      size_t l = line.find('['), r = line.find(']', l == std::string_view::npos ? 0 : l);
      if (l == std::string_view::npos || r == std::string_view::npos) continue;
      std::string_view n = line.substr(l + 1, r - l - 1);
      if (!n.empty() && n.size() <= 12 && n.find_first_not_of("0123456789") == std::string_view::npos)
        f.staticShared = std::min<int64_t>(f.staticShared + std::stoll(std::string(n)), int64_t(1) << 50);  // no overflow
    }
  }
  return f;
}

// Why `e` cannot be the entry of `key` ("" when it can): what store() refuses to write and
// lookup() refuses to return.
std::string checkEntry(const CacheKey& key, const CacheEntry& e) {
  const uint64_t limit = fileLimit(FileKind::CachePayload).maxBytes;
  auto num = [](auto v) { return std::to_string(v); };
  if (e.ptx.empty()) return "kernel.ptx is empty";
  if (e.ptx.size() > limit || e.cubin.size() > limit) return "a file is over the " + formatByteLimit(limit) + " limit";
  if (!e.cubin.empty() && e.cubin.compare(0, 4, "\x7f" "ELF") != 0) return "kernel.cubin is not an ELF file";
  PtxFacts f = ptxFacts(e.ptx);
  if (f.entries.size() != 1) return "kernel.ptx declares " + num(f.entries.size()) + " .entry kernels, not 1";
  if (e.kernelName != f.entries[0])
    return "the kernel is named '" + e.kernelName + "' but kernel.ptx's .entry is '" + f.entries[0] + "'";
  if (e.numWarps != key.numWarps) return "num_warps is " + num(e.numWarps) + ", not the key's " + num(key.numWarps);
  // Up to 48 KB the PTX declares exactly shared_bytes statically; above, none statically and a
  // dynamic array (ptx/DynamicShared.h).
  if (ptx::usesDynamicShared(e.sharedBytes) != f.dynamicShared)
    return "shared_bytes is " + num(e.sharedBytes) + " but kernel.ptx " +
           (f.dynamicShared ? "declares" : "does not declare") + " dynamic (.extern .shared) memory";
  if (ptx::staticSharedBytes(e.sharedBytes) != f.staticShared)
    return "shared_bytes is " + num(e.sharedBytes) + " but kernel.ptx declares " + num(f.staticShared) +
           " bytes of static shared memory" +
           (ptx::usesDynamicShared(e.sharedBytes) ? " (expected 0: above 48 KB it is dynamic)" : "");
  const PtxasInfo& p = e.ptxas;
  if (p.ran != !e.cubin.empty()) return p.ran ? "ptxas ran but there is no cubin" : "there is a cubin but ptxas did not run";
  if (p.ran && !p.ok) return "ptxas rejected this PTX";
  if (p.registers < 0 || p.registers > kMaxRegisters) return "ptxas' registers (" + num(p.registers) + ") are out of range";
  for (int64_t v : {int64_t(p.sharedBytes), int64_t(p.spillStoreBytes), int64_t(p.spillLoadBytes), int64_t(p.stackFrameBytes)})
    if (v < 0 || v > kMaxPtxasBytes) return "a ptxas byte count (" + num(v) + ") is out of range";
  for (double ms : {e.threadMs, e.codegenMs, e.ptxasMs})
    if (!std::isfinite(ms) || ms < 0 || ms > kMaxCompileMs) return "a compile time (" + num(ms) + " ms) is out of range";
  return "";
}

// A manifest field that is missing, of the wrong type, or out of range.
struct BadField {
  std::string what;
};

// Reads the fields of one JSON object, each with its type and range; noOthers() then rejects
// any field that was not read.
class FieldReader {
 public:
  FieldReader(const nlohmann::json& object, std::string prefix) : j_(object), prefix_(std::move(prefix)) {
    if (!j_.is_object()) throw BadField{prefix_.substr(0, prefix_.size() - 1) + " is not an object"};
  }
  const nlohmann::json& field(const std::string& name) {
    seen_.insert(name);
    auto it = j_.find(name);
    if (it == j_.end()) throw BadField{prefix_ + name + " is missing"};
    return *it;
  }
  int64_t integer(const std::string& name, int64_t lo, int64_t hi) {
    const auto& v = field(name);
    if (!v.is_number_integer()) throw BadField{prefix_ + name + " is not an integer"};
    if (v.is_number_unsigned() ? v.get<uint64_t>() > uint64_t(hi) : (v.get<int64_t>() < lo || v.get<int64_t>() > hi))
      throw BadField{prefix_ + name + " is " + v.dump() + ", outside [" + std::to_string(lo) + ", " + std::to_string(hi) + "]"};
    return v.get<int64_t>();
  }
  double number(const std::string& name, double lo, double hi) {
    const auto& v = field(name);
    if (!v.is_number()) throw BadField{prefix_ + name + " is not a number"};
    double d = v.get<double>();
    if (!(d >= lo && d <= hi)) throw BadField{prefix_ + name + " is " + v.dump() + ", out of range"};
    return d;
  }
  bool boolean(const std::string& name) {
    const auto& v = field(name);
    if (!v.is_boolean()) throw BadField{prefix_ + name + " is not true or false"};
    return v.get<bool>();
  }
  std::string text(const std::string& name, size_t maxLength) {
    const auto& v = field(name);
    if (!v.is_string()) throw BadField{prefix_ + name + " is not a string"};
    if (v.get_ref<const std::string&>().size() > maxLength) throw BadField{prefix_ + name + " is too long"};
    return v.get<std::string>();
  }
  std::string sha256(const std::string& name) {
    std::string h = text(name, 64);
    if (h.size() != 64 || h.find_first_not_of("0123456789abcdef") != std::string::npos)
      throw BadField{prefix_ + name + " is not a SHA-256 in hex"};
    return h;
  }
  void noOthers() const {
    for (const auto& [k, v] : j_.items())
      if (!seen_.count(k)) throw BadField{"unknown field '" + prefix_ + k + "'"};
  }

 private:
  const nlohmann::json& j_;
  std::string prefix_;  // "ptxas." for a nested object
  std::set<std::string> seen_;
};

// Reads one payload file of the entry: exactly `bytes` bytes (never more than that plus one)
// with the recorded hash. nullopt with *why when it is not.
std::optional<std::string> readPayload(const fs::path& file, uint64_t bytes, const std::string& sha, std::string* why) {
  const std::string name = file.filename().string();
  ReadFailure failure;
  ReadOptions opts;
  opts.noFollow = true;
  opts.maxBytes = bytes;
  auto data = tryReadFileBounded(file.string(), FileKind::CachePayload, &failure, opts);
  if (!data) {
    if (failure.cause == ReadFailure::CannotOpen && failure.error == ENOENT) *why = name + " is missing";
    else if (failure.cause == ReadFailure::TooLarge) *why = name + " has the wrong size (longer than its manifest says)";
    else *why = name + ": " + failure.reason;
    return std::nullopt;
  }
  if (data->size() != bytes) {
    *why = name + " has the wrong size (partial write?)";
    return std::nullopt;
  }
  if (sha256Hex(*data) != sha) {
    *why = name + " does not match its hash";
    return std::nullopt;
  }
  return data;
}

}  // namespace

std::optional<CacheEntry> JitCache::lookup(const CacheKey& key, std::string* why) const {
  auto miss = [&](const std::string& reason) -> std::optional<CacheEntry> {
    if (why) *why = reason;
    return std::nullopt;
  };
  std::string digest = key.digest();
  fs::path dir = fs::path(root_) / "v1" / digest.substr(0, 2) / digest;
  std::string what = whatIsAt(dir);
  if (what == "none") return miss("no entry");
  if (!what.empty()) return miss("the entry path is " + what + ", not a directory");

  ReadFailure failure;
  ReadOptions noFollow;
  noFollow.noFollow = true;
  auto text = tryReadFileBounded((dir / "manifest.json").string(), FileKind::CacheManifest, &failure, noFollow);
  if (!text) {
    if (failure.cause == ReadFailure::CannotOpen && failure.error == ENOENT) return miss("manifest.json is missing");
    return miss("manifest.json: " + failure.reason);
  }
  nlohmann::json m = nlohmann::json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (m.is_discarded()) return miss("manifest.json is not valid JSON");
  if (!m.is_object()) return miss("manifest.json is not a JSON object");

  CacheEntry e;
  uint64_t ptxBytes = 0, cubinBytes = 0;
  std::string ptxSha, cubinSha;
  try {
    FieldReader r(m, "");
    const auto& format = r.field("format");
    if (!format.is_number_integer() || format != kFormat) return miss("manifest.json has another format");
    if (r.text("key", 64) != digest) return miss("manifest.json names another key");
    if (r.field("parts") != key.parts()) return miss("manifest.json's key parts differ");
    const int64_t payloadLimit = int64_t(fileLimit(FileKind::CachePayload).maxBytes);
    e.kernelName = r.text("kernel", kMaxShortText);
    e.numWarps = int(r.integer("num_warps", 1, 1024));
    e.sharedBytes = r.integer("shared_bytes", 0, kMaxPtxasBytes);
    ptxBytes = uint64_t(r.integer("ptx_bytes", 1, payloadLimit));
    ptxSha = r.sha256("ptx_sha256");
    cubinBytes = uint64_t(r.integer("cubin_bytes", 0, payloadLimit));
    cubinSha = r.sha256("cubin_sha256");
    FieldReader p(r.field("ptxas"), "ptxas.");
    e.ptxas.ran = p.boolean("ran");
    e.ptxas.ok = p.boolean("ok");
    e.ptxas.skipped = p.text("skipped", kMaxShortText);
    e.ptxas.assembler = p.text("assembler", kMaxShortText);
    e.ptxas.assemblerNote = p.text("assembler_note", kMaxShortText);
    e.ptxas.registers = int(p.integer("registers", 0, kMaxRegisters));
    e.ptxas.sharedBytes = int(p.integer("shared_bytes", 0, kMaxPtxasBytes));
    e.ptxas.spillStoreBytes = int(p.integer("spill_store_bytes", 0, kMaxPtxasBytes));
    e.ptxas.spillLoadBytes = int(p.integer("spill_load_bytes", 0, kMaxPtxasBytes));
    e.ptxas.stackFrameBytes = int(p.integer("stack_frame_bytes", 0, kMaxPtxasBytes));
    e.ptxas.log = p.text("log", fileLimit(FileKind::CacheManifest).maxBytes);
    p.noOthers();
    FieldReader t(r.field("compile_ms"), "compile_ms.");
    e.threadMs = t.number("passes_layouts_lowering", 0, kMaxCompileMs);
    e.codegenMs = t.number("llvm_codegen", 0, kMaxCompileMs);
    e.ptxasMs = t.number("ptxas", 0, kMaxCompileMs);
    t.noOthers();
    r.text("created", kMaxShortText);
    r.noOthers();
  } catch (const BadField& bad) {
    return miss("manifest.json: " + bad.what);
  }

  // Each file must be there with the size and hash the manifest recorded.
  std::string reason;
  auto ptx = readPayload(dir / "kernel.ptx", ptxBytes, ptxSha, &reason);
  if (!ptx) return miss(reason);
  e.ptx = std::move(*ptx);
  if (cubinBytes > 0) {  // 0: ptxas did not run
    auto cubin = readPayload(dir / "kernel.cubin", cubinBytes, cubinSha, &reason);
    if (!cubin) return miss(reason);
    e.cubin = std::move(*cubin);
  }
  if (std::string bad = checkEntry(key, e); !bad.empty()) return miss("inconsistent entry: " + bad);
  return e;
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

// A fresh, empty directory ".tmp-<tag>+<pid>@<host>.XXXXXX" under `parent`, or "" (with
// *error). The PID and host let removeStaleTemps() tell a killed writer's leftovers from a live
// writer's work.
std::string makeTempDir(const fs::path& parent, const std::string& tag, std::string* error) {
  std::string tmpl =
      (parent / (".tmp-" + tag + "+" + std::to_string(getpid()) + "@" + hostTag() + ".XXXXXX")).string();
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
  if (std::string bad = checkEntry(key, e); !bad.empty()) {
    if (error) *error = "not a valid entry: " + bad;
    return false;
  }
  std::string digest = key.digest();
  fs::path v1 = fs::path(root_) / "v1";
  fs::path parent = v1 / digest.substr(0, 2);
  fs::path dir = parent / digest;
  std::error_code ec;
  fs::create_directories(root_, ec);
  if (ec) {
    if (error) *error = "cannot create " + root_ + ": " + ec.message();
    return false;
  }
  // v1/ and v1/<xx>/ are the cache's own: anything but a directory there (a file, a symbolic
  // link) is removed.
  if (!ensureDirectory(v1, error) || !ensureDirectory(parent, error)) return false;
  removeStaleTemps(parent);
  std::call_once(*sweepOnce_, [&] { removeStaleTempsEverywhere(v1); });

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
  const std::string manifest = m.dump(2) + "\n";
  const uint64_t manifestLimit = fileLimit(FileKind::CacheManifest).maxBytes;
  if (manifest.size() > manifestLimit) {  // lookup() would never read it back
    if (error) *error = "the manifest would be " + std::to_string(manifest.size()) + " bytes, over the " +
                        formatByteLimit(manifestLimit) + " limit (a long ptxas log?)";
    fs::remove_all(tmp, ec);
    return false;
  }
  bool ok = writePlain(fs::path(tmp) / "kernel.ptx", e.ptx, error) &&
            (e.cubin.empty() || writePlain(fs::path(tmp) / "kernel.cubin", e.cubin, error)) &&
            writePlain(fs::path(tmp) / "manifest.json", manifest, error);
  // 2. ... which one rename(2) turns into the entry. rename() refuses to replace a non-empty
  // directory (ENOTEMPTY, EEXIST) and anything that is not a directory (ENOTDIR): then another
  // writer got there first (keep theirs if it is valid), or a broken entry or a file or link is
  // in the way. A file or link is removed (the cache never writes one there); a directory is
  // moved aside into a temporary directory and deleted.
  for (int attempt = 0; ok && attempt < 3; ++attempt) {
    if (std::rename(tmp.c_str(), dir.c_str()) == 0) return true;
    if (errno != ENOTEMPTY && errno != EEXIST && errno != ENOTDIR) {
      if (error) *error = "cannot rename " + tmp + " to " + dir.string() + ": " + std::strerror(errno);
      ok = false;
      break;
    }
    std::string what = whatIsAt(dir);
    if (!what.empty() && what != "none") {
      fs::remove(dir, ec);  // a link is removed, never what it points to
      continue;
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

CacheKey cacheKeyFor(const CompiledKernel& k, const PtxOptions& opts, bool keepLayouts, Assembler assembler) {
  CacheKey key;
  // The kernel file's text; for IR that comes from no file (tl-ptx --unfused compiles the
  // unfused kernels, block IR made from the front end's), the printed IR is its source.
  key.source = k.parsed && k.parsed->file ? k.parsed->file->text() : (k.ir ? printFunction(*k.ir) : "");
  key.specialization = k.spec.key();
  key.hints = describeHints(paramHintsFromLaunch(k.launch));  // what compileToThreadIR assumes
  key.numWarps = k.launch.numWarps;
  key.arch = opts.arch;
  key.options = optionsText(k, opts) + (keepLayouts ? " keep-layouts" : "");
  // The thread stage checks shared memory against the target GPU (sim/Gpu.h): a kernel compiled
  // under one limit is not a hit under a smaller one, which must report it at its op.
  key.options += " shared-limit=" + std::to_string(targetGpu().maxSharedPerBlock);
  // nvJitLink compiles PTX as relocatable code and writes another cubin than the ptxas process
  // (more registers, NvJitLink.h): an entry holds the cubin of the assembler that was asked for.
  // Auto is its own key, not resolved to what would run (that would cost loading nvJitLink on a
  // hit); the manifest records the assembler that ran, and tl-ptx prints it.
  key.options += std::string(" assembler=") + assemblerName(assembler);
  key.toolVersion = toolVersion();
  return key;
}

// "ptxas rejected the PTX of k (sm_90):\n<log>", naming nvJitLink when it was the one.
static std::string rejectionMessage(const PtxasInfo& p, const std::string& kernel, const std::string& arch) {
  const bool inProcess = p.assembler.rfind("nvJitLink", 0) == 0;
  return (inProcess ? "ptxas (in " + p.assembler + ")" : std::string("ptxas")) + " rejected the PTX of " + kernel +
         " (" + arch + "):\n" + p.log;
}

JitResult jitCompile(const CompiledKernel& k, const JitOptions& opts, const JitCache* cache) {
  JitResult r;
  CacheKey key = cacheKeyFor(k, opts.ptx, opts.keepLayouts, opts.assembler);
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
  tco.wgmma = opts.ptx.arch == "sm_90a";  // the arch is part of the key
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
  e.ptxas = assemblePtx(e.ptx, opts.ptx.arch, &e.cubin, opts.assembler);
  r.times.ptxasMs = e.ptxas.ran ? msSince(start) : 0;
  if (e.ptxas.ran && !e.ptxas.ok)
    throw std::runtime_error(rejectionMessage(e.ptxas, e.kernelName, opts.ptx.arch));
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
