#!/usr/bin/env bash
# Issue 13 on the GPU, part 2: the tensor-core rows of bench/gpu/compare.py (kernels/matmul_tc.tl
# against cuBLAS and the same algorithm in Triton, bf16 / f16 at 4096^3 and 8192^3, tf32 and
# fp8 e4m3 at 4096^3), and what the mma probe compiles to (SASS).
#   device run: bash bench/gpu/tensor_h200.sh gpu-carry/tl-ptx.gz   (carry: gpu-carry)
source "$(dirname "$0")/setup.sh" "${1:-gpu-carry/tl-ptx.gz}"
export PYTHONUNBUFFERED=1
if command -v nvcc > /dev/null; then
  nvcc -O2 -arch=sm_90 -o /tmp/mma_probe sim/gpus/mma_probe.cu &&
    cuobjdump -sass /tmp/mma_probe | grep -oE "(HMMA|QMMA|IMMA|HGMMA|F2FP|I2F)[.A-Z0-9_]*" | sort | uniq -c > "$OUT/mma_probe_sass.txt"
fi
python3 bench/gpu/compare.py --tl-ptx /tmp/tl-ptx --only tensor --out "$OUT/compare_tensor.json" \
  --table "$OUT/compare_tensor.md" --results-dir /tmp/tl-results
