#!/usr/bin/env bash
# Lab 5's handout numbers on the H200: each rung of the ladder (labs/05-tensor-cores: the
# starter, wrong/fma_f32.tl, wrong/small_tiles.tl, the solution without pipelining (rung 4:
# --set num_stages=1) and as it is (rung 5: num_stages=2)) at 4096^3 with f16 inputs,
# timed by tl-ptx (median of 20 runs, L2 flushed; --no-check: the CPU stages check the same
# kernels in CI). TFLOP/s = 2 * 4096^3 / time.
#   device run: bash bench/gpu/lab5_h200.sh gpu-carry/tl-ptx.gz   (carry: gpu-carry)
source "$(dirname "$0")/setup.sh" "${1:-gpu-carry/tl-ptx.gz}"
L=labs/05-tensor-cores
out="$OUT/lab5_h200.txt"
: > "$out"
for rung in starter.tl wrong/fma_f32.tl wrong/small_tiles.tl "solution.tl num_stages=1" solution.tl; do
  set -- $rung
  k=$1
  extra=()
  [ $# -gt 1 ] && extra=(--set "$2")
  log=/tmp/lab5_$(echo "$rung" | tr '/ =' '___').txt
  timeout 120 /tmp/tl-ptx "$L/$k" --no-check --runs 20 --set M=4096 --set N=4096 --set K=4096 "${extra[@]}" > "$log" 2>&1
  us=$(grep -oE "time: median [0-9.]+ us" "$log" | grep -oE "[0-9.]+" | head -1)
  tf=$(python3 -c "print(f'{2*4096**3/($us*1e-6)/1e12:.1f}')" 2>/dev/null)
  printf '%-32s median %s us  %s TFLOP/s  %s\n' "$rung" "$us" "$tf" "$(grep -E "ptxas:" "$log" | head -1 | sed 's/^ *//')" >> "$out"
done
cat "$out"
