#!/usr/bin/env python3
"""Exports forms of the tiny decoders of export_decoders.py (same weights: same seed and the layer
scale of each family's greedy.json) that real tools write and the other export scripts do not:
static shapes, fp16 static steps, and onnxruntime's transformer optimizer's fused graphs.

  <fam>/<fam>_static_dynamo/          the full sequence, input_ids [1, 8] -> logits [1, 8, V],
                                      torch.onnx.export(dynamo=True) without dynamic shapes (the
                                      causal mask and the RoPE tables become constants); data set 0:
                                      the prompt, onnxruntime's logits
  <fam>/<fam>_static_step_<exporter>/ one decode step at a static past of 15, no attention mask:
                                      input_ids [1, 1], position_ids [1, 1], past_key_i / past_value_i
                                      [1, Hkv, 15, D] -> logits [1, 1, V], present_key_i / present_value_i
                                      [1, Hkv, 16, D]; <exporter> dynamo or legacy (TorchScript), no
                                      dynamic axes. Data set 0: the real cache of the prompt extended
                                      by transformers' first 7 greedy tokens (15 positions) and the 8th
                                      greedy token at position 15, onnxruntime's outputs
  <fam>/<fam>_static_step16_dynamo/   the same step exported from the model in fp16 (model.half()):
                                      fp16 weights and caches (the fp32 model's cache rounded to fp16),
                                      onnxruntime's fp16 outputs
  llama/llama_ortopt_<how>/           onnxruntime.transformers.optimizer.optimize_model run on a Llama
                                      decode step with a symbolic past (the committed llama_step_legacy,
                                      llama_mask_legacy (optimum's form) or llama_step_dynamo), with a
                                      model_type and opt_level, or onnxruntime's own graph optimizer at
                                      ORT_ENABLE_ALL (optimized_model_filepath); kept only where the op
                                      counts differ from the source's and from every one kept before.
                                      Data set 0: the source's past-8 data set's inputs (cast to the
                                      graph's input types), onnxruntime's outputs of the optimized graph
  llama/llama_ortllama_<file>/        what onnxruntime's own Llama converter
                                      (onnxruntime.transformers.models.llama.convert_to_onnx) writes for
                                      the tiny Llama, where it runs; data from llama_mask_legacy
  llama/llama_optimum/                optimum's exporter (text-generation-with-past), where importable

Families: Llama, Qwen3 and Gemma-2 (FAMILIES). Each form's line in static_report.txt (written beside
the family folders) gives onnxruntime against the PyTorch module for the same inputs (logits and
presents max abs), against transformers' full-sequence logits, whether the argmax is transformers'
greedy token, then the inputs and outputs with shapes, the op counts, and the small constants the
graph holds (masks: any value <= -1e4; RoPE tables, position ranges). A failing form is reported,
never fatal, and leaves no folder.

transformers 5's packed-sequence detection (torch.diff) is replaced by one returning None (one
sequence here), which both exporters need for a full-sequence decoder.

Run where PyTorch (2.11), transformers (5.x), onnx and onnxruntime are (the GPU machine), from the
repository root:
  python3 tests/models/export_static_steps.py tests/models/decoders
"""
import collections
import glob
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
import traceback

import numpy as np
import onnx
import onnxruntime as ort
import torch
import transformers
from onnx import numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import export_decoders as ed  # noqa: E402
from export_genai_builder import dims  # noqa: E402
from onnx_test_data import save_report, save_set  # noqa: E402

FAMILIES = ("llama", "qwen3", "gemma2")
PAST = 15  # the static steps' past length
MASK_LIKE = -1e4  # a constant holding a value at or below this is reported as a mask


def no_packed_sequences():
    import transformers.masking_utils as mu
    mu.find_packed_sequence_indices = lambda *a, **k: None


def fail_line(name, e):
    msg = str(e).splitlines()[0][:300] if str(e) else ""
    return f"{name}: FAILED {type(e).__name__}: {msg}"


# --------------------------------------------------------------------------------------------- describe


def op_counts(m):
    ops = collections.Counter()

    def count(graph):
        for n in graph.node:
            ops[(n.domain + "::" if n.domain not in ("", "ai.onnx") else "") + n.op_type] += 1
            for a in n.attribute:
                if a.type == onnx.AttributeProto.GRAPH:
                    count(a.g)
    count(m.graph)
    for f in m.functions:  # local functions' bodies, named
        for n in f.node:
            ops[f"{f.name}/{n.op_type}"] += 1
    return ops


def constants(m, vocab=ed.VOCAB):
    """The small constants not fed to a MatMul/Gemm (so not weights): name, shape, dtype, range."""
    g = m.graph
    matmul_in = {x for n in g.node if n.op_type in ("MatMul", "Gemm", "MatMulNBits", "Transpose") for x in n.input}
    tensors = [(t.name, t) for t in g.initializer]
    for n in g.node:
        if n.op_type == "Constant":
            for a in n.attribute:
                if a.name == "value":
                    tensors.append((n.output[0], a.t))
    lines = []
    for name, t in tensors:
        if name in matmul_in or len(t.dims) < 1:
            continue
        n = int(np.prod(t.dims)) if t.dims else 1
        if n < 4 or (t.dims and t.dims[0] == vocab):
            continue
        a = numpy_helper.to_array(t)
        if a.dtype.kind == "f":
            lo, hi = float(a.min()), float(a.max())
            if len(t.dims) == 1 and lo > MASK_LIKE:  # norm weights, biases, inv_freq: not listed
                continue
            tag = f" MASK-LIKE ({int((a <= MASK_LIKE).sum())} of {n} <= {MASK_LIKE:g})" if lo <= MASK_LIKE else ""
            lines.append(f"{name} {a.dtype} {list(t.dims)} [{lo:.4g}, {hi:.4g}]{tag}")
        elif a.dtype.kind in "iub" and n >= 8:
            flat = a.reshape(-1)
            lines.append(f"{name} {a.dtype} {list(t.dims)} [{flat.min()}..{flat.max()}] first {flat[:6].tolist()}")
    return lines


def describe(path, rep, base_ops=None):
    m = onnx.load(path)
    dt = onnx.helper.tensor_dtype_to_np_dtype
    rep.append("  inputs: " + "; ".join(f"{i.name} {dt(i.type.tensor_type.elem_type)} {dims(i)}" for i in m.graph.input))
    rep.append("  outputs: " + "; ".join(f"{o.name} {dt(o.type.tensor_type.elem_type)} {dims(o)}"
                                         for o in m.graph.output))
    ops = op_counts(m)
    rep.append(f"  ops ({sum(ops.values())}): {dict(sorted(ops.items()))}")
    if base_ops is not None:
        added = {k: ops[k] - base_ops.get(k, 0) for k in ops if ops[k] > base_ops.get(k, 0)}
        removed = {k: base_ops[k] - ops.get(k, 0) for k in base_ops if base_ops[k] > ops.get(k, 0)}
        rep.append(f"  vs the source: added {dict(sorted(added.items()))}; removed {dict(sorted(removed.items()))}")
    cs = constants(m)
    rep.append(f"  initializers {len(m.graph.initializer)}, opset "
               + ", ".join(f"{o.domain or 'ai.onnx'} {o.version}" for o in m.opset_import)
               + f"; small non-weight constants ({len(cs)}):")
    rep += [f"    {c}" for c in cs[:40]] + ([f"    ... {len(cs) - 40} more"] if len(cs) > 40 else [])
    return ops


def maxabs(a, b):
    return float(np.abs(np.asarray(a, np.float32) - np.asarray(b, np.float32)).max())


# --------------------------------------------------------------------------------------------- static forms


def run_named(sess, named):
    """onnxruntime's outputs for inputs given by name; the arrays in the graph's input order."""
    arrays = [named[i.name] for i in sess.get_inputs()]
    return arrays, sess.run(None, {i.name: a for i, a in zip(sess.get_inputs(), arrays)})


def static_form(out, fam, name, module, named, in_names, out_names, dynamo, rep, check):
    """Exports `module` at the inputs `named` (name -> array) with static shapes, saves data set 0
    and reports onnxruntime against the module and `check(ort outputs)`'s words."""
    folder = os.path.join(out, fam, name)
    path = os.path.join(folder, "model.onnx")
    try:
        shutil.rmtree(folder, ignore_errors=True)
        args = tuple(torch.tensor(named[n]) for n in in_names)
        ed.export(module, args, path, dynamo, in_names, out_names, {})
        sess = ed.ort_session(path)
        arrays, res = run_named(sess, named)
        save_set(folder, 0, arrays, res)
        try:
            with torch.no_grad():
                ref = module(*args)
            ref = ref if isinstance(ref, tuple) else (ref,)
            errs = [maxabs(r, x.float().numpy()) for r, x in zip(res, ref)]
            line = f"{name}: ok, ort vs torch (the exported module, same inputs) logits max abs {errs[0]:.2e}"
            if len(errs) > 1:
                line += f", presents {max(errs[1:]):.2e}"
        except Exception as e:  # noqa: BLE001 - the export stands without the torch reference
            line = f"{name}: ok, the torch reference failed ({type(e).__name__}: {str(e)[:120]})"
        rep.append(line + check(res))
        describe(path, rep)
    except Exception as e:  # noqa: BLE001 - every failure is reported, none hidden
        rep.append(fail_line(name, e))
        traceback.print_exc()
        shutil.rmtree(folder, ignore_errors=True)


def do_family(out, fam, cfg, rep):
    with open(os.path.join(out, fam, "greedy.json")) as f:
        greedy = json.load(f)
    hf = greedy["hf_generate"]
    model = ed.family_model(out, fam, cfg)
    layers = cfg.num_hidden_layers
    prompt = ed.PROMPT

    # 1. the full sequence, static
    ids = np.array([prompt], dtype=np.int64)

    def check_seq(res):
        tok = int(res[0][0, -1].argmax())
        return f"; last row's argmax {tok} {'==' if tok == hf[0] else '!='} generate()'s first token {hf[0]}"
    static_form(out, fam, f"{fam}_static_dynamo", ed.Seq(model), {"input_ids": ids}, ["input_ids"], ["logits"],
                True, rep, check_seq)

    # 2. one step at a static past of 15
    seq = list(prompt) + hf[:PAST - len(prompt)]
    tok, nxt = hf[PAST - len(prompt)], hf[PAST - len(prompt) + 1]
    past = ed.prompt_cache(model, cfg, seq)
    with torch.no_grad():
        full = model(input_ids=torch.tensor([seq + [tok]])).logits[0, -1].numpy()
    in_names, out_names = ed.step_names(layers)
    named = {"input_ids": np.array([[tok]], dtype=np.int64), "position_ids": np.array([[PAST]], dtype=np.int64)}
    named.update(zip(in_names[2:], past))

    def check_step(res):
        t = int(res[0][0, -1].argmax())
        return (f"; vs transformers' full sequence (16 tokens) last row {maxabs(res[0][0, -1], full):.2e}; argmax {t} "
                f"{'==' if t == nxt else '!='} generate()'s token {nxt}")
    for exporter in ("dynamo", "legacy"):
        static_form(out, fam, f"{fam}_static_step_{exporter}", ed.Step(model), named, in_names, out_names,
                    exporter == "dynamo", rep, check_step)

    # 3. the same step in fp16
    m16 = ed.make_model(cfg, greedy.get("layer_init_scale", 3.0)).half()
    named16 = {k: (v.astype(np.float16) if v.dtype == np.float32 else v) for k, v in named.items()}
    static_form(out, fam, f"{fam}_static_step16_dynamo", ed.Step(m16), named16, in_names, out_names, True, rep,
                lambda res: " (fp16 torch on the CPU)" + check_step(res))


# --------------------------------------------------------------------------------------------- optimizer


NP_OF = {onnx.TensorProto.FLOAT: np.float32, onnx.TensorProto.FLOAT16: np.float16,
         onnx.TensorProto.INT64: np.int64, onnx.TensorProto.INT32: np.int32, onnx.TensorProto.BOOL: np.bool_}


def load_set(folder, idx):
    """A committed data set's inputs by the source graph's input names, and its outputs."""
    g = onnx.load(os.path.join(folder, "model.onnx"), load_external_data=False).graph
    d = os.path.join(folder, f"test_data_set_{idx}")
    named = {i.name: numpy_helper.to_array(onnx.load_tensor(os.path.join(d, f"input_{k}.pb")))
             for k, i in enumerate(g.input)}
    outs = [numpy_helper.to_array(onnx.load_tensor(os.path.join(d, f"output_{k}.pb")))
            for k in range(len(glob.glob(os.path.join(d, "output_*.pb"))))]
    return named, outs


def keep_derived(out, name, model_or_path, src_folder, src_set, model, rep, base_ops, kept):
    """Writes llama/<name>/model.onnx (one file) when its op counts differ from `base_ops` and from
    every entry of `kept` (op counts of those written before), with data set 0 from the source's
    data set `src_set` (inputs by name, cast to the graph's types) and onnxruntime's outputs."""
    folder = os.path.join(out, "llama", name)
    shutil.rmtree(folder, ignore_errors=True)
    try:
        m = onnx.load(model_or_path) if isinstance(model_or_path, str) else model_or_path
        ops = op_counts(m)
        if base_ops is not None and ops == base_ops:
            rep.append(f"{name}: the same op counts as its source, not kept")
            return
        same = [k for k, o in kept.items() if o == ops]
        if same:
            rep.append(f"{name}: the same op counts as {same[0]}, not kept")
            return
        os.makedirs(folder)
        path = os.path.join(folder, "model.onnx")
        onnx.save(m, path)
        named, src_outs = load_set(src_folder, src_set)
        sess = ed.ort_session(path)
        arrays = []
        for i in sess.get_inputs():
            t = next(x for x in m.graph.input if x.name == i.name).type.tensor_type.elem_type
            arrays.append(named[i.name].astype(NP_OF[t]))
        res = sess.run(None, {i.name: a for i, a in zip(sess.get_inputs(), arrays)})
        save_set(folder, 0, arrays, res)
        outn = [o.name for o in sess.get_outputs()]
        logits = res[outn.index("logits")] if "logits" in outn else res[0]
        ids = named["input_ids"][0].tolist()
        with torch.no_grad():
            full = model(input_ids=torch.tensor([ed.PROMPT + ids])).logits[0, len(ed.PROMPT):].numpy()
        rep.append(f"{name}: ok, from {os.path.basename(src_folder)} data set {src_set} (past 8); ort logits vs the "
                   f"source graph's ort {maxabs(logits, src_outs[0]):.2e}, vs transformers' full sequence "
                   f"{maxabs(logits[0], full):.2e}")
        kept[name] = describe(path, rep, base_ops)
    except Exception as e:  # noqa: BLE001 - every failure is reported, none hidden
        rep.append(fail_line(name, e))
        traceback.print_exc()
        shutil.rmtree(folder, ignore_errors=True)


def ortopt(out, rep):
    from onnxruntime.transformers.fusion_options import FusionOptions
    from onnxruntime.transformers.optimizer import optimize_model
    cfg = ed.configs()["llama"]()
    model = ed.family_model(out, "llama", cfg)
    heads, hidden = cfg.num_attention_heads, cfg.hidden_size
    src = {s: os.path.join(out, "llama", f"llama_{s}") for s in ("step_legacy", "mask_legacy", "step_dynamo")}
    past8_set = {"step_legacy": 0, "mask_legacy": 2, "step_dynamo": 0}
    prefix = {"step_legacy": "", "mask_legacy": "mask_", "step_dynamo": "dynamo_"}
    # (source, model_type, opt_level): opt_level None is the type's default (1 for gpt2 and bert:
    # onnxruntime's basic optimizations first), 0 the Python fusions alone (what the Llama
    # converter's optimize_export does, with FusionOptions("gpt2")); "ort" is onnxruntime's own
    # graph optimizer at ORT_ENABLE_ALL on the CPU.
    variants = [("step_legacy", "gpt2", None), ("step_legacy", "gpt2", 0), ("step_legacy", "bert", None),
                ("step_legacy", "gpt_neox", None), ("step_legacy", "phi", None), ("step_legacy", "llama", None),
                ("step_legacy", "ort", 99), ("mask_legacy", "gpt2", 0), ("mask_legacy", "gpt2", None),
                ("mask_legacy", "ort", 99), ("step_dynamo", "gpt2", 0), ("step_dynamo", "ort", 99)]
    base = {s: op_counts(onnx.load(os.path.join(p, "model.onnx"))) for s, p in src.items()}
    kept = {}
    tmp = tempfile.mkdtemp()
    for s, mtype, level in variants:
        name = f"llama_ortopt_{prefix[s]}{mtype}" + ("" if level is None or mtype == "ort" else f"_o{level}")
        path = os.path.join(src[s], "model.onnx")
        try:
            if mtype == "ort":
                so = ort.SessionOptions()
                so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
                so.optimized_model_filepath = os.path.join(tmp, name + ".onnx")
                ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
                m = onnx.load(so.optimized_model_filepath)
            else:
                opts = FusionOptions(mtype) if level == 0 else None
                opt = optimize_model(path, model_type=mtype, num_heads=heads, hidden_size=hidden, opt_level=level,
                                     optimization_options=opts)
                m = opt.model
                if level == 0:  # as the Llama converter: symbolic shape inference after the fusions
                    try:
                        from onnxruntime.tools.symbolic_shape_infer import SymbolicShapeInference
                        m = SymbolicShapeInference.infer_shapes(m, auto_merge=True)
                    except Exception as e:  # noqa: BLE001
                        rep.append(f"{name}: symbolic shape inference failed ({type(e).__name__}: {e}); kept without")
            keep_derived(out, name, m, src[s], past8_set[s], model, rep, base[s], kept)
            ops = op_counts(m)
            if s == "mask_legacy" and ops.get("com.microsoft::MultiHeadAttention"):
                # the Llama converter's fp16 path: float16, then MultiHeadAttention -> GroupQueryAttention
                from onnxruntime.transformers.convert_generation import replace_mha_with_gqa
                from onnxruntime.transformers.onnx_model import OnnxModel
                om = OnnxModel(m)
                om.convert_float_to_float16(keep_io_types=False)
                om = replace_mha_with_gqa(om, "attention_mask", cfg.num_key_value_heads, 1)
                om.prune_graph()
                om.update_graph(allow_remove_graph_inputs=True)
                keep_derived(out, name + "_gqa16", om.model, src[s], past8_set[s], model, rep, base[s], kept)
        except Exception as e:  # noqa: BLE001 - every failure is reported, none hidden
            rep.append(fail_line(name, e))
            traceback.print_exc()
    shutil.rmtree(tmp, ignore_errors=True)
    return model, cfg, kept


def tool_exports(out, tag, model, rep, kept, run_tool, base=None, stem=lambda name: name):
    """The tiny Llama saved with save_pretrained into a temporary folder, `run_tool(hf_dir, out_dir)`
    run on it, and each .onnx it wrote kept as llama/<tag>_<stem> (data from llama_mask_legacy's set 2)."""
    tmp = tempfile.mkdtemp()
    try:
        hf_dir, out_dir = os.path.join(tmp, "hf"), os.path.join(tmp, "onnx")
        model.save_pretrained(hf_dir)
        run_tool(hf_dir, out_dir)
        made = sorted(glob.glob(os.path.join(out_dir, "*.onnx")))
        rep.append(f"{tag}: files {[os.path.basename(p) for p in made]}")
        src = os.path.join(out, "llama", "llama_mask_legacy")
        for p in made:
            keep_derived(out, f"{tag}_{stem(os.path.basename(p)[:-5])}", p, src, 2, model, rep, base, kept)
    except Exception as e:  # noqa: BLE001
        rep.append(fail_line(tag, e))
        traceback.print_exc()
    shutil.rmtree(tmp, ignore_errors=True)


def llama_converter(out, model, rep, kept):
    """onnxruntime's Llama converter (convert_to_onnx) on the tiny Llama saved with save_pretrained."""
    spec = importlib.util.find_spec("onnxruntime.transformers.models.llama.convert_to_onnx")
    if spec is None:
        rep.append("llama_ortllama: onnxruntime.transformers.models.llama.convert_to_onnx is not in this onnxruntime")
        return

    def convert(hf_dir, out_dir):
        cmd = [sys.executable, "-m", "onnxruntime.transformers.models.llama.convert_to_onnx", "-m", "tiny-llama",
               "-i", hf_dir, "-o", out_dir, "-p", "fp32", "-e", "cpu"]
        try:
            r = subprocess.run(cmd, cwd=os.path.dirname(hf_dir), capture_output=True, text=True, timeout=150)
            tail = [ln for ln in (r.stdout + r.stderr).splitlines() if ln.strip()][-3:]
            rep.append(f"llama_ortllama: convert_to_onnx exit {r.returncode}; last lines: " + " | ".join(tail)[:600])
        except subprocess.TimeoutExpired:
            rep.append("llama_ortllama: convert_to_onnx ran past 150 s")

    base = op_counts(onnx.load(os.path.join(out, "llama", "llama_mask_legacy", "model.onnx")))
    tool_exports(out, "llama_ortllama", model, rep, kept, convert, base,
                 lambda name: name.replace("rank_0_", "").replace("tiny-llama_", "").replace("-", "_"))


def optimum_export(out, model, rep, kept):
    if importlib.util.find_spec("optimum") is None:
        rep.append("llama_optimum: optimum is not importable here (not installed); nothing exported")
        return

    def export(hf_dir, out_dir):
        from optimum.exporters.onnx import main_export
        main_export(hf_dir, output=out_dir, task="text-generation-with-past", no_post_process=False)

    tool_exports(out, "llama_optimum", model, rep, kept, export)


def main():
    out = sys.argv[1]
    no_packed_sequences()
    rep = [f"# export_static_steps.py: torch {torch.__version__}, transformers {transformers.__version__}, "
           f"onnx {onnx.__version__}, onnxruntime {ort.__version__}"]

    def one(fam, cfg):
        rep.append(f"## {fam}")
        do_family(out, fam, cfg, rep)
    ed.for_families(FAMILIES, rep, one)
    rep.append("## onnxruntime's transformer optimizer on the Llama decode steps (num_heads 4, hidden_size 64)")
    try:
        model, cfg, kept = ortopt(out, rep)
        llama_converter(out, model, rep, kept)
        optimum_export(out, model, rep, kept)
    except Exception as e:  # noqa: BLE001
        rep.append(fail_line("llama_ortopt", e))
        traceback.print_exc()
    save_report(os.path.join(out, "static_report.txt"), rep)


if __name__ == "__main__":
    main()
