// The simulator's report (see SimReport.h): runs one kernel through every model of sim/ and
// gathers the results into JSON (docs/sim.md, "The report", is the schema), then renders the
// JSON as a readable summary. The flow, per kernel (fused, then each unfused kernel):
//
//   compileToThreadIR -> runThreadIR (accesses + warp traces, first N blocks)
//     -> estimateRegisters + occupancy -> analyzeMemory (scaled to the grid) -> predictTime
//
// The summary is built from the JSON alone (formatSimReport), so what tl-sim prints and what
// the report file holds can never disagree.
#include "sim/SimReport.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <sstream>
#include <stdexcept>

#include "ir/IR.h"
#include "runtime/Memory.h"
#include "sim/Gpu.h"
#include "sim/MemoryModel.h"
#include "sim/Occupancy.h"
#include "sim/ThreadExecutor.h"
#include "sim/Timing.h"
#include "thread/Pipeline.h"
#include "thread/Unfuse.h"

namespace tl {
namespace {

using Json = nlohmann::ordered_json;

// ---------------------------------------------------------------------------------------------
// One kernel through the models.

struct KernelRun {
  std::string name;
  int numWarps = 0;
  int64_t sharedBytes = 0;
  int64_t gridBlocks = 0;
  int64_t blocksRun = 0;
  ExecStats stats;
  int64_t accessRecords = 0;
  std::vector<const Op*> instrs;  // instruction table of the thread IR (op names)
  RegisterEstimate regs;
  OccupancyResult occ;
  MemoryReport mem;
  TimingResult timing;
};

int64_t gridSize(const LaunchConfig& launch) { return launch.grid[0] * launch.grid[1] * launch.grid[2]; }

// How many blocks to run: the option, else every block up to the default budget.
int64_t blocksToRun(int64_t grid, const SimOptions& o) {
  int64_t budget = o.sampleBlocks > 0 ? o.sampleBlocks : kDefaultBlockBudget;
  return std::min(grid, budget);
}

// Runs thread IR over `memory` and through the memory, occupancy and timing models.
// With `detail`, also keeps what SimDetail holds (the fused kernel only).
KernelRun simulateThreadIR(const Function& threadIR, const LaunchConfig& launch, Memory& memory, const GpuSpec& gpu,
                           const SimOptions& o, SimDetail* detail = nullptr) {
  KernelRun k;
  k.name = threadIR.name;
  k.numWarps = threadIR.numWarps;
  k.sharedBytes = threadIR.sharedBytes;
  k.gridBlocks = gridSize(launch);
  k.blocksRun = blocksToRun(k.gridBlocks, o);
  k.instrs = instructionTable(threadIR);

  ExecOptions eo;
  eo.recordAccesses = true;
  eo.traceWarps = true;
  eo.detectRaces = o.detectRaces;
  eo.maxBlocks = k.blocksRun < k.gridBlocks ? k.blocksRun : -1;
  ExecResult run = runThreadIR(threadIR, launch, memory, eo);
  k.stats = run.stats;
  k.accessRecords = static_cast<int64_t>(run.accesses.size());

  k.regs = o.registers ? o.registers(threadIR) : estimateRegisters(threadIR);
  k.occ = occupancy(gpu, k.numWarps * 32, k.regs.registers, static_cast<int>(k.sharedBytes));

  MemoryModelOptions mo;
  mo.totalBlocks = k.gridBlocks;
  mo.sharedBytesPerSM = int64_t(k.occ.activeBlocksPerSM) * k.sharedBytes;
  k.mem = analyzeMemory(run.accesses, gpu, mo);

  TimingOptions to;
  to.gridBlocks = k.gridBlocks;
  to.registersPerThread = k.regs.registers;
  to.memory = &k.mem;
  to.timelineBlocks = o.timelineBlocks;
  TimingInput input = buildTimingInput(threadIR, run, gpu, to);
  k.timing = predictTime(input, gpu, to);
  if (detail) {
    detail->gpu = gpu;
    detail->instrs = k.instrs;
    int64_t keep = std::max<int64_t>(o.detailBlocks, 0);
    for (const WarpAccess& a : run.accesses)
      if (a.block < keep) detail->accesses.push_back(a);
    detail->registers = k.regs;
    detail->occupancy = k.occ;
    detail->memory = k.mem;
    detail->timingInput = std::move(input);
    detail->timingOptions = to;
    detail->timingOptions.memory = &detail->memory;
    detail->timing = k.timing;
  }
  return k;
}

double dramBytes(const KernelRun& k) { return double(k.mem.totals.dramReadBytes + k.mem.totals.dramWriteBytes); }

// ---------------------------------------------------------------------------------------------
// JSON pieces.

const char* spaceName(MemSpace s) { return s == MemSpace::Global ? "global" : "shared"; }

Json countersJson(const MemCounters& c, MemSpace space) {
  Json j;
  j["executions"] = c.executions;
  j["requests"] = c.requests;
  j["thread_accesses"] = c.threadAccesses;
  if (space == MemSpace::Global) {
    j["sectors"] = c.sectors;
    j["lines"] = c.lines;
    j["sectors_per_request"] = c.sectorsPerRequest();
    j["bytes_requested"] = c.bytesRequested;
    j["bytes_used"] = c.bytesUsed;
    j["bytes_fetched"] = c.bytesFetched;
    j["efficiency"] = c.efficiency();
    j["l1_sector_hits"] = c.l1SectorHits;
    j["l1_hit_rate"] = c.l1HitRate();
    j["l2_sectors"] = c.l2Sectors;
    j["l2_sector_hits"] = c.l2SectorHits;
    j["l2_hit_rate"] = c.l2HitRate();
    j["dram_read_bytes"] = c.dramReadBytes;
  } else {
    j["wavefronts"] = c.wavefronts;
    j["ideal_wavefronts"] = c.idealWavefronts;
    j["bank_conflicts"] = c.bankConflicts;
    j["wavefronts_per_request"] = c.wavefrontsPerRequest();
  }
  return j;
}

// Each Nsight Compute metric's counterpart in the report (a path under memory.totals, or a
// formula over such paths), so a student can find the same number in both.
const std::map<std::string, std::string>& ourNames() {
  static const std::map<std::string, std::string> m = {
      {"smsp__sass_inst_executed_op_global_ld.sum", "global_load.executions"},
      {"smsp__sass_inst_executed_op_global_st.sum", "global_store.executions"},
      {"l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum", "global_load.requests"},
      {"l1tex__t_requests_pipe_lsu_mem_global_op_st.sum", "global_store.requests"},
      {"l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum", "global_load.sectors"},
      {"l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum", "global_store.sectors"},
      {"l1tex__t_bytes_pipe_lsu_mem_global_op_ld.sum", "global_load.bytes_fetched"},
      {"l1tex__t_bytes_pipe_lsu_mem_global_op_st.sum", "global_store.bytes_fetched"},
      {"l1tex__average_t_sectors_per_request_pipe_lsu_mem_global_op_ld.ratio", "global_load.sectors_per_request"},
      {"l1tex__average_t_sectors_per_request_pipe_lsu_mem_global_op_st.ratio", "global_store.sectors_per_request"},
      {"smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.pct", "100 x global_load.efficiency"},
      {"smsp__sass_average_data_bytes_per_sector_mem_global_op_st.pct", "100 x global_store.efficiency"},
      {"smsp__sass_inst_executed_op_shared_ld.sum", "shared_load.executions"},
      {"smsp__sass_inst_executed_op_shared_st.sum", "shared_store.executions"},
      {"l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum", "shared_load.wavefronts"},
      {"l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum", "shared_store.wavefronts"},
      {"l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum", "shared_load.bank_conflicts"},
      {"l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum", "shared_store.bank_conflicts"},
      {"l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_hit.sum", "global_load.l1_sector_hits"},
      {"l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_miss.sum", "global_load.sectors - l1_sector_hits"},
      {"l1tex__t_sector_pipe_lsu_mem_global_op_ld_hit_rate.pct", "100 x global_load.l1_hit_rate"},
      {"l1tex__t_sector_hit_rate.pct", "100 x l1 hits / sectors (loads + stores)"},
      {"lts__t_sectors_srcunit_tex_op_read.sum", "l2_read_sectors"},
      {"lts__t_sectors_srcunit_tex_op_write.sum", "l2_write_sectors"},
      {"lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum", "l2_read_hits"},
      {"lts__t_sectors_srcunit_tex_op_read_lookup_miss.sum", "l2_read_sectors - l2_read_hits"},
      {"lts__t_sectors_srcunit_tex_op_write_lookup_hit.sum", "l2_write_hits"},
      {"lts__t_sectors_srcunit_tex_op_write_lookup_miss.sum", "l2_write_sectors - l2_write_hits"},
      {"lts__t_sector_op_read_hit_rate.pct", "100 x l2_read_hits / l2_read_sectors"},
      {"lts__t_sector_op_write_hit_rate.pct", "100 x l2_write_hits / l2_write_sectors"},
      {"lts__t_sector_hit_rate.pct", "100 x l2 hits / l2 sectors (read + write)"},
      {"dram__sectors_read.sum", "dram_read_bytes / 32"},
      {"dram__sectors_write.sum", "dram_write_bytes_in_kernel / 32"},
      {"dram__bytes_read.sum", "dram_read_bytes"},
      {"dram__bytes_write.sum", "dram_write_bytes_in_kernel"},
  };
  return m;
}

Json memoryJson(const KernelRun& k) {
  const MemoryReport& r = k.mem;
  Json j;
  j["caches"] = r.caches;
  j["l1_data_bytes_per_sm"] = r.l1DataBytesPerSM;
  j["l2_bytes"] = r.l2Bytes;
  j["l1_ways"] = r.l1Ways;
  j["l2_ways"] = r.l2Ways;
  j["l2_fetch_bytes"] = r.l2FetchBytes;
  j["scale"] = r.scale;
  Json instrs = Json::array();
  for (const InstrMemStats& s : r.instructions) {
    Json i;
    i["instr"] = s.instr;
    i["line"] = s.loc.line;
    i["col"] = s.loc.col;
    bool known = s.instr >= 0 && s.instr < static_cast<int32_t>(k.instrs.size());
    i["op"] = known ? mnemonic(k.instrs[s.instr]->kind) : "?";
    i["space"] = spaceName(s.space);
    i["store"] = s.store;
    i["bytes_per_lane"] = s.bytesPerLane;
    i["counters"] = countersJson(s.counters, s.space);
    instrs.push_back(std::move(i));
  }
  j["instructions"] = std::move(instrs);
  Json lines = Json::array();
  for (const LineMemStats& s : r.lines) {
    Json l;
    l["line"] = s.line;
    l["space"] = spaceName(s.space);
    l["store"] = s.store;
    l["instrs"] = s.instrs;
    l["counters"] = countersJson(s.counters, s.space);
    lines.push_back(std::move(l));
  }
  j["lines"] = std::move(lines);
  const MemTotals& t = r.totals;
  Json tot;
  tot["global_load"] = countersJson(t.globalLoad, MemSpace::Global);
  tot["global_store"] = countersJson(t.globalStore, MemSpace::Global);
  tot["shared_load"] = countersJson(t.sharedLoad, MemSpace::Shared);
  tot["shared_store"] = countersJson(t.sharedStore, MemSpace::Shared);
  tot["l2_read_sectors"] = t.l2ReadSectors;
  tot["l2_read_hits"] = t.l2ReadHits;
  tot["l2_write_sectors"] = t.l2WriteSectors;
  tot["l2_write_hits"] = t.l2WriteHits;
  tot["dram_read_bytes"] = t.dramReadBytes;
  tot["dram_write_bytes"] = t.dramWriteBytes;
  tot["dram_write_bytes_in_kernel"] = t.dramWriteBytesInKernel;
  j["totals"] = std::move(tot);
  Json ncu = Json::array();
  for (const auto& [name, value] : r.ncuMetrics()) {
    auto it = ourNames().find(name);
    ncu.push_back({{"metric", name}, {"ours", it == ourNames().end() ? "" : it->second}, {"value", value}});
  }
  j["ncu_metrics"] = std::move(ncu);
  return j;
}

Json occupancyJson(const KernelRun& k) {
  const OccupancyResult& o = k.occ;
  auto limit = [](int v) { return v == kOccUnlimited ? Json(nullptr) : Json(v); };
  Json j;
  j["threads_per_block"] = o.threadsPerBlock;
  j["registers_per_thread"] = o.registersPerThread;
  j["shared_bytes_per_block"] = o.sharedBytesPerBlock;
  j["blocks_per_sm"] = o.activeBlocksPerSM;
  j["warps_per_sm"] = o.activeWarpsPerSM;
  j["occupancy"] = o.occupancy;
  j["limiter"] = limiterName(o.limiter);
  Json all = Json::array();
  for (OccLimiter l : {OccLimiter::Warps, OccLimiter::Registers, OccLimiter::SharedMemory, OccLimiter::Blocks})
    if (o.limitedBy(l)) all.push_back(limiterName(l));
  j["limiters"] = std::move(all);
  j["blocks_by"] = {{"warps", limit(o.blocksByWarps)},
                    {"registers", limit(o.blocksByRegisters)},
                    {"shared_memory", limit(o.blocksByShared)},
                    {"block_slots", limit(o.blocksBySlots)}};
  j["reason"] = o.reason;
  return j;
}

Json timingJson(const TimingResult& t) {
  Json j;
  j["time_us"] = t.timeUs;
  j["sm_time_us"] = t.smTimeUs;
  j["launch_overhead_us"] = t.timeUs - t.smTimeUs;
  j["cycles"] = t.cycles;
  j["clock_ghz"] = t.clockGHz;
  j["limiter"] = timeLimiterName(t.limiter);
  j["limiter_why"] = t.limiterWhy;
  j["active_sms"] = t.activeSMs;
  j["blocks_per_sm"] = t.blocksPerSM;
  j["blocks_simulated"] = t.blocksSimulated;
  j["extrapolated"] = t.extrapolated;
  j["cycles_per_block"] = t.cyclesPerBlock;
  j["resident_blocks_per_sm"] = t.residentBlocksPerSM;
  j["resident_warps_per_sm"] = t.residentWarpsPerSM;
  j["dram_bytes"] = t.dramBytes;
  j["l2_bytes"] = t.l2Bytes;
  j["achieved_dram_gbs"] = t.achievedDramGBs;
  j["bandwidth_bound_us"] = t.bandwidthBoundUs;
  j["dram_utilization"] = t.dramUtilization;
  j["l2_utilization"] = t.l2Utilization;
  j["issue_utilization"] = t.issueUtilization;
  j["little"] = {{"dram_bytes_in_flight", t.dramBytesInFlight},
                 {"dram_mean_latency_cycles", t.dramMeanLatency},
                 {"bytes_in_flight_to_saturate", t.littleBytesToSaturate}};
  Json states;
  for (int s = 0; s < kWarpStates; ++s) states[warpStateName(static_cast<WarpState>(s))] = t.warpStateShare[s];
  j["warp_states"] = std::move(states);
  return j;
}

Json samplingJson(const KernelRun& k) {
  Json j;
  j["grid_blocks"] = k.gridBlocks;
  j["blocks_run"] = k.blocksRun;
  j["sampled"] = k.blocksRun < k.gridBlocks;
  j["scale"] = k.blocksRun ? double(k.gridBlocks) / double(k.blocksRun) : 0.0;
  j["method"] = k.blocksRun < k.gridBlocks
                    ? "the first blocks_run blocks in grid order; memory counts multiplied by scale"
                    : "every block";
  return j;
}

// The fused/unfused comparison: each unfused kernel through the same path, over one Memory.
Json fusionJson(const ThreadCompilation& tc, const KernelRun& fused, const LaunchConfig& launch, const GpuSpec& gpu,
                const SimOptions& o) {
  UnfusedKernels u = unfuse(*tc.blockIR, launch);
  Memory memory = Memory::fromLaunch(u.launch);
  Json kernels = Json::array();
  double bytes = 0, time = 0;
  for (size_t i = 0; i < u.kernels.size(); ++i) {
    ThreadCompilation utc = compileToThreadIR(*u.kernels[i], u.launch, tc.numWarps);
    KernelRun r = simulateThreadIR(*utc.threadIR, u.launch, memory, gpu, o);
    bytes += dramBytes(r);
    time += r.timing.timeUs;
    Json kj;
    kj["name"] = r.name;
    kj["description"] = i < u.descriptions.size() ? u.descriptions[i] : "";
    kj["dram_read_bytes"] = r.mem.totals.dramReadBytes;
    kj["dram_write_bytes"] = r.mem.totals.dramWriteBytes;
    kj["time_us"] = r.timing.timeUs;
    kj["limiter"] = timeLimiterName(r.timing.limiter);
    kj["blocks_run"] = r.blocksRun;
    kernels.push_back(std::move(kj));
  }
  FusionTraffic traffic = fusionTraffic(*tc.blockIR, launch, u);
  double fusedBytes = dramBytes(fused);
  Json j;
  j["launches_fused"] = 1;
  j["launches_unfused"] = static_cast<int64_t>(u.kernels.size());
  j["dram_bytes_fused"] = fusedBytes;
  j["dram_bytes_unfused"] = bytes;
  j["dram_ratio"] = fusedBytes > 0 ? bytes / fusedBytes : 0.0;
  j["time_us_fused"] = fused.timing.timeUs;
  j["time_us_unfused"] = time;
  j["time_ratio"] = fused.timing.timeUs > 0 ? time / fused.timing.timeUs : 0.0;
  j["compulsory"] = {{"fused_bytes", traffic.fusedBytes},
                     {"unfused_bytes", traffic.unfusedBytes},
                     {"ratio", traffic.ratio()},
                     {"estimated", traffic.fused.estimated}};
  j["kernels"] = std::move(kernels);
  return j;
}

// The measured section: what a tl-ptx results file (stages/ptx/Results.h) says beside what
// the model predicts. Missing fields read as 0 (a results file of a run that did not time).
Json measuredJson(const nlohmann::json& m, const KernelRun& k) {
  auto num = [&](const char* ptr) {
    const nlohmann::json::json_pointer p(ptr);
    return m.contains(p) && m.at(p).is_number() ? m.at(p).get<double>() : 0.0;
  };
  double medianUs = 1000 * num("/time/median_ms");
  int blocks = static_cast<int>(num("/resources/blocks_per_sm"));
  Json j;
  j["source"] = m.value("source", "");
  j["device"] = m.value("/gpu/device"_json_pointer, std::string());
  j["sizes"] = Json::parse(m.value("sizes", nlohmann::json::object()).dump());
  j["median_us"] = medianUs;
  j["gb_per_s"] = num("/throughput/gb_per_s");
  j["registers"] = static_cast<int>(num("/resources/registers"));
  j["blocks_per_sm"] = blocks;
  j["predicted_us"] = k.timing.timeUs;
  j["time_error"] = medianUs > 0 ? (k.timing.timeUs - medianUs) / medianUs : 0.0;
  j["blocks_per_sm_predicted"] = k.occ.activeBlocksPerSM;
  j["occupancy_agrees"] = blocks == k.occ.activeBlocksPerSM;
  return j;
}

// ---------------------------------------------------------------------------------------------
// Text.

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

void instructionTable(const Json& mem, std::ostringstream& os) {
  os << "  memory instructions (counts for the whole grid):\n    " << pad("line:col", 9) << pad("op", 10)
     << pad("space", 7) << pad("B/lane", 7, true) << pad("requests", 11, true) << pad("sectors", 12, true)
     << pad("sect/req", 9, true) << pad("eff%", 7, true) << pad("wavefronts/ideal", 20, true) << "\n";
  for (const Json& i : mem["instructions"]) {
    const Json& c = i["counters"];
    bool global = i["space"] == "global";
    std::string where = std::to_string(i["line"].get<uint32_t>()) + ":" + std::to_string(i["col"].get<uint32_t>());
    os << "    " << pad(where, 9) << pad(i["op"].get<std::string>(), 10) << pad(i["space"].get<std::string>(), 7)
       << pad(std::to_string(i["bytes_per_lane"].get<int>()), 7, true)
       << pad(grouped(c["requests"].get<double>()), 11, true)
       << pad(global ? grouped(c["sectors"].get<double>()) : "-", 12, true)
       << pad(global ? fmt("%.2f", c["sectors_per_request"].get<double>()) : "-", 9, true)
       << pad(global ? fmt("%.1f", 100 * c["efficiency"].get<double>()) : "-", 7, true)
       << pad(global ? "-"
                     : grouped(c["wavefronts"].get<double>()) + "/" + grouped(c["ideal_wavefronts"].get<double>()),
              20, true)
       << "\n";
  }
}

}  // namespace

std::string formatSimReport(const Json& r) {
  std::ostringstream os;
  const Json &launch = r["launch"], &gpu = r["gpu"], &s = r["sampling"], &occ = r["occupancy"];
  os << "tl-sim: " << r["kernel"].get<std::string>() << " on " << gpu["name"].get<std::string>() << " ("
     << gpu["arch"].get<std::string>() << "), " << s["grid_blocks"].get<int64_t>() << " blocks x "
     << launch["num_warps"].get<int>() << " warps, " << launch["shared_bytes_per_block"].get<int64_t>()
     << " B shared/block\n";
  if (s["sampled"].get<bool>())
    os << "  sampling: ran the first " << s["blocks_run"].get<int64_t>() << " of " << s["grid_blocks"].get<int64_t>()
       << " blocks; counts scaled x" << fmt("%.3g", s["scale"].get<double>()) << " (assumes the blocks are alike)\n";
  else
    os << "  sampling: none (all " << s["blocks_run"].get<int64_t>() << " blocks run)\n";
  const Json& regs = r["registers"];
  os << "  registers: " << regs["per_thread"].get<int>() << " per thread ("
     << (regs["estimate"].get<bool>() ? "ESTIMATE: " : "") << regs["source"].get<std::string>() << ")\n";
  os << "  occupancy: " << occ["blocks_per_sm"].get<int>() << " blocks/SM = " << occ["warps_per_sm"].get<int>()
     << " warps (" << fmt("%.0f", 100 * occ["occupancy"].get<double>()) << "%), limited by "
     << occ["limiter"].get<std::string>();
  if (!occ["reason"].get<std::string>().empty()) os << ": " << occ["reason"].get<std::string>();
  os << "\n";

  const Json& mem = r["memory"];
  instructionTable(mem, os);
  os << "  kernel totals:\n    " << pad("Nsight Compute metric", 72) << pad("ours (memory.totals.)", 42)
     << "value\n";
  for (const Json& m : mem["ncu_metrics"])
    os << "    " << pad(m["metric"].get<std::string>(), 72) << pad(m["ours"].get<std::string>(), 42)
       << metricValue(m["metric"].get<std::string>(), m["value"].get<double>()) << "\n";
  const Json& tot = mem["totals"];
  os << "  DRAM: " << grouped(tot["dram_read_bytes"].get<double>()) << " B read, "
     << grouped(tot["dram_write_bytes"].get<double>()) << " B written\n";

  const Json& t = r["timing"];
  os << "  time: " << fmt("%.2f", t["time_us"].get<double>()) << " us predicted (SM "
     << fmt("%.2f", t["sm_time_us"].get<double>()) << " us + launch " << fmt("%.2f", t["launch_overhead_us"].get<double>())
     << " us; " << grouped(t["cycles"].get<double>()) << " cycles), limited by " << t["limiter"].get<std::string>()
     << "\n        " << t["limiter_why"].get<std::string>() << "\n";

  if (r.contains("measured")) {
    const Json& m = r["measured"];
    os << "  measured (" << m["device"].get<std::string>() << "): " << fmt("%.2f", m["median_us"].get<double>())
       << " us median vs " << fmt("%.2f", m["predicted_us"].get<double>()) << " us predicted ("
       << fmt("%+.1f", 100 * m["time_error"].get<double>()) << "%); blocks/SM: driver "
       << m["blocks_per_sm"].get<int>() << ", model " << m["blocks_per_sm_predicted"].get<int>()
       << (m["occupancy_agrees"].get<bool>() ? " (equal)" : " (DIFFERENT)") << "\n";
  }
  if (r.contains("fusion")) {
    const Json& f = r["fusion"];
    int64_t launches = f["launches_unfused"].get<int64_t>();
    os << "  fusion: unfused " << launches << (launches == 1 ? " launch, " : " launches, ")
       << grouped(f["dram_bytes_unfused"].get<double>()) << " B DRAM, " << fmt("%.2f", f["time_us_unfused"].get<double>())
       << " us; fused 1 launch, " << grouped(f["dram_bytes_fused"].get<double>()) << " B, "
       << fmt("%.2f", f["time_us_fused"].get<double>()) << " us; unfused/fused: bytes "
       << fmt("%.2f", f["dram_ratio"].get<double>()) << "x, time " << fmt("%.2f", f["time_ratio"].get<double>())
       << "x (compulsory bytes " << fmt("%.2f", f["compulsory"]["ratio"].get<double>()) << "x)\n";
    for (const Json& k : f["kernels"])
      os << "    " << pad(k["name"].get<std::string>(), 28) << pad(grouped(k["dram_read_bytes"].get<double>()), 12, true)
         << "B read " << pad(grouped(k["dram_write_bytes"].get<double>()), 12, true) << "B written "
         << fmt("%8.2f", k["time_us"].get<double>()) << " us  (" << k["limiter"].get<std::string>() << ")\n";
  }
  // Table cells end in a separating space: drop it at the end of each line.
  std::string text = os.str(), trimmed;
  for (char c : text) {
    if (c == '\n')
      while (!trimmed.empty() && trimmed.back() == ' ') trimmed.pop_back();
    trimmed += c;
  }
  return trimmed;
}

SimReport simulateKernel(const Function& frontEndIR, const LaunchConfig& launch, const SimOptions& options) {
  if (options.sampleBlocks < 0) throw std::invalid_argument("sample blocks must be >= 0");
  GpuSpec gpu = loadGpu(options.gpu);
  SimOptions o = options;
  if (!o.registers && o.measured) {
    // What the driver said about the compiled kernel is better than an estimate (fused kernel
    // only: the unfused kernels were not the ones measured).
    int measuredRegs = o.measured->value("/resources/registers"_json_pointer, 0);
    if (measuredRegs > 0) {
      bool first = true;
      o.registers = [measuredRegs, first](const Function& threadIR) mutable {
        if (!first) return estimateRegisters(threadIR);
        first = false;
        return compiledRegisters(measuredRegs, "driver (CU_FUNC_ATTRIBUTE_NUM_REGS, from the results file)");
      };
    }
  }
  ThreadCompilation tc = compileToThreadIR(frontEndIR, launch, o.numWarps);
  Memory memory = Memory::fromLaunch(launch);
  auto detail = o.keepDetail ? std::make_shared<SimDetail>() : nullptr;
  KernelRun k = simulateThreadIR(*tc.threadIR, launch, memory, gpu, o, detail.get());

  Json j;
  j["schema_version"] = kSimReportSchemaVersion;
  j["tool"] = "tl-sim";
  j["kernel"] = k.name;
  j["gpu"] = {{"key", gpu.key},
              {"name", gpu.name},
              {"arch", gpu.arch},
              {"sm_count", gpu.smCount},
              {"clock_ghz", gpu.smClockGHz},
              {"dram_bandwidth_gbs", gpu.dramBandwidthGBs}};
  j["launch"] = {{"grid", launch.grid},
                 {"num_warps", k.numWarps},
                 {"threads_per_block", k.numWarps * 32},
                 {"shared_bytes_per_block", k.sharedBytes}};
  j["sampling"] = samplingJson(k);
  j["execution"] = {{"blocks", k.stats.blocks},
                    {"warp_instructions", k.stats.warpInstructions},
                    {"barriers", k.stats.barriers},
                    {"divergent_branches", k.stats.divergentBranches},
                    {"access_records", k.accessRecords}};
  j["registers"] = {{"per_thread", k.regs.registers}, {"estimate", k.regs.estimate}, {"source", k.regs.source}};
  j["occupancy"] = occupancyJson(k);
  j["memory"] = memoryJson(k);
  j["timing"] = timingJson(k.timing);
  if (o.unfused) j["fusion"] = fusionJson(tc, k, launch, gpu, o);
  if (o.measured) j["measured"] = measuredJson(*o.measured, k);

  SimReport report;
  report.summary = formatSimReport(j);
  report.json = std::move(j);
  report.chromeTrace = chromeTraceJson(k.timing);
  if (detail) {
    detail->compilation = std::move(tc);
    report.detail = std::move(detail);
  }
  return report;
}

}  // namespace tl
