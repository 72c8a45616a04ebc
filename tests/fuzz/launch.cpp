// Fuzz harness: the launch evaluator. Bytes are one `--set NAME=EXPR` override (parseOverride),
// applied to kernels/softmax.tl's @launch. Bad overrides must be located errors in the DiagEngine.
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>

#include "frontend/Frontend.h"

namespace {

const tl::ParsedKernel& softmax() {
  static std::unique_ptr<tl::ParsedKernel> parsed = [] {
    std::ifstream in(TL_SOURCE_DIR "/kernels/softmax.tl");
    std::stringstream ss;
    ss << in.rdbuf();
    auto file = std::make_shared<tl::SourceFile>("softmax.tl", ss.str());
    tl::DiagEngine diag(file);
    auto p = tl::parseKernelFile(file, diag);
    if (!p || diag.hasErrors()) std::abort();  // the harness's fixed kernel must parse
    return p;
  }();
  return *parsed;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const tl::ParsedKernel& kernel = softmax();
  tl::LaunchOverride ov;
  if (!tl::parseOverride(std::string(reinterpret_cast<const char*>(data), size), ov)) return 0;
  tl::DiagEngine diag(kernel.file);
  tl::LaunchConfig launch = tl::evalLaunch(kernel, {ov}, diag);
  (void)launch;
  (void)diag.renderAll();
  return 0;
}
