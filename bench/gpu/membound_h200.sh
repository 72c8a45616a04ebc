#!/usr/bin/env bash
# The memory-bound rows below 1.0x Triton (softmax at N = 8192 / 16384, layernorm_row at
# 4096 x 8192): both sides swept over num_warps with their registers (bench/gpu/membound_sweep.py),
# then Nsight Compute's occupancy, warp-state and speed-of-light sections for tilelab's and
# Triton's layernorm at 16 warps (the table's configuration).
#   device run: bash bench/gpu/membound_h200.sh gpu-carry/tl-ptx.gz   (carry: gpu-carry)
# Output: $OUT/membound_sweep.{txt,json}, $OUT/membound_ncu.tgz
source "$(dirname "$0")/setup.sh" "${1:-gpu-carry/tl-ptx.gz}"
export PYTHONUNBUFFERED=1
timeout 300 python3 bench/gpu/membound_sweep.py --tl-ptx /tmp/tl-ptx --out "$OUT/membound_sweep.json" | tee "$OUT/membound_sweep.txt"
ncu_dir=/tmp/membound_ncu
rm -rf "$ncu_dir" && mkdir -p "$ncu_dir"
if command -v ncu > /dev/null; then
  sections="--section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats --section MemoryWorkloadAnalysis"
  timeout 120 ncu --clock-control none $sections --kernel-name layernorm_row --launch-count 1 /tmp/tl-ptx kernels/layernorm_row.tl \
    --num-warps 16 --set M=4096 --set N=8192 --no-check --runs 1 > "$ncu_dir/tilelab_layernorm_row_w16.txt" 2>&1
  timeout 120 ncu --clock-control none $sections --kernel-name regex:layernorm --launch-count 1 python3 -c "
import sys, torch; sys.path.insert(0, 'bench/gpu'); import compare
m, n = 4096, 8192
x = torch.randn(m, n, device='cuda'); y = torch.empty_like(x); w = torch.randn(n, device='cuda'); b = torch.randn(n, device='cuda')
compare.layernorm_kernel[(m,)](x, y, w, b, n, 1e-5, BLOCK=n, num_warps=16); torch.cuda.synchronize()
" > "$ncu_dir/triton_layernorm_w16.txt" 2>&1
  for f in "$ncu_dir"/*.txt; do
    echo "== $f"; grep -E "Registers Per|Achieved Occupancy|Theoretical Occupancy|Block Limit|DRAM Throughput|Memory Throughput|Duration|Warp Cycles Per Issued|Stall" "$f" | head -30
  done | tee "$OUT/membound_ncu_summary.txt"
fi
tar czf "$OUT/membound_ncu.tgz" -C /tmp membound_ncu
