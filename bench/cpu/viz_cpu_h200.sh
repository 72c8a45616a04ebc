#!/usr/bin/env bash
# tl-cpu's results for tl-viz's CPU column (GPU timings panel), on the H200 machine's 16-core host:
# every kernel in kernels/ and lab 7's solution and starter at their default launches, plus
# tl-ptx on lab 7's two at theirs (the GPU column beside them). tl-viz pairs each results JSON
# with a source by SHA-256 and launch (viz/model/Measured.h), so they go under bench/results/gpu/.
# Carry gpu-carry/ with tl-cpu.gz and tl-ptx.gz (strip, then gzip, each binary).
#   (device) bash bench/cpu/viz_cpu_h200.sh   -> $OUT/cpu_h200_host/*.json, $OUT/lab7_gpu/*.json, $OUT/viz_cpu.log
set -uo pipefail
OUT=${OUT:-out}
mkdir -p "$OUT" /tmp/tl
for t in tl-cpu tl-ptx; do gunzip -c gpu-carry/$t.gz > /tmp/tl/$t && chmod +x /tmp/tl/$t; done
export TL_CACHE_DIR=/tmp/tlcache
{
  /tmp/tl/tl-cpu kernels/*.tl --runs 20 --results-dir "$OUT/cpu_h200_host"
  /tmp/tl/tl-cpu labs/07-cpu-gpu/solution.tl labs/07-cpu-gpu/starter.tl --runs 20 --results-dir "$OUT/cpu_h200_host/lab7"
  /tmp/tl/tl-ptx labs/07-cpu-gpu/solution.tl labs/07-cpu-gpu/starter.tl --results-dir "$OUT/lab7_gpu"
} > "$OUT/viz_cpu.log" 2>&1
grep -E "^== |tl-cpu: median|time: median|PASS|FAIL|error" "$OUT/viz_cpu.log" | grep -v "stage agreement" | head -80
