#!/usr/bin/env python3
"""Exports the tiny Llama of export_decoders.py (same weights: same seed and layer scale) as a
4-token step graph with a concat-style cache, for chunked prefill under --max-seq-len:

  llama/llama_step4_dynamo/model.onnx   input_ids [1, 4], position_ids [1, 4],
                                        past_key_i / past_value_i [1, Hkv, past, D] (past symbolic)
                                        -> logits [1, 4, V], present_key_i / present_value_i
  llama/llama_step4_dynamo/test_data_set_0   the prompt's first 4 tokens at an empty cache, and
                                        onnxruntime's outputs
  llama/prefill_greedy.json             transformers' greedy tokens for prompts of 8 (two whole
                                        chunks) and 6 tokens (a padded last chunk)

Run where PyTorch, transformers, onnx and onnxruntime are (the GPU machine), from tests/models:
  python3 export_prefill_chunks.py decoders
"""
import json
import os
import sys

import numpy as np
import torch

import export_decoders as ed

CHUNK = 4


def main():
    out = sys.argv[1]
    cfg = ed.configs()["llama"]()
    with open(os.path.join(out, "llama", "greedy.json")) as f:
        scale = json.load(f).get("layer_init_scale", 3.0)
    model = ed.make_model(cfg, scale)
    assert ed.generate(model) == json.load(open(os.path.join(out, "llama", "greedy.json")))["hf_generate"]
    layers = cfg.num_hidden_layers
    in_names, out_names = ed.step_names(layers)
    dyn = {}
    for i in range(layers):
        for kind in ("key", "value"):
            dyn[f"past_{kind}_{i}"] = {2: "past"}
            dyn[f"present_{kind}_{i}"] = {2: "past_plus_4"}
    ids = ed.PROMPT[:CHUNK]
    past = ed.prompt_cache(model, cfg, ed.PROMPT[:3])  # an example past of 3 positions
    args = (torch.tensor([ids]), torch.tensor([list(range(3, 3 + CHUNK))]), *[torch.tensor(p) for p in past])
    folder = os.path.join(out, "llama", "llama_step4_dynamo")
    path = os.path.join(folder, "model.onnx")
    ed.export(ed.Step(model), args, path, True, in_names, out_names, dyn)
    sess = ed.ort_session(path)
    empty = ed.empty_cache(model, cfg)
    arrays = [np.array([ids], dtype=np.int64), np.array([list(range(CHUNK))], dtype=np.int64), *empty]
    res = sess.run(None, ed.feed(sess, arrays))
    ed.save_set(folder, 0, arrays, res)
    with torch.no_grad():
        ref = model(input_ids=torch.tensor([ids])).logits.numpy()
    print(f"step4 vs torch: max abs {float(np.abs(res[0] - ref).max()):.2e}")
    greedy = {"chunk": CHUNK}
    for n in (8, 6):
        prompt = ed.PROMPT[:n]
        with torch.no_grad():
            gen = model.generate(torch.tensor([prompt]), max_new_tokens=ed.NEW_TOKENS, do_sample=False,
                                 min_new_tokens=ed.NEW_TOKENS, eos_token_id=None, pad_token_id=0)
        greedy[f"prompt_{n}"] = prompt
        greedy[f"hf_generate_{n}"] = gen[0, n:].tolist()
    with open(os.path.join(out, "llama", "prefill_greedy.json"), "w") as f:
        json.dump(greedy, f)
        f.write("\n")
    print(json.dumps(greedy))


if __name__ == "__main__":
    main()
