#!/usr/bin/env bash
# Installs what tilelab needs to build and test on Debian 12, from Debian's packages only.
# Safe to run again: packages already present are skipped, and apt is not touched at all when
# nothing is missing. Needs root (or sudo) only when something must be installed.
set -euo pipefail

PACKAGES=(
  g++ cmake ninja-build pkg-config   # the build
  libgtest-dev libgmock-dev          # GoogleTest
  libbenchmark-dev                   # Google Benchmark
  libcli11-dev                       # command-line parsing
  nlohmann-json3-dev                 # JSON
  python3                            # scripts
  llvm-19-dev libzstd-dev zlib1g-dev libedit-dev # the PTX stage: static LLVM 19 (NVPTX) and what its CMake config looks for
  libimgui-dev libglfw3-dev libgl-dev libstb-dev # tl-viz: Dear ImGui (+ its GLFW/OpenGL3 backends), GLFW, OpenGL, stb_image_write
  xvfb xauth libgl1-mesa-dri         # tl-viz headless: a virtual X server and Mesa's software OpenGL
  clang libclang-rt-14-dev           # scripts/fuzz.sh and scripts/sanitize.sh: libFuzzer, ASan, UBSan
)

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#PACKAGES[@]} packages present"
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
