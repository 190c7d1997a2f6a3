#!/usr/bin/env python3
"""Writes small ONNX seed models for fuzz_onnx (tests/fuzz/corpus/onnx/): each covers idioms the
importer and passes handle (shape arithmetic, control flow, attention, QDQ, MatMulNBits), so that
mutations start from graphs that get deep into the pipeline. Usage: make_seed_models.py OUT_DIR"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
rng = np.random.default_rng(0)


def save(name, nodes, inputs, outputs, inits=(), opset=17, domains=()):
    g = helper.make_graph(nodes, name, inputs, outputs, list(inits))
    ops = [helper.make_opsetid("", opset)] + [helper.make_opsetid(d, 1) for d in domains]
    m = helper.make_model(g, opset_imports=ops, ir_version=8)
    onnx.save(m, os.path.join(out, name + ".onnx"))


def f32(name, shape):
    return numpy_helper.from_array(rng.standard_normal(shape).astype(np.float32), name)


vi = helper.make_tensor_value_info
# Attention: MatMul, scale, mask, Softmax, MatMul over [1, 2, 4, 8].
save("attention", [
    helper.make_node("Transpose", ["k"], ["kt"], perm=[0, 1, 3, 2]),
    helper.make_node("MatMul", ["q", "kt"], ["s"]),
    helper.make_node("Mul", ["s", "scale"], ["ss"]),
    helper.make_node("Add", ["ss", "mask"], ["sm"]),
    helper.make_node("Softmax", ["sm"], ["p"], axis=-1),
    helper.make_node("MatMul", ["p", "v"], ["o"])],
    [vi(n, TensorProto.FLOAT, [1, 2, 4, 8]) for n in ("q", "k", "v")], [vi("o", TensorProto.FLOAT, [1, 2, 4, 8])],
    [numpy_helper.from_array(np.array(0.35, np.float32), "scale"),
     numpy_helper.from_array(np.triu(np.full((4, 4), -1e9, np.float32), 1), "mask")])
# Shape arithmetic exporters write: Shape, Gather, Concat, Reshape, ConstantOfShape, Range, Where.
save("shape_math", [
    helper.make_node("Shape", ["x"], ["sh"]),
    helper.make_node("Gather", ["sh", "i1"], ["d1"], axis=0),
    helper.make_node("Concat", ["m1", "d1"], ["ns"], axis=0),
    helper.make_node("Reshape", ["x", "ns"], ["r"]),
    helper.make_node("Shape", ["r"], ["rsh"]),
    helper.make_node("ConstantOfShape", ["rsh"], ["z"], value=numpy_helper.from_array(np.array([1.0], np.float32))),
    helper.make_node("Range", ["zero", "d1s", "one"], ["rg"]),
    helper.make_node("Cast", ["rg"], ["rgf"], to=TensorProto.FLOAT),
    helper.make_node("Add", ["r", "rgf"], ["a"]),
    helper.make_node("Greater", ["a", "z"], ["gt"]),
    helper.make_node("Where", ["gt", "a", "z"], ["y"])],
    [vi("x", TensorProto.FLOAT, [1, 3, 4])], [vi("y", TensorProto.FLOAT, [4, 3])],
    [numpy_helper.from_array(np.array([1], np.int64), "i1"), numpy_helper.from_array(np.array([-1], np.int64), "m1"),
     numpy_helper.from_array(np.array(0, np.int64), "zero"), numpy_helper.from_array(np.array(1, np.int64), "one"),
     numpy_helper.from_array(np.array(3, np.int64), "d1s")])
# Control flow: If with a constant condition, Loop with a constant trip count.
then_g = helper.make_graph([helper.make_node("Relu", ["x"], ["t"])], "then", [], [vi("t", TensorProto.FLOAT, [2, 3])])
else_g = helper.make_graph([helper.make_node("Neg", ["x"], ["e"])], "else", [], [vi("e", TensorProto.FLOAT, [2, 3])])
body = helper.make_graph([helper.make_node("Identity", ["cond_in"], ["cond_out"]),
                          helper.make_node("Add", ["acc_in", "x"], ["acc_out"])], "body",
                         [vi("i", TensorProto.INT64, []), vi("cond_in", TensorProto.BOOL, []),
                          vi("acc_in", TensorProto.FLOAT, [2, 3])],
                         [vi("cond_out", TensorProto.BOOL, []), vi("acc_out", TensorProto.FLOAT, [2, 3])])
save("control_flow", [
    helper.make_node("If", ["c"], ["b"], then_branch=then_g, else_branch=else_g),
    helper.make_node("Loop", ["trip", "cond", "b"], ["y"], body=body)],
    [vi("x", TensorProto.FLOAT, [2, 3])], [vi("y", TensorProto.FLOAT, [2, 3])],
    [numpy_helper.from_array(np.array(True), "c"), numpy_helper.from_array(np.array(3, np.int64), "trip"),
     numpy_helper.from_array(np.array(True), "cond")])
# QDQ: QuantizeLinear -> DequantizeLinear around a Conv with an int8 per-channel weight.
save("qdq_conv", [
    helper.make_node("QuantizeLinear", ["x", "xs", "xz"], ["xq"]),
    helper.make_node("DequantizeLinear", ["xq", "xs", "xz"], ["xd"]),
    helper.make_node("DequantizeLinear", ["wq", "ws"], ["wd"], axis=0),
    helper.make_node("Conv", ["xd", "wd", "b"], ["y"], pads=[1, 1, 1, 1])],
    [vi("x", TensorProto.FLOAT, [1, 3, 8, 8])], [vi("y", TensorProto.FLOAT, [1, 4, 8, 8])],
    [numpy_helper.from_array(np.array(0.02, np.float32), "xs"), numpy_helper.from_array(np.array(0, np.int8), "xz"),
     numpy_helper.from_array(rng.integers(-127, 127, (4, 3, 3, 3)).astype(np.int8), "wq"),
     numpy_helper.from_array(np.full(4, 0.01, np.float32), "ws"), f32("b", [4])])
# MatMulNBits (com.microsoft), 4 bits with zero points, K 40 in blocks of 32 (a padded last block).
save("matmul_nbits", [
    helper.make_node("MatMulNBits", ["x", "B", "s", "zp"], ["y"], domain="com.microsoft", K=40, N=8, bits=4,
                     block_size=32)],
    [vi("x", TensorProto.FLOAT, [1, 2, 40])], [vi("y", TensorProto.FLOAT, [1, 2, 8])],
    [numpy_helper.from_array(rng.integers(0, 255, (8, 2, 16)).astype(np.uint8), "B"),
     numpy_helper.from_array(np.full(16, 0.05, np.float32), "s"),
     numpy_helper.from_array(rng.integers(0, 255, (8,)).astype(np.uint8), "zp")], domains=["com.microsoft"])
# Normalization, activations, pooling, resize, reductions.
save("cnn_ops", [
    helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1], strides=[2, 2]),
    helper.make_node("BatchNormalization", ["c", "g", "bb", "m", "v"], ["bn"]),
    helper.make_node("HardSwish", ["bn"], ["h"]),
    helper.make_node("Resize", ["h", "", "sc"], ["r"], mode="nearest"),
    helper.make_node("GlobalAveragePool", ["r"], ["p"]),
    helper.make_node("Flatten", ["p"], ["f"]),
    helper.make_node("Gemm", ["f", "fw", "fb"], ["y"], transB=1)],
    [vi("x", TensorProto.FLOAT, [1, 3, 16, 16])], [vi("y", TensorProto.FLOAT, [1, 5])],
    [f32("w", [6, 3, 3, 3]), f32("g", [6]), f32("bb", [6]), f32("m", [6]),
     numpy_helper.from_array(np.ones(6, np.float32), "v"),
     numpy_helper.from_array(np.array([1, 1, 2, 2], np.float32), "sc"), f32("fw", [5, 6]), f32("fb", [5])])
