#include "runtime/Driver.h"

#include "runtime/Budget.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <sstream>

#include "ir/FileRead.h"
#include "runtime/Hash.h"

namespace tl {

namespace fs = std::filesystem;

// PARAM=FILE: the file must exist when the options are read (not only when a stage gets to it:
// tl-ptx without a GPU never opens an --expect file).
static const CLI::Validator kParamEqualsExistingFile(
    [](std::string& v) -> std::string {
      auto eq = v.find('=');
      if (eq == std::string::npos || eq == 0 || eq + 1 == v.size()) return "expects PARAM=FILE, got '" + v + "'";
      std::error_code ec;
      std::string file = v.substr(eq + 1);
      if (!fs::exists(file, ec)) return "no such file: " + file;
      if (!fs::is_regular_file(file, ec)) return file + " is not a regular file";
      return "";
    },
    "PARAM=FILE");

void addStageOptions(CLI::App& app, StageOptions& o, StageFeatures f) {
  app.set_version_flag("--version", releaseVersion());
  app.add_option("kernels", o.kernels, ".tl kernel files (default: every kernel in kernels/)");
  // Repeatable options take one value per occurrence, so `--set N=30 k.tl` never eats the path.
  app.add_option("--set", o.sets, "Override a @launch keyword: NAME=EXPR (e.g. N=4096, BLOCK_N=4096, "
                                  "x_ptr='uniform((M,N))'); repeatable")
      ->type_name("NAME=EXPR")
      ->allow_extra_args(false);
  app.add_option("--input", o.inputs, "Read a pointer parameter's buffer from a .npy file: PARAM=FILE; repeatable")
      ->type_name("PARAM=FILE")
      ->allow_extra_args(false)
      ->check(kParamEqualsExistingFile);
  app.add_option("--kernel", o.kernel,
                 "The @jit function to run when the file has several (default: the one with @launch)")
      ->type_name("NAME");
  app.add_option("--grid", o.grid, "Override the grid: an expression such as '(64,)' or 'cdiv(N, 128)'");
  app.add_option("--num-warps", o.numWarps, "Override num_warps")->check(CLI::Range(1, 32));
  if (f.outputs) {
    app.add_option("--out-dir", o.outDir, "Write every output buffer as DIR/<kernel>.<param>.npy");
    app.add_option("--expect", o.intent.expects,
                   "Check output PARAM against the expected result in FILE.npy (what it should compute); repeatable")
        ->type_name("PARAM=FILE")
        ->allow_extra_args(false)
        ->check(kParamEqualsExistingFile);
    app.add_option("--reference", o.intent.reference,
                   "Check every output against KERNEL.tl (e.g. the instructor's solution) run on tl-scalar with "
                   "the same launch and inputs")
        ->type_name("KERNEL.tl")
        ->check(CLI::ExistingFile);
    app.add_option("--atol", o.intent.tolerance.atol, "Absolute tolerance of the output checks (default: per dtype)")
        ->check(CLI::NonNegativeNumber);
    app.add_option("--rtol", o.intent.tolerance.rtol, "Relative tolerance of the output checks (default: per dtype)")
        ->check(CLI::NonNegativeNumber);
  }
  if (f.outputs && f.stageCheck) {
    app.add_flag("--no-check", o.noCheck, "Do not check the outputs against the reference stage (stage agreement)");
  }
  if (f.printIR) app.add_flag("--print-ir", o.printIR, "Print the IR the stage runs");
  if (f.outputs)
    app.add_option("--max-print-lines", o.maxPrintLines,
                   "The most lines device_print / print may write to stdout per run (default " +
                       std::to_string(kDefaultMaxPrintLines) + "); the rest are counted")
        ->check(CLI::NonNegativeNumber)
        ->type_name("N");
  addWorkBudgetOptions(app);
  app.add_flag("-q,--quiet", o.quiet, "Print less: each kernel's name, its result lines (PASS/FAIL, warnings) and errors");
}

void addWorkBudgetOptions(CLI::App& app, bool progressFlag) {
  app.add_option("--max-steps", workLimits().maxSteps,
                 "Work budget of each CPU run (tl-scalar, tl-block: element operations, default " +
                     shortCount(kScalarDefaultSteps) + " / " + shortCount(kBlockDefaultSteps) +
                     "; the thread executor: warp instructions, default " + shortCount(kExecutorDefaultSteps) +
                     "); a run past it stops with an error at the op it was running")
      ->check(CLI::PositiveNumber)
      ->type_name("N");
  if (progressFlag)
    app.add_flag("--no-progress", [](int64_t) { workLimits().progress = false; },
                 "No progress lines on stderr for runs longer than a few seconds");
}

int parseCommandLine(CLI::App& app, int argc, char** argv) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 1;
  }
  return -1;
}

std::vector<LaunchOverride> overridesFrom(const StageOptions& opts) {
  std::vector<LaunchOverride> out;
  for (const auto& s : opts.sets) {
    LaunchOverride o;
    if (!parseOverride(s, o)) throw std::runtime_error("--set expects NAME=EXPR, got '" + s + "'");
    out.push_back(o);
  }
  for (const auto& s : opts.inputs) {
    auto eq = s.find('=');
    if (eq == std::string::npos || eq == 0) throw std::runtime_error("--input expects PARAM=FILE, got '" + s + "'");
    std::string file = s.substr(eq + 1);
    if (file.find('"') != std::string::npos) throw std::runtime_error("--input: file names cannot contain '\"'");
    out.push_back({s.substr(0, eq), "file(\"" + file + "\")"});
  }
  if (!opts.grid.empty()) out.push_back({"grid", opts.grid});
  if (opts.numWarps > 0) out.push_back({"num_warps", std::to_string(opts.numWarps)});
  return out;
}

double medianOf(std::vector<double> s) {
  if (s.empty()) return 0;
  std::sort(s.begin(), s.end());
  const size_t n = s.size();
  return n % 2 ? s[n / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]);
}

double msSince(const std::chrono::steady_clock::time_point& start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

std::string formatMs(double ms) {
  // Three significant digits, never in exponent form ("2730 ms", not "2.73e+03 ms").
  std::ostringstream os;
  if (ms >= 1000)
    os << std::fixed << std::setprecision(0) << ms << " ms";
  else
    os << std::setprecision(3) << ms << " ms";
  return os.str();
}

std::unique_ptr<CompiledKernel> compileKernelFile(const std::string& path,
                                                  const std::vector<LaunchOverride>& overrides,
                                                  std::ostream& err, const std::string& kernelName) {
  auto start = std::chrono::steady_clock::now();
  std::shared_ptr<SourceFile> file;
  try {
    file = SourceFile::load(path);
  } catch (const FileReadError& e) {  // its what() names the path again
    err << path << ": error: " << e.reason << "\n";
    return nullptr;
  } catch (const std::exception& e) {
    err << path << ": error: " << e.what() << "\n";
    return nullptr;
  }
  DiagEngine diag(file);
  auto k = std::make_unique<CompiledKernel>();
  k->path = path;
  k->parsed = parseKernelFile(file, diag, kernelName);
  if (k->parsed && !diag.hasErrors()) k->launch = evalLaunch(*k->parsed, overrides, diag);
  if (k->parsed && !diag.hasErrors()) {
    k->spec = specializationFor(*k->parsed, k->launch);
    k->ir = compileKernel(*k->parsed, k->spec, diag);
  }
  err << diag.renderAll();  // warnings too
  if (!k->parsed || !k->ir || diag.hasErrors()) return nullptr;
  k->staticPrints = diag.compileOutputs();
  k->compileMs = msSince(start);
  return k;
}

std::vector<std::string> defaultKernelPaths() {
  std::vector<std::string> paths;
  for (fs::path dir : {fs::path("kernels"), fs::path(TL_SOURCE_DIR) / "kernels"}) {
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) continue;
    for (const auto& e : fs::directory_iterator(dir, ec))
      if (e.path().extension() == ".tl") paths.push_back(e.path().string());
    if (!paths.empty()) break;
  }
  std::sort(paths.begin(), paths.end());
  return paths;
}

DeviceOutput deviceOutput(const StageOptions& opts, std::ostream& out) { return DeviceOutput(&out, opts.maxPrintLines); }

std::string describeLaunch(const std::string& kernel, const LaunchConfig& launch) {
  std::ostringstream os;
  os << kernel << "  grid=(" << launch.grid[0] << "," << launch.grid[1] << "," << launch.grid[2]
     << ")  num_warps=" << launch.numWarps;
  for (const auto& [name, value] : launch.names) {
    if (name == "grid" || name == "num_warps" || launch.buffer(name)) continue;
    os << "  " << name << "=" << value;
  }
  return os.str();
}

std::string describeLaunch(const CompiledKernel& k) { return describeLaunch(k.ir->name, k.launch); }

static std::string shapeStr(const Shape& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) out += (i ? "x" : "") + std::to_string(s[i]);
  return out;
}

void printOutputSummary(const Memory& memory, std::ostream& out) {
  for (const Buffer& b : memory.buffers()) {
    if (!b.output) continue;
    double lo = INFINITY, hi = -INFINITY, sum = 0;
    int64_t n = b.numel(), nonFinite = 0;
    for (int64_t i = 0; i < n; ++i) {
      double v = b.getF(i);
      if (!std::isfinite(v)) { ++nonFinite; continue; }
      lo = std::min(lo, v);
      hi = std::max(hi, v);
      sum += v;
    }
    std::ostringstream line;  // formatting flags stay local to this line
    line << "  output " << std::left << std::setw(10) << b.name << std::right << " " << shapeStr(b.shape) << " "
         << dtypeName(b.dtype) << "  min=" << std::setprecision(6) << lo << " max=" << hi
         << " mean=" << (n > nonFinite ? sum / double(n - nonFinite) : 0.0);
    if (nonFinite) line << "  non-finite=" << nonFinite;
    out << line.str() << "\n";
  }
}

void writeOutputs(const CompiledKernel& k, const Memory& memory, const std::string& dir, std::ostream& out) {
  fs::create_directories(dir);
  std::string stem = fs::path(k.path).stem().string();
  for (const Buffer& b : memory.buffers()) {
    if (!b.output) continue;
    std::string path = (fs::path(dir) / (stem + "." + b.name + ".npy")).string();
    writeNpy(path, b);
    out << "  wrote " << path << "\n";
  }
}

bool compareOutputs(const Memory& reference, const Memory& got, const std::string& against, std::ostream& out,
                    const ToleranceOverride& tol) {
  bool all = true;
  for (const CheckedOutput& c : compareAllOutputs(reference, got, CheckAgainst::Stage, against, tol)) {
    printCheck(c, out);
    all = all && c.cmp.pass;
  }
  return all;
}

bool checkStageOutputs(const CompiledKernel& k, const Memory& got, const StageOptions& opts, const Engine& scalar,
                       const Engine* stage, const Function* stageIR, std::ostream& out, CheckReport* report) {
  IntentOptions intent = opts.intent;
  markDotPrecisions(*k.ir, intent.tolerance);
  CheckReport r = runChecks(k, got, intent, overridesFrom(opts), scalar, opts.noCheck ? nullptr : stage, stageIR, out);
  bool pass = r.pass();
  if (!r.intentChecked && !r.outputs.empty()) ++opts.stageAgreementOnly;
  if (report) *report = std::move(r);
  return pass;
}

std::string plural(int64_t n, const std::string& noun) {
  return std::to_string(n) + " " + noun + (n == 1 ? "" : "s");
}

std::string renderRuntimeError(const CompiledKernel& k, const RuntimeError& e) {
  return renderDiagnostic(k.parsed ? k.parsed->file.get() : nullptr, Severity::Error, e.loc, e.what());
}

int runStage(const std::string& stageName, const StageOptions& opts, const StageFn& stage) {
  std::vector<std::string> paths = opts.kernels.empty() ? defaultKernelPaths() : opts.kernels;
  if (paths.empty()) {
    std::cerr << stageName << ": error: no kernels given and no kernels/ directory found\n";
    return 1;
  }
  std::vector<LaunchOverride> overrides;
  try {
    overrides = overridesFrom(opts);
  } catch (const std::exception& e) {
    std::cerr << stageName << ": error: " << e.what() << "\n";
    return 1;
  }
  int failures = 0;
  for (const auto& path : paths) {
    auto k = compileKernelFile(path, overrides, std::cerr, opts.kernel);
    if (!k) {
      ++failures;
      continue;
    }
    std::cout << "== " << path << "\n";  // even with --quiet: the PASS lines need their kernel
    if (!opts.quiet) std::cout << "   " << describeLaunch(*k) << "\n";
    for (const auto& line : k->staticPrints) std::cout << line << "\n";  // tl.static_print, at compile time
    bool ok = false;
    try {
      ok = stage(*k, std::cout);
    } catch (const RuntimeError& e) {
      std::cerr << renderRuntimeError(*k, e);
    } catch (const IRError& e) {
      std::cerr << renderDiagnostic(k->parsed->file.get(), Severity::Error, e.loc,
                                    std::string("internal compiler error: ") + e.what());
    } catch (const std::exception& e) {
      std::cerr << path << ": error: " << e.what() << "\n";
    }
    if (!ok) ++failures;
  }
  if (paths.size() > 1)
    std::cout << stageName << ": " << (paths.size() - failures) << " of " << plural(int64_t(paths.size()), "kernel")
              << " OK\n";
  if (opts.stageAgreementOnly > 0 && !opts.quiet)
    std::cout << stageName << ": PASS above means the stages agree on what this kernel computes, not that it is "
                 "right: --expect PARAM=FILE.npy or --reference KERNEL.tl checks it against what it should compute\n";
  return failures ? 1 : 0;
}

}  // namespace tl
