#!/usr/bin/env bash
# Issue 13: why matmul_tc stops at ~0.35x cuBLAS: Nsight Compute's warp-state (stall reasons),
# scheduler, shared-memory and speed-of-light sections for the best configurations of
# bench/results/gpu/pipeline_sweep_h200.txt (bf16 4096^3), and the SASS of the main loop.
#   device run: bash bench/gpu/mma_profile_h200.sh gpu-carry/tl-ptx.gz   (carry: gpu-carry)
#   wgmma:      ARCH=sm_90a PROFILE_CFGS="256 128 64 8 2" bash bench/gpu/mma_profile_h200.sh gpu-carry/tl-ptx.gz
# Output: $OUT/mma_ncu_<config>.txt, $OUT/mma_sass_<config>.txt (<config> ends in _sm_90a for wgmma).
source "$(dirname "$0")/setup.sh" "${1:-gpu-carry/tl-ptx.gz}"
ARCH=${ARCH:-sm_90}
IFS=, read -ra cfgs <<< "${PROFILE_CFGS:-128 128 32 4 2,128 128 64 8 2}"
for cfg in "${cfgs[@]}"; do
  set -- $cfg
  tag="${1}x${2}x${3}_w${4}_s${5}$([ "$ARCH" = sm_90 ] || echo "_$ARCH")"
  args=(kernels/matmul_tc.tl --arch "$ARCH" --no-check --runs 1 --num-warps "$4" --set M=4096 --set N=4096 --set K=4096
        --set BLOCK_M="$1" --set BLOCK_N="$2" --set BLOCK_K="$3" --set num_stages="$5"
        --set "a_ptr=randn((M, K), dtype=bf16, seed=1)" --set "b_ptr=randn((K, N), dtype=bf16, seed=2)"
        --set "c_ptr=zeros((M, N), dtype=bf16, output=True)")
  rm -rf /tmp/tlcache
  timeout 200 ncu --clock-control none --kernel-name matmul_tc --launch-count 1 \
    --section SpeedOfLight --section WarpStateStats --section SchedulerStats --section MemoryWorkloadAnalysis_Tables \
    --section InstructionStats --section Occupancy --section LaunchStats \
    /tmp/tl-ptx "${args[@]}" > "$OUT/mma_ncu_$tag.txt" 2>&1
  cubin=$(find /tmp/tlcache -name "*.cubin" | head -1)
  [ -n "$cubin" ] && cuobjdump -sass "$cubin" > "$OUT/mma_sass_$tag.txt" 2>&1
  grep -E "Stall|Warp Cycles|Issue Slot|Eligible|Active Warps|Throughput|Bank|Registers|Achieved" "$OUT/mma_ncu_$tag.txt" | head -60
done
