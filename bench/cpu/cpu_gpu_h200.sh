#!/usr/bin/env bash
# The CPU against the GPU on the H200 machine, in one run (issue 14's suite, both halves): the
# host's peaks (cpu_peaks) and the GPU's (gpu_peaks), then every kernel and shape on tl-cpu (16
# threads, fused and unfused) beside tl-ptx (fused and unfused), Triton and PyTorch on the H200. Carry gpu-carry/ with tl-cpu.gz, tl-ptx.gz,
# cpu_peaks and gpu_peaks (nvcc -O3 -arch=sm_90 -o gpu-carry/gpu_peaks bench/gpu/gpu_peaks.cu).
#   (device) bash bench/cpu/cpu_gpu_h200.sh      -> $OUT/cpu_gpu_h200.{json,md}
set -euo pipefail
OUT=${OUT:-out}
mkdir -p "$OUT" /tmp/tl
for t in tl-cpu tl-ptx; do gunzip -c gpu-carry/$t.gz > /tmp/tl/$t; done
cp gpu-carry/cpu_peaks gpu-carry/gpu_peaks /tmp/tl/
chmod +x /tmp/tl/*
/tmp/tl/gpu_peaks | tee "$OUT/gpu_peaks.json"
python3 bench/cpu/suite.py --tl-cpu /tmp/tl/tl-cpu --peaks /tmp/tl/cpu_peaks --tl-ptx /tmp/tl/tl-ptx \
  --gpu-peaks "$OUT/gpu_peaks.json" --out "$OUT/cpu_gpu_h200" --threads "$(nproc)" --all-threads-only --triton "$@"
