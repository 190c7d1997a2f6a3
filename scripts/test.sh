#!/usr/bin/env bash
# README command 2 (and CI): install what is missing, build, run the whole test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh -DVKC_BUILD_TESTS=ON
BUILD_DIR=${VKC_BUILD_DIR:-build}
ctest --test-dir "$BUILD_DIR" -j "${VKC_JOBS:-2}" --output-on-failure
