// Selection: what the headless options ask a panel to show (`tl-viz --instr ID --value NAME
// --block N --warp N`, so a handout can render one particular view), checked against a
// simulated SessionData and resolved to the ids the panels use.
//
//   --instr ID     a memory instruction of the thread IR (its id in the instruction table, as the
//                  Memory panel's table and `tl-sim` list them): the Memory panel shows it
//   --value NAME   a value of the layout snapshot ("%x", or "x" for "%x"): the Threads panel
//                  shows its ownership grid (e.g. the converted layout of a convert_layout)
//   --block N      which block the Memory panel (and the Threads panel's masks) show: one whose
//                  accesses the simulator kept
//   --warp N       which warp, 0 .. num_warps - 1 of the thread IR
//
// Expects: any SessionData; the checks need Phase::Simulated without errors (else `ok` with
// nothing resolved: the screenshot shows the errors).
// Guarantees: never throws; a value out of range gives `ok` false and `error`, one sentence that
// names the option, the value and what is allowed ("--warp 9: the block has 4 warps (0-3)").
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "viz/model/Session.h"

namespace tl::viz {

struct SelectionRequest {
  std::optional<int64_t> instr;  // --instr
  std::string value;             // --value ("": not given)
  std::optional<int64_t> block;  // --block
  std::optional<int64_t> warp;   // --warp
  bool empty() const { return !instr && value.empty() && !block && !warp; }
};

struct ResolvedSelection {
  bool ok = true;
  std::string error;
  std::optional<int32_t> instr;
  std::string value;  // as the printer names it ("%x")
  std::optional<int64_t> block;
  std::optional<int> warp;
};

// The blocks whose accesses SimDetail kept (sorted); empty without a detail.
std::vector<int64_t> detailBlocks(const SessionData& data);

ResolvedSelection resolveSelection(const SessionData& data, const SelectionRequest& request);

}  // namespace tl::viz
