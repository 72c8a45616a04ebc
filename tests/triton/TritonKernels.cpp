// Compiling and running the kernels of kernels/triton/ at their two sizes (TritonKernels.h).
#include "TritonKernels.h"

#include <map>
#include <memory>
#include <utility>

#include "Manifest.h"
#include "scalar/ScalarInterpreter.h"

namespace tl::triton_tests {

const char* variantName(Variant v) { return v == Variant::Default ? "default" : "alt"; }

// The second sizes. Each re-evaluates what depends on it (grids, BLOCK = next_pow2(N), buffer
// shapes); comments say what the size exercises.
const std::vector<LaunchOverride>* altOverrides(const std::string& stem) {
  static const std::map<std::string, std::vector<LaunchOverride>> table = {
      {"p01_constant_add", {{"N0", "64"}}},                                  // B0 follows N0
      {"p02_constant_add_block", {{"N0", "1000"}, {"B0", "64"}}},            // 16 blocks, 40 live in the last
      {"p03_outer_vector_add", {{"N0", "8"}, {"N1", "64"}}},                 // tall instead of wide
      {"p04_outer_vector_add_block", {{"N0", "33"}, {"N1", "65"}}},          // one live column / row in the last tiles
      {"p05_fused_outer_mul", {{"N0", "1"}, {"N1", "70"}}},                  // a single column
      {"p06_fused_outer_mul_backward", {{"N0", "70"}, {"N1", "33"}}},
      {"p07_long_sum", {{"N0", "7"}, {"B0", "2"}, {"T", "65"}}},             // 2 rows per program, last one half empty
      {"p08_long_softmax", {{"N0", "5"}, {"B0", "2"}, {"T", "33"}}},         // fully masked rows in the last program
      {"p09_flash_attention", {{"T", "77"}, {"N0", "50"}, {"B0", "16"}, {"B1", "64"}}},  // N0 != T
      {"p10_conv2d", {{"H", "8"}, {"W", "8"}, {"KH", "4"}, {"KW", "4"}}},    // the puzzle's sizes
      {"p11_matmul", {{"N0", "32"}, {"N1", "32"}, {"MID", "32"}, {"N2", "4"}}},  // the puzzle's sizes
      {"p12_quant_matmul", {{"N0", "32"}, {"N1", "32"}, {"MID", "64"}, {"B_MID", "64"}}},  // the puzzle's
      {"t01_vector_add", {{"n_elements", "98432"}}},                         // the tutorial's size
      {"t02_fused_softmax", {{"n_rows", "100"}, {"n_cols", "1000"}, {"grid", "(13,)"}}},
      {"t03_matmul", {{"M", "33"}, {"N", "70"}, {"K", "47"}, {"GROUP_SIZE_M", "2"}}},
      {"t04_dropout", {{"n_elements", "300"}, {"p", "0.25"}}},
      {"t04_seeded_dropout", {{"n_elements", "300"}, {"p", "0.25"}, {"seed", "7"}}},
      {"t05_layer_norm_fwd", {{"N", "333"}, {"M", "17"}}},
      {"t05_layer_norm_bwd_dx", {{"M", "9"}, {"N", "100"}, {"GROUP_SIZE_M", "4"}}},
      {"t05_layer_norm_bwd_dwdb", {{"M", "8"}, {"N", "1000"}}},
      {"t06_attention_fwd", {{"STAGE", "1"}, {"N_CTX", "64"}}},              // not causal
      {"t06_attention_bwd", {{"CAUSAL", "False"}, {"N_CTX", "96"}}},        // not causal, 3 key blocks
      {"t06_attention_bwd_preprocess", {{"N_CTX", "33"}, {"HEAD_DIM", "16"}}},
      {"t06_attention_descriptor", {{"N_CTX", "64"}}},
      {"t07_libdevice", {{"n_elements", "257"}}},
      {"t07_math", {{"n_elements", "257"}}},
      {"t08_grouped_gemm", {{"NUM_SM", "1"}}},                              // one program takes every tile
      {"t09_persistent_matmul", {{"M", "33"}, {"N", "70"}, {"K", "47"}, {"NUM_SMS", "3"}}},
      {"t09_matmul_fp8", {{"M", "33"}, {"N", "70"}, {"K", "47"}}},
      {"t09_matmul_descriptor", {{"M", "33"}, {"N", "70"}, {"K", "47"}, {"EPILOGUE_SUBTILE", "False"}}},
      {"t09_block_ptr_matmul", {{"M", "33"}, {"N", "70"}, {"K", "47"}}},
  };
  auto it = table.find(stem);
  return it == table.end() ? nullptr : &it->second;
}

std::vector<std::string> passingKernels() {
  std::vector<std::string> out;
  for (const ManifestEntry& e : readManifest().entries)
    if (e.passes) out.push_back(e.stem);
  return out;
}

bool compileVariant(const std::string& stem, Variant variant, e2e::Compiled& out, std::string& error) {
  std::vector<LaunchOverride> overrides;
  if (variant == Variant::Alt) {
    const auto* alt = altOverrides(stem);
    if (!alt) {
      error = "no second size for '" + stem + "': add one to altOverrides() in tests/triton/TritonKernels.cpp";
      return false;
    }
    overrides = *alt;
  }
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
    error = "front end failed on " + path + " (" + variantName(variant) + " size):\n" + diag.renderAll();
    return false;
  }
  return true;
}

const ScalarResult& scalarResult(const std::string& stem, Variant variant) {
  static std::map<std::pair<std::string, Variant>, std::unique_ptr<ScalarResult>> cache;
  auto& slot = cache[{stem, variant}];
  if (slot) return *slot;
  slot = std::make_unique<ScalarResult>();
  ScalarResult& run = *slot;
  if (!compileVariant(stem, variant, run.compiled, run.error)) return run;
  try {
    run.memory = Memory::fromLaunch(run.compiled.launch);
    runScalar(*run.compiled.fn, run.compiled.launch, run.memory);
  } catch (const RuntimeError& e) {
    run.error = std::string("tl-scalar stopped (") + variantName(variant) + " size):\n" +
                renderDiagnostic(run.compiled.file.get(), Severity::Error, e.loc, e.what());
  } catch (const IRError& e) {
    run.error = std::string("tl-scalar rejected the IR (") + variantName(variant) + " size):\n" +
                renderDiagnostic(run.compiled.file.get(), Severity::Error, e.loc, e.what());
  } catch (const std::exception& e) {
    run.error = std::string("tl-scalar failed: ") + e.what();
  }
  return run;
}

}  // namespace tl::triton_tests
