// MemoryView: what the Memory panel draws for ONE execution of one memory instruction by one
// warp — the lanes' bytes over 32-byte sectors and 128-byte lines (global memory), or over the
// 32 banks and the wavefronts that serve them (shared memory) — with the counts.
//
// An execution can be several WarpAccess records: a thread whose registers form several
// access groups (vec registers each) issues one LDG/STG/LDS/STS per group, so the executor
// records one WarpAccess per group (sim/ThreadExecutor.h). Each record is one request.
//
// Expects: records of one warp-instruction execution (same block, warp, instr, space, width),
// as warpExecutions() groups them; 1 <= bytes <= 16.
// Guarantees: the counts come from sim/Coalescing.h coalesce() and sim/Banks.h banks() called
// on each record and summed — the same functions the memory model counts with, so the panel
// and the report agree; nothing is re-derived here except the layout of the picture. Bad input
// never throws: `ok` false and `error` says why. The address window holds at most `maxLines`
// lines; a huge span (a strided access) is cut into runs of touched lines with the skipped
// bytes noted.
//
//   auto execs = warpExecutions(detail.accesses, block, warp, instr, accessGroupsPerExecution(*op));
//   MemoryView v = buildMemoryView(execs[0]);
//   v.global.lines[i].sectors[s].usedBytes ...   v.global.efficiency ...
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "ir/IR.h"
#include "sim/Banks.h"
#include "sim/Coalescing.h"
#include "sim/ThreadExecutor.h"

namespace tl::viz {

// ---- Grouping records into executions ----------------------------------------------------

// Access groups one execution of a thread-IR memory op issues: per-thread registers / vec
// (1 for a scalar access); 1 when `op` is not a memory op.
int accessGroupsPerExecution(const Op& op);

// The executions of instruction `instr` by warp `warp` of block `block`, in execution order,
// each the records it produced. The executor writes an execution's records consecutively, so
// a run of consecutive records of (block, warp, instr) is one execution, cut every
// `groupsPerExecution` records (a loop whose only access is this one also gives one run).
std::vector<std::vector<WarpAccess>> warpExecutions(std::span<const WarpAccess> accesses, int64_t block, int32_t warp,
                                                    int32_t instr, int groupsPerExecution);

// ---- Global memory -------------------------------------------------------------------------

// One lane's bytes in one record: [start, end).
struct LaneSpan {
  int lane = 0;
  int record = 0;       // which record of the execution (0-based): its request
  uint64_t start = 0, end = 0;
};

// One 32-byte sector of a drawn line.
struct SectorCell {
  uint64_t addr = 0;       // first byte (a multiple of 32)
  int fetches = 0;         // requests of this execution that fetch it (0: not fetched)
  uint32_t byteMask = 0;   // bytes some active lane accessed
  uint32_t laneMask = 0;   // lanes that accessed it
  int usedBytes() const;   // popcount(byteMask)
};

// One 128-byte line of the drawn window.
struct LineCell {
  uint64_t addr = 0;                  // a multiple of 128
  std::array<SectorCell, 4> sectors;  // ascending
  uint64_t gapBefore = 0;             // bytes skipped between the previous drawn line and this one
  bool touched() const;               // any sector fetched
};

struct GlobalView {
  std::vector<LineCell> lines;    // the drawn window, ascending
  std::vector<LaneSpan> spans;    // every active lane of every record, record-major
  int64_t linesTouched = 0;       // distinct lines the execution touches (may exceed lines drawn)
  std::string note;               // "" or why the window is cut
  std::vector<WarpCoalescing> perRecord;  // coalesce() of each record
  // Sums over the records (one request each), as the memory model counts them:
  int requests = 0;
  int64_t sectors = 0;            // sum of the records' sectors (a sector two requests fetch counts twice)
  int64_t lineRequests = 0;       // sum of the records' lines
  int activeLaneAccesses = 0;     // sum of the records' active lanes
  int64_t bytesRequested = 0, bytesFetched = 0, bytesUsed = 0;
  double efficiency = 0;          // bytesRequested / bytesFetched
  double sectorsPerRequest() const { return requests ? double(sectors) / requests : 0.0; }
  // What a perfectly coalesced access of the same bytes would fetch: ceil(requested / 32) per
  // record, each record's bytes packed from a sector boundary.
  int64_t idealSectors = 0;
};

// ---- Shared memory -------------------------------------------------------------------------

// What one bank delivers in one wavefront: a word and the lanes that read (or write) it.
struct BankCell {
  int wavefront = 0;              // 0-based over the whole execution
  int bank = 0;
  std::vector<uint64_t> words;    // word index (byte offset / 4); normally one (see below)
  uint32_t laneMask = 0;
  int record = 0;
};

struct SharedView {
  std::vector<BankAccess> perRecord;  // banks() of each record
  // Cells keyed by (wavefront, bank), sorted by wavefront then bank. A lane's words are all
  // drawn in the wavefront banks() gives the lane (the one delivering its last word), so a
  // multi-word lane whose words wait different numbers of turns can put two words in a cell.
  std::vector<BankCell> cells;
  int requests = 0;
  int wavefronts = 0, idealWavefronts = 0, bankConflicts = 0;
  int maxWays = 0;                // the worst group of any record: "an N-way conflict"
  int lanesPerGroup = 32;
};

struct MemoryView {
  bool ok = false;
  std::string error;
  MemSpace space = MemSpace::Global;
  bool store = false;
  int bytesPerLane = 0;
  int64_t block = 0;
  int32_t warp = 0, instr = 0;
  Loc loc;
  GlobalView global;   // space == Global
  SharedView shared;   // space == Shared
};

constexpr int kDefaultMaxLines = 24;

MemoryView buildMemoryView(std::span<const WarpAccess> records, int maxLines = kDefaultMaxLines);

// "1 request, 4 sectors (4.00 sectors/request), 128 of 128 fetched bytes requested: 100%".
std::string describeGlobal(const GlobalView& g);
// "1 wavefront (ideal 1): no bank conflict" / "2 wavefronts (ideal 1): a 2-way bank conflict".
std::string describeShared(const SharedView& s);

}  // namespace tl::viz
