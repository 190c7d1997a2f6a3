#!/usr/bin/env python3
"""The tiny Llama of export_decoders.py (same weights: same seed and layer scale) written node for
node in the form onnxruntime-genai's model builder writes decoders (the `*-onnx` LLMs people
download), since the builder (package onnxruntime-genai) is not on the GPU machine:

  input_ids [batch_size, sequence_length], attention_mask [batch_size, total_sequence_length],
  past_key_values.i.key / .value [batch_size, kv_heads, past_sequence_length, head]
  -> logits, present.i.key / .value
  seqlens_k = Cast(ReduceSum(attention_mask, 1) - 1, int32), total_sequence_length =
  Cast(Shape(attention_mask)[1], int32); per layer (Skip)SimplifiedLayerNormalization, MatMul
  projections, com.microsoft GroupQueryAttention with the rotary inside (do_rotary, cos_cache and
  sin_cache [max positions, head / 2]), SiLU as x * Sigmoid(x).

  llama/llama_gqa_fp32/   that graph; llama/llama_gqa_int4/ its MatMuls quantized to MatMulNBits
  by onnxruntime's MatMulNBitsQuantizer (4 bits, blocks of 32, as the builder's int4 does);
  llama/llama_gqa_packed/ the fp32 graph with Q, K and V as one packed projection (GQA reads its
  packed input, key and value absent; the builder does this for fused-qkv models).
  llama/llama_gqa_rotemb/ the fp32 graph with a position_ids input and the rotation done by
  com.microsoft RotaryEmbedding nodes before a GroupQueryAttention that does not rotate.
  Data sets: 0 the prompt from an empty cache, 1 one token at the prompt's cache (past 8), 2 three
  tokens at a cache of 5; onnxruntime's outputs (its own GroupQueryAttention kernel).
  greedy.json gains onnxruntime_llama_gqa_<form>: the tokens of an onnxruntime loop.
  llama/llama_gqa_fp32/variants/<name>/: data sets 1 and 2 (no model) of the fp32 graph with its
  GroupQueryAttention attributes edited (the test makes the same edit): `window` local_window_size 3,
  `softcap` softcap 1.5, `interleaved` rotary_interleaved 1. (Partial rotary cannot be made at this
  head size: onnxruntime's kernel wants cos_cache's width a multiple of 8 and at most head / 2.)

Run where PyTorch, transformers, onnx and onnxruntime are (the GPU machine), from the repository
root:  python3 tests/models/export_gqa.py tests/models/decoders
"""
import json
import os
import sys

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import export_decoders as ed  # noqa: E402
from onnx_test_data import save_report  # noqa: E402


def build(model, cfg, packed, rotemb=False):
    sd = {k: v.detach().numpy().astype(np.float32) for k, v in model.state_dict().items()}
    hidden, heads, kv = cfg.hidden_size, cfg.num_attention_heads, cfg.num_key_value_heads
    head = hidden // heads
    layers = cfg.num_hidden_layers
    inits, nodes = [], []

    def init(name, array):
        inits.append(numpy_helper.from_array(np.ascontiguousarray(array), name))
        return name

    def node(op, ins, outs, domain="", **attrs):
        nodes.append(helper.make_node(op, ins, outs, name=outs[0].replace(".", "_") + "_node", domain=domain, **attrs))
        return outs[0]

    inv_freq = model.model.rotary_emb.inv_freq.detach().numpy().astype(np.float64)
    angles = np.outer(np.arange(cfg.max_position_embeddings, dtype=np.float64), inv_freq)
    init("cos_cache", np.cos(angles).astype(np.float32))
    init("sin_cache", np.sin(angles).astype(np.float32))
    init("one", np.array(1, np.int64))
    init("axes_1", np.array([1], np.int64))
    init("index_1", np.array(1, np.int64))
    node("ReduceSum", ["attention_mask", "axes_1"], ["mask_sum"], keepdims=0)
    node("Sub", ["mask_sum", "one"], ["mask_sub"])
    node("Cast", ["mask_sub"], ["seqlens_k"], to=TensorProto.INT32)
    node("Shape", ["attention_mask"], ["mask_shape"])
    node("Gather", ["mask_shape", "index_1"], ["total_len64"], axis=0)
    node("Cast", ["total_len64"], ["total_sequence_length"], to=TensorProto.INT32)
    x = node("Gather", [init("embed_tokens", sd["model.embed_tokens.weight"]), "input_ids"], ["embeds"])
    residual = None
    eps = float(cfg.rms_norm_eps)
    for i in range(layers):
        p = f"model.layers.{i}."
        ln = init(f"ln_{i}", sd[p + "input_layernorm.weight"])
        if residual is None:
            normed = node("SimplifiedLayerNormalization", [x, ln], [f"ln_{i}_out"], axis=-1, epsilon=eps)
            residual = x
        else:
            node("SkipSimplifiedLayerNormalization", [x, residual, ln], [f"ln_{i}_out", "", "", f"ln_{i}_sum"],
                 domain="com.microsoft", epsilon=eps)
            normed, residual = f"ln_{i}_out", f"ln_{i}_sum"
        wq, wk, wv = (sd[p + f"self_attn.{n}_proj.weight"].T for n in "qkv")
        gqa_in = []
        if packed:
            qkv = node("MatMul", [normed, init(f"qkv_{i}", np.concatenate([wq, wk, wv], axis=1))], [f"qkv_{i}_out"])
            gqa_in = [qkv, "", ""]
        else:
            for n, w in zip("qkv", (wq, wk, wv)):
                gqa_in.append(node("MatMul", [normed, init(f"{n}_{i}", w)], [f"{n}_{i}_out"]))
        rotary = {"do_rotary": 1, "rotary_interleaved": 0}
        tables = ["cos_cache", "sin_cache"]
        if rotemb:  # RoPE by separate RotaryEmbedding nodes at position_ids, as the builder does for
            # execution providers whose attention does not rotate
            for j, h in ((0, heads), (1, kv)):
                gqa_in[j] = node("RotaryEmbedding", [gqa_in[j], "position_ids", "cos_cache", "sin_cache"],
                                 [gqa_in[j] + "_rotary"], domain="com.microsoft", num_heads=h, interleaved=0)
            rotary, tables = {"do_rotary": 0}, []
        attn = node("GroupQueryAttention",
                    gqa_in + [f"past_key_values.{i}.key", f"past_key_values.{i}.value", "seqlens_k",
                              "total_sequence_length"] + tables,
                    [f"attn_{i}", f"present.{i}.key", f"present.{i}.value"], domain="com.microsoft",
                    num_heads=heads, kv_num_heads=kv, scale=float(1.0 / np.sqrt(head)), local_window_size=-1,
                    **rotary)
        o = node("MatMul", [attn, init(f"o_{i}", sd[p + "self_attn.o_proj.weight"].T)], [f"o_{i}_out"])
        node("SkipSimplifiedLayerNormalization", [o, residual, init(f"post_ln_{i}", sd[p + "post_attention_layernorm.weight"])],
             [f"post_ln_{i}_out", "", "", f"post_ln_{i}_sum"], domain="com.microsoft", epsilon=eps)
        residual = f"post_ln_{i}_sum"
        gate = node("MatMul", [f"post_ln_{i}_out", init(f"gate_{i}", sd[p + "mlp.gate_proj.weight"].T)], [f"gate_{i}_out"])
        up = node("MatMul", [f"post_ln_{i}_out", init(f"up_{i}", sd[p + "mlp.up_proj.weight"].T)], [f"up_{i}_out"])
        sig = node("Sigmoid", [gate], [f"gate_{i}_sigmoid"])
        act = node("Mul", [gate, sig], [f"gate_{i}_silu"])
        prod = node("Mul", [act, up], [f"mlp_{i}_prod"])
        x = node("MatMul", [prod, init(f"down_{i}", sd[p + "mlp.down_proj.weight"].T)], [f"down_{i}_out"])
    node("SkipSimplifiedLayerNormalization", [x, residual, init("final_ln", sd["model.norm.weight"])],
         ["final_ln_out", "", "", "final_ln_sum"], domain="com.microsoft", epsilon=eps)
    node("MatMul", ["final_ln_out", init("lm_head", sd["lm_head.weight"].T)], ["logits"])

    kv_shape = ["batch_size", kv, "past_sequence_length", head]
    out_kv = ["batch_size", kv, "total_sequence_length", head]
    inputs = [helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch_size", "sequence_length"]),
              helper.make_tensor_value_info("attention_mask", TensorProto.INT64, ["batch_size", "total_sequence_length"])]
    if rotemb:
        inputs.insert(1, helper.make_tensor_value_info("position_ids", TensorProto.INT64, ["batch_size", "sequence_length"]))
    outputs = [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch_size", "sequence_length", cfg.vocab_size])]
    for i in range(layers):
        for kind in ("key", "value"):
            inputs.append(helper.make_tensor_value_info(f"past_key_values.{i}.{kind}", TensorProto.FLOAT, kv_shape))
            outputs.append(helper.make_tensor_value_info(f"present.{i}.{kind}", TensorProto.FLOAT, out_kv))
    graph = helper.make_graph(nodes, "llama_gqa", inputs, outputs, inits)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)],
                          producer_name="vkc tests/models/export_gqa.py (onnxruntime-genai builder form)")
    m.ir_version = 8
    return m


def int4(m):
    from onnxruntime.quantization.matmul_nbits_quantizer import MatMulNBitsQuantizer
    q = MatMulNBitsQuantizer(m, block_size=32, is_symmetric=True, bits=4)
    q.process()
    return q.model.model


VARIANTS = {"window": {"local_window_size": 3}, "softcap": {"softcap": 1.5}, "interleaved": {"rotary_interleaved": 1}}


def edited(m, attrs):
    e = onnx.ModelProto()
    e.CopyFrom(m)
    for n in e.graph.node:
        if n.op_type != "GroupQueryAttention":
            continue
        for name, v in attrs.items():
            kept = [a for a in n.attribute if a.name != name]
            del n.attribute[:]
            n.attribute.extend(kept + [helper.make_attribute(name, v)])
    return e


def variants(out, m, report):
    import export_genai as eg
    for name, attrs in VARIANTS.items():
        folder = os.path.join(out, "llama", "llama_gqa_fp32", "variants", name)
        os.makedirs(folder, exist_ok=True)
        path = os.path.join(folder, "model.onnx")
        onnx.save(edited(m, attrs), path)
        try:
            eg.data_sets(eg.Runner(path), folder, first=1)
            report.append(f"variant {name} {attrs}: data sets 1, 2")
        except Exception as e:  # noqa: BLE001 - reported, not fatal
            report.append(f"variant {name}: FAILED {e!r}"[:400])
        os.remove(path)


def write(out, form, m, report):
    import export_genai as eg
    folder = os.path.join(out, "llama", f"llama_gqa_{form}")
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, "model.onnx")
    onnx.save(m, path)
    runner = eg.Runner(path)
    eg.data_sets(runner, folder)
    tokens, hf = eg.record_tokens(out, f"onnxruntime_llama_gqa_{form}", runner)
    report.append(f"llama_gqa_{form}: {len(m.graph.node)} nodes, tokens {tokens} (transformers {hf}, equal: {tokens == hf})")


def main():
    out = sys.argv[1]
    report = [f"onnxruntime {ort.__version__}, onnx {onnx.__version__}"]
    cfg = ed.configs()["llama"]()
    with open(os.path.join(out, "llama", "greedy.json")) as f:
        scale = json.load(f).get("layer_init_scale", 3.0)
    model = ed.make_model(cfg, scale)
    fp32 = build(model, cfg, packed=False)
    write(out, "fp32", fp32, report)
    variants(out, fp32, report)
    write(out, "packed", build(model, cfg, packed=True), report)
    write(out, "rotemb", build(model, cfg, packed=False, rotemb=True), report)
    try:
        write(out, "int4", int4(fp32), report)
    except Exception as e:  # noqa: BLE001
        report.append(f"int4: {e!r}")
    save_report(os.path.join(out, "gqa_report.txt"), report)


if __name__ == "__main__":
    main()
