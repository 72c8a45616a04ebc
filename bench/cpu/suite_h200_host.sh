#!/usr/bin/env bash
# bench/cpu/suite.py on the GPU machine's host CPU (16 cores), through the device tool:
#   mkdir -p gpu-carry && strip -o gpu-carry/tl-cpu build/stages/cpu/tl-cpu && gzip -f gpu-carry/tl-cpu
#   cp build/bench/cpu_peaks gpu-carry/
#   (device) bash bench/cpu/suite_h200_host.sh        # carry: gpu-carry
# Writes $OUT/suite_h200_host.{json,md} (checked in as bench/results/cpu/).
set -euo pipefail
OUT=${OUT:-out}
mkdir -p "$OUT" /tmp/tl
gunzip -c gpu-carry/tl-cpu.gz > /tmp/tl/tl-cpu
cp gpu-carry/cpu_peaks /tmp/tl/cpu_peaks
chmod +x /tmp/tl/tl-cpu /tmp/tl/cpu_peaks
nproc
lscpu | grep -E "Model name|Socket|Core|Thread|MHz|L3" || true
/tmp/tl/tl-cpu kernels/softmax.tl --quiet
python3 bench/cpu/suite.py --tl-cpu /tmp/tl/tl-cpu --peaks /tmp/tl/cpu_peaks --out "$OUT/suite_h200_host" --threads "$(nproc)" "$@"
