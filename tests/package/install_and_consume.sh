#!/usr/bin/env bash
# install_and_consume.sh BUILD_DIR SOURCE_DIR CMAKE BUILD_TOOL GENERATOR MAKE PKG_CONFIG [SANITIZERS]
# Installs BUILD_DIR into a temporary prefix; copies examples/consumer and the example model out
# of the source tree; builds the consumer with find_package(vkc) + vkc_add_model and with
# pkg-config; runs both and the vkc::runtime-only runner (same outputs); checks the .pte with the installed `vkc inspect --json`, that
# vkc_add_model re-runs only when its options or vkc change, and that a failing compile fails
# the build with vkc's diagnostic and leaves the earlier .pte alone.
set -euo pipefail
build_dir=$1 source_dir=$2 cmake=$3 build_tool=$4 generator=$5 make=$6 pkg_config=$7 sanitizers=${8:-}
# A build with -DVKC_SANITIZE installs instrumented libraries; a consumer links them with the same flags.
if [ -n "$sanitizers" ]; then
  export CXXFLAGS="-O2 -fsanitize=$sanitizers" LDFLAGS="-fsanitize=$sanitizers"
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/vkc-package-XXXXXX")
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
step() { echo "--- $*"; }

step "install into $work/prefix"
"$cmake" --install "$build_dir" --prefix "$work/prefix" >/dev/null
prefix=$work/prefix
pc_file=$(find "$prefix" -name vkc.pc)
[ -n "$pc_file" ] || fail "vkc.pc is not installed"
libdir=$(dirname "$(dirname "$pc_file")")  # lib or lib/<multiarch>
for f in "$prefix/bin/vkc" "$prefix/include/vkc/vkc.h" "$libdir/libvkc_compiler.a" "$libdir/cmake/vkc/vkcConfig.cmake" \
         "$libdir/cmake/vkc/VkcAddModel.cmake"; do
  [ -e "$f" ] || fail "$f is not installed"
done
if grep -rl -e "$source_dir" -e "$build_dir" "$libdir/cmake" "$libdir/pkgconfig"; then
  fail "the installed package refers to the source or build tree"
fi

step "copy the consumer and the model out of the source tree"
mkdir -p "$work/src/models"
cp -r "$source_dir/examples/consumer" "$work/src/consumer"
cp "$source_dir/examples/models/tiny_cnn.onnx" "$work/src/models/"
consumer=$work/build

step "configure and build the CMake consumer"
"$cmake" -S "$work/src/consumer" -B "$consumer" -G "$generator" -DCMAKE_MAKE_PROGRAM="$build_tool" \
  -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release >"$work/configure.log" 2>&1 \
  || { cat "$work/configure.log"; fail "configure"; }
"$cmake" --build "$consumer" >"$work/build.log" 2>&1 || { cat "$work/build.log"; fail "build"; }
grep -q "vkc: compiling" "$work/build.log" || fail "vkc_add_model did not run"

step "run it"
"$consumer/vkc_consumer" | tee "$work/run.log"
grep -q "compiled .* in memory" "$work/run.log" || fail "no in-memory compile"
grep -q "is identical to the in-memory compile" "$work/run.log" || fail "build-time and in-memory .pte differ"
grep "^output " "$work/run.log" >"$work/run-outputs.txt" || fail "vkc::run gave no outputs"
if grep -qi "nan\|inf" "$work/run-outputs.txt"; then fail "vkc::run outputs are not finite"; fi

step "run the built .pte with vkc::runtime alone (vkc_runner)"
"$consumer/vkc_runner" "$consumer/tiny_cnn.pte" | tee "$work/runner.log"
cmp -s "$work/run-outputs.txt" "$work/runner.log" || fail "vkc_runner (vkc::runtime) and vkc::run disagree"

step "check the built .pte with the installed vkc inspect --json"
"$prefix/bin/vkc" inspect --json "$consumer/tiny_cnn.pte" >"$work/inspect.json"
grep -q '"backend": "VulkanBackend"' "$work/inspect.json" || fail "no VulkanBackend delegate"
grep -q '"called": true' "$work/inspect.json" || fail "the delegate is not called"

step "a second build does not re-run vkc"
"$cmake" --build "$consumer" >"$work/rebuild.log" 2>&1 || { cat "$work/rebuild.log"; fail "rebuild"; }
if grep -q "vkc: compiling" "$work/rebuild.log"; then fail "vkc_add_model re-ran without a change"; fi

step "new options re-run it"
"$cmake" "$consumer" "-DVKC_CONSUMER_OPTIONS=--input-shape;image=1x3x32x32;--force-fp16" >/dev/null
"$cmake" --build "$consumer" >"$work/options.log" 2>&1 || { cat "$work/options.log"; fail "build with new options"; }
grep -q "vkc: compiling" "$work/options.log" || fail "vkc_add_model did not re-run after an options change"
"$prefix/bin/vkc" inspect --json "$consumer/tiny_cnn.pte" | grep -q '"force_fp16": true' \
  || fail "the new option is not in the .pte"

step "a new vkc re-runs it"
touch "$prefix/bin/vkc"
"$cmake" --build "$consumer" >"$work/new-vkc.log" 2>&1 || { cat "$work/new-vkc.log"; fail "build with a new vkc"; }
grep -q "vkc: compiling" "$work/new-vkc.log" || fail "vkc_add_model did not re-run after vkc changed"

step "a failing compile fails the build with vkc's diagnostics"
"$cmake" "$consumer" "-DVKC_CONSUMER_OPTIONS=--input-shape;image=1x3x32x32;--quantize;9da4w" >/dev/null
if "$cmake" --build "$consumer" >"$work/failing.log" 2>&1; then fail "the build succeeded"; fi
grep -q "vkc: error: --quantize '9da4w': unknown recipe '9da4w'" "$work/failing.log" \
  || { cat "$work/failing.log"; fail "vkc's diagnostic is not in the build output"; }
"$prefix/bin/vkc" inspect --json "$consumer/tiny_cnn.pte" | grep -q '"force_fp16": true' \
  || fail "the failed compile changed the earlier .pte"

step "build the pkg-config consumer"
[ -n "$pkg_config" ] || fail "pkg-config not found"
mkdir -p "$work/pc"
export PKG_CONFIG_PATH="$libdir/pkgconfig"
if [ -n "$make" ]; then
  "$make" -s -C "$work/pc" -f "$work/src/consumer/Makefile" PKG_CONFIG="$pkg_config" >"$work/pc.log" 2>&1 \
    || { cat "$work/pc.log"; fail "pkg-config build (make)"; }
else  # what the Makefile does
  # shellcheck disable=SC2046
  c++ -std=c++20 -O2 $("$pkg_config" --cflags vkc) -o "$work/pc/vkc_consumer_pc" "$work/src/consumer/main.cpp" \
    $("$pkg_config" --libs vkc) >"$work/pc.log" 2>&1 || { cat "$work/pc.log"; fail "pkg-config build (c++)"; }
fi
"$work/pc/vkc_consumer_pc" "$work/src/models/tiny_cnn.onnx" "$consumer/tiny_cnn.pte" | tee "$work/pc-run.log"
grep -q "compiled .* in memory" "$work/pc-run.log" || fail "pkg-config consumer"
grep "^output " "$work/pc-run.log" | cmp -s - "$work/run-outputs.txt" || fail "pkg-config consumer's run differs"
echo "PASS"
