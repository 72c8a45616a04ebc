#!/usr/bin/env bash
# Issue 13 on the GPU: the pipeline-loads pass (num_stages, ir/PipelineLoads.cpp).
#   1. correctness: tests/thread/kernels/mma_dot.tl in every MODE and kernels/matmul_tc.tl in every
#      input dtype with num_stages 2 and 3, ragged and one-iteration K, checked by tl-ptx against
#      tl-scalar; a ragged pipelined case under compute-sanitizer memcheck (the prefetch past the
#      last iteration must be masked off);
#   2. sweeps at 4096^3, timed only (--no-check), each tile configuration at num_stages 1 and 2:
#      matmul_tc bf16 (tensor cores) and matmul fp32 (FMAs);
#   3. compare.py's tensor-core rows (cuBLAS, Triton and tilelab in one run).
#   device run: bash bench/gpu/pipeline_h200.sh gpu-carry/tl-ptx.gz   (carry: gpu-carry)
# Output: $OUT/pipeline_summary.txt, $OUT/pipeline_sweep.txt, $OUT/compare_tensor.{md,json}.
source "$(dirname "$0")/setup.sh" "${1:-gpu-carry/tl-ptx.gz}"
export PYTHONUNBUFFERED=1
summary="$OUT/pipeline_summary.txt"
: > "$summary"
logs=/tmp/pipe_logs
rm -rf "$logs" && mkdir -p "$logs"
K=tests/thread/kernels/mma_dot.tl
modes=(f16 bf16 e4m3 e5m2 tf32 ieee)
for m in 0 1 2 3 4 5; do
  check_case "mma_dot.${modes[$m]}.s2" /tmp/tl-ptx $K --check-stage scalar --set MODE=$m --set num_stages=2
  check_case "mma_dot.${modes[$m]}.s3.w8" /tmp/tl-ptx $K --check-stage scalar --set MODE=$m --set num_stages=3 --num-warps 8
  check_case "mma_dot.${modes[$m]}.ragged.s2" /tmp/tl-ptx $K --check-stage scalar --set MODE=$m --set M=50 --set N=40 --set K=40 --set num_stages=2
  check_case "mma_dot.${modes[$m]}.onestep.s2" /tmp/tl-ptx $K --check-stage scalar --set MODE=$m --set K=32 --set num_stages=2
done
for dt in f16 bf16 f8e4m3 f8e5m2 f32; do
  check_case "matmul_tc.$dt.s2" /tmp/tl-ptx kernels/matmul_tc.tl --check-stage scalar --set num_stages=2 \
    --set "a_ptr=randn((M, K), dtype=$dt, seed=1)" --set "b_ptr=randn((K, N), dtype=$dt, seed=2)"
done
check_case "matmul_tc.bf16.1024.s2.block" /tmp/tl-ptx kernels/matmul_tc.tl --check-stage block --set M=1024 --set N=1024 --set K=1024 \
  --set BLOCK_M=128 --set BLOCK_N=128 --num-warps 8 --set num_stages=2 --set "a_ptr=randn((M, K), dtype=bf16, seed=1)" \
  --set "b_ptr=randn((K, N), dtype=bf16, seed=2)" --set "c_ptr=zeros((M, N), dtype=bf16, output=True)"
check_case "matmul.fp32.s2" /tmp/tl-ptx kernels/matmul.tl --check-stage scalar --set num_stages=2
check_case "matmul.fp32.ragged.s2" /tmp/tl-ptx kernels/matmul.tl --check-stage scalar --set num_stages=2 --set M=100 --set N=90 --set K=70
check_case "softmax_online.s2" /tmp/tl-ptx kernels/softmax_online.tl --check-stage scalar --set num_stages=2
if command -v compute-sanitizer > /dev/null; then
  check_case "mma_dot.bf16.ragged.s2.memcheck" compute-sanitizer --tool memcheck --error-exitcode 9 /tmp/tl-ptx $K --check-stage scalar \
    --set MODE=1 --set M=50 --set N=40 --set K=40 --set num_stages=2
  check_case "matmul.ragged.s2.memcheck" compute-sanitizer --tool memcheck --error-exitcode 9 /tmp/tl-ptx kernels/matmul.tl --check-stage scalar \
    --set num_stages=2 --set M=100 --set N=90 --set K=70
fi
cat "$summary"

sweep="$OUT/pipeline_sweep.txt"
: > "$sweep"
time_one() {  # label kernel flops options...
  local label=$1 kernel=$2 flops=$3
  shift 3
  local log="$logs/sweep_$(echo "$label" | tr ' =' '__').txt"
  timeout 120 /tmp/tl-ptx "$kernel" --no-check --runs 20 "$@" > "$log" 2>&1
  local us tf
  us=$(grep -oE "time: median [0-9.]+ us" "$log" | grep -oE "[0-9.]+" | head -1)
  tf=$(python3 -c "print(f'{$flops/($us*1e-6)/1e12:.1f}')" 2>/dev/null)
  printf '%-44s median %s us  %s TFLOP/s  %s\n' "$label" "$us" "$tf" "$(grep -E "ptxas:|error" "$log" | head -2 | tr '\n' ' ')" >> "$sweep"
}
F=$((2 * 4096 * 4096 * 4096))
BF="--set M=4096 --set N=4096 --set K=4096"
for cfg in "128 128 32 4" "128 128 32 8" "128 64 32 4" "128 256 32 8" "256 128 32 8" "128 128 64 8" "64 128 32 4"; do
  set -- $cfg
  for st in 1 2; do
    time_one "bf16 BM=$1 BN=$2 BK=$3 w$4 s$st" kernels/matmul_tc.tl "$F" $BF --num-warps "$4" --set BLOCK_M="$1" \
      --set BLOCK_N="$2" --set BLOCK_K="$3" --set num_stages=$st --set "a_ptr=randn((M, K), dtype=bf16, seed=1)" \
      --set "b_ptr=randn((K, N), dtype=bf16, seed=2)" --set "c_ptr=zeros((M, N), dtype=bf16, output=True)"
  done
done
for cfg in "128 64 16 4" "128 128 16 8" "128 128 32 8"; do
  set -- $cfg
  for st in 1 2; do
    time_one "fp32 FMA BM=$1 BN=$2 BK=$3 w$4 s$st" kernels/matmul.tl "$F" $BF --num-warps "$4" --set BLOCK_M="$1" \
      --set BLOCK_N="$2" --set BLOCK_K="$3" --set num_stages=$st
  done
done
cat "$sweep"
python3 bench/gpu/compare.py --tl-ptx /tmp/tl-ptx --only tensor --out "$OUT/compare_tensor.json" \
  --table "$OUT/compare_tensor.md" --results-dir /tmp/tl-results 2>&1 | tail -12
tar czf "$OUT/pipe_logs.tgz" -C /tmp pipe_logs
