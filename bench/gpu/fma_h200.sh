#!/usr/bin/env bash
# The FMA path of dot (fp32 IEEE) on the H200 after its distinct-load lowering: the GPU checks of
# the ieee mode of tests/thread/kernels/mma_dot.tl and of kernels/matmul.tl against tl-scalar, a
# sweep of matmul's tiles at 4096^3, and compare.py's fp32 matmul row (cuBLAS, Triton, tilelab
# in one run).
#   device run: bash bench/gpu/fma_h200.sh gpu-carry/tl-ptx.gz   (carry: gpu-carry)
# Output: $OUT/fma_sweep.txt, $OUT/compare_matmul.{md,json}.
source "$(dirname "$0")/setup.sh" "${1:-gpu-carry/tl-ptx.gz}"
for m in 5; do for w in 1 4 8; do /tmp/tl-ptx tests/thread/kernels/mma_dot.tl --check-stage scalar --set MODE=$m --num-warps $w 2>&1 | grep -E "PASS|FAIL|error" | head -2; done; done
/tmp/tl-ptx kernels/matmul.tl --check-stage scalar 2>&1 | grep -E "PASS|FAIL|error" | head -2
/tmp/tl-ptx tests/thread/kernels/mma_dot.tl --check-stage scalar --set MODE=5 --set M=50 --set N=40 --set K=40 2>&1 | grep -E "PASS|FAIL|error" | head -2
for cfg in "128 64 16 4" "128 128 16 8" "128 64 32 4" "64 64 16 4"; do set -- $cfg
  /tmp/tl-ptx kernels/matmul.tl --no-check --runs 20 --num-warps $4 --set M=4096 --set N=4096 --set K=4096 --set BLOCK_M=$1 --set BLOCK_N=$2 --set BLOCK_K=$3 > /tmp/mm.txt 2>&1
  us=$(grep -oE "time: median [0-9.]+ us" /tmp/mm.txt | grep -oE "[0-9.]+" | head -1)
  echo "fp32 FMA $cfg: median $us us $(python3 -c "print(f'{2*4096**3/($us*1e-6)/1e12:.1f} TFLOP/s')") $(grep ptxas: /tmp/mm.txt | head -1)"
done | tee $OUT/fma_sweep.txt
python3 bench/gpu/compare.py --tl-ptx /tmp/tl-ptx --only matmul --out $OUT/compare_matmul.json --table $OUT/compare_matmul.md --results-dir /tmp/tlr 2>&1 | tail -4
