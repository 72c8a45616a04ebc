#!/usr/bin/env bash
# tl-viz frame rate: the whole window and each panel, the default softmax, 1600x1000, under
# xvfb-run with Mesa's software OpenGL (llvmpipe). Prints one line per view; the median frame
# time over 200 frames. Results: bench/results/viz_fps.txt (docs/viz.md, "Speed").
#   bash bench/viz_fps.sh [build-dir] > bench/results/viz_fps.txt
set -euo pipefail
cd "$(dirname "$0")/.."
B=${1:-build}
run() { xvfb-run -a -s "-screen 0 1600x1000x24" "$B"/viz/tl-viz kernels/softmax.tl --frames 200 --no-timings "$@" 2>&1 | tail -1; }
echo "# $(date -u +%FT%TZ) $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"
run
for p in stages threads memory occupancy latency fusion timings; do run --panel "$p"; done
