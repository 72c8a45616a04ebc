#!/usr/bin/env bash
# Issue 13, "Compile time": how much of the ptxas step is the assembler's own floor. Times the ptxas
# process on a trivial kernel (bench/gpu/ptxas_floor_trivial.ptx: one load, add, store), on
# kernels/softmax.tl's PTX, and on the same PTX with its 8 divisions as IEEE div.rn.f32 instead of
# Triton's div.full.f32 (what tl-ptx emitted for `/` before), 10 runs each, alternating, and prints
# the medians: the first is what any kernel pays before ptxas looks at its code. Then, where gcc
# and libnvJitLink are installed, bench/gpu/nvjitlink_probe.c: 4 nvJitLink calls in one process
# on each of the first two. Runs where ptxas is (the GPU machine, or here).
#   device run: bash bench/gpu/ptxas_floor.sh gpu-carry/tl-ptx.gz   (carry: gpu-carry)
#   here:       bash bench/gpu/ptxas_floor.sh build/stages/ptx/tl-ptx
# Output: $OUT/ptxas_floor.txt
set -uo pipefail
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
BIN=${1:-gpu-carry/tl-ptx.gz}
TLPTX=/tmp/tl-ptx-floor
case "$BIN" in *.gz) gunzip -c "$BIN" > "$TLPTX" && chmod +x "$TLPTX" ;; *) TLPTX=$BIN ;; esac
PTXAS=${PTXAS:-$(command -v ptxas || echo /usr/local/cuda/bin/ptxas)}
dir=$(mktemp -d)
"$TLPTX" kernels/softmax.tl --no-check --no-cache --ptx-dir "$dir" > /dev/null 2>&1
cp "$(dirname "$0")/ptxas_floor_trivial.ptx" "$dir/trivial.ptx"
sed 's/div\.full\.f32/div.rn.f32/' "$dir/softmax.ptx" > "$dir/softmax_div_rn.ptx"
for i in $(seq 10); do
  for k in trivial softmax softmax_div_rn; do
    t0=$(date +%s%N)
    "$PTXAS" -arch=sm_90 -v "$dir/$k.ptx" -o "$dir/$k.cubin" > "$dir/$k.log" 2>&1 || echo "ptxas failed on $k"
    t1=$(date +%s%N)
    echo "$k $(( (t1 - t0) / 1000 ))"
  done
done > "$dir/times.txt"
{
  echo "ptxas: $("$PTXAS" --version | tail -1); $(nproc) cpus"
  python3 - "$dir/times.txt" <<'PY'
import statistics, sys
t = {}
for line in open(sys.argv[1]):
    k, us = line.split()
    t.setdefault(k, []).append(int(us) / 1000)
for k, v in t.items():
    print(f"{k:8s} ptxas process, median of {len(v)}: {statistics.median(v):6.1f} ms  (min {min(v):.1f}, max {max(v):.1f})")
PY
  # nvJitLink in one process, where the library and a C compiler are installed.
  lib=$(dirname "$PTXAS")/../lib64
  if command -v gcc > /dev/null && [ -e "$lib/libnvJitLink.so" ] &&
     gcc -O2 "$(dirname "$0")/nvjitlink_probe.c" -I"$lib/../include" -L"$lib" -lnvJitLink -o "$dir/probe" 2> /dev/null; then
    for k in trivial softmax; do
      echo "nvJitLink, $k, 4 calls in one process: $(LD_LIBRARY_PATH=$lib "$dir/probe" "$dir/$k.ptx" | tr '\n' ' ')"
    done
  fi
} | tee "$OUT/ptxas_floor.txt"
