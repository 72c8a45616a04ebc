#!/usr/bin/env bash
# Issue 13 on the GPU, part 1: tensor cores.
#   1. sim/gpus/mma_probe.cu: mma.sync latency and throughput per dtype (-> $OUT/h200_mma_probe.json);
#   2. correctness: tests/thread/kernels/mma_dot.tl in every MODE (f16, bf16, e4m3, e5m2, tf32,
#      ieee) at several shapes and 1 / 4 / 8 warps, and kernels/matmul_tc.tl in every input dtype,
#      each checked by tl-ptx against tl-scalar (the executor's mma follows the PTX ISA's tables:
#      a wrong table gives wrong numbers here), and once under compute-sanitizer;
#   3. a sweep of matmul_tc's tile configurations at 4096^3 bf16 (timed only: --no-check).
#   device run: bash bench/gpu/mma_h200.sh gpu-carry/tl-ptx.gz   (carry: gpu-carry)
# Output: $OUT/mma_summary.txt (one line per case: rc and the PASS/FAIL lines), $OUT/mma_sweep.txt.
source "$(dirname "$0")/setup.sh" "${1:-gpu-carry/tl-ptx.gz}"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader 2>/dev/null
summary="$OUT/mma_summary.txt"
: > "$summary"
logs=/tmp/mma_logs
rm -rf "$logs" && mkdir -p "$logs"

if command -v nvcc > /dev/null; then
  nvcc -O2 -arch=sm_90 -o /tmp/mma_probe sim/gpus/mma_probe.cu && /tmp/mma_probe > "$OUT/h200_mma_probe.json"
  cat "$OUT/h200_mma_probe.json"
else
  echo "no nvcc: probe not run" | tee "$OUT/h200_mma_probe.json"
fi

K=tests/thread/kernels/mma_dot.tl
modes=(f16 bf16 e4m3 e5m2 tf32 ieee)
for m in 0 1 2 3 4 5; do
  for w in 1 4 8; do
    check_case "mma_dot.${modes[$m]}.w$w" /tmp/tl-ptx $K --check-stage scalar --set MODE=$m --num-warps $w
  done
  check_case "mma_dot.${modes[$m]}.ragged" /tmp/tl-ptx $K --check-stage scalar --set MODE=$m --set M=50 --set N=40 --set K=40
  check_case "mma_dot.${modes[$m]}.tile64" /tmp/tl-ptx $K --check-stage scalar --set MODE=$m --set M=128 --set BM=64 --set BN=64 --set BK=64
  check_case "mma_dot.${modes[$m]}.longk" /tmp/tl-ptx $K --check-stage scalar --set MODE=$m --set M=32 --set N=32 --set K=256 --set BK=256
done
for dt in f16 bf16 f8e4m3 f8e5m2 f32; do
  out=f32
  check_case "matmul_tc.$dt" /tmp/tl-ptx kernels/matmul_tc.tl --check-stage scalar \
    --set "a_ptr=randn((M, K), dtype=$dt, seed=1)" --set "b_ptr=randn((K, N), dtype=$dt, seed=2)"
done
check_case "matmul_tc.bf16.1024.block" /tmp/tl-ptx kernels/matmul_tc.tl --check-stage block --set M=1024 --set N=1024 --set K=1024 \
  --set BLOCK_M=128 --set BLOCK_N=128 --set "a_ptr=randn((M, K), dtype=bf16, seed=1)" --set "b_ptr=randn((K, N), dtype=bf16, seed=2)" \
  --set "c_ptr=zeros((M, N), dtype=bf16, output=True)"
check_case "t03_matmul.f16" /tmp/tl-ptx kernels/triton/t03_matmul.tl --check-stage scalar
check_case "t06_attention_fwd.f16" /tmp/tl-ptx kernels/triton/t06_attention_fwd.tl --check-stage scalar
if command -v compute-sanitizer > /dev/null; then
  check_case "mma_dot.bf16.memcheck" compute-sanitizer --tool memcheck --error-exitcode 9 /tmp/tl-ptx $K --check-stage scalar --set MODE=1
  check_case "mma_dot.tf32.racecheck" compute-sanitizer --tool racecheck --error-exitcode 9 /tmp/tl-ptx $K --check-stage scalar --set MODE=4
fi
cat "$summary"

# 3. the sweep: 4096^3 bf16, C in bf16; TFLOP/s from the median time.
sweep="$OUT/mma_sweep.txt"
: > "$sweep"
for cfg in "128 128 32 4" "128 128 32 8" "128 64 32 4" "64 128 32 4" "128 256 32 8" "256 128 32 8" "128 128 64 8" "64 64 32 4"; do
  set -- $cfg
  log="$logs/sweep_$1_$2_$3_$4.txt"
  timeout 120 /tmp/tl-ptx kernels/matmul_tc.tl --no-check --runs 20 --num-warps "$4" --set M=4096 --set N=4096 --set K=4096 \
    --set BLOCK_M="$1" --set BLOCK_N="$2" --set BLOCK_K="$3" \
    --set "a_ptr=randn((M, K), dtype=bf16, seed=1)" --set "b_ptr=randn((K, N), dtype=bf16, seed=2)" \
    --set "c_ptr=zeros((M, N), dtype=bf16, output=True)" > "$log" 2>&1
  ms=$(grep -oE "time: median [0-9.]+ us" "$log" | grep -oE "[0-9.]+" | head -1)
  tf=$(python3 -c "print(f'{2*4096**3/($ms*1e-6)/1e12:.1f}')" 2>/dev/null)
  printf 'BM=%s BN=%s BK=%s warps=%s  median %s us  %s TFLOP/s  %s\n' "$1" "$2" "$3" "$4" "$ms" "$tf" \
    "$(grep -E "ptxas:|error" "$log" | head -2 | tr '\n' ' ')" >> "$sweep"
done
cat "$sweep"
tar czf "$OUT/mma_logs.tgz" -C /tmp mma_logs
