#!/usr/bin/env bash
# Builds the ExecuTorch runtime with its Vulkan backend from public sources, and et_runner
# (bench/executorch/et_runner.cpp) against it: the real client of the programs vkc writes.
#
#   bench/executorch/build.sh --src EXECUTORCH_CHECKOUT [--out DIR] [--glslang-src GLSLANG_CHECKOUT] [--jobs N]
#   bench/executorch/build.sh --mirrors DIR ...
#
# --src      a recursive clone: git clone --recursive https://github.com/pytorch/executorch
# --mirrors  a folder of bare git repositories named OWNER+NAME (pytorch+executorch,
#            KhronosGroup+Vulkan-Headers, GPUOpen-LibrariesAndSDKs+VulkanMemoryAllocator,
#            zeux+volk, google+flatbuffers, dvidelabs+flatcc, gflags+gflags, nlohmann+json,
#            Maratyszcza+FXdiv);
#            the tree is assembled (extract_tree.py) at the commits ExecuTorch pins.
# --glslang-src  a glslang checkout, built and used where Debian's glslc cannot compile a
#            shader (GL_KHR_cooperative_matrix and newer extensions). Without it, or where it
#            fails too, the shader is left out of the runtime's library and listed in
#            OUT/skipped_shaders.txt; a program that needs it then fails to load with ET's error.
# --out      default: ${XDG_CACHE_HOME:-$HOME/.cache}/vkc-bench/executorch
#
# Also builds OUT/et_runner_prof: VulkanBackend.cpp again with ET_EVENT_TRACER_ENABLED (the
# backend then times each shader dispatch with a query pool), and the runner with a tracer that
# prints the mean time per dispatch (stderr, `vkc run`'s VKC_VULKAN_PROFILE format). Only that
# file is rebuilt so: its event-tracer code needs nothing else, and ComputeGraph.cpp's two
# helpers it calls are defined in the runner.
#
# Needs cmake, ninja, g++, python3 with PyYAML (ET's shader codegen), glslc (Debian's
# glslc package), git with --mirrors. Takes about 15 min on 2 cores (ccache helps again).
# Prints the runner's path last: OUT/et_runner.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
src="" mirrors="" glslang_src="" out="${XDG_CACHE_HOME:-$HOME/.cache}/vkc-bench/executorch"
jobs=$(nproc)
usage() { sed -n 2,20p "$0" >&2; exit 2; }
while [ $# -gt 0 ]; do
  case "$1" in
    --src) src=$2; shift ;;
    --mirrors) mirrors=$2; shift ;;
    --glslang-src) glslang_src=$2; shift ;;
    --out) out=$2; shift ;;
    --jobs) jobs=$2; shift ;;
    -h|--help) usage ;;
    *) echo "build.sh: unknown argument '$1'" >&2; usage ;;
  esac
  shift
done
[ -n "$src" ] || [ -n "$mirrors" ] || { echo "build.sh: give --src or --mirrors" >&2; usage; }
for tool in cmake ninja g++ python3 glslc; do
  command -v "$tool" >/dev/null || { echo "build.sh: '$tool' is not installed" >&2; exit 2; }
done
python3 -c 'import yaml' 2>/dev/null || { echo "build.sh: python3 lacks PyYAML (apt install python3-yaml)" >&2; exit 2; }
mkdir -p "$out"
out=$(cd "$out" && pwd)
tree=$out/src/executorch

# ---- the source tree (a copy: the shader generator is patched below)
if [ ! -f "$out/src/.complete" ]; then
  rm -rf "$out/src" && mkdir -p "$tree"
  if [ -n "$src" ]; then
    [ -f "$src/backends/vulkan/third-party/volk/volk.h" ] ||
      { echo "build.sh: $src lacks its submodules (git submodule update --init --recursive)" >&2; exit 2; }
    echo "copying $src" >&2
    (cd "$src" && tar --exclude=.git -cf - .) | tar -xf - -C "$tree"
  else
    gitdir() { local d=$mirrors/$1; [ -d "$d/repo/.git" ] && d=$d/repo/.git; [ -d "$d/repo" ] && d=$d/repo; echo "$d"; }
    et=$(gitdir pytorch+executorch)
    head=$(git --git-dir="$et" rev-parse -q --verify HEAD 2>/dev/null) || { echo "build.sh: no git repository at $et" >&2; exit 2; }
    echo "extracting pytorch/executorch ${head:0:10}" >&2
    # A mirror may lack some blobs (large files kept elsewhere): extract_tree.py leaves those out.
    python3 "$here/extract_tree.py" "$et" "$head" "$tree"
    while read -r path repo; do
      pin=$(git --git-dir="$et" ls-tree "$head" "$path" | awk '{print $3}')
      g=$(gitdir "$repo")
      [ -d "$g" ] || { echo "build.sh: $mirrors/$repo is missing (needed for $path)" >&2; exit 2; }
      rev=$pin
      if ! git --git-dir="$g" cat-file -e "$pin^{commit}" 2>/dev/null; then
        rev=$(git --git-dir="$g" rev-parse -q --verify HEAD 2>/dev/null)
        echo "warning: $repo lacks the pinned commit $pin; using its HEAD" >&2
      fi
      mkdir -p "$tree/$path"
      python3 "$here/extract_tree.py" "$g" "$rev" "$tree/$path"
    done <<'EOF'
backends/vulkan/third-party/Vulkan-Headers KhronosGroup+Vulkan-Headers
backends/vulkan/third-party/VulkanMemoryAllocator GPUOpen-LibrariesAndSDKs+VulkanMemoryAllocator
backends/vulkan/third-party/volk zeux+volk
third-party/flatbuffers google+flatbuffers
third-party/flatcc dvidelabs+flatcc
third-party/gflags gflags+gflags
third-party/json nlohmann+json
backends/xnnpack/third-party/FXdiv Maratyszcza+FXdiv
EOF
  fi
  # A shader that no available compiler takes is left out (and listed) instead of failing the build.
  python3 "$here/patch_shader_gen.py" "$tree/backends/vulkan/runtime/gen_vulkan_spv.py"
  touch "$out/src/.complete"
fi

# ---- glslc: Debian's, falling back to a newer glslang where given
glslc=$(command -v glslc)
if [ -n "$glslang_src" ]; then
  if [ ! -x "$out/glslang-build/StandAlone/glslang" ]; then
    cmake -S "$glslang_src" -B "$out/glslang-build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DENABLE_OPT=OFF \
      -DGLSLANG_TESTS=OFF -DENABLE_GLSLANG_BINARIES=ON >/dev/null
    cmake --build "$out/glslang-build" --target glslang-standalone -j "$jobs" >/dev/null
  fi
  glslc=$out/glslc-fallback
  sed "s|@GLSLANG@|$out/glslang-build/StandAlone/glslang|" "$here/glslc-fallback.in" >"$glslc"
  chmod +x "$glslc"
fi

# ---- the runtime
cmake -S "$tree" -B "$out/build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DEXECUTORCH_BUILD_VULKAN=ON -DEXECUTORCH_BUILD_EXTENSION_DATA_LOADER=ON -DEXECUTORCH_BUILD_EXTENSION_FLAT_TENSOR=ON \
  -DEXECUTORCH_BUILD_EXTENSION_RUNNER_UTIL=ON -DEXECUTORCH_BUILD_EXTENSION_EVALUE_UTIL=ON \
  -DEXECUTORCH_BUILD_XNNPACK=OFF -DEXECUTORCH_BUILD_PTHREADPOOL=OFF -DEXECUTORCH_BUILD_CPUINFO=OFF \
  -DEXECUTORCH_BUILD_PORTABLE_OPS=OFF -DEXECUTORCH_BUILD_KERNELS_OPTIMIZED=OFF \
  -DEXECUTORCH_BUILD_KERNELS_QUANTIZED=OFF -DEXECUTORCH_BUILD_DEVTOOLS=OFF -DEXECUTORCH_BUILD_TESTS=OFF \
  -DEXECUTORCH_VULKAN_SHADER_COMPILE_NTHREADS="$jobs" -DGLSLC_PATH="$glslc" -DPYTHON_EXECUTABLE="$(command -v python3)" \
  >"$out/configure.log" 2>&1 || { tail -30 "$out/configure.log" >&2; echo "build.sh: configure failed ($out/configure.log)" >&2; exit 1; }
cmake --build "$out/build" --target vulkan_backend extension_data_loader extension_flat_tensor executorch_core executorch -j "$jobs" \
  >"$out/build.log" 2>&1 || { tail -30 "$out/build.log" >&2; echo "build.sh: build failed ($out/build.log)" >&2; exit 1; }
grep -o 'SKIPPED shader (compile failed): Failed to compile [^:]*' "$out/build.log" | sed 's|.*/||; s|\.glsl$||' | sort -u >"$out/skipped_shaders.txt" || true
echo "$(wc -l <"$out/skipped_shaders.txt") shader(s) left out: $out/skipped_shaders.txt" >&2

# ---- the runner
b=$out/build
g++ -std=c++17 -O2 -fexceptions -DC10_USING_CUSTOM_GENERATED_MACROS -DET_MIN_LOG_LEVEL=Info \
  -DFLATBUFFERS_MAX_ALIGNMENT=1024 -I"$out/src" -I"$tree/runtime/core/portable_type/c10" -I"$b/include" \
  "$here/et_runner.cpp" -o "$out/et_runner.part" \
  -Wl,--whole-archive "$b/backends/vulkan/libvulkan_backend.a" "$b/libexecutorch.a" -Wl,--no-whole-archive \
  "$b/extension/flat_tensor/libextension_flat_tensor.a" "$b/extension/data_loader/libextension_data_loader.a" \
  "$b/libexecutorch_core.a" -ldl -lpthread
mv "$out/et_runner.part" "$out/et_runner"

# ---- the profiling runner
cmd=$(cd "$b" && ninja -t commands vulkan_backend | awk '/runtime\/VulkanBackend\.cpp/ && !f { print; f = 1 }')
[ -n "$cmd" ] || { echo "build.sh: no compile command for VulkanBackend.cpp" >&2; exit 1; }
obj=$(printf '%s\n' "$cmd" | grep -o -- '-o [^ ]*' | cut -c4-)
mkdir -p "$out/prof"
prof_cmd=$(printf '%s\n' "$cmd" | sed "s| -o $obj| -o $out/prof/VulkanBackend.cpp.o|; s| -MD -MT [^ ]* -MF [^ ]*||; s|-DC10_USING_CUSTOM_GENERATED_MACROS|& -DET_EVENT_TRACER_ENABLED|")
(cd "$b" && eval "$prof_cmd")
cp "$b/backends/vulkan/libvulkan_backend.a" "$out/prof/libvulkan_backend_prof.a"
(cd "$out/prof" && ar r libvulkan_backend_prof.a VulkanBackend.cpp.o)
g++ -std=c++17 -O2 -fexceptions -DC10_USING_CUSTOM_GENERATED_MACROS -DET_MIN_LOG_LEVEL=Info -DET_RUNNER_PROFILE \
  -DFLATBUFFERS_MAX_ALIGNMENT=1024 -I"$out/src" -I"$tree/runtime/core/portable_type/c10" -I"$b/include" \
  "$here/et_runner.cpp" -o "$out/et_runner_prof" \
  -Wl,--whole-archive "$out/prof/libvulkan_backend_prof.a" "$b/libexecutorch.a" -Wl,--no-whole-archive \
  "$b/extension/flat_tensor/libextension_flat_tensor.a" "$b/extension/data_loader/libextension_data_loader.a" \
  "$b/libexecutorch_core.a" -ldl -lpthread
echo "$out/et_runner"
