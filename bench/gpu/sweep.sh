#!/usr/bin/env bash
# Block-size / num_warps sweep for the kernels whose first configuration missed its target
# (softmax_rows at N = 128, layernorm_row, matmul), timed with tl-ptx (no output check: the
# chosen configuration is checked in compare.py). Prints one line per configuration.
#   device run: bash bench/gpu/sweep.sh gpu-carry/tl-ptx.gz   (carry: gpu-carry)
source "$(dirname "$0")/setup.sh"
run() {  # kernel, num_warps, sets...
  local k=$1 w=$2; shift 2
  local args=() tag="$k w$w"
  for s in "$@"; do args+=(--set "$s"); tag+=" $s"; done
  local dir=/tmp/sweep/$RANDOM$RANDOM
  /tmp/tl-ptx "kernels/$k.tl" --num-warps "$w" "${args[@]}" --no-check -q --results-dir "$dir" > /dev/null 2>&1
  python3 -c "import json,sys; r=json.load(open('$dir/$k.json')); t=r['throughput']; print(f\"$tag: {r['time']['median_ms']*1e3:.1f} us  {t['gb_per_s']:.0f} GB/s  {t['tflop_per_s']:.1f} TFLOP/s  regs {r['resources']['registers']} spills {r['resources']['spill_store_bytes']}\")" 2>/dev/null || echo "$tag: failed"
}
{
for bm in 8 16 32 64; do for w in 4 8; do run softmax_rows $w M=524288 N=128 BLOCK_M=$bm; done; done
for w in 4 8 16 32; do run layernorm_row $w M=4096 N=8192; done
for cfg in "64 64 16 4" "64 64 32 4" "128 64 32 4" "64 128 32 4" "128 128 32 8" "128 128 16 8" "128 64 16 4"; do
  set -- $cfg; run matmul $4 M=4096 N=4096 K=4096 BLOCK_M=$1 BLOCK_N=$2 BLOCK_K=$3
done
} | tee "$OUT/sweep.txt"
