#!/usr/bin/env bash
# What one launch adds to a kernel's time under tl-ptx's timing (CUDA events around the launch,
# queued behind the L2-flush memset): one-block launches timed on the GPU machine, 300 runs,
# three times each. sim/gpus/h200.json's launchOverheadUs is these medians less the model's SM
# time for the same launches (`tl-sim KERNEL --set ... --no-unfused`, the "SM" figure), here:
# sim/gpus/measured/h200_launch_overhead.txt.
#   device run: bash bench/gpu/launch_overhead.sh gpu-carry/tl-ptx.gz   (carry: gpu-carry)
set -uo pipefail
BIN=${1:-gpu-carry/tl-ptx.gz}
gunzip -c "$BIN" > /tmp/tl-ptx && chmod +x /tmp/tl-ptx
export TL_CACHE_DIR=/tmp/tlcache
for args in "kernels/vector_add.tl --set N=128 --set BLOCK=128" "kernels/vector_add.tl --set N=4096 --set BLOCK=128" \
            "kernels/softmax.tl --set M=1 --set N=128" "kernels/row_sum.tl" "kernels/softmax.tl"; do
  for rep in 1 2 3; do
    echo -n "$args: "
    /tmp/tl-ptx $args --no-check --runs 300 2>&1 | grep -E "time:"
  done
done
