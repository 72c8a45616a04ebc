#!/usr/bin/env bash
# Lab 7's measurements on the machine it runs on (the handout's "this 2-core VM" figures): the
# CPU's peaks, the solution (fused and unfused) and the starter on tl-cpu at the graded CPU launch
# with every core, tl-sim's predictions at the handout launch, and tl-grade's reports.
#   bash bench/cpu/lab7_here.sh > bench/results/cpu/lab7_vm_2core.log 2>&1    (after building)
set -uo pipefail
B=${BUILD:-build}
L=labs/07-cpu-gpu
T=$(nproc)
echo "### $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2)"
echo "### $B/bench/cpu_peaks --threads $T"
"$B/bench/cpu_peaks" --threads "$T"
for k in solution starter; do
  echo "### tl-cpu $L/$k.tl --set M=2048 --set N=4096 --threads $T --runs 20 --check-stage block $([ $k = solution ] && echo --unfused)"
  "$B/stages/cpu/tl-cpu" "$L/$k.tl" --set M=2048 --set N=4096 --threads "$T" --runs 20 --check-stage block \
    --results-dir /tmp/lab7-here $([ $k = solution ] && echo --unfused)
  echo "### tl-sim $L/$k.tl"
  "$B/stages/sim/tl-sim" "$L/$k.tl" | grep -E "DRAM:|time:|fusion:|unfused/fused"
done
for k in solution starter wrong/one_program; do
  echo "### tl-grade $L $L/$k.tl"
  "$B/labs/grader/tl-grade" "$L" "$L/$k.tl"
done
