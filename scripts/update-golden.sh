#!/usr/bin/env bash
# Regenerates tests/golden/<kernel>.ir (the block IR of every kernels/*.tl after the block
# pipeline, at its default launch), <kernel>.layouts.ir (the layout snapshot) and
# <kernel>.thread.ir (the thread IR) after an intended change to the front end, a pass, the
# layout passes, the lowering or a kernel.
#
#   scripts/update-golden.sh             # uses build/ (or $BUILD_DIR)
#
# It builds test_e2e and runs its Golden tests with TL_UPDATE_GOLDEN=1, which makes them write
# the files instead of comparing. Review the result with `git diff tests/golden` before committing.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
if [ ! -f "$BUILD_DIR/CMakeCache.txt" ]; then
  cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
fi
cmake --build "$BUILD_DIR" --target test_e2e
TL_UPDATE_GOLDEN=1 "$BUILD_DIR/tests/test_e2e" --gtest_filter='Kernels/KernelIR.Golden*'
git --no-pager diff --stat -- tests/golden || true
