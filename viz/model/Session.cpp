// The visualizer's session: one kernel through every stage and the simulator, off the UI thread
// (the contract is in Session.h). The pipeline, in the order a student reads the panels:
//
//   source text -> parse -> @launch with the --set overrides -> block IR      (errors: located)
//     -> compileToThreadIR: block IR, layouts, thread IR                        (Stages, Threads)
//     -> compileToPTX: LLVM IR, PTX (built with LLVM 19 only)                  (Stages)
//     == publish phase Compiled ==
//     -> simulateKernel with the detail kept, registers from ptxas            (Memory, Occupancy,
//     -> the timing model again at 1 .. N resident blocks per SM               Latency, Fusion)
//     -> measured results paired by source SHA-256 and launch (--measured DIR) (Fusion, Timings)
//     == publish phase Simulated ==
//     -> each measured shape re-simulated (sampled) for the prediction         (Timings)
//     == publish phase Simulated, final ==
//
// Expects: any SessionInputs (a source with errors, unknown GPU, bad --set text, ...).
// Guarantees: nothing throws out of runSession or the worker; every user error is located when
// it has a location; a cancelled job stops at the next step boundary and publishes nothing more.
#include "viz/model/Session.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <iostream>
#include <mutex>
#include <sstream>
#include <pthread.h>

#include <functional>
#include <memory>
#include <stdexcept>
#include <thread>

#include "frontend/Frontend.h"
#include "ir/Diagnostics.h"
#include "ir/Printer.h"
#include "runtime/Driver.h"
#include "runtime/Hash.h"
#include "thread/Pipeline.h"
#include "viz/model/LineLinks.h"
#include "viz/model/Measured.h"

#if TL_VIZ_HAVE_PTX
#include "ptx/Codegen.h"
#include "ptx/Ptxas.h"
#include "ptx/Registers.h"
#endif

namespace tl::viz {

namespace {

// Blocks each measured shape is simulated with for its prediction (the timing model
// extrapolates the rest of the grid).
constexpr int64_t kTimingSampleBlocks = 64;
// Shapes whose buffers would need more host memory than this are not simulated.
constexpr double kMaxPredictBufferBytes = 2.0 * 1024 * 1024 * 1024;
// The Latency panel's slider stops here even if the occupancy allows more blocks.
constexpr int kMaxResidentBlocks = 32;
// Blocks of the simulated SM whose warps the Latency panel's timeline shows, so "fit" shows the
// whole run (bounded: each resident-blocks setting keeps its own timeline).
constexpr int64_t kTimelineBlocks = 256;

using ProgressFn = std::function<void(float fraction, const std::string& step)>;

// Thrown inside the pipeline when the job was cancelled (caught in runPipeline).
struct Cancelled {};

// ----- errors ----------------------------------------------------------------------------------

VizError errorAt(const SourceFile* file, Loc loc, const std::string& message) {
  VizError e;
  e.line = static_cast<int>(loc.line);
  e.col = static_cast<int>(loc.col);
  e.message = message;
  e.rendered = renderDiagnostic(file, Severity::Error, loc, message);
  return e;
}

void collectDiagnostics(const DiagEngine& diag, std::vector<VizError>& out) {
  for (const auto& d : diag.diagnostics()) {
    if (d.severity != Severity::Error) continue;
    VizError e;
    e.line = static_cast<int>(d.loc.line);
    e.col = static_cast<int>(d.loc.col);
    e.message = d.message;
    e.rendered = diag.render(d);
    out.push_back(std::move(e));
  }
}

// Runs `step`, turning what it throws into located errors. Returns false when it threw.
template <class F>
bool guarded(const SourceFile* file, std::vector<VizError>& errors, const std::string& what, F&& step) {
  try {
    step();
    return true;
  } catch (const Cancelled&) {
    throw;
  } catch (const RuntimeError& e) {
    errors.push_back(errorAt(file, e.loc, e.what()));
  } catch (const IRError& e) {
    errors.push_back(errorAt(file, e.loc, "internal compiler error (" + what + "): " + e.what()));
  } catch (const std::exception& e) {
    errors.push_back(errorAt(file, Loc{}, what + ": " + e.what()));
  }
  return false;
}

// ----- stage texts -----------------------------------------------------------------------------

StageText stageText(std::string name, std::string text, LinkFormat format) {
  StageText s;
  s.name = std::move(name);
  s.text = std::move(text);
  s.sourceLine = lineLinks(s.text, format);
  return s;
}

StageText unavailableStage(std::string name, std::string why) {
  StageText s;
  s.name = std::move(name);
  s.unavailable = std::move(why);
  return s;
}

// All six stages, each saying why it is missing (filled in as the pipeline gets further).
std::vector<StageText> emptyStages(const std::string& source, const std::string& why) {
  std::vector<StageText> stages;
  stages.push_back(stageText("source", source, LinkFormat::Source));
  for (const char* n : {"block IR", "layouts", "thread IR", "LLVM IR", "PTX"}) stages.push_back(unavailableStage(n, why));
  return stages;
}

// ----- values with layouts ---------------------------------------------------------------------

// Every value of `fn` with a layout, named as printFunction names it.
std::vector<LayoutValue> layoutValues(const Function& fn) {
  std::vector<LayoutValue> out;
  const std::unordered_map<const Value*, std::string> names = printedValueNames(fn);
  auto visit = [&](const Value* v, Loc loc, bool loaded) {
    if (!v->type.isTile() || !v->type.layout) return;
    LayoutValue lv;
    lv.name = "%" + names.at(v);
    lv.typeText = v->type.str();
    lv.shape = v->type.shape;
    lv.layout = v->type.layout;
    lv.loc = loc;
    lv.loaded = loaded;
    out.push_back(std::move(lv));
  };
  for (size_t i = 0; i < fn.body.args.size(); ++i) visit(fn.body.arg(i), fn.loc, false);
  // In printed order, as the value list shows them.
  std::function<void(const Region&)> region = [&](const Region& r) {
    for (const auto& op : r.ops) {
      for (const auto& res : op->results) visit(res.get(), op->loc, op->kind == OpKind::Load);
      for (const auto& sub : op->regions) {
        for (const auto& a : sub->args) visit(a.get(), op->loc, false);
        region(*sub);
      }
    }
  };
  region(fn.body);
  return out;
}

// ----- small helpers ---------------------------------------------------------------------------

// The overrides the inputs ask for (--set, --input, --grid, --num-warps, in that order, as the
// stage tools apply them: runtime/Driver's overridesFrom); a malformed one becomes an error (no
// location: it is not in the file).
std::vector<LaunchOverride> overridesFor(const SessionInputs& in, std::vector<VizError>& errors) {
  StageOptions o;
  o.sets = in.sets;
  o.inputs = in.inputs;
  o.grid = in.grid;
  o.numWarps = in.numWarps;
  try {
    return overridesFrom(o);
  } catch (const std::exception& e) {
    errors.push_back(errorAt(nullptr, Loc{}, e.what()));
    return {};
  }
}

double bufferBytes(const LaunchConfig& launch) {
  double bytes = 0;
  for (const auto& b : launch.buffers) {
    double n = 1;
    for (int64_t d : b.shape) n *= static_cast<double>(d);
    bytes += n * dtypeBytes(b.dtype);
  }
  return bytes;
}

// Was `device` ("NVIDIA H200 (sm_90, ...)") the GPU described by `gpu`? Compares the key
// ("h200", "rtx4090") with the device name, spaces removed, case folded.
bool deviceIsGpu(const std::string& device, const GpuSpec& gpu) {
  std::string d;
  for (char c : device)
    if (c != ' ') d += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return !gpu.key.empty() && d.find(gpu.key) != std::string::npos;
}

// The memory instructions of the thread IR, in instruction-id order.
std::vector<MemInstr> memoryInstructions(const std::vector<const Op*>& instrs) {
  std::vector<MemInstr> out;
  for (size_t i = 0; i < instrs.size(); ++i) {
    const Op* op = instrs[i];
    bool global = op->kind == OpKind::LdGlobal || op->kind == OpKind::StGlobal;
    bool shared = op->kind == OpKind::LdShared || op->kind == OpKind::StShared || op->kind == OpKind::Ldmatrix;
    if (!global && !shared) continue;
    MemInstr m;
    m.instr = static_cast<int32_t>(i);
    m.op = mnemonic(op->kind);
    m.space = global ? MemSpace::Global : MemSpace::Shared;
    m.store = op->kind == OpKind::StGlobal || op->kind == OpKind::StShared;
    m.loc = op->loc;
    out.push_back(std::move(m));
  }
  return out;
}

// ----- the pipeline ----------------------------------------------------------------------------

class Pipeline {
 public:
  Pipeline(const SessionInputs& in, uint64_t generation, PublishFn publish, const std::atomic<bool>* cancelled,
           ProgressFn progress)
      : in_(in), publish_(std::move(publish)), cancelled_(cancelled), progress_(std::move(progress)) {
    data_ = std::make_shared<SessionData>();
    data_->generation = generation;
    data_->inputs = in;
    data_->phase = Phase::Compiled;
  }

  std::shared_ptr<const SessionData> run() {
    try {
      if (compile()) {
        publishCopy();  // phase Compiled: stages, values
        if (simulate()) {
          data_->phase = Phase::Simulated;
          if (in_.predictTimings && !data_->timings.empty()) {
            data_->timingsPending = true;
            publishCopy();  // everything but the predictions
            predictTimings();
            data_->timingsPending = false;
          }
        }
      }
    } catch (const Cancelled&) {
      // A newer job replaced this one. The Session drops this result; a direct caller of
      // runSession must not mistake the partial data for a finished run.
      data_->errors.push_back(errorAt(nullptr, Loc{}, "cancelled: a newer job replaced this one"));
    } catch (const std::exception& e) {  // a bug; never let it out of the worker
      data_->errors.push_back(errorAt(file_.get(), Loc{}, std::string("internal error: ") + e.what()));
    }
    data_->phase = Phase::Simulated;
    return data_;
  }

 private:
  const SessionInputs& in_;
  PublishFn publish_;
  const std::atomic<bool>* cancelled_;
  ProgressFn progress_;
  std::shared_ptr<SessionData> data_;
  std::shared_ptr<const SourceFile> file_;
  std::unique_ptr<ParsedKernel> parsed_;
  std::unique_ptr<Function> blockIR_;  // front-end block IR (what the simulator starts from)
  MeasuredSet measured_;               // read once, in simulate(); predictTimings uses the same

  void step(float fraction, const std::string& what) {
    if (cancelled_ && cancelled_->load()) throw Cancelled{};
    if (progress_) progress_(fraction, what);
  }

  void publishCopy() {
    if (cancelled_ && cancelled_->load()) throw Cancelled{};
    if (publish_) publish_(std::make_shared<const SessionData>(*data_));
  }

  // Source -> block IR -> thread IR -> PTX. False when it did not compile (errors set).
  bool compile() {
    step(0.02f, "parsing");
    std::string text = in_.source;
    std::optional<std::string> onDisk;
    try {
      onDisk = SourceFile::load(in_.path)->text();
    } catch (const std::exception& e) {
      if (text.empty()) data_->errors.push_back(errorAt(nullptr, Loc{}, e.what()));
    }
    if (text.empty() && onDisk) text = *onDisk;
    data_->sourceEdited = !onDisk || text != *onDisk;
    data_->source = text;
    file_ = std::make_shared<SourceFile>(in_.path, text);
    data_->stages = emptyStages(text, "the kernel did not compile: see the errors");
    if (!data_->errors.empty()) return false;

    DiagEngine diag(file_);
    std::vector<LaunchOverride> overrides = overridesFor(in_, data_->errors);
    if (!data_->errors.empty()) return false;
    parsed_ = parseKernelFile(file_, diag);
    if (parsed_ && !diag.hasErrors()) data_->launch = evalLaunch(*parsed_, overrides, diag);
    if (parsed_ && !diag.hasErrors()) blockIR_ = compileKernel(*parsed_, specializationFor(*parsed_, data_->launch), diag);
    collectDiagnostics(diag, data_->errors);
    if (!blockIR_ || !data_->errors.empty()) {
      if (data_->errors.empty()) data_->errors.push_back(errorAt(file_.get(), Loc{}, "the kernel did not compile"));
      return false;
    }
    data_->kernelName = blockIR_->name;
    data_->launchText = describeLaunch(blockIR_->name, data_->launch);
    data_->numWarps = data_->launch.numWarps;

    step(0.08f, "layouts and thread IR");
    ThreadCompilation tc;
    if (!guarded(file_.get(), data_->errors, "thread pipeline", [&] {
          ThreadCompileOptions to;
          to.keepLayouts = in_.keepLayouts;
          to.wgmma = in_.wgmma;
          // The GPU whose shared-memory limit the pipeline checks. An unknown GPU is the
          // simulation step's error (reported there); the code is still compiled and shown.
          const std::vector<std::string> gpus = listGpus();
          if (std::find(gpus.begin(), gpus.end(), in_.gpu) != gpus.end()) setTargetGpu(loadGpu(in_.gpu));
          tc = compileToThreadIR(*blockIR_, data_->launch, to);
        })) {
      data_->stages[1] = stageText("block IR", printFunction(*blockIR_), LinkFormat::IR);
      return false;
    }
    data_->numWarps = tc.numWarps;
    data_->stages[1] = stageText("block IR", printFunction(*tc.blockIR), LinkFormat::IR);
    data_->stages[2] = stageText("layouts", printFunction(*tc.withLayouts), LinkFormat::IR);
    data_->stages[3] = stageText("thread IR", printFunction(*tc.threadIR), LinkFormat::IR);
    data_->values = layoutValues(*tc.withLayouts);

    step(0.12f, "LLVM IR and PTX");
    compilePTX(*tc.threadIR);
    return true;
  }

  void compilePTX(const Function& threadIR) {
#if TL_VIZ_HAVE_PTX
    std::string arch = "sm_90";
    try {
      arch = loadGpu(in_.gpu).arch;
    } catch (const std::exception&) {
      // The unknown GPU is reported by the simulation step; show sm_90 code meanwhile.
    }
    if (!isSupportedArch(arch)) {
      data_->stages[4] = unavailableStage("LLVM IR", "the code generator does not support " + arch);
      data_->stages[5] = unavailableStage("PTX", "the code generator does not support " + arch);
      return;
    }
    try {
      PtxOptions po;
      po.arch = arch;
      PtxResult r = compileToPTX(threadIR, po);
      data_->stages[4] = stageText("LLVM IR", r.llvmIR, LinkFormat::LLVM);
      data_->stages[5] = stageText("PTX", r.ptx, LinkFormat::PTX);
    } catch (const std::exception& e) {
      std::string why = std::string("the code generator stopped: ") + e.what();
      data_->stages[4] = unavailableStage("LLVM IR", why);
      data_->stages[5] = unavailableStage("PTX", why);
    }
#else
    (void)threadIR;
    const char* why = "tl-viz was built without LLVM 19 (apt install llvm-19-dev, then rebuild)";
    data_->stages[4] = unavailableStage("LLVM IR", why);
    data_->stages[5] = unavailableStage("PTX", why);
#endif
  }

  // The simulator with its detail, the resident-blocks sweep and the measured results.
  bool simulate() {
    step(0.15f, "loading measured results");
    if (!guarded(file_.get(), data_->errors, "GPU description", [&] { data_->gpu = loadGpu(in_.gpu); })) return false;
    // Measurements are paired by the SHA-256 of the exact text compiled and by the launch
    // (Measured.h): an edited text, or another kernel of the same name, gets none.
    data_->sourceSha256 = sha256Hex(data_->source);
    data_->measuredDir = findResultsDir(in_.path, in_.measuredDir);
    measured_ = loadMeasured(data_->measuredDir, data_->sourceSha256, in_.path, data_->launch);
    for (const auto& p : measured_.problems) std::cerr << "tl-viz: measured results: " << p << "\n";
    if (measured_.run && !deviceIsGpu(measured_.run->device, data_->gpu))
      data_->measuredNote = "no measurement for this GPU: this source was measured on " + measured_.run->device +
                            "; pick that GPU (--gpu) to compare";
    else if (measured_.run)
      data_->measured = measured_.run;
    else
      data_->measuredNote = measured_.note;
    if (data_->sourceEdited && !data_->measured)
      data_->measuredNote = "the source was edited; " + data_->measuredNote;
    data_->measuredCpu = measured_.cpuRun;
    for (const MeasuredRun& u : measured_.unfused)
      if (deviceIsGpu(u.device, data_->gpu)) data_->measuredUnfused.push_back(u);
    data_->timings = measured_.timings;
    for (auto& t : data_->timings)
      t.predictError = in_.predictTimings ? "not predicted yet" : "predictions are off (--no-timings)";

    int64_t blocks = data_->launch.grid[0] * data_->launch.grid[1] * data_->launch.grid[2];
    int64_t budget = in_.sampleBlocks > 0 ? in_.sampleBlocks : kDefaultBlockBudget;
    step(0.2f, "simulating " + std::to_string(std::min(blocks, budget)) + " of " + std::to_string(blocks) + " blocks");
    SimOptions o;
    o.gpu = in_.gpu;
    o.sampleBlocks = in_.sampleBlocks;
    o.keepDetail = true;
    o.keepLayouts = in_.keepLayouts;
    o.wgmma = in_.wgmma;
    if (in_.detailBlocks > 0) o.detailBlocks = std::max(o.detailBlocks, std::min(in_.detailBlocks, kMaxDetailBlocks));
    o.registers = registerSource();
    if (data_->measured) o.measured = &data_->measured->raw;
    SimReport report;
    if (!guarded(file_.get(), data_->errors, "simulation", [&] { report = simulateKernel(*blockIR_, data_->launch, o); }))
      return false;
    data_->report = std::move(report.json);
    data_->detail = report.detail;
    if (!data_->detail) {
      data_->errors.push_back(errorAt(file_.get(), Loc{}, "the simulator kept no detail (SimOptions::keepDetail)"));
      return false;
    }
    data_->memInstrs = memoryInstructions(data_->detail->instrs);
    probeValueMasks(o.detailBlocks);
    return sweepResidentBlocks();
  }

  // Which elements of the masked loads and stores are live in the kept blocks (Threads panel).
  void probeValueMasks(int64_t blocks) {
    const ThreadCompilation& tc = data_->detail->compilation;
    if (!tc.blockIR || !tc.withLayouts) return;
    if (bufferBytes(data_->launch) > kMaxPredictBufferBytes) {
      data_->masksNote = "the masks are not shown: the buffers are too large to run the kernel again here";
      return;
    }
    step(0.55f, "finding the masked-off elements");
    MaskProbeResult r = probeMasks(*tc.blockIR, *tc.withLayouts, data_->launch, blocks);
    data_->masks = std::move(r.masks);
    data_->masksNote = std::move(r.note);
  }

  // Registers from ptxas when it is installed (and LLVM is built in); else the estimate.
  std::function<RegisterEstimate(const Function&)> registerSource() const {
#if TL_VIZ_HAVE_PTX
    if (isSupportedArch(data_->gpu.arch) && !findPtxas().empty()) return ptxasRegisterSource(data_->gpu.arch);
#endif
    return {};
  }

  // The timing model at 1 .. occupancy-limit resident blocks per SM (Latency panel).
  bool sweepResidentBlocks() {
    const SimDetail& d = *data_->detail;
    int limit = std::min(d.occupancy.activeBlocksPerSM, kMaxResidentBlocks);
    data_->defaultResident = std::min(d.timing.residentBlocksPerSM, limit);
    for (int r = 1; r <= limit; ++r) {
      step(0.6f + 0.25f * static_cast<float>(r) / static_cast<float>(limit),
           "timing model at " + std::to_string(r) + " resident blocks per SM");
      TimingOptions to = d.timingOptions;
      to.memory = &d.memory;
      to.residentBlocksPerSM = r;
      // The timeline shows the SM's run: its blocks up to kTimelineBlocks (the rest are alike).
      to.timelineBlocks = std::max<int64_t>(to.timelineBlocks, kTimelineBlocks);
      TimingResult t;
      if (!guarded(file_.get(), data_->errors, "timing model", [&] { t = predictTime(d.timingInput, d.gpu, to); }))
        return false;
      data_->byResident.push_back(std::move(t));
    }
    return true;
  }

  // Each measured shape of this kernel, simulated (sampled) for its prediction.
  void predictTimings() {
    const MeasuredSet& measured = measured_;
    size_t n = std::min(measured.timingDocs.size(), data_->timings.size());
    for (size_t i = 0; i < data_->timings.size(); ++i) {
      TimingRow& row = data_->timings[i];
      step(0.85f + 0.15f * static_cast<float>(i) / static_cast<float>(data_->timings.size()),
           "predicting " + row.shape);
      const nlohmann::json* doc = i < n && measured.timingDocs[i].is_object() ? &measured.timingDocs[i] : nullptr;
      row.predictError = predictRow(row, doc);
    }
  }

  // One row: "" with predictedMs set, or why there is no prediction.
  std::string predictRow(TimingRow& row, const nlohmann::json* doc) {
    if (doc) {
      const nlohmann::json::json_pointer pointer("/gpu/device");
      std::string device = doc->contains(pointer) && doc->at(pointer).is_string() ? doc->at(pointer).get<std::string>() : "";
      if (!device.empty() && !deviceIsGpu(device, data_->gpu))
        return "measured on " + device + "; pick that GPU to compare";
    }
    DiagEngine diag(file_);
    std::vector<LaunchOverride> overrides;
    for (const auto& s : row.sets) {
      LaunchOverride o;
      if (!parseOverride(s, o)) return "bad size '" + s + "' in compare.json";
      overrides.push_back(o);
    }
    LaunchConfig launch = evalLaunch(*parsed_, overrides, diag);
    if (diag.hasErrors()) return "the launch does not evaluate: " + diag.diagnostics().front().message;
    double bytes = bufferBytes(launch);
    if (bytes > kMaxPredictBufferBytes)
      return "buffers of " + std::to_string(static_cast<int64_t>(bytes / (1024 * 1024))) + " MiB: too large to simulate here";
    auto fn = compileKernel(*parsed_, specializationFor(*parsed_, launch), diag);
    if (!fn || diag.hasErrors()) return "the kernel does not compile at these sizes";
    SimOptions o;
    o.gpu = in_.gpu;
    o.sampleBlocks = kTimingSampleBlocks;
    o.unfused = false;
    o.timelineBlocks = 0;
    o.measured = doc;  // its registers (the driver's count) for the occupancy
    o.keepLayouts = in_.keepLayouts;
    o.wgmma = in_.wgmma;
    try {
      SimReport r = simulateKernel(*fn, launch, o);
      row.predictedMs = r.json["timing"]["time_us"].get<double>() / 1000.0;
      return "";
    } catch (const std::exception& e) {
      return std::string("simulation failed: ") + e.what();
    }
  }
};

}  // namespace

std::shared_ptr<const SessionData> runSession(const SessionInputs& inputs, uint64_t generation, const PublishFn& publish,
                                              const std::atomic<bool>* cancelled, Progress* progress) {
  ProgressFn onProgress;
  if (progress) {
    progress->busy = true;
    onProgress = [progress](float f, const std::string& s) {
      progress->fraction = f;
      progress->step = s;
    };
  }
  Pipeline p(inputs, generation, publish, cancelled, onProgress);
  auto result = p.run();
  if (progress) *progress = Progress{false, 1.0f, "done"};
  return result;
}

// ----- Session: the worker thread ---------------------------------------------------------------

// The worker compiles whatever the student typed. Input nesting is bounded (ast::kMaxNesting),
// and at that limit the front end and the stages need about 512 KB of stack (2-3 MB under
// AddressSanitizer): std::thread cannot choose its stack size, so the worker is a pthread with
// a stack well above that, the same on every platform default.
constexpr size_t kWorkerStackBytes = size_t(64) << 20;

class WorkerThread {
 public:
  WorkerThread() = default;
  explicit WorkerThread(std::function<void()> body) {
    auto* fn = new std::function<void()>(std::move(body));
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, kWorkerStackBytes);
    int rc = pthread_create(&thread_, &attr, &WorkerThread::run, fn);
    pthread_attr_destroy(&attr);
    if (rc != 0) {
      delete fn;
      throw std::runtime_error("cannot start the compile worker thread (pthread_create failed)");
    }
    started_ = true;
  }
  void join() {
    if (started_) pthread_join(thread_, nullptr);
    started_ = false;
  }
  void detach() {
    if (started_) pthread_detach(thread_);
    started_ = false;
  }

 private:
  static void* run(void* arg) {
    std::unique_ptr<std::function<void()>> fn(static_cast<std::function<void()>*>(arg));
    (*fn)();
    return nullptr;
  }
  pthread_t thread_{};
  bool started_ = false;
};

struct Session::Impl {
  mutable std::mutex mutex;
  std::condition_variable wake;          // the worker: a job or stop
  mutable std::condition_variable done;  // waitFor: a job finished
  std::optional<SessionInputs> pending;  // the newest job not yet started
  uint64_t submitted = 0;                // generation of the newest submit()
  uint64_t finished = 0;                 // newest generation whose job ran to its end
  std::shared_ptr<const SessionData> current = std::make_shared<const SessionData>();
  Progress progress;
  std::atomic<bool> cancel{false};       // the running job is superseded
  bool stop = false;
  bool abandon = false;                  // the destructor detaches instead of joining
  WorkerThread worker;

  // Publishes `snap` unless a newer job was submitted meanwhile.
  void publish(const std::shared_ptr<const SessionData>& snap) {
    std::lock_guard<std::mutex> lock(mutex);
    if (snap->generation == submitted) current = snap;
  }

  void loop() {
    for (;;) {
      SessionInputs job;
      uint64_t generation = 0;
      {
        std::unique_lock<std::mutex> lock(mutex);
        wake.wait(lock, [&] { return stop || pending.has_value(); });
        if (stop) return;
        job = std::move(*pending);
        pending.reset();
        generation = submitted;
        cancel = false;
      }
      auto onProgress = [this, generation](float f, const std::string& s) {
        std::lock_guard<std::mutex> lock(mutex);
        if (generation == submitted) progress = Progress{true, f, s};
      };
      Pipeline p(job, generation, [this](std::shared_ptr<const SessionData> s) { publish(s); }, &cancel, onProgress);
      std::shared_ptr<const SessionData> result = p.run();
      {
        std::lock_guard<std::mutex> lock(mutex);
        if (generation == submitted) {
          current = result;
          progress = Progress{false, 1.0f, "done"};
        }
        if (!cancel) finished = std::max(finished, generation);
      }
      done.notify_all();
    }
  }
};

Session::Session() : impl_(std::make_shared<Impl>()) {
  // The worker holds its own reference: after abandonOnDestroy it may outlive the Session.
  impl_->worker = WorkerThread([impl = impl_] { impl->loop(); });
}

Session::~Session() {
  bool abandon;
  {
    std::lock_guard<std::mutex> lock(impl_->mutex);
    impl_->stop = true;
    impl_->cancel = true;
    abandon = impl_->abandon;
  }
  impl_->wake.notify_all();
  if (abandon)
    impl_->worker.detach();
  else
    impl_->worker.join();
}

void Session::abandonOnDestroy() {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  impl_->abandon = true;
}

uint64_t Session::submit(SessionInputs inputs) {
  uint64_t generation;
  {
    std::lock_guard<std::mutex> lock(impl_->mutex);
    generation = ++impl_->submitted;
    impl_->pending = std::move(inputs);
    impl_->cancel = true;  // the running job (if any) stops at its next step
    impl_->progress = Progress{true, 0.0f, "queued"};
  }
  impl_->wake.notify_all();
  return generation;
}

std::shared_ptr<const SessionData> Session::current() const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  return impl_->current;
}

Progress Session::progress() const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  return impl_->progress;
}

bool Session::waitFor(uint64_t generation, double timeoutSeconds) const {
  std::unique_lock<std::mutex> lock(impl_->mutex);
  auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeoutSeconds);
  return impl_->done.wait_until(lock, deadline, [&] { return impl_->finished >= generation; });
}

}  // namespace tl::viz
