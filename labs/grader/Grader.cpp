// tl-grade's engine (Grader.h): building each graded launch, running the reference and the
// submission through the stage libraries, and evaluating the spec's checks over what they report.
#include "grader/Grader.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <iomanip>
#include <sstream>

#include "block/BlockInterpreter.h"
#include "frontend/AST.h"
#include "frontend/Frontend.h"
#include "ir/FileRead.h"
#include "ir/Pass.h"
#include "runtime/Checks.h"
#include "runtime/Driver.h"  // plural
#include "runtime/Hash.h"
#include "sim/SimReport.h"
#include "sim/ThreadExecutor.h"
#include "thread/Pipeline.h"
#if TL_GRADE_HAVE_PTX
#include "ptx/Registers.h"
#endif
#if TL_GRADE_HAVE_CPU
#include "cpu/CpuCache.h"
#include "cpu/CpuJit.h"
#include "cpu/CpuResults.h"
#include "cpu/CpuRuntime.h"
#include "runtime/AtomicFile.h"  // defaultCacheRoot
#endif

namespace tl::grade {

namespace fs = std::filesystem;

bool GradeResult::allPass() const {
  if (!infrastructureError.empty()) return false;
  for (const auto& c : checks)
    if (!c.pass) return false;
  return true;
}

namespace {

// A source file parsed once, with its @launch restricted to what the lab lets it choose.
struct Source {
  std::shared_ptr<SourceFile> file;
  std::unique_ptr<ParsedKernel> parsed;
};

std::string readSource(const std::string& path) {
  std::string text;
  try {
    text = readFileBounded(path, FileKind::KernelSource);
  } catch (const FileReadError& e) {
    throw std::runtime_error(path + ": " + e.reason);
  }
  if (text.find('\0') != std::string::npos) throw std::runtime_error(path + ": a binary file, not a .tl source");
  return text;
}

// Parses; drops the @launch keywords the lab does not let the submission choose (noting each).
// False with the rendered diagnostics in `error` when it does not parse.
bool parseRestricted(const std::string& path, const std::string& text, const LabSpec& spec, Source& src,
                     std::vector<std::string>* notes, std::string& error) {
  src.file = std::make_shared<SourceFile>(path, text);
  DiagEngine diag(src.file);
  src.parsed = parseKernelFile(src.file, diag);
  if (!src.parsed || diag.hasErrors()) {
    error = diag.renderAll();
    return false;
  }
  const ast::Kernel* main = src.parsed->module->mainKernel();
  int jitKernels = 0;
  for (const auto& k : src.parsed->module->kernels) jitKernels += k.decorator("jit") != nullptr;
  if (jitKernels > 1 && notes && main)
    notes->push_back("this file defines " + std::to_string(jitKernels) + " @jit kernels; the first, '" + main->name +
                     "', is the one graded");
  for (auto& k : src.parsed->module->kernels) {
    if (&k != main) continue;
    for (auto& d : k.decorators) {
      if (d.name != "launch") continue;
      auto& kws = d.keywords;
      auto isProblem = [&](const std::string& n) {
        return std::any_of(spec.problem.begin(), spec.problem.end(), [&](const auto& a) { return a.first == n; });
      };
      for (const auto& kw : kws)
        if (!spec.submissionChooses.count(kw.name) && !isProblem(kw.name) && notes)
          notes->push_back("your @launch sets '" + kw.name + "' (line " + std::to_string(kw.loc.line) +
                           "), which the lab does not let a submission choose: it was ignored");
      kws.erase(std::remove_if(kws.begin(), kws.end(),
                               [&](const ast::Keyword& kw) { return !spec.submissionChooses.count(kw.name); }),
                kws.end());
    }
  }
  return true;
}

// The overrides of one step: the lab's problem, then the launch's and the step's own, then SEED.
std::vector<LaunchOverride> overridesFor(const LabSpec& spec, const LabLaunch& launch, const LabStep& step,
                                         uint64_t seed) {
  std::vector<LaunchOverride> out;
  out.push_back({"SEED", std::to_string(seed)});
  for (const auto& [n, e] : spec.problem) out.push_back({n, e});
  for (const auto& [n, e] : launch.set) out.push_back({n, e});
  for (const auto& [n, e] : step.set) out.push_back({n, e});
  return out;
}

struct Built {
  LaunchConfig launch;
  Specialization spec;
  std::unique_ptr<Function> ir;
};

bool build(const Source& src, const std::vector<LaunchOverride>& overrides, Built& out, std::string& error,
           Loc* errorLoc = nullptr) {
  DiagEngine diag(src.file);
  out.launch = evalLaunch(*src.parsed, overrides, diag);
  if (!diag.hasErrors()) {
    out.spec = specializationFor(*src.parsed, out.launch);
    out.ir = compileKernel(*src.parsed, out.spec, diag);
  }
  if (diag.hasErrors() || !out.ir) {
    error = diag.renderAll();
    if (errorLoc && !diag.diagnostics().empty()) *errorLoc = diag.diagnostics().front().loc;
    return false;
  }
  return true;
}

// What a student may see of an error at a hidden launch: where, and what kind of error, never the
// sizes, buffers or values in the message ("load out of bounds", "shared-memory race on ...").
std::string hiddenError(const Source& src, Loc loc, const std::string& message) {
  std::string kind = message.substr(0, message.find(':'));
  return renderDiagnostic(src.file.get(), Severity::Error, loc,
                          kind + " (at an unseen launch: its sizes are not shown)");
}

// How a run ended.
enum class RunStatus { Ok, CompileError, OutOfBounds, Race, RuntimeError };

struct LaunchRun {
  RunStatus status = RunStatus::Ok;
  std::string error;                    // rendered at its line (redacted at a hidden launch)
  std::vector<Memory> steps;            // memory after each step that ran
  std::vector<UnwrittenOutput> unwritten;  // over every step
  nlohmann::json cpuReport;             // a tl-cpu launch's results JSON (stages/cpu/CpuResults.h)
};

// Which stage runs a launch: tl-block for the reference's outputs, tl-thread (with race
// detection) for a submission's, tl-cpu for a submission's at a "cpu" launch.
enum class Engine { Block, Thread, Cpu };

#if TL_GRADE_HAVE_CPU
// tl-cpu's kernel for `fn` (block IR after the block pipeline): the checked build tracks stores
// (the never-written report), the timed one does not. Both go through tl-cpu's JIT cache.
const cpu::CpuTarget& hostCpu() {
  static const cpu::CpuTarget target = cpu::hostTarget();
  return target;
}

cpu::CpuKernel compileForCpu(const Function& fn, bool trackStores) {
  static const cpu::CpuCache cache(defaultCacheRoot());
  cpu::CodegenOptions cg;
  cg.trackStores = trackStores;
  cpu::JitOptions jo;
  jo.cache = &cache;
  return cpu::compileKernel(fn, hostCpu(), cg, jo);
}
#endif

// Runs `fn` (straight from the front end) at `launch` over `mem` on `engine`; a tl-cpu run also
// fills `cpuReport`.
void runOn(Engine engine, const LabSpec& spec, const Source& src, Built& b, Memory& mem, nlohmann::json& cpuReport) {
  switch (engine) {
    case Engine::Block:
      blockPipeline().run(*b.ir);
      runBlock(*b.ir, b.launch, mem);
      return;
    case Engine::Thread: {
      ThreadCompileOptions to;
      to.keepLayouts = spec.keepLayouts;
      ThreadCompilation tc = compileToThreadIR(*b.ir, b.launch, to);
      ExecOptions eo;
      eo.recordAccesses = false;
      eo.detectRaces = true;
      runThreadIR(*tc.threadIR, b.launch, mem, eo);
      return;
    }
    case Engine::Cpu: {
#if TL_GRADE_HAVE_CPU
      blockPipeline().run(*b.ir);
      cpu::CpuKernel kernel = compileForCpu(*b.ir, /*trackStores=*/true);
      cpu::RunOptions ro;
      ro.threads = spec.cpu.threads;
      cpu::RunStats stats = cpu::runKernel(kernel, *b.ir, b.launch, mem, ro);
      cpuReport = nlohmann::json::parse(
          cpu::resultsToJson(cpu::describeRun(*b.ir, b.launch, b.spec, *src.file, hostCpu(), kernel, stats.threads, mem))
              .dump());
      return;
#else
      (void)src, (void)cpuReport;
      throw std::runtime_error("this tl-grade was built without tl-cpu (no LLVM): it cannot run a \"cpu\" launch");
#endif
    }
  }
}

RunStatus classify(const RuntimeError& e) {
  std::string m = e.what();
  if (m.find("out of bounds") != std::string::npos) return RunStatus::OutOfBounds;
  if (m.find("race") != std::string::npos) return RunStatus::Race;
  return RunStatus::RuntimeError;
}

// Runs every step of `launch` on one engine.
LaunchRun runLaunch(const LabSpec& spec, const Source& src, const LabLaunch& launch, uint64_t seed, Engine engine) {
  LaunchRun run;
  for (size_t s = 0; s < launch.steps.size(); ++s) {
    const LabStep& step = launch.steps[s];
    Built b;
    Loc where;
    if (!build(src, overridesFor(spec, launch, step, seed), b, run.error, &where)) {
      run.status = RunStatus::CompileError;
      if (launch.hidden) run.error = hiddenError(src, where, "the kernel does not compile or launch");
      return run;
    }
    try {
      Memory mem = Memory::fromLaunch(b.launch);
      for (const auto& [dst, from] : step.feed) {
        Buffer* d = mem.find(dst);
        const Buffer* f = run.steps.back().find(from);
        if (!d || !f || d->bytes.size() != f->bytes.size() || d->dtype != f->dtype)
          throw std::runtime_error("step " + std::to_string(s + 1) + " of launch '" + launch.name + "': cannot feed '" +
                                   from + "' into '" + dst + "' (missing, or another size or dtype)");
        d->bytes = f->bytes;
      }
      runOn(engine, spec, src, b, mem, run.cpuReport);
      for (auto& u : findUnwritten(mem)) run.unwritten.push_back(std::move(u));
      run.steps.push_back(std::move(mem));
    } catch (const RuntimeError& e) {
      run.status = classify(e);
      run.error = launch.hidden ? hiddenError(src, e.loc, e.what())
                                : renderDiagnostic(src.file.get(), Severity::Error, e.loc, e.what());
      return run;
    } catch (const IRError& e) {
      run.status = RunStatus::RuntimeError;
      run.error = renderDiagnostic(src.file.get(), Severity::Error, e.loc,
                                   std::string("internal compiler error: ") + e.what());
      return run;
    }
  }
  return run;
}

// The tl-sim report of a launch's first step (the kernel as the problem sizes it).
nlohmann::json simulate(const LabSpec& spec, const Source& src, const std::string& path, const LabLaunch& launch,
                        uint64_t seed, std::string& error) {
  Built b;
  if (!build(src, overridesFor(spec, launch, launch.steps.front(), seed), b, error)) return nullptr;
  SimOptions so;
  so.sourcePath = path;
  so.sourceText = src.file->text();
  so.unfused = spec.needsFusion();
  so.keepLayouts = spec.keepLayouts;
#if TL_GRADE_HAVE_PTX
  so.registers = ptxasRegisterSource(loadGpu(so.gpu).arch);
#endif
  try {
    SimReport r = simulateKernel(*b.ir, b.launch, so);
    return nlohmann::json::parse(r.json.dump());
  } catch (const RuntimeError& e) {
    error = renderDiagnostic(src.file.get(), Severity::Error, e.loc, e.what());
  } catch (const IRError& e) {
    error = renderDiagnostic(src.file.get(), Severity::Error, e.loc, std::string("internal compiler error: ") + e.what());
  }
  return nullptr;
}

std::string fmt(double v) {
  std::ostringstream os;
  if (v != 0 && (std::fabs(v) >= 1e6 || std::fabs(v) < 1e-3)) os << std::setprecision(3) << std::scientific << v;
  else os << std::setprecision(4) << v;
  return os.str();
}

// A metric check's figure: the field (aggregated over the selected elements), divided as asked.
// nullopt with `why` when the report does not have it.
std::optional<double> metricValue(const LabCheck& c, const nlohmann::json& report, std::string& why,
                                  size_t* matched = nullptr) {
  auto number = [](const nlohmann::json* v) -> std::optional<double> {
    if (!v) return std::nullopt;
    if (v->is_number()) return v->get<double>();
    if (v->is_boolean()) return v->get<bool>() ? 1.0 : 0.0;
    return std::nullopt;
  };
  std::optional<double> value;
  if (!c.value.empty()) {
    const nlohmann::json* arr = lookup(report, c.value);
    if (!arr || !arr->is_array()) {
      why = "the report has no list '" + c.value + "'";
      return std::nullopt;
    }
    std::vector<double> xs;
    for (const auto& e : *arr) {
      bool keep = true;
      for (const auto& [k, want] : c.where) {
        const nlohmann::json* got = lookup(e, k);
        keep = keep && got && (*got == want || (got->is_array() && std::find(got->begin(), got->end(), want) != got->end()));
      }
      if (!keep) continue;
      if (c.aggregate == "count") {
        xs.push_back(1);
        continue;
      }
      auto x = number(lookup(e, c.field));
      if (!x) {
        why = "an element of '" + c.value + "' has no number '" + c.field + "'";
        return std::nullopt;
      }
      xs.push_back(*x);
    }
    if (matched) *matched = xs.size();
    if (xs.empty() && c.aggregate != "count" && c.aggregate != "sum") {
      why = "nothing in '" + c.value + "' matches the check's filter";
      return std::nullopt;
    }
    double acc = c.aggregate == "max" ? -INFINITY : c.aggregate == "min" ? INFINITY : 0;
    for (double x : xs) {
      if (c.aggregate == "max") acc = std::max(acc, x);
      else if (c.aggregate == "min") acc = std::min(acc, x);
      else acc += x;
    }
    if (c.aggregate == "mean") acc /= double(xs.size());
    value = acc;
  } else {
    value = number(lookup(report, c.field));
    if (!value) {
      why = "the report has no number '" + c.field + "'";
      return std::nullopt;
    }
  }
  if (!c.divideBy.empty()) {
    auto d = number(lookup(report, c.divideBy));
    if (!d || *d == 0) {
      why = "the report has no non-zero '" + c.divideBy + "' to divide by";
      return std::nullopt;
    }
    *value /= *d;
  }
  return value;
}

std::string metricName(const LabCheck& c) {
  std::string s = c.value.empty() ? c.field : c.aggregate + " " + c.field + " over " + c.value;
  if (!c.where.empty()) {
    s += " where";
    for (const auto& [k, v] : c.where) s += " " + k + "=" + v.dump();
  }
  if (!c.divideBy.empty()) s += " / " + c.divideBy;
  if (c.relativeToReference) s += ", relative to the reference";
  return s;
}

std::string launchName(const LabLaunch& l) { return l.hidden ? "an unseen launch" : "launch '" + l.name + "'"; }

bool checksLaunch(const LabCheck& c, const std::string& launch) {
  return c.launches.empty() || std::find(c.launches.begin(), c.launches.end(), launch) != c.launches.end();
}

// Points for a time ratio: full up to fullWithin, then down on a log scale to minimalPoints at
// minimalBeyond.
void scoreRatio(PerformanceOutcome& p, const LabPerformance& pf) {
  double t = std::log(p.ratio / pf.fullWithin) / std::log(pf.minimalBeyond / pf.fullWithin);
  t = std::clamp(t, 0.0, 1.0);
  p.earned = pf.points - t * (pf.points - pf.minimalPoints);
}

#if TL_GRADE_HAVE_CPU
// Timed runs use the lab's threads, but no more than this machine has cores: 16 threads on 2
// cores would time the operating system's scheduler, not the kernels.
int cpuTimingThreads(const LabSpec& spec) { return std::min(spec.cpu.threads, cpu::defaultThreads()); }

// The medians (ms) of the reference's and the submission's kernels at a tl-cpu launch, compiled
// without store tracking and timed in turns (rounds of a few runs each, the first of each round
// dropped), so both see the same machine load.
std::pair<double, double> timeOnCpu(const LabSpec& spec, const Source& ref, const Source& sub, const LabLaunch& l,
                                    uint64_t seed) {
  struct Timed {
    Built b;
    cpu::CpuKernel kernel;
    std::unique_ptr<Memory> mem;
    std::vector<double> ms;
  };
  Timed t[2];
  const Source* srcs[2] = {&ref, &sub};
  for (int i = 0; i < 2; ++i) {
    std::string error;
    if (!build(*srcs[i], overridesFor(spec, l, l.steps.front(), seed), t[i].b, error))
      throw std::runtime_error("cannot rebuild for timing at '" + l.name + "':\n" + error);
    blockPipeline().run(*t[i].b.ir);
    t[i].kernel = compileForCpu(*t[i].b.ir, /*trackStores=*/false);
    t[i].mem = std::make_unique<Memory>(Memory::fromLaunch(t[i].b.launch));
  }
  const int rounds = std::min(5, spec.cpu.runs);
  cpu::RunOptions ro;
  ro.threads = cpuTimingThreads(spec);
  ro.repeat = (spec.cpu.runs + rounds - 1) / rounds + 1;
  for (int r = 0; r < rounds; ++r)
    for (Timed& x : t) {
      cpu::RunStats st = cpu::runKernel(x.kernel, *x.b.ir, x.b.launch, *x.mem, ro);
      x.ms.insert(x.ms.end(), st.ms.begin() + 1, st.ms.end());
    }
  return {medianOf(t[0].ms), medianOf(t[1].ms)};
}
#endif

}  // namespace

ReferenceRuns runReference(const LabSpec& spec, uint64_t seed) {
#if !TL_GRADE_HAVE_CPU
  if (spec.hasCpuLaunches())
    throw SpecError((spec.dir / "lab.json").string() +
                    ": this lab runs launches on tl-cpu, and this tl-grade was built without it (no LLVM 19)");
#endif
  ReferenceRuns ref;
  ref.seed = seed;
  const std::string path = spec.reference.string();
  Source src;
  std::string error;
  if (!parseRestricted(path, readSource(path), spec, src, nullptr, error))
    throw std::runtime_error("the lab's reference " + path + " does not compile:\n" + error);
  for (const LabLaunch& l : spec.launches) {
    LaunchRun run = runLaunch(spec, src, l, seed, Engine::Block);
    if (run.status != RunStatus::Ok)
      throw std::runtime_error("the lab's reference fails at launch '" + l.name + "':\n" + run.error);
    if (l.cpu) {
      // The reference on tl-cpu too: its report, and its outputs held to tl-block's (a difference
      // is tl-cpu's fault, and would fail every student).
      LaunchRun onCpu = runLaunch(spec, src, l, seed, Engine::Cpu);
      if (onCpu.status != RunStatus::Ok)
        throw std::runtime_error("the lab's reference fails on tl-cpu at launch '" + l.name + "':\n" + onCpu.error);
      for (const CheckedOutput& co : compareAllOutputs(run.steps.back(), onCpu.steps.back(), CheckAgainst::Stage, "tl-block",
                                                       spec.tolerance))
        if (!co.cmp.pass)
          throw std::runtime_error("the lab's reference: tl-cpu's " + co.output + " differs from tl-block's at launch '" +
                                   l.name + "'");
      ref.cpuReports.emplace(l.name, std::move(onCpu.cpuReport));
    }
    ref.outputs.emplace(l.name, std::move(run.steps.back()));
    if (l.simulate) {
      nlohmann::json rep = simulate(spec, src, path, l, seed, error);
      if (rep.is_null()) throw std::runtime_error("the lab's reference does not simulate at '" + l.name + "':\n" + error);
      ref.reports.emplace(l.name, std::move(rep));
    }
  }
  // Every metric must be readable from the reference's own report: a misspelt path is the lab's
  // error, not every student's.
  for (size_t i = 0; i < spec.checks.size(); ++i) {
    const LabCheck& c = spec.checks[i];
    if (c.kind != CheckKind::Metric) continue;
    std::string why;
    std::optional<double> v = metricValue(c, (c.report == "cpu" ? ref.cpuReports : ref.reports).at(c.launch), why);
    if (!v) throw SpecError((spec.dir / "lab.json").string() + ": /checks/" + std::to_string(i) + " ('" + c.id +
                            "'): on the reference solution's own report: " + why);
    if (c.relativeToReference && *v == 0)
      throw SpecError((spec.dir / "lab.json").string() + ": /checks/" + std::to_string(i) + " ('" + c.id +
                      "'): the reference's figure is 0, so nothing can be relative to it");
  }
  return ref;
}

GradeResult gradeSubmission(const LabSpec& spec, const std::string& path, const ReferenceRuns& reference) {
  auto start = std::chrono::steady_clock::now();
  GradeResult g;
  g.submission = path;
  g.seed = reference.seed;
  auto finish = [&]() -> GradeResult {
    for (const auto& c : g.checks) {
      g.maxScore += c.points;
      if (c.pass) g.score += c.points;
    }
    for (auto [pf, po] : {std::pair{&spec.performance, &g.performance}, std::pair{&spec.cpuPerformance, &g.cpuPerformance}})
      if (pf->enabled) {
        g.maxScore += pf->points;
        g.score += po->earned;
      }
    g.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return std::move(g);
  };
  auto gate = [&](const char* id, bool pass, std::string detail, std::string hint) {
    g.checks.push_back({id, id, pass, 0, std::move(detail), std::move(hint), std::nullopt});
  };
  auto failRest = [&](const std::string& why) {  // not graded: no hint, it would not be about this
    for (const LabCheck& c : spec.checks) g.checks.push_back({c.id, checkKindName(c.kind), false, c.points, why, "", {}});
    for (auto [pf, po] : {std::pair{&spec.performance, &g.performance}, std::pair{&spec.cpuPerformance, &g.cpuPerformance}})
      if (pf->enabled) {
        po->points = pf->points;
        po->detail = why;
      }
  };

  try {
    std::string text;
    try {
      text = readSource(path);
    } catch (const std::runtime_error& e) {
      gate("compiles", false, e.what(), "Submit the .tl source file itself.");
      gate("signature", false, "not checked: the file cannot be read", "");
      failRest("not graded: the file cannot be read");
      return finish();
    }
    g.sourceSha256 = sha256Hex(text);
    Source src;
    std::string error;
    if (!parseRestricted(path, text, spec, src, &g.notes, error)) {
      gate("compiles", false, error, "Fix the first error: it points at its line.");
      gate("signature", false, "not checked: the submission does not parse", "");
      failRest("not graded: the submission does not compile");
      return finish();
    }
    // The signature: names, order and constexpr-ness of the parameters, and the kernel's name.
    std::vector<ParsedKernel::ParamDecl> params = src.parsed->params();
    std::string want, have;
    for (const auto& p : spec.params) want += (want.empty() ? "" : ", ") + p.name + (p.isConstexpr ? ": constexpr" : "");
    for (const auto& p : params) have += (have.empty() ? "" : ", ") + p.name + (p.isConstexpr ? ": constexpr" : "");
    bool sigOk = want == have && (spec.kernelName.empty() || spec.kernelName == src.parsed->kernelName());
    std::string sigDetail = "def " + src.parsed->kernelName() + "(" + have + ")";
    if (!sigOk)
      sigDetail += "\nthe lab requires: def " + (spec.kernelName.empty() ? std::string("<any name>") : spec.kernelName) +
                   "(" + want + ")";
    // It compiles at the first launch (the gate); other launches may still fail to evaluate.
    Built first;
    bool compiles = build(src, overridesFor(spec, spec.launches.front(), spec.launches.front().steps.front(), g.seed),
                          first, error);
    gate("compiles", compiles, compiles ? "" : error, "Fix the first error: it points at its line.");
    gate("signature", sigOk, sigDetail, "Keep the starter's kernel name and parameters: the lab launches it with them.");
    if (!compiles || !sigOk) {
      failRest(compiles ? "not graded: the signature differs" : "not graded: the submission does not compile");
      return finish();
    }

    // Every launch on tl-thread; the outcome per launch feeds the correctness kinds.
    std::map<std::string, LaunchRun> runs;
    for (const LabLaunch& l : spec.launches) runs.emplace(l.name, runLaunch(spec, src, l, g.seed, l.cpu ? Engine::Cpu : Engine::Thread));
    std::map<std::string, nlohmann::json> reports;
    std::map<std::string, std::string> simErrors;
    for (const LabLaunch& l : spec.launches) {
      if (!l.simulate) continue;
      std::string err;
      nlohmann::json rep = simulate(spec, src, path, l, g.seed, err);
      if (rep.is_null()) simErrors[l.name] = err;
      else reports.emplace(l.name, std::move(rep));
    }

    bool correctEverywhere = true;
    for (const LabCheck& c : spec.checks) {
      CheckOutcome o{c.id, checkKindName(c.kind), true, c.points, "", c.hint, std::nullopt};
      auto failWith = [&](const std::string& line) {
        o.pass = false;
        o.detail += (o.detail.empty() ? "" : "\n") + line;
      };
      if (c.kind == CheckKind::Metric) {
        const LabLaunch* l = spec.findLaunch(c.launch);
        const bool onCpu = c.report == "cpu";
        const nlohmann::json* report = nullptr;
        if (onCpu) {
          const LaunchRun& run = runs.at(c.launch);
          if (run.status == RunStatus::Ok) report = &run.cpuReport;
          else failWith("no tl-cpu report at " + launchName(*l) + ":\n" + run.error);
        } else if (auto rep = reports.find(c.launch); rep != reports.end()) {
          report = &rep->second;
        } else {
          failWith("no simulation at " + launchName(*l) + ":\n" + simErrors[c.launch]);
        }
        if (report) {
          std::string why;
          std::optional<double> v = metricValue(c, *report, why);
          if (v && c.relativeToReference) {
            std::optional<double> r = metricValue(c, (onCpu ? reference.cpuReports : reference.reports).at(c.launch), why);
            if (!r || *r == 0) v.reset(), why = why.empty() ? "the reference's figure is 0" : why;
            else *v /= *r;
          }
          if (!v) {
            failWith(why);
          } else {
            o.value = *v;
            bool ok = (!c.min || *v >= *c.min) && (!c.max || *v <= *c.max);
            std::string bound = c.min && c.max ? "between " + fmt(*c.min) + " and " + fmt(*c.max)
                                : c.min      ? "at least " + fmt(*c.min)
                                             : "at most " + fmt(*c.max);
            std::string line = metricName(c) + " at " + launchName(*l) + " = " + fmt(*v) + " (must be " + bound + ")";
            if (ok) o.detail = line;
            else failWith(line);
          }
        }
      } else {
        for (const LabLaunch& l : spec.launches) {
          if (!checksLaunch(c, l.name)) continue;
          const LaunchRun& run = runs.at(l.name);
          switch (c.kind) {
            case CheckKind::Correct: {
              if (run.status != RunStatus::Ok) {
                failWith(launchName(l) + " did not run to the end:\n" + run.error);
                break;
              }
              for (const CheckedOutput& co :
                   compareAllOutputs(reference.outputs.at(l.name), run.steps.back(), CheckAgainst::Reference,
                                     "reference", spec.tolerance)) {
                if (co.cmp.pass) continue;
                if (l.hidden) {
                  failWith(launchName(l) + ": " + co.output + " differs from the reference's");
                  continue;
                }
                std::string what = !co.cmp.reason.empty() ? co.cmp.reason
                                   : plural(co.cmp.mismatches, "element") + (co.cmp.mismatches == 1 ? " differs" : " differ") + " from the reference's";
                const Buffer* want = reference.outputs.at(l.name).find(co.output);
                const Buffer* got = run.steps.back().find(co.output);
                if (co.cmp.reason.empty() && want && got && co.cmp.worstIndex >= 0)
                  what += " (worst at " + formatIndex(co.shape, co.cmp.worstIndex) + ": got " +
                          fmt(got->getF(co.cmp.worstIndex)) + ", expected " + fmt(want->getF(co.cmp.worstIndex)) + ")";
                failWith(launchName(l) + ": " + co.output + ": " + what);
              }
              break;
            }
            case CheckKind::Written:
              if (run.status != RunStatus::Ok) failWith(launchName(l) + " did not run to the end");
              for (const auto& u : run.unwritten)
                failWith(launchName(l) + ": " +
                         (l.hidden ? "some elements of " + u.output + " were never stored" : describeUnwritten(u)));
              break;
            case CheckKind::InBounds:
              if (run.status == RunStatus::OutOfBounds) failWith(launchName(l) + ":\n" + run.error);
              break;
            case CheckKind::RaceFree:
              if (run.status == RunStatus::Race) failWith(launchName(l) + ":\n" + run.error);
              break;
            case CheckKind::Metric: break;
          }
        }
        if (o.pass) o.detail = "every graded launch";
      }
      if (c.kind == CheckKind::Correct && !o.pass) correctEverywhere = false;
      g.checks.push_back(std::move(o));
    }

    // Performance: the predicted time against the reference's; a wrong kernel earns nothing.
    if (spec.performance.enabled) {
      const LabPerformance& pf = spec.performance;
      PerformanceOutcome& p = g.performance;
      p.points = pf.points;
      auto rep = reports.find(pf.launch);
      const nlohmann::json* sub = rep == reports.end() ? nullptr : lookup(rep->second, "timing.time_us");
      const nlohmann::json* ref = lookup(reference.reports.at(pf.launch), "timing.time_us");
      bool allRan = true;
      for (const auto& [name, run] : runs) allRan = allRan && run.status == RunStatus::Ok;
      if (!sub || !ref || !sub->is_number() || !ref->is_number() || ref->get<double>() <= 0) {
        p.detail = "no predicted time at launch '" + pf.launch + "'";
      } else {
        p.graded = true;
        p.submission = sub->get<double>();
        p.reference = ref->get<double>();
        p.ratio = p.submission / p.reference;
        if (!correctEverywhere || !allRan) {
          p.detail = "no performance points: the kernel is not correct at every launch";
        } else {
          scoreRatio(p, pf);
          p.detail = "predicted " + fmt(p.submission) + " us vs the reference's " + fmt(p.reference) + " us (" +
                     fmt(p.ratio) + "x); full points within " + fmt(pf.fullWithin) + "x";
        }
      }
    }

    // CPU performance: tl-cpu's measured median against the reference's, timed in turns here.
    if (spec.cpuPerformance.enabled) {
      const LabPerformance& pf = spec.cpuPerformance;
      PerformanceOutcome& p = g.cpuPerformance;
      p.points = pf.points;
      bool allRan = true;
      for (const auto& [name, run] : runs) allRan = allRan && run.status == RunStatus::Ok;
      if (!correctEverywhere || !allRan) {
        p.detail = "no CPU performance points: the kernel is not correct at every launch";
      } else {
#if TL_GRADE_HAVE_CPU
        Source refSrc;
        std::string error;
        if (!parseRestricted(spec.reference.string(), readSource(spec.reference.string()), spec, refSrc, nullptr, error))
          throw std::runtime_error("the lab's reference does not compile:\n" + error);
        auto [refMs, subMs] = timeOnCpu(spec, refSrc, src, *spec.findLaunch(pf.launch), g.seed);
        p.graded = true;
        p.submission = subMs;
        p.reference = refMs;
        p.ratio = refMs > 0 ? subMs / refMs : 0;
        scoreRatio(p, pf);
        p.detail = "measured on tl-cpu (" + plural(cpuTimingThreads(spec), "thread") + ") " + fmt(subMs) + " ms vs the reference's " +
                   fmt(refMs) + " ms (" + fmt(p.ratio) + "x, medians timed in turns); full points within " +
                   fmt(pf.fullWithin) + "x";
#endif
      }
    }
  } catch (const std::exception& e) {
    g.infrastructureError = e.what();
  }
  return finish();
}

nlohmann::ordered_json toJson(const GradeResult& r) {
  nlohmann::ordered_json j;
  j["submission"] = r.submission;
  j["source_sha256"] = r.sourceSha256;
  j["seed"] = r.seed;
  j["pass"] = r.allPass();
  j["score"] = r.score;
  j["max_score"] = r.maxScore;
  j["seconds"] = r.seconds;
  j["tool_version"] = releaseVersion();
  if (!r.infrastructureError.empty()) j["infrastructure_error"] = r.infrastructureError;
  j["notes"] = r.notes;
  j["checks"] = nlohmann::ordered_json::array();
  for (const auto& c : r.checks) {
    nlohmann::ordered_json o = {{"id", c.id}, {"kind", c.kind}, {"pass", c.pass}, {"points", c.points},
                                {"earned", c.pass ? c.points : 0.0}, {"detail", c.detail}};
    if (c.value) o["value"] = *c.value;
    if (!c.pass) o["hint"] = c.hint;
    j["checks"].push_back(std::move(o));
  }
  auto perf = [](const PerformanceOutcome& p, const char* submissionKey, const char* referenceKey) {
    return nlohmann::ordered_json{{"graded", p.graded}, {"points", p.points},       {"earned", p.earned},
                                  {submissionKey, p.submission}, {referenceKey, p.reference}, {"ratio", p.ratio},
                                  {"detail", p.detail}};
  };
  j["performance"] = perf(r.performance, "predicted_us", "reference_us");
  if (r.cpuPerformance.points > 0) j["cpu_performance"] = perf(r.cpuPerformance, "measured_ms", "reference_ms");
  return j;
}

// `s` with every byte that is not part of a well-formed UTF-8 sequence replaced by '?' (a
// submission's bytes echoed in an error must not make the XML unreadable).
static std::string validUtf8(const std::string& s) {
  std::string o;
  for (size_t i = 0; i < s.size();) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    size_t n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xe ? 3 : (c >> 3) == 0x1e ? 4 : 0;
    bool ok = n > 0 && i + n <= s.size();
    for (size_t k = 1; ok && k < n; ++k) ok = (static_cast<unsigned char>(s[i + k]) & 0xc0) == 0x80;
    if (!ok) {
      o += '?';
      ++i;
      continue;
    }
    o.append(s, i, n);
    i += n;
  }
  return o;
}

static std::string xmlEscape(const std::string& raw) {
  std::string o;
  const std::string s = validUtf8(raw);
  for (char c : s) {
    switch (c) {
      case '&': o += "&amp;"; break;
      case '<': o += "&lt;"; break;
      case '>': o += "&gt;"; break;
      case '"': o += "&quot;"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20 && c != '\n' && c != '\t') o += ' ';
        else o += c;
    }
  }
  return o;
}

std::string toJUnit(const std::vector<GradeResult>& results, const std::string& labTitle) {
  int tests = 0, failures = 0, errors = 0;
  std::ostringstream cases;
  for (const auto& r : results) {
    std::string cls = xmlEscape(fs::path(r.submission).filename().string());
    if (!r.infrastructureError.empty()) {
      ++tests, ++errors;
      cases << "  <testcase classname=\"" << cls << "\" name=\"grading\"><error message=\""
            << xmlEscape(r.infrastructureError) << "\"/></testcase>\n";
      continue;
    }
    for (const auto& c : r.checks) {
      ++tests;
      cases << "  <testcase classname=\"" << cls << "\" name=\"" << xmlEscape(c.id) << "\"";
      if (c.pass) {
        cases << "/>\n";
      } else {
        ++failures;
        cases << "><failure message=\"" << xmlEscape(c.hint.empty() ? c.id : c.hint) << "\">" << xmlEscape(c.detail)
              << "</failure></testcase>\n";
      }
    }
  }
  std::ostringstream os;
  os << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuite name=\"" << xmlEscape(labTitle) << "\" tests=\"" << tests
     << "\" failures=\"" << failures << "\" errors=\"" << errors << "\">\n"
     << cases.str() << "</testsuite>\n";
  return os.str();
}

std::string formatResult(const GradeResult& r, const LabSpec& spec) {
  std::ostringstream os;
  os << "tl-grade: " << spec.title << "\n  submission " << r.submission << "  (seed " << r.seed << ")\n";
  for (const auto& n : r.notes) os << "  note: " << n << "\n";
  if (!r.infrastructureError.empty()) {
    os << "  ERROR (the grader, not the submission): " << r.infrastructureError << "\n";
    return os.str();
  }
  auto indent = [](const std::string& text, const char* pad) {
    std::string out;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) out += pad + line + "\n";
    return out;
  };
  for (const auto& c : r.checks) {
    os << "  " << (c.pass ? "PASS " : "FAIL ") << std::left << std::setw(18) << c.id << std::right;
    std::string first = c.detail.substr(0, c.detail.find('\n'));
    if (c.pass || c.detail.find('\n') == std::string::npos) os << " " << first << "\n";
    else os << "\n" << indent(c.detail, "         ");
    if (!c.pass && !c.hint.empty()) os << "       hint: " << c.hint << "\n";
  }
  if (spec.performance.enabled) {
    const PerformanceOutcome& p = r.performance;
    os << "  performance: " << p.detail << ": " << fmt(p.earned) << " / " << fmt(p.points) << " points\n";
  }
  if (spec.cpuPerformance.enabled) {
    const PerformanceOutcome& p = r.cpuPerformance;
    os << "  CPU performance: " << p.detail << ": " << fmt(p.earned) << " / " << fmt(p.points) << " points\n";
  }
  os << "  score: " << fmt(r.score) << " / " << fmt(r.maxScore) << "  (" << (r.allPass() ? "every check passes" : "some checks fail")
     << ", graded in " << std::fixed << std::setprecision(2) << r.seconds << " s)\n";
  return os.str();
}

}  // namespace tl::grade
