#!/usr/bin/env python3
"""Exports the tiny decoders of export_decoders.py (same weights: same seed and layer scale) in the
form Hugging Face optimum (and the onnx-community / transformers.js models made with it) writes a
decoder with a cache: an attention mask beside the tokens and positions, everything symbolic.

  <family>/<family>_mask_<exporter>/model.onnx
      input_ids [1, sequence_length], attention_mask [1, past_sequence_length + sequence_length],
      position_ids [1, sequence_length],
      past_key_values.<i>.key / .value [1, Hkv, past_sequence_length, D]
      -> logits [1, sequence_length, V], present.<i>.key / .value [1, Hkv, past + sequence, D]
  <family>/<family>_mask_<exporter>/test_data_set_N    inputs and onnxruntime's outputs:
      0: the prompt's first 5 tokens at an empty cache
      1: 3 tokens at a past of 5 (the real cache of the prompt's first 5)
      2: 1 token at a past of 8 (the whole prompt's cache)
      (the mask all ones: batch 1, no padding, as a generation loop feeds it)

<exporter> is `dynamo` (torch.onnx.export(dynamo=True); the mask's length is a dim of its own that
torch.export relates to the others) and `legacy` (TorchScript, optimum's dynamic_axes names). The
greedy tokens to compare with are the family's greedy.json.

Run where PyTorch, transformers, onnx and onnxruntime are (the GPU machine), from tests/models:
  python3 export_mask_steps.py decoders [family ...]
"""
import os
import sys

import numpy as np
import onnx
import torch
import transformers

import export_decoders as ed
from onnx_test_data import save_report

SEQ, PAST = "sequence_length", "past_sequence_length"
TOTAL = "past_sequence_length + sequence_length"


class MaskStep(torch.nn.Module):
    def __init__(self, m):
        super().__init__()
        self.m = m
        assert m.config.num_hidden_layers == 2, "forward names two layers' caches"

    def forward(self, input_ids, attention_mask, position_ids, past_key_0, past_value_0, past_key_1, past_value_1):
        past = (past_key_0, past_value_0, past_key_1, past_value_1)
        cache = transformers.DynamicCache(config=self.m.config)
        for i in range(2):
            cache.update(past[2 * i], past[2 * i + 1], i)
        out = self.m(input_ids=input_ids, attention_mask=attention_mask, position_ids=position_ids,
                     past_key_values=cache, use_cache=True)
        pres = []
        for i in range(2):
            layer = out.past_key_values.layers[i]
            pres += [layer.keys, layer.values]
        return (out.logits, *pres)


def names(positions=True):
    ins = ["input_ids", "attention_mask"] + (["position_ids"] if positions else [])
    outs = ["logits"]
    for i in range(2):
        ins += [f"past_key_values.{i}.key", f"past_key_values.{i}.value"]
        outs += [f"present.{i}.key", f"present.{i}.value"]
    return ins, outs


def export(module, args, path, dynamo, positions=True):
    """optimum's names and dims; `positions`: whether the step takes position_ids."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    module.eval()  # a wrapper module starts in training mode: the dynamo exporter would keep dropout
    in_names, out_names = names(positions)
    if dynamo:
        seq = torch.export.Dim(SEQ, min=1, max=64)
        past = torch.export.Dim(PAST, min=1, max=64)
        kv = {2: past}
        ds = ({1: seq}, {1: torch.export.Dim.AUTO}) + (({1: seq},) if positions else ()) + (kv, kv, kv, kv)
        prog = torch.onnx.export(module, args, None, dynamo=True, dynamic_shapes=ds, input_names=in_names,
                                 output_names=out_names, external_data=False)
        prog.save(path, external_data=False)
    else:
        axes = {"input_ids": {1: SEQ}, "attention_mask": {1: TOTAL}, "logits": {1: SEQ}}
        if positions:
            axes["position_ids"] = {1: SEQ}
        for n in in_names[len(in_names) - 4:]:
            axes[n] = {2: PAST}
        for n in out_names[1:]:
            axes[n] = {2: TOTAL}
        torch.onnx.export(module, args, path, dynamo=False, input_names=in_names, output_names=out_names,
                          dynamic_axes=axes, opset_version=17, do_constant_folding=True)
    onnx.checker.check_model(onnx.load(path))


def export_family(out, fam, cfg, report, module, form, positions=True):
    """The family's steps in optimum's form (`positions`: with position_ids) as <fam>_<form>_<exporter>."""
    model = ed.family_model(out, fam, cfg)
    ids = ed.PROMPT[3:7]  # the example: 4 tokens at a past of 3

    def export_fn(path, dynamo, past3):
        args = (torch.tensor([ids]), torch.ones((1, 3 + len(ids)), dtype=torch.int64))
        if positions:
            args += (torch.tensor([list(range(3, 3 + len(ids)))]),)
        export(module(model), args + tuple(torch.tensor(p) for p in past3), path, dynamo, positions)

    def arrays_of(ids, pos, past):
        arrays = [np.array([ids], dtype=np.int64), np.ones((1, pos + len(ids)), dtype=np.int64)]
        if positions:
            arrays.append(np.array([list(range(pos, pos + len(ids)))], dtype=np.int64))
        return arrays + list(past)

    def describe(path):
        dims = [[d.dim_param or d.dim_value for d in i.type.tensor_type.shape.dim] for i in onnx.load(path).graph.input]
        return f"inputs {dims[:3]}"

    ed.export_symbolic_steps(out, fam, model, cfg, form, export_fn, arrays_of, report, describe)


def do_family(out, fam, cfg, report):
    export_family(out, fam, cfg, report, MaskStep, "mask")


def main():
    out = sys.argv[1]
    want = sys.argv[2:]
    report = []
    def one(fam, cfg):
        if not os.path.exists(os.path.join(out, fam, "greedy.json")):
            report.append(f"{fam}: skipped, no greedy.json (export_decoders.py failed for it)")
        else:
            do_family(out, fam, cfg, report)

    ed.for_families(want, report, one)
    save_report(os.path.join(out, "export_report.txt"), report, append=True)


if __name__ == "__main__":
    main()
