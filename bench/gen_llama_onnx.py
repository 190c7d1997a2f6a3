#!/usr/bin/env python3
"""Writes a Llama-style decoder as ONNX with external data, for bench/quant_bench.sh.

Token embedding (Gather) -> LAYERS x [RMSNorm, q/k/v/o projections, SwiGLU MLP, residuals] -> RMSNorm -> lm_head.
Attention is replaced by an elementwise mix (q * sigmoid(k) * v) so the model needs no SDPA fusion:
the bench measures weight quantization and compile, whose cost is the projections. With --attention
it is real attention as HF exports write it: heads of 64, rotate-half RoPE on [1, H, S, D] with
constant tables, MatMul / Div(sqrt D) / causal mask / Softmax / MatMul (fused by vkc into
et_vk.apply_rotary_emb_hf and et_vk.sdpa).
Linear layers are Gemm(transB=1) with [N, K] weights as exporters write them for 2-D inputs; with
--matmul they are MatMul with [K, N] weights instead. Weights are Gaussian (std 0.02); for speed,
slices of one random pool (generated once) rather than fresh draws per tensor.

With --fp16 the weights, activations and logits are fp16 (an fp16 export; bench/compile_memory.sh
uses it for its 8B-class shape).

Needs python3-onnx and numpy (Debian: PYENV_VERSION=system python3).
"""
import argparse
import os

import numpy as np
import onnx
from onnx import TensorProto, helper


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True, help="model path (.onnx); data goes next to it as <name>.data")
    ap.add_argument("--dim", type=int, default=2048)
    ap.add_argument("--hidden", type=int, default=8192)
    ap.add_argument("--layers", type=int, default=15)
    ap.add_argument("--vocab", type=int, default=32000)
    ap.add_argument("--seq", type=int, default=8)
    ap.add_argument("--matmul", action="store_true", help="MatMul with [K, N] weights instead of Gemm transB=1")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--attention", action="store_true", help="real attention (RoPE, causal SDPA) instead of a mix")
    ap.add_argument("--fp16", action="store_true", help="fp16 weights, activations and logits (an fp16 export)")
    a = ap.parse_args()
    ftype, npf = (TensorProto.FLOAT16, np.float16) if a.fp16 else (TensorProto.FLOAT, np.float32)

    rng = np.random.default_rng(a.seed)
    pool = (rng.standard_normal(1 << 24, dtype=np.float32) * 0.02).astype(npf)
    data_name = os.path.basename(a.out) + ".data"
    data = open(os.path.join(os.path.dirname(os.path.abspath(a.out)), data_name), "wb")
    inits, nodes = [], []
    params = 0

    def weight(name, shape, ones=False):
        nonlocal params
        n = int(np.prod(shape))
        params += n
        offset = data.tell()
        if ones:
            data.write(np.ones(n, npf).tobytes())
        else:
            left, start = n, int(rng.integers(0, pool.size))
            while left:
                take = min(left, pool.size - start)
                data.write(pool[start:start + take].tobytes())
                left -= take
                start = 0
        t = TensorProto(name=name, data_type=ftype, dims=shape)
        t.data_location = TensorProto.EXTERNAL
        for k, v in (("location", data_name), ("offset", str(offset)), ("length", str(n * pool.itemsize))):
            e = t.external_data.add()
            e.key, e.value = k, v
        inits.append(t)
        return name

    def node(op, ins, name, **attrs):
        nodes.append(helper.make_node(op, ins, [name], name=name, **attrs))
        return name

    def linear(x, name, k, n):
        if a.matmul:
            return node("MatMul", [x, weight(name + ".weight", [k, n])], name)
        return node("Gemm", [x, weight(name + ".weight", [n, k])], name, transB=1)

    eps = helper.make_tensor("eps", ftype, [], [1e-5])
    inits.append(eps)

    def rms_norm(x, name):
        sq = node("Mul", [x, x], name + ".sq")
        ms = node("ReduceMean", [sq], name + ".ms", axes=[-1], keepdims=1)
        rt = node("Sqrt", [node("Add", [ms, "eps"], name + ".add")], name + ".sqrt")
        return node("Mul", [node("Div", [x, rt], name + ".div"), weight(name + ".weight", [a.dim], ones=True)], name)

    def const(name, array, dtype=TensorProto.FLOAT):
        inits.append(helper.make_tensor(name, dtype, list(array.shape), array.flatten().tolist()))
        return name

    heads, hd = a.dim // 64, 64
    if a.attention and a.fp16:
        raise SystemExit("gen_llama_onnx: --attention is fp32 only")
    if a.attention:
        inv = 10000.0 ** (-np.arange(0, hd, 2, dtype=np.float64) / hd)
        ang = np.arange(a.seq)[:, None] * inv[None, :]
        emb = np.concatenate([ang, ang], axis=-1).reshape(1, 1, a.seq, hd)
        const("rope.cos", np.cos(emb).astype(np.float32))
        const("rope.sin", np.sin(emb).astype(np.float32))
        const("attn.mask", np.triu(np.full((a.seq, a.seq), -1e4, np.float32), 1).reshape(1, 1, a.seq, a.seq))
        const("attn.scale", np.array(np.sqrt(hd), np.float32))
        const("shape.heads", np.array([1, a.seq, heads, hd], np.int64), TensorProto.INT64)
        const("shape.flat", np.array([a.seq, a.dim], np.int64), TensorProto.INT64)
        const("rope.half", np.array([hd // 2], np.int64), TensorProto.INT64)
        const("rope.zero", np.array([0], np.int64), TensorProto.INT64)
        const("rope.end", np.array([hd], np.int64), TensorProto.INT64)
        const("rope.axis", np.array([-1], np.int64), TensorProto.INT64)

    def to_heads(t, name):
        r = node("Reshape", [t, "shape.heads"], name + ".view")
        return node("Transpose", [r], name + ".heads", perm=[0, 2, 1, 3])

    def rope(t, name):
        x2 = node("Slice", [t, "rope.half", "rope.end", "rope.axis"], name + ".x2")
        x1 = node("Slice", [t, "rope.zero", "rope.half", "rope.axis"], name + ".x1")
        rot = node("Concat", [node("Neg", [x2], name + ".neg"), x1], name + ".rot", axis=-1)
        return node("Add", [node("Mul", [t, "rope.cos"], name + ".cos"), node("Mul", [rot, "rope.sin"], name + ".sin")],
                    name + ".rope")

    def attention(h, p):
        q = rope(to_heads(linear(h, p + ".wq", a.dim, a.dim), p + ".q"), p + ".q")
        k = rope(to_heads(linear(h, p + ".wk", a.dim, a.dim), p + ".k"), p + ".k")
        v = to_heads(linear(h, p + ".wv", a.dim, a.dim), p + ".v")
        kt = node("Transpose", [k], p + ".kt", perm=[0, 1, 3, 2])
        s = node("Div", [node("MatMul", [q, kt], p + ".qk"), "attn.scale"], p + ".scaled")
        probs = node("Softmax", [node("Add", [s, "attn.mask"], p + ".masked")], p + ".probs", axis=-1)
        o = node("Transpose", [node("MatMul", [probs, v], p + ".pv")], p + ".o", perm=[0, 2, 1, 3])
        return node("Reshape", [o, "shape.flat"], p + ".flat")

    x = node("Gather", [weight("tok_embeddings.weight", [a.vocab, a.dim]), "ids"], "embed", axis=0)
    for i in range(a.layers):
        p = f"layers.{i}"
        h = rms_norm(x, p + ".attention_norm")
        if a.attention:
            mix = attention(h, p + ".attention")
        else:
            q = linear(h, p + ".attention.wq", a.dim, a.dim)
            k = linear(h, p + ".attention.wk", a.dim, a.dim)
            v = linear(h, p + ".attention.wv", a.dim, a.dim)
            mix = node("Mul", [node("Mul", [q, node("Sigmoid", [k], p + ".attention.gate")], p + ".attention.qk"), v],
                       p + ".attention.mix")
        x = node("Add", [x, linear(mix, p + ".attention.wo", a.dim, a.dim)], p + ".attention.residual")
        h = rms_norm(x, p + ".ffn_norm")
        g = linear(h, p + ".feed_forward.w1", a.dim, a.hidden)
        u = linear(h, p + ".feed_forward.w3", a.dim, a.hidden)
        silu = node("Mul", [g, node("Sigmoid", [g], p + ".feed_forward.sig")], p + ".feed_forward.silu")
        m = node("Mul", [silu, u], p + ".feed_forward.gated")
        x = node("Add", [x, linear(m, p + ".feed_forward.w2", a.hidden, a.dim)], p + ".feed_forward.residual")
    logits = linear(rms_norm(x, "norm"), "output", a.dim, a.vocab)
    data.close()

    graph = helper.make_graph(nodes, "llama_style", [helper.make_tensor_value_info("ids", TensorProto.INT64, [a.seq])],
                              [helper.make_tensor_value_info(logits, ftype, [a.seq, a.vocab])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="vkc-bench")
    model.ir_version = 8
    onnx.save(model, a.out)
    print(f"{a.out}: {params / 1e9:.3f} B parameters, {os.path.getsize(a.out + '.data') / 2**30:.2f} GiB external data")


if __name__ == "__main__":
    main()
