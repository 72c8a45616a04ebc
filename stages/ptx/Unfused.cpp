// tl-ptx --unfused: compiling the unfused kernels and describing them (see Unfused.h).
#include "ptx/Unfused.h"

#include <cctype>
#include <filesystem>
#include <stdexcept>

#include "ir/Pass.h"

namespace fs = std::filesystem;

namespace tl {

std::string ptxIdentifier(const std::string& name) {
  std::string id;
  for (char c : name) {
    bool ok = std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '$';
    id += ok ? c : '_';
  }
  if (id.empty() || std::isdigit(static_cast<unsigned char>(id[0]))) id = "_" + id;
  return id;
}

UnfusedBuild compileUnfused(const CompiledKernel& k, const JitOptions& opts, const JitCache* cache) {
  // unfuse() wants block IR after the block pipeline; the front end's IR has not been through it.
  std::unique_ptr<Function> fused = cloneFunction(*k.ir);
  blockPipeline().run(*fused);
  UnfusedKernels u = unfuse(*fused, k.launch);

  UnfusedBuild b;
  b.launch = u.launch;
  b.traffic = fusionTraffic(*fused, k.launch, u);
  std::string prefix = fused->name + ".";
  for (size_t i = 0; i < u.kernels.size(); ++i) {
    UnfusedKernelBuild kb;
    kb.name = u.kernels[i]->name;
    kb.suffix = kb.name.rfind(prefix, 0) == 0 ? kb.name.substr(prefix.size()) : std::to_string(i + 1);
    kb.description = i < u.descriptions.size() ? u.descriptions[i] : "";
    // A CompiledKernel without a parsed file: cacheKeyFor() then keys on the printed IR, which
    // differs from kernel to kernel (and from the fused kernel's source text).
    kb.kernel = std::make_unique<CompiledKernel>();
    kb.kernel->path = k.path;
    kb.kernel->launch = u.launch;
    kb.kernel->spec = k.spec;
    kb.kernel->ir = std::move(u.kernels[i]);
    kb.kernel->ir->name = ptxIdentifier(kb.name);
    kb.jit = jitCompile(*kb.kernel, opts, cache);
    b.kernels.push_back(std::move(kb));
  }
  return b;
}

void writeUnfusedPTX(UnfusedBuild& b, const std::string& source, const std::string& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  std::string stem = fs::path(source).stem().string();
  for (UnfusedKernelBuild& kb : b.kernels) {
    std::string suffix = kb.suffix;  // "3_exp"; anything odd in a file name becomes '_'
    for (char& c : suffix)
      if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') c = '_';
    std::string path = (fs::path(dir) / (stem + ".unfused." + suffix + ".ptx")).string();
    std::string err;
    if (!writeFileAtomic(path, kb.jit.entry.ptx, &err)) throw std::runtime_error(err);
    kb.ptxPath = path;
  }
}

nlohmann::ordered_json unfusedToJson(const UnfusedBuild& b, const UnfusedRun* run) {
  using nlohmann::ordered_json;
  ordered_json kernels = ordered_json::array();
  for (size_t i = 0; i < b.kernels.size(); ++i) {
    const UnfusedKernelBuild& kb = b.kernels[i];
    // Registers: the driver's count when the GPU ran it, else ptxas' (0 when ptxas did not run).
    int regs = run && i < run->registers.size() ? run->registers[i] : kb.jit.entry.ptxas.registers;
    ordered_json kj = {{"name", kb.name},
                       {"entry", kb.jit.entry.kernelName},
                       {"description", kb.description},
                       {"registers", regs},
                       {"ptx_path", kb.ptxPath}};
    if (i < b.traffic.unfused.size()) {
      kj["read_bytes"] = b.traffic.unfused[i].readBytes;
      kj["write_bytes"] = b.traffic.unfused[i].writeBytes;
    }
    kernels.push_back(std::move(kj));
  }
  ordered_json j = {{"kernels", std::move(kernels)},
                    {"launches", int(b.kernels.size())},
                    {"predicted_fused_bytes", b.traffic.fusedBytes},
                    {"predicted_unfused_bytes", b.traffic.unfusedBytes},
                    {"traffic_ratio", b.traffic.ratio()}};
  j["gpu_ran"] = run != nullptr;
  if (run) {
    j["runs"] = run->timing.runs;
    j["median_ms"] = run->timing.medianMs;
    j["min_ms"] = run->timing.minMs;
    j["l2_flushed"] = run->timing.l2Flushed;
    j["fused_median_ms"] = run->fusedMedianMs;
    j["ratio_vs_fused"] = run->fusedMedianMs > 0 ? ordered_json(run->ratioVsFused()) : ordered_json(nullptr);
    j["check"] = run->check;
  } else {
    for (const char* key : {"runs", "median_ms", "min_ms", "l2_flushed", "fused_median_ms", "ratio_vs_fused"})
      j[key] = nullptr;
    j["check"] = "skipped";
  }
  return j;
}

}  // namespace tl
