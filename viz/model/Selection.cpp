// Checking the headless selection options against a simulated session (see Selection.h).
#include "viz/model/Selection.h"

#include <algorithm>
#include <set>

#include "viz/model/Format.h"

namespace tl::viz {

namespace {

// "0-3" for a contiguous run, else "0, 1, 5" (at most `most` listed, then "...").
std::string listOf(const std::vector<int64_t>& ids, size_t most = 12) {
  if (ids.empty()) return "none";
  bool contiguous = ids.back() - ids.front() + 1 == static_cast<int64_t>(ids.size());
  if (contiguous && ids.size() > 2) return std::to_string(ids.front()) + "-" + std::to_string(ids.back());
  std::string s;
  for (size_t i = 0; i < ids.size() && i < most; ++i) s += (i ? ", " : "") + std::to_string(ids[i]);
  if (ids.size() > most) s += ", ...";
  return s;
}

}  // namespace

std::vector<int64_t> detailBlocks(const SessionData& data) {
  std::set<int64_t> blocks;
  if (data.detail)
    for (const WarpAccess& a : data.detail->accesses) blocks.insert(a.block);
  return {blocks.begin(), blocks.end()};
}

ResolvedSelection resolveSelection(const SessionData& data, const SelectionRequest& req) {
  ResolvedSelection r;
  if (req.empty() || data.phase != Phase::Simulated || !data.errors.empty()) return r;
  auto fail = [&](const std::string& why) {
    r.ok = false;
    r.error = why;
    return r;
  };
  if (req.instr) {
    auto it = std::find_if(data.memInstrs.begin(), data.memInstrs.end(),
                           [&](const MemInstr& m) { return m.instr == *req.instr; });
    if (it == data.memInstrs.end()) {
      std::string known;
      for (size_t i = 0; i < data.memInstrs.size(); ++i) {
        const MemInstr& m = data.memInstrs[i];
        known += (i ? ", " : "") + std::to_string(m.instr) + " " + m.op + " (line " + std::to_string(m.loc.line) + ")";
      }
      return fail("--instr " + std::to_string(*req.instr) + ": not a memory instruction of the thread IR; " +
                  (known.empty() ? std::string("this kernel has none") : "its memory instructions are " + known));
    }
    r.instr = it->instr;
  }
  if (!req.value.empty()) {
    std::string want = req.value[0] == '%' ? req.value : "%" + req.value;
    auto it = std::find_if(data.values.begin(), data.values.end(), [&](const LayoutValue& v) { return v.name == want; });
    if (it == data.values.end()) {
      std::string known;
      for (size_t i = 0; i < data.values.size() && i < 16; ++i) known += (i ? ", " : "") + data.values[i].name;
      if (data.values.size() > 16) known += ", ...";
      return fail("--value " + req.value + ": no tile value of that name in the layout snapshot; " +
                  (known.empty() ? std::string("it has none") : "its values are " + known));
    }
    r.value = it->name;
  }
  if (req.block) {
    std::vector<int64_t> blocks = detailBlocks(data);
    int64_t gridBlocks = data.launch.grid[0] * data.launch.grid[1] * data.launch.grid[2];
    if (*req.block < 0 || *req.block >= gridBlocks)
      return fail("--block " + std::to_string(*req.block) + ": the grid has " + countOf(gridBlocks, "block") +
                  (gridBlocks > 1 ? " (0-" + std::to_string(gridBlocks - 1) + ")" : " (0)"));
    if (std::find(blocks.begin(), blocks.end(), *req.block) == blocks.end())
      return fail("--block " + std::to_string(*req.block) + ": the simulator kept the accesses of " +
                  countOf(static_cast<long long>(blocks.size()), "block") + " (" + listOf(blocks) +
                  ") only" +
                  (*req.block >= kMaxDetailBlocks ? "; at most the first " + withCommas(kMaxDetailBlocks) + " can be kept"
                                                   : "; it ran the first " +
                                                         withCommas(jsonNumber(jsonMember(&data.report, "sampling"), "blocks_run", 0)) +
                                                         " (--sample-blocks N runs more)"));
    r.block = *req.block;
  }
  if (req.warp) {
    int numWarps = data.detail && data.detail->compilation.threadIR ? data.detail->compilation.threadIR->numWarps : data.numWarps;
    if (*req.warp < 0 || *req.warp >= numWarps)
      return fail("--warp " + std::to_string(*req.warp) + ": the block has " + countOf(numWarps, "warp") +
                  (numWarps > 1 ? " (0-" + std::to_string(numWarps - 1) + ")" : " (0)"));
    r.warp = static_cast<int>(*req.warp);
  }
  return r;
}

}  // namespace tl::viz
