#!/usr/bin/env bash
# kill -9 against the JIT cache (issue 11): runs tl-ptx on random kernels of kernels/ at random
# num_warps (1, 2, 4, 8, 16: 65 cache keys) over one cache folder, SIGKILLs each run at a random
# moment (0-250 ms: through parsing, code generation, ptxas and the store), then checks the
# cache: every (kernel, num_warps) compiled through it must either miss (with its reason) or hit
# with exactly the PTX a cache-less compile gives. Also counts the temporaries left (a later
# store removes its dead writers').
#
#   bash scripts/kill-test.sh [RUNS] [BUILD_DIR]      (default 200 runs, build/)
# Exit 1 when a hit differs from a fresh compile.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
runs="${1:-200}"
build="${2:-$root/build}"
ptx="$build/stages/ptx/tl-ptx"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
export TL_CACHE_DIR="$work/cache"
mapfile -t kernels < <(ls "$root"/kernels/*.tl)
warps=(1 2 4 8 16)
killed=0 finished=0
for ((i = 0; i < runs; i++)); do
  k="${kernels[RANDOM % ${#kernels[@]}]}"
  w="${warps[RANDOM % ${#warps[@]}]}"
  "$ptx" "$k" -q --no-check --num-warps "$w" --ptx-dir "$work/ptx-$i" --results-dir "$work/res" >/dev/null 2>&1 &
  pid=$!
  sleep "0.$(printf '%03d' $((RANDOM % 250)))"
  if kill -9 "$pid" 2>/dev/null; then killed=$((killed + 1)); else finished=$((finished + 1)); fi
  wait "$pid" 2>/dev/null || true
  rm -rf "$work/ptx-$i"
done
temps=$(find "$TL_CACHE_DIR" -maxdepth 3 -name '.tmp-*' 2>/dev/null | wc -l)
entries=$(find "$TL_CACHE_DIR" -name manifest.json 2>/dev/null | wc -l)
hits=0 misses=0 bad=0
for k in "${kernels[@]}"; do
  stem="$(basename "$k" .tl)"
  for w in "${warps[@]}"; do
    out="$("$ptx" "$k" --no-check --num-warps "$w" --ptx-dir "$work/cached" --results-dir "$work/res" 2>&1 || true)"
    grep -q "cache hit" <<<"$out" || { misses=$((misses + 1)); continue; }
    hits=$((hits + 1))
    "$ptx" "$k" -q --no-check --no-cache --num-warps "$w" --ptx-dir "$work/fresh" --results-dir "$work/res" >/dev/null 2>&1 || true
    cmp -s "$work/cached/$stem.ptx" "$work/fresh/$stem.ptx" || { bad=$((bad + 1)); echo "BAD: $stem at num_warps $w: cached PTX differs"; }
  done
done
echo "kill-test: $runs runs, $killed killed with SIGKILL, $finished finished first; cache afterwards: $entries entries, $temps temporaries left; then $hits hits identical to a fresh compile, $misses misses, $bad bad"
[[ $bad -eq 0 ]]
