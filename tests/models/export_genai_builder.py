#!/usr/bin/env python3
"""Runs onnxruntime-genai's model builder (the exporter behind the `*-onnx` LLMs people download) on
tiny random-weight decoders of each architecture it supports, and keeps what it writes, with
onnxruntime's outputs as reference data:

  OUTDIR/<arch>_<precision>/model.onnx, model.onnx.data, genai_config.json   as the builder wrote them
      precision fp32 (cpu provider), int4 (cpu, symmetric), int4_asym (cpu, is_symmetric=false),
      fp16 (cuda provider: the graph a CUDA user downloads; run here on onnxruntime's CPU kernels)
  OUTDIR/<arch>_<precision>/test_data_set_N/   inputs and onnxruntime's outputs (ONNX test-data layout):
      0 the 8-token prompt from an empty cache, 1 the next token at the prompt's cache (past 8),
      2 one token at a past of 20; the tokens after the prompt are transformers' greedy tokens.
      Inputs are the graph's own (input_ids, attention_mask [, position_ids], past_key_values.i.*),
      caches as a concatenating runtime holds them ([1, kv_heads, past, head]).
  OUTDIR/greedy.json   per arch: the prompt, transformers' 16 greedy tokens (fp32, generate(do_sample=
      False); hf_cached_loop: a plain loop over transformers' cache, which differs for Phi-3 LongRoPE;
      for windowed archs hf_generate_window_plus_1) and, per built model, the 16 tokens of an
      onnxruntime loop over its graph (onnxruntime_run: which of the two ways below ran it).
  OUTDIR/report.txt    per model: built or the builder's error, inputs, op counts, GroupQueryAttention
      and MatMulNBits attributes, genai_config's key fields, how onnxruntime ran it and its tokens.

onnxruntime is the reference: for int4 models it runs an in-memory copy whose MatMulNBits have
accuracy_level 0 (the builder writes 4, which lets the CPU kernel quantize activations to int8);
the committed model.onnx is the builder's, byte for byte. Each graph is run two ways: with caches
that grow by concatenation (past in, past + new out), and the way onnxruntime-genai runs it (one
buffer per cache bound as both past and present, of genai's capacity: max_length, or window + 16 on
the CPU for sliding-window layers). Data sets come from the first when it runs and agrees with the
second; otherwise from the second (capacity >= total, so nothing was evicted: rows [0, total) of
the buffer are the concatenated cache); the report says which. A failing arch or precision is
reported, never fatal.

Seen with the builder at a0c04eb (2026-08), onnxruntime 1.30, transformers 5.17 (report.txt has all):
  - Layers with a window get GroupQueryAttention sliding_window_cache=1; onnxruntime's CPU kernel then
    refuses concatenated caches (capacity 0 < local_window_size): Mistral's, Gemma-2's and Gemma-3's
    data sets come from the shared-buffer run.
  - fp16 (cuda) Qwen3 and Gemma-3 put the per-head q/k norms into GroupQueryAttention (q_norm_weight,
    k_norm_weight), which the CPU kernel lacks: no reference data.
  - int4_asym of the tied-embedding models (Qwen2, Qwen3, Gemma-2, Gemma-3; the embedding becomes a
    GatherBlockQuantized) is refused by onnxruntime (a Reshape typed float over uint8): no data.
  - OLMo: the builder writes SimplifiedLayerNormalization (RMS) for OLMo's mean-subtracting LayerNorm,
    so its graph is not transformers' model (the data sets are still the graph's own outputs).
  - SmolLM3 with a layer without RoPE: the builder stops (KeyError 'position_ids').
  - Gemma-2: the builder makes the odd layers local, transformers' default the even ones; the config
    here sets layer_types the builder's way.
  - Phi-3 LongRoPE: onnxruntime equals a plain loop over transformers' cache; generate() differs
    (it recomputes the cache with the long factors when the length passes the original context).

Needs the builder's source: the folder src/python/py/models of the public microsoft/onnxruntime-genai
repository copied to .cache/genai_models (ignored by git; --builder DIR for another place), or the
onnxruntime-genai package. Run where PyTorch, transformers, onnx, onnx_ir and onnxruntime are (the
GPU machine), from the repository root:

  python3 tests/models/export_genai_builder.py OUTDIR [--builder DIR] [arch ...]

(the committed corpus: OUTDIR = tests/models/decoders/genai).
"""
import contextlib
import copy
import io
import json
import os
import shutil
import sys
import tempfile
import traceback

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import export_decoders as ed  # noqa: E402
import export_genai as eg  # noqa: E402
from onnx_test_data import save_set  # noqa: E402

import onnx  # noqa: E402
import onnxruntime as ort  # noqa: E402
import torch  # noqa: E402
import transformers  # noqa: E402

PRECISIONS = [  # (folder suffix, builder precision, execution provider, extra options)
    ("fp32", "fp32", "cpu", {}),
    ("int4", "int4", "cpu", {}),
    ("int4_asym", "int4", "cpu", {"is_symmetric": "false"}),
    ("fp16", "fp16", "cuda", {}),
]
# The position of the data set 2 step (one token after this many).
PAST2 = 20
# onnxruntime-genai's default slack beyond the window for the CPU (windowed_kv_cache.cpp).
CPU_WINDOW_SLACK = 16
GQA_INPUTS = ["query", "key", "value", "past_key", "past_value", "seqlens_k", "total_sequence_length",
              "cos_cache", "sin_cache", "position_ids", "attention_bias", "head_sink", "k_scale", "v_scale",
              "q_norm_weight", "k_norm_weight"]


def configs():
    """arch -> (config constructor, notes for the report). hidden 64, 4 heads / 2 kv heads of 16,
    vocab 256, 128 positions; intermediate 96 (2 x 96 != vocab: the builder takes any Linear with
    vocab outputs for the LM head)."""
    T = transformers
    common = dict(vocab_size=ed.VOCAB, hidden_size=64, intermediate_size=96, num_hidden_layers=2,
                  num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=128,
                  bos_token_id=1, eos_token_id=2, pad_token_id=0)
    longrope = {"rope_type": "longrope", "type": "longrope",  # the builder reads "type" (older configs)
                "short_factor": [1.0, 1.0, 1.05, 1.1, 1.2, 1.4, 1.7, 2.0],
                "long_factor": [1.0, 1.3, 1.8, 2.5, 3.5, 5.0, 7.0, 9.0], "original_max_position_embeddings": 16}
    return {
        "llama": lambda: T.LlamaConfig(**common, tie_word_embeddings=False),
        # every layer windowed: 16 positions, in 128
        "mistral": lambda: T.MistralConfig(**common, sliding_window=16, tie_word_embeddings=False),
        "qwen2": lambda: T.Qwen2Config(**common, tie_word_embeddings=True),  # q/k/v biases set below
        "qwen3": lambda: T.Qwen3Config(**common, head_dim=16, tie_word_embeddings=True),
        "phi3": lambda: T.Phi3Config(**common, original_max_position_embeddings=128, tie_word_embeddings=False),
        # max != original selects the builder's LongRoPE model; 24 tokens cross original 16
        "phi3_longrope": lambda: T.Phi3Config(**common, original_max_position_embeddings=16,
                                              rope_parameters=dict(longrope), tie_word_embeddings=False),
        # local layers as the builder makes them (layer % 2 == 1), window 12, both soft-caps
        "gemma2": lambda: T.Gemma2Config(**common, head_dim=16, sliding_window=12, query_pre_attn_scalar=16,
                                         attn_logit_softcapping=20.0, final_logit_softcapping=30.0,
                                         layer_types=["full_attention", "sliding_attention"]),
        # 6 layers: 0-4 local (window 8), 5 global, as the builder's (layer + 1) % 6 says
        "gemma3": lambda: T.Gemma3TextConfig(**dict(common, num_hidden_layers=6), head_dim=16, sliding_window=8,
                                             query_pre_attn_scalar=16,
                                             layer_types=["sliding_attention"] * 5 + ["full_attention"]),
        "granite": lambda: T.GraniteConfig(**common, embedding_multiplier=4.0, logits_scaling=2.0,
                                           residual_multiplier=0.5, attention_multiplier=0.2,
                                           tie_word_embeddings=False),
        "olmo": lambda: T.OlmoConfig(**common, tie_word_embeddings=False),
        # layer 1 without RoPE
        "smollm3": lambda: T.SmolLM3Config(**common, no_rope_layers=[1, 0], tie_word_embeddings=False),
    }


def finish_model(arch, model):
    """Per-arch changes after the random init: Qwen2's q/k/v biases get values (all-zero biases are
    dropped by the builder)."""
    if arch == "qwen2":
        g = torch.Generator().manual_seed(1)
        with torch.no_grad():
            for name, p in model.named_parameters():
                if name.endswith(("q_proj.bias", "k_proj.bias", "v_proj.bias")):
                    p.copy_(torch.randn(p.shape, generator=g) * 0.5)
    return model


def eager(model):
    """The HF reference runs eager attention (sdpa would drop Gemma-2's attention soft-capping)."""
    if hasattr(model, "set_attn_implementation"):
        model.set_attn_implementation("eager")
    else:
        model.config._attn_implementation = "eager"
    return model


def hf_model(arch, cfg):
    """The model of the smallest layer scale whose greedy tokens vary (as export_decoders.varied_model,
    with eager attention and the per-arch changes)."""
    for scale in (3.0, 5.0, 8.0, 12.0, 16.0):
        model = eager(finish_model(arch, ed.make_model(cfg, scale)))
        tokens = ed.generate(model)
        if len(set(tokens)) >= 4:
            break
    return model, scale, tokens


def hf_set_logits(model, seq):
    """transformers' logits for each data set, computed in the same chunks (prefill of the past,
    then the set's tokens on its cache): LongRoPE picks its tables by the length seen so far."""
    res = []
    with torch.no_grad():
        for past_len, ids in steps_of(seq):
            cache = None
            if past_len:
                cache = model(input_ids=torch.tensor([seq[:past_len]]), use_cache=True).past_key_values
            out = model(input_ids=torch.tensor([ids]), past_key_values=cache, use_cache=True)
            res.append(out.logits[0].float().numpy())
    return res


def hf_cached_greedy(model):
    """Greedy tokens of a plain loop over transformers' cache (prompt, then one token at a time), as
    onnxruntime-genai runs: generate() differs for Phi-3 LongRoPE, whose prepare_inputs_for_generation
    drops the cache once the length passes original_max_position_embeddings (recomputing the past
    with the long factors)."""
    with torch.no_grad():
        out = model(input_ids=torch.tensor([ed.PROMPT]), use_cache=True)
        tokens = [int(out.logits[0, -1].argmax())]
        while len(tokens) < ed.NEW_TOKENS:
            out = model(input_ids=torch.tensor([[tokens[-1]]]), past_key_values=out.past_key_values, use_cache=True)
            tokens.append(int(out.logits[0, -1].argmax()))
    return tokens


def hf_step_logits(model, seq):
    """transformers' last-row logits of the prompt, then of each next token of `seq` fed one at a
    time on the cache (teacher forcing): NEW_TOKENS rows."""
    rows = []
    with torch.no_grad():
        out = model(input_ids=torch.tensor([seq[:len(ed.PROMPT)]]), use_cache=True)
        rows.append(out.logits[0, -1].float().numpy())
        for t in seq[len(ed.PROMPT):len(ed.PROMPT) + ed.NEW_TOKENS - 1]:
            out = model(input_ids=torch.tensor([[t]]), past_key_values=out.past_key_values, use_cache=True)
            rows.append(out.logits[0, -1].float().numpy())
    return rows


def window_plus_one_tokens(arch, cfg, model):
    """transformers' tokens with sliding_window + 1 and the same weights: onnxruntime's
    GroupQueryAttention attends local_window_size + 1 keys where transformers attends sliding_window."""
    cfg2 = copy.deepcopy(cfg)
    cfg2.sliding_window = cfg.sliding_window + 1
    torch.manual_seed(0)
    m2 = transformers.AutoModelForCausalLM.from_config(cfg2, attn_implementation="eager")
    m2.load_state_dict(model.state_dict())
    return ed.generate(m2.eval().float())


# ---------------------------------------------------------------------------------------------
# the builder


def import_builder(builder_dir):
    if builder_dir and os.path.isdir(builder_dir):
        sys.path.insert(0, os.path.abspath(builder_dir))  # builder.py imports `builders` absolutely
        import builder
        import builders.base as base
        src = os.path.join(builder_dir, "SOURCE.txt")
        where = open(src).read().strip() if os.path.exists(src) else os.path.abspath(builder_dir)
    else:
        from onnxruntime_genai.models import builder
        from onnxruntime_genai.models.builders import base
        import onnxruntime_genai
        where = f"onnxruntime_genai {onnxruntime_genai.__version__}"
    # Random weights come without a tokenizer: the processing files are not written.
    base.Model.save_processing = lambda self, *args, **kwargs: None
    return builder, where


def run_builder(builder, arch, hf_dir, out_dir, precision, ep, options):
    """Builds into out_dir; returns (ok, log tail, notes for the report)."""
    log = io.StringIO()
    cache = tempfile.mkdtemp()
    patched, notes, config = [], [], None
    try:
        with contextlib.redirect_stdout(log), contextlib.redirect_stderr(log):
            opts = dict(options, hf_token="false")
            extra = builder.parse_extra_options(arch, hf_dir, out_dir, precision, ep, cache,
                                                [f"{k}={v}" for k, v in opts.items()])
            config = extra["hf_details"]["hf_config"]
            rp = getattr(config, "rope_parameters", None)
            if arch == "gemma3" and isinstance(rp, dict) and "sliding_attention" in rp:
                # transformers 5 keeps both RoPE bases in rope_parameters per layer type; the builder
                # reads rope_local_base_freq (local layers) and rope_theta (global layers): set on the
                # config class where the config lacks them.
                for attr, val in (("rope_local_base_freq", rp["sliding_attention"]["rope_theta"]),
                                  ("rope_theta", rp["full_attention"]["rope_theta"])):
                    if getattr(config, attr, None) is None:
                        setattr(type(config), attr, val)
                        patched.append(attr)
                notes.append(f"builder given rope_local_base_freq {config.rope_local_base_freq}, rope_theta "
                             f"{config.rope_theta} (set on {type(config).__name__}: {patched})")
            builder.create_model(arch, hf_dir, out_dir, precision, ep, cache, **extra)
        ok = os.path.exists(os.path.join(out_dir, "model.onnx"))
        return ok, log.getvalue()[-3000:], notes
    except Exception:  # noqa: BLE001 - reported
        return False, (log.getvalue()[-1500:] + "\n" + traceback.format_exc()[-2500:]), notes
    finally:
        for attr in patched:
            delattr(type(config), attr)
        shutil.rmtree(cache, ignore_errors=True)


# ---------------------------------------------------------------------------------------------
# onnxruntime


def reference_bytes(path):
    """The model with its data inline, MatMulNBits' accuracy_level set to 0; (bytes, levels seen)."""
    m = onnx.load(path)  # with the external data, inline
    levels = set()
    for n in m.graph.node:
        if n.op_type == "MatMulNBits":
            attrs = [a for a in n.attribute if a.name == "accuracy_level"]
            levels.add(attrs[0].i if attrs else None)
            for a in attrs:
                n.attribute.remove(a)
            n.attribute.append(onnx.helper.make_attribute("accuracy_level", 0))
    return m.SerializeToString(), sorted(levels, key=str)


class ConcatRunner(eg.Runner):
    """export_genai's Runner (caches grow by concatenation) over in-memory bytes; the head size from
    genai_config (the graph's cache dim is the symbol kv_cache_dim)."""

    def __init__(self, model_bytes, gcfg):
        super().__init__(model_bytes)
        self.head = gcfg["model"]["decoder"]["head_size"]
        assert self.outputs[0] == "logits", self.outputs

    def step(self, ids, past):
        arrays = self.arrays(ids, past)
        outs = self.run(arrays)
        by_name = dict(zip(self.outputs, outs))
        presents = [by_name[f"present.{i}.{kind}"] for i in range(self.layers) for kind in ("key", "value")]
        return arrays, outs, presents


class SharedRunner:
    """The graph run as onnxruntime-genai runs it: per cache one buffer [1, kv_heads, capacity, head],
    bound (io_binding) as both past_key_values.i.* and present.i.*; attention_mask [1, total]."""

    def __init__(self, model_bytes, gcfg):
        self.sess = ort.InferenceSession(model_bytes, providers=["CPUExecutionProvider"])
        self.in_names = [i.name for i in self.sess.get_inputs()]
        self.out_names = [o.name for o in self.sess.get_outputs()]
        dec = gcfg["model"]["decoder"]
        self.layers = dec["num_hidden_layers"]
        kv, head = dec["num_key_value_heads"], dec["head_size"]
        past = [i for i in self.sess.get_inputs() if i.name.startswith("past_key_values.")]
        self.dtype = np.float16 if "float16" in past[0].type else np.float32
        max_len = gcfg["search"]["max_length"]
        caps = [max_len] * self.layers
        sw = dec.get("sliding_window")
        if sw and sw.get("window_size", 0) > 0:
            slack = sw.get("cache_slack") or CPU_WINDOW_SLACK
            windowed = min(sw["window_size"] + slack, max_len)
            for i in (sw.get("layers") or range(self.layers)):
                caps[i] = windowed
        self.caps = caps
        self.shapes = [(1, kv, caps[i // 2], head) for i in range(2 * self.layers)]
        self.reset()

    def reset(self):
        self.values = [ort.OrtValue.ortvalue_from_numpy(np.zeros(s, self.dtype)) for s in self.shapes]
        self.total = 0

    def cache(self, k, length):
        return np.ascontiguousarray(self.values[k].numpy()[:, :, :length])

    def step(self, ids):
        """Returns (the inputs as a concatenating runtime would give them, logits, presents as it
        would return them); the presents only while nothing was evicted."""
        past_len, total = self.total, self.total + len(ids)
        feeds = {"input_ids": np.array([ids], np.int64), "attention_mask": np.ones((1, total), np.int64),
                 "position_ids": np.arange(past_len, total, dtype=np.int64)[None]}
        bind = self.sess.io_binding()
        concat_in = []
        for name in self.in_names:
            if name.startswith("past_key_values."):
                layer, kind = name.split(".")[1:3]
                k = 2 * int(layer) + (0 if kind == "key" else 1)
                concat_in.append(self.cache(k, past_len))
                bind.bind_ortvalue_input(name, self.values[k])
            else:
                bind.bind_cpu_input(name, feeds[name])
                concat_in.append(feeds[name])
        for name in self.out_names:
            if name.startswith("present."):
                layer, kind = name.split(".")[1:3]
                bind.bind_ortvalue_output(name, self.values[2 * int(layer) + (0 if kind == "key" else 1)])
            else:
                bind.bind_output(name, "cpu")
        self.sess.run_with_iobinding(bind)
        outs = bind.copy_outputs_to_cpu()
        logits = outs[self.out_names.index("logits")]
        self.total = total
        concat_out = []
        for name in self.out_names:
            if name.startswith("present."):
                layer, kind = name.split(".")[1:3]
                concat_out.append(self.cache(2 * int(layer) + (0 if kind == "key" else 1), total))
            else:
                concat_out.append(outs[self.out_names.index(name)])
        return concat_in, logits, concat_out


def steps_of(seq):
    """The three data sets' (past length, token ids)."""
    return [(0, seq[:8]), (8, seq[8:9]), (PAST2, seq[PAST2:PAST2 + 1])]


def concat_sets(runner, seq):
    sets = []
    for past_len, ids in steps_of(seq):
        past = runner.empty()
        if past_len:
            _, _, past = runner.step(seq[:past_len], runner.empty())
        arrays, outs, _ = runner.step(ids, past)
        sets.append((arrays, outs))
    return sets


def shared_sets(runner, seq):
    sets = []
    for past_len, ids in steps_of(seq):
        runner.reset()
        if past_len:
            runner.step(seq[:past_len])
        if past_len + len(ids) > min(runner.caps):
            raise RuntimeError(f"total {past_len + len(ids)} exceeds a cache capacity {min(runner.caps)}")
        arrays, _, outs = runner.step(ids)
        sets.append((arrays, outs))
    return sets


def shared_greedy(runner):
    runner.reset()
    _, logits, _ = runner.step(ed.PROMPT)
    tokens = [int(np.argmax(logits[0, -1]))]
    while len(tokens) < ed.NEW_TOKENS:
        _, logits, _ = runner.step([tokens[-1]])
        tokens.append(int(np.argmax(logits[0, -1])))
    return tokens


def max_diff(a, b):
    return float(np.max(np.abs(np.asarray(a, np.float64) - np.asarray(b, np.float64))))


def logits_vs_hf(sets, hf):
    """Per data set, max |onnxruntime - transformers| of the logits."""
    return ", ".join(f"{max_diff(outs[0][0], ref):.2g}" for (_, outs), ref in zip(sets, hf))


def concat_forced(runner, seq):
    _, outs, past = runner.step(ed.PROMPT, runner.empty())
    rows = [outs[0][0, -1]]
    for t in seq[len(ed.PROMPT):len(ed.PROMPT) + ed.NEW_TOKENS - 1]:
        _, outs, past = runner.step([t], past)
        rows.append(outs[0][0, -1])
    return rows


def shared_forced(runner, seq):
    runner.reset()
    rows = [runner.step(ed.PROMPT)[1][0, -1]]
    for t in seq[len(ed.PROMPT):len(ed.PROMPT) + ed.NEW_TOKENS - 1]:
        rows.append(runner.step([t])[1][0, -1])
    return rows


def run_reference(folder, name, gcfg, seq, hf, hf_tokens, rep):
    """Data sets and greedy tokens of the model in `folder`; returns (tokens or None, how)."""
    model_bytes, levels = reference_bytes(os.path.join(folder, "model.onnx"))
    if levels:
        rep.append(f"  MatMulNBits accuracy_level as built: {levels}; the reference runs a copy with 0")
    concat = shared = None
    results = {}
    try:
        r = ConcatRunner(model_bytes, gcfg)
        concat = concat_sets(r, seq)
        results["concat"] = (r, concat, eg.greedy(r))
        rep.append(f"  onnxruntime, concatenated caches: ran; logits vs transformers max abs per data set "
                   f"{logits_vs_hf(concat, hf['sets'])}")
    except Exception as e:  # noqa: BLE001
        rep.append(f"  onnxruntime, concatenated caches: FAILED {type(e).__name__}: {str(e)[:400]}")
    try:
        r = SharedRunner(model_bytes, gcfg)
        shared = shared_sets(r, seq)
        results["shared"] = (r, shared, shared_greedy(r))
        rep.append(f"  onnxruntime, shared past/present buffers (capacities {r.caps}): ran; logits vs "
                   f"transformers max abs per data set {logits_vs_hf(shared, hf['sets'])}")
    except Exception as e:  # noqa: BLE001
        rep.append(f"  onnxruntime, shared past/present buffers: FAILED {type(e).__name__}: {str(e)[:400]}")
    if concat and shared:
        try:
            d = max(max_diff(a, b) for (_, oa), (_, ob) in zip(concat, shared) for a, b in zip(oa, ob))
            scale = max(float(np.max(np.abs(np.asarray(o, np.float64)))) for _, oo in shared for o in oo)
            agree = d <= 1e-3 * max(scale, 1.0)
            diff = f"outputs max abs diff {d:.3g}"
        except Exception as e:  # noqa: BLE001 - e.g. presents of other shapes
            agree, diff = False, f"outputs not comparable ({type(e).__name__}: {str(e)[:200]})"
        rep.append(f"  the two ways: {diff} ({'agree' if agree else 'DIFFER'}); "
                   f"tokens {'equal' if results['concat'][2] == results['shared'][2] else 'DIFFER'}")
        if not agree:
            rep.append(f"    concatenated caches' tokens {results['concat'][2]}")
            del results["concat"]
    if not results:
        rep.append("  no data sets, no onnxruntime tokens")
        return None, None
    how = "concat" if "concat" in results else "shared"
    runner, sets, tokens = results[how]
    names = runner.in_names if how == "shared" else [i.name for i in runner.inputs]
    for k, (arrays, outs) in enumerate(sets):
        save_set(folder, k, arrays, outs, names)
    rep.append(f"  data sets 0-2 from the {'concatenated-cache' if how == 'concat' else 'shared-buffer'} run"
               + ("" if how == "concat" else " (capacity >= total: the buffer's rows [0, total) written "
                  "as the concatenated cache)"))
    rep.append(f"  onnxruntime tokens {tokens}: {'==' if tokens == hf_tokens else '!='} transformers")
    forced = (concat_forced if how == "concat" else shared_forced)(runner, seq)
    rep.append("  teacher-forced (transformers' tokens fed), max |logits - transformers'| per step: "
               + " ".join(f"{max_diff(a, b):.1g}" for a, b in zip(forced, hf["steps"])))
    return tokens, how


# ---------------------------------------------------------------------------------------------
# the report


def dims(t):
    return "[" + ", ".join(d.dim_param if d.HasField("dim_param") else str(d.dim_value)
                           for d in t.type.tensor_type.shape.dim) + "]"


def describe(folder, rep):
    m = onnx.load(os.path.join(folder, "model.onnx"), load_external_data=False)
    dt = onnx.helper.tensor_dtype_to_np_dtype
    rep.append("  inputs: " + "; ".join(f"{i.name} {dt(i.type.tensor_type.elem_type)} {dims(i)}"
                                        for i in m.graph.input))
    rep.append("  outputs: " + "; ".join(f"{o.name} {dt(o.type.tensor_type.elem_type)} {dims(o)}"
                                         for o in m.graph.output))
    ops, sub_ops = {}, {}

    def count(graph, into):
        for n in graph.node:
            key = (n.domain + "::" if n.domain not in ("", "ai.onnx") else "") + n.op_type
            into[key] = into.get(key, 0) + 1
            for a in n.attribute:
                if a.type == onnx.AttributeProto.GRAPH:
                    count(a.g, sub_ops)
    count(m.graph, ops)
    rep.append(f"  ops: {dict(sorted(ops.items()))}")
    if sub_ops:
        rep.append(f"  ops inside subgraphs (If branches): {dict(sorted(sub_ops.items()))}")
    groups = {}
    for n in m.graph.node:
        if n.op_type in ("GroupQueryAttention", "MatMulNBits", "GatherBlockQuantized", "If"):
            attrs = {a.name: onnx.helper.get_attribute_value(a) for a in n.attribute
                     if a.type != onnx.AttributeProto.GRAPH}
            attrs = {k: (round(v, 6) if isinstance(v, float) else v.decode() if isinstance(v, bytes) else v)
                     for k, v in attrs.items()}
            if n.op_type == "GroupQueryAttention":
                attrs["inputs"] = ",".join(GQA_INPUTS[i] if i < len(GQA_INPUTS) else str(i)
                                           for i, x in enumerate(n.input) if x)
            elif n.op_type == "MatMulNBits":
                attrs["zero_points"] = len(n.input) > 3 and bool(n.input[3])
                attrs = {k: v for k, v in attrs.items() if k not in ("K", "N")}
            elif n.op_type == "GatherBlockQuantized":
                attrs["zero_points"] = len(n.input) > 3 and bool(n.input[3])
            elif n.op_type == "If":
                attrs = {"cond": n.input[0], "outputs": ",".join(n.output)}
            key = (n.op_type, json.dumps(attrs, sort_keys=True))
            groups.setdefault(key, []).append(n.name)
    for (op, attrs), names in groups.items():
        rep.append(f"  {op} x{len(names)}: {attrs}" + (f" (first {names[0]})" if op != "MatMulNBits" else ""))
    with open(os.path.join(folder, "genai_config.json")) as f:
        g = json.load(f)
    dec = g["model"]["decoder"]
    rep.append(f"  genai_config: type {g['model']['type']}, context_length {g['model']['context_length']}, "
               f"head_size {dec['head_size']}, num_key_value_heads {dec['num_key_value_heads']}, "
               f"past_present_share_buffer {g['search']['past_present_share_buffer']}, "
               f"sliding_window {dec.get('sliding_window')}, provider_options {dec['session_options']['provider_options']}"
               f", inputs {dec['inputs']}")
    return g


# ---------------------------------------------------------------------------------------------


def do_arch(out, builder, arch, make_cfg, greedy, rep):
    cfg = make_cfg()
    model, scale, tokens = hf_model(arch, cfg)
    entry = {"prompt": ed.PROMPT, "layer_init_scale": scale, "hf_generate": tokens, "onnxruntime": {}}
    greedy[arch] = entry
    rep.append(f"== {arch}: {type(model).__name__}, layer scale {scale}, transformers tokens {tokens}")
    entry["hf_cached_loop"] = hf_cached_greedy(model)
    if entry["hf_cached_loop"] != tokens:
        rep.append(f"   transformers' plain cached loop differs from generate(): {entry['hf_cached_loop']}")
    window = getattr(cfg, "sliding_window", None)
    if window:
        entry["hf_generate_window_plus_1"] = window_plus_one_tokens(arch, cfg, model)
        rep.append(f"   sliding_window {window}, layer_types {getattr(cfg, 'layer_types', None)}; "
                   f"transformers tokens with sliding_window {window + 1}: {entry['hf_generate_window_plus_1']}")
    if arch == "gemma2":
        rep.append(f"   transformers' default Gemma-2 layer_types for 2 layers: "
                   f"{transformers.Gemma2Config(num_hidden_layers=2).layer_types}")
    seq = ed.PROMPT + tokens
    hf = {"sets": hf_set_logits(model, seq), "steps": hf_step_logits(model, seq)}
    hf_dir = tempfile.mkdtemp()
    model.save_pretrained(hf_dir)
    try:
        for suffix, precision, ep, options in PRECISIONS:
            name = f"{arch}_{suffix}"
            tmp = tempfile.mkdtemp()
            try:
                ok, log, notes = run_builder(builder, arch, hf_dir, tmp, precision, ep, options)
                opt = "".join(f", {k}={v}" for k, v in options.items())
                rep += [f"   ({name}: {n})" for n in notes]
                if not ok:
                    rep.append(f"-- {name} ({precision}, {ep}{opt}): NOT BUILT\n" +
                               "\n".join("   | " + line for line in log.strip().splitlines()[-25:]))
                    entry["onnxruntime"][name] = None
                    continue
                folder = os.path.join(out, name)
                shutil.rmtree(folder, ignore_errors=True)
                os.makedirs(folder)
                for f in sorted(os.listdir(tmp)):
                    if f.endswith(".onnx") or f.endswith(".onnx.data") or f == "genai_config.json":
                        shutil.copy(os.path.join(tmp, f), folder)
                    else:
                        rep.append(f"   ({name}: the builder also wrote {f}, not kept)")
                files = ", ".join(f"{f} {os.path.getsize(os.path.join(folder, f))}" for f in sorted(os.listdir(folder)))
                rep.append(f"-- {name} ({precision}, {ep}{opt}): built ({files})")
                gcfg = describe(folder, rep)
                toks, how = run_reference(folder, name, gcfg, seq, hf, tokens, rep)
                entry["onnxruntime"][name] = toks
                if how:
                    entry.setdefault("onnxruntime_run", {})[name] = how
            except Exception:  # noqa: BLE001 - reported
                rep.append(f"-- {name}: FAILED\n" + traceback.format_exc()[-2500:])
            finally:
                shutil.rmtree(tmp, ignore_errors=True)
    finally:
        shutil.rmtree(hf_dir, ignore_errors=True)


def main():
    args = sys.argv[1:]
    builder_dir = os.path.join(HERE, "..", "..", ".cache", "genai_models")
    if "--builder" in args:
        i = args.index("--builder")
        builder_dir = args[i + 1]
        del args[i:i + 2]
    out, want = args[0], args[1:]
    os.makedirs(out, exist_ok=True)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import onnx_ir
    builder, where = import_builder(builder_dir)
    rep = [f"builder: {where}",
           f"torch {torch.__version__}, transformers {transformers.__version__}, onnx {onnx.__version__}, "
           f"onnx_ir {onnx_ir.__version__}, onnxruntime {ort.__version__} ({', '.join(ort.get_available_providers())})",
           f"prompt {ed.PROMPT}; data sets: 0 the prompt from an empty cache, 1 the next token at past 8, "
           f"2 one token at past {PAST2} (tokens after the prompt: transformers' greedy ones)", ""]
    greedy = {}
    for arch, make_cfg in configs().items():
        if want and arch not in want:
            continue
        try:
            do_arch(out, builder, arch, make_cfg, greedy, rep)
        except Exception:  # noqa: BLE001 - reported
            rep.append(f"== {arch}: FAILED\n" + traceback.format_exc()[-2500:])
        rep.append("")
        print("\n".join(rep[-60:]), flush=True)
    summary = ["summary: model: onnxruntime tokens == transformers tokens (how it ran)"]
    for arch, e in greedy.items():
        for name, toks in e["onnxruntime"].items():
            how = e.get("onnxruntime_run", {}).get(name)
            state = "not built or not run" if toks is None else ("==" if toks == e["hf_generate"] else "!=")
            if toks is not None and toks != e["hf_generate"] and toks == e["hf_cached_loop"]:
                state += " (== transformers' plain cached loop)"
            if toks is not None and toks != e["hf_generate"] and toks == e.get("hf_generate_window_plus_1"):
                state += " (== transformers with sliding_window + 1)"
            summary.append(f"  {name}: {state}" + (f" ({how})" if how else ""))
    rep += summary
    with open(os.path.join(out, "greedy.json"), "w") as f:
        json.dump(greedy, f, indent=1)
        f.write("\n")
    with open(os.path.join(out, "report.txt"), "w") as f:
        f.write("\n".join(rep) + "\n")
    print("\n".join(summary))


if __name__ == "__main__":
    main()
