#!/usr/bin/env bash
# Long fuzzing runs on a many-core machine (issue 11): several harnesses at once, each with
# several libFuzzer workers (-jobs/-workers) sharing one corpus.
#
#   bash scripts/fuzz-parallel.sh SECONDS OUT_DIR NAME=WORKERS...
#   e.g. bash scripts/fuzz-parallel.sh 480 /tmp/fz frontend=3 launch=3 ir=3 npy=3 cache=2 differential=2
#
# Binaries: $TL_FUZZ_BIN (default build-sanitize/tests/fuzz, what scripts/fuzz.sh builds); each
# fuzz_<name> may also be there gzipped (fuzz_<name>.gz, as carried to the GPU machine). Each
# harness starts from tests/fuzz/corpus/<name> (copied into OUT_DIR/<name>/corpus) with its
# dictionary. Every worker runs SECONDS; findings go to OUT_DIR/<name>/. Prints, and writes as
# OUT_DIR/summary.json, per harness: workers, CPU seconds, execs (summed over the workers), the
# largest coverage (cov, ft) a worker reached, corpus size and findings. Exit 1 on any finding.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
secs="$1"; out="$2"; shift 2
bin="${TL_FUZZ_BIN:-$root/build-sanitize/tests/fuzz}"
mkdir -p "$out"
pids=()
for spec in "$@"; do
  name="${spec%%=*}"; workers="${spec##*=}"
  dir="$out/$name"; mkdir -p "$dir/corpus"
  exe="$bin/fuzz_$name"
  if [[ ! -x "$exe" && -f "$exe.gz" ]]; then gunzip -c "$exe.gz" >"$dir/fuzz_$name"; chmod +x "$dir/fuzz_$name"; exe="$dir/fuzz_$name"; fi
  cp -n "$root/tests/fuzz/corpus/$name/"* "$dir/corpus/" 2>/dev/null || true
  dict=()
  [[ -f "$root/tests/fuzz/dict/$name.dict" ]] && dict=(-dict="$root/tests/fuzz/dict/$name.dict")
  (cd "$dir" && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
     "$exe" corpus "${dict[@]}" -jobs="$workers" -workers="$workers" -max_total_time="$secs" -timeout=10 \
     -rss_limit_mb=2048 -max_len=8192 -print_final_stats=1 -artifact_prefix="$dir/" >"$dir/driver.log" 2>&1) &
  pids+=($!)
done
status=0
for p in "${pids[@]}"; do wait "$p" || status=1; done

python3 - "$out" "$secs" "$@" <<'PY'
import glob, json, os, re, sys
out, secs, specs = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
rows = []
for spec in specs:
    name, workers = spec.split("=")
    d = os.path.join(out, name)
    execs = 0; cov = ft = 0
    for log in glob.glob(os.path.join(d, "fuzz-*.log")):
        text = open(log, errors="replace").read()
        m = re.findall(r"stat::number_of_executed_units: *(\d+)", text)
        if m: execs += int(m[-1])
        for c, f in re.findall(r"^#\d+\s+\w+\s+cov: (\d+) ft: (\d+)", text, re.M):
            cov = max(cov, int(c)); ft = max(ft, int(f))
    findings = [f for f in os.listdir(d) if re.match(r"(crash|leak|timeout|oom)-", f)]
    rows.append({"harness": name, "workers": int(workers), "seconds_per_worker": secs,
                 "cpu_hours": round(int(workers) * secs / 3600, 3), "execs": execs, "cov": cov, "ft": ft,
                 "corpus": len(os.listdir(os.path.join(d, "corpus"))), "findings": findings})
json.dump(rows, open(os.path.join(out, "summary.json"), "w"), indent=1)
for r in rows:
    print(f"{r['harness']:<13} workers {r['workers']:>2}  cpu-h {r['cpu_hours']:<6} execs {r['execs']:<11} "
          f"cov {r['cov']:<6} ft {r['ft']:<7} corpus {r['corpus']:<6} findings {len(r['findings'])}")
PY
for spec in "$@"; do
  d="$out/${spec%%=*}"
  if compgen -G "$d/crash-*" >/dev/null || compgen -G "$d/leak-*" >/dev/null || compgen -G "$d/timeout-*" >/dev/null || compgen -G "$d/oom-*" >/dev/null; then status=1; fi
done
exit $status
