#!/usr/bin/env bash
# Shared memory beyond 48 KB on the GPU (issue 12, section 6; docs/gpu.md "Shared memory beyond
# 48 KB"): kernels/matmul.tl with tiles whose dot stages 48 KB (static .shared, as before), 96 KB
# and 192 KB (dynamic: .extern .shared, cuFuncSetAttribute, sharedMemBytes at launch) of operands
# in shared memory runs on the GPU and is checked against tl-scalar; the driver's occupancy (the
# "module:" line, asked with the dynamic bytes) is to match sim/Occupancy's: 2 blocks/SM for the
# 96 KB block, 1 for 192 KB, 4 for 48 KB on the H200 (tests/sim/occupancy_dynamic_shared_test.cpp,
# when registers do not limit first); 512 KB is the
# thread stage's located error (exit 1), never a ptxas message or a launch failure.
#   device run: bash bench/gpu/smem_check.sh gpu-carry/tl-ptx.gz   (carry: gpu-carry)
# Each case's output goes to $OUT/smem_<case>.txt and its results JSON to $OUT/results/.
source "$(dirname "$0")/setup.sh" "${1:-gpu-carry/tl-ptx.gz}"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null
sizes="--set M=256 --set N=256 --set K=1024"
status=0
run_case() {  # name, expected exit status, tile options
  local name=$1 want=$2
  shift 2
  echo "== $name: tl-ptx kernels/matmul.tl $sizes $*"
  /tmp/tl-ptx kernels/matmul.tl $sizes "$@" --check-stage scalar --results-dir "$OUT/results" \
    --ptx-dir /tmp/ptx_$name > "$OUT/smem_$name.txt" 2>&1
  local rc=$?
  grep -E "ptx:|ptxas:|module:|time:|PASS|FAIL|error:|GPU step" "$OUT/smem_$name.txt"
  grep -E "^\.(extern )?\.?shared" /tmp/ptx_$name/matmul.ptx 2>/dev/null | sed 's/^/   ptx declares: /'
  if [ "$rc" != "$want" ]; then
    echo "   UNEXPECTED exit status $rc (wanted $want)"
    status=1
  else
    echo "   exit status $rc as expected"
  fi
}
run_case static48k 0 --set BLOCK_M=32 --set BLOCK_N=16 --set BLOCK_K=256   # 32 KB + 16 KB = 48 KB
run_case dynamic96k 0 --set BLOCK_M=32 --set BLOCK_N=16 --set BLOCK_K=512  # 64 KB + 32 KB = 96 KB
run_case dynamic192k 0 --set BLOCK_M=64 --set BLOCK_N=32 --set BLOCK_K=512 # 128 KB + 64 KB = 192 KB
run_case over512k 1 --set BLOCK_M=16 --set BLOCK_N=16 --set BLOCK_K=4096  # 256 KB + 256 KB: over 227 KB
echo "== exit status $status (0: every case as expected)"
exit $status
