#!/usr/bin/env bash
# CI's fuzzing step: builds the libFuzzer targets (clang, -DVKC_FUZZ=ON: ASan + UBSan) in
# build-fuzz/ and runs each one briefly on its seeds and past findings (ctest -L fuzz). A crash,
# leak or sanitizer report fails it. bench/fuzz.sh runs the same targets long.
#   scripts/fuzz-smoke.sh [SECONDS_PER_TARGET]     (default 5)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
seconds=${1:-5}
dir=${VKC_FUZZ_BUILD_DIR:-build-fuzz}
# The regular build's compiled shader modules are reused (same specs, same compiler).
cache=$PWD/${VKC_BUILD_DIR:-build}/shader-specs/cache
CC=clang CXX=clang++ cmake -G Ninja -S . -B "$dir" -DVKC_FUZZ=ON -DVKC_BUILD_TESTS=OFF \
  -DVKC_FUZZ_SMOKE_SECONDS="$seconds" -DVKC_SHADER_CACHE="$cache" \
  $(command -v ccache >/dev/null && echo -DCMAKE_CXX_COMPILER_LAUNCHER=ccache) >/dev/null
# The fuzz build with the tests on configures too (tests/ then adds tests/fuzz; once it was added twice).
both=$(mktemp -d)
CC=clang CXX=clang++ cmake -G Ninja -S . -B "$both" -DVKC_FUZZ=ON -DVKC_BUILD_TESTS=ON -DVKC_SHADER_CACHE="$cache" >/dev/null
rm -rf "$both"
targets=$(sed -n 's/^vkc_add_fuzzer(\([a-z_]*\) .*/fuzz_\1/p' tests/fuzz/CMakeLists.txt)
cmake --build "$dir" --target $targets -- -j "${VKC_JOBS:-2}"
ctest --test-dir "$dir" -L fuzz --output-on-failure
