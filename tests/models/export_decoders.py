#!/usr/bin/env python3
"""Exports tiny random-weight transformer decoders to ONNX the way real exporters write them.

Run on a machine with PyTorch (2.11), transformers (5.x), onnx and onnxruntime (the GPU machine has
them); the outputs are committed under tests/models/decoders/ so that CI tests real exporter output.

For each family (Llama with grouped-query attention, Qwen3 with per-head q/k norms, Phi-3 with fused
qkv/gate_up and partial rotary, Gemma with GeGLU and a scaled embedding) it writes:

  <family>_seq_<exporter>/model.onnx    input_ids [1, sequence] -> logits (no cache)
  <family>_step_<exporter>/model.onnx   one decode step with a concat-style cache:
                                        input_ids [1, 1], position_ids [1, 1],
                                        past_key_i / past_value_i [1, Hkv, past, D] (past symbolic)
                                        -> logits, present_key_i / present_value_i

with <exporter> `dynamo` (torch.onnx.export(dynamo=True)) and `legacy` (dynamo=False, TorchScript),
where each works. Beside each model, test_data_set_N/ holds inputs and onnxruntime's outputs in the
ONNX test-data layout. Step graphs get two data sets (past lengths 8 and 3) whose caches are the
real ones from running the prompt. Each family folder gets greedy.json: the prompt, the 16 tokens
transformers' generate() picks greedily, and the tokens of an onnxruntime loop over the step graph
(prompt fed one token at a time from an empty cache).

Usage: python3 export_decoders.py OUT_DIR [family ...]
"""
import json
import os
import sys
import traceback

import numpy as np
import onnx
import onnxruntime as ort
import torch
import transformers

from onnx_test_data import save_report, save_set

PROMPT = [17, 200, 45, 3, 99, 128, 250, 7]
NEW_TOKENS = 16
VOCAB = 256


def configs():
    """Each family's config, built on demand: a constructor that fails is one family's failure."""
    common = dict(vocab_size=VOCAB, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                  num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=128)
    # The later families are narrower (hidden 32, head 8) to keep the committed files small.
    small = dict(common, hidden_size=32, intermediate_size=64)
    plain = dict(vocab_size=VOCAB, num_hidden_layers=2, num_attention_heads=4, max_position_embeddings=128)
    T = transformers
    return {
        "llama": lambda: T.LlamaConfig(**common, tie_word_embeddings=False),
        "qwen3": lambda: T.Qwen3Config(**common, head_dim=16, tie_word_embeddings=True),
        "phi3": lambda: T.Phi3Config(**dict(common, num_key_value_heads=4), partial_rotary_factor=0.5,
                                     tie_word_embeddings=False, pad_token_id=0),
        "gemma": lambda: T.GemmaConfig(**dict(common, num_key_value_heads=1), head_dim=16),
        # learned absolute positions, Conv1D projections, fused qkv split, tanh GELU
        "gpt2": lambda: T.GPT2Config(vocab_size=VOCAB, n_embd=32, n_layer=2, n_head=4, n_positions=128, n_inner=64),
        # q/k/v biases
        "qwen2": lambda: T.Qwen2Config(**small, tie_word_embeddings=True),
        "mistral": lambda: T.MistralConfig(**small, sliding_window=None),
        # LayerNorm with bias, partial rotary
        "stablelm": lambda: T.StableLmConfig(**small, partial_rotary_factor=0.5),
        # parallel residual, per-head interleaved fused qkv, partial rotary
        "gpt_neox": lambda: T.GPTNeoXConfig(**plain, hidden_size=32, intermediate_size=64, rotary_pct=0.5),
        # scalar multipliers on embeddings, residuals, attention and logits
        "granite": lambda: T.GraniteConfig(**small, embedding_multiplier=4.0, logits_scaling=2.0,
                                           residual_multiplier=0.5, attention_multiplier=0.25),
        # q/k RMSNorm over all heads, norms after attention and MLP
        "olmo2": lambda: T.Olmo2Config(**small),
        # a layer without RoPE
        "smollm3": lambda: T.SmolLM3Config(**small, no_rope_layers=[1, 0]),
        # parallel attention and MLP, partial rotary, dense layers with bias
        "phi": lambda: T.PhiConfig(**plain, hidden_size=32, intermediate_size=64, partial_rotary_factor=0.5),
        # multi-query attention, parallel attention, rotary
        "falcon": lambda: T.FalconConfig(**plain, hidden_size=32),
        # learned positions with an offset, ReLU, LayerNorm
        "opt": lambda: T.OPTConfig(vocab_size=VOCAB, hidden_size=32, ffn_dim=64, num_hidden_layers=2,
                                   num_attention_heads=4, max_position_embeddings=128, word_embed_proj_dim=32),
        # q/k norms, local (sliding-window) layers wider than any cache here, soft-capping off
        "gemma3": lambda: T.Gemma3TextConfig(**dict(small, num_key_value_heads=1), head_dim=8, sliding_window=64,
                                             query_pre_attn_scalar=8),
        # attention logit soft-capping (tanh), local layers
        "gemma2": lambda: T.Gemma2Config(**dict(small, num_key_value_heads=1), head_dim=8, sliding_window=64,
                                         query_pre_attn_scalar=8),
    }


def make_model(cfg, scale=3.0):
    torch.manual_seed(0)
    m = transformers.AutoModelForCausalLM.from_config(cfg, attn_implementation="sdpa")
    # Random init is std 0.02; widen the spread so greedy tokens are not all ties: embeddings by 3,
    # the layers' matrices by `scale`.
    with torch.no_grad():
        for name, p in m.named_parameters():
            if p.dim() >= 2:
                p.mul_(3.0 if "embed" in name or "lm_head" in name else scale)
    return m.eval().float()


def generate(model):
    with torch.no_grad():
        gen = model.generate(torch.tensor([PROMPT]), max_new_tokens=NEW_TOKENS, do_sample=False,
                             min_new_tokens=NEW_TOKENS, eos_token_id=None, pad_token_id=0)
    return gen[0, len(PROMPT):].tolist()


def varied_model(cfg):
    """The model of the smallest layer scale whose greedy tokens vary (at least 4 distinct of 16):
    with tied embeddings a tiny model tends to repeat one token, which tests little."""
    for scale in (3.0, 5.0, 8.0, 12.0, 16.0):
        model = make_model(cfg, scale)
        tokens = generate(model)
        if len(set(tokens)) >= 4:
            break
    return model, scale, tokens


class Seq(torch.nn.Module):
    def __init__(self, m):
        super().__init__()
        self.m = m

    def forward(self, input_ids):
        return self.m(input_ids=input_ids, use_cache=False).logits


class Step(torch.nn.Module):
    def __init__(self, m):
        super().__init__()
        self.m = m
        self.layers = m.config.num_hidden_layers
        assert self.layers == 2, "forward names two layers' caches"

    def forward(self, input_ids, position_ids, past_key_0, past_value_0, past_key_1, past_value_1):
        past = (past_key_0, past_value_0, past_key_1, past_value_1)
        cache = transformers.DynamicCache(config=self.m.config)
        for i in range(self.layers):
            cache.update(past[2 * i], past[2 * i + 1], i)
        out = self.m(input_ids=input_ids, position_ids=position_ids, past_key_values=cache, use_cache=True)
        pres = []
        for i in range(self.layers):
            layer = out.past_key_values.layers[i]
            pres += [layer.keys, layer.values]
        return (out.logits, *pres)


def step_names(layers, first=("input_ids", "position_ids")):
    """A step's input and output names: `first`, then each layer's past key and value in; logits, then
    each layer's present key and value out."""
    ins = list(first)
    outs = ["logits"]
    for i in range(layers):
        ins += [f"past_key_{i}", f"past_value_{i}"]
        outs += [f"present_key_{i}", f"present_value_{i}"]
    return ins, outs


def export(module, args, path, dynamo, in_names, out_names, dyn_axes, dim_max=127):
    """torch.onnx.export with dynamo (dyn_axes' labels as torch.export Dims of 1..dim_max) or TorchScript."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    module.eval()  # a wrapper module starts in training mode: the dynamo exporter would keep dropout
    if dynamo:
        ds = {}
        dims = {}
        for name, axes in dyn_axes.items():
            if name in in_names:
                ds[name] = {ax: dims.setdefault(label, torch.export.Dim(label, min=1, max=dim_max))
                            for ax, label in axes.items()}
        # dynamic_shapes is keyed by forward's parameter names (the input names).
        dsh = {n: ds.get(n) for n in in_names}
        prog = torch.onnx.export(module, args, None, dynamo=True, dynamic_shapes=dsh,
                                 input_names=in_names, output_names=out_names, external_data=False)
        prog.save(path, external_data=False)
    else:
        torch.onnx.export(module, args, path, dynamo=False, input_names=in_names, output_names=out_names,
                          dynamic_axes={k: dict(v) for k, v in dyn_axes.items()}, opset_version=17,
                          do_constant_folding=True)
    m = onnx.load(path)
    onnx.checker.check_model(m)


def ort_session(path):
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    return ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])


def feed(sess, arrays):
    return {i.name: a for i, a in zip(sess.get_inputs(), arrays)}


def prompt_cache(model, cfg, ids):
    with torch.no_grad():
        out = model(input_ids=torch.tensor([ids]), use_cache=True)
    past = []
    for layer in out.past_key_values.layers:
        past += [layer.keys.numpy().copy(), layer.values.numpy().copy()]
    return past


def empty_cache(model, cfg):
    """Zero-length past keys and values of the shapes the model's cache has."""
    return [np.zeros_like(p[:, :, :0]) for p in prompt_cache(model, cfg, PROMPT[:1])]


def family_model(out, fam, cfg):
    """The family's model with the weights of its committed exports (greedy.json's layer scale)."""
    with open(os.path.join(out, fam, "greedy.json")) as f:
        greedy = json.load(f)
    model = make_model(cfg, greedy.get("layer_init_scale", 3.0))
    assert generate(model) == greedy["hf_generate"], "weights differ from the family's exports"
    return model


def symbolic_step_sets(model, cfg):
    """(token ids, past length, past caches) for steps whose token count varies: the prompt's first 5
    tokens at an empty cache, 3 more at a past of 5, then the next token at the whole prompt's cache."""
    prompt = PROMPT
    sets = [(prompt[:5], 0, empty_cache(model, cfg)), (prompt[5:8], 5, prompt_cache(model, cfg, prompt[:5]))]
    with torch.no_grad():
        nxt = int(model(input_ids=torch.tensor([prompt])).logits[0, -1].argmax())
    sets.append(([nxt], len(prompt), prompt_cache(model, cfg, prompt)))
    return sets


def export_symbolic_steps(out, fam, model, cfg, form, export_fn, arrays_of, report, describe=None):
    """One family's step exports in `form`, <fam>/<fam>_<form>_<exporter>/, for each exporter:
    export_fn(path, dynamo, past3) writes the model (past3: the cache of the prompt's first 3 tokens,
    the example's past); every symbolic_step_sets() set, its inputs as arrays_of(ids, pos, past)
    gives them, runs through onnxruntime and is saved beside it; the report line compares the
    logits with the full sequence's rows (and adds describe(path) when given)."""
    prompt = PROMPT
    sets = symbolic_step_sets(model, cfg)
    past3 = prompt_cache(model, cfg, prompt[:3])
    for exporter in ("dynamo", "legacy"):
        name = f"{fam}_{form}_{exporter}"
        folder = os.path.join(out, fam, name)
        path = os.path.join(folder, "model.onnx")
        try:
            os.makedirs(folder, exist_ok=True)
            export_fn(path, exporter == "dynamo", past3)
            sess = ort_session(path)
            errs = []
            for k, (ids, pos, past) in enumerate(sets):
                arrays = arrays_of(ids, pos, past)
                res = sess.run(None, feed(sess, arrays))
                save_set(folder, k, arrays, res)
                with torch.no_grad():
                    full = model(input_ids=torch.tensor([prompt[:pos] + ids])).logits
                errs.append(float(np.abs(res[0][0] - full[0, pos:pos + len(ids)].numpy()).max()))
            extra = f"; {describe(path)}" if describe else ""
            report.append(f"{name}: ok, ort vs the full sequence's rows max abs {max(errs):.2e}{extra}")
        except Exception as e:  # noqa: BLE001 - every failure is reported, none hidden
            report.append(f"{name}: FAILED {type(e).__name__}: {str(e).splitlines()[0][:200]}")
            traceback.print_exc()


def for_families(want, report, fn):
    """fn(family, config) for each family in configs() (those named in `want`, or all); a failure is
    reported and the others go on."""
    for fam, make_cfg in configs().items():
        if want and fam not in want:
            continue
        try:
            fn(fam, make_cfg())
        except Exception as e:  # noqa: BLE001 - every failure is reported, none hidden
            report.append(f"{fam}: FAILED {type(e).__name__}: {e}")
            traceback.print_exc()


def do_family(out, fam, cfg, report):
    model, scale, tokens = varied_model(cfg)
    layers = cfg.num_hidden_layers
    fam_dir = os.path.join(out, fam)
    greedy = {"prompt": PROMPT, "layer_init_scale": scale, "hf_generate": tokens}

    seq_ids = np.array([PROMPT], dtype=np.int64)
    for exporter in ("dynamo", "legacy"):
        name = f"{fam}_seq_{exporter}"
        folder = os.path.join(fam_dir, name)
        path = os.path.join(folder, "model.onnx")
        try:
            export(Seq(model), (torch.tensor(seq_ids),), path, exporter == "dynamo", ["input_ids"], ["logits"],
                   {"input_ids": {1: "sequence"}, "logits": {1: "sequence"}})
            sess = ort_session(path)
            res = sess.run(None, feed(sess, [seq_ids]))
            with torch.no_grad():
                ref = Seq(model)(torch.tensor(seq_ids)).numpy()
            err = float(np.abs(res[0] - ref).max())
            save_set(folder, 0, [seq_ids], res)
            report.append(f"{name}: ok, ort vs torch max abs {err:.2e}")
        except Exception as e:  # noqa: BLE001 - every failure is reported, none hidden
            report.append(f"{name}: FAILED {type(e).__name__}: {str(e).splitlines()[0][:200]}")
            traceback.print_exc()

    in_names, out_names = step_names(layers)
    dyn = {}
    for i in range(layers):
        for kind in ("key", "value"):
            dyn[f"past_{kind}_{i}"] = {2: "past"}
            dyn[f"present_{kind}_{i}"] = {2: "past_plus_1"}
    past8 = prompt_cache(model, cfg, PROMPT)
    with torch.no_grad():
        nxt = int(model(input_ids=torch.tensor([PROMPT])).logits[0, -1].argmax())
    past3 = prompt_cache(model, cfg, PROMPT[:3])
    sets = [([nxt], len(PROMPT), past8), ([PROMPT[3]], 3, past3)]
    for exporter in ("legacy", "dynamo"):
        name = f"{fam}_step_{exporter}"
        folder = os.path.join(fam_dir, name)
        path = os.path.join(folder, "model.onnx")
        try:
            ex_args = (torch.tensor([[nxt]]), torch.tensor([[len(PROMPT)]]), *[torch.tensor(p) for p in past8])
            export(Step(model), ex_args, path, exporter == "dynamo", in_names, out_names, dyn)
            sess = ort_session(path)
            for k, (tok, pos, past) in enumerate(sets):
                arrays = [np.array([tok], dtype=np.int64), np.array([[pos]], dtype=np.int64), *past]
                res = sess.run(None, feed(sess, arrays))
                save_set(folder, k, arrays, res)
            # An onnxruntime loop over the step graph from an empty cache.
            past = empty_cache(model, cfg)
            toks = []
            seq = list(PROMPT)
            for pos in range(len(PROMPT) + NEW_TOKENS - 1):
                arrays = [np.array([[seq[pos]]], dtype=np.int64), np.array([[pos]], dtype=np.int64), *past]
                res = sess.run(None, feed(sess, arrays))
                past = res[1:]
                if pos >= len(PROMPT) - 1:
                    t = int(res[0][0, -1].argmax())
                    toks.append(t)
                    seq.append(t)
            greedy[f"onnxruntime_{name}"] = toks
            report.append(f"{name}: ok, ort loop {'==' if toks == greedy['hf_generate'] else '!='} generate()")
        except Exception as e:  # noqa: BLE001
            report.append(f"{name}: FAILED {type(e).__name__}: {str(e).splitlines()[0][:200]}")
            traceback.print_exc()
    os.makedirs(fam_dir, exist_ok=True)
    with open(os.path.join(fam_dir, "greedy.json"), "w") as f:
        json.dump(greedy, f)
        f.write("\n")


def main():
    out = sys.argv[1]
    want = sys.argv[2:]
    report = [f"torch {torch.__version__}, transformers {transformers.__version__}, onnx {onnx.__version__}, "
              f"onnxruntime {ort.__version__}"]
    for_families(want, report, lambda fam, cfg: do_family(out, fam, cfg, report))
    # Appended: exporting some families adds their lines to the others'.
    save_report(os.path.join(out, "export_report.txt"), report, append=True)


if __name__ == "__main__":
    main()
