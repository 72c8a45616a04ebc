// tl-ptx: the PTX stage. Compiles each kernel to PTX with LLVM's NVPTX backend (through the JIT
// cache), assembles it with ptxas, and — when the machine has an NVIDIA driver — runs it on the
// GPU, times it, checks its outputs against tl-scalar (or tl-block for big launches) and writes
// a results JSON. Without a driver it says that the GPU step was skipped and where the PTX is.
//
//   tl-ptx                                         # every kernel in kernels/
//   tl-ptx kernels/softmax.tl --print-ptx          # the PTX (--print-llvm: the LLVM IR)
//   tl-ptx kernels/matmul.tl --set M=4096 --set N=4096 --set K=4096 --check-stage block
//   tl-ptx my_softmax.tl --reference solution.tl     # the GPU's outputs against what they should be
//   tl-ptx kernels/vector_add.tl --arch sm_80 --no-cache --runs 500
//   tl-ptx kernels/softmax.tl --unfused            # also the unfused kernels: fusion measured
//   tl-ptx kernels/matmul.tl --gpu a100 --arch sm_80  # shared memory checked against the A100's limit
//
//   tl-ptx kernels/softmax.tl --assembler auto    # libnvJitLink in process when it loads (else ptxas)
//
// Per kernel: front end -> (cache hit, or thread IR -> LLVM IR -> PTX -> assembler -> cache) ->
// out/ptx/<kernel>.ptx -> [GPU: load, run once, copy back, time, check] -> out/results/<kernel>.json.
// With --unfused, also: unfuse -> compile each unfused kernel -> out/ptx/<kernel>.unfused.<k>_<op>.ptx
// -> [GPU: run the sequence over one set of buffers, check, time it like the fused kernel] ->
// an "unfused" object in the results JSON (docs/gpu.md, "Measuring fusion on the GPU").
// Shared memory: the thread stage checks a kernel's shared memory against the --gpu description's
// per-block limit (sim/Gpu.h targetGpu(); default h200, 227 KB) with a located error; above 48 KB
// the PTX declares it as dynamic shared memory and every launch passes it (ptx/DynamicShared.h).
// Exit status: 0 when every kernel compiled (and, where a GPU ran it, passed); 1 otherwise.
#include <CLI/CLI.hpp>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <optional>
#include <cstring>
#include <sstream>

#include "block/BlockInterpreter.h"
#include "ir/Printer.h"
#include "ptx/Codegen.h"
#include "ptx/CudaRuntime.h"
#include "ptx/DynamicShared.h"
#include "ptx/JitCache.h"
#include "ptx/Results.h"
#include "ptx/Unfused.h"
#include "runtime/Driver.h"
#include "scalar/ScalarInterpreter.h"
#include "sim/Gpu.h"
#include "sim/ThreadExecutor.h"
#include "thread/Pipeline.h"

namespace fs = std::filesystem;

namespace {

// tl-ptx's own options (the common ones are in tl::StageOptions).
struct PtxStageOptions {
  std::string arch = "sm_90";
  std::string gpu = tl::kDefaultTargetGpu;  // whose limits the compile checks (sim/gpus/<key>.json)
  bool printLLVM = false, printPTX = false;
  std::string ptxDir = "out/ptx";
  bool noCache = false;
  std::string resultsDir = "out/results";
  std::string checkStage = "auto";  // the stage-agreement engine: scalar | block | thread | auto
  bool keepLayouts = false;          // --keep-layouts (also for the thread reference)
  int warmup = 3;
  int runs = 100;
  bool runsGiven = false;          // --runs given: run exactly that many (no time budget)
  bool unfused = false;            // also compile, run and time the unfused kernels
  // PTX -> cubin: ptxas (the process) | auto (nvJitLink, else the process) | nvjitlink. The process
  // is the default: nvJitLink's cubin has more registers (relocatable code, ptx/NvJitLink.h) and a
  // cold one-kernel run is not faster with it (bench/results/README.md).
  std::string assembler = "ptxas";
};

tl::Assembler assemblerOf(const std::string& name) {
  if (name == "ptxas") return tl::Assembler::Ptxas;
  if (name == "nvjitlink") return tl::Assembler::NvJitLink;
  return tl::Assembler::Auto;
}

// The timing policy of the options (the same for the fused kernel and the unfused sequence).
tl::TimingOptions timingOptions(const PtxStageOptions& o) {
  tl::TimingOptions to;
  to.warmup = o.warmup;
  to.runs = o.runs;
  if (o.runsGiven) to.maxSeconds = 0;
  return to;
}

// --check-stage auto picks tl-scalar up to this many estimated element operations (about a
// second of tl-scalar), tl-block beyond.
constexpr double kScalarReferenceLimit = 2e8;

std::string fmt(double v, int precision) {
  std::ostringstream os;
  os << std::fixed << std::setprecision(precision) << v;
  return os.str();
}

// The GPU, opened on first use and shared by every kernel of the run.
struct Gpu {
  bool tried = false;
  std::unique_ptr<tl::CudaRuntime> rt;
  std::string why;  // why there is none
  tl::CudaRuntime* get(std::ostream& out, bool quiet) {
    if (!tried) {
      tried = true;
      rt = tl::CudaRuntime::open(&why);
      if (rt && !quiet) out << "   GPU: " << rt->device().str() << "\n";
    }
    return rt.get();
  }
};

// "sm_90" -> 90.
int archNumber(const std::string& arch) { return std::stoi(arch.substr(3)); }

// Fills what every results file has, GPU or not.
tl::RunResults baseResults(const tl::CompiledKernel& k, const tl::JitResult& jit, const PtxStageOptions& o,
                           const std::string& ptxPath) {
  tl::RunResults r;
  r.toolVersion = tl::toolVersion();
  r.timestamp = tl::utcTimestamp();
  r.kernel = jit.entry.kernelName;
  r.source = k.path;
  r.sourceSha256 = tl::sha256Hex(k.parsed->file->text());
  for (const auto& [name, value] : k.launch.names)
    if (name != "grid" && name != "num_warps" && !k.launch.buffer(name)) r.sizes.emplace_back(name, value);
  r.grid = k.launch.grid;
  r.numWarps = jit.entry.numWarps;
  for (const auto& [name, type] : k.spec.paramTypes) r.dtypes[name] = type.str();
  r.arch = o.arch;
  r.ptxPath = ptxPath;
  r.assembler = jit.entry.ptxas.ran ? jit.entry.ptxas.assembler : "";
  r.registers = jit.entry.ptxas.registers;
  r.sharedBytes = jit.entry.ptxas.ran ? jit.entry.ptxas.sharedBytes : tl::ptx::staticSharedBytes(jit.entry.sharedBytes);
  r.dynamicSharedBytes = tl::ptx::dynamicSharedBytes(jit.entry.sharedBytes);
  r.localBytes = jit.entry.ptxas.stackFrameBytes;
  r.spillStoreBytes = jit.entry.ptxas.spillStoreBytes;
  r.spillLoadBytes = jit.entry.ptxas.spillLoadBytes;
  r.compile = jit.times;
  r.compile.frontEndMs = k.compileMs;
  return r;
}

void printCompileSummary(const tl::JitResult& jit, const tl::CompiledKernel& k, const std::string& ptxPath,
                         std::ostream& out) {
  const tl::CacheEntry& e = jit.entry;
  const bool dynamic = tl::ptx::usesDynamicShared(e.sharedBytes);
  out << "   ptx: " << ptxPath << "  (" << e.ptx.size() << " bytes; entry " << e.kernelName << ", "
      << 32 * e.numWarps << " threads/block, " << e.sharedBytes << " B shared"
      << (dynamic ? ", dynamic: over 48 KB" : "") << ")\n";
  if (e.ptxas.ran)
    out << "   ptxas: " << e.ptxas.registers << " registers, " << e.ptxas.sharedBytes << " B smem"
        << (dynamic ? " (static; + " + std::to_string(e.sharedBytes) + " B dynamic at launch)" : "") << ", spills "
        << e.ptxas.spillStoreBytes << " B stores / " << e.ptxas.spillLoadBytes << " B loads, stack "
        << e.ptxas.stackFrameBytes << " B  (" << e.ptxas.assembler
        << (e.ptxas.assembler.rfind("nvJitLink", 0) == 0 ? ", in process" : "") << ")\n";
  else
    out << "   ptxas: not run (" << e.ptxas.skipped << "); the driver will JIT-compile the PTX\n";
  for (const std::string& note : tl::ptxasPerformanceNotes(e.ptxas.log)) out << "   ptxas: warning: " << note << "\n";
  if (!e.ptxas.assemblerNote.empty()) out << "   note: " << e.ptxas.assemblerNote << "\n";
  const tl::CompileTimes& t = jit.times;
  out << "   compile: front end " << tl::formatMs(k.compileMs);
  if (jit.cacheHit) {
    out << ", cache hit " << tl::formatMs(t.cacheMs) << "  (first compile: passes+layouts+lowering "
        << tl::formatMs(e.threadMs) << ", LLVM " << tl::formatMs(e.codegenMs) << ", ptxas " << tl::formatMs(e.ptxasMs)
        << ")\n";
  } else {
    out << ", passes+layouts+lowering " << tl::formatMs(t.threadMs) << ", LLVM " << tl::formatMs(t.codegenMs)
        << ", ptxas " << tl::formatMs(t.ptxasMs);
    if (t.cacheKey.empty()) out << "  (" << jit.cacheNote << ")\n";
    else out << ", cache " << tl::formatMs(t.cacheMs) << "  (cache miss: " << jit.cacheNote << ")\n";
  }
}

// The tolerance of a check of the GPU's outputs against `engine`: the dots' precisions, and f32
// dots, which the FMA path computes with fused multiply-adds, against an engine that rounds each
// product (tl-block, tl-scalar; tl-thread's executor rounds as the GPU does) get the FMA
// tolerance (runtime/Memory.h): a rounding-order difference, not an error; so do float sums,
// which the GPU adds in another order.
tl::ToleranceOverride gpuCheckTolerance(const tl::Function& fn, const std::string& engine, tl::ToleranceOverride tol) {
  tl::markDotPrecisions(fn, tol);
  if (engine != "tl-thread") {
    tl::markFmaDots(fn, tol);
    tl::markReorderedSums(fn, tol);  // the GPU sums over lanes and warps as a tree
  }
  return tol;
}

// The stage-agreement engine the options ask for (--check-stage; auto: tl-scalar for small
// launches, tl-block beyond; thread: the executor over the thread IR this compile lowered to, the
// tensor cores adding up as the H200's do, so --atol 0 --rtol 0 asks for the GPU's bits),
// announcing how long it took.
tl::Engine referenceEngine(const tl::CompiledKernel& k, const PtxStageOptions& o, bool quiet, std::ostream& out) {
  std::string which = o.checkStage;
  double estimate = tl::estimateScalarOps(*k.ir, k.launch);
  if (which == "auto") which = estimate <= kScalarReferenceLimit ? "scalar" : "block";
  std::string name = "tl-" + which;
  const bool keepLayouts = o.keepLayouts, wgmma = o.arch == "sm_90a";  // as jitCompile lowers
  return {name, [which, name, estimate, quiet, keepLayouts, wgmma, &out](const tl::Function& fn, const tl::LaunchConfig& launch,
                                                     tl::Memory& mem) {
            auto start = std::chrono::steady_clock::now();
            if (which == "scalar") {
              tl::runScalar(fn, launch, mem);
            } else if (which == "block") {
              tl::runBlock(fn, launch, mem);
            } else {
              tl::ThreadCompileOptions tco;
              tco.numWarps = launch.numWarps;
              tco.keepLayouts = keepLayouts;
              tco.wgmma = wgmma;
              tl::ThreadCompilation tc = tl::compileToThreadIR(fn, launch, tco);
              tl::runThreadIR(*tc.threadIR, launch, mem);
            }
            if (!quiet)
              out << "   reference: " << name << " in " << tl::formatMs(tl::msSince(start)) << " (estimated "
                  << std::setprecision(3) << estimate << " element ops)\n";
          }};
}

// The GPU keeps no record of which elements a kernel stored, so a second launch runs over
// outputs filled with the byte kPoison: an element is stored when either launch changed it (its
// value differs from what that launch started with). Only a kernel that reads its own output
// back and writes exactly the value it found, in both launches, could hide a missing store.
constexpr uint8_t kPoison = 0xff;  // a NaN in every float dtype, -1 in the ints

void markStoredFromTwoLaunches(tl::Memory& result, const tl::Memory& initial, const tl::Memory& poisonedResult) {
  for (tl::Buffer& b : result.buffers()) {
    if (!b.output || b.stored.empty()) continue;
    const tl::Buffer* init = initial.find(b.name);
    const tl::Buffer* poisoned = poisonedResult.find(b.name);
    const size_t elem = static_cast<size_t>(tl::dtypeBytes(b.dtype));
    for (size_t i = 0; i < b.stored.size(); ++i) {
      const size_t off = i * elem;
      bool changed = init && std::memcmp(b.bytes.data() + off, init->bytes.data() + off, elem) != 0;
      for (size_t j = 0; !changed && poisoned && j < elem; ++j) changed = poisoned->bytes[off + j] != kPoison;
      b.stored[i] = changed;
    }
  }
}

// "time: median 736.9 us (min 734.9 us, 100 runs, L2 flushed)  4371.2 GB/s (91% of 4814)".
void printTiming(const tl::GpuTiming& t, const tl::RunResults& r, const tl::DeviceInfo& dev, std::ostream& out) {
  out << "   time: median " << fmt(t.medianMs * 1e3, 1) << " us (min " << fmt(t.minMs * 1e3, 1) << " us, " << t.runs
      << " runs" << (t.l2Flushed ? ", L2 flushed" : ", L2 NOT flushed") << ")  " << fmt(r.gbps, 1) << " GB/s";
  if (dev.peakGBps() > 0) out << " (" << fmt(100 * r.gbps / dev.peakGBps(), 0) << "% of " << fmt(dev.peakGBps(), 0) << ")";
  if (r.tflops > 0) out << "  " << fmt(r.tflops, 2) << " TFLOP/s";
  out << "\n";
}

// The reference outputs once computed, kept for --unfused's check (the same outputs).
struct Reference {
  std::optional<tl::Memory> memory;
  std::string name;  // "tl-scalar" or "tl-block"
};

// The block-IR ops of one kind (device_print, device_assert) in the kernel.
std::vector<const tl::Op*> opsOf(const tl::Function& fn, tl::OpKind kind) {
  std::vector<const tl::Op*> out;
  tl::walk(fn.body, [&](tl::Op& op) { if (op.kind == kind) out.push_back(&op); });
  return out;
}

// rt.synchronize, where a failed device assertion (CUDA_ERROR_ASSERT: __assertfail, after the
// kernel printed the failing element's located line) becomes a RuntimeError at the kernel's
// device_assert (the first of several: the GPU's line above names the one that failed).
void synchronizeOrAssert(tl::CudaRuntime& rt, const tl::CompiledKernel& k, const std::string& what) {
  try {
    rt.synchronize(what.c_str());
  } catch (const tl::CudaError& e) {
    constexpr int kCudaErrorAssert = 710;
    std::vector<const tl::Op*> asserts = opsOf(*k.ir, tl::OpKind::DeviceAssert);
    if (e.code != kCudaErrorAssert || asserts.empty()) throw;
    std::cout.flush();
    const std::string& msg = asserts[0]->strAttr("msg");
    throw tl::RuntimeError(asserts[0]->loc,
                           "device assertion failed on the GPU (CUDA_ERROR_ASSERT)" + (msg.empty() ? "" : ": " + msg) +
                               (asserts.size() > 1 ? " (this is the first of the kernel's " + std::to_string(asserts.size()) +
                                                         " device assertions: the GPU's line above names the one that failed)"
                                                   : ""));
  }
}

// Loads, runs, checks and times one kernel on the GPU; fills `r` (and `keep` when it checked).
// Returns false when the check fails.
bool runOnGpu(tl::CudaRuntime& rt, const tl::CompiledKernel& k, const tl::JitResult& jit, const PtxStageOptions& o,
              const tl::StageOptions& opts, tl::RunResults& r, Reference& keep, std::ostream& out) {
  bool quiet = opts.quiet;
  const tl::DeviceInfo& dev = rt.device();
  int devArch = dev.ccMajor * 10 + dev.ccMinor;
  if (archNumber(o.arch) > devArch)
    throw std::runtime_error("the PTX targets " + o.arch + " but the GPU is " + dev.arch() + " (" + dev.name +
                             "); compile for it with --arch " + dev.arch());
  int threads = 32 * jit.entry.numWarps;
  tl::GpuModule mod = rt.loadModule(jit.entry.ptx, jit.entry.cubin, jit.entry.kernelName, threads,
                                    int(tl::ptx::dynamicSharedBytes(jit.entry.sharedBytes)));
  r.compile.moduleLoadMs = mod.loadMs;
  if (!quiet) {
    if (!mod.loadNote.empty()) out << "   note: " << mod.loadNote << "\n";
    out << "   module: " << (mod.fromCubin ? "cubin" : "PTX (driver JIT)") << " loaded in " << tl::formatMs(mod.loadMs)
        << "; driver: " << mod.attrs.registers << " registers, " << mod.attrs.sharedBytes << " B shared"
        << (mod.dynamicSharedBytes ? " + " + std::to_string(mod.dynamicSharedBytes) + " B dynamic" : "") << ", "
        << mod.attrs.localBytes << " B local; occupancy " << mod.attrs.blocksPerSM << " blocks/SM = "
        << mod.attrs.warpsPerSM << " of " << dev.maxWarpsPerSM() << " warps/SM\n";
  }
  r.gpuRan = true;
  r.device = dev.str();
  r.smCount = dev.smCount;
  r.registers = mod.attrs.registers;
  r.sharedBytes = mod.attrs.sharedBytes;
  r.dynamicSharedBytes = mod.dynamicSharedBytes;
  r.localBytes = mod.attrs.localBytes;
  r.blocksPerSM = mod.attrs.blocksPerSM;
  r.warpsPerSM = mod.attrs.warpsPerSM;

  // One launch for the check, with the launch's data; then the timed runs. A kernel that
  // prints (device_print: vprintf's lines reach stdout at the synchronize) runs once: the
  // poisoned launch and the timed runs would print everything again.
  const bool prints = !opsOf(*k.ir, tl::OpKind::DevicePrint).empty();
  tl::Memory memory = tl::Memory::fromLaunch(k.launch);
  tl::DeviceBuffers bufs(rt, tl::kernelArgsFor(*k.ir, k.launch), memory);
  bufs.launch(mod, k.launch.grid, threads);
  synchronizeOrAssert(rt, k, "running " + jit.entry.kernelName);
  std::cout.flush();
  bufs.copyOutputsBack(memory);
  if (prints) {  // not checked: count every element as written (no false "never stored" warning)
    for (tl::Buffer& b : memory.buffers()) std::fill(b.stored.begin(), b.stored.end(), uint8_t(1));
    if (!quiet) out << "   note: the kernel prints (device_print), so it ran once: no never-written check, no timing\n";
  }
  if (!prints) {
    tl::Memory poisoned = tl::Memory::fromLaunch(k.launch);
    for (tl::Buffer& b : poisoned.buffers())
      if (b.output) std::fill(b.bytes.begin(), b.bytes.end(), kPoison);
    tl::DeviceBuffers poisonBufs(rt, tl::kernelArgsFor(*k.ir, k.launch), poisoned);
    poisonBufs.launch(mod, k.launch.grid, threads);
    rt.synchronize(("running " + jit.entry.kernelName + " over poisoned outputs").c_str());
    poisonBufs.copyOutputsBack(poisoned);
    markStoredFromTwoLaunches(memory, tl::Memory::fromLaunch(k.launch), poisoned);
  }
  if (!opts.outDir.empty()) tl::writeOutputs(k, memory, opts.outDir, out);

  tl::GpuTiming t;
  if (!prints) t = tl::timeKernel(rt, mod, bufs, k.launch.grid, threads, timingOptions(o));
  r.runs = t.runs;
  r.medianMs = t.medianMs;
  r.minMs = t.minMs;
  r.l2Flushed = t.l2Flushed;
  r.bytes = double(bufs.compulsoryBytes());
  r.gbps = t.medianMs > 0 ? r.bytes / (t.medianMs * 1e-3) / 1e9 : 0;
  r.flops = tl::dotFlops(*k.ir, k.launch);
  r.tflops = r.flops > 0 && t.medianMs > 0 ? r.flops / (t.medianMs * 1e-3) / 1e12 : 0;
  if (!quiet && !prints) printTiming(t, r, dev, out);

  if (opts.noCheck && !quiet) tl::printOutputSummary(memory, out);
  tl::Engine engine = referenceEngine(k, o, quiet, out);
  tl::CheckReport report;
  tl::StageOptions checking = opts;
  checking.intent.tolerance = gpuCheckTolerance(*k.ir, engine.name, opts.intent.tolerance);
  bool pass = tl::checkStageOutputs(k, memory, checking, tl::scalarEngine(), &engine, nullptr, out, &report);
  for (const tl::CheckedOutput& c : report.outputs) {
    if (c.kind != tl::CheckAgainst::Stage) continue;
    r.reference = engine.name;
    r.outputs.push_back({c.output, c.cmp.pass, c.cmp.maxAbsErr, c.cmp.maxRelErr, c.cmp.mismatches, c.cmp.reason});
  }
  r.check = pass ? "PASS" : "FAIL";
  if (!opts.noCheck && o.unfused) {  // the stage reference once more for --unfused's check (deterministic)
    keep.name = engine.name;
    keep.memory = tl::Memory::fromLaunch(k.launch);
    engine.run(*k.ir, k.launch, *keep.memory);
  }
  return pass;
}

// --unfused: one line per unfused kernel, its PTX and ptxas' registers.
void printUnfusedKernels(const tl::UnfusedBuild& b, std::ostream& out) {
  out << "   unfused: " << tl::plural(int64_t(b.kernels.size()), "kernel") << "\n";
  for (const tl::UnfusedKernelBuild& kb : b.kernels) {
    const tl::CacheEntry& e = kb.jit.entry;
    out << "     " << kb.description << "  (entry " << e.kernelName << ")\n"
        << "       ptx: " << kb.ptxPath << "; "
        << (e.ptxas.ran ? std::to_string(e.ptxas.registers) + " registers" : "ptxas not run") << "; "
        << (kb.jit.cacheHit ? "cache hit" : "compiled") << "\n";
  }
}

// "predicted traffic: fused 16.8 MB, unfused 92.3 MB (5.50x), 1 vs 5 launches".
void printPredictedTraffic(const tl::FusionTraffic& t, std::ostream& out) {
  out << "   predicted traffic: fused " << fmt(double(t.fusedBytes) / 1e6, 1) << " MB, unfused "
      << fmt(double(t.unfusedBytes) / 1e6, 1) << " MB (" << fmt(t.ratio(), 2) << "x), " << t.launchesFused << " vs "
      << t.launchesUnfused << " launches\n";
}

// Runs the unfused kernels in order over one set of buffers (every unfused kernel has the same
// parameters: the fused kernel's plus every scratch buffer), checks the final outputs against
// the reference and times the whole sequence with the fused kernel's policy. Returns the run;
// run.check is "FAIL" when an output differs.
tl::UnfusedRun runUnfusedOnGpu(tl::CudaRuntime& rt, const tl::CompiledKernel& k, const tl::UnfusedBuild& b,
                               const tl::RunResults& fused, Reference& ref, const PtxStageOptions& o,
                               const tl::StageOptions& opts, std::ostream& out) {
  tl::UnfusedRun run;
  run.fusedMedianMs = fused.medianMs;
  if (b.kernels.empty()) throw std::runtime_error("unfuse() produced no kernels for " + k.ir->name);
  std::vector<tl::KernelArg> args = tl::kernelArgsFor(*b.kernels[0].kernel->ir, b.launch);
  std::vector<tl::GpuModule> mods;
  std::vector<int> threads;
  for (const tl::UnfusedKernelBuild& kb : b.kernels) {
    std::vector<tl::KernelArg> mine = tl::kernelArgsFor(*kb.kernel->ir, b.launch);
    bool same = mine.size() == args.size();
    for (size_t i = 0; same && i < mine.size(); ++i) same = mine[i].name == args[i].name;
    if (!same) throw std::runtime_error(kb.name + " does not take the same parameters as " + b.kernels[0].name);
    threads.push_back(32 * kb.jit.entry.numWarps);
    mods.push_back(rt.loadModule(kb.jit.entry.ptx, kb.jit.entry.cubin, kb.jit.entry.kernelName, threads.back(),
                                 int(tl::ptx::dynamicSharedBytes(kb.jit.entry.sharedBytes))));
    run.registers.push_back(mods.back().attrs.registers);
  }
  if (!opts.quiet)
    for (size_t i = 0; i < b.kernels.size(); ++i)
      out << "     " << b.kernels[i].jit.entry.kernelName << ": " << run.registers[i] << " registers (driver), "
          << mods[i].attrs.blocksPerSM << " blocks/SM\n";

  // The buffers once (scratch included); one pass for the check, then the timed sequences.
  tl::Memory memory = tl::Memory::fromLaunch(b.launch);
  tl::DeviceBuffers bufs(rt, args, memory);
  auto launchAll = [&] {
    for (size_t i = 0; i < mods.size(); ++i) bufs.launch(mods[i], b.launch.grid, threads[i]);
  };
  launchAll();
  rt.synchronize(("running the unfused kernels of " + k.ir->name).c_str());
  bufs.copyOutputsBack(memory);
  run.timing = tl::timeLaunches(rt, launchAll, timingOptions(o));
  if (!opts.noCheck) {
    if (!ref.memory) {  // the fused run did not check: compute the reference now
      tl::Engine engine = referenceEngine(k, o, opts.quiet, out);
      ref.memory = tl::Memory::fromLaunch(k.launch);
      engine.run(*k.ir, k.launch, *ref.memory);
      ref.name = engine.name;
    }
    run.check = tl::compareOutputs(*ref.memory, memory, ref.name + " (unfused; stage agreement)", out,
                                   gpuCheckTolerance(*k.ir, ref.name, opts.intent.tolerance))
                    ? "PASS"
                    : "FAIL";
  }
  return run;
}

// "unfused: median 1834.2 us (5 launches) vs fused 736.9 us: 2.49x slower; predicted traffic 5.50x".
void printUnfusedSummary(const tl::UnfusedBuild& b, const tl::UnfusedRun& run, std::ostream& out) {
  const tl::GpuTiming& t = run.timing;
  out << "   unfused time: median " << fmt(t.medianMs * 1e3, 1) << " us (min " << fmt(t.minMs * 1e3, 1) << " us, "
      << t.runs << " runs" << (t.l2Flushed ? ", L2 flushed" : ", L2 NOT flushed") << ", " << b.kernels.size()
      << " launches)\n";
  out << "   fusion: fused " << fmt(run.fusedMedianMs * 1e3, 1) << " us vs unfused " << fmt(t.medianMs * 1e3, 1)
      << " us: measured " << fmt(run.ratioVsFused(), 2) << "x, predicted traffic " << fmt(b.traffic.ratio(), 2)
      << "x; launches 1 vs " << b.kernels.size() << "\n";
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"tl-ptx: compile kernels to PTX with LLVM, run and time them on an NVIDIA GPU when there is one"};
  tl::StageOptions opts;
  tl::addStageOptions(app, opts);
  PtxStageOptions o;
  app.add_option("--arch", o.arch,
                 "Target GPU architecture (sm_90a: Hopper with its arch-specific instructions; f16 / bf16 / fp8 / tf32 dots "
                 "that fit run as warpgroup MMAs, wgmma.mma_async)")
      ->check(CLI::IsMember({"sm_80", "sm_86", "sm_89", "sm_90", "sm_90a"}))
      ->capture_default_str();
  app.add_option("--gpu", o.gpu,
                 "The GPU description (sim/gpus/<key>.json) whose per-block shared-memory limit the compile checks")
      ->capture_default_str();
  app.add_flag("--print-llvm", o.printLLVM, "Print the optimized LLVM IR");
  app.add_flag("--print-ptx", o.printPTX, "Print the PTX");
  app.add_option("--ptx-dir", o.ptxDir, "Write each kernel's PTX as DIR/<kernel>.ptx")->capture_default_str();
  app.add_flag("--no-cache", o.noCache, "Neither read nor write the JIT cache ($TL_CACHE_DIR, else "
                                        "$XDG_CACHE_HOME/tilelab, else ~/.cache/tilelab)");
  app.add_option("--results-dir", o.resultsDir, "Write one results JSON per kernel as DIR/<kernel>.json")
      ->capture_default_str();
  app.add_option("--check-stage", o.checkStage,
                 "The stage the GPU's outputs must agree with: scalar, block, thread (the executor over this compile's "
                 "thread IR, whose tensor cores add up as the H200's do), or auto (tl-scalar for small launches)")
      ->check(CLI::IsMember({"scalar", "block", "thread", "auto"}))
      ->capture_default_str();
  app.add_option("--warmup", o.warmup, "Untimed launches before timing")->check(CLI::Range(0, 100000))->capture_default_str();
  auto* runsOpt = app.add_option("--runs", o.runs, "Timed launches (default: up to 100 within 0.5 s)")
                      ->check(CLI::Range(1, 1000000));
  app.add_flag("--unfused", o.unfused, "Also compile (and on a GPU run, check and time) the unfused kernels: one "
                                      "per block-level op, intermediates in global memory");
  app.add_option("--assembler", o.assembler,
                 "PTX -> cubin: ptxas (the ptxas process), auto (libnvJitLink in process when it loads, else "
                 "the process) or nvjitlink (always the library; more registers: relocatable code)")
      ->check(CLI::IsMember({"auto", "ptxas", "nvjitlink"}))
      ->capture_default_str();
  bool noLineInfo = false;
  app.add_flag("--keep-layouts", o.keepLayouts,
               "Keep the layouts the source implies: no automatic convert_layout through shared memory");
  app.add_flag("--no-line-info", noLineInfo, "Leave the source lines out of the LLVM IR (!dbg) and the PTX (.loc/.file)");
  if (int rc = tl::parseCommandLine(app, argc, argv); rc >= 0) return rc;
  o.runsGiven = runsOpt->count() > 0;
  try {
    tl::setTargetGpu(tl::loadGpu(o.gpu));
  } catch (const std::exception& e) {
    std::cerr << "tl-ptx: error: --gpu: " << e.what() << "\n";
    return 1;
  }
  if (o.arch == "sm_90a" && tl::targetGpu().computeCapability != 90) {
    std::cerr << "tl-ptx: error: --arch sm_90a is Hopper's (compute capability 9.0), but --gpu " << o.gpu << " ("
              << tl::targetGpu().name << ") is " << tl::targetGpu().computeCapability / 10 << "."
              << tl::targetGpu().computeCapability % 10 << "\n";
    return 1;
  }

  tl::JitCache cache(tl::JitCache::defaultRoot());
  Gpu gpu;
  return tl::runStage("tl-ptx", opts, [&](tl::CompiledKernel& k, std::ostream& out) {
    if (opts.printIR) out << tl::printFunction(*k.ir);
    tl::JitOptions jo;
    jo.ptx.arch = o.arch;
    jo.ptx.lineInfo = !noLineInfo;
    jo.useCache = !o.noCache;
    jo.wantLLVM = o.printLLVM;
    jo.keepLayouts = o.keepLayouts;
    jo.assembler = assemblerOf(o.assembler);
    tl::JitResult jit = tl::jitCompile(k, jo, o.noCache ? nullptr : &cache);
    if (o.printLLVM) out << "// ----- LLVM IR -----\n" << jit.llvmIR;
    if (o.printPTX) out << "// ----- PTX -----\n" << jit.entry.ptx;

    std::string ptxPath = (fs::path(o.ptxDir) / (fs::path(k.path).stem().string() + ".ptx")).string();
    std::error_code ec;
    fs::create_directories(o.ptxDir, ec);
    std::string err;
    if (!tl::writeFileAtomic(ptxPath, jit.entry.ptx, &err)) throw std::runtime_error(err);
    if (!opts.quiet) printCompileSummary(jit, k, ptxPath, out);

    tl::RunResults r = baseResults(k, jit, o, ptxPath);
    bool ok = true;
    Reference ref;
    if (tl::CudaRuntime* rt = gpu.get(out, opts.quiet)) {
      ok = runOnGpu(*rt, k, jit, o, opts, r, ref, out);
    } else {
      r.gpuSkipped = gpu.why;
      out << "   " << tl::gpuSkippedMessage(gpu.why, ptxPath) << "\n";
    }

    // --unfused: the same computation as one kernel per op, measured next to the fused kernel.
    std::optional<nlohmann::ordered_json> unfusedJson;
    if (o.unfused) {
      tl::JitOptions ujo = jo;
      ujo.wantLLVM = false;  // --print-llvm shows the fused kernel only
      tl::UnfusedBuild ub = tl::compileUnfused(k, ujo, o.noCache ? nullptr : &cache);
      tl::writeUnfusedPTX(ub, k.path, o.ptxDir);
      if (!opts.quiet) printUnfusedKernels(ub, out);
      printPredictedTraffic(ub.traffic, out);
      if (tl::CudaRuntime* rt = gpu.get(out, opts.quiet)) {
        tl::UnfusedRun run = runUnfusedOnGpu(*rt, k, ub, r, ref, o, opts, out);
        printUnfusedSummary(ub, run, out);
        ok = ok && run.check != "FAIL";
        unfusedJson = tl::unfusedToJson(ub, &run);
      } else {
        out << "   unfused: GPU step skipped: " << gpu.why << "; PTX of the "
            << tl::plural(int64_t(ub.kernels.size()), "kernel") << " written to " << o.ptxDir << "\n";
        unfusedJson = tl::unfusedToJson(ub, nullptr);
      }
    }
    std::string resultsPath = tl::writeResults(r, o.resultsDir);
    if (unfusedJson) {  // the standard results plus the "unfused" object, rewritten in place
      nlohmann::ordered_json j = tl::resultsToJson(r);
      j["unfused"] = std::move(*unfusedJson);
      if (!tl::writeFileAtomic(resultsPath, j.dump(2) + "\n", &err)) throw std::runtime_error(err);
    }
    if (!opts.quiet) out << "   results: " << resultsPath << "\n";
    return ok;
  });
}
