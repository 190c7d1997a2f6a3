#!/usr/bin/env python3
"""Exports the control-flow part of the real-exporter corpus: tiny random-weight models whose ONNX
If is decided at run time over branches that give outputs of different shapes, as PyTorch's
TorchScript exporter writes a scripted `if` (torch.cond, the dynamo exporter's form, requires
branches of one shape, so it cannot write these).

Run on a machine with PyTorch (2.11), onnx and onnxruntime (the GPU machine has them); the outputs
are committed under tests/models/control_flow/ (tests/models/control_flow_exports_test.cpp).

Models (random weights, static input shapes):
  sum_sign       if x.sum() > 0: conv(x) then 2x2 average pool   else: conv(x)          ([1,8,4,4] | [1,8,8,8])
  flag_input     if flag (a bool input): x.flatten(1) @ W1         else: x.mean(1) @ W2   ([1,16] | [1,5])
  nested         if x.mean() > 0: (if flag: x[:, :2] * 3 else: x + 1) else: x.sum(1, keepdim)
Each folder holds model.onnx and two data sets (test_data_set_0 and _1) whose inputs take
different branches, with onnxruntime's outputs of that very file; report.json says what was made.

Usage: python3 export_control_flow.py OUT_DIR
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


class SumSign(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 8, 3, padding=1)

    def forward(self, x):
        y = self.conv(x)
        if bool(x.sum() > 0):
            return torch.nn.functional.avg_pool2d(y, 2)
        return y


class FlagInput(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.w1 = torch.nn.Parameter(torch.randn(48, 16) * 0.2)
        self.w2 = torch.nn.Parameter(torch.randn(16, 5) * 0.2)

    def forward(self, x, flag):
        if bool(flag):
            return torch.flatten(x, 1) @ self.w1
        return x.mean(1) @ self.w2


class Nested(torch.nn.Module):
    def forward(self, x, flag):
        if bool(x.mean() > 0):
            if bool(flag):
                return x[:, :2] * 3.0
            return x + 1.0
        return x.sum(1, keepdim=True)


def models():
    rng = np.random.default_rng(SEED)
    x8 = rng.standard_normal((1, 3, 8, 8)).astype(np.float32)
    x3 = rng.standard_normal((1, 3, 16)).astype(np.float32)
    x4 = rng.standard_normal((2, 4, 6)).astype(np.float32)
    t, f = np.array(True), np.array(False)
    return {
        # (module, input names, data sets: one per branch (combination))
        "sum_sign": (SumSign(), ["x"], [[np.abs(x8)], [-np.abs(x8)]]),
        "flag_input": (FlagInput(), ["x", "flag"], [[x3, t], [x3, f]]),
        "nested": (Nested(), ["x", "flag"], [[np.abs(x4), t], [np.abs(x4), f], [-np.abs(x4), t]]),
    }


def main():
    out = sys.argv[1]
    report = {}
    torch.manual_seed(SEED)
    for name, (module, names, sets) in models().items():
        folder = os.path.join(out, name)
        os.makedirs(folder, exist_ok=True)
        path = os.path.join(folder, "model.onnx")
        module.eval()
        scripted = torch.jit.script(module)
        args = tuple(torch.from_numpy(a) for a in sets[0])
        torch.onnx.export(scripted, args, path, dynamo=False, input_names=names, output_names=["y"], opset_version=17)
        onnx.checker.check_model(onnx.load(path))
        sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
        entry = {"nodes": len(onnx.load(path).graph.node), "sets": []}
        for i, arrays in enumerate(sets):
            res = sess.run(None, dict(zip(names, arrays)))
            with torch.no_grad():
                ref = module(*[torch.from_numpy(a) for a in arrays]).numpy()
            save_set(folder, i, arrays, res, names)
            entry["sets"].append({"shape": list(res[0].shape), "ort_vs_torch_max_abs": float(np.abs(res[0] - ref).max())})
        report[name] = entry
        print(name, entry, flush=True)
    with open(os.path.join(out, "report.json"), "w") as f:
        json.dump(report, f, indent=1)


if __name__ == "__main__":
    main()
