#!/usr/bin/env bash
# The main demo: installs what is missing, builds, and takes the softmax through every stage.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh
B=${BUILD_DIR:-build}
K=kernels/softmax.tl

echo
echo "=== 1. tl-scalar: the scalar CPU reference (one program, one element at a time) ==="
"$B"/stages/scalar/tl-scalar "$K"
echo
echo "=== 2. tl-block: block IR after the pass pipeline, run a tile at a time, checked against tl-scalar ==="
"$B"/stages/block/tl-block "$K" --print-ir
echo
echo "=== every kernel in kernels/ through tl-block (a ragged size: N not a multiple of the block) ==="
"$B"/stages/block/tl-block --quiet
