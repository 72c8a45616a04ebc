// Line links: for every line of a stage's text, the .tl source line it came from, so that the
// Stages panel can highlight "what line 15 became" in every stage at once.
//
// Where each stage keeps its source locations:
//   block IR, layouts, thread IR   `loc(L:C)` at the end of each op line (ir/Printer.h)
//   LLVM IR                        `, !dbg !N` on an instruction, resolved through the module's
//                                  `!N = !DILocation(line: L, column: C, ...)` (or a
//                                  DISubprogram's `line:` for a `define ... !dbg !N`)
//   PTX                            `.loc F L C` directives: every instruction after one, up to
//                                  the next `.loc` or the end of the function, is line L
//   source                         itself: text line i is source line i + 1
//
// Expects: any text (IR or PTX without debug information simply has no links).
// Guarantees: the result has one entry per line of `text` (lines split at '\n'; a final newline
// does not start another line); 0 means "no source line"; never throws, never reads out of
// bounds on malformed input (a `loc(` with no digits, a `!dbg` to an undefined node, ...).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "viz/model/Session.h"

namespace tl::viz {

// How a stage's text records its locations.
enum class LinkFormat {
  Source,  // the .tl file itself
  IR,      // tilelab's IR text with loc(L:C)
  LLVM,    // LLVM IR with !dbg / !DILocation
  PTX,     // PTX with .loc directives
};

// The lines of `text` (without their '\n'); "" gives no lines.
std::vector<std::string_view> splitLines(std::string_view text);

// sourceLine[i] for every line i of `text` (see above).
std::vector<int> lineLinks(std::string_view text, LinkFormat format);

// The 0-based lines of `stage` that came from source line `sourceLine` (1-based), in order.
std::vector<int> linesForSourceLine(const StageText& stage, int sourceLine);

// True when at least one line of `stage` is linked to a source line.
bool hasLineLinks(const StageText& stage);

}  // namespace tl::viz
