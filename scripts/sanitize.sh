#!/usr/bin/env bash
# Builds tilelab with AddressSanitizer and UndefinedBehaviorSanitizer (clang) and runs its tests
# (issue 11). Any sanitizer report stops the process that made it, so it fails its test.
#
#   bash scripts/sanitize.sh              every target and the whole suite (about an hour on 2 cores)
#   bash scripts/sanitize.sh --ci         the subset CI runs: the suites that take user input
#                                         apart (test_frontend, test_ir, test_passes, test_io,
#                                         test_interp, test_robust) and the six fuzz corpus replays
#   bash scripts/sanitize.sh --configure  only configure the build folder (scripts/fuzz.sh does)
#
# Build folder: build-sanitize, shared with scripts/fuzz.sh, so CI compiles the libraries once:
# RelWithDebInfo, -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined
# (fuzzer-no-link only adds the coverage counters libFuzzer follows), -DTL_FUZZ=ON.
# Third-party code: Debian's Dear ImGui 1.86 OpenGL loader writes one past an array
# (viz/CMakeLists.txt says why that write is harmless and how it is compiled); nothing else is
# exempt.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="$root/build-sanitize"
mode="${1:-all}"
jobs="${TL_SANITIZE_JOBS:-$(nproc)}"

launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
flags="-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
CC=clang CXX=clang++ cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTL_FUZZ=ON \
  "${launcher[@]}" -DCMAKE_CXX_FLAGS="$flags" -DCMAKE_C_FLAGS="$flags" \
  -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" >/dev/null
[[ "$mode" == "--configure" ]] && exit 0

export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1:strict_string_checks=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
if [[ "$mode" == "--ci" ]]; then
  suites=(frontend ir passes io interp robust)
  targets=()
  for s in "${suites[@]}"; do targets+=("test_$s"); done
  for h in frontend launch ir npy cache differential; do targets+=("fuzz_replay_$h"); done
  cmake --build "$build" -j"$jobs" --target "${targets[@]}"
  ctest --test-dir "$build" --output-on-failure -j"$jobs" -R "^fuzz_replay_"
  for s in "${suites[@]}"; do
    echo "== test_$s (ASan+UBSan)"
    "$build/tests/test_$s" --gtest_brief=1
  done
else
  cmake --build "$build" -j"$jobs"
  ctest --test-dir "$build" --output-on-failure -j"$jobs"
fi
