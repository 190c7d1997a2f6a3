#!/usr/bin/env python3
"""Exports two more forms of the tiny decoders of export_decoders.py (same weights: same seed and
layer scale), as real exports write them:

  llama/llama_step16_<exporter>/    the Llama decode step exported from the model in fp16
                                    (model.half()): fp16 weights, inputs and caches; data set 0 is
                                    one token at the prompt's cache (past 8), with onnxruntime's
                                    fp16 outputs
  <family>/<family>_nopos_<exporter>/  a decode step without position ids, as older optimum exports
                                    are: input_ids [1, sequence_length], attention_mask
                                    [1, past_sequence_length + sequence_length], past key/values;
                                    the model computes its positions from the cache length (Llama,
                                    GPT-2) or from the mask (OPT). Data sets as export_mask_steps.py.

with <exporter> `legacy` (TorchScript) and `dynamo`. Run where PyTorch, transformers, onnx and
onnxruntime are (the GPU machine), from the repository root:
  python3 tests/models/export_step_variants.py tests/models/decoders
"""
import json
import os
import sys
import traceback

import numpy as np
import torch
import transformers

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import export_decoders as ed  # noqa: E402
import export_mask_steps as ems  # noqa: E402
from onnx_test_data import save_set  # noqa: E402


class NoPos(torch.nn.Module):
    def __init__(self, m):
        super().__init__()
        self.m = m

    def forward(self, input_ids, attention_mask, past_key_0, past_value_0, past_key_1, past_value_1):
        past = (past_key_0, past_value_0, past_key_1, past_value_1)
        cache = transformers.DynamicCache(config=self.m.config)
        for i in range(2):
            cache.update(past[2 * i], past[2 * i + 1], i)
        o = self.m(input_ids=input_ids, attention_mask=attention_mask, past_key_values=cache, use_cache=True)
        pres = []
        for i in range(2):
            pres += [o.past_key_values.layers[i].keys, o.past_key_values.layers[i].values]
        return (o.logits, *pres)


def fp16_steps(out, report):
    cfg = ed.configs()["llama"]()
    with open(os.path.join(out, "llama", "greedy.json")) as f:
        scale = json.load(f).get("layer_init_scale", 3.0)
    m16 = ed.make_model(cfg, scale).half()
    in_names, out_names = ed.step_names(2)
    dyn = {}
    for i in range(2):
        for kind in ("key", "value"):
            dyn[f"past_{kind}_{i}"] = {2: "past"}
            dyn[f"present_{kind}_{i}"] = {2: "past_plus_1"}
    model = ed.family_model(out, "llama", cfg)
    past8 = [p.astype(np.float16) for p in ed.prompt_cache(model, cfg, ed.PROMPT)]
    for exporter in ("legacy", "dynamo"):
        name = f"llama_step16_{exporter}"
        folder = os.path.join(out, "llama", name)
        try:
            args = (torch.tensor([[5]]), torch.tensor([[8]]), *[torch.tensor(p) for p in past8])
            ed.export(ed.Step(m16), args, os.path.join(folder, "model.onnx"), exporter == "dynamo", in_names,
                      out_names, dyn)
            sess = ed.ort_session(os.path.join(folder, "model.onnx"))
            arrays = [np.array([[5]], dtype=np.int64), np.array([[8]], dtype=np.int64), *past8]
            save_set(folder, 0, arrays, sess.run(None, ed.feed(sess, arrays)))
            report.append(f"{name}: ok")
        except Exception as e:  # noqa: BLE001 - every failure is reported, none hidden
            report.append(f"{name}: FAILED {type(e).__name__}: {str(e).splitlines()[0][:200]}")
            traceback.print_exc()


def nopos_steps(out, report, families=("llama", "gpt2", "opt")):
    for fam in families:
        ems.export_family(out, fam, ed.configs()[fam](), report, NoPos, "nopos", positions=False)


def main():
    out = sys.argv[1]
    report = []
    fp16_steps(out, report)
    nopos_steps(out, report)
    print("\n".join(report))


if __name__ == "__main__":
    main()
