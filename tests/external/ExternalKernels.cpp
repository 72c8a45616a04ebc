// Reading README.md's table and compiling / running the kernels of tests/external
// (ExternalKernels.h).
#include "ExternalKernels.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>

#include "ir/Diagnostics.h"
#include "scalar/ScalarInterpreter.h"

namespace tl::external {

namespace fs = std::filesystem;

namespace {

const fs::path& folder() {
  static const fs::path dir = fs::path(TL_SOURCE_DIR) / "tests" / "external";
  return dir;
}

std::string trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t"), e = s.find_last_not_of(" \t");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

// The cells of a markdown table row "| a | b | c |" (a '|' inside backticks is text).
std::vector<std::string> cells(const std::string& line) {
  std::vector<std::string> out;
  std::string cur;
  bool code = false;
  for (size_t i = 1; i < line.size(); ++i) {
    char c = line[i];
    if (c == '`') code = !code;
    if (c == '|' && !code) {
      out.push_back(trim(cur));
      cur.clear();
    } else {
      cur += c;
    }
  }
  return out;
}

}  // namespace

std::string kernelPath(const std::string& stem) { return (folder() / (stem + ".tl")).string(); }

std::vector<std::string> kernelFiles() {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(folder(), ec))
    if (entry.is_regular_file() && entry.path().extension() == ".tl") out.push_back(entry.path().stem().string());
  std::sort(out.begin(), out.end());
  return out;
}

// A kernel row (in the table under "## Status") is "| `stem` | origin | status |"; the status starts with "runs" or with
// "blocked" followed by the first error in backticks.
std::vector<ReadmeRow> readReadme(std::string& problem) {
  std::vector<ReadmeRow> rows;
  std::ifstream in(folder() / "README.md");
  if (!in) {
    problem = "cannot read tests/external/README.md";
    return {};
  }
  int lineNo = 0;
  bool inStatus = false;  // the kernel table is the one under "## Status"
  for (std::string line; std::getline(in, line);) {
    ++lineNo;
    if (line.rfind("## ", 0) == 0) inStatus = line == "## Status";
    if (!inStatus || line.rfind("| `", 0) != 0) continue;
    std::vector<std::string> c = cells(line);
    if (c.size() < 3 || c[0].size() < 3 || c[0].back() != '`') {
      problem = "README.md:" + std::to_string(lineNo) + ": a kernel row needs | `stem` | origin | status |";
      return {};
    }
    ReadmeRow row;
    row.stem = c[0].substr(1, c[0].size() - 2);
    const std::string& status = c.back();
    if (status.rfind("runs", 0) == 0) {
      row.status = Status::Runs;
    } else if (status.rfind("blocked", 0) == 0 || status.rfind("fails", 0) == 0) {
      row.status = status[0] == 'b' ? Status::Blocked : Status::Fails;
      size_t open = status.find('`'), close = open == std::string::npos ? open : status.find('`', open + 1);
      if (close == std::string::npos) {
        problem = "README.md:" + std::to_string(lineNo) + ": a blocked or failing row quotes its first error in backticks";
        return {};
      }
      row.firstError = status.substr(open + 1, close - open - 1);
      if (row.status == Status::Fails) {  // "fails: tl-thread: `...`"
        const size_t colon = status.find(':'), next = status.find(':', colon + 1);
        row.stage = colon == std::string::npos || next == std::string::npos ? "" : trim(status.substr(colon + 1, next - colon - 1));
        if (row.stage != "tl-scalar" && row.stage != "tl-block" && row.stage != "tl-thread") {
          problem = "README.md:" + std::to_string(lineNo) + ": a failing row says which stage stops: fails: tl-thread: `...`";
          return {};
        }
      }
    } else {
      problem = "README.md:" + std::to_string(lineNo) + ": the status must start with 'runs', 'blocked' or 'fails'";
      return {};
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

bool compileKernelFile(const std::string& stem, const std::vector<LaunchOverride>& overrides,
                       Compiled& out, std::string& error) {
  const std::string path = kernelPath(stem);
  try {
    out.file = SourceFile::load(path);
  } catch (const std::exception& e) {
    error = e.what();
    return false;
  }
  DiagEngine diag(out.file);
  out.parsed = parseKernelFile(out.file, diag);
  if (out.parsed && !diag.hasErrors()) out.launch = evalLaunch(*out.parsed, overrides, diag);
  if (out.parsed && !diag.hasErrors())
    out.fn = compileKernel(*out.parsed, specializationFor(*out.parsed, out.launch), diag);
  if (diag.hasErrors() || !out.fn) {
    error = "front end failed on " + path + ":\n" + diag.renderAll();
    return false;
  }
  return true;
}

bool runEngine(const Compiled& compiled, const char* engine, std::string& error,
               const std::function<void()>& body) {
  try {
    body();
    return true;
  } catch (const RuntimeError& e) {
    error = std::string(engine) + " stopped:\n" + renderDiagnostic(compiled.file.get(), Severity::Error, e.loc, e.what());
  } catch (const IRError& e) {
    error = std::string(engine) + " rejected the IR (internal compiler error):\n" +
            renderDiagnostic(compiled.file.get(), Severity::Error, e.loc, e.what());
  } catch (const std::exception& e) {
    error = std::string(engine) + " failed: " + e.what();
  }
  return false;
}

const char* sizeName(Size size) { return size == Size::Own ? "own" : "alt"; }

// The second sizes; each override re-evaluates what depends on it (grids, BLOCK = next_pow2(N),
// strides, buffer shapes). The comment says what the size exercises.
const std::vector<LaunchOverride>* altOverrides(const std::string& stem) {
  static const std::map<std::string, std::vector<LaunchOverride>> table = {
      {"triton__01-vector-add__add_kernel", {{"n_elements", "1025"}}},  // a last block with one live lane
      {"triton__02-fused-softmax__softmax_kernel",
       {{"n_rows", "7"}, {"n_cols", "33"}, {"grid", "(3,)"}}},  // 3 programs share 7 rows; BLOCK_SIZE 64
      {"triton__03-matrix-multiplication__matmul_kernel",
       {{"M", "33"}, {"N", "70"}, {"K", "47"}, {"GROUP_SIZE_M", "2"}}},  // every dimension ragged
      {"triton__04-low-memory-dropout___dropout", {{"n_elements", "300"}, {"p", "0.25"}}},
      {"triton__04-low-memory-dropout___seeded_dropout", {{"n_elements", "300"}, {"p", "0.25"}, {"seed", "7"}}},
      {"triton__05-layer-norm___layer_norm_fwd_fused", {{"M", "17"}, {"N", "333"}}},  // BLOCK_SIZE 512
      {"triton__05-layer-norm___layer_norm_bwd_dx_fused",
       {{"M", "9"}, {"N", "100"}, {"GROUP_SIZE_M", "4"}}},  // 3 rows on lock 0, 2 on the others
      {"triton__05-layer-norm___layer_norm_bwd_dwdb", {{"M", "40"}, {"N", "130"}}},  // a half-empty row block
      {"triton__06-fused-attention___attn_bwd", {{"N_CTX", "128"}, {"H", "2"}, {"sm_scale", "0.125"}}},  // one key block, 2 heads
      {"liger__rms_norm___rms_norm_forward", {{"n_rows", "7"}, {"n_cols", "300"}, {"offset", "1.0"}}},  // Gemma's offset
      {"liger__swiglu___swiglu_forward_kernel", {{"n_rows", "5"}, {"n_cols", "33"}}},
      {"unsloth__geglu___exact_forward_kernel", {{"n_elements", "1500"}}},
      {"triton__07-extern-functions__asin_kernel", {{"n_elements", "257"}}},
      {"triton__06-fused-attention___attn_fwd", {{"STAGE", "1"}, {"N_CTX", "64"}}},  // not causal
      {"triton__08-grouped-gemm__grouped_matmul_kernel", {{"NUM_SM", "5"}}},  // programs take 2 or 3 tiles, across problems
      {"triton__09-persistent-matmul__matmul_kernel_persistent",
       {{"M", "33"}, {"N", "70"}, {"K", "47"}, {"NUM_SMS", "1"}}},  // one program takes every tile
      {"unsloth__rms_layernorm___rms_layernorm_forward", {{"n_rows", "3"}, {"n_cols", "2048"}, {"eps", "1e-6"}}},
      {"attorch__softmax_kernels__softmax_forward_kernel",  // log-softmax, one row per program (the
       {{"batch_dim", "5"}, {"feat_dim", "70"}, {"log", "True"}, {"BLOCK_SIZE_BATCH", "1"}}},  // heuristic at 70)
      {"liger__cross_entropy__liger_cross_entropy_kernel",  // 3 classes, target 2 ignored (the early
       {{"BT", "9"}, {"V", "3"}, {"ignore_index", "2"},     // return), no smoothing, no z-loss stored
        {"label_smoothing", "0.0"}, {"lse_square_scale", "0.0"}, {"RETURN_Z_LOSS", "0"}}},
  };
  auto it = table.find(stem);
  return it == table.end() ? nullptr : &it->second;
}

const ScalarRun& scalarRun(const std::string& stem, Size size) {
  static std::map<std::pair<std::string, Size>, std::unique_ptr<ScalarRun>> cache;
  auto& slot = cache[{stem, size}];
  if (slot) return *slot;
  slot = std::make_unique<ScalarRun>();
  ScalarRun& run = *slot;
  std::vector<LaunchOverride> overrides;
  if (size == Size::Alt) {
    const auto* alt = altOverrides(stem);
    if (!alt) {
      run.error = "no second size for '" + stem + "': add one to altOverrides() in tests/external/ExternalKernels.cpp";
      return run;
    }
    overrides = *alt;
  }
  if (!compileKernelFile(stem, overrides, run.compiled, run.error)) return run;
  runEngine(run.compiled, "tl-scalar", run.error, [&] {
    run.memory = Memory::fromLaunch(run.compiled.launch);
    runScalar(*run.compiled.fn, run.compiled.launch, run.memory);
  });
  return run;
}

}  // namespace tl::external
