#!/usr/bin/env bash
# Issue 13 on the GPU: fused attention forward. kernels/triton/t06_attention_fwd.tl
# (FlashAttention-2, Triton's tutorial 06 with plain pointers) in bf16:
#   1. checked by tl-ptx against tl-scalar at small sizes: head dim 64 and 128, causal (STAGE=3)
#      and not (STAGE=1), num_stages 1-3, the benchmark's tile configurations, for each arch of
#      ATTN_ARCHS (default "sm_90 sm_90a": mma.sync, and both dots as wgmma, p v with a from
#      registers);
#   2. compare.py's attention rows: Z = 4, H = 32, N = 1024 and 4096 (N = 16384:
#      bench/gpu/attention_long_h200.sh, a call of its own), against the same algorithm in Triton and torch SDPA, in one run.
#   device run: bash bench/gpu/attention_h200.sh gpu-carry/tl-ptx.gz   (carry: gpu-carry)
# Output: $OUT/attention_checks.txt, $OUT/compare_attention.{md,json}.
source "$(dirname "$0")/setup.sh" "${1:-gpu-carry/tl-ptx.gz}"
export PYTHONUNBUFFERED=1
checks="$OUT/attention_checks.txt"
: > "$checks"
K=kernels/triton/t06_attention_fwd.tl
bf="--set Q=randn((Z,H,N_CTX,HEAD_DIM),dtype=bf16,seed=1) --set K=randn((Z,H,N_CTX,HEAD_DIM),dtype=bf16,seed=2)"
bf="$bf --set V=randn((Z,H,N_CTX,HEAD_DIM),dtype=bf16,seed=3) --set Out=zeros((Z,H,N_CTX,HEAD_DIM),dtype=bf16,output=True)"
for arch in ${ATTN_ARCHS:-sm_90 sm_90a}; do
  for d in 64 128; do
    for stage in 1 3; do
      for cfg in "128 64 8" "64 64 4"; do
        set -- $cfg
        for st in 1 2 3; do
          name="$arch.d$d.stage$stage.$1x$2.w$3.s$st"
          timeout 200 /tmp/tl-ptx $K --arch $arch --check-stage scalar --set Z=1 --set H=2 --set N_CTX=256 --set HEAD_DIM=$d \
            --set BLOCK_M=$1 --set BLOCK_N=$2 --num-warps $3 --set STAGE=$stage --set num_stages=$st --set sm_scale=0.125 \
            $bf > /tmp/attn_$name.txt 2>&1
          printf '%-36s rc=%-3s %s\n' "$name" "$?" "$(grep -E "PASS|FAIL|error:|ptxas:" /tmp/attn_$name.txt | head -4 | tr '\n' ' ')" >> "$checks"
        done
      done
    done
  done
done
cat "$checks"
timeout 400 python3 bench/gpu/compare.py --tl-ptx /tmp/tl-ptx --only attention --out "$OUT/compare_attention.json" \
  --table "$OUT/compare_attention.md" --results-dir /tmp/tl-results 2>&1 | tail -20
