#!/usr/bin/env bash
# The test command: installs what is missing, builds everything and runs the whole suite, then
# short fuzz runs and a sanitizer-built subset.
# .ci/run runs exactly this.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh
ctest --test-dir "${BUILD_DIR:-build}" --output-on-failure -j"$(nproc)"
# Robustness (docs/reliability.md): each libFuzzer harness for a short time, then the
# sanitizer-built subset (ASan + UBSan) of the suites that take user input apart.
bash scripts/fuzz.sh "${TL_CI_FUZZ_SECONDS:-20}"
bash scripts/sanitize.sh --ci
