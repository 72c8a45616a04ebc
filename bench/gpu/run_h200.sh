#!/usr/bin/env bash
# One call on the GPU machine (the device tool): everything the PTX and simulator issues measure.
#   1. tl-ptx on every kernel in kernels/: compile (cache miss), check against tl-scalar, time;
#      then again (cache hits);
#   2. bench/gpu/compare.py: tilelab vs Triton vs PyTorch at the issue's shapes, in this one run;
#   3. Nsight Compute (--clock-control none) on every kernel's default launch: the counters
#      docs/fidelity.md puts beside the simulator's;
#   4. (step ncu-large) the same counters at the shapes of bench/gpu/large_shapes.txt, whose
#      traffic overflows the L2 (DRAM writes during the kernel, re-reads).
# Results go to $OUT (at most 8 files come back, so per-run JSONs travel as one tarball).
#
#   here:  strip -o gpu-carry/tl-ptx build/stages/ptx/tl-ptx && gzip -f gpu-carry/tl-ptx
#   device run: bash bench/gpu/run_h200.sh gpu-carry/tl-ptx.gz   (carry: gpu-carry)
set -uo pipefail
BIN=${1:-gpu-carry/tl-ptx.gz}
STEPS=${STEPS:-ptx,compare,ncu}
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT/res"
gunzip -c "$BIN" > /tmp/tl-ptx && chmod +x /tmp/tl-ptx
export TL_CACHE_DIR=/tmp/tlcache PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,memory.total --format=csv > "$OUT/gpu.txt" 2>&1

if [[ $STEPS == *ptx* ]]; then
  { echo "### first run (cache cold)"; /tmp/tl-ptx --results-dir "$OUT/res/cold";
    echo "### second run (cache warm)"; /tmp/tl-ptx --results-dir "$OUT/res/warm"; } > "$OUT/tlptx.log" 2>&1
  tail -3 "$OUT/tlptx.log"
fi

if [[ $STEPS == *compare* ]]; then
  python3 bench/gpu/compare.py --tl-ptx /tmp/tl-ptx --out "$OUT/compare.json" --table "$OUT/compare.md" \
    --results-dir /tmp/cmpres > "$OUT/compare.log" 2>&1
  cat "$OUT/compare.md"
fi

METRICS=launch__registers_per_thread,launch__occupancy_limit_registers,launch__occupancy_limit_shared_mem,launch__occupancy_limit_warps,launch__occupancy_limit_blocks,sm__maximum_warps_per_active_cycle_pct,gpu__time_duration.sum,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__t_requests_pipe_lsu_mem_global_op_st.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_write.sum,lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum,dram__bytes_read.sum,dram__bytes_write.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum
if [[ $STEPS == *ncu,* || $STEPS == *ncu ]]; then
  : > "$OUT/ncu.csv"
  for k in kernels/*.tl; do
    fn=$(grep -m1 -oP '^def \K\w+' "$k")
    ncu --clock-control none --kernel-name "$fn" --launch-count 1 --metrics "$METRICS" --csv \
      /tmp/tl-ptx "$k" --no-check --warmup 0 --runs 1 -q --results-dir /tmp/ncures 2>/dev/null \
      | grep -E '^"' | sed "s|^|\"$(basename "$k" .tl)\",|" >> "$OUT/ncu.csv"
  done
  wc -l "$OUT/ncu.csv"
fi
if [[ $STEPS == *ncu-large* ]]; then
  : > "$OUT/ncu_large.csv"
  grep -v '^#' bench/gpu/large_shapes.txt | while read -r label k warps sets; do
    [ -z "$label" ] && continue
    fn=$(grep -m1 -oP '^def \K\w+' "$k")
    args=(); for s in $sets; do args+=(--set "$s"); done
    ncu --clock-control none --kernel-name "$fn" --launch-count 1 --metrics "$METRICS" --csv \
      /tmp/tl-ptx "$k" "${args[@]}" --num-warps "$warps" --no-check --warmup 0 --runs 1 -q \
      --results-dir /tmp/ncures 2>/dev/null | grep -E '^"' | sed "s|^|\"$label\",|" >> "$OUT/ncu_large.csv"
  done
  wc -l "$OUT/ncu_large.csv"
fi
tar czf "$OUT/results.tgz" -C "$OUT" res 2>/dev/null
ls -la "$OUT"
