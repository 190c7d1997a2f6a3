#!/usr/bin/env python3
"""Exports the tiny decoders of export_decoders.py (same weights: same seed and layer scale) as step
graphs whose token count is symbolic too, for a bounded dynamic sequence under --max-seq-len:

  <family>/<family>_dyn_<exporter>/model.onnx
      input_ids [1, sequence], position_ids [1, sequence],
      past_key_i / past_value_i [1, Hkv, past, D]      (sequence and past symbolic)
      -> logits [1, sequence, V], present_key_i / present_value_i [1, Hkv, past + sequence, D]
  <family>/<family>_dyn_<exporter>/test_data_set_N    inputs and onnxruntime's outputs:
      0: the prompt's first 5 tokens at an empty cache
      1: 3 tokens at a past of 5 (the real cache of the prompt's first 5)
      2: 1 token at a past of 8 (the whole prompt's cache)

<exporter> is `dynamo` (torch.onnx.export(dynamo=True), Dim("sequence"), Dim("past")) and `legacy`
(TorchScript, dynamic_axes). The greedy tokens to compare with are the family's greedy.json.

Run where PyTorch, transformers, onnx and onnxruntime are (the GPU machine), from tests/models:
  python3 export_dynamic_steps.py decoders [family ...]
"""
import sys

import numpy as np
import torch

import export_decoders as ed


def do_family(out, fam, cfg, report):
    model = ed.family_model(out, fam, cfg)
    layers = cfg.num_hidden_layers
    in_names, out_names = ed.step_names(layers)
    dyn = {"input_ids": {1: "sequence"}, "position_ids": {1: "sequence"}, "logits": {1: "sequence"}}
    for i in range(layers):
        for kind in ("key", "value"):
            dyn[f"past_{kind}_{i}"] = {2: "past"}
            dyn[f"present_{kind}_{i}"] = {2: "total"}
    ids = ed.PROMPT[3:7]  # the example: 4 tokens at a past of 3

    def export_fn(path, dynamo, past3):
        args = (torch.tensor([ids]), torch.tensor([list(range(3, 7))]), *[torch.tensor(p) for p in past3])
        ed.export(ed.Step(model), args, path, dynamo, in_names, out_names, dyn)

    def arrays_of(ids, pos, past):
        return [np.array([ids], dtype=np.int64), np.array([list(range(pos, pos + len(ids)))], dtype=np.int64), *past]

    ed.export_symbolic_steps(out, fam, model, cfg, "dyn", export_fn, arrays_of, report)


def main():
    out = sys.argv[1]
    want = sys.argv[2:] or ["llama", "qwen3"]
    report = []
    for fam, make_cfg in ed.configs().items():
        if fam in want:
            do_family(out, fam, make_cfg(), report)
    print("\n".join(report))


if __name__ == "__main__":
    main()
