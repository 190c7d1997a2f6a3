#!/usr/bin/env bash
# Decode speed on an NVIDIA GPU machine (run there through the device tool), side by side in one run:
# vkc's KV-cache programs on the Vulkan backend (`vkc run --generate`) and PyTorch eager (transformers
# generate(), fp16, same GPU) for the same architectures: the tiny Llama export of the tests and the
# 1.1B Llama shape (bench/llm_shapes/tinyllama_1.1b, random weights written here).
#   bench/gpu/h200_llm.sh BIN_DIR     BIN_DIR holds vkc and lib/*.so (the libraries ldd lists)
# The machine needs a Vulkan loader: unpack Debian's libvulkan1 and glvnd first (bench/README.md).
set -euo pipefail
BIN=${1:?usage: h200_llm.sh BIN_DIR}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=carried_env.sh
source "$(dirname "$0")/carried_env.sh"
carried_bench "$BIN" h200-llm
N=${N:-64}
PROMPT=17,200,45,3,99,128,250,7
results=$WORK/results.txt
: > "$results"

vkc_gen() {  # NAME PTE
  "$VKC" run "$2" --backend vulkan --generate "$N" --prompt-ids "$PROMPT" --json > "$WORK/$1.json"
  python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print("%-34s prefill %9.1f tok/s  decode %9.1f tok/s  first tokens %s" % (sys.argv[2], d["prefill_tokens_per_s"], d["decode_tokens_per_s"], d["tokens"][:6]))' \
    "$WORK/$1.json" "vkc vulkan $1" | tee -a "$results"
}

echo "== vkc: tiny Llama export (tests/models/decoders), fp32, --max-seq-len 128"
"$VKC" compile "$ROOT/tests/models/decoders/llama/llama_step_dynamo/model.onnx" --max-seq-len 128 -o "$WORK/tiny.pte"
vkc_gen tiny_fp32 "$WORK/tiny.pte"

echo "== vkc: 1.1B Llama shape (TinyLlama), --max-seq-len 2048"
mkdir -p "$WORK/tl"
xz -dc "$ROOT/bench/llm_shapes/tinyllama_1.1b.onnx.xz" > "$WORK/tl/model.onnx"
python3 "$ROOT/bench/fill_external_data.py" "$WORK/tl/model.onnx"
"$VKC" compile "$WORK/tl/model.onnx" --max-seq-len 2048 -o "$WORK/tl_fp32.pte"
vkc_gen 1.1b_fp32 "$WORK/tl_fp32.pte"
"$VKC" compile "$WORK/tl/model.onnx" --max-seq-len 2048 --force-fp16 -o "$WORK/tl_fp16.pte"
vkc_gen 1.1b_fp16 "$WORK/tl_fp16.pte"
"$VKC" compile "$WORK/tl/model.onnx" --max-seq-len 2048 --quantize 8da4w-fp16-embedding -o "$WORK/tl_q.pte"
vkc_gen 1.1b_8da4w-fp16-embedding "$WORK/tl_q.pte"

echo "== where the GPU time of one decode step goes (VKC_VULKAN_PROFILE=1), by operator"
for pte in tl_fp16 tl_q; do
  VKC_VULKAN_PROFILE=1 "$VKC" run "$WORK/$pte.pte" --backend vulkan --generate 8 --prompt-ids "$PROMPT" > /dev/null 2> "$WORK/$pte.prof"
  python3 - "$WORK/$pte.prof" "$pte" <<'PY'
import re, sys, collections
total, per_op, header = 0.0, collections.Counter(), ""
for line in open(sys.argv[1]):
    if line.startswith("vulkan profile:"):
        header = line.strip()
    m = re.match(r"\s+([\d.]+) us\s+[\d.]+%\s+(\S+)", line)
    if m:
        per_op[m.group(2)] += float(m.group(1))
        total += float(m.group(1))
print(f"{sys.argv[2]}: {header}")
for op, us in per_op.most_common(8):
    print(f"   {us:9.1f} us  {100 * us / total:5.1f}%  {op}")
PY
done

echo "== PyTorch eager (transformers generate, greedy), same GPU"
python3 - "$N" <<'PY' | tee -a "$results"
import sys, time, torch, transformers
n = int(sys.argv[1])
prompt = torch.tensor([[17, 200, 45, 3, 99, 128, 250, 7]], device="cuda")
shapes = {
    "tiny": transformers.LlamaConfig(vocab_size=256, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                                     num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=128),
    "1.1b": transformers.LlamaConfig(vocab_size=32000, hidden_size=2048, intermediate_size=5632, num_hidden_layers=22,
                                     num_attention_heads=32, num_key_value_heads=4, max_position_embeddings=2048),
}
for name, cfg in shapes.items():
    for dtype in (torch.float32, torch.float16):
        torch.manual_seed(0)
        m = transformers.AutoModelForCausalLM.from_config(cfg, torch_dtype=dtype).cuda().eval()
        def gen(k):
            torch.cuda.synchronize(); t = time.perf_counter()
            m.generate(prompt, max_new_tokens=k, min_new_tokens=k, do_sample=False, pad_token_id=0)
            torch.cuda.synchronize(); return time.perf_counter() - t
        gen(4)  # warm-up
        t1 = min(gen(1) for _ in range(3))
        tn = min(gen(n) for _ in range(3))
        print(f"{'torch eager ' + name + ' ' + str(dtype).split('.')[-1]:<34} prefill {prompt.shape[1] / t1:9.1f} tok/s  "
              f"decode {(n - 1) / (tn - t1):9.1f} tok/s")
        del m
PY
echo "== summary"
cat "$results"
