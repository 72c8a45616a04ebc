// Fuzz harness: the textual IR parser. Bytes -> parseFunction (ir/Parser.h) -> verifier. On
// success, print -> parse again must succeed and print the same text: a broken round trip is a
// finding (abort), as is any crash.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include "ir/Parser.h"
#include "ir/Printer.h"
#include "ir/Verifier.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  auto file = std::make_shared<tl::SourceFile>("fuzz.ir", text);
  tl::DiagEngine diag(file);
  auto fn = tl::parseFunction(text, diag);
  if (!fn || diag.hasErrors()) return 0;
  if (std::string err = tl::verifyFunction(*fn); !err.empty()) {
    std::fprintf(stderr, "parseFunction returned IR the verifier rejects: %s\n", err.c_str());
    std::abort();
  }
  std::string printed = tl::printFunction(*fn);
  auto file2 = std::make_shared<tl::SourceFile>("printed.ir", printed);
  tl::DiagEngine diag2(file2);
  auto fn2 = tl::parseFunction(printed, diag2);
  if (!fn2 || diag2.hasErrors()) {
    std::fprintf(stderr, "printed IR does not parse:\n%s\n%s", printed.c_str(), diag2.renderAll().c_str());
    std::abort();
  }
  std::string printed2 = tl::printFunction(*fn2);
  if (printed2 != printed) {
    std::fprintf(stderr, "round trip differs:\n--- first\n%s--- second\n%s", printed.c_str(), printed2.c_str());
    std::abort();
  }
  return 0;
}
