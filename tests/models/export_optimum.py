#!/usr/bin/env python3
"""Exports a tiny random-weight T5-shaped model with optimum (huggingface/optimum-onnx's
main_export, task text2text-generation-with-past), the form many hub encoder-decoders ship in:
encoder_model.onnx (input_ids, attention_mask), decoder_model.onnx, decoder_with_past_model.onnx and
decoder_model_merged.onnx (If(use_cache_branch) over the two; the cross-attention keys and values
passed between calls as past_key_values.i.encoder.* inputs and present.i.encoder.* outputs).

Run on the GPU machine with optimum and optimum-onnx on PYTHONPATH (their sources, from their
repositories: neither is installed there). optimum-onnx pins transformers < 4.58; with transformers
5.x its patched SDPA mask function takes an older signature, so this script registers transformers'
own mask function in its place (the export is otherwise optimum's). Writes OUT_DIR/t5_optimum/
(the four graphs) and OUT_DIR/t5_optimum/greedy.json: the decoder start ids and, for encoder texts of
several lengths, the ids a greedy loop of the full transformers model (no cache, argmax of the
last row) picks, and those of an onnxruntime loop over encoder_model and decoder_model_merged.

Usage: PYTHONPATH=OPTIMUM_SRC:OPTIMUM_ONNX_SRC python3 export_optimum.py OUT_DIR
"""
import json
import os
import shutil
import sys
import tempfile

import numpy as np
import onnxruntime as ort
import torch
import transformers

import export_encoder_decoder as eed


def ort_greedy(folder, ids, start, n):
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    enc = ort.InferenceSession(os.path.join(folder, "encoder_model.onnx"), so)
    dec = ort.InferenceSession(os.path.join(folder, "decoder_model_merged.onnx"), so)
    mask = np.ones_like(ids)
    hidden = enc.run(None, {"input_ids": ids, "attention_mask": mask})[0]
    names = [i.name for i in dec.get_inputs()]
    past = {}
    for i in dec.get_inputs():
        if i.name.startswith("past_key_values."):
            shape = [1, i.shape[1], 0 if "decoder" in i.name else hidden.shape[1], i.shape[3]]
            past[i.name] = np.zeros(shape, np.float32)
    seq, toks = list(start), []
    for pos in range(len(start) + n - 1):
        feeds = {"encoder_attention_mask": mask, "input_ids": np.array([[seq[pos]]], np.int64),
                 "encoder_hidden_states": hidden, "use_cache_branch": np.array([pos > 0]), **past}
        out = dec.run(None, {k: v for k, v in feeds.items() if k in names})
        outs = dict(zip([o.name for o in dec.get_outputs()], out))
        for k in past:
            present = outs["present." + k[len("past_key_values."):]]
            if "decoder" in k or pos == 0:
                past[k] = present
        if pos >= len(start) - 1:
            seq.append(int(outs["logits"][0, -1].argmax()))
            toks.append(seq[-1])
    return toks


def main():
    out = os.path.join(sys.argv[1], "t5_optimum")
    import optimum.exporters.onnx as oe
    import optimum.exporters.onnx.model_patcher as mp
    import transformers.masking_utils as mu
    mp.sdpa_mask_without_vmap = mu.sdpa_mask
    spec = eed.t5()
    for scale in (2.0, 4.0, 8.0, 12.0):
        model = eed.make_model(spec, scale)
        tokens = eed.greedy_full(model, spec)
        if len(set(tokens)) >= 4:
            break
    tmp = tempfile.mkdtemp()
    model.save_pretrained(tmp)
    oe.main_export(tmp, output=out, task="text2text-generation-with-past")
    for f in os.listdir(out):
        if not f.endswith(".onnx"):
            os.remove(os.path.join(out, f))
    shutil.rmtree(tmp)
    texts = [spec["enc_in"][1]] + spec["other_enc_in"]
    greedy = {"decoder_start_ids": spec["start"], "layer_init_scale": scale, "optimum_onnx_patch": "sdpa mask",
              "transformers": transformers.__version__, "torch": torch.__version__, "onnxruntime": ort.__version__,
              "inputs": []}
    for ids in texts:
        other = dict(spec, enc_in=(spec["enc_in"][0], ids))
        want = eed.greedy_full(model, other)
        got = ort_greedy(out, ids, spec["start"], len(want))
        greedy["inputs"].append({"input_ids": ids[0].tolist(), "greedy_full_sequence": want, "onnxruntime_merged": got})
        print(f"{ids.shape[1]} encoder tokens: transformers {want}, onnxruntime {'==' if got == want else got}")
    with open(os.path.join(out, "greedy.json"), "w") as f:
        json.dump(greedy, f)
        f.write("\n")


if __name__ == "__main__":
    main()
