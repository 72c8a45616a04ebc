#!/usr/bin/env bash
# Issue 13, "Compile time", on the GPU machine: source -> loaded module for kernels/softmax.tl on
# a cold JIT cache (an empty $TL_CACHE_DIR before every run), with the cubin made by the ptxas
# process (--assembler ptxas) and by libnvJitLink in process (--assembler nvjitlink), 5 runs each,
# alternating; then one warm run each (a cache hit, after a cold run that fills the cache). tl-ptx's results JSON has every step
# (compile_ms: front_end, passes_layouts_lowering, llvm_codegen, ptxas, cache, module_load, total =
# source -> loaded module); the process's wall time is measured around it too. Because nvJitLink
# compiles the PTX as relocatable code (more registers: stages/ptx/NvJitLink.h), the kernel's
# time, the driver's register count and the check of the outputs against tl-scalar (nvJitLink's
# cubins were never run on a GPU before this script) are recorded for both, softmax and matmul.
#   device run: bash bench/gpu/compile_time_h200.sh gpu-carry/tl-ptx.gz   (carry: gpu-carry)
# Writes $OUT/compile_time.txt (one line per run, then the medians), $OUT/compile_time_logs.tgz
# (each run's output and results JSON).
source "$(dirname "$0")/setup.sh" "${1:-gpu-carry/tl-ptx.gz}"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null
logs=/tmp/compile_time_logs
rm -rf "$logs" && mkdir -p "$logs"
table="$OUT/compile_time.txt"
: > "$table"
/tmp/tl-ptx --version >> "$table" 2>&1
ls -l /usr/local/cuda/lib64/libnvJitLink.so* >> "$table" 2>&1
nproc | sed 's/^/cpus: /' >> "$table"

# One tl-ptx run: kernel, assembler, run name, cold|warm. Appends "<run> <wall ms> <compile_ms...>".
one() {
  local kernel=$1 asm=$2 name=$3 mode=$4
  local stem
  stem=$(basename "$kernel" .tl)
  [ "$mode" = cold ] && rm -rf "$TL_CACHE_DIR"
  local dir="$logs/$stem.$asm.$name"
  mkdir -p "$dir"
  local t0 t1
  t0=$(date +%s%N)
  /tmp/tl-ptx "$kernel" --assembler "$asm" --runs 50 --ptx-dir "$dir" --results-dir "$dir" \
    > "$dir/out.txt" 2>&1
  local rc=$?
  t1=$(date +%s%N)
  local wall=$(( (t1 - t0) / 1000000 ))
  python3 - "$dir/$stem.json" "$stem" "$asm" "$name" "$mode" "$rc" "$wall" >> "$table" <<'EOF'
import json, sys
path, stem, asm, name, mode, rc, wall = sys.argv[1:]
try:
    j = json.load(open(path))
except Exception as e:
    print(f"{stem:8} {asm:9} {name:6} {mode:4} rc={rc} wall={wall}ms  no results JSON ({e})")
    sys.exit(0)
c = j["compile_ms"]
print(f"{stem:8} {asm:9} {name:6} {mode:4} rc={rc} wall={wall}ms assembler={j.get('assembler', '?')!r} "
      f"total={c['total']:.2f} front_end={c['front_end']:.2f} lowering={c['passes_layouts_lowering']:.2f} "
      f"llvm={c['llvm_codegen']:.2f} ptxas={c['ptxas']:.2f} cache={c['cache']:.2f} module_load={c['module_load']:.3f} "
      f"hit={c['cache_hit']} registers={j['resources']['registers']} median_us={j['time']['median_ms'] * 1e3:.2f} "
      f"check={j['check']['result']}")
EOF
  grep -E "ptxas:|note:|module:|error" "$dir/out.txt" | sed 's/^/    /' >> "$table"
}

for rep in 1 2 3 4 5; do
  for asm in ptxas nvjitlink; do
    one kernels/softmax.tl "$asm" "run$rep" cold
  done
done
for asm in ptxas nvjitlink; do  # a cold run fills the cache, the next one hits it
  one kernels/softmax.tl "$asm" fill cold
  one kernels/softmax.tl "$asm" warm warm
done
for asm in ptxas nvjitlink; do
  one kernels/matmul.tl "$asm" cold cold
done

# Medians of the cold softmax runs per assembler.
python3 - "$table" >> "$table" <<'EOF'
import re, statistics, sys
rows = {}
for line in open(sys.argv[1]):
    m = re.match(r"softmax\s+(\S+)\s+run\d\s+cold .*wall=(\d+)ms .*total=([\d.]+) .*ptxas=([\d.]+) .*module_load=([\d.]+)", line)
    if m:
        rows.setdefault(m[1], []).append((float(m[2]), float(m[3]), float(m[4]), float(m[5])))
print("== softmax, cold cache, medians of the runs above")
for asm, r in rows.items():
    med = [statistics.median(x[i] for x in r) for i in range(4)]
    print(f"{asm:9} runs={len(r)} wall={med[0]:.1f}ms source->loaded module (compile_ms.total)={med[1]:.2f}ms "
          f"assembler={med[2]:.2f}ms module_load={med[3]:.3f}ms")
EOF
tar czf "$OUT/compile_time_logs.tgz" -C "$logs" .
cat "$table"
