#!/usr/bin/env bash
# Lab 7's measurements on the H200 machine, both halves in one run (the handout's tables,
# labs/07-cpu-gpu/README.md): the lab's kernels on tl-cpu (16 threads and 1) and on tl-ptx, fused
# and unfused, at the graded CPU launch (2048 x 4096) and at a tiny one (4 x 1024); PyTorch on the
# CPU and on CUDA (per call) for the same op; then tl-grade on the lab with the host's 16 cores.
# Carry gpu-carry/ with tl-cpu.gz, tl-ptx.gz and tl-grade.gz (strip, then gzip, each binary).
#   (device) bash bench/cpu/lab7_h200.sh      -> $OUT/lab7.log
set -uo pipefail
OUT=${OUT:-out}
mkdir -p "$OUT" /tmp/tl
for t in tl-cpu tl-ptx tl-grade; do gunzip -c gpu-carry/$t.gz > /tmp/tl/$t && chmod +x /tmp/tl/$t; done
export TL_CACHE_DIR=/tmp/tlcache
L=labs/07-cpu-gpu
{
  echo "### machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2)"
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  for size in "M=2048 N=4096" "M=4 N=1024"; do
    sets=$(for a in $size; do printf -- '--set %s ' "$a"; done)
    for k in solution starter wrong/one_program; do
      for t in 16 1; do
        echo "### tl-cpu $k $size --threads $t"
        /tmp/tl/tl-cpu $L/$k.tl $sets --threads $t --runs 20 --check-stage block --results-dir /tmp/res/cpu $([ "$k" = solution ] && [ $t = 16 ] && echo --unfused)
      done
      echo "### tl-ptx $k $size"
      /tmp/tl/tl-ptx $L/$k.tl $sets --check-stage block --results-dir /tmp/res/ptx $([ "$k" = solution ] && echo --unfused)
    done
    shape=$(echo "$size" | sed 's/M=\([0-9]*\) N=\([0-9]*\)/[\1, \2]/')
    echo "### PyTorch add + rms_norm $size"
    python3 -c "
import sys, json; sys.path.insert(0, 'bench/cpu'); import suite
shape = $shape
print(json.dumps({'torch_cpu_16_ms': suite.torch_ms('add_rms_norm', shape, 16), 'torch_cpu_1_ms': suite.torch_ms('add_rms_norm', shape, 1),
                  'torch_cuda_call_ms, kernel_ms': suite.torch_cuda_ms('add_rms_norm', shape)}))"
  done
  echo "### tl-grade --check-lab (16 cores)"
  /tmp/tl/tl-grade $L --check-lab
  for k in solution starter wrong/one_program; do
    echo "### tl-grade $k"
    /tmp/tl/tl-grade $L $L/$k.tl
  done
} > "$OUT/lab7.log" 2>&1
tar czf "$OUT/lab7_results.tgz" -C /tmp res 2>/dev/null
grep -E "^###|tl-cpu: median|tl-cpu: [0-9]+ program|unfused:|time: median|fusion|PASS|FAIL|ok |performance|score|torch|error" "$OUT/lab7.log" | grep -v "stage agreement" | head -150
