// Predictions against measurements, and the Fusion / GPU timings tables (Comparisons.h).
#include "viz/model/Comparisons.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>

namespace tl::viz {
namespace {

using Json = nlohmann::ordered_json;

// A number field of an object, or 0 when the object, the field or its type is not there.
template <class J>
double num(const J& j, const char* key) {
  if (!j.is_object()) return 0;
  auto it = j.find(key);
  if (it == j.end() || !it->is_number()) return 0;
  double v = it->template get<double>();
  return std::isfinite(v) ? v : 0;
}

template <class J>
std::string str(const J& j, const char* key) {
  if (!j.is_object()) return "";
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->template get<std::string>() : "";
}

template <class J>
bool flag(const J& j, const char* key) {
  if (!j.is_object()) return false;
  auto it = j.find(key);
  return it != j.end() && it->is_boolean() && it->template get<bool>();
}

template <class J>
const J* child(const J& j, const char* key) {
  if (!j.is_object()) return nullptr;
  auto it = j.find(key);
  return it == j.end() ? nullptr : &*it;
}

// Parses the whole of `text` as a number.
bool asNumber(const std::string& text, double& out) {
  if (text.empty()) return false;
  char* end = nullptr;
  out = std::strtod(text.c_str(), &end);
  return end == text.c_str() + text.size() && std::isfinite(out);
}

bool sameValue(const std::string& a, const std::string& b) {
  double x = 0, y = 0;
  if (asNumber(a, x) && asNumber(b, y))
    return x == y || std::fabs(x - y) <= 1e-9 * std::max(std::fabs(x), std::fabs(y));
  return a == b;
}

}  // namespace

std::optional<double> errorPercent(double predicted, double measured) {
  if (!(predicted > 0) || !(measured > 0) || !std::isfinite(predicted) || !std::isfinite(measured)) return std::nullopt;
  return 100.0 * (predicted - measured) / measured;
}

bool withinTarget(double predicted, double measured, double targetPercent) {
  std::optional<double> e = errorPercent(predicted, measured);
  return e && std::fabs(*e) <= targetPercent;
}

std::optional<double> ratio(double numerator, double denominator) {
  if (!(denominator > 0) || !std::isfinite(numerator) || !std::isfinite(denominator)) return std::nullopt;
  return numerator / denominator;
}

std::vector<std::string> sizeDifferences(const std::map<std::string, std::string>& measuredSizes, int measuredNumWarps,
                                         const LaunchConfig& launch, int numWarps) {
  std::vector<std::string> out;
  for (const auto& [name, value] : measuredSizes) {
    const std::string* here = nullptr;
    for (const auto& [n, v] : launch.names)
      if (n == name) here = &v;
    if (!here)
      out.push_back(name + ": " + value + " measured, not a size of this launch");
    else if (!sameValue(value, *here))
      out.push_back(name + ": " + value + " measured, " + *here + " here");
  }
  if (measuredNumWarps > 0 && numWarps > 0 && measuredNumWarps != numWarps)
    out.push_back("num_warps: " + std::to_string(measuredNumWarps) + " measured, " + std::to_string(numWarps) +
                  " here");
  return out;
}

std::string sizesText(const std::map<std::string, std::string>& sizes) {
  std::string s;
  for (const auto& [name, value] : sizes) s += (s.empty() ? "" : " ") + name + "=" + value;
  return s;
}

// ---------------------------------------------------------------------------------------------
// Fusion.

FusionComparison fusionComparison(const Json& report) {
  FusionComparison f;
  const Json* fu = child(report, "fusion");
  if (!fu || !fu->is_object()) {
    f.missing = report.is_object() && report.contains("timing")
                    ? "the report has no \"fusion\" section (simulated with --no-unfused?)"
                    : "no simulator report yet";
    return f;
  }
  f.present = true;
  f.launchesFused = int64_t(num(*fu, "launches_fused"));
  f.launchesUnfused = int64_t(num(*fu, "launches_unfused"));
  f.dramFused = num(*fu, "dram_bytes_fused");
  f.dramUnfused = num(*fu, "dram_bytes_unfused");
  f.dramRatio = ratio(f.dramUnfused, f.dramFused);
  f.timeFusedUs = num(*fu, "time_us_fused");
  f.timeUnfusedUs = num(*fu, "time_us_unfused");
  f.timeRatio = ratio(f.timeUnfusedUs, f.timeFusedUs);
  if (const Json* c = child(*fu, "compulsory")) {
    f.compulsoryFused = num(*c, "fused_bytes");
    f.compulsoryUnfused = num(*c, "unfused_bytes");
    f.compulsoryRatio = ratio(f.compulsoryUnfused, f.compulsoryFused);
    f.compulsoryEstimated = flag(*c, "estimated");
  }
  if (const Json* ks = child(*fu, "kernels"); ks && ks->is_array()) {
    for (const Json& k : *ks) {
      FusionKernelRow r;
      r.name = str(k, "name");
      r.description = str(k, "description");
      r.readBytes = num(k, "dram_read_bytes");
      r.writeBytes = num(k, "dram_write_bytes");
      r.timeUs = num(k, "time_us");
      r.limiter = str(k, "limiter");
      r.blocksRun = int64_t(num(k, "blocks_run"));
      f.kernels.push_back(std::move(r));
    }
  }
  return f;
}

MeasuredFusion measuredFusion(const MeasuredRun& run, const LaunchConfig& launch, int numWarps) {
  MeasuredFusion m;
  m.file = run.file;
  m.device = run.device;
  m.sizes = sizesText(run.sizes);
  m.differences = sizeDifferences(run.sizes, run.numWarps, launch, numWarps);
  const nlohmann::json* u = child(run.raw, "unfused");
  if (!u || !u->is_object()) {
    m.problem = "no \"unfused\" object in " + (run.file.empty() ? std::string("the results") : run.file);
    return m;
  }
  m.gpuRan = flag(*u, "gpu_ran");
  m.unfusedMs = num(*u, "median_ms");
  m.fusedMs = num(*u, "fused_median_ms");
  m.timeRatio = ratio(m.unfusedMs, m.fusedMs);
  m.launches = int64_t(num(*u, "launches"));
  m.predictedFusedBytes = num(*u, "predicted_fused_bytes");
  m.predictedUnfusedBytes = num(*u, "predicted_unfused_bytes");
  m.trafficRatio = ratio(m.predictedUnfusedBytes, m.predictedFusedBytes);
  m.check = str(*u, "check");
  if (m.check.empty()) m.check = "skipped";
  if (const nlohmann::json* ks = child(*u, "kernels"); ks && ks->is_array())
    for (const nlohmann::json& k : *ks)
      m.kernels.push_back({str(k, "name"), int(num(k, "registers")), num(k, "read_bytes"), num(k, "write_bytes")});
  return m;
}

// ---------------------------------------------------------------------------------------------
// GPU timings.

MeasuredVsPredicted measuredVsPredicted(const MeasuredRun& run, const Json& report, const LaunchConfig& launch,
                                        int numWarps) {
  MeasuredVsPredicted m;
  m.measuredMs = run.medianMs;
  m.minMs = run.minMs;
  m.device = run.device;
  m.file = run.file;
  m.differences = sizeDifferences(run.sizes, run.numWarps, launch, numWarps);
  const Json* timing = child(report, "timing");
  if (timing) {
    m.predictedMs = num(*timing, "time_us") / 1000.0;
    m.gbPerSPredicted = num(*timing, "achieved_dram_gbs");
  }
  m.errorPct = errorPercent(m.predictedMs, m.measuredMs);
  m.within = withinTarget(m.predictedMs, m.measuredMs);
  m.registersMeasured = run.registers;
  if (const Json* regs = child(report, "registers")) {
    m.registersModel = int(num(*regs, "per_thread"));
    auto it = regs->find("estimate");
    m.registersModelEstimated = it == regs->end() || !it->is_boolean() || it->get<bool>();
  }
  m.blocksPerSMMeasured = run.blocksPerSM;
  if (const Json* occ = child(report, "occupancy")) m.blocksPerSMModel = int(num(*occ, "blocks_per_sm"));
  m.gbPerSMeasured = run.gbPerS;
  return m;
}

std::vector<TimingsTableRow> timingsTable(const std::vector<TimingRow>& rows) {
  std::vector<TimingsTableRow> out;
  for (const TimingRow& r : rows) {
    TimingsTableRow t;
    t.shape = r.shape;
    for (const std::string& s : r.sets) t.sets += (t.sets.empty() ? "" : " ") + s;
    t.measuredMs = r.measuredMs;
    t.tritonMs = r.tritonMs;
    t.torchMs = r.torchMs;
    t.predictedMs = r.predictedMs;
    t.errorPct = errorPercent(r.predictedMs, r.measuredMs);
    t.within = withinTarget(r.predictedMs, r.measuredMs);
    t.vsTriton = ratio(r.measuredMs, r.tritonMs);
    if (!r.predictError.empty())
      t.note = r.predictError;
    else if (!(r.predictedMs > 0))
      t.note = "not predicted yet";
    else if (!(r.measuredMs > 0))
      t.note = "not measured";
    out.push_back(std::move(t));
  }
  return out;
}

TimingsSummary summarizeTimings(const std::vector<TimingsTableRow>& rows) {
  TimingsSummary s;
  s.rows = int(rows.size());
  double sum = 0;
  for (const TimingsTableRow& r : rows) {
    if (!r.errorPct) continue;
    double e = std::fabs(*r.errorPct);
    ++s.compared;
    s.within += r.within ? 1 : 0;
    sum += e;
    s.maxAbsErrorPct = std::max(s.maxAbsErrorPct, e);
  }
  if (s.compared) s.meanAbsErrorPct = sum / s.compared;
  return s;
}

}  // namespace tl::viz
