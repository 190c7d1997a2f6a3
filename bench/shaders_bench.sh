#!/usr/bin/env bash
# Shader library build time: vkc's in-process generator (shaderc + spirv-opt + spirv-val +
# reflection, thread pool, content-hash cache) against the same variants compiled by one
# `glslc` process each (what ExecuTorch's gen_vulkan_spv.py does), and the no-op rebuild.
#   bench/shaders_bench.sh            (uses ${VKC_BUILD_DIR:-build}; VKC_JOBS threads, default nproc)
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${VKC_BUILD_DIR:-build}
JOBS=${VKC_JOBS:-$(nproc)}
TOOL=$BUILD_DIR/codegen/vkc-shaders
[ -x "$TOOL" ] || cmake --build "$BUILD_DIR" --target vkc_shaders_tool >/dev/null
command -v glslc >/dev/null || { echo "shaders_bench: glslc not found (apt-get install glslc)" >&2; exit 1; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b - a }'; }

# 1. Full build, cold cache.
t0=$(now)
"$TOOL" --specs shader-specs --bundle "$work/lib.vksl" --header "$work/registry.h" --cache "$work/cache" -j "$JOBS" \
  >"$work/full.txt"
t1=$(now)
full=$(elapsed "$t0" "$t1")

# 2. No-op rebuild: same specs, warm cache, outputs unchanged (not rewritten).
t0=$(now)
"$TOOL" --specs shader-specs --bundle "$work/lib.vksl" --header "$work/registry.h" --cache "$work/cache" -j "$JOBS" \
  >"$work/noop.txt"
t1=$(now)
noop=$(elapsed "$t0" "$t1")

# 3. The same variants, one glslc process each (same target env and -O / -O0), JOBS at a time.
"$TOOL" --specs shader-specs --cache "$work/cache" --glsl-out "$work/glsl" >/dev/null
mkdir -p "$work/spv"
count=$(wc -l <"$work/glsl/manifest.txt")
t0=$(now)
# shellcheck disable=SC2016
xargs -P "$JOBS" -L 1 sh -c 'glslc -fshader-stage=compute --target-env="$1" "$2" -Ishader-specs/include \
  "'"$work"'/glsl/$0.comp" -o "'"$work"'/spv/$0.spv"' <"$work/glsl/manifest.txt"
t1=$(now)
glslc_time=$(elapsed "$t0" "$t1")

# 4. Ninja no-op of the build-time rule (when the build dir is configured).
ninja_noop="-"
if [ -f "$BUILD_DIR/build.ninja" ]; then
  cmake --build "$BUILD_DIR" --target vkc_shader_library_files >/dev/null
  t0=$(now)
  cmake --build "$BUILD_DIR" --target vkc_shader_library_files >/dev/null
  t1=$(now)
  ninja_noop=$(elapsed "$t0" "$t1")
fi

speedup=$(awk -v a="$glslc_time" -v b="$full" 'BEGIN { printf "%.1f", a / b }')
echo "shader library: $(cat "$work/full.txt" | sed 's/^vkc-shaders: //')"
echo "bundle: $(stat -c %s "$work/lib.vksl") bytes; glslc compiled $count modules"
printf "%-52s %8s\n" "step ($JOBS threads/processes, $(nproc) cores)" "seconds"
printf "%-52s %8s\n" "vkc-shaders full build (compile+opt+validate+reflect)" "$full"
printf "%-52s %8s\n" "glslc, one process per variant (compile+opt only)" "$glslc_time"
printf "%-52s %8s\n" "speed-up" "${speedup}x"
printf "%-52s %8s\n" "vkc-shaders no-op rebuild (warm cache)" "$noop"
printf "%-52s %8s\n" "cmake --build no-op (vkc_shader_library_files)" "$ninja_noop"
