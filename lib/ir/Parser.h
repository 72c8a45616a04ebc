// Reads the printed form of the IR (ir/Printer.h) back into a Function.
#pragma once

#include <memory>
#include <string_view>

#include "ir/IR.h"

namespace tl {

// Parses one `func`. On malformed text, reports located errors into `diag` (whose SourceFile
// should hold `text`) and returns nullptr; never crashes on any input. The result is verified.
std::unique_ptr<Function> parseFunction(std::string_view text, DiagEngine& diag);

}  // namespace tl
