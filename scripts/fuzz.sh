#!/usr/bin/env bash
# Runs the libFuzzer harnesses of tests/fuzz/ (issue 11).
#
#   bash scripts/fuzz.sh [SECONDS_PER_HARNESS] [harness...]     (default 60 s, every harness)
#
# Builds fuzz_<name> (libFuzzer + ASan + UBSan) in the sanitizer build, build-sanitize
# (scripts/sanitize.sh configures it: the libraries carry -fsanitize=fuzzer-no-link, so the
# coverage libFuzzer follows is the library code's, not only the harness's), and runs each for
# the given time on a copy of its checked-in corpus (build-sanitize/corpus/<name>, so
# tests/fuzz/corpus only grows when you copy inputs back) with its dictionary. Crashes, leaks and
# timeouts go to build-sanitize/findings/<name>/. Prints each harness's execs, execs/s and
# coverage; exit 1 when any harness found something.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
secs="${1:-60}"
shift || true
all=(frontend launch ir npy cache differential)
harnesses=("$@")
[[ ${#harnesses[@]} -eq 0 ]] && harnesses=("${all[@]}")
build="$root/build-sanitize"
jobs="${TL_FUZZ_JOBS:-2}"

bash "$root/scripts/sanitize.sh" --configure  # clang, ASan + UBSan, -DTL_FUZZ=ON
targets=()
for h in "${harnesses[@]}"; do targets+=("fuzz_$h"); done
cmake --build "$build" -j"$jobs" --target "${targets[@]}"

status=0
summary=()
for h in "${harnesses[@]}"; do
  corpus="$build/corpus/$h"
  findings="$build/findings/$h"
  mkdir -p "$corpus" "$findings"
  cp -n "$root/tests/fuzz/corpus/$h/"* "$corpus/" 2>/dev/null || true
  dict=()
  [[ -f "$root/tests/fuzz/dict/$h.dict" ]] && dict=(-dict="$root/tests/fuzz/dict/$h.dict")
  log="$build/findings/$h.log"
  echo "== fuzz_$h for ${secs}s (log: $log)"
  rc=0
  (cd "$findings" && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
     "$build/tests/fuzz/fuzz_$h" "$corpus" "${dict[@]}" -max_total_time="$secs" -timeout=10 \
     -rss_limit_mb=2048 -max_len=8192 -print_final_stats=1 -artifact_prefix="$findings/") \
     >"$log" 2>&1 || rc=$?
  execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo "?")
  speed=$(grep -o 'stat::average_exec_per_sec: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo "?")
  line=$(grep -E '^#[0-9]+' "$log" | tail -1 || true)
  cov=$(grep -o 'cov: [0-9]*' <<<"$line" | grep -o '[0-9]*' || echo "?")
  ft=$(grep -o 'ft: [0-9]*' <<<"$line" | grep -o '[0-9]*' || echo "?")
  found=$(find "$findings" -maxdepth 1 -type f \( -name 'crash-*' -o -name 'leak-*' -o -name 'timeout-*' -o -name 'oom-*' \) | wc -l)
  summary+=("$(printf '%-10s execs %-10s execs/s %-7s cov %-6s ft %-6s findings %s' "$h" "$execs" "$speed" "$cov" "$ft" "$found")")
  if [[ $rc -ne 0 || $found -ne 0 ]]; then
    status=1
    echo "   finding(s) in $findings (exit $rc); tail of the log:"
    tail -30 "$log" | sed 's/^/   /'
  fi
done
echo
printf '%s\n' "${summary[@]}"
exit $status
