#!/usr/bin/env python3
"""Writes a MobileNetV2 (torchvision's layout, 3.5 M random fp32 weights, 14 MB) as PyTorch's
TorchScript exporter writes it in eval mode: BatchNorm folded into the convolutions, ReLU6 as
Clip(0, 6) with constant min/max inputs, GlobalAveragePool -> Flatten -> Gemm, opset 17.

Built node for node with the ONNX API (no PyTorch needed), seeded, so the compile benchmark
(bench/compile_bench.sh) has a mobilenet_v2-sized CNN on any machine.

Usage: python3 make_mobilenet_v2.py OUT.onnx
"""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

SETTINGS = [(1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2), (6, 96, 3, 1), (6, 160, 3, 2), (6, 320, 1, 1)]


def main(out):
    rng = np.random.default_rng(0)
    nodes, inits = [], []
    count = [0]

    def name(p):
        count[0] += 1
        return f"{p}_{count[0]}"

    def const(arr, p):
        n = name(p)
        inits.append(numpy_helper.from_array(arr, n))
        return n

    lo, hi = const(np.array(0, np.float32), "min"), const(np.array(6, np.float32), "max")

    def conv(x, cin, cout, k, stride, groups, relu6):
        w = rng.standard_normal((cout, cin // groups, k, k), dtype=np.float32) * np.sqrt(2.0 / (cin // groups * k * k))
        b = rng.standard_normal(cout, dtype=np.float32) * 0.01
        y = name("conv")
        nodes.append(helper.make_node("Conv", [x, const(w.astype(np.float32), "w"), const(b, "b")], [y], name=y,
                                      kernel_shape=[k, k], strides=[stride, stride], pads=[k // 2] * 4, group=groups,
                                      dilations=[1, 1]))
        if not relu6:
            return y
        z = name("clip")
        nodes.append(helper.make_node("Clip", [y, lo, hi], [z], name=z))
        return z

    x = conv("input", 3, 32, 3, 2, 1, True)
    cin = 32
    for t, c, n, s in SETTINGS:
        for i in range(n):
            stride = s if i == 0 else 1
            hidden = cin * t
            y = x if t == 1 else conv(x, cin, hidden, 1, 1, 1, True)
            y = conv(y, hidden, hidden, 3, stride, hidden, True)
            y = conv(y, hidden, c, 1, 1, 1, False)
            if stride == 1 and cin == c:
                a = name("add")
                nodes.append(helper.make_node("Add", [x, y], [a], name=a))
                y = a
            x, cin = y, c
    x = conv(x, cin, 1280, 1, 1, 1, True)
    nodes.append(helper.make_node("GlobalAveragePool", [x], ["pool"], name="pool"))
    nodes.append(helper.make_node("Flatten", ["pool"], ["flat"], name="flat", axis=1))
    fc_w = const((rng.standard_normal((1000, 1280), dtype=np.float32) * 0.01).astype(np.float32), "fc_w")
    fc_b = const(np.zeros(1000, np.float32), "fc_b")
    nodes.append(helper.make_node("Gemm", ["flat", fc_w, fc_b], ["output"], name="fc", alpha=1.0, beta=1.0, transB=1))
    graph = helper.make_graph(nodes, "mobilenet_v2",
                              [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, 3, 224, 224])],
                              [helper.make_tensor_value_info("output", TensorProto.FLOAT, [1, 1000])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="pytorch",
                              producer_version="2.11")
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, out)


if __name__ == "__main__":
    main(sys.argv[1])
