// The visualizer's data model: one kernel, compiled through every stage and simulated, as
// plain data. Nothing here knows about ImGui; the panels (viz/panels/) only read a
// SessionData, and the unit tests (tests/viz/) check it without a window.
//
//   Session s;                                   // owns a worker thread
//   s.submit(inputs);                            // compile + simulate in the background
//   std::shared_ptr<const SessionData> d = s.current();   // latest finished (or partial) result
//   Progress p = s.progress();                   // for the progress bar; never blocks
//
// Expects: SessionInputs as the user edits them (source text, overrides, num_warps, GPU).
// Guarantees:
//   - submit() returns at once; the worker abandons a job as soon as a newer one is submitted
//     (checked between steps), so editing never queues up stale work;
//   - current() never blocks and always returns a complete, immutable snapshot: first the
//     compile-only result (phase Compiled: stages, layouts, errors), then the simulated one
//     (phase Simulated), each published atomically;
//   - bad input never throws out of the worker: front-end errors come back located in
//     `errors` (line, col, message and the rendered `file:line:col: error:` text with a caret);
//     an IRError/RuntimeError of a later step is located the same way; anything else becomes
//     one error without a location.
//   - runSession() is the same pipeline synchronously (tests, --screenshot).
#pragma once

#include <array>
#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "frontend/Launch.h"
#include "ir/IR.h"
#include "ir/Layout.h"
#include "sim/Gpu.h"
#include "sim/Occupancy.h"
#include "sim/SimReport.h"
#include "sim/ThreadExecutor.h"
#include "sim/Timing.h"
#include "viz/model/MaskProbe.h"

namespace tl::viz {

// The most blocks whose accesses (and masks) a session keeps: --block N needs N < this.
inline constexpr int64_t kMaxDetailBlocks = 1024;

struct SessionInputs {
  std::string path = "kernels/softmax.tl";  // shown in errors; also where the source came from
  std::string source;                       // the (edited) text; empty: read `path`
  std::vector<std::string> sets;            // "N=1024", "BLOCK_N=256": as tl-* --set
  std::vector<std::string> inputs;          // "x_ptr=x.npy": as tl-* --input PARAM=FILE.npy
  std::string grid;                         // as tl-* --grid EXPR ("": the launch's)
  int numWarps = 0;                         // 0: the launch's
  bool keepLayouts = false;                 // as tl-thread --keep-layouts
  bool wgmma = false;                       // as tl-thread --wgmma
  std::string gpu = "h200";                 // sim/gpus/<key>.json
  std::string measuredDir;                  // --measured DIR (tl-ptx results files); "": bench/results/gpu next to kernels/
  int64_t sampleBlocks = 0;                 // tl-sim --sample-blocks (0: its default budget)
  int64_t detailBlocks = 0;                 // blocks whose accesses are kept (0: SimOptions' default, the
                                            // first 4; at most kMaxDetailBlocks)
  bool predictTimings = true;               // simulate the measured shapes (Timings panel; slow part)
};

// One located message (front-end error, IR error, runtime fault).
struct VizError {
  int line = 0, col = 0;  // 0: no location
  std::string message;    // "undefined name 'x'"
  std::string rendered;   // "kernels/softmax.tl:7:5: error: ...\n<line>\n    ^"
};

// One stage's text and, per text line, the source line it came from (0: none), so that
// selecting a source line can highlight what it became (Stages panel).
struct StageText {
  std::string name;              // "source", "block IR", "layouts", "thread IR", "LLVM IR", "PTX"
  std::string text;
  std::vector<int> sourceLine;   // sourceLine[i] for text line i (0-based lines of `text`)
  std::string unavailable;       // non-empty: why there is no text (e.g. built without LLVM)
};

// A tile value of the layout-annotated block IR (Threads panel).
struct LayoutValue {
  std::string name;      // as the printer names it ("%x", "%max")
  std::string typeText;  // "<4x1024xf32, #blocked<...>>"
  Shape shape;
  LayoutPtr layout;      // never null in SessionData::values
  Loc loc;
  bool loaded = false;   // the result of a load (the Threads panel starts at the first one)
};

// A memory instruction of the thread IR (Memory panel).
struct MemInstr {
  int32_t instr = 0;         // instruction id (WarpAccess::instr, report "instr")
  std::string op;            // "ld_global", "st_shared", ...
  MemSpace space = MemSpace::Global;
  bool store = false;
  Loc loc;
};

// Measured on a GPU by tl-ptx (a results JSON, stages/ptx/Results.h, schema v1).
struct MeasuredRun {
  std::string file;                 // where it was read from
  std::string source;               // the .tl path it names ("source")
  std::string sourceSha256;         // "source_sha256": the exact bytes measured ("" : not recorded)
  std::array<int64_t, 3> grid{0, 0, 0};  // as recorded (0s: not recorded)
  bool warmCache = false;           // compile_ms.cache_hit: a run with the JIT cache warm
  std::string device;               // "NVIDIA H200 (sm_90, ...)"
  std::map<std::string, std::string> sizes;  // the --set values it ran with
  double medianMs = 0, minMs = 0, gbPerS = 0, bytes = 0;
  int registers = 0, blocksPerSM = 0, numWarps = 0;
  bool unfused = false;             // an `tl-ptx --unfused` result
  int threads = 0;                  // tl-cpu results: the threads that ran the grid ("cpu.threads")
  std::string isa;                  // tl-cpu results: "avx512", ...
  nlohmann::json raw;               // the whole document
};

// One row of the GPU timings panel: a measured shape and what the simulator predicts for it.
struct TimingRow {
  std::string shape;                // "4096 x 781" (from compare.json) or the sizes
  std::vector<std::string> sets;    // the overrides that reproduce it
  double measuredMs = 0;            // tilelab's median on the GPU
  double tritonMs = 0, torchMs = 0; // 0 when not measured
  double predictedMs = 0;           // 0 until simulated
  std::string predictError;         // why there is no prediction
};

enum class Phase {
  Empty,      // nothing submitted yet
  Compiled,   // stages, layouts and errors are in; simulation running
  Simulated,  // everything is in (but the timings' predictions while timingsPending)
};

struct SessionData {
  uint64_t generation = 0;      // the submit() this answers (increasing)
  Phase phase = Phase::Empty;
  SessionInputs inputs;
  std::string source;           // the text compiled
  std::vector<VizError> errors; // empty: it compiled (and, once Simulated, ran)
  std::string kernelName;
  std::string launchText;       // describeLaunch-style "softmax_kernel grid=(256,1,1) num_warps=4 N=781 ..."
  LaunchConfig launch;
  int numWarps = 0;

  // Stages panel: source, block IR, layouts, thread IR, LLVM IR, PTX (in that order).
  std::vector<StageText> stages;
  // Threads panel: every tile value with a layout (layout-annotated block IR).
  std::vector<LayoutValue> values;

  // Simulation (phase Simulated and no errors).
  nlohmann::ordered_json report;            // tl-sim's report (docs/sim.md), fusion included
  std::shared_ptr<const SimDetail> detail;  // thread IR, accesses of the first blocks, timing input
  std::vector<MemInstr> memInstrs;          // memory instructions in instruction-id order
  // Threads panel: which elements of each masked load/store are live in the kept blocks.
  std::vector<ValueMask> masks;
  std::string masksNote;                    // why `masks` is empty though the kernel has masks
  GpuSpec gpu;
  // Latency panel: the timing model at 1 .. maxResident resident blocks per SM
  // (byResident[r - 1]); defaultResident is the occupancy's.
  std::vector<TimingResult> byResident;
  int defaultResident = 0;

  // Measured (when results for this kernel exist).
  std::optional<MeasuredRun> measured;          // tl-ptx at this kernel's default launch
  std::optional<MeasuredRun> measuredCpu;       // tl-cpu at this kernel's default launch (the CPU column)
  std::vector<MeasuredRun> measuredUnfused;     // tl-ptx --unfused runs of this kernel
  std::vector<TimingRow> timings;               // compare.json rows for this kernel
  bool timingsPending = false;                  // Simulated, but `timings` are still being predicted
  bool sourceEdited = false;                    // the text differs from `inputs.path` on disk
  std::string sourceSha256;                     // SHA-256 of `source` (what measurements are paired by); "" unknown
  std::string measuredDir;                      // the results folder searched ("": none)
  std::string measuredNote;                     // why `measured` is empty ("no measurement for this source: ...")
};

struct Progress {
  bool busy = false;
  float fraction = 0;     // 0..1
  std::string step;       // "simulating 256 blocks", "predicting 4096 x 781", ...
};

// Runs the whole pipeline synchronously; `publish` (may be empty) receives the Compiled
// snapshot before simulation starts; `cancelled` (may be null) is polled between steps.
using PublishFn = std::function<void(std::shared_ptr<const SessionData>)>;
std::shared_ptr<const SessionData> runSession(const SessionInputs& inputs, uint64_t generation = 1,
                                              const PublishFn& publish = {},
                                              const std::atomic<bool>* cancelled = nullptr,
                                              Progress* progress = nullptr);

class Session {
 public:
  Session();
  ~Session();  // stops the worker (abandons the running job)
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  uint64_t submit(SessionInputs inputs);               // returns its generation
  std::shared_ptr<const SessionData> current() const;  // never null (Phase::Empty at first)
  Progress progress() const;
  // Blocks until the job of `generation` (or a newer one) is Simulated or failed; for
  // --screenshot and tests. Returns false on timeout.
  bool waitFor(uint64_t generation, double timeoutSeconds) const;
  // By default the destructor waits for the step in progress (a simulation can take seconds).
  // After this call it returns at once and the worker finishes that step on its own: for an app
  // about to exit, which must then end the process with std::_Exit (tl-viz's main does), so
  // no static object is destroyed under the running worker.
  void abandonOnDestroy();

 private:
  struct Impl;
  std::shared_ptr<Impl> impl_;  // shared with the worker thread, which may outlive *this
};

}  // namespace tl::viz
