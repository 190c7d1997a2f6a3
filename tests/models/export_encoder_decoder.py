#!/usr/bin/env python3
"""Exports tiny random-weight encoder-decoder models (Whisper-shaped speech recognition, T5-shaped text
to text) with torch.onnx the way users export them for generation: an encoder graph and a decoder
step whose self-attention cache is concat-style (past in, present out) and which reads the encoder's
output every step (cross-attention keys and values computed from it inside the step).

Run on a machine with PyTorch (2.11), transformers (5.x), onnx and onnxruntime (the GPU machine has
them); the outputs are committed under tests/models/encoder_decoder/ so that CI tests real exporter
output (tests/models/encoder_decoder_exports_test.cpp; docs/encoder-decoder.md).

For each model <m> (whisper, t5) and exporter <e> (dynamo: torch.onnx.export(dynamo=True); legacy:
TorchScript) it writes:

  <m>/<m>_encoder_<e>/model.onnx   whisper: input_features [1, mels, frames] -> last_hidden_state
                                   t5: input_ids [1, T] -> last_hidden_state
  <m>/<m>_decoder_<e>/model.onnx   input_ids [1, sequence], encoder_hidden_states [1, T, D],
                                   past_key_i / past_value_i [1, H, past, Dh] (past symbolic)
                                   -> logits, present_key_i / present_value_i

Each folder holds test_data_set_N with onnxruntime's outputs (the decoder's at past lengths 0, 3 and
5, with the real caches). The T5 decoder's encoder length is a dynamic axis (encoder_sequence), and
greedy.json's other_inputs give transformers' greedy tokens for shorter and longer texts. <m>/greedy.json: the encoder input's data set, the decoder start ids, the
NEW_TOKENS ids a greedy loop of the full model (no cache, argmax of the last row) picks, the ids
transformers' generate() picks when it runs, and those of an onnxruntime loop over each exporter's
encoder and decoder step (start ids fed one at a time from an empty cache).

Usage: python3 export_encoder_decoder.py OUT_DIR [model ...]
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

import export_decoders as ed
from onnx_test_data import save_report, save_set

NEW_TOKENS = 12
VOCAB = 96


def whisper():
    cfg = transformers.WhisperConfig(
        vocab_size=VOCAB, d_model=32, encoder_layers=2, decoder_layers=2, encoder_attention_heads=4,
        decoder_attention_heads=4, encoder_ffn_dim=64, decoder_ffn_dim=64, num_mel_bins=16,
        max_source_positions=16, max_target_positions=48, pad_token_id=0, bos_token_id=1, eos_token_id=2,
        decoder_start_token_id=1, suppress_tokens=None, begin_suppress_tokens=None, forced_decoder_ids=None)
    rng = np.random.default_rng(0)
    feats = rng.standard_normal((1, 16, 32), dtype=np.float32)  # frames = 2 * max_source_positions
    return dict(cfg=cfg, cls=transformers.WhisperForConditionalGeneration, enc_in=("input_features", feats),
                start=[1, 5, 7])


def t5():
    cfg = transformers.T5Config(vocab_size=VOCAB, d_model=32, d_kv=8, d_ff=64, num_layers=2, num_decoder_layers=2,
                                num_heads=4, relative_attention_num_buckets=8, relative_attention_max_distance=16,
                                feed_forward_proj="gated-gelu", pad_token_id=0, eos_token_id=1,
                                decoder_start_token_id=0, tie_word_embeddings=False)
    ids = np.array([[5, 17, 33, 2, 60, 41, 9, 88, 23, 1]], dtype=np.int64)
    others = [np.array([[5, 17, 33, 2, 60, 1]], dtype=np.int64), np.array([[44, 8, 71, 3, 19, 52, 6, 30, 12, 77, 25, 64, 1]],
                                                                       dtype=np.int64)]
    return dict(cfg=cfg, cls=transformers.T5ForConditionalGeneration, enc_in=("input_ids", ids), start=[0],
                other_enc_in=others)


MODELS = {"whisper": whisper, "t5": t5}


def make_model(spec, scale):
    torch.manual_seed(0)
    m = spec["cls"](spec["cfg"])
    with torch.no_grad():
        for name, p in m.named_parameters():
            if p.dim() >= 2:
                p.mul_(scale)
    return m.eval().float()


def enc_kwargs(spec):
    name, arr = spec["enc_in"]
    return {name: torch.tensor(arr)}


def greedy_full(model, spec, n=NEW_TOKENS):
    """Greedy decoding by definition: the whole decoder sequence each step, argmax of the last row."""
    seq = list(spec["start"])
    with torch.no_grad():
        enc = model.get_encoder()(**enc_kwargs(spec)).last_hidden_state
        for _ in range(n):
            logits = model(encoder_outputs=(enc,), decoder_input_ids=torch.tensor([seq]), use_cache=False).logits
            seq.append(int(logits[0, -1].argmax()))
    return seq[len(spec["start"]):]


def hf_generate(model, spec):
    with torch.no_grad():
        gen = model.generate(**enc_kwargs(spec), decoder_input_ids=torch.tensor([spec["start"]]),
                             max_new_tokens=NEW_TOKENS, min_new_tokens=NEW_TOKENS, do_sample=False, num_beams=1,
                             eos_token_id=None, pad_token_id=0)
    return gen[0, len(spec["start"]):].tolist()


class WhisperEncoder(torch.nn.Module):
    def __init__(self, m):
        super().__init__()
        self.enc = m.get_encoder()

    def forward(self, input_features):
        return self.enc(input_features=input_features).last_hidden_state


class T5Encoder(WhisperEncoder):
    def forward(self, input_ids):
        return self.enc(input_ids=input_ids).last_hidden_state


class DecoderStep(torch.nn.Module):
    """One decoder step: the self-attention cache concat-style, cross-attention from the encoder's output."""

    def __init__(self, m, layers):
        super().__init__()
        self.m = m
        self.layers = layers
        assert layers == 2, "forward names two layers' caches"

    def forward(self, input_ids, encoder_hidden_states, past_key_0, past_value_0, past_key_1, past_value_1):
        past = (past_key_0, past_value_0, past_key_1, past_value_1)
        self_cache = transformers.DynamicCache()
        for i in range(self.layers):
            self_cache.update(past[2 * i], past[2 * i + 1], i)
        cache = transformers.EncoderDecoderCache(self_cache, transformers.DynamicCache())
        out = self.m(encoder_outputs=(encoder_hidden_states,), decoder_input_ids=input_ids, past_key_values=cache,
                     use_cache=True)
        pres = []
        for i in range(self.layers):
            layer = out.past_key_values.self_attention_cache.layers[i]
            pres += [layer.keys, layer.values]
        return (out.logits, *pres)


def self_cache(model, enc, ids):
    """The decoder's self-attention caches after `ids` (from an empty cache)."""
    with torch.no_grad():
        out = model(encoder_outputs=(enc,), decoder_input_ids=torch.tensor([ids]), use_cache=True)
    past = []
    for layer in out.past_key_values.self_attention_cache.layers:
        past += [layer.keys.numpy().copy(), layer.values.numpy().copy()]
    return past


def do_model(out, name, report):
    spec = MODELS[name]()
    cfg = spec["cfg"]
    for scale in (2.0, 4.0, 8.0, 12.0):
        model = make_model(spec, scale)
        tokens = greedy_full(model, spec)
        if len(set(tokens)) >= 4:
            break
    layers = cfg.decoder_layers if name == "whisper" else cfg.num_decoder_layers
    greedy = {"encoder_input": spec["enc_in"][0], "decoder_start_ids": spec["start"], "layer_init_scale": scale,
              "greedy_full_sequence": tokens}
    try:
        greedy["hf_generate"] = hf_generate(model, spec)
        report.append(f"{name}: generate() {'==' if greedy['hf_generate'] == tokens else '!='} the full-sequence loop")
    except Exception as e:  # noqa: BLE001 - reported, the full-sequence loop is the reference
        report.append(f"{name}: generate() FAILED {type(e).__name__}: {str(e).splitlines()[0][:200]}")
    with torch.no_grad():
        enc = model.get_encoder()(**enc_kwargs(spec)).last_hidden_state
    enc_np = enc.numpy().copy()
    enc_arr = spec["enc_in"][1]
    seq = list(spec["start"]) + tokens
    for exporter in ("dynamo", "legacy"):
        dynamo = exporter == "dynamo"
        enc_dir = os.path.join(out, name, f"{name}_encoder_{exporter}")
        dec_dir = os.path.join(out, name, f"{name}_decoder_{exporter}")
        try:
            enc_name = spec["enc_in"][0]
            dyn = {} if name == "whisper" else {enc_name: {1: "encoder_sequence"}}
            wrap = WhisperEncoder(model) if name == "whisper" else T5Encoder(model)
            ed.export(wrap, (torch.tensor(enc_arr),), os.path.join(enc_dir, "model.onnx"), dynamo, [enc_name],
                      ["last_hidden_state"], dyn, dim_max=47)
            es = ed.ort_session(os.path.join(enc_dir, "model.onnx"))
            eres = es.run(None, {enc_name: enc_arr})
            save_set(enc_dir, 0, [enc_arr], eres)
            enc_err = float(np.abs(eres[0] - enc_np).max())

            ins, outs = ed.step_names(layers, ("input_ids", "encoder_hidden_states"))
            dyn = {"input_ids": {1: "sequence"}, "logits": {1: "sequence"}}
            if name == "t5":  # text of any length: the encoder's output length is symbolic too
                dyn["encoder_hidden_states"] = {1: "encoder_sequence"}
            for i in range(layers):
                for kind in ("key", "value"):
                    dyn[f"past_{kind}_{i}"] = {2: "past"}
                    dyn[f"present_{kind}_{i}"] = {2: "past_plus_sequence"}
            past3 = self_cache(model, enc, seq[:3])
            ex = (torch.tensor([seq[3:5]]), enc, *[torch.tensor(p) for p in past3])
            ed.export(DecoderStep(model, layers), ex, os.path.join(dec_dir, "model.onnx"), dynamo, ins, outs, dyn,
                      dim_max=47)
            ds = ed.ort_session(os.path.join(dec_dir, "model.onnx"))
            empty = [np.zeros_like(p[:, :, :0]) for p in past3]
            sets = [(seq[:2], empty), (seq[3:5], past3), ([seq[5]], self_cache(model, enc, seq[:5]))]
            errs = []
            for k, (ids, past) in enumerate(sets):
                arrays = [np.array([ids], dtype=np.int64), eres[0], *past]
                res = ds.run(None, dict(zip(ins, arrays)))
                save_set(dec_dir, k, arrays, res)
                p = past[0].shape[2]
                with torch.no_grad():
                    full = model(encoder_outputs=(enc,), decoder_input_ids=torch.tensor([seq[:p + len(ids)]]),
                                 use_cache=False).logits
                errs.append(float(np.abs(res[0][0] - full[0, p:].numpy()).max()))
            # onnxruntime's loop: encoder once, start ids one at a time from an empty cache, then greedy.
            past, cur, toks = empty, list(spec["start"]), []
            for pos in range(len(spec["start"]) + NEW_TOKENS - 1):
                res = ds.run(None, dict(zip(ins, [np.array([[cur[pos]]], dtype=np.int64), eres[0], *past])))
                past = res[1:]
                if pos >= len(spec["start"]) - 1:
                    cur.append(int(res[0][0, -1].argmax()))
                    toks.append(cur[-1])
            greedy[f"onnxruntime_{exporter}"] = toks
            report.append(f"{name}_{exporter}: ok, encoder ort vs torch {enc_err:.2e}, decoder ort vs the full "
                          f"sequence's rows {max(errs):.2e}, ort loop {'==' if toks == tokens else '!='} greedy")
        except Exception as e:  # noqa: BLE001 - every failure is reported, none hidden
            report.append(f"{name}_{exporter}: FAILED {type(e).__name__}: {str(e).splitlines()[0][:200]}")
            traceback.print_exc()
    # Other encoder inputs (T5: shorter texts): transformers' greedy tokens for each, for programs
    # compiled for a range of encoder lengths.
    greedy["other_inputs"] = []
    for arr in spec.get("other_enc_in", []):
        other = dict(spec, enc_in=(spec["enc_in"][0], arr))
        greedy["other_inputs"].append({"encoder_input": arr.tolist(), "greedy_full_sequence": greedy_full(model, other)})
    with open(os.path.join(out, name, "greedy.json"), "w") as f:
        json.dump(greedy, f)
        f.write("\n")


def main():
    out = sys.argv[1]
    want = sys.argv[2:] or list(MODELS)
    report = [f"torch {torch.__version__}, transformers {transformers.__version__}, onnx {onnx.__version__}, "
              f"onnxruntime {ort.__version__}"]
    for name in want:
        os.makedirs(os.path.join(out, name), exist_ok=True)
        try:
            do_model(out, name, report)
        except Exception as e:  # noqa: BLE001
            report.append(f"{name}: FAILED {type(e).__name__}: {e}")
            traceback.print_exc()
    save_report(os.path.join(out, "export_report.txt"), report)


if __name__ == "__main__":
    main()
