// Loading GPU descriptions (sim/gpus/<key>.json) into GpuSpec, strictly.
//
// Expects: a JSON object whose keys are exactly GpuSpec's field names. Guarantees: every field
// was present with the right JSON type, no unknown key was given, and the figures are
// consistent with each other (see checkConsistency); otherwise std::runtime_error with
// "<file>: field '<name>': <what is wrong>".
//
// One table (kFields) lists every field once, with a pointer to its member; parsing, the
// missing/unknown checks and gpuToJson all walk that table, so adding a field is one line here
// and one in Gpu.h.
#include "sim/Gpu.h"

#include "ir/FileRead.h"

#include <algorithm>
#include <cctype>
#include <climits>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <optional>
#include <set>
#include <sstream>
#include <stdexcept>
#include <variant>

#include <nlohmann/json.hpp>

namespace tl {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

// A pointer to one GpuSpec member, of any of the types a description uses.
using FieldPtr = std::variant<int GpuSpec::*, double GpuSpec::*, bool GpuSpec::*, std::string GpuSpec::*,
                              std::vector<int> GpuSpec::*, std::vector<std::string> GpuSpec::*>;

struct Field {
  const char* name;  // the JSON key (= the member's name)
  FieldPtr member;
};

#define TL_GPU_FIELD(member) Field{#member, &GpuSpec::member}
// Every field, in the order files list them and gpuToJson writes them.
const Field kFields[] = {
    TL_GPU_FIELD(name),
    TL_GPU_FIELD(key),
    TL_GPU_FIELD(arch),
    TL_GPU_FIELD(computeCapability),
    TL_GPU_FIELD(smCount),
    TL_GPU_FIELD(smClockGHz),
    TL_GPU_FIELD(warpSchedulersPerSM),
    TL_GPU_FIELD(maxThreadsPerSM),
    TL_GPU_FIELD(maxWarpsPerSM),
    TL_GPU_FIELD(maxBlocksPerSM),
    TL_GPU_FIELD(maxThreadsPerBlock),
    TL_GPU_FIELD(registersPerSM),
    TL_GPU_FIELD(maxRegistersPerBlock),
    TL_GPU_FIELD(maxRegistersPerThread),
    TL_GPU_FIELD(registerAllocUnit),
    TL_GPU_FIELD(sharedPerSM),
    TL_GPU_FIELD(maxSharedPerBlock),
    TL_GPU_FIELD(defaultSharedPerBlock),
    TL_GPU_FIELD(sharedAllocUnit),
    TL_GPU_FIELD(reservedSharedPerBlock),
    TL_GPU_FIELD(sharedCarveoutsKB),
    TL_GPU_FIELD(l1BytesPerSM),
    TL_GPU_FIELD(l2Bytes),
    TL_GPU_FIELD(l1LineBytes),
    TL_GPU_FIELD(sectorBytes),
    TL_GPU_FIELD(dramBandwidthGBs),
    TL_GPU_FIELD(dramBandwidthVendorGBs),
    TL_GPU_FIELD(dramBandwidthMeasured),
    TL_GPU_FIELD(dramLatencyCycles),
    TL_GPU_FIELD(l2LatencyCycles),
    TL_GPU_FIELD(l1LatencyCycles),
    TL_GPU_FIELD(sharedLatencyCycles),
    TL_GPU_FIELD(l2BandwidthBytesPerCycle),
    TL_GPU_FIELD(mmaCyclesF16),
    TL_GPU_FIELD(mmaCyclesTf32),
    TL_GPU_FIELD(mmaCyclesFp8),
    TL_GPU_FIELD(mmaLatencyCycles),
    TL_GPU_FIELD(wgmmaCyclesF16),
    TL_GPU_FIELD(wgmmaCyclesTf32),
    TL_GPU_FIELD(wgmmaCyclesFp8),
    TL_GPU_FIELD(blockLaunchIntervalCycles),
    TL_GPU_FIELD(launchOverheadUs),
    TL_GPU_FIELD(sources),
};
#undef TL_GPU_FIELD

[[noreturn]] void fail(const std::string& file, const std::string& field, const std::string& what) {
  throw std::runtime_error(file + ": field '" + field + "': " + what);
}

// The JSON value as a C++ int, or an error naming the field (floats, strings, out of range).
int readInt(const json& v, const std::string& file, const std::string& field) {
  if (!v.is_number_integer()) fail(file, field, "expected an integer, got " + v.dump());
  if (v.is_number_unsigned()) {
    auto u = v.get<uint64_t>();
    if (u > static_cast<uint64_t>(INT_MAX)) fail(file, field, "value " + v.dump() + " is too large");
    return static_cast<int>(u);
  }
  auto s = v.get<int64_t>();
  if (s < INT_MIN || s > INT_MAX) fail(file, field, "value " + v.dump() + " is out of range");
  return static_cast<int>(s);
}

// Reads json value `v` into the member `f` of `spec`, checking the JSON type.
void readField(GpuSpec& spec, const Field& f, const json& v, const std::string& file) {
  const std::string name = f.name;
  std::visit(
      [&](auto member) {
        using M = std::remove_reference_t<decltype(spec.*member)>;
        if constexpr (std::is_same_v<M, int>) {
          spec.*member = readInt(v, file, name);
        } else if constexpr (std::is_same_v<M, double>) {
          if (!v.is_number()) fail(file, name, "expected a number, got " + v.dump());
          spec.*member = v.get<double>();
        } else if constexpr (std::is_same_v<M, bool>) {
          if (!v.is_boolean()) fail(file, name, "expected true or false, got " + v.dump());
          spec.*member = v.get<bool>();
        } else if constexpr (std::is_same_v<M, std::string>) {
          if (!v.is_string()) fail(file, name, "expected a string, got " + v.dump());
          spec.*member = v.get<std::string>();
        } else if constexpr (std::is_same_v<M, std::vector<int>>) {
          if (!v.is_array()) fail(file, name, "expected an array of integers, got " + v.dump());
          std::vector<int> out;
          for (const json& e : v) out.push_back(readInt(e, file, name));
          spec.*member = std::move(out);
        } else {
          static_assert(std::is_same_v<M, std::vector<std::string>>);
          if (!v.is_array()) fail(file, name, "expected an array of strings, got " + v.dump());
          std::vector<std::string> out;
          for (const json& e : v) {
            if (!e.is_string()) fail(file, name, "expected an array of strings, found " + e.dump());
            out.push_back(e.get<std::string>());
          }
          spec.*member = std::move(out);
        }
      },
      f.member);
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

bool isPow2(int v) { return v > 0 && (v & (v - 1)) == 0; }

// Cross-field checks: the figures must describe a GPU the models can work with.
void checkConsistency(const GpuSpec& g, const std::string& file) {
  auto positive = [&](int v, const char* field) {
    if (v <= 0) fail(file, field, "must be positive, got " + std::to_string(v));
  };
  auto positiveD = [&](double v, const char* field) {
    if (!(v > 0)) fail(file, field, "must be positive, got " + std::to_string(v));
  };
  if (g.name.empty()) fail(file, "name", "must not be empty");
  if (g.sources.empty()) fail(file, "sources", "must cite at least one source");
  int major = g.computeCapability / 10;
  if (g.computeCapability < 70 || major > 12)
    fail(file, "computeCapability", "the simulator models sm_70 .. sm_12x, got " + std::to_string(g.computeCapability));
  if (g.arch != "sm_" + std::to_string(g.computeCapability))
    fail(file, "arch", "'" + g.arch + "' does not match computeCapability " + std::to_string(g.computeCapability) +
                           " (expected 'sm_" + std::to_string(g.computeCapability) + "')");
  positive(g.smCount, "smCount");
  positiveD(g.smClockGHz, "smClockGHz");
  positive(g.warpSchedulersPerSM, "warpSchedulersPerSM");
  positive(g.maxThreadsPerSM, "maxThreadsPerSM");
  positive(g.maxWarpsPerSM, "maxWarpsPerSM");
  positive(g.maxBlocksPerSM, "maxBlocksPerSM");
  positive(g.maxThreadsPerBlock, "maxThreadsPerBlock");
  positive(g.registersPerSM, "registersPerSM");
  positive(g.maxRegistersPerBlock, "maxRegistersPerBlock");
  positive(g.maxRegistersPerThread, "maxRegistersPerThread");
  positive(g.sharedPerSM, "sharedPerSM");
  positive(g.maxSharedPerBlock, "maxSharedPerBlock");
  positive(g.defaultSharedPerBlock, "defaultSharedPerBlock");
  positive(g.l1BytesPerSM, "l1BytesPerSM");
  positive(g.l2Bytes, "l2Bytes");
  positiveD(g.dramBandwidthGBs, "dramBandwidthGBs");
  positiveD(g.dramBandwidthVendorGBs, "dramBandwidthVendorGBs");
  positive(g.dramLatencyCycles, "dramLatencyCycles");
  positive(g.l2LatencyCycles, "l2LatencyCycles");
  positive(g.l1LatencyCycles, "l1LatencyCycles");
  positive(g.sharedLatencyCycles, "sharedLatencyCycles");
  positiveD(g.l2BandwidthBytesPerCycle, "l2BandwidthBytesPerCycle");
  positiveD(g.mmaCyclesF16, "mmaCyclesF16");
  positiveD(g.mmaCyclesTf32, "mmaCyclesTf32");
  positive(g.mmaLatencyCycles, "mmaLatencyCycles");
  if (!(g.mmaCyclesFp8 >= 0)) fail(file, "mmaCyclesFp8", "must not be negative (0: no fp8 mma)");
  if (!(g.wgmmaCyclesF16 >= 0)) fail(file, "wgmmaCyclesF16", "must not be negative (0: no wgmma)");
  if (!(g.wgmmaCyclesTf32 >= 0)) fail(file, "wgmmaCyclesTf32", "must not be negative (0: no wgmma)");
  if (!(g.wgmmaCyclesFp8 >= 0)) fail(file, "wgmmaCyclesFp8", "must not be negative (0: no wgmma)");
  if (g.reservedSharedPerBlock < 0) fail(file, "reservedSharedPerBlock", "must not be negative");
  if (g.blockLaunchIntervalCycles < 0) fail(file, "blockLaunchIntervalCycles", "must not be negative");
  if (!(g.launchOverheadUs >= 0)) fail(file, "launchOverheadUs", "must not be negative");

  if (g.maxWarpsPerSM * 32 != g.maxThreadsPerSM)
    fail(file, "maxWarpsPerSM", std::to_string(g.maxWarpsPerSM) + " warps x 32 != maxThreadsPerSM " +
                                    std::to_string(g.maxThreadsPerSM));
  if (g.maxThreadsPerBlock % 32 != 0 || g.maxThreadsPerBlock > g.maxThreadsPerSM)
    fail(file, "maxThreadsPerBlock", "must be a multiple of 32 and at most maxThreadsPerSM");
  if (g.registersPerSM % g.warpSchedulersPerSM != 0)
    fail(file, "registersPerSM", "must split evenly among the warpSchedulersPerSM sub-partitions");
  if (g.maxRegistersPerBlock > g.registersPerSM)
    fail(file, "maxRegistersPerBlock", "must be at most registersPerSM");
  if (g.maxRegistersPerThread > 255)
    fail(file, "maxRegistersPerThread", "ptxas addresses at most 255 registers per thread");
  for (auto [v, field] : {std::pair{g.registerAllocUnit, "registerAllocUnit"}, {g.sharedAllocUnit, "sharedAllocUnit"},
                          {g.l1LineBytes, "l1LineBytes"}, {g.sectorBytes, "sectorBytes"}})
    if (!isPow2(v)) fail(file, field, "must be a positive power of two, got " + std::to_string(v));
  if (g.l1LineBytes % g.sectorBytes != 0) fail(file, "l1LineBytes", "must be a whole number of sectors");
  if (g.maxSharedPerBlock > g.sharedPerSM) fail(file, "maxSharedPerBlock", "must be at most sharedPerSM");
  if (g.defaultSharedPerBlock > g.maxSharedPerBlock)
    fail(file, "defaultSharedPerBlock", "must be at most maxSharedPerBlock");
  if (g.sharedPerSM > g.l1BytesPerSM) fail(file, "sharedPerSM", "must be at most l1BytesPerSM (they share one SRAM)");

  if (g.sharedCarveoutsKB.empty()) fail(file, "sharedCarveoutsKB", "must list at least one carve-out");
  for (size_t i = 0; i < g.sharedCarveoutsKB.size(); ++i) {
    if (g.sharedCarveoutsKB[i] < 0) fail(file, "sharedCarveoutsKB", "sizes must not be negative");
    if (i > 0 && g.sharedCarveoutsKB[i] <= g.sharedCarveoutsKB[i - 1])
      fail(file, "sharedCarveoutsKB", "sizes must be strictly ascending");
  }
  if (g.sharedCarveoutsKB.back() * 1024 != g.sharedPerSM)
    fail(file, "sharedCarveoutsKB", "the largest carve-out (" + std::to_string(g.sharedCarveoutsKB.back()) +
                                        " KB) must equal sharedPerSM (" + std::to_string(g.sharedPerSM) + " bytes)");
}

// Folders searched for <key>.json, in order.
std::vector<fs::path> searchDirs() {
  std::vector<fs::path> dirs;
  if (const char* env = std::getenv("TL_GPU_DIR"); env && *env) dirs.emplace_back(env);
  dirs.emplace_back(fs::path("sim") / "gpus");
#ifdef TL_SOURCE_DIR
  dirs.emplace_back(fs::path(TL_SOURCE_DIR) / "sim" / "gpus");
#endif
  return dirs;
}

bool validKey(const std::string& key) {
  if (key.empty()) return false;
  return std::all_of(key.begin(), key.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
  });
}

std::string joinKeys(const std::vector<std::string>& keys) {
  std::string s;
  for (const auto& k : keys) s += (s.empty() ? "" : ", ") + k;
  return s.empty() ? "(none found)" : s;
}

}  // namespace

GpuSpec parseGpuJson(const std::string& text, const std::string& fileName, const std::string& key) {
  json doc;
  try {
    doc = json::parse(text);
  } catch (const json::parse_error& e) {
    throw std::runtime_error(fileName + ": invalid JSON: " + e.what());
  }
  if (!doc.is_object()) throw std::runtime_error(fileName + ": expected a JSON object of GPU fields");

  std::set<std::string> known;
  for (const Field& f : kFields) known.insert(f.name);
  for (auto it = doc.begin(); it != doc.end(); ++it) {
    if (known.count(it.key())) continue;
    std::string hint;
    for (const Field& f : kFields)
      if (lower(f.name) == lower(it.key())) hint = " (did you mean '" + std::string(f.name) + "'?)";
    throw std::runtime_error(fileName + ": unknown field '" + it.key() + "'" + hint);
  }

  GpuSpec spec;
  for (const Field& f : kFields) {
    auto it = doc.find(f.name);
    if (it == doc.end()) fail(fileName, f.name, "missing (every GpuSpec field must be given)");
    readField(spec, f, *it, fileName);
  }
  if (spec.key != key) fail(fileName, "key", "'" + spec.key + "' does not match the file name ('" + key + "')");
  checkConsistency(spec, fileName);
  return spec;
}

GpuSpec loadGpuFile(const std::string& path) {
  std::string text;
  try {
    text = readFileBounded(path, FileKind::Json);
  } catch (const FileReadError& e) {
    throw std::runtime_error(path + ": cannot read the GPU description: " + e.reason);
  }
  GpuSpec spec = parseGpuJson(text, path, fs::path(path).stem().string());
  spec.file = path;
  return spec;
}

GpuSpec loadGpu(const std::string& key) {
  if (!validKey(key))
    throw std::runtime_error("GPU '" + key + "': a GPU key is lower-case letters, digits and '_' (known: " +
                             joinKeys(listGpus()) + ")");
  for (const fs::path& dir : searchDirs()) {
    fs::path p = dir / (key + ".json");
    std::error_code ec;
    if (fs::is_regular_file(p, ec)) return loadGpuFile(p.string());
  }
  throw std::runtime_error("GPU '" + key + "': no sim/gpus/" + key + ".json (known: " + joinKeys(listGpus()) + ")");
}

std::vector<std::string> listGpus() {
  std::set<std::string> keys;
  for (const fs::path& dir : searchDirs()) {
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) continue;
    for (const auto& entry : fs::directory_iterator(dir, ec)) {
      if (entry.path().extension() == ".json" && validKey(entry.path().stem().string()))
        keys.insert(entry.path().stem().string());
    }
  }
  return {keys.begin(), keys.end()};
}

namespace {
// The target GPU (Gpu.h): set by the tool, or loaded on first use.
std::mutex targetMutex;
std::optional<GpuSpec> target;
}  // namespace

GpuSpec targetGpu() {
  std::lock_guard<std::mutex> lock(targetMutex);
  if (!target) target = loadGpu(kDefaultTargetGpu);
  return *target;
}

void setTargetGpu(const GpuSpec& gpu) {
  std::lock_guard<std::mutex> lock(targetMutex);
  target = gpu;
}

void resetTargetGpu() {
  std::lock_guard<std::mutex> lock(targetMutex);
  target.reset();
}

std::string gpuToJson(const GpuSpec& spec, int indent) {
  nlohmann::ordered_json out;
  for (const Field& f : kFields) std::visit([&](auto member) { out[f.name] = spec.*member; }, f.member);
  return out.dump(indent);
}

}  // namespace tl
