#!/usr/bin/env bash
# f32 -> f16 / bf16 conversions of register pairs (stages/ptx/CodegenOps.cpp fromF32: one
# cvt.rn.{f16x2,bf16x2}.f32 per two registers, the high operand first) checked on the GPU: kernels
# whose 16-bit outputs come from f32 registers, each checked by tl-ptx against tl-scalar.
#   - kernels/matmul_tc.tl, f16 and bf16 in and out, on mma.sync (sm_90) and wgmma (sm_90a);
#   - kernels/softmax.tl with f16 and bf16 rows (computed in f32, stored in the input's dtype);
#   - t06 attention forward with f16 Q, K, V and Out on sm_90a.
#   device run: bash bench/gpu/half_out_h200.sh gpu-carry/tl-ptx.gz   (carry: gpu-carry)
# Output: $OUT/half_out_summary.txt.
source "$(dirname "$0")/setup.sh" "${1:-gpu-carry/tl-ptx.gz}"
summary="$OUT/half_out_summary.txt"
: > "$summary"
logs=/tmp/half_logs
rm -rf "$logs" && mkdir -p "$logs"
for d in f16 bf16; do
  for arch in sm_90 sm_90a; do
    check_case "matmul_tc.$arch.$d" /tmp/tl-ptx kernels/matmul_tc.tl --arch $arch --check-stage scalar --num-warps 8 \
      --set M=256 --set N=256 --set K=192 --set BLOCK_M=128 --set BLOCK_N=128 --set BLOCK_K=64 --set num_stages=3 \
      --set "a_ptr=randn((M, K), dtype=$d, seed=1)" --set "b_ptr=randn((K, N), dtype=$d, seed=2)" \
      --set "c_ptr=zeros((M, N), dtype=$d, output=True)"
  done
  check_case "softmax.$d" /tmp/tl-ptx kernels/softmax.tl --check-stage scalar --set "x_ptr=randn((M, N), dtype=$d, seed=3)" \
    --set "out_ptr=zeros((M, N), dtype=$d, output=True)"
  a="--set Q=randn((Z,H,N_CTX,HEAD_DIM),dtype=$d,seed=1) --set K=randn((Z,H,N_CTX,HEAD_DIM),dtype=$d,seed=2)"
  a="$a --set V=randn((Z,H,N_CTX,HEAD_DIM),dtype=$d,seed=3) --set Out=zeros((Z,H,N_CTX,HEAD_DIM),dtype=$d,output=True)"
  check_case "t06.sm_90a.$d" /tmp/tl-ptx kernels/triton/t06_attention_fwd.tl --arch sm_90a --check-stage scalar --set Z=1 \
    --set H=2 --set N_CTX=256 --set HEAD_DIM=64 --set BLOCK_M=128 --set BLOCK_N=64 --num-warps 8 --set STAGE=3 \
    --set sm_scale=0.125 --set num_stages=3 $a
done
cat "$summary"
