#!/usr/bin/env bash
# Issue 13 on the GPU: load rings (cp.async into a ring of shared-memory slots, num_stages - 1
# iterations ahead; stages/thread/LowerRing.cpp), on mma.sync (sm_90) and wgmma (sm_90a, one
# group left in flight).
#   0. sim/gpus/wgmma_probe.cu (the tensor core's wgmma rate and latency -> $OUT/h200_wgmma_probe.json);
#   1. correctness, each checked by tl-ptx against tl-scalar: tests/thread/kernels/ring_dot.tl in
#      f16 and bf16 at num_stages 2, 3 and 4, ragged (masked groups copy zeros), one iteration with
#      the ring 3 ahead, k-major b, 8 warps; kernels/matmul_tc.tl bf16 at 1024^3 against tl-block;
#      t06 attention at num_stages 3 (k and v by rings); one ragged case under compute-sanitizer's
#      memcheck and one under its racecheck;
#   2. compare.py's tensor rows ($RING_CASES, default bf16:4096): cuBLAS, Triton and tilelab's
#      configurations (rings at num_stages 3 and 4) timed by do_bench in one run;
#   3. the SASS of matmul_tc 128 x 256 x 64, 8 warps, num_stages 3, sm_90a: HGMMA, LDGSTS, warpgroup
#      and barrier counts, and ptxas's warnings (a wgmma it serializes says so).
#   device run: bash bench/gpu/ring_h200.sh gpu-carry/tl-ptx.gz   (carry: gpu-carry)
# Output: $OUT/ring_summary.txt, $OUT/ring_bench.txt, $OUT/ring_sass_counts.txt, $OUT/ring_logs.tgz.
source "$(dirname "$0")/setup.sh" "${1:-gpu-carry/tl-ptx.gz}"
export PYTHONUNBUFFERED=1
summary="$OUT/ring_summary.txt"
: > "$summary"
logs=/tmp/ring_logs
rm -rf "$logs" && mkdir -p "$logs"
wgmma_probe
R=tests/thread/kernels/ring_dot.tl
for arch in sm_90 sm_90a; do
  for d in f16 bf16; do
    ab="--set a_ptr=randn((M,K),dtype=$d,seed=21) --set b_ptr=randn((K,N),dtype=$d,seed=22)"
    abt="--set a_ptr=randn((M,K),dtype=$d,seed=21) --set b_ptr=randn((N,K),dtype=$d,seed=22)"
    for s in 2 3 4; do
      check_case "ring.$arch.$d.s$s" /tmp/tl-ptx $R --arch $arch --check-stage scalar --set num_stages=$s $ab
    done
    check_case "ring.$arch.$d.ragged" /tmp/tl-ptx $R --arch $arch --check-stage scalar --set M=100 --set N=90 --set K=70 --set num_stages=3 $ab
    check_case "ring.$arch.$d.short" /tmp/tl-ptx $R --arch $arch --check-stage scalar --set K=32 --set num_stages=4 $ab
    check_case "ring.$arch.$d.bt" /tmp/tl-ptx $R --arch $arch --check-stage scalar --set BT=1 --set K=160 --set BK=64 --set num_stages=3 $abt
    check_case "ring.$arch.$d.w8" /tmp/tl-ptx $R --arch $arch --check-stage scalar --set M=256 --set N=256 --set K=320 --set BM=128 \
      --set BN=128 --set BK=64 --set num_stages=3 --num-warps 8 $ab
  done
  check_case "matmul_tc.$arch.bf16.1024.s3" /tmp/tl-ptx kernels/matmul_tc.tl --arch $arch --check-stage block --set M=1024 --set N=1024 \
    --set K=1024 --set BLOCK_M=128 --set BLOCK_N=128 --set BLOCK_K=64 --num-warps 8 --set num_stages=3 \
    --set "a_ptr=randn((M, K), dtype=bf16, seed=1)" --set "b_ptr=randn((K, N), dtype=bf16, seed=2)" \
    --set "c_ptr=zeros((M, N), dtype=bf16, output=True)"
  bf="--set Q=randn((Z,H,N_CTX,HEAD_DIM),dtype=bf16,seed=1) --set K=randn((Z,H,N_CTX,HEAD_DIM),dtype=bf16,seed=2)"
  bf="$bf --set V=randn((Z,H,N_CTX,HEAD_DIM),dtype=bf16,seed=3) --set Out=zeros((Z,H,N_CTX,HEAD_DIM),dtype=bf16,output=True)"
  check_case "t06.$arch.d64.s3" /tmp/tl-ptx kernels/triton/t06_attention_fwd.tl --arch $arch --check-stage scalar --set Z=1 --set H=2 \
    --set N_CTX=256 --set HEAD_DIM=64 --set BLOCK_M=128 --set BLOCK_N=64 --num-warps 8 --set STAGE=1 --set sm_scale=0.125 --set num_stages=3 $bf
done
if command -v compute-sanitizer > /dev/null; then
  ab="--set a_ptr=randn((M,K),dtype=bf16,seed=21) --set b_ptr=randn((K,N),dtype=bf16,seed=22)"
  for tool in memcheck racecheck; do
    check_case "ring.sm_90a.ragged.$tool" compute-sanitizer --tool $tool --error-exitcode 9 /tmp/tl-ptx $R --arch sm_90a --set M=100 \
      --set N=90 --set K=70 --set num_stages=3 --runs 1 $ab
  done
fi
cat "$summary"
timeout 420 python3 bench/gpu/compare.py --tl-ptx /tmp/tl-ptx --only tensor --tensor-cases "${RING_CASES:-bf16:4096}" \
  --out "$OUT/compare_tensor.json" --table "$OUT/compare_tensor.md" --results-dir /tmp/tl-results || echo "compare.py rc=$?"
timeout 120 /tmp/tl-ptx kernels/matmul_tc.tl --arch sm_90a --no-check --runs 5 --num-warps 8 --set M=4096 --set N=4096 --set K=4096 \
  --set BLOCK_M=128 --set BLOCK_N=256 --set BLOCK_K=64 --set num_stages=3 --set "a_ptr=randn((M, K), dtype=bf16, seed=1)" \
  --set "b_ptr=randn((K, N), dtype=bf16, seed=2)" --set "c_ptr=zeros((M, N), dtype=bf16, output=True)" > "$logs/sass_run.txt" 2>&1
if command -v cuobjdump > /dev/null && [ -f out/ptx/matmul_tc.ptx ]; then
  cp out/ptx/matmul_tc.ptx "$logs/ring_matmul_tc.ptx"
  ptxas -arch=sm_90a -v out/ptx/matmul_tc.ptx -o /tmp/ring.cubin > "$logs/ring_ptxas.txt" 2>&1
  cuobjdump -sass /tmp/ring.cubin | grep -oE "HGMMA\.[A-Za-z0-9.]+|LDGSTS[A-Za-z0-9.]*|WARPGROUP\.[A-Z]+|DEPBAR[A-Z.]*|BAR\.SYNC[A-Z.]*" |
    sort | uniq -c > "$OUT/ring_sass_counts.txt"
  cat "$logs/ring_ptxas.txt" >> "$OUT/ring_sass_counts.txt"
  cat "$OUT/ring_sass_counts.txt"
fi
tar czf "$OUT/ring_logs.tgz" -C /tmp ring_logs
