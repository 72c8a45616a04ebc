// Fuzz harness: the front end. Bytes -> SourceFile -> parseKernelFile -> evalLaunch (no
// overrides) -> specializationFor -> compileKernel. Errors must be reported into the DiagEngine;
// any crash, sanitizer report or escaped exception is a finding.
#include <cstdint>
#include <memory>
#include <string>

#include "frontend/Frontend.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto file = std::make_shared<tl::SourceFile>(
      "fuzz.tl", std::string(reinterpret_cast<const char*>(data), size));
  tl::DiagEngine diag(file);
  auto parsed = tl::parseKernelFile(file, diag);
  if (!parsed || diag.hasErrors()) return 0;
  tl::LaunchConfig launch = tl::evalLaunch(*parsed, {}, diag);
  if (diag.hasErrors()) return 0;
  auto fn = tl::compileKernel(*parsed, tl::specializationFor(*parsed, launch), diag);
  (void)fn;
  (void)diag.renderAll();  // rendering every diagnostic must not crash either
  return 0;
}
