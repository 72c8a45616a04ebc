#!/usr/bin/env bash
# How the H200's tensor cores add up products: the bits of C = A @ B^T from tilelab's own kernels
# (tests/thread/kernels/ring_dot.tl, BT=1), for inputs drawn by bench/gpu/accum_probe.py.
#   1. designed inputs: f8e4m3, f8e5m2, bf16, f16 and f32 (tf32 dots) at K = 32, 64 and 256, seeds 1 and 2, on
#      wgmma (--arch sm_90a) and on mma.sync (--arch sm_90) -> $OUT/probe/<dtype>.K<K>.s<seed>/
#      {a,b}.npy and <arch>/ring_dot.c_ptr.npy, packed as $OUT/probe_<dtype>.tgz;
#   2. the cases of bench/gpu/accum_real_cases.txt (fp8 and bf16 checks of wgmma_tf32_fp8_h200.sh), their outputs written
#      -> $OUT/real/<name>/*.npy and the check's log, packed as $OUT/real.tgz.
# Afterwards, on the development machine: tl-thread --wgmma (or without, for mma.sync) on the
# same inputs with --out-dir, and `accum_probe.py compare GPU.npy MODEL.npy` for each.
#   device run: bash bench/gpu/accum_probe_h200.sh gpu-carry/tl-ptx.gz   (carry: gpu-carry)
#   ACCUM_DTYPES="f32" probes those dtypes only; ACCUM_NO_REAL=1 skips part 2.
source "$(dirname "$0")/setup.sh" "${1:-gpu-carry/tl-ptx.gz}"
R=tests/thread/kernels/ring_dot.tl
summary="$OUT/accum_summary.txt"
: > "$summary"
for d in ${ACCUM_DTYPES:-f8e4m3 f8e5m2 bf16 f16 f32}; do
  for K in 32 64 256; do
    for seed in 1 2; do
      dir=$OUT/probe/$d.K$K.s$seed
      python3 bench/gpu/accum_probe.py gen "$dir" --dtype $d --M 1024 --N 64 --K $K --seed $seed || continue
      for arch in sm_90a sm_90; do
        timeout 60 /tmp/tl-ptx $R --arch $arch --no-check --runs 1 --set BT=1 --set M=1024 --set N=64 --set K=$K --set BK=32 \
          --set num_stages=1 --set "a_ptr=file(\"$dir/a.npy\")" --set "b_ptr=file(\"$dir/b.npy\")" --out-dir "$dir/$arch" \
          > "$dir/$arch.log" 2>&1
        echo "$d K=$K seed=$seed $arch rc=$?" >> "$summary"
      done
    done
  done
  (cd "$OUT" && tar -czf "probe_$d.tgz" probe/$d.* && rm -rf probe/$d.*)
done
rmdir "$OUT/probe"
while read -r name arch kernel args; do
  case $name in "#"* | "") continue ;; esac
  mkdir -p "$OUT/real/$name"
  timeout 120 /tmp/tl-ptx $kernel --arch $arch $args --runs 1 --check-stage scalar --out-dir "$OUT/real/$name" > "$OUT/real/$name/log.txt" 2>&1
  echo "real $name rc=$? $(grep -E 'PASS|FAIL|error:' "$OUT/real/$name/log.txt" | head -2 | tr '\n' ' ')" >> "$summary"
done < <([ -n "${ACCUM_NO_REAL:-}" ] || cat bench/gpu/accum_real_cases.txt)
(cd "$OUT" && tar -czf real.tgz real && rm -rf real)
cat "$summary"
