#!/usr/bin/env python3
"""Exports full-size LLM architectures as decode-step graphs, without their weights.

For the recipe cells and the compile benchmark (bench/llm_recipes.sh): torch.onnx's dynamo exporter
writes each model the way it writes a real checkpoint, but the weights (uninitialized memory: the
model is built on the meta device and materialized empty) are not kept. Float initializers stay
external-data references (location, offset, length) into a file this script deletes;
bench/fill_external_data.py writes random values there at bench time. Integer initializers are
stored inline so that every shape constant survives.

Shapes (from the models' published configs): TinyLlama-1.1B (the "1.1B Llama-shaped" export),
Llama-3.2-1B, Qwen3-0.6B, Phi-4-mini. Each graph: input_ids [1, 1], position_ids [1, 1],
past_key/value_i [1, Hkv, past, D] (past symbolic) -> logits, present_key/value_i. With
--sequence the token count is symbolic too (input_ids / position_ids [1, sequence], for
--dim sequence=1..S prefill benchmarks; written to OUT_DIR/<name>_seq).

Run where PyTorch, transformers and onnx are (the GPU machine):
  python3 export_llm_shapes.py [--sequence] OUT_DIR [name ...]
"""
import os
import sys
import time

import onnx
import torch
import transformers

CONFIGS = {
    "tinyllama_1.1b": lambda: transformers.LlamaConfig(
        vocab_size=32000, hidden_size=2048, intermediate_size=5632, num_hidden_layers=22, num_attention_heads=32,
        num_key_value_heads=4, max_position_embeddings=2048, rope_theta=10000.0, tie_word_embeddings=False),
    "llama3.2_1b": lambda: transformers.LlamaConfig(
        vocab_size=128256, hidden_size=2048, intermediate_size=8192, num_hidden_layers=16, num_attention_heads=32,
        num_key_value_heads=8, head_dim=64, max_position_embeddings=131072, rope_theta=500000.0,
        tie_word_embeddings=True,
        rope_scaling={"rope_type": "llama3", "factor": 32.0, "high_freq_factor": 4.0, "low_freq_factor": 1.0,
                      "original_max_position_embeddings": 8192}),
    "qwen3_0.6b": lambda: transformers.Qwen3Config(
        vocab_size=151936, hidden_size=1024, intermediate_size=3072, num_hidden_layers=28, num_attention_heads=16,
        num_key_value_heads=8, head_dim=128, max_position_embeddings=40960, rope_theta=1000000.0,
        tie_word_embeddings=True),
    "phi4_mini": lambda: transformers.Phi3Config(
        vocab_size=200064, hidden_size=3072, intermediate_size=8192, num_hidden_layers=32, num_attention_heads=24,
        num_key_value_heads=8, max_position_embeddings=131072, rope_theta=10000.0, partial_rotary_factor=0.75,
        tie_word_embeddings=True, pad_token_id=199999),
}


class Step(torch.nn.Module):
    def __init__(self, m):
        super().__init__()
        self.m = m
        self.layers = m.config.num_hidden_layers

    def forward(self, input_ids, position_ids, *past):
        cache = transformers.DynamicCache(config=self.m.config)
        for i in range(self.layers):
            cache.update(past[2 * i], past[2 * i + 1], i)
        out = self.m(input_ids=input_ids, position_ids=position_ids, past_key_values=cache, use_cache=True)
        pres = []
        for layer in out.past_key_values.layers:
            pres += [layer.keys, layer.values]
        return (out.logits, *pres)


def export(name, out_dir, sequence=False):
    cfg = CONFIGS[name]()
    t0 = time.time()
    with torch.device("meta"):
        model = transformers.AutoModelForCausalLM.from_config(cfg, attn_implementation="sdpa")
    model = model.to_empty(device="cpu").eval()
    layers = cfg.num_hidden_layers
    hd = getattr(cfg, "head_dim", None) or cfg.hidden_size // cfg.num_attention_heads
    past = [torch.zeros(1, cfg.num_key_value_heads, 8, hd) for _ in range(2 * layers)]
    names_in = ["input_ids", "position_ids"] + [f"past_{k}_{i}" for i in range(layers) for k in ("key", "value")]
    names_out = ["logits"] + [f"present_{k}_{i}" for i in range(layers) for k in ("key", "value")]
    dim = torch.export.Dim("past", min=1, max=4096)
    # forward(input_ids, position_ids, *past): the varargs take one tuple of specs.
    tokens = None
    ids, pos = torch.tensor([[1]]), torch.tensor([[8]])
    if sequence:  # an example of 4 tokens: a size of 1 would specialize the dim
        tokens = {1: torch.export.Dim("sequence", min=1, max=2048)}
        ids, pos = torch.tensor([[1, 2, 3, 4]]), torch.tensor([[8, 9, 10, 11]])
    dynamic = (tokens, tokens, tuple({2: dim} for _ in range(2 * layers)))
    prog = torch.onnx.export(Step(model), (ids, pos, *past), None, dynamo=True,
                             dynamic_shapes=dynamic, input_names=names_in, output_names=names_out,
                             external_data=True)
    folder = os.path.join(out_dir, name + ("_seq" if sequence else ""))
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, "model.onnx")
    prog.save(path, external_data=True)
    m = onnx.load(path, load_external_data=False)
    data_path = None
    inlined = 0
    for t in m.graph.initializer:
        if t.data_location != onnx.TensorProto.EXTERNAL:
            continue
        info = {e.key: e.value for e in t.external_data}
        data_path = os.path.join(folder, info["location"])
        if t.data_type in (onnx.TensorProto.FLOAT, onnx.TensorProto.FLOAT16, onnx.TensorProto.BFLOAT16):
            continue
        with open(data_path, "rb") as f:
            f.seek(int(info.get("offset", 0)))
            raw = f.read(int(info["length"]))
        del t.external_data[:]
        t.data_location = onnx.TensorProto.DEFAULT
        t.raw_data = raw
        inlined += 1
    onnx.save(m, path)
    if data_path and os.path.exists(data_path):
        os.remove(data_path)
    print(f"{name}: {len(m.graph.node)} nodes, {len(m.graph.initializer)} initializers ({inlined} inlined), "
          f"{os.path.getsize(path) / 1e6:.1f} MB graph, {time.time() - t0:.0f} s", flush=True)


def main():
    args = sys.argv[1:]
    sequence = "--sequence" in args
    args = [a for a in args if a != "--sequence"]
    out_dir = args[0]
    for name in args[1:] or CONFIGS:
        export(name, out_dir, sequence)


if __name__ == "__main__":
    main()
