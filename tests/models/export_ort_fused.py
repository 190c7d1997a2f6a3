#!/usr/bin/env python3
"""Exports small random-weight BERT-, ViT-, GPT-2- and UNet-block-style models with torch.onnx
(TorchScript exporter, the form onnxruntime's transformer optimizer knows) and runs them through
onnxruntime.transformers.optimizer under several fusion settings, so that the fused contrib
operators it writes (Attention with packed QKV weights, mask index or raw mask and past,
MultiHeadAttention, SkipLayerNormalization, BiasGelu/FastGelu, BiasSplitGelu, BiasAdd,
GemmFastGelu) reach vkc's tests as the tool writes them.

Each case: <OUT>/<case>/model.onnx (the optimized file) and test_data_set_N with onnxruntime's
outputs. The reference is the optimized file run by onnxruntime's CPU provider with graph
optimizations off; an operator the CPU provider has no kernel for (BiasSplitGelu, BiasAdd and
GemmFastGelu are CUDA/ROCm kernels) takes the unfused export's outputs instead, which the report
says. report.txt lists each case's fused operators and the largest difference between the
optimized and the unfused model.

Run on a machine with PyTorch, onnx and onnxruntime (the GPU machine has them):
    python3 export_ort_fused.py OUT_DIR
"""
import collections
import functools
import math
import os
import sys
import traceback

import numpy as np
import onnx
import onnxruntime as ort
import torch
from onnxruntime.transformers.fusion_options import AttentionMaskFormat, FusionOptions
from onnxruntime.transformers.optimizer import optimize_model

from onnx_test_data import save_report, save_set

HID, HEADS, SEQ, VOCAB = 32, 4, 8, 50


class BertLayer(torch.nn.Module):
    """transformers 4.x's BertLayer, eager: Div by sqrt(d), the (1 - mask) * -10000 extended mask."""

    def __init__(self, gelu="erf"):
        super().__init__()
        self.q, self.k, self.v = (torch.nn.Linear(HID, HID) for _ in range(3))
        self.o = torch.nn.Linear(HID, HID)
        self.ln1 = torch.nn.LayerNorm(HID, eps=1e-12)
        self.up = torch.nn.Linear(HID, 4 * HID)
        self.down = torch.nn.Linear(4 * HID, HID)
        self.ln2 = torch.nn.LayerNorm(HID, eps=1e-12)
        self.gelu = gelu

    def heads(self, x):
        return x.view(x.size()[:-1] + (HEADS, HID // HEADS)).permute(0, 2, 1, 3)

    def forward(self, x, ext_mask):
        q, k, v = self.heads(self.q(x)), self.heads(self.k(x)), self.heads(self.v(x))
        s = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(HID // HEADS)
        if ext_mask is not None:
            s = s + ext_mask
        p = torch.nn.functional.softmax(s, dim=-1)
        c = torch.matmul(p, v).permute(0, 2, 1, 3).contiguous()
        c = c.view(c.size()[:-2] + (HID,))
        h = self.ln1(self.o(c) + x)
        u = self.up(h)
        if self.gelu == "erf":
            u = torch.nn.functional.gelu(u)
        else:  # the tanh form GPT-2 and "gelu_new" use
            u = 0.5 * u * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (u + 0.044715 * torch.pow(u, 3.0))))
        return self.ln2(self.down(u) + h)


class Bert(torch.nn.Module):
    def __init__(self, masked=True, gelu="erf", layers=2):
        super().__init__()
        torch.manual_seed(0)
        self.emb = torch.nn.Embedding(VOCAB, HID)
        self.pos = torch.nn.Embedding(SEQ, HID)
        self.ln = torch.nn.LayerNorm(HID, eps=1e-12)
        self.layers = torch.nn.ModuleList(BertLayer(gelu) for _ in range(layers))
        self.masked = masked

    def forward(self, input_ids, attention_mask=None):
        x = self.ln(self.emb(input_ids) + self.pos.weight[: input_ids.shape[1]])
        ext = None
        if self.masked:
            ext = (1.0 - attention_mask[:, None, None, :].to(torch.float32)) * -10000.0
        for layer in self.layers:
            x = layer(x, ext)
        return x


class ViT(torch.nn.Module):
    """Patch embedding by a strided convolution, a class token, pre-norm layers without a mask."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.patch = torch.nn.Conv2d(3, HID, 4, stride=4)
        self.cls = torch.nn.Parameter(torch.randn(1, 1, HID))
        self.layers = torch.nn.ModuleList(BertLayer("erf") for _ in range(2))

    def forward(self, pixel_values):
        x = self.patch(pixel_values).flatten(2).transpose(1, 2)
        x = torch.cat([self.cls.expand(x.shape[0], -1, -1), x], dim=1)
        for layer in self.layers:
            x = layer(x, None)
        return x


def conv1d(x, w, b):
    """GPT-2's Conv1D: addmm over the flattened rows (a Gemm in the export)."""
    out = x.size()[:-1] + (w.size(-1),)
    return torch.addmm(b, x.view(-1, x.size(-1)), w).view(out)


class GPT2Block(torch.nn.Module):
    """transformers 3.x/4.x's GPT2Block with its `past` as one [2, B, H, P, D] tensor and `present`
    stacked likewise; the causal mask from the tril buffer, the attention mask added."""

    def __init__(self):
        super().__init__()
        self.ln1 = torch.nn.LayerNorm(HID)
        self.w_attn = torch.nn.Parameter(torch.randn(HID, 3 * HID) * 0.2)
        self.b_attn = torch.nn.Parameter(torch.randn(3 * HID) * 0.1)
        self.w_proj = torch.nn.Parameter(torch.randn(HID, HID) * 0.2)
        self.b_proj = torch.nn.Parameter(torch.randn(HID) * 0.1)
        self.ln2 = torch.nn.LayerNorm(HID)
        self.w_fc = torch.nn.Parameter(torch.randn(HID, 4 * HID) * 0.2)
        self.b_fc = torch.nn.Parameter(torch.randn(4 * HID) * 0.1)
        self.w_out = torch.nn.Parameter(torch.randn(4 * HID, HID) * 0.2)
        self.b_out = torch.nn.Parameter(torch.randn(HID) * 0.1)
        self.register_buffer("bias", torch.tril(torch.ones(64, 64, dtype=torch.uint8)).view(1, 1, 64, 64))
        self.register_buffer("masked_bias", torch.tensor(-1e4))

    def split(self, x, k=False):
        x = x.view(x.size()[:-1] + (HEADS, HID // HEADS))
        return x.permute(0, 2, 3, 1) if k else x.permute(0, 2, 1, 3)

    def attn(self, x, past, ext_mask):
        q, k, v = conv1d(x, self.w_attn, self.b_attn).split(HID, dim=2)
        q, k, v = self.split(q), self.split(k, k=True), self.split(v)
        pk, pv = past[0].transpose(-2, -1), past[1]
        k = torch.cat((pk, k), dim=-1)
        v = torch.cat((pv, v), dim=-2)
        present = torch.stack((k.transpose(-2, -1), v))
        w = torch.matmul(q, k)
        w = w / (float(v.size(-1)) ** 0.5)
        nd, ns = w.size(-2), w.size(-1)
        mask = self.bias[:, :, ns - nd : ns, :ns]
        w = torch.where(mask.bool(), w, self.masked_bias.to(w.dtype))
        w = w + ext_mask
        w = torch.nn.functional.softmax(w, dim=-1)
        a = torch.matmul(w, v).permute(0, 2, 1, 3).contiguous()
        a = a.view(a.size()[:-2] + (HID,))
        return conv1d(a, self.w_proj, self.b_proj), present

    def forward(self, x, past, ext_mask):
        a, present = self.attn(self.ln1(x), past, ext_mask)
        x = x + a
        h = conv1d(self.ln2(x), self.w_fc, self.b_fc)
        h = 0.5 * h * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (h + 0.044715 * torch.pow(h, 3.0))))
        return x + conv1d(h, self.w_out, self.b_out), present


class GPT2(torch.nn.Module):
    def __init__(self, layers=2):
        super().__init__()
        torch.manual_seed(0)
        self.wte = torch.nn.Embedding(VOCAB, HID)
        self.wpe = torch.nn.Embedding(64, HID)
        self.blocks = torch.nn.ModuleList(GPT2Block() for _ in range(layers))
        self.ln_f = torch.nn.LayerNorm(HID)

    def forward(self, input_ids, position_ids, attention_mask, past_0, past_1):
        x = self.wte(input_ids) + self.wpe(position_ids)
        mask = attention_mask.view(input_ids.shape[0], -1)
        ext = (1.0 - mask[:, None, None, :].to(torch.float32)) * -10000.0
        presents = []
        for block, past in zip(self.blocks, (past_0, past_1)):
            x, p = block(x, past, ext)
            presents.append(p)
        return (self.ln_f(x), *presents)


class UNetBlock(torch.nn.Module):
    """A diffusion UNet transformer block's tail: GEGLU (Add bias, halves, x * Gelu(gate)) and the
    residual adds onnxruntime's unet optimizer turns into BiasSplitGelu and BiasAdd."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.norm = torch.nn.LayerNorm(HID)
        self.proj = torch.nn.Linear(HID, 8 * HID)
        self.out = torch.nn.Linear(4 * HID, HID)

    def forward(self, x, residual):
        s = x + residual  # SkipLayerNormalization with its sum output, which BiasAdd's skip reads
        h = self.proj(self.norm(s))
        a, gate = h.chunk(2, dim=-1)
        h = a * torch.nn.functional.gelu(gate)
        return self.out(h) + s


class MlpFastGelu(torch.nn.Module):
    """A linear followed by the tanh Gelu: GemmFastGelu when that fusion is on."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.up = torch.nn.Linear(HID, 4 * HID)
        self.down = torch.nn.Linear(4 * HID, HID)
        self.ln = torch.nn.LayerNorm(HID)

    def forward(self, x):
        u = self.up(x)
        u = 0.5 * u * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (u + 0.044715 * torch.pow(u, 3.0))))
        return self.ln(self.down(u) + x)


def export(module, args, names, outputs, path, opset=17, dynamic_axes=None):
    module.eval()
    torch.onnx.export(module, args, path, dynamo=False, input_names=names, output_names=outputs,
                      opset_version=opset, do_constant_folding=True, dynamic_axes=dynamic_axes)


def run(path, feeds):
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    sess = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
    names = {i.name for i in sess.get_inputs()}
    return sess.run(None, {k: v for k, v in feeds.items() if k in names})


def op_counts(path):
    m = onnx.load(path)
    c = collections.Counter(n.op_type for n in m.graph.node)
    return " ".join(f"{k}x{v}" for k, v in sorted(c.items()))


def fused_case(out, report, name, raw, model_type, feeds_list, options=None, opt_level=None, expect=(), use_gpu=False):
    folder = os.path.join(out, name)
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, "model.onnx")
    kw = dict(model_type=model_type, num_heads=HEADS, hidden_size=HID, optimization_options=options, use_gpu=use_gpu)
    if opt_level is not None:
        kw["opt_level"] = opt_level
    m = optimize_model(raw, **kw)
    m.save_model_to_file(path)
    ops = op_counts(path)
    missing = [e for e in expect if f"{e}x" not in ops]
    source = "optimized"
    diffs = []
    for i, feeds in enumerate(feeds_list):
        ref = run(raw, feeds)
        try:
            got = run(path, feeds)
            diffs.append(max(float(np.abs(a - b).max()) for a, b in zip(got, ref)))
        except Exception as e:  # noqa: BLE001 - an operator without a CPU kernel: the unfused outputs
            got, source = ref, f"unfused ({type(e).__name__}: {str(e).splitlines()[0][:120]})"
        names = [k for k in feeds]
        save_set(folder, i, [feeds[k] for k in names], got, names)
    status = "ok" if not missing else f"NOT FUSED {missing}"
    report.append(f"{name}: {status}; reference {source}; max |optimized - unfused| {diffs}; ops {ops}")


def guarded_case(report, label, fn):
    """Runs one case; a failure is reported with its first line (and its traceback on stderr), none hidden."""
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - every failure is reported, none hidden
        traceback.print_exc()
        report.append(f"{label}: FAILED {type(e).__name__}: {str(e).splitlines()[0][:200]}")


def contrib_node_cases(out, report, rng):
    """The forms the optimizer did not write here, as single contrib nodes made with onnx.helper and
    run by onnxruntime's CPU kernels: Attention with [2B] and 3-D masks, attention_bias, unequal V
    width, past with a raw mask and unidirectional; MultiHeadAttention packed (QKV, KV), with
    per-head cross keys, with bias, past and unidirectional; BiasAdd; GemmFastGelu (no CPU kernel:
    its reference is the same graph with MatMul, Add and FastGelu)."""
    from onnx import TensorProto as T
    from onnx import helper as h
    from onnx import numpy_helper as nh

    B, S, N, H = 2, 5, 2, 4
    D = N * H
    f32 = lambda *shape: rng.standard_normal(shape).astype(np.float32)

    def case(name, node, inputs, consts, outputs, ref_nodes=None):
        graph_inputs = [h.make_tensor_value_info(k, T.INT32 if v.dtype == np.int32 else T.FLOAT, v.shape)
                        for k, v in inputs.items()]
        inits = [nh.from_array(v, k) for k, v in consts.items()]
        outs = [h.make_tensor_value_info(o, T.FLOAT, None) for o in outputs]
        opset = [h.make_opsetid("", 17), h.make_opsetid("com.microsoft", 1)]
        # IR version 8 (opset 17's): onnx 1.23 writes 14 by default, which onnxruntime 1.30 refuses.
        model = h.make_model(h.make_graph([node], name, graph_inputs, outs, inits), opset_imports=opset, ir_version=8)
        folder = os.path.join(out, name)
        os.makedirs(folder, exist_ok=True)
        path = os.path.join(folder, "model.onnx")
        onnx.save(model, path)
        source = "the node"
        if ref_nodes:
            ref = h.make_model(h.make_graph(ref_nodes, name, graph_inputs, outs, inits), opset_imports=opset,
                               ir_version=8)
            ref_path = os.path.join(out, "_raw", name + "_reference.onnx")
            onnx.save(ref, ref_path)
            source = "the equivalent MatMul/Add/FastGelu graph"
        got = run(ref_path if ref_nodes else path, inputs)
        save_set(folder, 0, list(inputs.values()), got, list(inputs.keys()))
        report.append(f"{name}: ok; reference {source}; outputs {[list(g.shape) for g in got]}")

    guarded = functools.partial(guarded_case, report)

    ms = lambda **kw: h.make_node(domain="com.microsoft", **kw)
    x = f32(B, S, D)
    w = f32(D, 3 * D) * 0.5
    bias = f32(3 * D)
    starts = np.array([5, 3, 0, 1], np.int32)  # ends [5, 3], starts [0, 1]
    guarded("attention_mask_end_start_causal", lambda: case(
        "attention_mask_end_start_causal",
        ms(op_type="Attention", inputs=["x", "w", "b", "mask"], outputs=["y"], num_heads=N, unidirectional=1),
        {"x": x, "mask": starts}, {"w": w, "b": bias}, ["y"]))
    m3 = (rng.random((B, S, S)) > 0.3).astype(np.int32)
    m3[:, :, 0] = 1
    wv = f32(D, 2 * D + 2 * N) * 0.5  # V heads of 2 where Q and K have 4
    guarded("attention_mask_3d_bias_sizes", lambda: case(
        "attention_mask_3d_bias_sizes",
        ms(op_type="Attention", inputs=["x", "w", "b", "mask", "", "attn_bias"], outputs=["y"], num_heads=N,
           qkv_hidden_sizes=[D, D, 2 * N], scale=0.3, mask_filter_value=-1e9),
        {"x": x, "mask": m3, "attn_bias": f32(1, N, S, S)}, {"w": wv, "b": f32(2 * D + 2 * N)}, ["y"]))
    P = 3
    raw = np.ones((B, P + S), np.int32)
    raw[1, :2] = 0
    guarded("attention_past_raw_mask_causal", lambda: case(
        "attention_past_raw_mask_causal",
        ms(op_type="Attention", inputs=["x", "w", "b", "mask", "past"], outputs=["y", "present"], num_heads=N,
           unidirectional=1),
        {"x": x, "mask": raw, "past": f32(2, B, N, P, H)}, {"w": w, "b": bias}, ["y", "present"]))
    guarded("mha_packed_qkv", lambda: case(
        "mha_packed_qkv", ms(op_type="MultiHeadAttention", inputs=["qkv"], outputs=["y"], num_heads=N),
        {"qkv": f32(B, S, N, 3, H)}, {}, ["y"]))
    L = 7
    guarded("mha_packed_kv_cross_mask", lambda: case(
        "mha_packed_kv_cross_mask",
        ms(op_type="MultiHeadAttention", inputs=["q", "kv", "", "", "mask"], outputs=["y"], num_heads=N),
        {"q": x, "kv": f32(B, L, N, 2, H), "mask": np.array([7, 4], np.int32)}, {}, ["y"]))
    guarded("mha_cross_per_head_kv", lambda: case(
        "mha_cross_per_head_kv",
        ms(op_type="MultiHeadAttention", inputs=["q", "k", "v", "", "mask"], outputs=["y"], num_heads=N),
        {"q": x, "k": f32(B, N, L, H), "v": f32(B, N, L, H), "mask": (rng.random((B, L)) > 0.2).astype(np.int32)},
        {}, ["y"]))
    guarded("mha_bias_past_causal", lambda: case(
        "mha_bias_past_causal",
        ms(op_type="MultiHeadAttention", inputs=["q", "k", "v", "b", "", "", "past_k", "past_v"],
           outputs=["y", "present_k", "present_v"], num_heads=N, unidirectional=1),
        {"q": x, "k": f32(B, S, D), "v": f32(B, S, D), "past_k": f32(B, N, P, H), "past_v": f32(B, N, P, H)},
        {"b": bias}, ["y", "present_k", "present_v"]))
    guarded("bias_add", lambda: case(
        "bias_add", ms(op_type="BiasAdd", inputs=["x", "b", "skip"], outputs=["y"]),
        {"x": x, "skip": f32(B, S, D)}, {"b": f32(D)}, ["y"]))
    gw, gb = f32(D, 4 * D), f32(4 * D)
    guarded("gemm_fast_gelu_node", lambda: case(
        "gemm_fast_gelu_node", ms(op_type="GemmFastGelu", inputs=["x", "w", "b"], outputs=["y"]),
        {"x": x}, {"w": gw, "b": gb}, ["y"],
        ref_nodes=[h.make_node("MatMul", ["x", "w"], ["xw"]),
                   ms(op_type="FastGelu", inputs=["xw", "b"], outputs=["y"])]))


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    raw_dir = os.path.join(out, "_raw")
    os.makedirs(raw_dir, exist_ok=True)
    report = [f"torch {torch.__version__}, onnx {onnx.__version__}, onnxruntime {ort.__version__}"]
    rng = np.random.default_rng(0)
    ids = rng.integers(0, VOCAB, (2, SEQ)).astype(np.int64)
    full = np.ones((2, SEQ), np.int64)
    padded = full.copy()
    padded[1, 5:] = 0  # the second sequence is 5 tokens long: padding on the right
    left = full.copy()
    left[0, :3] = 0  # padding on the left (what mask_index cannot express)

    guarded = functools.partial(guarded_case, report)

    def bert_cases():
        raw = os.path.join(raw_dir, "bert.onnx")
        export(Bert(), (torch.tensor(ids), torch.tensor(full)), ["input_ids", "attention_mask"], ["last_hidden_state"], raw)
        feeds = [{"input_ids": ids, "attention_mask": m} for m in (full, padded, left)]
        right = feeds[:2]
        o = FusionOptions("bert")
        o.use_raw_attention_mask(True)  # the 2-D mask as it is, which left padding needs
        fused_case(out, report, "bert_attention_raw_mask", raw, "bert", feeds, o, expect=["Attention"])
        o = FusionOptions("bert")
        fused_case(out, report, "bert_attention_default", raw, "bert", feeds, o, expect=["Attention"])
        o = FusionOptions("bert")
        o.attention_mask_format = AttentionMaskFormat.MaskIndexEnd
        fused_case(out, report, "bert_attention_mask_index", raw, "bert", right, o, expect=["Attention"])
        o = FusionOptions("bert")
        o.use_multi_head_attention = True
        fused_case(out, report, "bert_multihead_attention", raw, "bert", feeds, o, expect=["MultiHeadAttention"])
        o = FusionOptions("bert")
        o.enable_embed_layer_norm = False
        o.enable_gelu_approximation = True
        fused_case(out, report, "bert_fast_gelu", raw, "bert", feeds, o, expect=["Attention", "FastGelu"])

    def bert_unmasked():
        raw = os.path.join(raw_dir, "bert_nomask.onnx")
        export(Bert(masked=False, gelu="tanh"), (torch.tensor(ids),), ["input_ids"], ["last_hidden_state"], raw)
        fused_case(out, report, "bert_attention_no_mask", raw, "bert", [{"input_ids": ids}], FusionOptions("bert"),
                   expect=["Attention"])

    def vit_cases():
        raw = os.path.join(raw_dir, "vit.onnx")
        px = rng.standard_normal((2, 3, 16, 16)).astype(np.float32)
        export(ViT(), (torch.tensor(px),), ["pixel_values"], ["last_hidden_state"], raw)
        fused_case(out, report, "vit_attention", raw, "vit", [{"pixel_values": px}], FusionOptions("vit"),
                   expect=["Attention"])
        o = FusionOptions("vit")
        o.use_multi_head_attention = True
        fused_case(out, report, "vit_multihead_attention", raw, "vit", [{"pixel_values": px}], o,
                   expect=["MultiHeadAttention"])

    def gpt2_cases():
        # Exported with symbolic lengths, as onnxruntime's GPT-2 converter does (its fusion reads the causal
        # mask's slice bounds from Shape); one file, data sets for a step with past and a prompt without.
        d = HID // HEADS
        path = os.path.join(raw_dir, "gpt2.onnx")
        names = ["input_ids", "position_ids", "attention_mask", "past_0", "past_1"]
        seq = {0: "batch", 1: "seq"}
        past_axes = {1: "batch", 3: "past"}
        axes = {"input_ids": seq, "position_ids": seq, "attention_mask": {0: "batch", 1: "total"}, "past_0": past_axes,
                "past_1": past_axes, "last_hidden_state": seq, "present_0": {1: "batch", 3: "total"},
                "present_1": {1: "batch", 3: "total"}}
        feeds = []
        for past_len, s in ((4, 4), (0, SEQ), (7, 1)):
            step_ids = rng.integers(0, VOCAB, (2, s)).astype(np.int64)
            pos = np.tile(np.arange(past_len, past_len + s, dtype=np.int64), (2, 1))
            pasts = [rng.standard_normal((2, 2, HEADS, past_len, d)).astype(np.float32) for _ in range(2)]
            mask = np.ones((2, past_len + s), np.int64)
            mask[1, :2] = 0  # left padding, as batched generation pads
            feeds.append(dict(zip(names, [step_ids, pos, mask, pasts[0], pasts[1]])))
        f = feeds[0]
        export(GPT2(), tuple(torch.tensor(f[k]) for k in names), names, ["last_hidden_state", "present_0", "present_1"],
               path, dynamic_axes=axes)
        fused_case(out, report, "gpt2_attention_past", path, "gpt2", feeds, FusionOptions("gpt2"), expect=["Attention"])

    def unet_case():
        raw = os.path.join(raw_dir, "unet_block.onnx")
        x = rng.standard_normal((2, SEQ, HID)).astype(np.float32)
        r = rng.standard_normal((2, SEQ, HID)).astype(np.float32)
        export(UNetBlock(), (torch.tensor(x), torch.tensor(r)), ["hidden_states", "residual"], ["out"], raw)
        o = FusionOptions("unet")
        fused_case(out, report, "unet_bias_split_gelu", raw, "unet", [{"hidden_states": x, "residual": r}], o,
                   opt_level=0, expect=["BiasSplitGelu", "BiasAdd"])

    def gemm_fast_gelu_case():
        for rows, gpu in (((2, SEQ, HID), False), ((2, SEQ, HID), True), ((2 * SEQ, HID), True)):
            label = f"gemm_fast_gelu_{len(rows)}d{'_gpu' if gpu else ''}"
            raw = os.path.join(raw_dir, label + ".onnx")
            x = rng.standard_normal(rows).astype(np.float32)
            export(MlpFastGelu(), (torch.tensor(x),), ["x"], ["y"], raw)
            o = FusionOptions("bert")
            o.enable_gemm_fast_gelu = True
            guarded(label, lambda: fused_case(out, report, label, raw, "bert", [{"x": x}], o, expect=["GemmFastGelu"],
                                              use_gpu=gpu))

    guarded("contrib_nodes", lambda: contrib_node_cases(out, report, rng))
    for label, fn in (("bert", bert_cases), ("bert_nomask", bert_unmasked), ("vit", vit_cases), ("gpt2", gpt2_cases),
                      ("unet", unet_case), ("gemm_fast_gelu", gemm_fast_gelu_case)):
        guarded(label, fn)
    save_report(os.path.join(out, "report.txt"), report)


if __name__ == "__main__":
    main()
