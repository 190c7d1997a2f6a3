#!/usr/bin/env python3
"""Exports the symbolic-dim part of the real-exporter corpus: tiny random-weight models whose
inputs keep named dynamic dims, as PyTorch's exporters write them for variable-length text and
variable-size images. vkc compiles each for a list of sizes (`--dim sequence=5,12`) and the program
picks its variant from the input's shape as it runs (tests/models/dynamic_dims_exports_test.cpp).

Run on a machine with PyTorch (2.11), torchvision, transformers (5.x), onnx and onnxruntime (the GPU
machine has them); the outputs are committed under tests/models/dynamic_dims/.

Models (random weights):
  bert_legacy     transformers BertModel (eager attention), torch.onnx.export(dynamo=False) with
                  dynamic_axes {0: "batch", 1: "sequence"} on every input and output
  bert_dynamo     the same model (sdpa attention), torch.onnx.export(dynamo=True) with dynamic_shapes
                  Dim("sequence") on the sequence axis (batch static 1)
  mnv3_legacy     torchvision mobilenet_v3_small (width 0.5, 10 classes), dynamic_axes
                  {2: "height", 3: "width"}
Each folder holds model.onnx and data sets of different sizes (test_data_set_0, _1, ...) with
onnxruntime's outputs of that very file; report.json says the input dims each file declares and the
torch-vs-onnxruntime error per set.

Usage: python3 export_dynamic_dims.py OUT_DIR
"""
import json
import os
import sys

import numpy as np
import onnx
import onnxruntime as ort
import torch

from onnx_test_data import save_set

SEED = 0


class Outputs(torch.nn.Module):
    """A transformers model returning a tuple of the named outputs."""

    def __init__(self, m, names):
        super().__init__()
        self.m, self.names = m, names

    def forward(self, ids, mask, types):
        out = self.m(input_ids=ids, attention_mask=mask, token_type_ids=types)
        return tuple(getattr(out, n) for n in self.names)


def bert(rng, attention):
    import transformers as tf
    cfg = tf.BertConfig(vocab_size=1000, max_position_embeddings=64, type_vocab_size=2, hidden_size=64,
                        num_hidden_layers=2, num_attention_heads=4, intermediate_size=128)
    m = tf.BertModel._from_config(cfg, attn_implementation=attention)
    with torch.no_grad():  # random init is std 0.02: widen so attention is not uniform
        for _, p in m.named_parameters():
            if p.dim() >= 2:
                p.mul_(3.0)
    sets = []
    for s, pad in ((5, 1), (12, 3), (16, 0)):
        ids = rng.integers(0, 1000, (1, s), dtype=np.int64)
        mask = np.ones((1, s), np.int64)
        if pad:
            mask[0, s - pad:] = 0
        types = np.zeros((1, s), np.int64)
        types[0, s // 2:] = 1
        sets.append([ids, mask, types])
    return Outputs(m.eval().float(), ["last_hidden_state", "pooler_output"]), sets


class Scaled(torch.nn.Module):
    """Randomly initialised CNNs end in logits of 1e-8 or so, which any tolerance would pass: the
    outputs times a power of two (exact in floating point) that brings their largest to about 1."""

    def __init__(self, m, scale):
        super().__init__()
        self.m, self.scale = m, scale

    def forward(self, x):
        return self.m(x) * self.scale


def mnv3(rng):
    import torchvision
    m = torchvision.models.mobilenet_v3_small(width_mult=0.5, num_classes=10).eval()
    sets = [[rng.standard_normal((1, 3, h, w), dtype=np.float32)] for h, w in ((64, 64), (96, 80))]
    with torch.no_grad():
        top = float(m(torch.from_numpy(sets[0][0])).abs().max())
    return Scaled(m, float(2.0 ** round(-np.log2(top)))), sets


def export(name, module, sets, folder):
    names = {"bert": ["input_ids", "attention_mask", "token_type_ids"], "mnv3": ["input"]}[name.split("_")[0]]
    outs = {"bert": ["last_hidden_state", "pooler_output"], "mnv3": ["logits"]}[name.split("_")[0]]
    path = os.path.join(folder, "model.onnx")
    args = tuple(torch.from_numpy(a) for a in sets[0])
    # torch's outputs first: the TorchScript export leaves the module computing other numbers.
    refs = []
    with torch.no_grad():
        for arrays in sets:
            ref = module(*[torch.from_numpy(a) for a in arrays])
            refs.append(ref if isinstance(ref, tuple) else (ref,))
    if name == "bert_legacy":
        axes = {n: {0: "batch", 1: "sequence"} for n in names}
        axes.update({"last_hidden_state": {0: "batch", 1: "sequence"}, "pooler_output": {0: "batch"}})
        torch.onnx.export(module, args, path, dynamo=False, input_names=names, output_names=outs,
                          dynamic_axes=axes, opset_version=17)
    elif name == "bert_dynamo":
        seq = torch.export.Dim("sequence", min=2, max=64)
        torch.onnx.export(module, args, path, dynamo=True, input_names=names, output_names=outs,
                          dynamic_shapes=({1: seq}, {1: seq}, {1: seq}), external_data=False)
    elif name == "mnv3_legacy":
        torch.onnx.export(module, args, path, dynamo=False, input_names=names, output_names=outs,
                          dynamic_axes={"input": {2: "height", 3: "width"}}, opset_version=17)
    model = onnx.load(path)
    onnx.checker.check_model(model)
    dims = {i.name: [d.dim_param or d.dim_value for d in i.type.tensor_type.shape.dim] for i in model.graph.input}
    sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    entry = {"nodes": len(model.graph.node), "inputs": dims, "sets": []}
    for i, arrays in enumerate(sets):
        res = sess.run(None, dict(zip(names, arrays)))
        save_set(folder, i, arrays, res, names)
        err = max(float(np.abs(r - t.numpy()).max()) for r, t in zip(res, refs[i]))
        entry["sets"].append({"input_shapes": [list(a.shape) for a in arrays],
                              "output_shapes": [list(r.shape) for r in res], "ort_vs_torch_max_abs": err})
    return entry


def main():
    out = sys.argv[1]
    report = {}
    for name in ("bert_legacy", "bert_dynamo", "mnv3_legacy"):
        torch.manual_seed(SEED)
        rng = np.random.default_rng(SEED)
        if name.startswith("bert"):
            module, sets = bert(rng, "eager" if name == "bert_legacy" else "sdpa")
        else:
            module, sets = mnv3(rng)
        folder = os.path.join(out, name)
        os.makedirs(folder, exist_ok=True)
        try:
            report[name] = export(name, module, sets, folder)
        except Exception as e:  # noqa: BLE001 - the report says what failed
            report[name] = {"error": f"{type(e).__name__}: {e}"[:2000]}
        print(name, report[name], flush=True)
    with open(os.path.join(out, "report.json"), "w") as f:
        json.dump(report, f, indent=1)


if __name__ == "__main__":
    main()
