// The memory model: WarpAccess stream -> per-instruction, per-line and kernel memory counts.
// See sim/MemoryModel.h for the contract and docs/sim.md for the rules.
#include "sim/MemoryModel.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <map>
#include <stdexcept>
#include <tuple>
#include <unordered_set>

namespace tl {

// ---------------------------------------------------------------------------------------------
// Counters

void MemCounters::add(const MemCounters& o) {
  executions += o.executions;
  requests += o.requests;
  threadAccesses += o.threadAccesses;
  sectors += o.sectors;
  lines += o.lines;
  bytesRequested += o.bytesRequested;
  bytesUsed += o.bytesUsed;
  bytesFetched += o.bytesFetched;
  idealSectors += o.idealSectors;
  l1SectorHits += o.l1SectorHits;
  l2Sectors += o.l2Sectors;
  l2SectorHits += o.l2SectorHits;
  dramReadBytes += o.dramReadBytes;
  wavefronts += o.wavefronts;
  idealWavefronts += o.idealWavefronts;
  bankConflicts += o.bankConflicts;
}

namespace {

int64_t scaled(int64_t v, double f) { return static_cast<int64_t>(std::llround(double(v) * f)); }

}  // namespace

void MemCounters::scale(double f) {
  for (int64_t* v : {&executions, &requests, &threadAccesses, &sectors, &lines, &bytesRequested, &bytesUsed,
                     &bytesFetched, &idealSectors, &l1SectorHits, &l2Sectors, &l2SectorHits, &dramReadBytes, &wavefronts,
                     &idealWavefronts, &bankConflicts})
    *v = scaled(*v, f);
}

void scaleReport(MemoryReport& r, double f) {
  for (auto& i : r.instructions) i.counters.scale(f);
  for (auto& l : r.lines) l.counters.scale(f);
  MemTotals& t = r.totals;
  for (MemCounters* c : {&t.globalLoad, &t.globalStore, &t.sharedLoad, &t.sharedStore, &t.globalAtomic}) c->scale(f);
  for (int64_t* v : {&t.l2ReadSectors, &t.l2ReadHits, &t.l2WriteSectors, &t.l2WriteHits, &t.dramReadBytes,
                     &t.dramWriteBytes})
    *v = scaled(*v, f);
  r.scale *= f;
}

// ---------------------------------------------------------------------------------------------
// Cache configuration

int64_t l1DataBytesFor(const GpuSpec& gpu, const MemoryModelOptions& o) {
  if (o.l1DataBytes >= 0) return o.l1DataBytes;
  // The driver splits the unified L1 between shared memory and the data cache. Take the
  // smallest carve-out that holds what the resident blocks need (none: the whole L1 caches).
  int64_t need = std::max<int64_t>(0, o.sharedBytesPerSM);
  int64_t carve = need;
  if (need > 0 && !gpu.sharedCarveoutsKB.empty()) {
    std::vector<int> kb = gpu.sharedCarveoutsKB;
    std::sort(kb.begin(), kb.end());
    carve = int64_t(kb.back()) * 1024;
    for (int k : kb)
      if (int64_t(k) * 1024 >= need) {
        carve = int64_t(k) * 1024;
        break;
      }
  }
  return std::max<int64_t>(0, int64_t(gpu.l1BytesPerSM) - carve);
}

// ---------------------------------------------------------------------------------------------
// The streaming model

struct MemoryModel::State {
  GpuSpec gpu;
  MemoryModelOptions opt;
  int64_t l1Bytes = 0;
  std::vector<std::unique_ptr<sim::SectoredCache>> l1;  // per SM, created on first use
  std::unique_ptr<sim::SectoredCache> l2;
  std::vector<int> instrIndex;             // instruction id -> index in instrs (-1: none yet)
  std::vector<InstrMemStats> instrs;
  std::vector<std::vector<bool>> instrBuffers;  // per entry of instrs: which options.buffers it touched
  int lastRange = -1;                      // the buffer the previous sector fell in (fast path)
  int64_t accesses = 0, blocks = 0, lastBlock = 0;
  std::unordered_set<int64_t> seenBlocks;  // consulted only when the block id changes
  bool finished = false;

  sim::SectoredCache& l1For(int64_t block) {
    int64_t sms = std::max(1, gpu.smCount);
    size_t sm = size_t(((block % sms) + sms) % sms);
    if (!l1[sm]) l1[sm] = std::make_unique<sim::SectoredCache>(l1Bytes, opt.l1Ways);
    return *l1[sm];
  }

  InstrMemStats& instrFor(const WarpAccess& a) {
    if (a.instr < 0) throw std::invalid_argument("memory model: negative instruction id " + std::to_string(a.instr));
    if (size_t(a.instr) >= instrIndex.size()) instrIndex.resize(size_t(a.instr) + 1, -1);
    int& idx = instrIndex[size_t(a.instr)];
    if (idx < 0) {
      idx = int(instrs.size());
      InstrMemStats s;
      s.instr = a.instr;
      s.loc = a.loc;
      s.space = a.space;
      s.store = a.store;
      s.atomic = a.atomic;
      instrs.push_back(s);
      instrBuffers.emplace_back(opt.buffers.size(), false);
    }
    InstrMemStats& s = instrs[size_t(idx)];
    s.bytesPerLane = std::max(s.bytesPerLane, int(a.bytes));
    return s;
  }

  void countBlock(int64_t b) {
    if (blocks > 0 && b == lastBlock) return;
    if (seenBlocks.insert(b).second) ++blocks;
    lastBlock = b;
  }

  void global(const WarpAccess& a, MemCounters& c) {
    std::array<SectorUse, kMaxSectorsPerAccess> sec;
    int n = collectSectors(a, sec.data());
    c.sectors += n;
    c.lines += countLines(sec.data(), n);
    c.bytesFetched += int64_t(n) * kSectorBytes;
    int64_t used = 0;
    for (int i = 0; i < n; ++i) used += std::popcount(sec[i].byteMask);
    c.bytesUsed += used;
    c.idealSectors += (used + kSectorBytes - 1) / kSectorBytes;
    if (!opt.buffers.empty()) noteBuffers(sec.data(), n, instrBuffers[size_t(instrIndex[size_t(a.instr)])]);
    if (!opt.caches) return;
    sim::SectoredCache& L1 = l1For(a.block);
    for (int i = 0; i < n; ++i) {
      uint64_t addr = sec[i].addr;
      if (a.atomic) {  // at the L2: read the sector (fill on a miss), write it back dirty
        ++c.l2Sectors;
        int64_t before = l2->sectorsFilled();
        if (l2->read(addr, opt.l2FetchBytes)) ++c.l2SectorHits;
        c.dramReadBytes += (l2->sectorsFilled() - before) * kSectorBytes;
        l2->write(addr, sec[i].byteMask);
        continue;
      }
      if (!a.store) {
        if (L1.read(addr, kSectorBytes)) {  // L1 misses fetch single sectors from L2
          ++c.l1SectorHits;
          continue;
        }
        ++c.l2Sectors;
        int64_t before = l2->sectorsFilled();
        if (l2->read(addr, opt.l2FetchBytes)) ++c.l2SectorHits;
        c.dramReadBytes += (l2->sectorsFilled() - before) * kSectorBytes;
      } else {
        if (L1.updateIfPresent(addr)) ++c.l1SectorHits;
        ++c.l2Sectors;
        if (l2->write(addr, sec[i].byteMask)) ++c.l2SectorHits;
      }
    }
  }

  // Marks the buffers holding the sectors' accessed bytes (a byte outside every buffer: none).
  void noteBuffers(const SectorUse* sec, int n, std::vector<bool>& touched) {
    for (int i = 0; i < n; ++i) {
      const uint64_t byte = sec[i].addr + uint64_t(std::countr_zero(sec[i].byteMask));
      auto inside = [&](int r) {
        const AddressRange& b = opt.buffers[size_t(r)];
        return byte >= b.base && byte - b.base < b.bytes;
      };
      if (lastRange >= 0 && inside(lastRange)) {
        touched[size_t(lastRange)] = true;
        continue;
      }
      lastRange = -1;
      for (int r = 0; r < int(opt.buffers.size()); ++r)
        if (inside(r)) {
          lastRange = r;
          touched[size_t(r)] = true;
          break;
        }
    }
  }

  void shared(const WarpAccess& a, MemCounters& c) {
    BankAccess b = banks(a);
    c.wavefronts += b.wavefronts;
    c.idealWavefronts += b.idealWavefronts;
    c.bankConflicts += b.bankConflicts;
  }
};

MemoryModel::MemoryModel(const GpuSpec& gpu, const MemoryModelOptions& options) : s_(std::make_unique<State>()) {
  if (gpu.sectorBytes != kSectorBytes || gpu.l1LineBytes != kLineBytes)
    throw std::invalid_argument("memory model: GPU '" + gpu.key + "' has " + std::to_string(gpu.sectorBytes) +
                                "-byte sectors in " + std::to_string(gpu.l1LineBytes) +
                                "-byte lines; the model knows 32-byte sectors in 128-byte lines (sm_70+)");
  if (options.l2FetchBytes != 32 && options.l2FetchBytes != 64 && options.l2FetchBytes != 128)
    throw std::invalid_argument("memory model: l2FetchBytes must be 32, 64 or 128, not " +
                                std::to_string(options.l2FetchBytes));
  if (options.l1Ways < 1 || options.l2Ways < 1)
    throw std::invalid_argument("memory model: cache associativity must be at least 1");
  s_->gpu = gpu;
  s_->opt = options;
  if (options.caches) {
    s_->l1Bytes = l1DataBytesFor(gpu, options);
    s_->l1.resize(size_t(std::max(1, gpu.smCount)));
    s_->l2 = std::make_unique<sim::SectoredCache>(gpu.l2Bytes, options.l2Ways);
  }
}

MemoryModel::~MemoryModel() = default;

void MemoryModel::add(const WarpAccess& a) {
  if (s_->finished) throw std::logic_error("memory model: add() after finish()");
  if (a.activeMask == 0) return;  // the executor never records these; nothing was touched
  checkWarpAccess(a);
  InstrMemStats& st = s_->instrFor(a);
  if (st.space != a.space || st.store != a.store || st.atomic != a.atomic)
    throw std::invalid_argument("memory model: instruction " + std::to_string(a.instr) +
                                " is recorded as two kinds of access (global/shared or load/store)");
  s_->countBlock(a.block);
  ++s_->accesses;
  MemCounters& c = st.counters;
  int lanes = std::popcount(a.activeMask);
  ++c.executions;
  ++c.requests;
  c.threadAccesses += lanes;
  c.bytesRequested += int64_t(lanes) * a.bytes;
  if (a.space == MemSpace::Global)
    s_->global(a, c);
  else
    s_->shared(a, c);
}

MemoryReport MemoryModel::finish() {
  if (s_->finished) throw std::logic_error("memory model: finish() called twice");
  s_->finished = true;
  State& s = *s_;
  MemoryReport r;
  r.gpu = s.gpu.key;
  r.accesses = s.accesses;
  r.blocksAnalyzed = s.blocks;
  r.caches = s.opt.caches;
  r.l1Ways = s.opt.l1Ways;
  r.l2Ways = s.opt.l2Ways;
  r.l2FetchBytes = s.opt.l2FetchBytes;
  if (s.opt.caches) {
    r.l1DataBytesPerSM = s.l1Bytes;
    r.l2Bytes = s.l2->capacityBytes();
  }

  // Per instruction, ascending id.
  for (size_t i = 0; i < s.instrs.size(); ++i)
    for (size_t b = 0; b < s.opt.buffers.size(); ++b)
      if (s.instrBuffers[i][b]) s.instrs[i].buffers.push_back(s.opt.buffers[b].name);
  r.instructions = s.instrs;
  std::sort(r.instructions.begin(), r.instructions.end(),
            [](const InstrMemStats& x, const InstrMemStats& y) { return x.instr < y.instr; });

  // Per line and kernel totals.
  std::map<std::tuple<uint32_t, int, bool>, LineMemStats> byLine;
  MemTotals& t = r.totals;
  for (const InstrMemStats& i : r.instructions) {
    LineMemStats& l = byLine[{i.loc.line, int(i.space), i.store}];
    l.line = i.loc.line;
    l.space = i.space;
    l.store = i.store;
    l.instrs.push_back(i.instr);
    for (const std::string& b : i.buffers)
      if (std::find(l.buffers.begin(), l.buffers.end(), b) == l.buffers.end()) l.buffers.push_back(b);
    // In the options' order, as each instruction's are.
    auto rank = [&](const std::string& name) {
      for (size_t b = 0; b < s.opt.buffers.size(); ++b)
        if (s.opt.buffers[b].name == name) return b;
      return s.opt.buffers.size();
    };
    std::stable_sort(l.buffers.begin(), l.buffers.end(),
                     [&](const std::string& x, const std::string& y) { return rank(x) < rank(y); });
    l.counters.add(i.counters);
    MemCounters& total = i.atomic                     ? t.globalAtomic
                         : i.space == MemSpace::Global ? (i.store ? t.globalStore : t.globalLoad)
                                                       : (i.store ? t.sharedStore : t.sharedLoad);
    total.add(i.counters);
  }
  for (auto& [key, l] : byLine) r.lines.push_back(std::move(l));

  if (s.opt.caches) {
    t.l2ReadSectors = t.globalLoad.l2Sectors;
    t.l2ReadHits = t.globalLoad.l2SectorHits;
    t.l2WriteSectors = t.globalStore.l2Sectors;
    t.l2WriteHits = t.globalStore.l2SectorHits;
    t.dramReadBytes = t.globalLoad.dramReadBytes + t.globalAtomic.dramReadBytes;
    t.dramWriteBytesInKernel = s.l2->dirtySectorsWrittenBack() * kSectorBytes;
    if (s.opt.writeBackAtEnd) s.l2->flushDirty();
    t.dramWriteBytes = s.l2->dirtySectorsWrittenBack() * kSectorBytes;
  }

  if (s.opt.totalBlocks > s.blocks && s.blocks > 0) {
    scaleReport(r, double(s.opt.totalBlocks) / double(s.blocks));
    if (s.opt.caches) {
      // The sample's footprint is smaller than the grid's, so its evictions say little. For the
      // grid: an LRU L2 streaming this mix of fills and writes ends holding its newest L2-full,
      // of which the write share is dirty; everything written before that was evicted.
      double traffic = double(t.dramReadBytes + t.dramWriteBytes);
      double dirtyAtEnd = traffic > 0 ? double(r.l2Bytes) * double(t.dramWriteBytes) / traffic : 0.0;
      t.dramWriteBytesInKernel = std::max<int64_t>(0, t.dramWriteBytes - static_cast<int64_t>(dirtyAtEnd));
    }
  }
  return r;
}

MemoryReport analyzeMemory(const std::vector<WarpAccess>& accesses, const GpuSpec& gpu,
                           const MemoryModelOptions& options) {
  MemoryModel m(gpu, options);
  for (const WarpAccess& a : accesses) m.add(a);
  return m.finish();
}

// ---------------------------------------------------------------------------------------------
// Nsight Compute names

std::vector<std::pair<std::string, double>> MemoryReport::ncuMetrics() const {
  const MemTotals& t = totals;
  auto pct = [](int64_t num, int64_t den) { return den ? 100.0 * double(num) / double(den) : 0.0; };
  auto ratio = [](int64_t num, int64_t den) { return den ? double(num) / double(den) : 0.0; };
  std::vector<std::pair<std::string, double>> m = {
      // Global memory, L1TEX side
      {"smsp__sass_inst_executed_op_global_ld.sum", double(t.globalLoad.executions)},
      {"smsp__sass_inst_executed_op_global_st.sum", double(t.globalStore.executions)},
      {"l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum", double(t.globalLoad.requests)},
      {"l1tex__t_requests_pipe_lsu_mem_global_op_st.sum", double(t.globalStore.requests)},
      {"l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum", double(t.globalLoad.sectors)},
      {"l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum", double(t.globalStore.sectors)},
      {"l1tex__t_bytes_pipe_lsu_mem_global_op_ld.sum", double(t.globalLoad.bytesFetched)},
      {"l1tex__t_bytes_pipe_lsu_mem_global_op_st.sum", double(t.globalStore.bytesFetched)},
      {"l1tex__average_t_sectors_per_request_pipe_lsu_mem_global_op_ld.ratio", t.globalLoad.sectorsPerRequest()},
      {"l1tex__average_t_sectors_per_request_pipe_lsu_mem_global_op_st.ratio", t.globalStore.sectorsPerRequest()},
      {"smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.pct", 100.0 * t.globalLoad.efficiency()},
      {"smsp__sass_average_data_bytes_per_sector_mem_global_op_st.pct", 100.0 * t.globalStore.efficiency()},
      // Shared memory
      {"smsp__sass_inst_executed_op_shared_ld.sum", double(t.sharedLoad.executions)},
      {"smsp__sass_inst_executed_op_shared_st.sum", double(t.sharedStore.executions)},
      {"l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum", double(t.sharedLoad.wavefronts)},
      {"l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum", double(t.sharedStore.wavefronts)},
      {"l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum", double(t.sharedLoad.bankConflicts)},
      {"l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum", double(t.sharedStore.bankConflicts)},
  };
  if (!caches) return m;
  const MemCounters &ld = t.globalLoad, &st = t.globalStore;
  std::vector<std::pair<std::string, double>> c = {
      {"l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_hit.sum", double(ld.l1SectorHits)},
      {"l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_miss.sum", double(ld.sectors - ld.l1SectorHits)},
      {"l1tex__t_sector_pipe_lsu_mem_global_op_ld_hit_rate.pct", pct(ld.l1SectorHits, ld.sectors)},
      {"l1tex__t_sector_hit_rate.pct", pct(ld.l1SectorHits + st.l1SectorHits, ld.sectors + st.sectors)},
      {"lts__t_sectors_srcunit_tex_op_read.sum", double(t.l2ReadSectors)},
      {"lts__t_sectors_srcunit_tex_op_write.sum", double(t.l2WriteSectors)},
      {"lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum", double(t.l2ReadHits)},
      {"lts__t_sectors_srcunit_tex_op_read_lookup_miss.sum", double(t.l2ReadSectors - t.l2ReadHits)},
      {"lts__t_sectors_srcunit_tex_op_write_lookup_hit.sum", double(t.l2WriteHits)},
      {"lts__t_sectors_srcunit_tex_op_write_lookup_miss.sum", double(t.l2WriteSectors - t.l2WriteHits)},
      {"lts__t_sector_op_read_hit_rate.pct", pct(t.l2ReadHits, t.l2ReadSectors)},
      {"lts__t_sector_op_write_hit_rate.pct", pct(t.l2WriteHits, t.l2WriteSectors)},
      {"lts__t_sector_hit_rate.pct", pct(t.l2ReadHits + t.l2WriteHits, t.l2ReadSectors + t.l2WriteSectors)},
      {"dram__sectors_read.sum", ratio(t.dramReadBytes, kSectorBytes)},
      {"dram__sectors_write.sum", ratio(t.dramWriteBytesInKernel, kSectorBytes)},
      {"dram__bytes_read.sum", double(t.dramReadBytes)},
      {"dram__bytes_write.sum", double(t.dramWriteBytesInKernel)},
  };
  m.insert(m.end(), c.begin(), c.end());
  return m;
}

std::vector<std::pair<std::string, double>> MemoryReport::ncuAtomicMetrics() const {
  const MemCounters& a = totals.globalAtomic;
  std::vector<std::pair<std::string, double>> m = {
      {"smsp__sass_inst_executed_op_global_atom.sum", double(a.executions)},
      {"l1tex__t_requests_pipe_lsu_mem_global_op_atom.sum", double(a.requests)},
      {"l1tex__t_sectors_pipe_lsu_mem_global_op_atom.sum", double(a.sectors)},
  };
  if (caches) m.push_back({"lts__t_sectors_op_atom.sum", double(a.l2Sectors)});
  return m;
}

}  // namespace tl
