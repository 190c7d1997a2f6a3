#!/usr/bin/env python3
"""Exports models whose sizes are computed from their inputs' shapes, the forms the real tools write:
Resize sizes from Shape -> Gather/Slice -> Mul/Cast -> Concat (torch.onnx's interpolate with a size,
tf2onnx's Cast-to-float scaling), Pad amounts from a Mod of a dim (padding to a multiple, as Swin
and ConvNeXt-style models do), ConstantOfShape / Range / Expand from Shape, and the same graphs
after onnxruntime's float16 converter (onnxruntime.transformers.float16, keep_io_types), which
puts Casts around them. Height and width stay symbolic (H, W); vkc compiles them for the sizes a
data set has (tests/models/shape_arith_exports_test.cpp).

Run on a machine with PyTorch, onnx and onnxruntime (the GPU machine has them); the outputs are
committed under tests/models/shape_arith/: <name>/model.onnx, test_data_set_{0,1} (two sizes) with
onnxruntime's outputs of that very file, and report.txt.

Usage: python3 export_shape_arith.py OUT_DIR
"""
import os
import sys
import traceback

import numpy as np
import onnx
import onnxruntime as ort
import torch
import torch.nn.functional as F
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

from onnx_test_data import save_set

SIZES = [(12, 16), (10, 20)]


class UpsampleBySize(torch.nn.Module):
    def __init__(self, mode):
        super().__init__()
        torch.manual_seed(0)
        self.a = torch.nn.Conv2d(3, 4, 3, padding=1)
        self.b = torch.nn.Conv2d(4, 2, 3, padding=1)
        self.mode = mode

    def forward(self, x):
        y = torch.relu(self.a(x))
        y = F.interpolate(y, size=(y.shape[2] * 2, y.shape[3] * 2), mode=self.mode)
        return self.b(y)


class PadToMultiple(torch.nn.Module):
    """Pads H and W up to a multiple of 8, as window-attention models do before partitioning."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.a = torch.nn.Conv2d(3, 4, 3, padding=1)

    def forward(self, x):
        y = self.a(x)
        ph = (8 - y.shape[2] % 8) % 8
        pw = (8 - y.shape[3] % 8) % 8
        y = F.pad(y, (0, pw, 0, ph))
        return y.flatten(2).transpose(1, 2)


def torch_export(module, path, dynamo):
    x = torch.randn(1, 3, *SIZES[0])
    module.eval()
    if dynamo:
        hd, wd = torch.export.Dim("H", min=4, max=64), torch.export.Dim("W", min=4, max=64)
        prog = torch.onnx.export(module, (x,), None, dynamo=True, dynamic_shapes={"x": {2: hd, 3: wd}},
                                 input_names=["x"], output_names=["y"], external_data=False)
        prog.save(path, external_data=False)
    else:
        torch.onnx.export(module, (x,), path, dynamo=False, input_names=["x"], output_names=["y"],
                          dynamic_axes={"x": {2: "H", 3: "W"}}, opset_version=17)


def tf2onnx_form(path):
    """What tf2onnx writes for a resize by 2 and a bias broadcast to the output's shape: the sizes
    through Cast to float and back, the bias by ConstantOfShape/Expand of Shape, and a Range over
    the width added as a position ramp."""
    c = lambda n, v, dt=np.int64: nh.from_array(np.array(v, dtype=dt), n)
    nodes = [
        h.make_node("Shape", ["x"], ["s"]),
        h.make_node("Slice", ["s", "b0", "e2", "ax0"], ["nc"]),
        h.make_node("Slice", ["s", "b2", "e4", "ax0"], ["hw"]),
        h.make_node("Cast", ["hw"], ["hwf"], to=T.FLOAT),
        h.make_node("Mul", ["hwf", "two"], ["hw2f"]),
        h.make_node("Cast", ["hw2f"], ["hw2"], to=T.INT64),
        h.make_node("Concat", ["nc", "hw2"], ["sizes"], axis=0),
        h.make_node("Resize", ["x", "", "", "sizes"], ["r"], mode="nearest",
                    coordinate_transformation_mode="asymmetric", nearest_mode="floor"),
        h.make_node("Shape", ["r"], ["rs"]),
        h.make_node("ConstantOfShape", ["rs"], ["ones"], value=nh.from_array(np.array([0.5], np.float32))),
        h.make_node("Mul", ["r", "ones"], ["half"]),
        h.make_node("Gather", ["rs", "i3"], ["w"], axis=0),
        h.make_node("Cast", ["w"], ["wf"], to=T.FLOAT),
        h.make_node("Range", ["zero_f", "wf", "one_f"], ["ramp"]),
        h.make_node("Expand", ["ramp", "rs"], ["ramp4"]),
        h.make_node("Add", ["half", "ramp4"], ["y"]),
    ]
    inits = [c("b0", [0]), c("e2", [2]), c("b2", [2]), c("e4", [4]), c("ax0", [0]), c("two", [2.0], np.float32),
             c("i3", 3), c("zero_f", 0.0, np.float32), c("one_f", 1.0, np.float32)]
    g = h.make_graph(nodes, "tf2onnx_form", [h.make_tensor_value_info("x", T.FLOAT, [1, 3, "H", "W"])],
                     [h.make_tensor_value_info("y", T.FLOAT, [1, 3, "H2", "W2"])], inits)
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 13)])
    m.ir_version = 8
    onnx.checker.check_model(m)
    onnx.save(m, path)


def fp16_of(src, dst):
    from onnxruntime.transformers.float16 import convert_float_to_float16
    m = convert_float_to_float16(onnx.load(src), keep_io_types=True)
    onnx.save(m, dst)


def data_sets(folder, path, report, name):
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    sess = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
    rng = np.random.default_rng(0)
    shapes = []
    for k, (hh, ww) in enumerate(SIZES):
        x = rng.standard_normal((1, 3, hh, ww)).astype(np.float32)
        out = sess.run(None, {sess.get_inputs()[0].name: x})
        save_set(folder, k, [x], out)
        shapes.append(list(out[0].shape))
    ops = sorted({n.op_type for n in onnx.load(path).graph.node})
    report.append(f"{name}: ok, outputs {shapes}; ops {' '.join(ops)}")


def main():
    out = sys.argv[1]
    report = [f"torch {torch.__version__}, onnx {onnx.__version__}, onnxruntime {ort.__version__}"]
    makers = {
        "upsample_size_legacy": lambda p: torch_export(UpsampleBySize("nearest"), p, False),
        "upsample_size_dynamo": lambda p: torch_export(UpsampleBySize("nearest"), p, True),
        "bilinear_size_legacy": lambda p: torch_export(UpsampleBySize("bilinear"), p, False),
        "pad_multiple_legacy": lambda p: torch_export(PadToMultiple(), p, False),
        "pad_multiple_dynamo": lambda p: torch_export(PadToMultiple(), p, True),
        "tf2onnx_form": tf2onnx_form,
    }
    for name, make in makers.items():
        for fp16 in (False, True):
            full = name + ("_fp16" if fp16 else "")
            folder = os.path.join(out, full)
            path = os.path.join(folder, "model.onnx")
            try:
                os.makedirs(folder, exist_ok=True)
                if fp16:
                    fp16_of(os.path.join(out, name, "model.onnx"), path)
                else:
                    make(path)
                data_sets(folder, path, report, full)
            except Exception as e:  # noqa: BLE001 - every failure is reported, none hidden
                traceback.print_exc()
                report.append(f"{full}: FAILED {type(e).__name__}: {str(e).splitlines()[0][:200]}")
    print("\n".join(report))
    with open(os.path.join(out, "report.txt"), "w") as f:
        f.write("\n".join(report) + "\n")


if __name__ == "__main__":
    main()
