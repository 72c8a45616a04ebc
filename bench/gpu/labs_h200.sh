#!/usr/bin/env bash
# One call on the GPU machine (the device tool) for the labs and the correctness checks:
#   1. tl-ptx on every kernel in kernels/ (checked against tl-scalar: the GPU path with its
#      second launch over poisoned outputs, which finds never-written elements);
#   2. the checks of tests/checks/kernels on the GPU: a floor-division grid (673 elements never
#      stored), a --reference run, a wrong-axis transpose caught by its reference;
#   3. every lab's starter and solution with tl-ptx, at the handout's launch and at a large one
#      (lab 1 with --keep-layouts, as the lab grades it; lab 3 also --unfused): the handouts'
#      "Measured on the H200" tables.
#
#   here:  strip -o gpu-carry/tl-ptx build/stages/ptx/tl-ptx && gzip -f gpu-carry/tl-ptx
#   device run: bash bench/gpu/labs_h200.sh gpu-carry/tl-ptx.gz   (carry: gpu-carry)
# Output: $OUT/kernels.log, $OUT/checks.log, $OUT/labs.log, $OUT/labs.tgz (the results JSONs).
source "$(dirname "$0")/setup.sh"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem --format=csv > "$OUT/gpu.txt" 2>&1

/tmp/tl-ptx --results-dir /tmp/res/kernels kernels/*.tl > "$OUT/kernels.log" 2>&1
tail -2 "$OUT/kernels.log"

{
  echo "### floor-division grid: the GPU's outputs, stage agreement and never-written elements"
  /tmp/tl-ptx tests/checks/kernels/floor_grid.tl --results-dir /tmp/res/checks; echo "exit $?"
  echo "### the same against the intended kernel (--reference)"
  /tmp/tl-ptx tests/checks/kernels/floor_grid.tl --reference tests/checks/kernels/scale.tl --results-dir /tmp/res/checks; echo "exit $?"
  echo "### the intended kernel against a reference with another @launch seed and BLOCK"
  /tmp/tl-ptx tests/checks/kernels/scale.tl --reference tests/checks/kernels/scale_seed2.tl --results-dir /tmp/res/checks; echo "exit $?"
  echo "### a wrong-axis transpose against the right one"
  /tmp/tl-ptx tests/checks/kernels/transpose_wrong_axis.tl --reference tests/checks/kernels/transpose.tl --results-dir /tmp/res/checks; echo "exit $?"
} > "$OUT/checks.log" 2>&1
grep -E "PASS|FAIL|warning|exit" "$OUT/checks.log"

# lab  extra-options  large-launch overrides
run_lab() {
  local lab=$1 opts=$2 large=$3
  for k in starter solution; do
    echo "### $lab/$k.tl (handout launch) $opts"
    /tmp/tl-ptx "labs/$lab/$k.tl" $opts --results-dir "/tmp/res/$lab/handout"; echo "exit $?"
    echo "### $lab/$k.tl $large $opts"
    /tmp/tl-ptx "labs/$lab/$k.tl" $opts $large --check-stage block --results-dir "/tmp/res/$lab/large"; echo "exit $?"
  done
}
{
  run_lab 01-coalescing "--keep-layouts" "--set M=8192 --set N=8192"
  echo "### the naive transpose without --keep-layouts (the compiler's own shared-memory transpose)"
  /tmp/tl-ptx labs/01-coalescing/starter.tl --set M=8192 --set N=8192 --check-stage block --results-dir /tmp/res/01-coalescing/auto; echo "exit $?"
  run_lab 02-occupancy "" "--set N=67108864"
  run_lab 03-fusion "--unfused" "--set M=16384"
  run_lab 04-reduction "" "--set N=67108864"
} > "$OUT/labs.log" 2>&1
grep -E "^###|time: median|fusion:|PASS|FAIL|warning|exit" "$OUT/labs.log"
tar czf "$OUT/labs.tgz" -C /tmp res 2>/dev/null
