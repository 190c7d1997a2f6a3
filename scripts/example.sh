#!/usr/bin/env bash
# README command 1: install what is missing, build, compile the bundled example
# model to build/tiny_cnn.pte and print its inspection.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh -DVKC_BUILD_TESTS=OFF
BUILD_DIR=${VKC_BUILD_DIR:-build}
"$BUILD_DIR/compiler/vkc" compile examples/models/tiny_cnn.onnx --input-shape image=1x3x32x32 -o "$BUILD_DIR/tiny_cnn.pte"
"$BUILD_DIR/compiler/vkc" inspect "$BUILD_DIR/tiny_cnn.pte"
