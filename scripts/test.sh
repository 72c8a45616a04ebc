#!/usr/bin/env bash
# The test command: installs what is missing, builds everything and runs the whole suite.
# .ci/run runs exactly this.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh
ctest --test-dir "${BUILD_DIR:-build}" --output-on-failure -j"$(nproc)"
