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
echo "=== 5. tl-cpu: the same block IR compiled for this CPU with LLVM (vector loops, every core), timed and checked against tl-scalar ==="
"$B"/stages/cpu/tl-cpu "$K" --runs 20
echo
echo "=== 6. tl-sim: what a profiler would show on an H200: sectors, bank conflicts, DRAM, occupancy, time, fusion ==="
"$B"/stages/sim/tl-sim "$K"
echo
echo "=== 7. tl-viz: every stage linked line by line, sectors per lane, occupancy, the timeline, fusion, H200 timings ==="
if [[ -x "$B"/viz/tl-viz ]]; then
  if [[ -n "${DISPLAY:-}" ]]; then
    echo "(opens a window; close it to go on)"
    "$B"/viz/tl-viz "$K"
  elif command -v xvfb-run >/dev/null; then
    mkdir -p out/viz
    xvfb-run -a -s "-screen 0 1600x1000x24" "$B"/viz/tl-viz "$K" --screenshot out/viz --panel all --no-timings
    echo "(no display: every panel rendered headless into out/viz/*.png)"
  fi
else
  echo "tl-viz was not built (needs libimgui-dev libglfw3-dev libgl-dev; scripts/install-deps.sh installs them)"
fi
echo
echo "=== 8. tl-grade: the course's grader, no GPU: a student's starter and the reference solution of lab 1 ==="
"$B"/labs/grader/tl-grade labs/01-coalescing labs/01-coalescing/starter.tl || true   # the starter fails on purpose
"$B"/labs/grader/tl-grade labs/01-coalescing labs/01-coalescing/solution.tl --quiet
echo
echo "=== a wrong kernel that every stage agrees with, caught by --reference and the never-written report ==="
"$B"/stages/block/tl-block tests/checks/kernels/floor_grid.tl --reference tests/checks/kernels/scale.tl || true
echo
echo "=== every kernel in kernels/ through tl-block and tl-thread, checked against tl-scalar ==="
"$B"/stages/block/tl-block --quiet
"$B"/stages/thread/tl-thread --quiet
