#!/usr/bin/env python3
"""Writes a stack of fp32 linear layers as ONNX (MatMul + Add, as exporters write nn.Linear over
tokens), for the cooperative-matrix runtime check on a GPU machine:

    python3 make_linear_stack.py OUT.onnx [TOKENS] [DIM] [HIDDEN] [LAYERS]

x [1, TOKENS, DIM] -> (Linear DIM->HIDDEN, Relu, Linear HIDDEN->DIM) x LAYERS; LAYERS 0: one
Linear DIM->HIDDEN. Seeded weights.
"""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

out = sys.argv[1]
tokens, dim, hidden, layers = (int(a) for a in (sys.argv[2:] + ["256", "512", "2048", "4"][len(sys.argv) - 2:])[:4])
rng = np.random.default_rng(7)
nodes, inits = [], []
x = "x"
for i in range(max(layers, 1)):
    for j, (k, n) in enumerate([(dim, hidden), (hidden, dim)] if layers else [(dim, hidden)]):
        w, b = f"w{i}_{j}", f"b{i}_{j}"
        inits.append(numpy_helper.from_array((rng.standard_normal((k, n)) / np.sqrt(k)).astype(np.float32), w))
        inits.append(numpy_helper.from_array((0.1 * rng.standard_normal(n)).astype(np.float32), b))
        nodes.append(helper.make_node("MatMul", [x, w], [f"mm{i}_{j}"]))
        nodes.append(helper.make_node("Add", [f"mm{i}_{j}", b], [f"y{i}_{j}"]))
        x = f"y{i}_{j}"
        if j == 0 and layers:
            nodes.append(helper.make_node("Relu", [x], [f"r{i}"]))
            x = f"r{i}"
graph = helper.make_graph(nodes, "linear_stack", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, tokens, dim])],
                          [helper.make_tensor_value_info(x, TensorProto.FLOAT, [1, tokens, dim if layers else hidden])], inits)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="vkc bench")
onnx.checker.check_model(model)
onnx.save(model, out)
