#!/usr/bin/env bash
# The cooperative-matrix proof on an NVIDIA GPU machine (run there through the device tool):
# NV and KHR coopmat fp16 matmul variants from the shader library, checked against a CPU
# reference at a small size and timed at 4096^3, next to torch.matmul on the same GPU.
#   bench/gpu/h200_coopmat.sh DIR     DIR holds coopmat_check, vkc_shaders.vksl and lib/*.so
# The machine needs a Vulkan loader: unpack Debian's libvulkan1 first (see bench/README.md).
set -euo pipefail
DIR=${1:?usage: h200_coopmat.sh DIR}
# shellcheck source=carried_env.sh
source "$(dirname "$0")/carried_env.sh"
carried_env "$DIR"
echo "== correctness (256^3 and edge sizes, CPU reference)"
"$DIR/coopmat_check" "$DIR/vkc_shaders.vksl" --size 256 --iters 3 --require
echo "== 4096^3"
"$DIR/coopmat_check" "$DIR/vkc_shaders.vksl" --size 4096 --iters 100 --require
echo "== torch.matmul"
python3 "$(dirname "$0")/torch_matmul.py" 4096 100
