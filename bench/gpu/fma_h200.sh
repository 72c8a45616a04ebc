#!/usr/bin/env bash
# The FMA path of dot (fp32 IEEE) on the H200: register-tile accumulators (fmaAccumulatorLayout,
# a staged transposed, 16-byte shared loads of both operands, the k loop unrolled), and with
# num_stages >= 2 the K loop's loads copied by cp.async into rings of shared-memory slots. The GPU checks
# of the ieee mode of tests/thread/kernels/mma_dot.tl and of kernels/matmul.tl against tl-scalar
# (tl-block at 1024^3), a sweep of matmul's tiles at 4096^3 (with a second binary, built without
# the k loop's unroll attribute, when gpu-carry/tl-ptx-nounroll.gz is there), and compare.py's
# fp32 matmul row (cuBLAS, Triton and tilelab, each at its best configuration, in one run).
#   device run: bash bench/gpu/fma_h200.sh gpu-carry/tl-ptx.gz   (carry: gpu-carry)
# Output: $OUT/fma_checks.txt, $OUT/fma_sweep.txt, $OUT/compare_matmul.{md,json}.
source "$(dirname "$0")/setup.sh" "${1:-gpu-carry/tl-ptx.gz}"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null
logs=/tmp/fma_logs
mkdir -p "$logs"
summary=$OUT/fma_checks.txt
: > "$summary"
for w in 1 4 8; do check_case "mma_dot.ieee.w$w" /tmp/tl-ptx tests/thread/kernels/mma_dot.tl --check-stage scalar --set MODE=5 --num-warps $w; done
check_case "mma_dot.ieee.ragged" /tmp/tl-ptx tests/thread/kernels/mma_dot.tl --check-stage scalar --set MODE=5 --set M=50 --set N=40 --set K=40
check_case "matmul.default" /tmp/tl-ptx kernels/matmul.tl --check-stage scalar
check_case "matmul.ragged.128x128x16.w8" /tmp/tl-ptx kernels/matmul.tl --check-stage scalar --num-warps 8 --set M=300 --set N=260 --set K=100 --set BLOCK_M=128 --set BLOCK_N=128 --set BLOCK_K=16
check_case "matmul.1024.128x128x32.w8.r128" /tmp/tl-ptx kernels/matmul.tl --check-stage block --atol 1e-3 --num-warps 8 --set M=1024 --set N=1024 --set K=1024 --set BLOCK_M=128 --set BLOCK_N=128 --set BLOCK_K=32 --set maxnreg=128
check_case "matmul.1024.128x64x16.w4.s2" /tmp/tl-ptx kernels/matmul.tl --check-stage block --atol 1e-3 --num-warps 4 --set M=1024 --set N=1024 --set K=1024 --set BLOCK_M=128 --set BLOCK_N=64 --set BLOCK_K=16 --set num_stages=2
check_case "matmul.ring.ragged.128x128x16.w8.s3" /tmp/tl-ptx kernels/matmul.tl --check-stage scalar --num-warps 8 --set M=300 --set N=260 --set K=100 --set BLOCK_M=128 --set BLOCK_N=128 --set BLOCK_K=16 --set num_stages=3
check_case "matmul.ring.1024.128x128x16.w8.s3.r128" /tmp/tl-ptx kernels/matmul.tl --check-stage block --atol 1e-3 --num-warps 8 --set M=1024 --set N=1024 --set K=1024 --set BLOCK_M=128 --set BLOCK_N=128 --set BLOCK_K=16 --set num_stages=3 --set maxnreg=128
check_case "matmul.ring.short.64x64x16.w4.s4" /tmp/tl-ptx kernels/matmul.tl --check-stage scalar --num-warps 4 --set M=70 --set N=90 --set K=20 --set BLOCK_M=64 --set BLOCK_N=64 --set BLOCK_K=16 --set num_stages=4
command -v compute-sanitizer > /dev/null &&
  check_case "memcheck.matmul.ring.ragged" compute-sanitizer --tool memcheck /tmp/tl-ptx kernels/matmul.tl --check-stage scalar --num-warps 8 --set M=300 --set N=260 --set K=100 --set BLOCK_M=128 --set BLOCK_N=128 --set BLOCK_K=16 --set num_stages=3
command -v compute-sanitizer > /dev/null &&
  check_case "memcheck.matmul.ragged" compute-sanitizer --tool memcheck /tmp/tl-ptx kernels/matmul.tl --check-stage scalar --num-warps 8 --set M=300 --set N=260 --set K=100 --set BLOCK_M=128 --set BLOCK_N=128 --set BLOCK_K=16
cat "$summary"

# One timing: binary, BM BN BK warps stages maxnreg (0: none).
time_one() {
  local bin=$1 bm=$2 bn=$3 bk=$4 w=$5 st=$6 reg=$7
  local extra=()
  [ "$reg" != 0 ] && extra=(--set maxnreg="$reg")
  "$bin" kernels/matmul.tl --no-check --runs 20 --num-warps "$w" --set M=4096 --set N=4096 --set K=4096 \
    --set BLOCK_M="$bm" --set BLOCK_N="$bn" --set BLOCK_K="$bk" --set num_stages="$st" "${extra[@]}" > /tmp/mm.txt 2>&1
  local us
  us=$(grep -oE "time: median [0-9.]+ us" /tmp/mm.txt | grep -oE "[0-9.]+" | head -1)
  printf '%-12s %3s %3s %3s w%-2s s%s r%-3s median %9s us %6s TFLOP/s  %s\n' "$(basename "$bin")" "$bm" "$bn" "$bk" "$w" "$st" "$reg" \
    "${us:-?}" "$(python3 -c "print(f'{2*4096**3/(${us:-0}*1e-6)/1e12:.1f}' if ${us:-0} else '?')")" "$(grep -oE "ptxas: [0-9]+ registers[^(]*" /tmp/mm.txt | head -1)"
}
{
  for cfg in "128 128 16 8 1 0" "128 128 16 8 1 128" "128 128 32 8 1 128" "128 128 16 8 2 0" "128 128 16 8 2 128" \
             "128 128 16 8 3 0" "128 128 16 8 3 128" "128 128 16 8 4 128" "128 128 32 8 2 128" "128 128 32 8 3 128" \
             "128 128 8 8 3 128" "128 64 16 4 1 0" "128 64 16 4 3 0" "64 128 16 4 1 0" "64 128 16 4 3 0" \
             "64 128 32 4 3 0" "64 64 16 4 3 0" "64 64 16 2 3 0"; do
    time_one /tmp/tl-ptx $cfg
  done
  if [ -f gpu-carry/tl-ptx-nounroll.gz ]; then
    gunzip -c gpu-carry/tl-ptx-nounroll.gz > /tmp/tl-ptx-nounroll && chmod +x /tmp/tl-ptx-nounroll
    for cfg in "128 128 16 8 1 0" "128 128 16 8 1 128" "128 64 16 4 1 0" "64 64 16 4 1 0"; do
      time_one /tmp/tl-ptx-nounroll $cfg
    done
  fi
} | tee "$OUT/fma_sweep.txt"
python3 bench/gpu/compare.py --tl-ptx /tmp/tl-ptx --only matmul --out "$OUT/compare_matmul.json" --table "$OUT/compare_matmul.md" \
  --results-dir /tmp/tlr ${FMA_CONFIGS:+--fma-configs "$FMA_CONFIGS"} 2>&1 | tail -4
cat "$OUT/compare_matmul.md"
