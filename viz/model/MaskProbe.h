// MaskProbe: which elements of a masked load or store are live (the mask true) in each of the
// first blocks, so the Threads panel draws masked-off elements differently from live ones.
//
// How: the block IR (before layouts) is copied, and after every load with a mask and every store
// with a mask an extra store is inserted that writes the mask (as i32) to a buffer of its own,
// at [program x numel + element]. tl-block's interpreter then runs the copy at the session's
// launch. Nothing is re-derived: the mask is what the kernel's own ops compute. The loads and
// stores of the layouts snapshot are the same ops in the same order (layout assignment only
// annotates types and adds conversions), so the k-th masked load/store of both pairs up.
//
// Expects: the block IR the thread pipeline started from (ThreadCompilation::blockIR) and its
// layout-annotated copy (ThreadCompilation::withLayouts), a launch that runs (buffers filled).
// Guarantees: never throws; on any failure (no masks, mismatched op lists, a run-time error, a
// launch too large) `masks` is empty and `note` says why. In a loop the last iteration's mask
// is kept (`inLoop`); an element an if did not reach in a block stays -1 (not run).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "frontend/Launch.h"
#include "ir/IR.h"

namespace tl::viz {

struct ValueMask {
  std::string value;   // the layout snapshot's name of the masked tile ("%x": a load's result,
                       // or the value a masked store writes)
  bool store = false;  // the mask of a store (else of a load)
  Loc loc;             // the load / store
  bool inLoop = false; // inside a for or a while: the last iteration's mask
  Shape shape;
  int64_t numel = 0;
  int64_t blocks = 0;        // blocks probed: the first `blocks` programs in grid order
  std::vector<int8_t> live;  // live[block * numel + element]: 1 live, 0 masked off, -1 not run

  int8_t at(int64_t block, int64_t element) const {
    if (block < 0 || block >= blocks || element < 0 || element >= numel) return -1;
    return live[static_cast<size_t>(block * numel + element)];
  }
  // Live elements in `block` (-1 when it was not probed).
  int64_t liveCount(int64_t block) const;
};

struct MaskProbeResult {
  std::vector<ValueMask> masks;
  std::string note;  // why there are none ("" when probing worked, even with no masked op)
};

MaskProbeResult probeMasks(const Function& blockIR, const Function& withLayouts, const LaunchConfig& launch,
                           int64_t blocks);

}  // namespace tl::viz
