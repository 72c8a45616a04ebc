// The readable summary of a tl-sim report (SimReport.h, formatSimReport): made from the JSON
// alone, so the printed numbers and the report file cannot disagree, and a saved report can be
// printed again. The default fits one screen (about 25 lines for the softmax):
//
//   header (kernel, GPU, grid), source and GPU file, sampling, registers,
//   occupancy: theoretical (the occupancy calculator) and achieved (the timing model), each
//   labelled, and the shared memory a block is charged (the driver's reserved kilobyte),
//   memory per source line (one row per line + space + direction: the instructions of a line
//   merged) with sectors / ideal, sectors per 128 requested bytes and efficiency,
//   DRAM bytes, time and limiter, fusion in one line, the measured run when given.
//
// SummaryOptions::full adds one row per instruction (with its buffers) and the unfused kernels;
// SummaryOptions::ncu adds the Nsight Compute name table.
#include <cstdio>
#include <sstream>

#include "sim/SimReport.h"

namespace tl {
namespace {

using Json = nlohmann::ordered_json;

std::string fmt(const char* format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

// 1234567 -> "1,234,567"
std::string grouped(double v) {
  std::string digits = fmt("%.0f", v < 0 ? -v : v), out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return (v < 0 ? "-" : "") + out;
}

// "1 block", "2 blocks".
std::string count(int64_t n, const std::string& noun) { return std::to_string(n) + " " + noun + (n == 1 ? "" : "s"); }

// A percentage with one decimal: 0.755 -> "75.5%".
std::string percent(double share) { return fmt("%.1f", 100 * share) + "%"; }

// A metric value: integers grouped, ratios with 2 decimals.
std::string metricValue(const std::string& name, double v) {
  bool ratio = name.ends_with(".ratio") || name.ends_with(".pct");
  return ratio ? fmt("%.2f", v) : grouped(v);
}

// A table cell: `s` padded to `width` (right-aligned when `right`), then one separating space.
std::string pad(std::string s, size_t width, bool right = false) {
  if (s.size() >= width) return s + " ";
  std::string sp(width - s.size(), ' ');
  return right ? sp + s + " " : s + sp + " ";
}

std::string joined(const Json& names) {
  std::string s;
  for (const Json& n : names) s += (s.empty() ? "" : ",") + n.get<std::string>();
  return s.empty() ? "-" : s;
}

// The columns shared by the per-line and per-instruction tables, for one counters object.
std::string counterCells(const Json& c, bool global) {
  std::string s = pad(grouped(c["requests"].get<double>()), 9, true);
  if (global) {
    s += pad(grouped(c["sectors"].get<double>()), 10, true) + pad(grouped(c["ideal_sectors"].get<double>()), 10, true) +
         pad(fmt("%.2f", c["sectors_per_ideal"].get<double>()), 10, true) +
         pad(fmt("%.2f", c["sectors_per_128B"].get<double>()), 9, true) +
         pad(fmt("%.1f", 100 * c["efficiency"].get<double>()), 6, true) + pad("-", 15, true);
  } else {
    s += pad("-", 10, true) + pad("-", 10, true) + pad("-", 10, true) + pad("-", 9, true) + pad("-", 6, true) +
         pad(grouped(c["wavefronts"].get<double>()) + "/" + grouped(c["ideal_wavefronts"].get<double>()), 15, true);
  }
  return s;
}

std::string counterHeader() {
  return pad("requests", 9, true) + pad("sectors", 10, true) + pad("ideal", 10, true) + pad("sect/ideal", 10, true) +
         pad("sect/128B", 9, true) + pad("eff%", 6, true) + pad("wavefr/ideal", 15, true);
}

// A line's direction: load, store, atomic (every instruction an atomic: a read-modify-write, which
// the memory model counts as a store) or st+at (plain stores and atomics on one line).
std::string direction(const Json& line) {
  if (!line["store"].get<bool>()) return "load";
  const size_t atomics = line.value("atomics", size_t(0));
  if (atomics == 0) return "store";
  return atomics == line["instrs"].size() ? "atomic" : "st+at";
}

void lineTable(const Json& mem, std::ostringstream& os) {
  os << "  memory per source line (whole grid; sect/ideal 1.00 and sect/128B 4.00 = perfectly coalesced,\n"
        "  eff% = bytes requested / bytes fetched):\n    "
     << pad("line", 5) << pad("space", 7) << pad("dir", 6) << pad("ops", 3, true) << pad("buffers", 10)
     << counterHeader() << "\n";
  for (const Json& l : mem["lines"]) {
    const bool global = l["space"] == "global";
    os << "    " << pad(std::to_string(l["line"].get<uint32_t>()), 5) << pad(l["space"].get<std::string>(), 7)
       << pad(direction(l), 6) << pad(std::to_string(l["instrs"].size()), 3, true)
       << pad(global ? joined(l["buffers"]) : "-", 10) << counterCells(l["counters"], global) << "\n";
  }
}

void instructionTable(const Json& mem, std::ostringstream& os) {
  os << "  memory instructions:\n    " << pad("line:col", 9) << pad("op", 10) << pad("B/lane", 6, true)
     << pad("buffers", 12) << counterHeader() << "\n";
  for (const Json& i : mem["instructions"]) {
    const bool global = i["space"] == "global";
    std::string where = std::to_string(i["line"].get<uint32_t>()) + ":" + std::to_string(i["col"].get<uint32_t>());
    os << "    " << pad(where, 9) << pad(i["op"].get<std::string>(), 10)
       << pad(std::to_string(i["bytes_per_lane"].get<int>()), 6, true)
       << pad(global ? joined(i["buffers"]) : "-", 12) << counterCells(i["counters"], global) << "\n";
  }
}

void occupancyLines(const Json& r, std::ostringstream& os) {
  const Json &occ = r["occupancy"], &t = r["timing"], &gpu = r["gpu"];
  const int maxWarps = occ["max_warps_per_sm"].get<int>();
  os << "  occupancy: theoretical " << percent(occ["theoretical"].get<double>()) << " ("
     << occ["blocks_per_sm"].get<int>() << " blocks/SM = " << occ["warps_per_sm"].get<int>() << " of " << maxWarps
     << " warps, limited by " << occ["limiter"].get<std::string>();
  if (!occ["reason"].get<std::string>().empty()) os << ": " << occ["reason"].get<std::string>();
  os << ")\n             achieved    " << percent(occ["achieved"].get<double>()) << " ("
     << fmt("%.1f", occ["achieved_warps_per_sm"].get<double>()) << " active warps per SM, mean over "
     << count(t["active_sms"].get<int>(), "SM") << ", timing model";
  const int64_t perSm = t["blocks_per_sm"].get<int64_t>();
  const int resident = t["resident_blocks_per_sm"].get<int>();
  if (perSm < resident) os << "; the grid gives an SM " << count(perSm, "block") << ", " << resident << " would fit";
  os << ")\n";
  const int reserved = occ["shared_reserved_bytes_per_block"].get<int>();
  if (reserved > 0)
    os << "  shared/block: " << grouped(occ["shared_bytes_per_block"].get<double>()) << " B + "
       << grouped(reserved) << " B the driver reserves per block (sm_80+; reservedSharedPerBlock, "
       << gpu["file"].get<std::string>() << ") = " << grouped(occ["shared_allocated_bytes_per_block"].get<double>())
       << " B allocated\n";
}

void measuredLines(const Json& m, std::ostringstream& os) {
  auto intOr = [](const Json& v) { return v.is_null() ? std::string("?") : std::to_string(v.get<int>()); };
  if (!m["timed"].get<bool>()) {
    os << "  measured: none: " << m["note"].get<std::string>() << "\n";
    if (!m["registers"].is_null())
      os << "            the file has registers (" << intOr(m["registers"]) << " per thread) but no driver occupancy\n";
    return;
  }
  os << "  measured (" << m["device"].get<std::string>() << "): " << fmt("%.2f", m["median_us"].get<double>())
     << " us median vs " << fmt("%.2f", m["predicted_us"].get<double>()) << " us predicted ("
     << fmt("%+.1f", 100 * m["time_error"].get<double>()) << "%); blocks/SM: driver " << intOr(m["blocks_per_sm"])
     << ", model " << m["blocks_per_sm_predicted"].get<int>();
  if (!m["occupancy_agrees"].is_null()) os << (m["occupancy_agrees"].get<bool>() ? " (equal)" : " (DIFFERENT)");
  os << "\n";
  if (!m["launch_matches"].get<bool>())
    os << "  measured: WARNING: the results file ran another launch (sizes, grid or num_warps differ)\n";
  if (m["source_matches"].is_boolean() && !m["source_matches"].get<bool>())
    os << "  measured: WARNING: the results file was measured on a different source (SHA-256 differs)\n";
}

void fusionLines(const Json& f, bool full, std::ostringstream& os) {
  const int64_t launches = f["launches_unfused"].get<int64_t>();
  os << "  fusion: unfused " << launches << (launches == 1 ? " launch, " : " launches, ")
     << grouped(f["dram_bytes_unfused"].get<double>()) << " B DRAM, " << fmt("%.2f", f["time_us_unfused"].get<double>())
     << " us; fused 1 launch, " << grouped(f["dram_bytes_fused"].get<double>()) << " B, "
     << fmt("%.2f", f["time_us_fused"].get<double>()) << " us\n          unfused/fused: bytes "
     << fmt("%.2f", f["dram_ratio"].get<double>()) << "x, time " << fmt("%.2f", f["time_ratio"].get<double>())
     << "x (compulsory bytes " << fmt("%.2f", f["compulsory"]["ratio"].get<double>()) << "x)\n";
  if (!full) return;
  for (const Json& k : f["kernels"])
    os << "    " << pad(k["name"].get<std::string>(), 28) << pad(grouped(k["dram_read_bytes"].get<double>()), 12, true)
       << "B read " << pad(grouped(k["dram_write_bytes"].get<double>()), 12, true) << "B written "
       << fmt("%8.2f", k["time_us"].get<double>()) << " us  (" << k["limiter"].get<std::string>() << ")\n";
}

}  // namespace

std::string formatSimReport(const Json& r, const SummaryOptions& options) {
  std::ostringstream os;
  const Json &launch = r["launch"], &gpu = r["gpu"], &s = r["sampling"], &src = r["source"];
  os << "tl-sim: " << r["kernel"].get<std::string>() << " on " << gpu["name"].get<std::string>() << " ("
     << gpu["arch"].get<std::string>() << "), " << count(s["grid_blocks"].get<int64_t>(), "block") << " x "
     << count(launch["num_warps"].get<int>(), "warp") << "\n";
  os << "  source: " << (src["path"].is_null() ? "(not given)" : src["path"].get<std::string>());
  if (!src["sha256"].is_null()) os << " (sha256 " << src["sha256"].get<std::string>().substr(0, 12) << ")";
  os << "; GPU file " << gpu["file"].get<std::string>() << "; " << r["tool_version"].get<std::string>() << "\n";
  if (s["sampled"].get<bool>())
    os << "  sampling: ran the first " << s["blocks_run"].get<int64_t>() << " of " << s["grid_blocks"].get<int64_t>()
       << " blocks; counts scaled x" << fmt("%.3g", s["scale"].get<double>()) << " (assumes the blocks are alike)"
       << (s.value("limited_by", "") == "trace_memory"
               ? "; stopped there by the " + std::to_string(s["trace_memory_cap_mib"].get<int64_t>()) +
                     " MiB cap on the simulator's records (--trace-memory)"
               : "")
       << "\n";
  else
    os << "  sampling: none (" << (s["blocks_run"].get<int64_t>() == 1 ? "the grid's 1 block" : "all " + count(s["blocks_run"].get<int64_t>(), "block")) << " run)\n";
  if (r["execution"].contains("notes"))
    for (const Json& n : r["execution"]["notes"]) os << "  note: " << n.get<std::string>() << "\n";
  if (r.contains("compile") && r["compile"]["keep_layouts"].get<bool>())
    os << "  layouts: kept as the source implies (--keep-layouts: no automatic convert_layout)\n";
  const Json& regs = r["registers"];
  os << "  registers: " << regs["per_thread"].get<int>() << " per thread ("
     << (regs["estimate"].get<bool>() ? "ESTIMATE: " : "") << regs["source"].get<std::string>() << ")\n";
  occupancyLines(r, os);

  const Json& mem = r["memory"];
  lineTable(mem, os);
  if (options.full) instructionTable(mem, os);
  if (options.ncu) {
    os << "  kernel totals:\n    " << pad("Nsight Compute metric", 72) << pad("ours (memory.totals.)", 42)
       << "value\n";
    for (const Json& m : mem["ncu_metrics"])
      os << "    " << pad(m["metric"].get<std::string>(), 72) << pad(m["ours"].get<std::string>(), 42)
         << metricValue(m["metric"].get<std::string>(), m["value"].get<double>()) << "\n";
  }
  const Json& tot = mem["totals"];
  os << "  DRAM: " << grouped(tot["dram_read_bytes"].get<double>()) << " B read, "
     << grouped(tot["dram_write_bytes"].get<double>()) << " B written\n";

  const Json& t = r["timing"];
  os << "  time: " << fmt("%.2f", t["time_us"].get<double>()) << " us predicted (SM "
     << fmt("%.2f", t["sm_time_us"].get<double>()) << " us + launch " << fmt("%.2f", t["launch_overhead_us"].get<double>())
     << " us; " << grouped(t["cycles"].get<double>()) << " cycles), limited by " << t["limiter"].get<std::string>()
     << "\n        " << t["limiter_why"].get<std::string>() << "\n";
  if (t.value("mma_instructions", 0.0) > 0)
    os << "  tensor cores: " << fmt("%.1f", 100 * t["tensor_utilization"].get<double>()) << "% busy (simulated SM), "
       << grouped(t["mma_instructions"].get<double>()) << " mma in the kernel\n";

  if (r.contains("measured")) measuredLines(r["measured"], os);
  if (r.contains("fusion")) fusionLines(r["fusion"], options.full, os);
  if (r.contains("fusion_skipped")) os << "  fusion: not simulated: " << r["fusion_skipped"].get<std::string>() << "\n";
  std::string more;
  if (!options.full) more += "--full: every instruction and unfused kernel";
  if (!options.ncu) more += std::string(more.empty() ? "" : "; ") + "--ncu: the Nsight Compute names";
  if (!more.empty()) os << "  (" << more << ")\n";
  // Table cells end in a separating space: drop it at the end of each line.
  std::string text = os.str(), trimmed;
  for (char c : text) {
    if (c == '\n')
      while (!trimmed.empty() && trimmed.back() == ' ') trimmed.pop_back();
    trimmed += c;
  }
  return trimmed;
}

}  // namespace tl
