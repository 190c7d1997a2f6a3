#!/usr/bin/env python3
"""Exports the tiny Llama of export_decoders.py (same weights: same seed and layer scale) with
onnxruntime-genai's model builder, the exporter behind the `*-onnx` LLMs people download
(GroupQueryAttention with rotary inside, SimplifiedLayerNormalization, MatMulNBits for int4):

  llama/llama_genai_<precision>/model.onnx   input_ids [batch, sequence], attention_mask [batch,
                                             total_sequence], past_key_values.i.key/value
                                             [batch, kv_heads, past, head] -> logits, present.i.*
  data sets: 0 the prompt from an empty cache, 1 one token at the prompt's cache (past 8),
  2 three tokens at a cache of 5; each with onnxruntime's outputs.
  greedy.json gains onnxruntime_llama_genai_<precision>: the tokens of an onnxruntime loop.

Run where PyTorch, transformers, onnxruntime and onnxruntime-genai are (the GPU machine), from the
repository root:  python3 tests/models/export_genai.py tests/models/decoders
Writes what it could to OUT/genai_report.txt (a builder that fails is reported, not fatal).
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import traceback

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import export_decoders as ed  # noqa: E402
from onnx_test_data import save_report, save_set  # noqa: E402


def run_builder(hf_dir, out_dir, precision, report):
    cmd = [sys.executable, "-m", "onnxruntime_genai.models.builder", "-i", hf_dir, "-o", out_dir,
           "-p", precision, "-e", "cpu", "-c", os.path.join(hf_dir, "cache")]
    r = subprocess.run(cmd, capture_output=True, text=True)
    report.append(f"builder {precision}: exit {r.returncode}")
    if r.returncode != 0:
        report.append(r.stderr[-3000:])
    return os.path.exists(os.path.join(out_dir, "model.onnx"))


class Runner:
    """An onnxruntime session over a builder model; arrays fed by the builder's input names."""

    def __init__(self, path):
        import onnxruntime as ort
        self.sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
        self.inputs = self.sess.get_inputs()
        self.outputs = [o.name for o in self.sess.get_outputs()]
        past = [i for i in self.inputs if i.name.startswith("past_key_values.")]
        self.layers = len(past) // 2
        self.kv_heads, self.head = past[0].shape[1], past[0].shape[3]
        self.dtype = np.float16 if "float16" in past[0].type else np.float32

    def empty(self):
        return [np.zeros((1, self.kv_heads, 0, self.head), self.dtype) for _ in range(2 * self.layers)]

    def arrays(self, ids, past):
        total = past[0].shape[2] + len(ids)
        out = []
        for i in self.inputs:
            if i.name == "input_ids":
                out.append(np.array([ids], np.int64))
            elif i.name == "attention_mask":
                out.append(np.ones((1, total), np.int64))
            elif i.name == "position_ids":
                out.append(np.arange(total - len(ids), total, dtype=np.int64)[None])
            elif i.name.startswith("past_key_values."):
                layer, kind = i.name.split(".")[1:3]
                out.append(past[2 * int(layer) + (0 if kind == "key" else 1)])
            else:
                raise RuntimeError(f"unexpected input {i.name}")
        return out

    def run(self, arrays):
        return self.sess.run(None, {i.name: a for i, a in zip(self.inputs, arrays)})

    def step(self, ids, past):
        arrays = self.arrays(ids, past)
        outs = self.run(arrays)
        return arrays, outs, outs[1:]


def greedy(runner):
    _, outs, past = runner.step(ed.PROMPT, runner.empty())
    tokens = [int(np.argmax(outs[0][0, -1]))]
    while len(tokens) < ed.NEW_TOKENS:
        _, outs, past = runner.step([tokens[-1]], past)
        tokens.append(int(np.argmax(outs[0][0, -1])))
    return tokens


def data_sets(runner, folder, first=0):
    """Data sets `first`..2 of `folder`: 0 the prompt from an empty cache, 1 one token at the
    prompt's cache (past 8), 2 three tokens at a cache of 5; onnxruntime's outputs."""
    names = [i.name for i in runner.inputs]
    arrays, outs, past8 = runner.step(ed.PROMPT, runner.empty())
    if first == 0:
        save_set(folder, 0, arrays, outs, names)
    arrays, outs, _ = runner.step([ed.PROMPT[-1]], past8)
    save_set(folder, 1, arrays, outs, names)
    _, _, past5 = runner.step(ed.PROMPT[:5], runner.empty())
    arrays, outs, _ = runner.step(ed.PROMPT[5:8], past5)
    save_set(folder, 2, arrays, outs, names)


def record_tokens(out, key, runner):
    """The tokens of an onnxruntime loop over `runner`'s model, kept in llama/greedy.json as `key`;
    returns them and transformers' tokens."""
    tokens = greedy(runner)
    greedy_path = os.path.join(out, "llama", "greedy.json")
    with open(greedy_path) as f:
        g = json.load(f)
    g[key] = tokens
    with open(greedy_path, "w") as f:
        json.dump(g, f)
    return tokens, g["hf_generate"]


def export(out, precision, hf_dir, report):
    folder = os.path.join(out, "llama", f"llama_genai_{precision}")
    tmp = tempfile.mkdtemp()
    if not run_builder(hf_dir, tmp, precision, report):
        return
    os.makedirs(folder, exist_ok=True)
    for f in os.listdir(tmp):  # the model and the builder's genai_config.json
        if f.endswith(".onnx") or f.endswith(".onnx.data") or f == "genai_config.json":
            shutil.copy(os.path.join(tmp, f), folder)
    runner = Runner(os.path.join(folder, "model.onnx"))
    data_sets(runner, folder)
    tokens, hf = record_tokens(out, f"onnxruntime_llama_genai_{precision}", runner)
    ops = {}
    import onnx
    for n in onnx.load(os.path.join(folder, "model.onnx"), load_external_data=False).graph.node:
        key = (n.domain + "::" if n.domain else "") + n.op_type
        ops[key] = ops.get(key, 0) + 1
    names = [i.name for i in runner.inputs]
    report.append(f"llama_genai_{precision}: inputs {names}; ops {ops}; tokens {tokens} "
                  f"(transformers {hf}, equal: {tokens == hf})")


def main():
    out = sys.argv[1]
    report = []
    try:
        import onnxruntime_genai  # noqa: F401
        report.append(f"onnxruntime_genai {onnxruntime_genai.__version__}")
    except Exception as e:  # the builder ships in onnxruntime-genai
        report.append(f"onnxruntime_genai not importable: {e}")
    else:
        with open(os.path.join(out, "llama", "greedy.json")) as f:
            scale = json.load(f).get("layer_init_scale", 3.0)
        model = ed.make_model(ed.configs()["llama"](), scale)
        hf_dir = tempfile.mkdtemp()
        model.save_pretrained(hf_dir)
        for precision in ("fp32", "int4"):
            try:
                export(out, precision, hf_dir, report)
            except Exception:
                report.append(f"{precision}: " + traceback.format_exc()[-3000:])
    save_report(os.path.join(out, "genai_report.txt"), report)


if __name__ == "__main__":
    main()
