// The memory model: turns the executor's WarpAccess stream (sim/ThreadExecutor.h) into the
// numbers Nsight Compute reports for global memory, shared memory, L1, L2 and DRAM — per
// instruction, per source line and per kernel. How each number is counted, with sources and
// worked examples: docs/sim.md, sections "Global memory", "Shared memory", "Caches and DRAM".
//
//   ExecResult run = runThreadIR(fn, launch, memory);
//   MemoryReport rep = analyzeMemory(run.accesses, loadGpu("h200"));
//   for (auto& [name, value] : rep.ncuMetrics()) ...   // "dram__bytes_read.sum", 787456
//
// What happens to each access, in stream order:
//   global load:  coalesce (sim/Coalescing.h) -> each sector looked up in the L1 of the SM the
//                 block runs on (block id % smCount); L1 misses go to the L2 (one for the chip);
//                 L2 misses are filled from DRAM (l2FetchBytes granularity)
//   global store: coalesce -> L1 is write-through without allocation (a sector present in L1 is
//                 updated: an L1 hit) -> every sector is written to L2 (write-back, allocates
//                 without reading DRAM) -> dirty sectors reach DRAM when evicted, or at kernel end
//   global atomic: coalesce -> L1 is bypassed (atomics are performed at the L2, as on NVIDIA
//                 GPUs since Kepler) -> each sector is read in L2 (a miss fills it from DRAM)
//                 and written back dirty: an L2 read-modify-write. Counted apart from loads
//                 and stores (MemTotals::globalAtomic, InstrMemStats::atomic)
//   shared:       bank conflicts (sim/Banks.h); no cache involved
//
// Assumptions a reader must know (docs/sim.md explains each):
//   - the stream is processed in the order given: the executor runs blocks one after another,
//     warp by warp, while a GPU runs many blocks per SM at once and many SMs in parallel, so
//     the caches see a far tidier order than the hardware's (reuse distances are shorter);
//   - blocks go to SMs round-robin (block b on SM b % smCount), the block scheduler's first
//     approximation;
//   - caches are LRU with the set index = line address modulo sets (hardware hashes);
//   - one WarpAccess = one SASS instruction = one request (an executor access group of `vec`
//     registers is what one LDG/STG/LDS/STS moves).
//
// Sampling: pass the accesses of a subset of blocks (ExecOptions::maxBlocks) and set
// MemoryModelOptions::totalBlocks; every count (not the ratios) is then multiplied by
// totalBlocks / blocksAnalyzed, and MemoryReport::scale says by how much. Cache hit counts
// scale linearly too, which assumes the sampled blocks are typical.
//
// Expects: accesses as the executor records them (1..16 bytes per lane; others throw
// std::invalid_argument naming the instruction); a GpuSpec with 32-byte sectors in 128-byte lines.
// Guarantees: plain data out (no printing); deterministic; O(accesses x sectors x ways) time and
// no allocation per access after the first touch of an instruction.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "sim/Banks.h"
#include "sim/Cache.h"
#include "sim/Coalescing.h"
#include "sim/Gpu.h"
#include "sim/ThreadExecutor.h"

namespace tl {

// One named range of addresses [base, base + bytes): a buffer bound to a pointer parameter.
struct AddressRange {
  std::string name;   // the pointer parameter ("x_ptr")
  uint64_t base = 0;
  uint64_t bytes = 0;
};

struct MemoryModelOptions {
  bool caches = true;             // simulate L1/L2/DRAM (false: coalescing and banks only)
  int l1Ways = 4;                 // L1 associativity (an assumption; see docs/sim.md)
  int l2Ways = 16;                // L2 associativity
  int64_t l1DataBytes = -1;       // L1 data capacity per SM; -1: the GPU's unified L1 minus the
                                  // shared-memory carve-out picked for sharedBytesPerSM
  int64_t sharedBytesPerSM = 0;   // shared memory the blocks resident on one SM use together
                                  // (the occupancy model knows); picks the carve-out
  int l2FetchBytes = 32;          // DRAM read granularity of an L2 miss: 32, 64 or 128 bytes
  bool writeBackAtEnd = true;     // count the sectors still dirty at kernel end as DRAM writes
  int64_t totalBlocks = 0;        // > blocks analyzed: scale counts up (sampling, see above)
  // Named address ranges (the launch's buffers, runtime/Memory.h): each global instruction
  // learns which of them its accesses touched (InstrMemStats::buffers). Empty: none named.
  std::vector<AddressRange> buffers;
};

// Counts for a group of warp-level accesses (one instruction, one line, or a kernel total).
struct MemCounters {
  int64_t executions = 0;       // warp-level instruction executions (WarpAccess records)
  int64_t requests = 0;         // requests to L1TEX: one per execution
  int64_t threadAccesses = 0;   // active lanes summed over executions
  // Global memory
  int64_t sectors = 0;          // distinct 32-byte sectors per request, summed
  int64_t lines = 0;            // distinct 128-byte lines per request, summed
  int64_t bytesRequested = 0;   // active lanes x bytes per lane
  int64_t bytesUsed = 0;        // distinct bytes per request (<= bytesFetched)
  int64_t bytesFetched = 0;     // sectors x 32
  // What the same bytes need when perfectly coalesced: per request, the fewest 32-byte sectors
  // that can hold the distinct bytes its active lanes access, ceil(distinct bytes / 32), summed.
  // A full-warp 16-byte access (512 distinct bytes) ideally takes 16 sectors, a 4-byte one 4.
  int64_t idealSectors = 0;
  // Caches (global memory, when MemoryModelOptions::caches)
  int64_t l1SectorHits = 0;     // sectors found in L1 (loads: served there; stores: updated there)
  int64_t l2Sectors = 0;        // sectors sent to L2 (load: L1 misses; store: every sector)
  int64_t l2SectorHits = 0;     // of those, present in L2
  int64_t dramReadBytes = 0;    // DRAM fills these accesses caused
  // Shared memory
  int64_t wavefronts = 0;
  int64_t idealWavefronts = 0;
  int64_t bankConflicts = 0;    // wavefronts - idealWavefronts

  double sectorsPerRequest() const { return requests ? double(sectors) / double(requests) : 0.0; }
  // Sectors / ideal sectors: 1.0 when every request is perfectly coalesced, 2.0 when it moves
  // twice the sectors its bytes need (stride 2 of 4-byte lanes), ... (0 with no global access).
  double sectorsPerIdeal() const { return idealSectors ? double(sectors) / double(idealSectors) : 0.0; }
  // Sectors per 128 requested bytes: 4.0 when perfectly coalesced (128 bytes = 4 sectors), up to
  // 32 when each 4-byte lane has a sector of its own; = 4 / efficiency().
  double sectorsPer128B() const { return bytesRequested ? 128.0 * double(sectors) / double(bytesRequested) : 0.0; }
  double linesPerRequest() const { return requests ? double(lines) / double(requests) : 0.0; }
  // Requested / fetched: 1.0 for a perfectly coalesced access (may exceed 1 for broadcasts).
  double efficiency() const { return bytesFetched ? double(bytesRequested) / double(bytesFetched) : 0.0; }
  double l1HitRate() const { return sectors ? double(l1SectorHits) / double(sectors) : 0.0; }
  double l2HitRate() const { return l2Sectors ? double(l2SectorHits) / double(l2Sectors) : 0.0; }
  double wavefrontsPerRequest() const { return requests ? double(wavefronts) / double(requests) : 0.0; }
  void add(const MemCounters& o);
  void scale(double factor);    // every count x factor, rounded
};

// One memory instruction of the thread IR (an op with id instructionTable(fn)[instr]).
struct InstrMemStats {
  int32_t instr = 0;
  Loc loc;
  MemSpace space = MemSpace::Global;
  bool store = false;
  bool atomic = false;          // an atomic read-modify-write (store is set as well)
  int bytesPerLane = 0;         // widest access seen (vec x element bytes)
  // Global: the names of the MemoryModelOptions::buffers its accesses touched, in the order the
  // buffers were given (empty when none was given, or for shared memory).
  std::vector<std::string> buffers;
  MemCounters counters;
};

// All memory instructions of one source line with the same space and direction.
struct LineMemStats {
  uint32_t line = 0;
  MemSpace space = MemSpace::Global;
  bool store = false;
  std::vector<int32_t> instrs;  // the instructions aggregated, ascending
  std::vector<std::string> buffers;  // the union of their buffers, in the options' order
  MemCounters counters;
};

// Kernel totals, split the way Nsight Compute's metrics are.
struct MemTotals {
  MemCounters globalLoad, globalStore, sharedLoad, sharedStore;
  MemCounters globalAtomic;  // atom/red instructions: threadAccesses = the atomic element operations
  int64_t l2ReadSectors = 0, l2ReadHits = 0;    // lts__t_sectors_srcunit_tex_op_read(_lookup_hit)
  int64_t l2WriteSectors = 0, l2WriteHits = 0;  // lts__t_sectors_srcunit_tex_op_write(_lookup_hit)
  int64_t dramReadBytes = 0;                    // L2 fills x 32
  int64_t dramWriteBytes = 0;                   // dirty sectors written back x 32 (with writeBackAtEnd,
                                                //   those still dirty at the end too: the cost of the writes)
  // What reaches DRAM while the kernel runs: evictions only (dram__bytes_write.sum; the dirty
  // sectors left in L2 at the end are written after the kernel, so Nsight Compute does not see
  // them). Sampled runs see a smaller footprint than the grid: there it is dramWriteBytes less
  // the dirty part of the last L2-full of traffic (L2 size x writes / (fills + writes)), an
  // estimate of what LRU leaves in the cache.
  int64_t dramWriteBytesInKernel = 0;
};

struct MemoryReport {
  std::string gpu;                       // GpuSpec::key
  int64_t accesses = 0;                  // WarpAccess records analyzed
  int64_t blocksAnalyzed = 0;            // distinct blocks among them
  double scale = 1.0;                    // factor applied to every count (1: nothing sampled)
  bool caches = true;                    // whether L1/L2/DRAM were simulated
  int64_t l1DataBytesPerSM = 0;          // what the cache model used
  int64_t l2Bytes = 0;
  int l1Ways = 0, l2Ways = 0, l2FetchBytes = 32;
  std::vector<InstrMemStats> instructions;  // ascending instruction id
  std::vector<LineMemStats> lines;          // ascending line; global before shared, loads first
  MemTotals totals;

  // Each kernel total under its Nsight Compute metric name, in a stable order.
  std::vector<std::pair<std::string, double>> ncuMetrics() const;
  // The atomics' totals (totals.globalAtomic: atom and red alike) under Nsight Compute's names:
  // warp instructions, requests, sectors and (with caches) L2 sectors.
  std::vector<std::pair<std::string, double>> ncuAtomicMetrics() const;
};

// The L1 data capacity per SM the model uses for `gpu` (see MemoryModelOptions::l1DataBytes).
int64_t l1DataBytesFor(const GpuSpec& gpu, const MemoryModelOptions& options);

// Streaming form: feed accesses in execution order, then finish() once.
class MemoryModel {
 public:
  MemoryModel(const GpuSpec& gpu, const MemoryModelOptions& options = {});
  ~MemoryModel();
  MemoryModel(const MemoryModel&) = delete;
  MemoryModel& operator=(const MemoryModel&) = delete;

  void add(const WarpAccess& access);
  MemoryReport finish();

 private:
  struct State;
  std::unique_ptr<State> s_;
};

MemoryReport analyzeMemory(const std::vector<WarpAccess>& accesses, const GpuSpec& gpu,
                           const MemoryModelOptions& options = {});

// Multiplies every count of `report` by `factor` (ratios are unchanged) and records it in
// report.scale. analyzeMemory does this itself when options.totalBlocks is set.
void scaleReport(MemoryReport& report, double factor);

}  // namespace tl
