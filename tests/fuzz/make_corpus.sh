#!/usr/bin/env bash
# Rebuilds the seed corpora in tests/fuzz/corpus/<target>/ from files in the repository and a vkc
# binary: ONNX models (make_seed_models.py + the bundled examples), the .pte programs vkc writes for
# them, their constants as .ptd files, the Vulkan payloads inside those, the shader specs and device profiles, tensor files.
#   tests/fuzz/make_corpus.sh [VKC]      (default build/compiler/vkc; needs python3 with onnx, numpy)
set -euo pipefail
cd "$(dirname "$0")"
vkc=$(realpath "${1:-../../build/compiler/vkc}")
c=corpus
rm -rf "$c" && mkdir -p "$c"/{onnx,pte,ptd,vk_payload,shader_spec,device_profile,tensor_file,executor}
PYENV_VERSION=${PYENV_VERSION:-system} python3 make_seed_models.py "$c/onnx"
cp ../../examples/models/tiny_cnn.onnx "$c/onnx/"
for m in "$c"/onnx/*.onnx; do
  n=$(basename "$m" .onnx)
  args=(--no-progress --no-embed-shaders)
  [[ $n == tiny_cnn ]] && args=(--no-progress --input-shape image=1x3x32x32)  # one with SPIR-V inside
  "$vkc" compile "$m" -o "$c/pte/$n.pte" "${args[@]}" >/dev/null 2>&1 || continue
  # Its constants as ExecuTorch's external data file (the .pte of that pair is not kept).
  "$vkc" compile "$m" -o "$c/ptd/$n.pte" "${args[@]}" --external-weights >/dev/null 2>&1 && rm "$c/ptd/$n.pte"
  cp "$c/pte/$n.pte" "$c/executor/"
  # The payload: from 4 bytes before "VH00" to the end of its bytes section (header fields).
  python3 - "$c/pte/$n.pte" "$c/vk_payload/$n.vh00" <<'PY'
import struct, sys
b = open(sys.argv[1], "rb").read()
i = b.find(b"VH00") - 4
fb_off, fb_size, bytes_off, bytes_size = struct.unpack_from("<IIIQ", b, i + 10)
open(sys.argv[2], "wb").write(b[i:i + bytes_off + bytes_size])
PY
done
for s in conv2d linear softmax sdpa_kv_cache; do cp "../../shader-specs/$s.yaml" "$c/shader_spec/" 2>/dev/null || true; done
cp ../../partitioner/profiles/*.yaml "$c/device_profile/"
cp ../models/decoders/llama/llama_step_dynamo/test_data_set_0/input_{0,1}.pb "$c/tensor_file/"
cp ../models/quantized/cnn_fp32/test_data_set_0/input_0.pb "$c/tensor_file/cnn_input.pb"
du -sh "$c"/*
