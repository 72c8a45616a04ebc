// tl-cpu's results JSON (contract in CpuResults.h).
#include "cpu/CpuResults.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "cpu/CpuJit.h"
#include "runtime/Driver.h"
#include "runtime/Hash.h"
#include "runtime/Memory.h"
#include "runtime/AtomicFile.h"
#include "runtime/Work.h"

namespace tl::cpu {

CpuResults describeRun(const Function& fn, const LaunchConfig& launch, const Specialization& spec,
                       const SourceFile& source, const CpuTarget& target, const CpuKernel& kernel, int threads,
                       const Memory& memory) {
  CpuResults r;
  r.toolVersion = toolVersion();
  r.timestamp = utcTimestamp();
  r.kernel = fn.name;
  r.source = source.path();
  r.sourceSha256 = sha256Hex(source.text());
  for (const auto& [name, value] : launch.names)
    if (name != "grid" && name != "num_warps" && !launch.buffer(name)) r.sizes.emplace_back(name, value);
  r.grid = launch.grid;
  r.programs = launch.grid[0] * launch.grid[1] * launch.grid[2];
  for (const auto& [name, type] : spec.paramTypes) r.dtypes[name] = type.str();
  r.cpuModel = cpuModelName();
  r.isa = target.isa;
  r.vectorBytes = target.vectorBytes;
  r.libmvec = target.vectorMath;
  r.threads = threads;
  const CompileTimes& ct = kernel.times;
  r.llvmIrMs = ct.codegenMs;
  r.optimizeMs = ct.optimizeMs;
  r.objectMs = ct.objectMs;
  r.jitMs = ct.jitMs;
  r.cacheMs = ct.cacheMs;
  r.cacheHit = ct.cacheHit;
  for (const Buffer& b : memory.buffers()) r.bytes += double(b.bytes.size());
  r.flops = dotFlops(fn, launch);
  return r;
}

void setTiming(CpuResults& r, const std::vector<double>& ms) {
  r.runs = static_cast<int>(ms.size());
  r.medianMs = medianOf(ms);
  r.minMs = *std::min_element(ms.begin(), ms.end());
  r.gbps = r.medianMs > 0 ? r.bytes / (r.medianMs * 1e-3) / 1e9 : 0;
  r.gflops = r.medianMs > 0 ? r.flops / (r.medianMs * 1e-3) / 1e9 : 0;
}

nlohmann::ordered_json resultsToJson(const CpuResults& r) {
  using ojson = nlohmann::ordered_json;
  ojson j;
  j["schema_version"] = 1;
  j["tool"] = "tl-cpu";
  j["tool_version"] = r.toolVersion;
  j["timestamp"] = r.timestamp;
  j["kernel"] = r.kernel;
  j["source"] = r.source;
  j["source_sha256"] = r.sourceSha256;
  ojson sizes = ojson::object();
  for (const auto& [k, v] : r.sizes) sizes[k] = v;
  j["sizes"] = sizes;
  j["grid"] = r.grid;
  j["programs"] = r.programs;
  j["dtypes"] = r.dtypes;
  j["cpu"] = {{"model", r.cpuModel}, {"isa", r.isa}, {"vector_bytes", r.vectorBytes}, {"libmvec", r.libmvec}, {"threads", r.threads}};
  j["time"] = {{"runs", r.runs}, {"median_ms", r.medianMs}, {"min_ms", r.minMs}};
  j["throughput"] = {{"bytes", r.bytes}, {"gb_per_s", r.gbps}, {"flops", r.flops}, {"gflop_per_s", r.gflops}};
  j["compile_ms"] = {{"front_end", r.frontEndMs},
                     {"passes", r.passesMs},
                     {"cache", r.cacheMs},
                     {"llvm_ir", r.llvmIrMs},
                     {"optimize", r.optimizeMs},
                     {"x86", r.objectMs},
                     {"jit", r.jitMs},
                     {"total", r.frontEndMs + r.passesMs + r.cacheMs + r.llvmIrMs + r.optimizeMs + r.objectMs + r.jitMs},
                     {"cache_hit", r.cacheHit}};
  if (r.unfusedKernels > 0)
    j["unfused"] = {{"kernels", r.unfusedKernels}, {"median_ms", r.unfusedMedianMs}, {"check", r.unfusedCheck},
                    {"fusion_saves", r.medianMs > 0 ? r.unfusedMedianMs / r.medianMs : 0.0}};
  ojson outs = ojson::array();
  for (const auto& o : r.outputs)
    outs.push_back({{"name", o.name}, {"pass", o.pass}, {"max_abs_err", o.maxAbsErr}, {"max_rel_err", o.maxRelErr},
                    {"mismatches", o.mismatches}});
  j["check"] = {{"result", r.check}, {"reference", r.reference}, {"outputs", outs}};
  return j;
}

std::string writeResults(const CpuResults& r, const std::string& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw std::runtime_error("cannot create results directory " + dir + ": " + ec.message());
  std::string stem = fs::path(r.source).stem().string();
  if (stem.empty()) stem = r.kernel;
  const std::string file = (fs::path(dir) / (stem + ".json")).string();
  std::string err;
  if (!writeFileAtomic(file, resultsToJson(r).dump(2) + "\n", &err)) throw std::runtime_error(err);
  return file;
}

std::string cpuModelName() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("model name", 0) == 0 && line.find(':') != std::string::npos) return line.substr(line.find(':') + 2);
  return "unknown";
}

}  // namespace tl::cpu
