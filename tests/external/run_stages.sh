#!/bin/bash
# run_stages.sh -- run every tests/external/*.tl (or the files given) through tl-scalar,
# tl-block, tl-thread at --num-warps 1 and 4, and tl-sim from a build directory, and print
# one line per kernel and stage: PASS, or FAIL with the first error line. Used to fill in
# README.md's status column; the GoogleTest suite (ExternalKernels.cpp) is the check.
# Usage: tests/external/run_stages.sh BUILD_DIR [kernel.tl ...]
set -u
build=${1:?usage: run_stages.sh BUILD_DIR [kernel.tl ...]}
shift
here=$(cd "$(dirname "$0")" && pwd)
files=("$@")
[ ${#files[@]} -eq 0 ] && files=("$here"/*.tl)
run() {  # run LABEL CMD...: prints PASS or the first error line
    local label=$1; shift
    local out rc
    out=$(timeout 300 "$@" 2>&1); rc=$?
    if [ $rc -eq 0 ] && ! grep -q 'FAIL' <<<"$out"; then
        echo "  $label: PASS"
    else
        echo "  $label: FAIL (rc=$rc) $(grep -m1 -E 'error|FAIL' <<<"$out")"
    fi
}
for f in "${files[@]}"; do
    echo "== $(basename "$f")"
    run tl-scalar "$build/stages/scalar/tl-scalar" -q "$f"
    run tl-block "$build/stages/block/tl-block" -q "$f"
    run tl-thread-w1 "$build/stages/thread/tl-thread" -q --num-warps 1 "$f"
    run tl-thread-w4 "$build/stages/thread/tl-thread" -q --num-warps 4 "$f"
    run tl-sim "$build/stages/sim/tl-sim" "$f"
done
