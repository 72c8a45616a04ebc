#!/usr/bin/env bash
# Issue 13 on the GPU: tf32 and fp8 (e4m3, e5m2) dots as warpgroup MMAs (wgmma m64nNk8.tf32 and
# m64nNk32.e4m3 / .e5m2, both operands K-major; stages/thread/LowerWgmma.cpp), fed by cp.async
# load rings where the loads run along k (stages/thread/LowerRing.cpp).
#   0. sim/gpus/wgmma_probe.cu: cycles per 16 x 8 x 16-byte-k piece and latency for bf16, tf32 and
#      e4m3 (-> $OUT/h200_wgmma_probe.json);
#   1. correctness, each checked by tl-ptx against tl-scalar at --arch sm_90a (and "bits.*": against
#      tl-thread, bit for bit, at sm_90a and sm_90):
#      tests/thread/kernels/ring_dot.tl with f32, f8e4m3 and f8e5m2 buffers (B [K][N] and [N][K],
#      num_stages 1-4, ragged, 8 warps), tests/thread/kernels/mma_dot.tl MODE 2-4 (converted in the
#      kernel, register-staged), kernels/matmul_tc.tl f32 / f8e4m3 at B_T 0 and 1; the tf32 cases
#      once more at a tolerance of 1e-3, which a tensor core that rounded its f32 inputs (instead of
#      ignoring their low 13 mantissa bits, as tl-scalar models) would fail by ~1e-2; mma.sync
#      (sm_90) tf32 at the same tight tolerance; compute-sanitizer memcheck and racecheck;
#   2. compare.py's tensor rows ($WG_CASES, default f32:4096,f8e4m3:4096,f8e4m3:8192): cuBLAS TF32 / _scaled_mm,
#      Triton and tilelab's configurations in one run;
#   3. the SASS of the fastest-looking configurations: HGMMA shapes, LDGSTS, warpgroup counts and
#      ptxas's warnings.
#   device run: bash bench/gpu/wgmma_tf32_fp8_h200.sh gpu-carry/tl-ptx.gz   (carry: gpu-carry)
#   WG_PARTS=checks or WG_PARTS=bench runs 0-1 or 2-3 only (each fits one 10-minute device call).
# Output: $OUT/wg_summary.txt, $OUT/compare_tensor.{json,md}, $OUT/wg_sass_counts.txt, $OUT/wg_logs.tgz.
source "$(dirname "$0")/setup.sh" "${1:-gpu-carry/tl-ptx.gz}"
export PYTHONUNBUFFERED=1
summary="$OUT/wg_summary.txt"
: > "$summary"
logs=/tmp/wg_logs
rm -rf "$logs" && mkdir -p "$logs"
parts=${WG_PARTS:-checks,bench}
R=tests/thread/kernels/ring_dot.tl
if [[ $parts == *checks* ]]; then
wgmma_probe
for d in f32 f8e4m3 f8e5m2; do
  bk=32; [ $d != f32 ] && bk=128
  ab="--set a_ptr=randn((M,K),dtype=$d,seed=21) --set b_ptr=randn((K,N),dtype=$d,seed=22)"
  abt="--set a_ptr=randn((M,K),dtype=$d,seed=21) --set b_ptr=randn((N,K),dtype=$d,seed=22)"
  for s in 1 2 3 4; do
    check_case "ring.$d.bt.s$s" /tmp/tl-ptx $R --arch sm_90a --check-stage scalar --set BT=1 --set K=320 --set BK=$bk --set num_stages=$s $abt
  done
  check_case "ring.$d.kn.s3" /tmp/tl-ptx $R --arch sm_90a --check-stage scalar --set K=320 --set BK=$bk --set num_stages=3 $ab
  check_case "ring.$d.bt.ragged" /tmp/tl-ptx $R --arch sm_90a --check-stage scalar --set BT=1 --set M=100 --set N=90 --set K=70 --set num_stages=3 $abt
  check_case "ring.$d.kn.ragged" /tmp/tl-ptx $R --arch sm_90a --check-stage scalar --set M=100 --set N=90 --set K=70 --set num_stages=3 $ab
  check_case "ring.$d.bt.w8" /tmp/tl-ptx $R --arch sm_90a --check-stage scalar --set BT=1 --set M=256 --set N=256 --set K=640 --set BM=128 \
    --set BN=256 --set BK=$bk --set num_stages=3 --num-warps 8 $abt
  for bt in 0 1; do
    shape="(K, N)"; [ $bt = 1 ] && shape="(N, K)"
    check_case "matmul_tc.$d.bt$bt" /tmp/tl-ptx kernels/matmul_tc.tl --arch sm_90a --check-stage scalar --set M=256 --set N=512 --set K=512 \
      --set BLOCK_M=128 --set BLOCK_N=256 --set BLOCK_K=$bk --set B_T=$bt --num-warps 8 --set num_stages=3 \
      --set "a_ptr=randn((M, K), dtype=$d, seed=1)" --set "b_ptr=randn($shape, dtype=$d, seed=2)"
  done
done
# The GPU's bits against tl-thread's (--check-stage thread --atol 0 --rtol 0): the executor adds
# up as the H200's tensor cores do (sim/TensorCoreSum.h), fp8 keeping 13 bits.
for d in f8e4m3 f8e5m2 bf16 f32; do
  bk=128; [ $d = bf16 ] && bk=64; [ $d = f32 ] && bk=32
  abt="--set a_ptr=randn((M,K),dtype=$d,seed=21) --set b_ptr=randn((N,K),dtype=$d,seed=22)"
  for arch in sm_90a sm_90; do
    check_case "bits.$d.$arch.w8" /tmp/tl-ptx $R --arch $arch --check-stage thread --atol 0 --rtol 0 --set BT=1 --set M=256 --set N=256 \
      --set K=640 --set BM=128 --set BN=256 --set BK=$bk --set num_stages=3 --num-warps 8 $abt
  done
done
# max_num_imprecise_acc: f32 adds every 128 / 32 k; bit for bit against tl-thread, and the
# error against tl-scalar (logged) shrinks.
for v in 0 128 32; do
  check_case "imprecise.$v.bits" /tmp/tl-ptx tests/thread/kernels/fp8_imprecise_dot.tl --arch sm_90a --check-stage thread --atol 0 --rtol 0 \
    --set IMPRECISE=$v --set M=256 --set N=256 --set K=2048
  check_case "imprecise.$v.scalar" /tmp/tl-ptx tests/thread/kernels/fp8_imprecise_dot.tl --arch sm_90a --check-stage scalar \
    --set IMPRECISE=$v --set M=256 --set N=256 --set K=2048
done
ab="--set a_ptr=randn((M,K),dtype=f32,seed=21) --set b_ptr=randn((N,K),dtype=f32,seed=22)"
for arch in sm_90 sm_90a; do
  check_case "tight.tf32.$arch.ring" /tmp/tl-ptx $R --arch $arch --check-stage scalar --atol 1e-3 --rtol 1e-3 --set BT=1 --set K=640 --set num_stages=3 $ab
  check_case "tight.tf32.$arch.mma_dot" /tmp/tl-ptx tests/thread/kernels/mma_dot.tl --arch $arch --check-stage scalar --atol 1e-3 --rtol 1e-3 \
    --set MODE=4 --set M=128 --set N=128 --set K=512 --set BM=64 --set BN=64 --set BK=32
done
for m in 2 3 4; do
  for bt in 0 1; do
    check_case "mma_dot.m$m.bt$bt" /tmp/tl-ptx tests/thread/kernels/mma_dot.tl --arch sm_90a --check-stage scalar --set MODE=$m --set BT=$bt \
      --set M=128 --set N=128 --set K=256 --set BM=64 --set BN=64 --set BK=64
  done
done
if command -v compute-sanitizer > /dev/null; then
  for tool in memcheck racecheck; do
    check_case "ring.tf32.ragged.$tool" compute-sanitizer --tool $tool --error-exitcode 9 /tmp/tl-ptx $R --arch sm_90a --set BT=1 --set M=100 \
      --set N=90 --set K=70 --set num_stages=3 --runs 1 $ab
  done
fi
cat "$summary"
fi
if [[ $parts == *bench* ]]; then
timeout 480 python3 bench/gpu/compare.py --tl-ptx /tmp/tl-ptx --only tensor --tensor-cases "${WG_CASES:-f32:4096,f8e4m3:4096,f8e4m3:8192}" \
  --out "$OUT/compare_tensor.json" --table "$OUT/compare_tensor.md" --results-dir /tmp/tl-results || echo "compare.py rc=$?"
: > "$OUT/wg_sass_counts.txt"
for cfg in "f32 32" "f8e4m3 128"; do
  set -- $cfg
  out=f32; [ $1 != f32 ] && out=bf16
  timeout 120 /tmp/tl-ptx kernels/matmul_tc.tl --arch sm_90a --no-check --runs 3 --num-warps 8 --set M=4096 --set N=4096 --set K=4096 \
    --set BLOCK_M=128 --set BLOCK_N=256 --set BLOCK_K=$2 --set B_T=1 --set num_stages=3 --set "a_ptr=randn((M, K), dtype=$1, seed=1)" \
    --set "b_ptr=randn((N, K), dtype=$1, seed=2)" --set "c_ptr=zeros((M, N), dtype=$out, output=True)" > "$logs/sass_run_$1.txt" 2>&1
  sass_counts "matmul_tc $1 128x256x$2 w8 s3 B_T=1" sm_90a \
    "HGMMA\.[A-Za-z0-9.]+|QGMMA\.[A-Za-z0-9.]+|LDGSTS[A-Za-z0-9.]*|WARPGROUP\.[A-Z]+|DEPBAR[A-Z.]*|BAR\.SYNC[A-Z.]*" \
    "$OUT/wg_sass_counts.txt" "wg_matmul_tc_$1"
done
cat "$OUT/wg_sass_counts.txt"
fi
tar czf "$OUT/wg_logs.tgz" -C /tmp wg_logs
