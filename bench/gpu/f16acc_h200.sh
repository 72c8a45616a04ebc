#!/usr/bin/env bash
# Issue 13 on the GPU: out_dtype=tl.float16, f16 inputs accumulated in f16: mma.sync...f16.f16.f16.f16
# (sm_90) and wgmma...f16.f16.f16 (sm_90a, where the tile fits; stages/ptx/CodegenMma.cpp).
#   1. correctness, by tl-ptx: tests/thread/kernels/mma_dot.tl MODE 7 and kernels/matmul_tc.tl
#      ACC_F16=1 (f16 and f32 outputs) against tl-scalar (which rounds once per dot; tolerance
#      2^-5 of the largest output, lib/runtime/Compare.cpp), sm_90 and sm_90a, 4 and 8 warps,
#      ragged sizes, num_stages 3, B both ways, K up to 4096; "bits.*": the GPU against tl-thread
#      bit for bit (--check-stage thread --atol 0 --rtol 0), which tests the executor's model of
#      the f16 accumulator (sim/TensorCoreSum.h tensorCoreStepToF16: aligned as for f32, the sum
#      rounded to nearest f16); compute-sanitizer memcheck;
#   2. compare.py's f16acc rows ($F16ACC_CASES, default f16acc:4096,f16acc:8192): cuBLAS with f16
#      accumulation, Triton's out_dtype=tl.float16 and tilelab in one run; the SASS's HMMA / HGMMA forms.
#   device run: bash bench/gpu/f16acc_h200.sh gpu-carry/tl-ptx.gz   (carry: gpu-carry)
# Output: $OUT/f16acc_summary.txt, $OUT/compare_tensor_f16acc.{json,md}, $OUT/f16acc_sass_counts.txt, $OUT/f16acc_logs.tgz.
source "$(dirname "$0")/setup.sh" "${1:-gpu-carry/tl-ptx.gz}"
export PYTHONUNBUFFERED=1
summary="$OUT/f16acc_summary.txt"
: > "$summary"
logs=/tmp/f16acc_logs
rm -rf "$logs" && mkdir -p "$logs"
D=tests/thread/kernels/mma_dot.tl
T=kernels/matmul_tc.tl
h="--set a_ptr=randn((M,K),dtype=f16,seed=1) --set b_ptr=randn((K,N),dtype=f16,seed=2)"
ht="--set a_ptr=randn((M,K),dtype=f16,seed=1) --set b_ptr=randn((N,K),dtype=f16,seed=2)"
for arch in sm_90 sm_90a; do
  check_case "mma_dot.f16acc.$arch" /tmp/tl-ptx $D --arch $arch --check-stage scalar --set MODE=7 --set M=256 --set N=256 --set K=512 --set BM=64 --set BN=64
  check_case "mma_dot.f16acc.$arch.ragged.w8" /tmp/tl-ptx $D --arch $arch --check-stage scalar --set MODE=7 --set M=200 --set N=136 --set K=300 \
    --set BM=64 --set BN=64 --num-warps 8 --set num_stages=3
  for bt in 0 1; do
    ab=$h; [ $bt = 1 ] && ab=$ht
    for out in f16 f32; do
      check_case "matmul_tc.f16acc.$arch.bt$bt.$out" /tmp/tl-ptx $T --arch $arch --check-stage scalar --set ACC_F16=1 --set B_T=$bt --set M=256 \
        --set N=512 --set K=512 --set BLOCK_M=128 --set BLOCK_N=128 --set BLOCK_K=64 --num-warps 8 --set num_stages=3 $ab \
        --set "c_ptr=zeros((M,N),dtype=$out,output=True)"
    done
    check_case "bits.matmul_tc.f16acc.$arch.bt$bt" /tmp/tl-ptx $T --arch $arch --check-stage thread --atol 0 --rtol 0 --set ACC_F16=1 \
      --set B_T=$bt --set M=256 --set N=256 --set K=320 --set BLOCK_M=128 --set BLOCK_N=128 --set BLOCK_K=32 --num-warps 4 --set num_stages=3 $ab \
      --set "c_ptr=zeros((M,N),dtype=f16,output=True)"
  done
  check_case "matmul_tc.f16acc.$arch.ragged" /tmp/tl-ptx $T --arch $arch --check-stage scalar --set ACC_F16=1 --set M=100 --set N=72 --set K=70 $h \
    --set "c_ptr=zeros((M,N),dtype=f16,output=True)"
done
check_case "mma_dot.f16acc.k4096" /tmp/tl-ptx $D --check-stage scalar --set MODE=7 --set M=128 --set N=128 --set K=4096 --set BM=64 --set BN=64
check_case "bits.mma_dot.f16acc.k4096" /tmp/tl-ptx $D --check-stage thread --atol 0 --rtol 0 --set MODE=7 --set M=128 --set N=128 --set K=4096 \
  --set BM=64 --set BN=64
check_case "bits.mma_dot.f16acc.w8" /tmp/tl-ptx $D --check-stage thread --atol 0 --rtol 0 --set MODE=7 --set M=256 --set N=256 --set K=512 --set BM=64 \
  --set BN=64 --num-warps 8
if command -v compute-sanitizer > /dev/null; then
  check_case "matmul_tc.f16acc.ragged.memcheck" compute-sanitizer --tool memcheck --error-exitcode 9 /tmp/tl-ptx $T --set ACC_F16=1 --set M=100 \
    --set N=72 --set K=70 --set num_stages=3 --runs 1 $h --set "c_ptr=zeros((M,N),dtype=f16,output=True)"
fi
cat "$summary"
timeout 400 python3 bench/gpu/compare.py --tl-ptx /tmp/tl-ptx --only tensor --tensor-cases "${F16ACC_CASES:-f16acc:4096,f16acc:8192}" \
  --out "$OUT/compare_tensor_f16acc.json" --table "$OUT/compare_tensor_f16acc.md" --results-dir /tmp/tl-results > "$logs/compare.txt" 2>&1 ||
  echo "compare.py rc=$?"
tail -5 "$logs/compare.txt"
: > "$OUT/f16acc_sass_counts.txt"
timeout 120 /tmp/tl-ptx $T --no-check --runs 3 --num-warps 8 --set ACC_F16=1 --set M=4096 --set N=4096 --set K=4096 --set BLOCK_M=128 \
  --set BLOCK_N=256 --set BLOCK_K=64 --set num_stages=3 $h --set "c_ptr=zeros((M,N),dtype=f16,output=True)" > "$logs/sass_run.txt" 2>&1
sass_counts "matmul_tc f16 with an f16 accumulator, 128x256x64 w8 s3 (sm_90)" sm_90 "HMMA\.[A-Za-z0-9.]+|LDGSTS[A-Za-z0-9.]*|LDSM[A-Za-z0-9.]*|BAR\.SYNC[A-Z.]*" \
  "$OUT/f16acc_sass_counts.txt" f16acc_matmul_tc
timeout 120 /tmp/tl-ptx $T --arch sm_90a --no-check --runs 3 --num-warps 8 --set ACC_F16=1 --set M=4096 --set N=4096 --set K=4096 \
  --set BLOCK_M=128 --set BLOCK_N=256 --set BLOCK_K=64 --set num_stages=3 $h --set "c_ptr=zeros((M,N),dtype=f16,output=True)" > "$logs/sass_run_90a.txt" 2>&1
sass_counts "matmul_tc f16 with an f16 accumulator, 128x256x64 w8 s3 (sm_90a)" sm_90a \
  "HGMMA\.[A-Za-z0-9.]+|LDGSTS[A-Za-z0-9.]*|WARPGROUP\.[A-Z]+|BAR\.SYNC[A-Z.]*" "$OUT/f16acc_sass_counts.txt" f16acc_matmul_tc_90a
cat "$OUT/f16acc_sass_counts.txt"
tar czf "$OUT/f16acc_logs.tgz" -C /tmp f16acc_logs
