#!/usr/bin/env bash
# The runtime's cooperative-matrix linears on a GPU machine: fp16 linear layers of several shapes
# (bench/gpu/make_linear_stack.py, MatMul + Add as exporters write them), compiled with
# --force-fp16, run by `vkc run --backend vulkan` with VKC_VULKAN_COOPMAT=0 and 1, each checked
# against `vkc run --backend cpu` (fp32 math, fp16 stores), with timings and, from
# VKC_VULKAN_PROFILE=1, each dispatch's GPU time.
#   [SHAPES="name:tokens:dim:hidden ..."] bench/gpu/coopmat_runtime.sh VKC [WORKDIR]
# The machine needs a Vulkan loader (see bench/README.md) and python3 with onnx and numpy.
set -euo pipefail
VKC=$(realpath "${1:?usage: coopmat_runtime.sh VKC [WORKDIR]}")
HERE=$(cd "$(dirname "$0")" && pwd)
W=${2:-$(mktemp -d)}
mkdir -p "$W" && cd "$W"
shapes=${SHAPES:-"odd:300:264:520 mid:512:1024:4096 wide:2048:1024:4096 deep:2048:4096:1024"}  # NAME:TOKENS:DIM:HIDDEN
prep() {  # NAME TOKENS DIM HIDDEN: one Linear DIM -> HIDDEN over TOKENS rows
  python3 "$HERE/make_linear_stack.py" "$1.onnx" "$2" "$3" "$4" 0
  "$VKC" compile "$1.onnx" --force-fp16 -o "$1.pte" > /dev/null
  "$VKC" run "$1.pte" --backend cpu --random 1 --save "cpu_$1" > /dev/null
}
for s in $shapes; do IFS=: read -r n t d h <<< "$s"; prep "$n" "$t" "$d" "$h" & done
wait
for s in $shapes; do
  IFS=: read -r n t d h <<< "$s"
  echo "== $n: [$t, $d] x [$d, $h]"
  for c in 0 1; do
    echo "-- VKC_VULKAN_COOPMAT=$c"
    VKC_VULKAN_COOPMAT=$c "$VKC" run "$n.pte" --backend vulkan --random 1 --expect "cpu_$n" --rtol 2e-2 --atol 2e-2 \
      --repeat 20 2>&1 | grep -E "err|time:" || true
    VKC_VULKAN_COOPMAT=$c VKC_VULKAN_PROFILE=1 "$VKC" run "$n.pte" --backend vulkan --random 1 --repeat 5 2>&1 |
      grep -E " us " || true
  done
done
