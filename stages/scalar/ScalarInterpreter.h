// tl-scalar's engine: the scalar CPU reference, the ground truth of every later stage.
//
// Runs the whole grid one program at a time and, inside a program, every block-IR op one
// element at a time with plain loops, the way one CPU core would. Values are boxed scalars and
// each element access is bounds-checked: it is meant to be obviously right, not fast.
//
// Expects: verified block IR (straight from the front end, before optimization passes) and a
// Memory holding one buffer per pointer parameter (named as the parameter).
// Guarantees: outputs written to Memory; an unmasked load or store outside every buffer stops
// the run with a RuntimeError naming the kernel line, the program id, the element index and
// the address; nothing is read or written outside a buffer.
#pragma once

#include "frontend/Launch.h"
#include "ir/IR.h"
#include "runtime/Checks.h"
#include "runtime/DevicePrint.h"
#include "runtime/Memory.h"

namespace tl {

struct ScalarRunStats {
  int64_t programs = 0;         // program instances run
  int64_t elementOps = 0;       // element-level operations evaluated
};

// `print`: where device_print's lines go (runtime/DevicePrint.h); nullptr: nowhere.
ScalarRunStats runScalar(const Function& fn, const LaunchConfig& launch, Memory& memory,
                         DeviceOutput* print = nullptr);

// tl-scalar as the reference engine of the checks (runtime/Checks.h).
Engine scalarEngine();

}  // namespace tl
