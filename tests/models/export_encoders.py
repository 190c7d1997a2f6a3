#!/usr/bin/env python3
"""Exports the encoder and vision half of the real-exporter corpus: tiny random-weight models, as
PyTorch's exporters and onnxruntime's tools write them.

Run on a machine with PyTorch (2.11), torchvision, timm, transformers (5.x), onnx and onnxruntime (the
GPU machine has them); the outputs are committed under tests/models/encoders/ so that CI tests real
exporter output (tests/models/encoder_exports_test.cpp; the table in docs/conformance.md).

Models (random weights, static shapes, batch 1 unless noted):
  transformers  bert (with a padding mask and token types), distilbert, vit, whisper_encoder,
                clip (two texts and one image -> logits_per_image, text and image embeddings)
  timm          its test_* models (test_vit, test_efficientnet, test_convnext, test_byobnet, test_nfnet)
  torchvision   mobilenet_v3_small at width 0.5, 10 classes, 96x96
Forms (FORMS says which each model is written in), each in its own folder <model>_<form>/model.onnx:
  dynamo        torch.onnx.export(dynamo=True)
  legacy        torch.onnx.export(dynamo=False), TorchScript, opset 17
  ortopt        onnxruntime's offline graph optimization (basic level) of the legacy export
  ortfusion     onnxruntime.transformers.optimizer of the legacy export (com.microsoft fusions)
  fp16          onnxruntime.transformers.float16 conversion of the dynamo export, fp32 inputs/outputs
Beside each model, test_data_set_0/ holds seeded inputs and onnxruntime's outputs of that very file
(ONNX test-data layout); report.json says per folder what was made, the torch-vs-onnxruntime error,
and what failed.

Usage: python3 export_encoders.py OUT_DIR [model ...]
"""
import json
import os
import shutil
import sys
import traceback

import numpy as np
import onnx
import onnxruntime as ort
import torch

from onnx_test_data import save_set

SEED = 0


def widen(m, scale=3.0):
    """Random init is std 0.02: attention would be nearly uniform. Widen the matrices."""
    with torch.no_grad():
        for _, p in m.named_parameters():
            if p.dim() >= 2:
                p.mul_(scale)
    return m.eval().float()


class Outputs(torch.nn.Module):
    """A transformers model returning a tuple of the named outputs."""

    def __init__(self, m, names, kwargs=None):
        super().__init__()
        self.m, self.names, self.kwargs = m, names, kwargs or {}

    def forward(self, a, b=None, c=None):  # fixed arity: torch.export and TorchScript both take it
        out = self.m(*[x for x in (a, b, c) if x is not None], **self.kwargs)
        return tuple(getattr(out, n) for n in self.names)


class Scaled(torch.nn.Module):
    """Randomly initialised CNNs can end in logits of 1e-9 or less, which any tolerance would pass:
    outputs times a power of two (exact in floating point) that brings their largest to about 1."""

    def __init__(self, m, scale):
        super().__init__()
        self.m, self.scale = m, scale

    def forward(self, a, b=None, c=None):
        got = self.m(*[x for x in (a, b, c) if x is not None])
        return tuple(t * self.scale for t in got) if isinstance(got, (tuple, list)) else got * self.scale


def transformers_models():
    import transformers as tf
    rng = np.random.default_rng(SEED)
    enc = dict(hidden_size=64, num_hidden_layers=2, num_attention_heads=4, intermediate_size=128)

    def bert():
        cfg = tf.BertConfig(vocab_size=1000, max_position_embeddings=64, type_vocab_size=2, **enc)
        ids = rng.integers(0, 1000, (1, 16), dtype=np.int64)
        mask = np.ones((1, 16), np.int64)
        mask[0, 12:] = 0  # padding at the end
        types = np.zeros((1, 16), np.int64)
        types[0, 8:] = 1
        m = Outputs(widen(tf.BertModel(cfg)), ["last_hidden_state", "pooler_output"])
        return m, [("input_ids", ids), ("attention_mask", mask), ("token_type_ids", types)], \
            ["last_hidden_state", "pooler_output"]

    def distilbert():
        cfg = tf.DistilBertConfig(vocab_size=1000, dim=64, n_layers=2, n_heads=4, hidden_dim=128,
                                  max_position_embeddings=64)
        ids = rng.integers(0, 1000, (1, 16), dtype=np.int64)
        mask = np.ones((1, 16), np.int64)
        mask[0, 13:] = 0
        m = Outputs(widen(tf.DistilBertModel(cfg)), ["last_hidden_state"])
        return m, [("input_ids", ids), ("attention_mask", mask)], ["last_hidden_state"]

    def vit():
        cfg = tf.ViTConfig(image_size=32, patch_size=8, num_channels=3, **enc)
        px = rng.standard_normal((1, 3, 32, 32), dtype=np.float32)
        m = Outputs(widen(tf.ViTModel(cfg)), ["last_hidden_state", "pooler_output"])
        return m, [("pixel_values", px)], ["last_hidden_state", "pooler_output"]

    def whisper_encoder():
        cfg = tf.WhisperConfig(d_model=64, encoder_layers=2, encoder_attention_heads=4, encoder_ffn_dim=128,
                               decoder_layers=1, decoder_attention_heads=4, decoder_ffn_dim=128, num_mel_bins=80,
                               max_source_positions=32, vocab_size=1000, pad_token_id=0, bos_token_id=1,
                               eos_token_id=2, decoder_start_token_id=1)
        feats = rng.standard_normal((1, 80, 64), dtype=np.float32)
        m = Outputs(widen(tf.WhisperModel(cfg).get_encoder()), ["last_hidden_state"])
        return m, [("input_features", feats)], ["last_hidden_state"]

    def clip():
        cfg = tf.CLIPConfig(
            text_config=dict(vocab_size=1000, max_position_embeddings=16, eos_token_id=2, **enc),
            vision_config=dict(image_size=32, patch_size=8, **enc), projection_dim=32)
        ids = rng.integers(3, 1000, (2, 8), dtype=np.int64)
        ids[:, -1] = 2  # the end-of-text token the text tower pools at
        px = rng.standard_normal((1, 3, 32, 32), dtype=np.float32)
        m = Outputs(widen(tf.CLIPModel(cfg)), ["logits_per_image", "text_embeds", "image_embeds"])
        return m, [("input_ids", ids), ("pixel_values", px)], ["logits_per_image", "text_embeds", "image_embeds"]

    return {"bert": (bert, "bert"), "distilbert": (distilbert, "bert"), "vit": (vit, "vit"),
            "whisper_encoder": (whisper_encoder, None), "clip": (clip, "clip")}


# The forms each model is written in (what is committed; a few MB of weights each, so not all of
# every model's forms). ortopt/ortfusion derive from the legacy export, fp16 from the dynamo one.
FORMS = {
    "bert": ["dynamo", "legacy", "ortopt", "ortfusion", "fp16"],
    "distilbert": ["dynamo", "legacy", "ortfusion"],
    "vit": ["dynamo", "legacy", "ortfusion", "fp16"],
    "whisper_encoder": ["dynamo", "legacy"],
    "clip": ["dynamo", "legacy", "ortfusion"],
    "timm_test_vit": ["dynamo"],
    "timm_test_efficientnet": ["legacy"],
    "timm_test_convnext": ["dynamo"],
    "timm_test_byobnet": ["legacy"],
    "timm_test_nfnet": ["dynamo"],
    "tv_mobilenet_v3_small": ["dynamo", "legacy"],
}
DERIVED_FROM = {"ortopt": "legacy", "ortfusion": "legacy", "fp16": "dynamo"}


def vision_models():
    rng = np.random.default_rng(SEED + 1)
    out = {}
    try:
        import timm
        for name in ["test_vit", "test_efficientnet", "test_convnext", "test_byobnet", "test_nfnet"]:
            if name not in timm.list_models(name):
                continue

            def make(name=name):
                m = timm.create_model(name, pretrained=False, num_classes=10).eval()
                size = m.pretrained_cfg.get("input_size", (3, 160, 160))
                x = rng.standard_normal((1, *size), dtype=np.float32)
                return m, [("input", x)], ["logits"]

            out["timm_" + name] = (make, None)
    except ImportError as e:
        print(f"skip timm: {e}", file=sys.stderr)
    import torchvision.models as tv

    def tvm(fn):
        def make():
            m = fn(weights=None, width_mult=0.5, num_classes=10).eval()
            x = rng.standard_normal((1, 3, 96, 96), dtype=np.float32)
            return m, [("input", x)], ["logits"]
        return make

    out["tv_mobilenet_v3_small"] = (tvm(tv.mobilenet_v3_small), None)
    return out


def ort_run(path, named):
    """onnxruntime (no graph optimization) on the file; inputs by name, in the file's input order."""
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    s = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
    given = dict(named)
    names = [i.name for i in s.get_inputs()]
    arrays = [given[n] for n in names]  # an exporter may drop an unused input: not here
    return arrays, s.run(None, dict(zip(names, arrays)))


def export(model, named, out_names, path, dynamo):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    args = tuple(torch.from_numpy(a) for _, a in named)
    in_names = [n for n, _ in named]
    if dynamo:
        prog = torch.onnx.export(model, args, None, dynamo=True, input_names=in_names, output_names=out_names,
                                 external_data=False)
        prog.save(path, external_data=False)
    else:
        torch.onnx.export(model, args, path, dynamo=False, input_names=in_names, output_names=out_names,
                          opset_version=17, do_constant_folding=True)
    onnx.checker.check_model(onnx.load(path))


def record(report, folder, path, named, ref):
    arrays, res = ort_run(path, named)
    save_set(folder, 0, arrays, res)
    errs = [float(np.abs(np.asarray(r, np.float32) - t).max()) for r, t in zip(res, ref)]
    report[os.path.basename(folder)] = {"status": "ok", "ort_vs_torch_max_abs": max(errs),
                                        "bytes": os.path.getsize(path),
                                        "nodes": len(onnx.load(path).graph.node)}


def do_model(out, name, make, fusion_type, report):
    torch.manual_seed(SEED)
    model, named, out_names = make()
    with torch.no_grad():
        got = model(*[torch.from_numpy(a) for _, a in named])
        ref = [t.numpy() for t in (got if isinstance(got, (tuple, list)) else [got])]
        peak = max(float(np.abs(r).max()) for r in ref)
        if 0 < peak < 0.25:
            scale = 2.0 ** -round(np.log2(peak))
            model = Scaled(model, scale)
            ref = [r * scale for r in ref]
            report[name] = {"output_scale": scale}
    forms = FORMS[name]
    tmp = os.path.join(out, ".sources")
    for form in forms:
        folder = os.path.join(out, f"{name}_{form}")
        path = os.path.join(folder, "model.onnx")
        key = os.path.basename(folder)
        try:
            if form in ("dynamo", "legacy"):
                export(model, named, out_names, path, form == "dynamo")
            else:
                # the source export, written aside when it is not one of the committed forms
                base = DERIVED_FROM[form]
                src = os.path.join(out, f"{name}_{base}", "model.onnx")
                if base not in forms:
                    src = os.path.join(tmp, f"{name}_{base}.onnx")
                    if not os.path.exists(src):
                        export(model, named, out_names, src, base == "dynamo")
                os.makedirs(folder, exist_ok=True)
                if form == "ortopt":
                    so = ort.SessionOptions()
                    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
                    so.optimized_model_filepath = path
                    ort.InferenceSession(src, so, providers=["CPUExecutionProvider"])
                elif form == "ortfusion":
                    from onnxruntime.transformers.optimizer import optimize_model
                    opt = optimize_model(src, model_type=fusion_type, num_heads=4, hidden_size=64, opt_level=0)
                    opt.save_model_to_file(path)
                elif form == "fp16":
                    from onnxruntime.transformers.float16 import convert_float_to_float16
                    onnx.save(convert_float_to_float16(onnx.load(src), keep_io_types=True), path)
            record(report, folder, path, named, ref)
            print(f"{key}: {report[key]}", file=sys.stderr)
        except Exception as e:  # noqa: BLE001 - every failure is reported, none hidden
            report[key] = {"status": f"FAILED {type(e).__name__}: {str(e).splitlines()[0][:300] if str(e) else ''}"}
            print(f"{key}: {report[key]['status']}", file=sys.stderr)
            traceback.print_exc()


def main():
    out = sys.argv[1]
    want = sys.argv[2:]
    os.makedirs(out, exist_ok=True)
    import transformers
    report = {"versions": f"torch {torch.__version__}, transformers {transformers.__version__}, "
                          f"onnx {onnx.__version__}, onnxruntime {ort.__version__}"}
    models = {**transformers_models(), **vision_models()}
    for name, (make, fusion) in models.items():
        if want and name not in want:
            continue
        try:
            do_model(out, name, make, fusion, report)
        except Exception as e:  # noqa: BLE001
            report[name] = {"status": f"FAILED {type(e).__name__}: {str(e).splitlines()[0][:300] if str(e) else ''}"}
            traceback.print_exc()
    shutil.rmtree(os.path.join(out, ".sources"), ignore_errors=True)
    with open(os.path.join(out, "report.json"), "w") as f:
        json.dump(report, f, indent=1, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main()
