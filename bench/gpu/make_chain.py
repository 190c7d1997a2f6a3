#!/usr/bin/env python3
"""Writes a chain of dependent operators as ONNX, for the per-dispatch cost of the Vulkan runtime
(bench/gpu/dispatch_cost.sh):

    python3 make_chain.py OUT.onnx unary COUNT [WIDTH]     x [1, WIDTH] -> Sin, Cos, Sin, ... (COUNT)
    python3 make_chain.py OUT.onnx linear COUNT K N [SETS] x [1, K] -> COUNT MatMuls [K, N] then [N, K] ...

Each operator reads the one before it, so every dispatch waits for the previous one (a decode step's
chain). The linear chain's weights are seeded random fp32 (compile with --force-fp16 or a 4-bit
recipe); with K != N the chain alternates [K, N] and [N, K] so the sizes stay legal. SETS (default
COUNT, an even number) distinct weights are cycled: with few, the chain's weights stay in the GPU's
L2 cache between runs (a read from L2 against one from memory).
"""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

out, kind, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
rng = np.random.default_rng(11)
nodes, inits = [], []
x = "x"
if kind == "unary":
    width = int(sys.argv[4]) if len(sys.argv) > 4 else 64
    for i in range(count):
        nodes.append(helper.make_node("Sin" if i % 2 == 0 else "Cos", [x], [f"y{i}"]))
        x = f"y{i}"
    shape_in = shape_out = [1, width]
elif kind == "linear":
    k, n = int(sys.argv[4]), int(sys.argv[5])
    sets = int(sys.argv[6]) if len(sys.argv) > 6 else count
    dims = k
    for i in range(count):
        rows, cols = (k, n) if i % 2 == 0 else (n, k)
        w = f"w{i % sets}"
        if i < sets:
            inits.append(numpy_helper.from_array((rng.standard_normal((rows, cols)) / np.sqrt(rows)).astype(np.float32), w))
        nodes.append(helper.make_node("MatMul", [x, w], [f"y{i}"]))
        x = f"y{i}"
        dims = cols
    shape_in, shape_out = [1, k], [1, dims]
else:
    sys.exit(f"make_chain.py: unknown kind '{kind}' (unary or linear)")
graph = helper.make_graph(nodes, "chain", [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape_in)],
                          [helper.make_tensor_value_info(x, TensorProto.FLOAT, shape_out)], inits)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="vkc bench")
onnx.checker.check_model(model)
onnx.save(model, out)
