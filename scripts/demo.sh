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
echo "=== 3. tl-thread: layouts decide which thread owns which element; the reduction becomes shuffles, shared memory and barriers; run warp by warp ==="
"$B"/stages/thread/tl-thread "$K" --print-thread-ir --show-map x
echo
echo "=== 4. tl-ptx: LLVM NVPTX -> PTX, ptxas; run, timed and checked on the GPU when there is one ==="
"$B"/stages/ptx/tl-ptx "$K"
echo
echo "=== 5. tl-sim: what a profiler would show on an H200: sectors, bank conflicts, DRAM, occupancy, time, fusion ==="
"$B"/stages/sim/tl-sim "$K"
echo
echo "=== every kernel in kernels/ through tl-block and tl-thread, checked against tl-scalar ==="
"$B"/stages/block/tl-block --quiet
"$B"/stages/thread/tl-thread --quiet
