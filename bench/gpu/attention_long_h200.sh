#!/usr/bin/env bash
# Issue 13: the attention rows at N = 16384 (or $ATTN_N), which compare.py now feeds tilelab from
# .npy files of the tensors Triton and SDPA are timed on (tl-ptx --input; compare.py's
# write_bf16_npy), instead of tl-ptx's host-side randn fill.
#   1. the file path checked: t06 at Z=1 H=2 N=256, head dim 64 and 128, causal and not, q / k / v
#      from such files, tl-ptx --arch sm_90a against tl-scalar;
#   2. ATTN_N=${ATTN_N:-16384} python3 bench/gpu/compare.py --only attention.
#   device run: bash bench/gpu/attention_long_h200.sh gpu-carry/tl-ptx.gz   (carry: gpu-carry)
# Output: $OUT/attn_long_summary.txt, $OUT/compare_attention_long.{json,md}, $OUT/attn_long_logs.tgz.
source "$(dirname "$0")/setup.sh" "${1:-gpu-carry/tl-ptx.gz}"
export PYTHONUNBUFFERED=1
summary="$OUT/attn_long_summary.txt"
: > "$summary"
logs=/tmp/attn_long_logs
rm -rf "$logs" && mkdir -p "$logs" /tmp/attn_npy
for d in 64 128; do
  python3 -c "
import sys, torch
sys.argv = ['compare.py']
sys.path.insert(0, 'bench/gpu')
from compare import write_bf16_npy
torch.manual_seed($d)
for name in 'QKV':
    write_bf16_npy(f'/tmp/attn_npy/{name}$d.npy', torch.randn(1, 2, 256, $d, dtype=torch.bfloat16))
"
  for stage in 1 3; do
    check_case "npy.d$d.stage$stage" /tmp/tl-ptx kernels/triton/t06_attention_fwd.tl --arch sm_90a --check-stage scalar --num-warps 8 \
      --set Z=1 --set H=2 --set N_CTX=256 --set HEAD_DIM=$d --set BLOCK_M=128 --set BLOCK_N=64 --set STAGE=$stage --set num_stages=2 \
      --set sm_scale=0.125 --input Q=/tmp/attn_npy/Q$d.npy --input K=/tmp/attn_npy/K$d.npy --input V=/tmp/attn_npy/V$d.npy \
      --set "Out=zeros((Z, H, N_CTX, HEAD_DIM), dtype=bf16, output=True)"
  done
done
cat "$summary"
ATTN_N=${ATTN_N:-16384} timeout 540 python3 bench/gpu/compare.py --tl-ptx /tmp/tl-ptx --only attention \
  --out "$OUT/compare_attention_long.json" --table "$OUT/compare_attention_long.md" --results-dir /tmp/tl-results > "$logs/compare.txt" 2>&1 ||
  echo "compare.py rc=$?"
tail -20 "$logs/compare.txt"
tar czf "$OUT/attn_long_logs.tgz" -C /tmp attn_long_logs
