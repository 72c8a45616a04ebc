#include "thread/Pipeline.h"

#include <sstream>

#include "ir/Printer.h"

namespace tl {

ThreadCompilation compileToThreadIR(const Function& frontEndIR, const LaunchConfig& launch, int numWarps,
                                    std::ostream* printAfterAll) {
  return compileToThreadIR(frontEndIR, launch, ThreadCompileOptions{numWarps, false, printAfterAll});
}

ThreadCompilation compileToThreadIR(const Function& frontEndIR, const LaunchConfig& launch,
                                    const ThreadCompileOptions& options) {
  std::ostream* printAfterAll = options.printAfterAll;
  ThreadCompilation tc;
  tc.numWarps = options.numWarps > 0 ? options.numWarps : launch.numWarps;
  tc.keepLayouts = options.keepLayouts;
  tc.wgmma = options.wgmma;
  tc.hints = paramHintsFromLaunch(launch);

  tc.blockIR = cloneFunction(frontEndIR);
  PassManager block = blockPipeline();
  block.setPrintAfterAll(printAfterAll);
  block.setKeepSnapshots(true);
  block.run(*tc.blockIR);
  tc.snapshots = block.snapshots();

  tc.withLayouts = cloneFunction(*tc.blockIR);
  PassManager layouts = layoutPipeline(tc.numWarps, tc.hints, tc.keepLayouts, tc.wgmma);
  layouts.setPrintAfterAll(printAfterAll);
  layouts.setKeepSnapshots(true);
  layouts.run(*tc.withLayouts);
  // The layout manager's first snapshot is its input, the block pipeline's last output.
  tc.snapshots.insert(tc.snapshots.end(), layouts.snapshots().begin() + 1, layouts.snapshots().end());

  LowerOptions lowerOptions;
  lowerOptions.padExchanges = !tc.keepLayouts;
  lowerOptions.wgmma = tc.wgmma;
  tc.threadIR = lowerToThreadIR(*tc.withLayouts, &tc.shared, lowerOptions);
  if (printAfterAll) *printAfterAll << "// ----- IR after lower-to-thread-ir -----\n" << printFunction(*tc.threadIR);
  PassManager thread;
  thread.add({"licm", "pure ops whose operands are defined outside a for body move before the loop", hoistLoopInvariants});
  thread.setPrintAfterAll(printAfterAll);
  thread.run(*tc.threadIR);
  return tc;
}

std::string explainMemoryLayouts(const ThreadCompilation& tc) {
  std::ostringstream os;
  // The layouts the accesses were given, read from the layout passes' output: the anchor, or
  // (keepLayouts, or a store that follows an FMA dot's register tile) the layout it follows.
  const Function& fn = tc.withLayouts ? *tc.withLayouts : *tc.blockIR;
  auto axes = analyzeAxes(fn, tc.hints);
  walk(fn.body, [&](Op& op) {
    if ((op.kind != OpKind::Load && op.kind != OpKind::Store) || !op.operand(0)->type.isTile()) return;
    MemoryAnchor a = memoryAnchor(op, axes, tc.numWarps);
    const LayoutPtr& given = op.operand(0)->type.layout;
    if (given && (tc.keepLayouts || !(*given == *a.layout))) a = memoryAnchorIn(op, axes, given);
    int64_t bytes = int64_t(a.vec) * dtypeBytes(op.operand(0)->type.dtype);
    os << "  " << mnemonic(op.kind) << " at " << op.loc.line << ":" << op.loc.col << ": vec " << a.vec << " ("
       << bytes << "-byte accesses), " << a.layout->str() << "\n      because " << a.why << "\n";
  });
  return os.str();
}

}  // namespace tl
