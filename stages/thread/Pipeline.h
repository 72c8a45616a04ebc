// The thread stage's pipeline, in one function: front-end block IR -> block pipeline ->
// layout passes -> lowering to thread IR. tl-thread, the tests and later stages (tl-ptx, the
// visualizer) all call this, so they see the same IR.
//
// Expects: verified block IR straight from the front end, and the launch it was compiled for
// (the specialization facts the axis analysis may use come from it).
// Guarantees: the three snapshots below, each verified; throws IRError if a pass or the
// lowering produces invalid IR.
#pragma once

#include <iosfwd>
#include <memory>

#include "frontend/Launch.h"
#include "ir/IR.h"
#include "ir/Pass.h"
#include "thread/Layouts.h"
#include "thread/Lowering.h"

namespace tl {

// How to compile (the tools' --num-warps, --keep-layouts and --print-after-all).
struct ThreadCompileOptions {
  int numWarps = 0;                      // <= 0: the launch's num_warps
  bool keepLayouts = false;              // keep the layouts the source implies: no automatic
                                         // convert_layout of loaded data (docs/layouts.md)
  std::ostream* printAfterAll = nullptr; // receives the IR after every pass (may be null)
  bool wgmma = false;                    // dots as warpgroup MMAs where they fit (sm_90a; LowerOptions)
};

struct ThreadCompilation {
  int numWarps = 4;
  bool keepLayouts = false;                  // compiled with ThreadCompileOptions::keepLayouts
  bool wgmma = false;                        // ... and ThreadCompileOptions::wgmma
  ParamHints hints;                          // what the launch lets the axis analysis assume
  std::unique_ptr<Function> blockIR;         // after the block pipeline
  std::unique_ptr<Function> withLayouts;     // after the layout passes: what was decided
  std::unique_ptr<Function> threadIR;        // after lowering: how it is done
  SharedMemoryReport shared;                 // the block's shared-memory plan
  std::vector<PassSnapshot> snapshots;       // input, each block pass, each layout pass
};

// `numWarps` <= 0 means the launch's. `printAfterAll` (may be null) receives the IR after
// every pass, block and layout passes alike.
ThreadCompilation compileToThreadIR(const Function& frontEndIR, const LaunchConfig& launch, int numWarps = 0,
                                    std::ostream* printAfterAll = nullptr);
// The same with every option (the call above is this with keepLayouts = false).
ThreadCompilation compileToThreadIR(const Function& frontEndIR, const LaunchConfig& launch,
                                    const ThreadCompileOptions& options);

// One line per load and store of the block IR: where it is, the layout chosen for it, its
// vector width and why ("contiguity 1024, alignment 16 B = 4 elements, mask 4 -> vec 4"; with
// keepLayouts, the layout the access was given and what it allows there).
std::string explainMemoryLayouts(const ThreadCompilation& tc);

}  // namespace tl
