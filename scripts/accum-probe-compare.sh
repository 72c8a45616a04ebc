#!/usr/bin/env bash
# tl-thread's tensor-core addition (sim/TensorCoreSum.h) against the H200's bits: for every case
# that bench/gpu/accum_probe_h200.sh brought back (unpack its probe_*.tgz and real.tgz into DIR),
# runs tl-thread on the same inputs and launch (--wgmma for the sm_90a outputs) and compares
# the outputs bit for bit (bench/gpu/accum_probe.py compare). One line per case; exit 1 if any
# differs.
#   bash scripts/accum-probe-compare.sh DIR [build]
set -uo pipefail
dir=${1:?usage: accum-probe-compare.sh DIR [build]}
build=${2:-build}
tt=$build/stages/thread/tl-thread
R=tests/thread/kernels/ring_dot.tl
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
compare() {  # NAME GPU.npy tl-thread-args...
  local name=$1 gpu=$2
  shift 2
  rm -rf "$tmp/out"
  if ! "$tt" "$@" --no-check --out-dir "$tmp/out" > "$tmp/log" 2>&1; then
    printf '%-36s tl-thread failed: %s\n' "$name" "$(grep -m1 error "$tmp/log")"
    fail=1
    return
  fi
  local verdict
  verdict=$(python3 bench/gpu/accum_probe.py compare "$gpu" "$tmp"/out/*.c_ptr.npy) || fail=1
  printf '%-36s %s\n' "$name" "$verdict"
}
for case in "$dir"/probe/*; do
  [ -d "$case" ] || continue
  K=$(basename "$case" | sed 's/.*\.K\([0-9]*\)\..*/\1/')
  for arch in sm_90a sm_90; do
    wg=""; [ $arch = sm_90a ] && wg=--wgmma
    compare "$(basename "$case") $arch" "$case/$arch/ring_dot.c_ptr.npy" $R $wg --set BT=1 --set M=1024 --set N=64 --set K=$K \
      --set BK=32 --set num_stages=1 --set "a_ptr=file(\"$case/a.npy\")" --set "b_ptr=file(\"$case/b.npy\")"
  done
done
while read -r name arch kernel args; do
  case $name in "#"* | "") continue ;; esac
  wg=""; [ $arch = sm_90a ] && wg=--wgmma
  [ -d "$dir/real/$name" ] && compare "$name" "$dir/real/$name"/*.c_ptr.npy $kernel $wg $args
done < bench/gpu/accum_real_cases.txt
exit $fail
