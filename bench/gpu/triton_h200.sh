#!/usr/bin/env bash
# Issue 12 on the GPU: every kernel in Triton's spelling (kernels/triton/*.tl, and the real
# Triton kernels of tests/external/*.tl) compiled by tl-ptx, run on the GPU and checked against
# tl-scalar, at the launch's num_warps and at 1 and 8 warps; then once more under
# compute-sanitizer (memcheck), which reports any access outside an allocation. Then the test
# kernels of the new ops (tests/thread/kernels).
#   device run: bash bench/gpu/triton_h200.sh gpu-carry/tl-ptx.gz   (carry: gpu-carry)
# The table: $OUT/triton_summary.txt (kernel, case, exit status, the PASS/FAIL/error lines); every
# case's full output: $OUT/triton_logs.tgz (<kernel>.<case>.txt). A kernel the CPU stages refuse
# (a construct tilelab does not have) fails here the same way and says so.
source "$(dirname "$0")/setup.sh" "${1:-gpu-carry/tl-ptx.gz}"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null
logs=/tmp/triton_logs
rm -rf "$logs" && mkdir -p "$logs"
summary="$OUT/triton_summary.txt"
: > "$summary"
run() {  # kernel path, case name, extra options...
  local path=$1 name=$2
  shift 2
  local stem
  stem=$(basename "$path" .tl)
  local log="$logs/$stem.$name.txt"
  timeout 120 "$@" > "$log" 2>&1
  local rc=$?
  local lines
  lines=$(grep -E "PASS|FAIL|error:|ERROR|mismatch" "$log" | head -4 | tr '\n' ' ')
  printf '%-40s %-10s rc=%-3s %s\n' "$stem" "$name" "$rc" "$lines" >> "$summary"
}
for k in kernels/triton/*.tl tests/external/*.tl; do
  [ -f "$k" ] || continue
  run "$k" default /tmp/tl-ptx "$k" --check-stage scalar
  run "$k" warps1 /tmp/tl-ptx "$k" --check-stage scalar --num-warps 1
  run "$k" warps8 /tmp/tl-ptx "$k" --check-stage scalar --num-warps 8
  if command -v compute-sanitizer > /dev/null; then
    run "$k" memcheck compute-sanitizer --tool memcheck --error-exitcode 9 /tmp/tl-ptx "$k" --check-stage scalar
  fi
done
# The new ops' own test kernels (issue 12): elementwise and libdevice formulas against libm,
# while, atomics (contended and not, a lock), scans, sort / topk / flip / gather / histogram /
# swizzle2d and tl.reduce, hints (a hinted copy at two bases, and unhinted). Not
# while_forever.tl: it never ends by design.
extra() {  # case name, kernel, options...
  local name=$1 k=$2
  shift 2
  run "$k" "$name" /tmp/tl-ptx "$k" --check-stage scalar "$@"
}
K=tests/thread/kernels
for k in new_elementwise new_intops while_data atomic_lock libdevice_predicates scan_1d scan_2d scan_slice \
    sort_ops swizzle reduce_fn fp8_cast ptr_table rank3_elementwise rank3_shape rank3_dot; do
  [ -f "$K/$k.tl" ] && extra default "$K/$k.tl"
done
extra warps1 $K/atomic_counter.tl --num-warps 1
extra warps8 $K/atomic_counter.tl --num-warps 8
extra contended $K/atomic_contention.tl
extra spread $K/atomic_contention.tl --set CONTENDED=0
extra warps1 $K/libdevice_ops.tl --num-warps 1
extra warps4 $K/libdevice_ops.tl --num-warps 4
extra hint $K/hint_copy.tl --set HINT=1
extra hint_base256 $K/hint_copy.tl --set HINT=1 --set BASE=256
extra nohint $K/hint_copy.tl --set HINT=0
extra default tests/simreport/kernels/histogram_atomics.tl
# device_print / device_assert: the lines a GPU prints (vprintf) next to the CPU's, and an assert
# that fails on the GPU (CUDA_ERROR_ASSERT) must come back as tl-ptx's located error, exit 1.
D=tests/debug/kernels
run $D/print_tile.tl default /tmp/tl-ptx $D/print_tile.tl
run $D/print_2d.tl default /tmp/tl-ptx $D/print_2d.tl
run $D/assert_limit.tl passes /tmp/tl-ptx $D/assert_limit.tl --check-stage scalar
run $D/assert_limit.tl fails /tmp/tl-ptx $D/assert_limit.tl --set LIMIT=6
tar czf "$OUT/triton_logs.tgz" -C "$logs" .
cat "$summary"
echo "== cases: $(wc -l < "$summary"), rc=0: $(grep -c 'rc=0 ' "$summary")"
