# Sourced by the GPU scripts (bench/gpu/*.sh) on the device machine: unpacks the carried tl-ptx
# (argument 1, default gpu-carry/tl-ptx.gz) to /tmp/tl-ptx, makes $OUT and a fresh JIT cache.
set -uo pipefail
BIN=${1:-gpu-carry/tl-ptx.gz}
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
gunzip -c "$BIN" > /tmp/tl-ptx && chmod +x /tmp/tl-ptx
export TL_CACHE_DIR=/tmp/tlcache
