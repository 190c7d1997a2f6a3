#!/usr/bin/env bash
# Configures and builds vkc (Release, Ninja, ccache when present) into ${VKC_BUILD_DIR:-build}.
# Extra arguments go to CMake's configure step.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${VKC_BUILD_DIR:-build}
JOBS=${VKC_JOBS:-2}
launcher=()
command -v ccache >/dev/null 2>&1 && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release "${launcher[@]}" "$@" >/dev/null
cmake --build "$BUILD_DIR" -j "$JOBS"
