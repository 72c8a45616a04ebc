// The results JSON (see Results.h; the schema is documented in docs/gpu.md, "Results JSON").
//
// Field names are snake_case and grouped the way a reader looks for them: what ran, the GPU,
// time, throughput, resources, compile times, check. Non-finite numbers (a NaN error) are
// written as the strings "nan", "inf", "-inf", since JSON has no such numbers.
#include "ptx/Results.h"

#include <cmath>
#include <ctime>
#include <filesystem>
#include <optional>
#include <stdexcept>

#include "ptx/JitCache.h"

namespace tl {

using ojson = nlohmann::ordered_json;
namespace fs = std::filesystem;

// ---------------------------------------------------------------------------------------------
// Reading helpers: every access names the field when it is missing or has the wrong type.

namespace {

ojson number(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return v;
}

[[noreturn]] void bad(const std::string& field, const std::string& what) {
  throw std::runtime_error("results JSON: field '" + field + "' " + what);
}

const ojson& field(const ojson& obj, const std::string& ctx, const char* key) {
  if (!obj.is_object()) bad(ctx, "is not an object");
  auto it = obj.find(key);
  if (it == obj.end()) bad(ctx.empty() ? key : ctx + "." + key, "is missing");
  return *it;
}

std::string path(const std::string& ctx, const char* key) { return ctx.empty() ? key : ctx + "." + key; }

double getNum(const ojson& obj, const std::string& ctx, const char* key) {
  const auto& v = field(obj, ctx, key);
  if (v.is_number()) return v.get<double>();
  if (v.is_string()) {
    std::string s = v.get<std::string>();
    if (s == "nan") return NAN;
    if (s == "inf") return INFINITY;
    if (s == "-inf") return -INFINITY;
  }
  bad(path(ctx, key), "is not a number");
}

int64_t getInt(const ojson& obj, const std::string& ctx, const char* key) {
  const auto& v = field(obj, ctx, key);
  if (!v.is_number_integer()) bad(path(ctx, key), "is not an integer");
  return v.get<int64_t>();
}

bool getBool(const ojson& obj, const std::string& ctx, const char* key) {
  const auto& v = field(obj, ctx, key);
  if (!v.is_boolean()) bad(path(ctx, key), "is not true/false");
  return v.get<bool>();
}

std::string getStr(const ojson& obj, const std::string& ctx, const char* key) {
  const auto& v = field(obj, ctx, key);
  if (!v.is_string()) bad(path(ctx, key), "is not a string");
  return v.get<std::string>();
}

const ojson& getObj(const ojson& obj, const std::string& ctx, const char* key) {
  const auto& v = field(obj, ctx, key);
  if (!v.is_object()) bad(path(ctx, key), "is not an object");
  return v;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Writing and reading.

nlohmann::ordered_json resultsToJson(const RunResults& r) {
  ojson j;
  j["schema_version"] = r.schemaVersion;
  j["tool"] = "tl-ptx";
  j["tool_version"] = r.toolVersion;
  j["timestamp"] = r.timestamp;
  j["kernel"] = r.kernel;
  j["source"] = r.source;
  if (!r.sourceSha256.empty()) j["source_sha256"] = r.sourceSha256;
  ojson sizes = ojson::object();
  for (const auto& [k, v] : r.sizes) sizes[k] = v;
  j["sizes"] = sizes;
  j["grid"] = r.grid;
  j["num_warps"] = r.numWarps;
  j["dtypes"] = r.dtypes;
  j["arch"] = r.arch;
  j["ptx"] = r.ptxPath;
  j["assembler"] = r.assembler;
  j["gpu"] = {{"ran", r.gpuRan}, {"skipped", r.gpuSkipped}, {"device", r.device}, {"sm_count", r.smCount}};
  j["time"] = {{"runs", r.runs}, {"median_ms", number(r.medianMs)}, {"min_ms", number(r.minMs)},
               {"l2_flushed", r.l2Flushed}};
  j["throughput"] = {{"bytes", number(r.bytes)}, {"gb_per_s", number(r.gbps)}, {"flops", number(r.flops)},
                     {"tflop_per_s", number(r.tflops)}};
  j["resources"] = {{"registers", r.registers},
                    {"shared_bytes", r.sharedBytes},
                    {"dynamic_shared_bytes", r.dynamicSharedBytes},
                    {"local_bytes", r.localBytes},
                    {"spill_store_bytes", r.spillStoreBytes},
                    {"spill_load_bytes", r.spillLoadBytes},
                    {"blocks_per_sm", r.blocksPerSM},
                    {"warps_per_sm", r.warpsPerSM}};
  const CompileTimes& c = r.compile;
  j["compile_ms"] = {{"front_end", number(c.frontEndMs)}, {"passes_layouts_lowering", number(c.threadMs)},
                     {"llvm_codegen", number(c.codegenMs)}, {"ptxas", number(c.ptxasMs)},
                     {"cache", number(c.cacheMs)},          {"module_load", number(c.moduleLoadMs)},
                     {"total", number(c.totalMs())},        {"cache_hit", c.cacheHit},
                     {"cache_key", c.cacheKey}};
  ojson outs = ojson::array();
  for (const auto& o : r.outputs)
    outs.push_back({{"name", o.name}, {"pass", o.pass}, {"max_abs_err", number(o.maxAbsErr)},
                    {"max_rel_err", number(o.maxRelErr)}, {"mismatches", o.mismatches}, {"reason", o.reason}});
  j["check"] = {{"result", r.check}, {"reference", r.reference}, {"outputs", outs}};
  return j;
}

RunResults resultsFromJson(const nlohmann::ordered_json& j) {
  RunResults r;
  r.schemaVersion = int(getInt(j, "", "schema_version"));
  if (r.schemaVersion != kResultsSchemaVersion)
    bad("schema_version", "is " + std::to_string(r.schemaVersion) + "; this reader knows version " +
                              std::to_string(kResultsSchemaVersion));
  r.toolVersion = getStr(j, "", "tool_version");
  r.timestamp = getStr(j, "", "timestamp");
  r.kernel = getStr(j, "", "kernel");
  r.source = getStr(j, "", "source");
  if (j.is_object() && j.contains("source_sha256")) r.sourceSha256 = getStr(j, "", "source_sha256");
  for (const auto& [k, v] : getObj(j, "", "sizes").items()) {
    if (!v.is_string()) bad("sizes." + k, "is not a string");
    r.sizes.emplace_back(k, v.get<std::string>());
  }
  const auto& grid = field(j, "", "grid");
  if (!grid.is_array() || grid.size() != 3) bad("grid", "is not an array of 3 integers");
  for (int d = 0; d < 3; ++d) {
    if (!grid[d].is_number_integer()) bad("grid", "is not an array of 3 integers");
    r.grid[d] = grid[d].get<int64_t>();
  }
  r.numWarps = int(getInt(j, "", "num_warps"));
  for (const auto& [k, v] : getObj(j, "", "dtypes").items()) {
    if (!v.is_string()) bad("dtypes." + k, "is not a string");
    r.dtypes[k] = v.get<std::string>();
  }
  r.arch = getStr(j, "", "arch");
  r.ptxPath = getStr(j, "", "ptx");
  if (j.is_object() && j.contains("assembler")) r.assembler = getStr(j, "", "assembler");
  const auto& g = getObj(j, "", "gpu");
  r.gpuRan = getBool(g, "gpu", "ran");
  r.gpuSkipped = getStr(g, "gpu", "skipped");
  r.device = getStr(g, "gpu", "device");
  r.smCount = int(getInt(g, "gpu", "sm_count"));
  const auto& t = getObj(j, "", "time");
  r.runs = int(getInt(t, "time", "runs"));
  r.medianMs = getNum(t, "time", "median_ms");
  r.minMs = getNum(t, "time", "min_ms");
  r.l2Flushed = getBool(t, "time", "l2_flushed");
  const auto& tp = getObj(j, "", "throughput");
  r.bytes = getNum(tp, "throughput", "bytes");
  r.gbps = getNum(tp, "throughput", "gb_per_s");
  r.flops = getNum(tp, "throughput", "flops");
  r.tflops = getNum(tp, "throughput", "tflop_per_s");
  const auto& res = getObj(j, "", "resources");
  r.registers = int(getInt(res, "resources", "registers"));
  r.sharedBytes = getInt(res, "resources", "shared_bytes");
  if (res.contains("dynamic_shared_bytes")) r.dynamicSharedBytes = getInt(res, "resources", "dynamic_shared_bytes");
  r.localBytes = getInt(res, "resources", "local_bytes");
  r.spillStoreBytes = int(getInt(res, "resources", "spill_store_bytes"));
  r.spillLoadBytes = int(getInt(res, "resources", "spill_load_bytes"));
  r.blocksPerSM = int(getInt(res, "resources", "blocks_per_sm"));
  r.warpsPerSM = int(getInt(res, "resources", "warps_per_sm"));
  const auto& c = getObj(j, "", "compile_ms");
  r.compile.frontEndMs = getNum(c, "compile_ms", "front_end");
  r.compile.threadMs = getNum(c, "compile_ms", "passes_layouts_lowering");
  r.compile.codegenMs = getNum(c, "compile_ms", "llvm_codegen");
  r.compile.ptxasMs = getNum(c, "compile_ms", "ptxas");
  r.compile.cacheMs = getNum(c, "compile_ms", "cache");
  r.compile.moduleLoadMs = getNum(c, "compile_ms", "module_load");
  getNum(c, "compile_ms", "total");  // derived, but must be there
  r.compile.cacheHit = getBool(c, "compile_ms", "cache_hit");
  r.compile.cacheKey = getStr(c, "compile_ms", "cache_key");
  const auto& ch = getObj(j, "", "check");
  r.check = getStr(ch, "check", "result");
  if (r.check != "PASS" && r.check != "FAIL" && r.check != "skipped")
    bad("check.result", "is '" + r.check + "'; expected PASS, FAIL or skipped");
  r.reference = getStr(ch, "check", "reference");
  const auto& outs = field(ch, "check", "outputs");
  if (!outs.is_array()) bad("check.outputs", "is not an array");
  for (size_t i = 0; i < outs.size(); ++i) {
    std::string ctx = "check.outputs[" + std::to_string(i) + "]";
    OutputCheck o;
    o.name = getStr(outs[i], ctx, "name");
    o.pass = getBool(outs[i], ctx, "pass");
    o.maxAbsErr = getNum(outs[i], ctx, "max_abs_err");
    o.maxRelErr = getNum(outs[i], ctx, "max_rel_err");
    o.mismatches = getInt(outs[i], ctx, "mismatches");
    o.reason = getStr(outs[i], ctx, "reason");
    r.outputs.push_back(o);
  }
  return r;
}

std::string writeResults(const RunResults& r, const std::string& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw std::runtime_error("cannot create results directory " + dir + ": " + ec.message());
  std::string stem = fs::path(r.source).stem().string();
  if (stem.empty()) stem = r.kernel;
  std::string file = (fs::path(dir) / (stem + ".json")).string();
  std::string err;
  if (!writeFileAtomic(file, resultsToJson(r).dump(2) + "\n", &err)) throw std::runtime_error(err);
  return file;
}

// ---------------------------------------------------------------------------------------------
// ptxas reports.

nlohmann::json ptxasToJson(const PtxasInfo& p) {
  return {{"ran", p.ran},
          {"ok", p.ok},
          {"skipped", p.skipped},
          {"assembler", p.assembler},
          {"assembler_note", p.assemblerNote},
          {"registers", p.registers},
          {"shared_bytes", p.sharedBytes},
          {"spill_store_bytes", p.spillStoreBytes},
          {"spill_load_bytes", p.spillLoadBytes},
          {"stack_frame_bytes", p.stackFrameBytes},
          {"log", p.log}};
}

PtxasInfo ptxasFromJson(const nlohmann::json& j) {
  PtxasInfo p;
  if (!j.is_object()) return p;
  auto b = [&](const char* k) { return j.contains(k) && j[k].is_boolean() && j[k].get<bool>(); };
  auto i = [&](const char* k) { return j.contains(k) && j[k].is_number_integer() ? j[k].get<int>() : 0; };
  auto s = [&](const char* k) { return j.contains(k) && j[k].is_string() ? j[k].get<std::string>() : ""; };
  p.ran = b("ran");
  p.ok = b("ok");
  p.skipped = s("skipped");
  p.assembler = s("assembler");
  p.assemblerNote = s("assembler_note");
  p.registers = i("registers");
  p.sharedBytes = i("shared_bytes");
  p.spillStoreBytes = i("spill_store_bytes");
  p.spillLoadBytes = i("spill_load_bytes");
  p.stackFrameBytes = i("stack_frame_bytes");
  p.log = s("log");
  return p;
}

// ---------------------------------------------------------------------------------------------
// Measurements.

std::vector<OutputCheck> checkOutputs(const Memory& reference, const Memory& got, const ToleranceOverride& tol) {
  std::vector<OutputCheck> out;
  for (const Buffer& ref : reference.buffers()) {
    if (!ref.output) continue;
    OutputCheck o;
    o.name = ref.name;
    const Buffer* g = got.find(ref.name);
    if (!g) {
      o.reason = "missing output";
    } else {
      Comparison c = compareBuffers(ref, *g, tol);
      o.pass = c.pass;
      o.maxAbsErr = c.maxAbsErr;
      o.maxRelErr = c.maxRelErr;
      o.mismatches = c.mismatches;
      o.reason = c.reason;
    }
    out.push_back(o);
  }
  return out;
}

}  // namespace tl
