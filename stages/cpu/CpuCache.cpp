// tl-cpu's JIT cache (contract in CpuCache.h).
#include "cpu/CpuCache.h"

#include <unistd.h>

#include <filesystem>
#include <unordered_map>
#include <nlohmann/json.hpp>

#include "cpu/CpuJit.h"
#include "ir/FileRead.h"
#include "ir/Printer.h"
#include "runtime/AtomicFile.h"
#include "runtime/Hash.h"

namespace tl::cpu {

namespace fs = std::filesystem;

CpuCache::CpuCache(std::string root) : root_(std::move(root)) {}

std::string CpuCache::keyOf(const Function& fn, const CpuTarget& target, const CodegenOptions& cg, const JitOptions& jo) {
  std::string text = "tl-cpu cache key v1\n" + toolVersion() + "\ncpu " + target.cpu + "\nfeatures " + target.features +
                     "\nisa " + target.isa + "\nlibmvec " + std::to_string(target.vectorMath) + "\ntrack_stores " +
                     std::to_string(cg.trackStores) + "\nopt " + std::to_string(jo.optLevel) + "\n" + printFunction(fn);
  return sha256Hex(text);
}

std::string CpuCache::entryDir(const std::string& key) const {
  return (fs::path(root_) / "cpu-v1" / key.substr(0, 2) / key).string();
}

std::optional<CachedKernel> CpuCache::lookup(const std::string& key, std::string* missReason) const {
  auto miss = [&](const std::string& why) -> std::optional<CachedKernel> {
    if (missReason) *missReason = why;
    return std::nullopt;
  };
  const fs::path dir = entryDir(key);
  ReadFailure failure;
  ReadOptions ro;
  ro.noFollow = true;
  auto manifestText = tryReadFileBounded((dir / "manifest.json").string(), FileKind::CacheManifest, &failure, ro);
  if (!manifestText) return miss(failure.cause == ReadFailure::CannotOpen ? "no entry" : "manifest: " + failure.reason);
  nlohmann::json m = nlohmann::json::parse(*manifestText, nullptr, false);
  if (!m.is_object() || !m.contains("key") || !m["key"].is_string() || m["key"].get<std::string>() != key || !m.contains("object_bytes") || !m["object_bytes"].is_number_unsigned() ||
      !m.contains("object_sha256") || !m["object_sha256"].is_string() || !m.contains("scratch_bytes") ||
      !m["scratch_bytes"].is_number_integer() || !m.contains("ops") || !m["ops"].is_array() || !m.contains("prints") ||
      !m["prints"].is_boolean())
    return miss("manifest: a field is missing or of the wrong type");
  CachedKernel e;
  ro.maxBytes = m["object_bytes"].get<uint64_t>();
  auto object = tryReadFileBounded((dir / "kernel.o").string(), FileKind::CachePayload, &failure, ro);
  if (!object) return miss("kernel.o: " + failure.reason);
  if (object->size() != ro.maxBytes || sha256Hex(*object) != m["object_sha256"].get<std::string>())
    return miss("kernel.o does not match its manifest");
  e.object = std::move(*object);
  e.scratchBytes = m["scratch_bytes"].get<int64_t>();
  e.prints = m["prints"].get<bool>();
  for (const auto& o : m["ops"]) {
    if (!o.is_number_integer() || o.get<int64_t>() < 0) return miss("manifest: a bad op index");
    e.opOrdinals.push_back(o.get<int64_t>());
  }
  if (e.scratchBytes <= 0 || e.scratchBytes > kMaxScratchBytes) return miss("manifest: scratch_bytes out of range");
  return e;
}

bool CpuCache::store(const std::string& key, const CachedKernel& entry, std::string* error) const {
  const fs::path dir = entryDir(key);
  std::error_code ec;
  fs::create_directories(dir.parent_path(), ec);
  if (ec) {
    if (error) *error = "cannot create " + dir.parent_path().string() + ": " + ec.message();
    return false;
  }
  std::string tmpl = (dir.parent_path() / (".tmp-" + key + "+" + std::to_string(getpid()) + ".XXXXXX")).string();
  std::vector<char> name(tmpl.begin(), tmpl.end());
  name.push_back('\0');
  if (!mkdtemp(name.data())) {
    if (error) *error = "cannot create a temporary directory in " + dir.parent_path().string();
    return false;
  }
  const fs::path tmp(name.data());
  nlohmann::json m = {{"key", key},
                      {"object_bytes", entry.object.size()},
                      {"object_sha256", sha256Hex(entry.object)},
                      {"scratch_bytes", entry.scratchBytes},
                      {"ops", entry.opOrdinals},
                      {"prints", entry.prints}};
  bool ok = writeFileAtomic((tmp / "kernel.o").string(), entry.object, error) &&
            writeFileAtomic((tmp / "manifest.json").string(), m.dump(2) + "\n", error);
  if (ok) {
    fs::remove_all(dir, ec);  // a broken entry (lookup missed it) is replaced
    fs::rename(tmp, dir, ec);
    if (ec && !fs::exists(dir / "manifest.json")) {
      if (error) *error = "cannot move the entry into " + dir.string() + ": " + ec.message();
      ok = false;
    }
  }
  fs::remove_all(tmp, ec);  // after a rename it is gone; after a failure, the partial entry
  return ok;
}

std::vector<int64_t> opOrdinals(const Function& fn, const std::vector<const Op*>& ops) {
  std::unordered_map<const Op*, int64_t> index;
  int64_t n = 0;
  walk(fn.body, [&](Op& op) { index[&op] = n++; });
  std::vector<int64_t> out;
  for (const Op* op : ops) out.push_back(index.at(op));
  return out;
}

std::vector<const Op*> opsAt(const Function& fn, const std::vector<int64_t>& ordinals) {
  std::vector<const Op*> all;
  walk(fn.body, [&](Op& op) { all.push_back(&op); });
  std::vector<const Op*> out;
  for (int64_t k : ordinals) {
    if (k >= static_cast<int64_t>(all.size())) throw std::runtime_error("tl-cpu cache: an op index past the function's ops");
    out.push_back(all[static_cast<size_t>(k)]);
  }
  return out;
}

}  // namespace tl::cpu
