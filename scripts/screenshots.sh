#!/usr/bin/env bash
# Renders the tl-viz screenshots the README and docs/viz.md show, into docs/img/viz/:
#   softmax (default launch)   <panel>.png for every panel, + app.png (the whole window); the
#                              line of its max is selected, so Stages shows what it became
#   softmax, M=16384           latency-M16384.png: enough blocks per SM to see latency hiding
#   matmul                     matmul-threads.png (a 2-D layout), matmul-stages.png
#   transpose                  handout views picked with the headless selection options:
#                              transpose-threads.png (--value: the converted layout, --warp 1
#                              outlined), transpose-banks.png (--instr: the shared store's banks)
#   tests/bad/shape_broadcast  errors.png: a kernel that does not compile, its error at its line
# The Stages pictures are 2400 px wide: every column is as wide as its longest line.
# Headless, under xvfb-run with Mesa's software OpenGL. Uses tl-viz from $BUILD_DIR (default
# build/; scripts/build.sh makes it).
#   scripts/screenshots.sh
#   WIDTH=1280 HEIGHT=800 scripts/screenshots.sh
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
VIZ="$BUILD_DIR/viz/tl-viz"
WIDTH=${WIDTH:-1600}
HEIGHT=${HEIGHT:-1000}
OUT=docs/img/viz
if [[ ! -x "$VIZ" ]]; then
  echo "screenshots.sh: $VIZ not found: build it first (scripts/build.sh, needs libimgui-dev libglfw3-dev)" >&2
  exit 1
fi
if ! command -v xvfb-run >/dev/null; then
  echo "screenshots.sh: xvfb-run not found (apt install xvfb)" >&2
  exit 1
fi
mkdir -p "$OUT"
shoot() {  # kernel output [extra args...]: --panel all with a {key} pattern, or one --panel
  local kernel=$1 out=$2
  shift 2
  xvfb-run -a -s "-screen 0 ${WIDTH}x${HEIGHT}x24" "$VIZ" "kernels/$kernel.tl" --screenshot "$out" \
    --width "$WIDTH" --height "$HEIGHT" "$@"
}
max_line=$(grep -n 'max(x, axis=0)' kernels/softmax.tl | head -1 | cut -d: -f1)
shoot softmax "$OUT/{key}.png" --panel all --line "${max_line:-0}"
WIDTH=2400 shoot softmax "$OUT/stages.png" --panel stages --no-timings --line "${max_line:-0}"
shoot softmax "$OUT/latency-M16384.png" --panel latency --set M=16384 --no-timings
shoot matmul "$OUT/matmul-threads.png" --panel threads --no-timings
WIDTH=2400 shoot matmul "$OUT/matmul-stages.png" --panel stages --no-timings --line "$(grep -n 'dot(' kernels/matmul.tl | head -1 | cut -d: -f1)"
# Instruction ids come from the thread IR: tl-viz lists them when --instr names none.
banks_instr=$(xvfb-run -a -s "-screen 0 ${WIDTH}x${HEIGHT}x24" "$VIZ" kernels/transpose.tl --screenshot /dev/null \
  --panel memory --no-timings --instr 999999 2>&1 | grep -o '[0-9]* st_shared' | head -1 | cut -d' ' -f1 || true)
shoot transpose "$OUT/transpose-threads.png" --panel threads --no-timings --value tile.1 --warp 1
shoot transpose "$OUT/transpose-banks.png" --panel memory --no-timings --instr "${banks_instr:?no st_shared in transpose}" --warp 1
# tl-viz exits with 3 when the kernel has errors (the PNG is still written).
xvfb-run -a -s "-screen 0 ${WIDTH}x${HEIGHT}x24" "$VIZ" tests/bad/shape_broadcast.tl --screenshot "$OUT/errors.png" \
  --width "$WIDTH" --height "$HEIGHT" --no-timings || [ $? -eq 3 ]
echo "screenshots.sh: wrote $(ls "$OUT"/*.png | wc -l) PNGs into $OUT/"
