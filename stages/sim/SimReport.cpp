// The simulator's report (see SimReport.h): runs one kernel through every model of sim/ and
// gathers the results into JSON (docs/sim.md, "The report", is the schema); SimSummary.cpp
// renders the JSON as a readable summary. The flow, per kernel (fused, then each unfused kernel):
//
//   compileToThreadIR -> runThreadIR (accesses + warp traces, first N blocks)
//     -> estimateRegisters + occupancy -> analyzeMemory (scaled to the grid) -> predictTime
//
// The summary is built from the JSON alone (formatSimReport, SimSummary.cpp), so what tl-sim
// prints and what the report file holds can never disagree.
#include "sim/SimReport.h"

#include "ir/FileRead.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>

#include "ir/IR.h"
#include "runtime/Hash.h"
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
  bool stoppedAtRecordCap = false;  // fewer blocks ran than asked: SimOptions::maxTraceBytes
  ExecStats stats;
  int64_t accessRecords = 0;
  std::vector<std::string> notes;  // the executor's notes (ExecResult::notes): what ran unlike the source says
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
  eo.maxRecordBytes = o.maxTraceBytes;
  ExecResult run = runThreadIR(threadIR, launch, memory, eo);
  k.stats = run.stats;
  k.blocksRun = run.stats.blocks;
  k.stoppedAtRecordCap = run.stoppedAtRecordCap;
  k.accessRecords = static_cast<int64_t>(run.accesses.size());
  k.notes = run.notes;

  k.regs = o.registers ? o.registers(threadIR) : estimateRegisters(threadIR);
  k.occ = occupancy(gpu, k.numWarps * 32, k.regs.registers, static_cast<int>(k.sharedBytes));

  MemoryModelOptions mo;
  mo.totalBlocks = k.gridBlocks;
  for (const Buffer& b : memory.buffers()) mo.buffers.push_back({b.name, b.base, uint64_t(b.bytes.size())});
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
    j["ideal_sectors"] = c.idealSectors;
    j["sectors_per_ideal"] = c.sectorsPerIdeal();
    j["sectors_per_128B"] = c.sectorsPer128B();
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
      {"smsp__sass_inst_executed_op_global_atom.sum", "global_atomic.executions"},
      {"l1tex__t_requests_pipe_lsu_mem_global_op_atom.sum", "global_atomic.requests"},
      {"l1tex__t_sectors_pipe_lsu_mem_global_op_atom.sum", "global_atomic.sectors"},
      {"lts__t_sectors_op_atom.sum", "global_atomic.l2_sectors"},
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
    i["atomic"] = s.atomic;
    i["bytes_per_lane"] = s.bytesPerLane;
    i["buffers"] = s.buffers;
    i["counters"] = countersJson(s.counters, s.space);
    instrs.push_back(std::move(i));
  }
  j["instructions"] = std::move(instrs);
  // A line's atomics: how many of its instructions are atomics (the memory model groups a line's
  // accesses by space and direction, and an atomic counts as a store there).
  std::map<int32_t, bool> atomicInstr;
  for (const InstrMemStats& s : r.instructions) atomicInstr[s.instr] = s.atomic;
  Json lines = Json::array();
  for (const LineMemStats& s : r.lines) {
    Json l;
    l["line"] = s.line;
    l["space"] = spaceName(s.space);
    l["store"] = s.store;
    l["atomics"] = std::count_if(s.instrs.begin(), s.instrs.end(), [&](int32_t i) { return atomicInstr[i]; });
    l["instrs"] = s.instrs;
    l["buffers"] = s.buffers;
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
  tot["global_atomic"] = countersJson(t.globalAtomic, MemSpace::Global);
  tot["l2_read_sectors"] = t.l2ReadSectors;
  tot["l2_read_hits"] = t.l2ReadHits;
  tot["l2_write_sectors"] = t.l2WriteSectors;
  tot["l2_write_hits"] = t.l2WriteHits;
  tot["dram_read_bytes"] = t.dramReadBytes;
  tot["dram_write_bytes"] = t.dramWriteBytes;
  tot["dram_write_bytes_in_kernel"] = t.dramWriteBytesInKernel;
  j["totals"] = std::move(tot);
  Json ncu = Json::array();
  std::vector<std::pair<std::string, double>> metrics = r.ncuMetrics();
  for (auto& m : r.ncuAtomicMetrics()) metrics.push_back(std::move(m));
  for (const auto& [name, value] : metrics) {
    auto it = ourNames().find(name);
    ncu.push_back({{"metric", name}, {"ours", it == ourNames().end() ? "" : it->second}, {"value", value}});
  }
  j["ncu_metrics"] = std::move(ncu);
  return j;
}

Json occupancyJson(const KernelRun& k, const GpuSpec& gpu) {
  const OccupancyResult& o = k.occ;
  auto limit = [](int v) { return v == kOccUnlimited ? Json(nullptr) : Json(v); };
  Json j;
  j["threads_per_block"] = o.threadsPerBlock;
  j["registers_per_thread"] = o.registersPerThread;
  j["shared_bytes_per_block"] = o.sharedBytesPerBlock;
  j["blocks_per_sm"] = o.activeBlocksPerSM;
  j["warps_per_sm"] = o.activeWarpsPerSM;
  j["occupancy"] = o.occupancy;
  j["max_warps_per_sm"] = gpu.maxWarpsPerSM;
  j["theoretical"] = o.occupancy;
  j["achieved"] = k.timing.achievedOccupancy;
  j["achieved_warps_per_sm"] = k.timing.achievedWarpsPerSM;
  j["achieved_method"] =
      "timing model: warps active (launched, not exited) averaged over each SM's active cycles, over the " +
      std::to_string(k.timing.activeSMs) + " SMs that run blocks, / max_warps_per_sm";
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
  j["shared_reserved_bytes_per_block"] = gpu.reservedSharedPerBlock;
  j["shared_allocated_bytes_per_block"] = o.sharedAllocatedPerBlock;
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
  j["timeline_truncated"] = t.timelineTruncated;  // the Chrome trace keeps only the beginning
  j["cycles_per_block"] = t.cyclesPerBlock;
  j["resident_blocks_per_sm"] = t.residentBlocksPerSM;
  j["resident_warps_per_sm"] = t.residentWarpsPerSM;
  j["active_cycles_per_sm"] = t.activeCyclesPerSM;
  j["dram_bytes"] = t.dramBytes;
  j["l2_bytes"] = t.l2Bytes;
  j["achieved_dram_gbs"] = t.achievedDramGBs;
  j["bandwidth_bound_us"] = t.bandwidthBoundUs;
  j["atomic_serial_cycles"] = t.atomicSerialCycles;  // the hottest address's updates, one per cycle
  j["dram_utilization"] = t.dramUtilization;
  j["l2_utilization"] = t.l2Utilization;
  j["issue_utilization"] = t.issueUtilization;
  j["tensor_utilization"] = t.tensorUtilization;  // mma: tensor-core busy cycles / (cycles x schedulers)
  j["mma_instructions"] = t.mmaInstructions;
  j["little"] = {{"dram_bytes_in_flight", t.dramBytesInFlight},
                 {"dram_mean_latency_cycles", t.dramMeanLatency},
                 {"bytes_in_flight_to_saturate", t.littleBytesToSaturate}};
  Json states;
  for (int s = 0; s < kWarpStates; ++s) states[warpStateName(static_cast<WarpState>(s))] = t.warpStateShare[s];
  j["warp_states"] = std::move(states);
  return j;
}

Json samplingJson(const KernelRun& k, const SimOptions& o) {
  Json j;
  j["grid_blocks"] = k.gridBlocks;
  j["blocks_run"] = k.blocksRun;
  j["sampled"] = k.blocksRun < k.gridBlocks;
  j["scale"] = k.blocksRun ? double(k.gridBlocks) / double(k.blocksRun) : 0.0;
  j["method"] = k.blocksRun < k.gridBlocks
                    ? "the first blocks_run blocks in grid order; memory counts multiplied by scale"
                    : "every block";
  // Why blocks_run is what it is: the block budget (--sample-blocks, else the default), or the
  // cap on the executor's records (--trace-memory), which stopped it sooner.
  j["limited_by"] = k.stoppedAtRecordCap ? "trace_memory" : (k.blocksRun < k.gridBlocks ? "block_budget" : "none");
  j["trace_memory_cap_mib"] = o.maxTraceBytes >> 20;
  return j;
}

// The fused/unfused comparison: each unfused kernel through the same path, over one Memory.
Json fusionJson(const ThreadCompilation& tc, const KernelRun& fused, const LaunchConfig& launch, const GpuSpec& gpu,
                const SimOptions& o, const UnfusedKernels& u) {
  Memory memory = Memory::fromLaunch(u.launch);
  Json kernels = Json::array();
  double bytes = 0, time = 0;
  for (size_t i = 0; i < u.kernels.size(); ++i) {
    ThreadCompileOptions co;
    co.numWarps = tc.numWarps;
    co.keepLayouts = tc.keepLayouts;  // the eager kernels keep the source's layouts too
    ThreadCompilation utc = compileToThreadIR(*u.kernels[i], u.launch, co);
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

bool boolAt(const nlohmann::json& m, const char* ptr) {
  const nlohmann::json::json_pointer p(ptr);
  return m.is_object() && m.contains(p) && m.at(p).is_boolean() && m.at(p).get<bool>();
}

std::string stringAt(const nlohmann::json& m, const char* ptr) {
  const nlohmann::json::json_pointer p(ptr);
  return m.is_object() && m.contains(p) && m.at(p).is_string() ? m.at(p).get<std::string>() : std::string();
}

double numberAt(const nlohmann::json& m, const char* ptr) {
  const nlohmann::json::json_pointer p(ptr);
  return m.contains(p) && m.at(p).is_number() ? m.at(p).get<double>() : 0.0;
}

// The measured section: what a tl-ptx results file (stages/ptx/Results.h) says beside what
// the model predicts. A number the file does not have (no GPU run: no time, no driver
// occupancy) is null, and `timed` / `note` say why.
// Whether a results file ran the launch this report simulates: the same sizes (names and values
// as text), grid and num_warps.
bool sameLaunch(const nlohmann::json& m, const Json& launch) {
  if (!m.contains("sizes") || !m["sizes"].is_object() || !m.contains("grid") || !m.contains("num_warps")) return false;
  // Both sides as nlohmann::json (clang's C++20 finds json == ordered_json ambiguous).
  auto plain = [&](const char* key) { return nlohmann::json::parse(launch[key].dump()); };
  return m["sizes"] == plain("sizes") && m["grid"] == plain("grid") && m["num_warps"] == plain("num_warps");
}

Json measuredJson(const nlohmann::json& m, const KernelRun& k, const std::string& sourceSha256, const Json& launch) {
  std::string why;
  const bool timed = measuredHasTiming(m, &why);
  const double medianUs = 1000 * numberAt(m, "/time/median_ms");
  const double gbps = numberAt(m, "/throughput/gb_per_s");
  const int regs = static_cast<int>(numberAt(m, "/resources/registers"));
  const int blocks = static_cast<int>(numberAt(m, "/resources/blocks_per_sm"));
  auto orNull = [](bool known, const Json& v) { return known ? v : Json(nullptr); };
  Json j;
  j["source"] = stringAt(m, "/source");
  const std::string theirs = stringAt(m, "/source_sha256");
  j["source_sha256"] = orNull(!theirs.empty(), theirs);
  j["source_matches"] = orNull(!theirs.empty() && !sourceSha256.empty(), theirs == sourceSha256);
  j["launch_matches"] = sameLaunch(m, launch);
  j["gpu_ran"] = boolAt(m, "/gpu/ran");
  j["timed"] = timed;
  j["note"] = why;
  j["device"] = stringAt(m, "/gpu/device");
  j["sizes"] = m.contains("sizes") && m["sizes"].is_object() ? Json::parse(m["sizes"].dump()) : Json::object();
  j["median_us"] = orNull(timed, medianUs);
  j["gb_per_s"] = orNull(timed && gbps > 0, gbps);
  j["registers"] = orNull(regs > 0, regs);
  j["blocks_per_sm"] = orNull(blocks > 0, blocks);
  j["predicted_us"] = k.timing.timeUs;
  j["time_error"] = orNull(timed, timed ? (k.timing.timeUs - medianUs) / medianUs : 0.0);
  j["blocks_per_sm_predicted"] = k.occ.activeBlocksPerSM;
  j["occupancy_agrees"] = orNull(blocks > 0, blocks == k.occ.activeBlocksPerSM);
  return j;
}

// The GPU file loadGpu read, relative to the source tree when inside it ("sim/gpus/h200.json"),
// so reports from two clones agree.
std::string gpuFile(const GpuSpec& gpu) {
  namespace fs = std::filesystem;
  if (gpu.file.empty()) return "";
  std::error_code ec;
  const fs::path abs = fs::weakly_canonical(gpu.file, ec);
  const fs::path root = fs::weakly_canonical(fs::path(TL_SOURCE_DIR), ec);
  const fs::path rel = abs.lexically_relative(root);
  if (!rel.empty() && *rel.begin() != "..") return rel.generic_string();
  return abs.generic_string();
}

// "source": the kernel file as given and the SHA-256 of its text (sha256Hex, as tl-ptx's results
// files record it).
Json sourceJson(const SimOptions& o, std::string* sha) {
  std::string text = o.sourceText;
  bool known = !text.empty();
  if (!known && !o.sourcePath.empty()) {
    if (std::optional<std::string> t = tryReadFileBounded(o.sourcePath, FileKind::KernelSource, nullptr)) {
      text = std::move(*t);
      known = true;
    }
  }
  *sha = known ? sha256Hex(text) : "";
  Json j;
  j["path"] = o.sourcePath.empty() ? Json(nullptr) : Json(o.sourcePath);
  j["sha256"] = known ? Json(*sha) : Json(nullptr);
  j["bytes"] = known ? Json(text.size()) : Json(nullptr);
  return j;
}

// "launch": what ran — the grid, warps, shared memory, and every @launch name as evaluated.
Json launchJson(const LaunchConfig& launch, const KernelRun& k) {
  Json j;
  j["grid"] = launch.grid;
  j["num_warps"] = k.numWarps;
  j["threads_per_block"] = k.numWarps * 32;
  j["shared_bytes_per_block"] = k.sharedBytes;
  Json sizes = Json::object();
  // As a tl-ptx results file's "sizes": the names, without grid, num_warps and the buffers.
  for (const auto& [name, value] : launch.names)
    if (name != "grid" && name != "num_warps" && !launch.buffer(name)) sizes[name] = value;
  j["sizes"] = std::move(sizes);
  Json cx = Json::object();
  for (const auto& [name, value] : launch.constexprs) cx[name] = value;
  j["constexprs"] = std::move(cx);
  Json sc = Json::object();
  for (const auto& [name, v] : launch.scalars) sc[name] = isFloat(v.dtype) ? Json(v.f) : Json(v.i);
  j["scalars"] = std::move(sc);
  Json bufs = Json::array();
  for (const BufferSpec& b : launch.buffers) {
    int64_t n = 1;
    for (int64_t d : b.shape) n *= d;
    bufs.push_back({{"name", b.param},
                    {"dtype", dtypeName(b.dtype)},
                    {"shape", b.shape},
                    {"bytes", n * dtypeBytes(b.dtype)},
                    {"output", b.output}});
  }
  j["buffers"] = std::move(bufs);
  return j;
}

}  // namespace

bool measuredHasTiming(const nlohmann::json& m, std::string* why) {
  auto no = [&](const std::string& reason) {
    if (why) *why = reason;
    return false;
  };
  if (!m.is_object()) return no("not a tl-ptx results file (not a JSON object)");
  const nlohmann::json::json_pointer ran("/gpu/ran"), skipped("/gpu/skipped");
  if (!m.contains(ran) || !m.at(ran).is_boolean())
    return no("not a tl-ptx results file (no gpu.ran): no GPU run, no measured time");
  if (!m.at(ran).get<bool>()) {
    std::string reason = m.contains(skipped) && m.at(skipped).is_string() ? m.at(skipped).get<std::string>() : "";
    return no("the results file has no GPU run (tl-ptx ran without a GPU" + (reason.empty() ? "" : ": " + reason) +
              "), so there is no measured time to compare with");
  }
  if (!(numberAt(m, "/time/median_ms") > 0))
    return no("the results file's GPU run has no time (time.median_ms missing or 0)");
  if (why) why->clear();
  return true;
}

SimReport simulateKernel(const Function& frontEndIR, const LaunchConfig& launch, const SimOptions& options) {
  if (options.sampleBlocks < 0) throw std::invalid_argument("sample blocks must be >= 0");
  GpuSpec gpu = loadGpu(options.gpu);
  SimOptions o = options;
  if (!o.registers && o.measured) {
    // What the driver said about the compiled kernel is better than an estimate (fused kernel
    // only: the unfused kernels were not the ones measured).
    int measuredRegs = static_cast<int>(numberAt(*o.measured, "/resources/registers"));
    if (measuredRegs > 0) {
      bool first = true;
      const bool ran = boolAt(*o.measured, "/gpu/ran");
      o.registers = [measuredRegs, first, ran](const Function& threadIR) mutable {
        if (!first) return estimateRegisters(threadIR);
        first = false;
        return compiledRegisters(measuredRegs, ran ? "driver (CU_FUNC_ATTRIBUTE_NUM_REGS, from the results file)"
                                                   : "ptxas (from the results file, no GPU run)");
      };
    }
  }
  ThreadCompileOptions tco;
  tco.numWarps = o.numWarps;
  tco.keepLayouts = o.keepLayouts;
  tco.wgmma = o.wgmma;
  ThreadCompilation tc = compileToThreadIR(frontEndIR, launch, tco);
  Memory memory = Memory::fromLaunch(launch);
  auto detail = o.keepDetail ? std::make_shared<SimDetail>() : nullptr;
  KernelRun k = simulateThreadIR(*tc.threadIR, launch, memory, gpu, o, detail.get());

  std::string sha;
  Json j;
  j["schema_version"] = kSimReportSchemaVersion;
  j["tool"] = "tl-sim";
  j["tool_version"] = releaseVersion();
  j["kernel"] = k.name;
  j["source"] = sourceJson(o, &sha);
  j["gpu"] = {{"key", gpu.key},
              {"file", gpuFile(gpu)},
              {"name", gpu.name},
              {"arch", gpu.arch},
              {"sm_count", gpu.smCount},
              {"clock_ghz", gpu.smClockGHz},
              {"dram_bandwidth_gbs", gpu.dramBandwidthGBs}};
  j["launch"] = launchJson(launch, k);
  j["compile"] = {{"keep_layouts", tc.keepLayouts}, {"wgmma", tc.wgmma}};
  j["sampling"] = samplingJson(k, o);
  j["execution"] = {{"blocks", k.stats.blocks},
                    {"warp_instructions", k.stats.warpInstructions},
                    {"barriers", k.stats.barriers},
                    {"divergent_branches", k.stats.divergentBranches},
                    {"atomics", k.stats.atomics},
                    {"printed_lines", k.stats.printedLines},
                    {"asserts_checked", k.stats.assertsChecked},
                    {"access_records", k.accessRecords},
                    {"notes", k.notes}};
  j["registers"] = {{"per_thread", k.regs.registers}, {"estimate", k.regs.estimate}, {"source", k.regs.source}};
  j["occupancy"] = occupancyJson(k, gpu);
  j["memory"] = memoryJson(k);
  j["timing"] = timingJson(k.timing);
  if (o.unfused) {
    int64_t count = countUnfusedKernels(*tc.blockIR, launch);
    if (count <= kMaxUnfusedKernels)
      j["fusion"] = fusionJson(tc, k, launch, gpu, o, unfuse(*tc.blockIR, launch));
    else
      j["fusion_skipped"] = "the unfused version has " + std::to_string(count) + " kernels, more than the " +
                            std::to_string(kMaxUnfusedKernels) + " tl-sim simulates (each is compiled and assembled)";
  }
  if (o.measured) j["measured"] = measuredJson(*o.measured, k, sha, j["launch"]);

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
