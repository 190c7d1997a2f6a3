#!/usr/bin/env python3
"""Quantizes models with onnxruntime's own quantizers, the way users do, and saves onnxruntime's
outputs beside each, so that tests compare vkc with the quantizer's exact graphs and arithmetic.

Run on a machine with onnxruntime (1.30) and PyTorch (the GPU machine has them), from the repository
root; the outputs are committed under tests/models/quantized/.

From the tiny decoder exports in tests/models/decoders/ (full-sequence graphs, and the Llama decode
step) it writes, per source:

  <src>_nbits4_sym_b32     MatMulNBitsQuantizer, 4 bits, symmetric, block 32
  <src>_nbits4_asym_b32    the same with zero points
  <src>_nbits4_asym_b128   block 128: a K of 64 leaves a padded last block
  <src>_nbits8_asym_b32    8 bits (where the quantizer supports it)
  <src>_dynamic_int8       quantize_dynamic: MatMulInteger / DynamicQuantizeLinear, and the
                           embedding table as uint8 (Gather + DequantizeLinear)

and from a small CNN exported with torch.onnx (dynamo): cnn_fp32 and cnn_qdq_int8 (quantize_static,
QDQ, per-channel weights, 16 random calibration inputs); from a SqueezeNet-style fire module (concat
of two expand convolutions, max pooling before and after): fire_qdq_uint8 (quantize_static with its
defaults, uint8 activations, which quantize MaxPool's output with its input's parameters). Each
folder holds model.onnx and test_data_set_N/ (inputs and onnxruntime's outputs, the ONNX
test-data layout); report.json says what each quantizer was called with and what it could not do.

Usage: python3 tests/models/export_quantized.py OUT_DIR [--only cnn|fire]
  --only: just that CNN export, updating only its entry of OUT_DIR/report.json
"""
import inspect
import json
import os
import shutil
import sys
import traceback

import numpy as np
import onnx
import onnxruntime as ort
from onnx import numpy_helper

from onnx_test_data import save_set

HERE = os.path.dirname(os.path.abspath(__file__))
DECODERS = os.path.join(HERE, "decoders")
SOURCES = [("llama", "llama_seq_dynamo"), ("qwen3", "qwen3_seq_dynamo"), ("llama", "llama_step_dynamo")]


def load_sets(folder):
    sets = []
    for name in sorted(os.listdir(folder)):
        if not name.startswith("test_data_set_"):
            continue
        d = os.path.join(folder, name)
        ins = []
        for f in sorted(x for x in os.listdir(d) if x.startswith("input_")):
            t = onnx.TensorProto()
            with open(os.path.join(d, f), "rb") as fh:
                t.ParseFromString(fh.read())
            ins.append(numpy_helper.to_array(t))
        sets.append(ins)
    return sets


def run_and_save(model_path, sets, out_dir):
    sess = ort.InferenceSession(model_path, providers=["CPUExecutionProvider"])
    names = [i.name for i in sess.get_inputs()]
    for idx, ins in enumerate(sets):
        outs = sess.run(None, dict(zip(names, ins)))
        save_set(out_dir, idx, ins, outs, names)


def save_model(model, out_dir):
    os.makedirs(out_dir, exist_ok=True)
    path = os.path.join(out_dir, "model.onnx")
    onnx.save(model, path)
    return path


def nbits(src_model, bits, block, symmetric):
    from onnxruntime.quantization import matmul_nbits_quantizer as mnq
    cfg_args = dict(block_size=block, is_symmetric=symmetric)
    if "bits" in inspect.signature(mnq.DefaultWeightOnlyQuantConfig.__init__).parameters:
        cfg_args["bits"] = bits
    elif bits != 4:
        raise RuntimeError("this onnxruntime's DefaultWeightOnlyQuantConfig has no bits argument")
    cfg = mnq.DefaultWeightOnlyQuantConfig(**cfg_args)
    q = mnq.MatMulNBitsQuantizer(onnx.load(src_model), block_size=block, is_symmetric=symmetric, algo_config=cfg)
    q.process()
    return q.model.model, cfg_args


def dynamic(src_model, tmp):
    from onnxruntime.quantization import quantize_dynamic
    out = os.path.join(tmp, "dyn.onnx")
    quantize_dynamic(src_model, out)
    return onnx.load(out), {"defaults": True}


def calibration_reader(shape, seed, count=16):
    """quantize_static's calibration data: `count` seeded standard-normal inputs named "input"."""
    from onnxruntime.quantization import CalibrationDataReader

    class Reader(CalibrationDataReader):
        def __init__(self):
            r = np.random.default_rng(seed)
            self.items = iter([{"input": r.standard_normal(shape).astype(np.float32)} for _ in range(count)])

        def get_next(self):
            return next(self.items, None)

    return Reader()


def export_cnn(out_root, report):
    import torch
    from onnxruntime.quantization import QuantFormat, QuantType, quantize_static

    class Block(torch.nn.Module):
        def __init__(self, c):
            super().__init__()
            self.dw = torch.nn.Conv2d(c, c, 3, padding=1, groups=c)
            self.bn1 = torch.nn.BatchNorm2d(c)
            self.pw = torch.nn.Conv2d(c, c, 1)
            self.bn2 = torch.nn.BatchNorm2d(c)

        def forward(self, x):
            y = torch.nn.functional.relu6(self.bn1(self.dw(x)))
            return torch.relu(x + self.bn2(self.pw(y)))

    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.stem = torch.nn.Conv2d(3, 16, 3, stride=2, padding=1)
            self.bn = torch.nn.BatchNorm2d(16)
            self.b1 = Block(16)
            self.expand = torch.nn.Conv2d(16, 32, 1)
            self.b2 = Block(32)
            self.fc = torch.nn.Linear(32, 10)

        def forward(self, x):
            x = torch.nn.functional.relu6(self.bn(self.stem(x)))
            x = self.b2(torch.relu(self.expand(self.b1(x))))
            return self.fc(torch.flatten(torch.nn.functional.adaptive_avg_pool2d(x, 1), 1))

    torch.manual_seed(0)
    net = Net().eval()
    with torch.no_grad():  # non-trivial batch-norm statistics
        for m in net.modules():
            if isinstance(m, torch.nn.BatchNorm2d):
                m.running_mean.uniform_(-0.2, 0.2)
                m.running_var.uniform_(0.5, 1.5)
    x = torch.randn(1, 3, 32, 32)
    fp32_dir = os.path.join(out_root, "cnn_fp32")
    os.makedirs(fp32_dir, exist_ok=True)
    fp32 = os.path.join(fp32_dir, "model.onnx")
    torch.onnx.export(net, (x,), fp32, dynamo=True, input_names=["input"], output_names=["logits"])
    onnx.save(onnx.load(fp32), fp32)  # external data folded in
    rng = np.random.default_rng(1)
    sets = [[rng.standard_normal((1, 3, 32, 32)).astype(np.float32)] for _ in range(2)]
    run_and_save(fp32, sets, fp32_dir)

    qdir = os.path.join(out_root, "cnn_qdq_int8")
    os.makedirs(qdir, exist_ok=True)
    qpath = os.path.join(qdir, "model.onnx")
    quantize_static(fp32, qpath, calibration_reader((1, 3, 32, 32), 2), quant_format=QuantFormat.QDQ,
                    per_channel=True, activation_type=QuantType.QInt8, weight_type=QuantType.QInt8)
    run_and_save(qpath, sets, qdir)
    report["cnn_qdq_int8"] = {"quantize_static": "QDQ, per_channel, QInt8 activations and weights"}


def export_fire(out_root, report):
    import torch
    from onnxruntime.quantization import QuantFormat, QuantType, quantize_static

    class Fire(torch.nn.Module):
        def __init__(self, c, s, e):
            super().__init__()
            self.squeeze = torch.nn.Conv2d(c, s, 1)
            self.expand1x1 = torch.nn.Conv2d(s, e, 1)
            self.expand3x3 = torch.nn.Conv2d(s, e, 3, padding=1)

        def forward(self, x):
            x = torch.relu(self.squeeze(x))
            return torch.cat([torch.relu(self.expand1x1(x)), torch.relu(self.expand3x3(x))], 1)

    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.stem = torch.nn.Conv2d(3, 16, 3, stride=2)
            self.fire = Fire(16, 8, 16)
            self.head = torch.nn.Conv2d(32, 10, 1)

        def forward(self, x):
            x = torch.nn.functional.max_pool2d(torch.relu(self.stem(x)), 3, 2, ceil_mode=True)
            x = torch.nn.functional.max_pool2d(self.fire(x), 3, 2, ceil_mode=True)
            return torch.flatten(torch.nn.functional.adaptive_avg_pool2d(torch.relu(self.head(x)), 1), 1)

    torch.manual_seed(0)
    net = Net().eval()
    x = torch.randn(1, 3, 48, 48)
    tmp = os.path.join(out_root, ".fire_fp32.onnx")
    torch.onnx.export(net, (x,), tmp, dynamo=True, input_names=["input"], output_names=["logits"])
    onnx.save(onnx.load(tmp), tmp)

    qdir = os.path.join(out_root, "fire_qdq_uint8")
    os.makedirs(qdir, exist_ok=True)
    qpath = os.path.join(qdir, "model.onnx")
    quantize_static(tmp, qpath, calibration_reader((1, 3, 48, 48), 3), quant_format=QuantFormat.QDQ)
    for f in (tmp, tmp + ".data"):
        if os.path.exists(f):
            os.remove(f)
    rng = np.random.default_rng(4)
    run_and_save(qpath, [[rng.standard_normal((1, 3, 48, 48)).astype(np.float32)] for _ in range(2)], qdir)
    ops = sorted({n.op_type for n in onnx.load(qpath).graph.node})
    report["fire_qdq_uint8"] = {"quantize_static": "QDQ, defaults (QUInt8 activations, QInt8 weights)", "ops": ops}


def main():
    out_root = sys.argv[1]
    only = sys.argv[3] if len(sys.argv) > 3 and sys.argv[2] == "--only" else None
    os.makedirs(out_root, exist_ok=True)
    tmp = os.path.join(out_root, ".tmp")
    os.makedirs(tmp, exist_ok=True)
    report = {"onnxruntime": ort.__version__, "onnx": onnx.__version__}
    report_path = os.path.join(out_root, "report.json")
    if only is not None and os.path.exists(report_path):  # update that export's entry only
        with open(report_path) as f:
            report = json.load(f)
    for fam, src in SOURCES if only is None else []:
        src_dir = os.path.join(DECODERS, fam, src)
        src_model = os.path.join(src_dir, "model.onnx")
        sets = load_sets(src_dir)
        variants = [("nbits4_sym_b32", lambda: nbits(src_model, 4, 32, True)),
                    ("nbits4_asym_b32", lambda: nbits(src_model, 4, 32, False)),
                    ("nbits4_asym_b128", lambda: nbits(src_model, 4, 128, False)),
                    ("nbits8_asym_b32", lambda: nbits(src_model, 8, 32, False)),
                    ("dynamic_int8", lambda: dynamic(src_model, tmp))]
        if "step" in src:  # the decode step: the two forms generation tests need
            variants = [v for v in variants if v[0] in ("nbits4_asym_b32", "dynamic_int8")]
        for name, make in variants:
            key = f"{src}_{name}"
            try:
                model, args = make()
                out_dir = os.path.join(out_root, key)
                path = save_model(model, out_dir)
                run_and_save(path, sets, out_dir)
                ops = sorted({n.op_type for n in model.graph.node})
                report[key] = {"args": args, "ops": ops}
                print(key, "ok", ops, flush=True)
            except Exception as e:  # the report says which quantizer call failed and why
                report[key] = {"error": f"{type(e).__name__}: {e}"}
                traceback.print_exc()
    for name, export in (("cnn", export_cnn), ("fire", export_fire)):
        if only not in (None, name):
            continue
        try:
            export(out_root, report)
        except Exception as e:
            report[name] = {"error": f"{type(e).__name__}: {e}"}
            traceback.print_exc()
    shutil.rmtree(tmp, ignore_errors=True)
    with open(report_path, "w") as f:
        json.dump(report, f, indent=1, sort_keys=True)


if __name__ == "__main__":
    main()
