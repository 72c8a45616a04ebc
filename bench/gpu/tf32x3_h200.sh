#!/usr/bin/env bash
# Issue 13 on the GPU: input_precision="tf32x3" (Triton's 3xTF32) as three tf32 mma.sync per tile
# (stages/thread/LowerDot.cpp: x = hi + lo, lo = x - cvt_tf32(x); lo_a b, a lo_b, a b).
#   1. correctness, by tl-ptx: tests/thread/kernels/mma_dot.tl MODE 6 and kernels/matmul_tc.tl
#      TF32X3=1 against tl-scalar (IEEE fp32) at the default tolerance (2^-14 of the largest
#      output: lib/runtime/Compare.cpp) and the log's max_abs_err; sm_90 and sm_90a (where the dot stays on mma.sync), 4 and 8 warps, ragged sizes, load
#      rings, B both ways; "bits.*": the GPU against tl-thread bit for bit (--check-stage thread
#      --atol 0 --rtol 0); compute-sanitizer memcheck;
#   2. compare.py's f32x3 rows ($X3_CASES, default f32x3:4096,f32x3:8192): cuBLAS fp32 (TF32 off),
#      Triton's tf32x3 and tilelab's configurations in one run; the SASS's HMMA count.
#   device run: bash bench/gpu/tf32x3_h200.sh gpu-carry/tl-ptx.gz   (carry: gpu-carry)
# Output: $OUT/x3_summary.txt, $OUT/compare_tensor_tf32x3.{json,md}, $OUT/x3_sass_counts.txt, $OUT/x3_logs.tgz.
source "$(dirname "$0")/setup.sh" "${1:-gpu-carry/tl-ptx.gz}"
export PYTHONUNBUFFERED=1
summary="$OUT/x3_summary.txt"
: > "$summary"
logs=/tmp/x3_logs
rm -rf "$logs" && mkdir -p "$logs"
D=tests/thread/kernels/mma_dot.tl
T=kernels/matmul_tc.tl
f32="--set a_ptr=randn((M,K),dtype=f32,seed=1) --set b_ptr=randn((K,N),dtype=f32,seed=2) --set c_ptr=zeros((M,N),dtype=f32,output=True)"
f32t="--set a_ptr=randn((M,K),dtype=f32,seed=1) --set b_ptr=randn((N,K),dtype=f32,seed=2) --set c_ptr=zeros((M,N),dtype=f32,output=True)"
for arch in sm_90 sm_90a; do
  check_case "mma_dot.x3.$arch" /tmp/tl-ptx $D --arch $arch --check-stage scalar --set MODE=6 --set M=256 --set N=256 --set K=512 --set BM=64 --set BN=64
  check_case "mma_dot.x3.$arch.ragged.w8" /tmp/tl-ptx $D --arch $arch --check-stage scalar --set MODE=6 --set M=200 --set N=136 --set K=300 \
    --set BM=64 --set BN=64 --num-warps 8 --set num_stages=3
  for bt in 0 1; do
    ab=$f32; [ $bt = 1 ] && ab=$f32t
    check_case "matmul_tc.x3.$arch.bt$bt.w8.s3" /tmp/tl-ptx $T --arch $arch --check-stage scalar --set TF32X3=1 --set B_T=$bt --set M=256 \
      --set N=512 --set K=512 --set BLOCK_M=128 --set BLOCK_N=128 --set BLOCK_K=32 --num-warps 8 --set num_stages=3 $ab
    check_case "bits.matmul_tc.x3.$arch.bt$bt" /tmp/tl-ptx $T --arch $arch --check-stage thread --atol 0 --rtol 0 --set TF32X3=1 --set B_T=$bt \
      --set M=256 --set N=256 --set K=320 --set BLOCK_M=128 --set BLOCK_N=128 --set BLOCK_K=32 --num-warps 4 --set num_stages=3 $ab
  done
  check_case "matmul_tc.x3.$arch.ragged" /tmp/tl-ptx $T --arch $arch --check-stage scalar --set TF32X3=1 --set M=100 --set N=72 --set K=70 $f32
done
check_case "mma_dot.x3.k4096" /tmp/tl-ptx $D --check-stage scalar --set MODE=6 --set M=128 --set N=128 --set K=4096 --set BM=64 --set BN=64
check_case "bits.mma_dot.x3.w8" /tmp/tl-ptx $D --check-stage thread --atol 0 --rtol 0 --set MODE=6 --set M=256 --set N=256 --set K=512 --set BM=64 \
  --set BN=64 --num-warps 8
if command -v compute-sanitizer > /dev/null; then
  check_case "matmul_tc.x3.ragged.memcheck" compute-sanitizer --tool memcheck --error-exitcode 9 /tmp/tl-ptx $T --set TF32X3=1 --set M=100 \
    --set N=72 --set K=70 --set num_stages=3 --runs 1 $f32
fi
cat "$summary"
timeout 420 python3 bench/gpu/compare.py --tl-ptx /tmp/tl-ptx --only tensor --tensor-cases "${X3_CASES:-f32x3:4096,f32x3:8192}" \
  --out "$OUT/compare_tensor_tf32x3.json" --table "$OUT/compare_tensor_tf32x3.md" --results-dir /tmp/tl-results || echo "compare.py rc=$?"
: > "$OUT/x3_sass_counts.txt"
timeout 120 /tmp/tl-ptx $T --no-check --runs 3 --num-warps 8 --set TF32X3=1 --set M=4096 --set N=4096 --set K=4096 --set BLOCK_M=128 \
  --set BLOCK_N=128 --set BLOCK_K=32 --set num_stages=3 $f32 > "$logs/sass_run.txt" 2>&1
sass_counts "matmul_tc f32 tf32x3 128x128x32 w8 s3 (sm_90)" sm_90 "HMMA\.[A-Za-z0-9.]+|LDGSTS[A-Za-z0-9.]*|LDS[A-Za-z0-9.]*|BAR\.SYNC[A-Z.]*|LOP3\.LUT|FADD" \
  "$OUT/x3_sass_counts.txt" x3_matmul_tc
cat "$OUT/x3_sass_counts.txt"
tar czf "$OUT/x3_logs.tgz" -C /tmp x3_logs
