#!/usr/bin/env python3
"""Writes models/tiny_cnn.onnx, the example model the README compiles.

A small image classifier that uses every operator of vkc's first lowering:
Conv, BatchNormalization, Relu, Clip, MaxPool, AveragePool, HardSwish, Sigmoid,
Mul and Add (a squeeze-excite block and a residual), Concat, GlobalAveragePool,
Flatten, Reshape, MatMul, Gemm, Identity and Softmax. Weights are seeded random
numbers, so the file is reproducible: run with Debian's python3-onnx,
    PYENV_VERSION=system python3 examples/make_example_model.py
"""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

rng = np.random.default_rng(7)
inits = []


def weight(name, *shape, scale=0.2):
    inits.append(numpy_helper.from_array((rng.standard_normal(shape) * scale).astype(np.float32), name))
    return name


def const(name, array):
    inits.append(numpy_helper.from_array(np.asarray(array), name))
    return name


nodes = [
    helper.make_node("Conv", ["image", weight("c1_w", 16, 3, 3, 3)], ["c1"], pads=[1, 1, 1, 1], name="stem_conv"),
    helper.make_node("BatchNormalization",
                     ["c1", const("bn_s", rng.uniform(0.5, 1.5, 16).astype(np.float32)),
                      weight("bn_b", 16), weight("bn_m", 16),
                      const("bn_v", rng.uniform(0.5, 1.5, 16).astype(np.float32))],
                     ["bn1"], epsilon=1e-5, name="stem_bn"),
    helper.make_node("Relu", ["bn1"], ["r1"], name="stem_relu"),
    helper.make_node("MaxPool", ["r1"], ["p1"], kernel_shape=[2, 2], strides=[2, 2], name="pool1"),
    # depthwise + pointwise block with ReLU6 (Clip) and HardSwish
    helper.make_node("Conv", ["p1", weight("dw_w", 16, 1, 3, 3)], ["dw"], pads=[1, 1, 1, 1], group=16, name="dw_conv"),
    helper.make_node("Clip", ["dw", const("zero", np.float32(0)), const("six", np.float32(6))], ["dw6"], name="dw_relu6"),
    helper.make_node("Conv", ["dw6", weight("pw_w", 16, 16, 1, 1), weight("pw_b", 16)], ["pw"], name="pw_conv"),
    helper.make_node("HardSwish", ["pw"], ["hs"], name="pw_hswish"),
    # squeeze-excite: GAP -> 1x1 conv -> sigmoid -> scale
    helper.make_node("GlobalAveragePool", ["hs"], ["se_gap"], name="se_gap"),
    helper.make_node("Conv", ["se_gap", weight("se_w", 16, 16, 1, 1), weight("se_b", 16)], ["se_fc"], name="se_fc"),
    helper.make_node("Sigmoid", ["se_fc"], ["se_gate"], name="se_sigmoid"),
    helper.make_node("Mul", ["hs", "se_gate"], ["se_out"], name="se_scale"),
    helper.make_node("Add", ["se_out", "p1"], ["res"], name="residual_add"),
    helper.make_node("Identity", ["res"], ["res_id"], name="identity"),
    # two branches joined by Concat
    helper.make_node("AveragePool", ["res_id"], ["branch_a"], kernel_shape=[2, 2], strides=[2, 2], name="avg_pool"),
    helper.make_node("Conv", ["res_id", weight("b_w", 8, 16, 3, 3)], ["branch_b"], strides=[2, 2], pads=[1, 1, 1, 1],
                     name="branch_conv"),
    helper.make_node("Concat", ["branch_a", "branch_b"], ["cat"], axis=1, name="concat"),
    helper.make_node("GlobalAveragePool", ["cat"], ["gap"], name="head_gap"),
    helper.make_node("Flatten", ["gap"], ["flat"], axis=1, name="flatten"),
    helper.make_node("MatMul", ["flat", weight("mm_w", 24, 32)], ["hidden"], name="hidden_matmul"),
    helper.make_node("Relu", ["hidden"], ["hidden_r"], name="hidden_relu"),
    helper.make_node("Gemm", ["hidden_r", weight("fc_w", 10, 32), weight("fc_b", 10)], ["logits"], transB=1,
                     name="classifier"),
    helper.make_node("Reshape", ["logits", const("shape", np.array([1, 10], dtype=np.int64))], ["logits2"],
                     name="reshape"),
    helper.make_node("Softmax", ["logits2"], ["probs"], axis=-1, name="softmax"),
]

graph = helper.make_graph(
    nodes, "tiny_cnn",
    [helper.make_tensor_value_info("image", TensorProto.FLOAT, ["batch", 3, 32, 32])],
    [helper.make_tensor_value_info("probs", TensorProto.FLOAT, ["batch", 10])],
    inits)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="vkc-example")
model.ir_version = 8
onnx.checker.check_model(model)
out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "models", "tiny_cnn.onnx")
onnx.save(model, out)
print(out)
