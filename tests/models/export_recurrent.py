#!/usr/bin/env python3
"""Exports the recurrent part of the real-exporter corpus: tiny random-weight LSTM / GRU / RNN
models, as PyTorch's exporters write them.

Run on a machine with PyTorch (2.11), onnx and onnxruntime (the GPU machine has them); the outputs
are committed under tests/models/recurrent/ so that CI tests real exporter output
(tests/models/recurrent_exports_test.cpp; the table in docs/conformance.md).

Models (random weights, static shapes):
  lstm_states        nn.LSTM(16, 32), seq 5, batch 2, initial h0/c0 given -> y, hn, cn
  lstm_bi2_bf        nn.LSTM(16, 24, 2 layers, bidirectional, batch_first), batch 2, seq 7
  gru2_bf            nn.GRU(12, 20, 2 layers, batch_first) with h0 -> y, hn
  gru_bi             nn.GRU(12, 20, bidirectional), seq 4, batch 3
  rnn_relu2          nn.RNN(8, 16, 2 layers, relu), seq 5
  cells              nn.LSTMCell and nn.GRUCell stepped 3 times in Python
  vad_like           Conv1d + ReLU + LSTM with (h, c) state in and out + Linear + Sigmoid, the shape of
                     Silero VAD's decoder
Forms, each in its own folder <model>_<form>/model.onnx:
  legacy             torch.onnx.export(dynamo=False), TorchScript, opset 17
  dynamo             torch.onnx.export(dynamo=True)
Beside each model, test_data_set_0/ holds seeded inputs and onnxruntime's outputs of that very file;
report.json says what was made, the torch-vs-onnxruntime error, and what failed.

Usage: python3 export_recurrent.py OUT_DIR [model ...]
"""
import json
import os
import sys
import traceback

import numpy as np
import onnx
import onnxruntime as ort
import torch

from export_encoders import export, record

SEED = 0


class Seq(torch.nn.Module):
    """A torch recurrent module returning (y, hn[, cn]) as a flat tuple."""

    def __init__(self, rnn):
        super().__init__()
        self.rnn = rnn

    def forward(self, x, h0=None, c0=None):
        if c0 is not None:
            y, (hn, cn) = self.rnn(x, (h0, c0))
            return y, hn, cn
        y, state = self.rnn(x) if h0 is None else self.rnn(x, h0)
        return (y, *state) if isinstance(state, tuple) else (y, state)


class Cells(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = torch.nn.LSTMCell(10, 12)
        self.gru = torch.nn.GRUCell(12, 8)

    def forward(self, x, h, c):
        g = torch.zeros(x.shape[1], 8)
        for t in range(x.shape[0]):
            h, c = self.lstm(x[t], (h, c))
            g = self.gru(h, g)
        return h, c, g


class VadLike(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv1d(1, 16, 5, stride=2)
        self.lstm = torch.nn.LSTM(16, 32)
        self.out = torch.nn.Linear(32, 1)

    def forward(self, audio, h, c):
        f = torch.relu(self.conv(audio.unsqueeze(1)))  # [B, 16, T]
        y, (hn, cn) = self.lstm(f.permute(2, 0, 1), (h, c))  # [T, B, 32]
        return torch.sigmoid(self.out(y[-1])), hn, cn


def rand(*shape):
    return np.random.default_rng(len(shape) * 7 + sum(shape)).standard_normal(shape).astype(np.float32)


def models():
    nn = torch.nn
    return {
        "lstm_states": lambda: (Seq(nn.LSTM(16, 32)), [("x", rand(5, 2, 16)), ("h0", rand(1, 2, 32)),
                                                        ("c0", rand(1, 2, 32))], ["y", "hn", "cn"]),
        "lstm_bi2_bf": lambda: (Seq(nn.LSTM(16, 24, num_layers=2, bidirectional=True, batch_first=True)),
                                [("x", rand(2, 7, 16))], ["y", "hn", "cn"]),
        "gru2_bf": lambda: (Seq(nn.GRU(12, 20, num_layers=2, batch_first=True)),
                            [("x", rand(1, 6, 12)), ("h0", rand(2, 1, 20))], ["y", "hn"]),
        "gru_bi": lambda: (Seq(nn.GRU(12, 20, bidirectional=True)), [("x", rand(4, 3, 12))], ["y", "hn"]),
        "rnn_relu2": lambda: (Seq(nn.RNN(8, 16, num_layers=2, nonlinearity="relu")), [("x", rand(5, 1, 8))],
                              ["y", "hn"]),
        "cells": lambda: (Cells(), [("x", rand(3, 2, 10)), ("h", rand(2, 12)), ("c", rand(2, 12))],
                          ["h_out", "c_out", "g_out"]),
        "vad_like": lambda: (VadLike(), [("audio", rand(1, 64)), ("h", rand(1, 1, 32)), ("c", rand(1, 1, 32))],
                             ["prob", "hn", "cn"]),
    }


def main():
    out = sys.argv[1]
    want = sys.argv[2:]
    os.makedirs(out, exist_ok=True)
    report = {"versions": f"torch {torch.__version__}, onnx {onnx.__version__}, onnxruntime {ort.__version__}"}
    for name, make in models().items():
        if want and name not in want:
            continue
        torch.manual_seed(SEED)
        model, named, out_names = make()
        model = model.eval()
        with torch.no_grad():
            ref = [t.numpy() for t in model(*[torch.from_numpy(a) for _, a in named])]
        for form in ("legacy", "dynamo"):
            folder = os.path.join(out, f"{name}_{form}")
            key = os.path.basename(folder)
            try:
                path = os.path.join(folder, "model.onnx")
                export(model, named, out_names, path, form == "dynamo")
                record(report, folder, path, named, ref)
                report[key]["ops"] = sorted({n.op_type for n in onnx.load(path).graph.node})
                print(f"{key}: {report[key]}", file=sys.stderr)
            except Exception as e:  # noqa: BLE001 - every failure is reported, none hidden
                report[key] = {"status": f"FAILED {type(e).__name__}: {str(e).splitlines()[0][:300] if str(e) else ''}"}
                print(f"{key}: {report[key]['status']}", file=sys.stderr)
                traceback.print_exc()
    with open(os.path.join(out, "report.json"), "w") as f:
        json.dump(report, f, indent=1, sort_keys=True)


if __name__ == "__main__":
    main()
