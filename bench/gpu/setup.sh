# Sourced by the GPU scripts (bench/gpu/*.sh) on the device machine: unpacks the carried tl-ptx
# (argument 1, default gpu-carry/tl-ptx.gz) to /tmp/tl-ptx, makes $OUT and a fresh JIT cache.
set -uo pipefail
BIN=${1:-gpu-carry/tl-ptx.gz}
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
gunzip -c "$BIN" > /tmp/tl-ptx && chmod +x /tmp/tl-ptx
export TL_CACHE_DIR=/tmp/tlcache

# check_case NAME COMMAND...: runs one check (2 minutes at most) with its log in $logs/NAME.txt
# and appends a line to $summary: the name, the exit status and the PASS / FAIL / error lines.
check_case() {
  local name=$1
  shift
  timeout 120 "$@" > "$logs/$name.txt" 2>&1
  local rc=$?
  printf '%-44s rc=%-3s %s\n' "$name" "$rc" "$(grep -E "PASS|FAIL|error:|ERROR|ptxas:" "$logs/$name.txt" | head -3 | tr '\n' ' ')" >> "$summary"
}

# wgmma_probe: sim/gpus/wgmma_probe.cu, the tensor core's cycles per 16 x 8 x 16 piece of a wgmma
# and its latency, -> $OUT/h200_wgmma_probe.json (where nvcc is installed).
wgmma_probe() {
  command -v nvcc > /dev/null || return 0
  nvcc -O2 -gencode=arch=compute_90a,code=sm_90a -o /tmp/wgmma_probe sim/gpus/wgmma_probe.cu &&
    timeout 60 /tmp/wgmma_probe > "$OUT/h200_wgmma_probe.json"
  cat "$OUT/h200_wgmma_probe.json"
}

# sass_counts TITLE ARCH PATTERN COUNTS TAG: after a tl-ptx run that left out/ptx/matmul_tc.ptx,
# assembles it with ptxas -v for ARCH and appends to COUNTS the title, the static count of each
# SASS instruction matching the grep -E PATTERN, and ptxas's report (the PTX and the report are
# kept in $logs as TAG.ptx and TAG_ptxas.txt). Does nothing where cuobjdump is missing.
sass_counts() {
  local title=$1 arch=$2 pattern=$3 counts=$4 tag=$5
  command -v cuobjdump > /dev/null && [ -f out/ptx/matmul_tc.ptx ] || return 0
  cp out/ptx/matmul_tc.ptx "$logs/$tag.ptx"
  echo "== $title" >> "$counts"
  ptxas -arch="$arch" -v out/ptx/matmul_tc.ptx -o "/tmp/$tag.cubin" > "$logs/${tag}_ptxas.txt" 2>&1
  cuobjdump -sass "/tmp/$tag.cubin" | grep -oE "$pattern" | sort | uniq -c >> "$counts"
  cat "$logs/${tag}_ptxas.txt" >> "$counts"
}
