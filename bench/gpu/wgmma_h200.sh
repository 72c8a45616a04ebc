#!/usr/bin/env bash
# Issue 13 on the GPU: dots as warpgroup MMAs (wgmma.mma_async, tl-ptx --arch sm_90a;
# stages/thread/LowerWgmma.cpp).
#   1. correctness: tests/thread/kernels/mma_dot.tl in f16 and bf16 (MODE 0 / 1) at several tile
#      shapes (32-, 64- and 128-byte swizzles, 128-byte column blocks, N up to 256 per wgmma and
#      512 in two), 4 and 8 warps, k-major b (BT=1), ragged, pipelined; kernels/matmul_tc.tl in
#      bf16 against tl-block at 1024^3; t06 attention (its first dot is a wgmma); each checked by
#      tl-ptx against tl-scalar, and once under compute-sanitizer memcheck;
#   2. a sweep of matmul_tc at 4096^3 bf16, sm_90a, timed only (--no-check);
#   0. sim/gpus/wgmma_probe.cu (the tensor core's wgmma rate and latency);
#   3. the SASS of the last sweep kernel: HGMMA counts ($OUT/wgmma_sass_counts.txt).
#   device run: bash bench/gpu/wgmma_h200.sh gpu-carry/tl-ptx.gz   (carry: gpu-carry; ~6 minutes)
# compare.py's tensor-core rows (cuBLAS, Triton and tilelab at sm_90 and sm_90a, in one run) take
# ~7 minutes on their own, so they are a call of their own:
#   source bench/gpu/setup.sh gpu-carry/tl-ptx.gz; python3 bench/gpu/compare.py --tl-ptx /tmp/tl-ptx \
#     --only tensor --out $OUT/compare_tensor.json --table $OUT/compare_tensor.md --results-dir /tmp/tl-results
# Output: $OUT/wgmma_summary.txt, $OUT/wgmma_sweep.txt, $OUT/wgmma_sass_counts.txt.
source "$(dirname "$0")/setup.sh" "${1:-gpu-carry/tl-ptx.gz}"
export PYTHONUNBUFFERED=1
summary="$OUT/wgmma_summary.txt"
: > "$summary"
logs=/tmp/wgmma_logs
rm -rf "$logs" && mkdir -p "$logs"
# 0. sim/gpus/wgmma_probe.cu: the tensor core's cycles per 16 x 8 x 16 piece of a wgmma, and its
#    latency (-> $OUT/h200_wgmma_probe.json; sim/gpus/h200.json's wgmmaCyclesF16 is the whitepaper's
#    figure until this runs).
wgmma_probe
K=tests/thread/kernels/mma_dot.tl
A="--arch sm_90a --check-stage scalar"
for m in 0 1; do
  check_case "mma_dot.m$m.64x64x32.w4" /tmp/tl-ptx $K $A --set MODE=$m --set BM=64
  check_case "mma_dot.m$m.64x32x16.w4" /tmp/tl-ptx $K $A --set MODE=$m --set BM=64 --set BN=32 --set BK=16
  check_case "mma_dot.m$m.128x256x64.w8" /tmp/tl-ptx $K $A --set MODE=$m --set M=256 --set N=512 --set K=256 --set BM=128 --set BN=256 --set BK=64 --num-warps 8
  check_case "mma_dot.m$m.128x128x128.w4" /tmp/tl-ptx $K $A --set MODE=$m --set M=256 --set N=256 --set K=256 --set BM=128 --set BN=128 --set BK=128
  check_case "mma_dot.m$m.64x512x32.w4" /tmp/tl-ptx $K $A --set MODE=$m --set N=512 --set BM=64 --set BN=512 --set BK=32
  check_case "mma_dot.m$m.bt.64x64x64.w4" /tmp/tl-ptx $K $A --set MODE=$m --set BM=64 --set BK=64 --set BT=1
  check_case "mma_dot.m$m.bt.128x128x64.w8" /tmp/tl-ptx $K $A --set MODE=$m --set M=256 --set N=256 --set K=192 --set BM=128 --set BN=128 --set BK=64 --set BT=1 --num-warps 8
  check_case "mma_dot.m$m.ragged.w4" /tmp/tl-ptx $K $A --set MODE=$m --set M=100 --set N=90 --set K=70 --set BM=64
  check_case "mma_dot.m$m.s2.w8" /tmp/tl-ptx $K $A --set MODE=$m --set M=256 --set N=256 --set K=256 --set BM=128 --set BN=128 --set BK=64 --set num_stages=2 --num-warps 8
done
check_case "matmul_tc.bf16.1024.block" /tmp/tl-ptx kernels/matmul_tc.tl --arch sm_90a --check-stage block --set M=1024 --set N=1024 --set K=1024 \
  --set BLOCK_M=128 --set BLOCK_N=128 --set BLOCK_K=64 --num-warps 8 --set num_stages=2 --set "a_ptr=randn((M, K), dtype=bf16, seed=1)" \
  --set "b_ptr=randn((K, N), dtype=bf16, seed=2)" --set "c_ptr=zeros((M, N), dtype=bf16, output=True)"
check_case "matmul_tc.f16.scalar" /tmp/tl-ptx kernels/matmul_tc.tl --arch sm_90a --check-stage scalar --set BLOCK_M=64 --set BLOCK_K=64
bf="--set Q=randn((Z,H,N_CTX,HEAD_DIM),dtype=bf16,seed=1) --set K=randn((Z,H,N_CTX,HEAD_DIM),dtype=bf16,seed=2)"
bf="$bf --set V=randn((Z,H,N_CTX,HEAD_DIM),dtype=bf16,seed=3) --set Out=zeros((Z,H,N_CTX,HEAD_DIM),dtype=bf16,output=True)"
for d in 64 128; do
  check_case "t06.d$d" /tmp/tl-ptx kernels/triton/t06_attention_fwd.tl --arch sm_90a --check-stage scalar --set Z=1 --set H=2 --set N_CTX=256 \
    --set HEAD_DIM=$d --set BLOCK_M=128 --set BLOCK_N=64 --num-warps 8 --set STAGE=1 --set sm_scale=0.125 $bf
done
if command -v compute-sanitizer > /dev/null; then
  check_case "mma_dot.bf16.ragged.memcheck" compute-sanitizer --tool memcheck --error-exitcode 9 /tmp/tl-ptx $K $A --set MODE=1 \
    --set M=100 --set N=90 --set K=70 --set BM=64
fi
cat "$summary"

sweep="$OUT/wgmma_sweep.txt"
: > "$sweep"
for cfg in "128 128 64 8 2" "128 256 64 8 2" "128 128 64 4 2" "128 256 32 8 2" "256 128 64 8 2" "128 128 64 8 1" "128 256 64 8 1"; do
  set -- $cfg
  log="$logs/sweep_$1_$2_$3_$4_$5.txt"
  timeout 120 /tmp/tl-ptx kernels/matmul_tc.tl --arch sm_90a --no-check --runs 20 --num-warps "$4" --set M=4096 --set N=4096 --set K=4096 \
    --set BLOCK_M="$1" --set BLOCK_N="$2" --set BLOCK_K="$3" --set num_stages="$5" \
    --set "a_ptr=randn((M, K), dtype=bf16, seed=1)" --set "b_ptr=randn((K, N), dtype=bf16, seed=2)" \
    --set "c_ptr=zeros((M, N), dtype=bf16, output=True)" > "$log" 2>&1
  us=$(grep -oE "time: median [0-9.]+ us" "$log" | grep -oE "[0-9.]+" | head -1)
  tf=$(python3 -c "print(f'{2*4096**3/($us*1e-6)/1e12:.1f}')" 2>/dev/null)
  printf 'BM=%s BN=%s BK=%s warps=%s stages=%s  median %s us  %s TFLOP/s  %s\n' "$1" "$2" "$3" "$4" "$5" "$us" "$tf" \
    "$(grep -E "ptxas:|error" "$log" | head -2 | tr '\n' ' ')" >> "$sweep"
done
cat "$sweep"
if command -v cuobjdump > /dev/null && [ -f out/ptx/matmul_tc.ptx ]; then  # the last sweep kernel's SASS
  ptxas -arch=sm_90a out/ptx/matmul_tc.ptx -o /tmp/wgmma.cubin && cuobjdump -sass /tmp/wgmma.cubin |
    grep -oE "HGMMA\.[A-Za-z0-9.]+|HMMA\.[A-Za-z0-9.]+|WARPGROUP\.[A-Z]+" | sort | uniq -c > "$OUT/wgmma_sass_counts.txt"
  cat "$OUT/wgmma_sass_counts.txt"
fi
tar czf "$OUT/wgmma_logs.tgz" -C /tmp wgmma_logs
