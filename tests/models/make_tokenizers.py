#!/usr/bin/env python3
"""Builds the tokenizer files vkc's tokenizer tests read, the ids the reference libraries give for a
multilingual text set, and two tiny decoders whose vocabularies are those tokenizers' (for text in,
text out: `vkc run --prompt`, ExecuTorch's llama_main).

Run on a machine with the `tokenizers`, `sentencepiece`, `transformers`, torch, onnx and onnxruntime
Python libraries (the GPU machine has them); the outputs are committed under tests/models/tokenizers/.

  <name>/tokenizer.json (+ tokenizer_config.json)   HF byte-level BPE trained here with the
        `tokenizers` library, in the forms real models ship: gpt2 (ByteLevel pre-tokenizer with its
        regex), llama3 (Split on Llama-3's pattern + ByteLevel without regex, ignore_merges), qwen2
        (NFC normalizer, Qwen2's pattern), llama2_hf (SentencePiece-style BPE with byte fallback, as
        transformers converts a Llama-2 SentencePiece model)
  <name>/tokenizer.model    SentencePiece models trained here: sp_bpe (byte fallback, Llama-2 style),
        sp_unigram (T5 style)
  expected.json             {name: {file, vocab_size, cases: [{text, ids, decoded}]}}: the library's
        encode(text) without added BOS/EOS (special tokens written in the text recognised as the
        library does) and decode(ids)
  llama3_step/, qwen2_step/ decode-step exports (torch.onnx, TorchScript exporter) of a Llama and a
        Qwen2 with the llama3 / qwen2 tokenizer's vocabulary; e2e.json: the prompt's text and ids,
        transformers' greedy tokens and their text

Usage: python3 make_tokenizers.py OUT_DIR
"""
import codecs
import json
import os
import sys
import this  # noqa: F401 - its text is part of the training corpus

import numpy as np
import sentencepiece as spm
import tokenizers
import torch
import transformers
from tokenizers import Regex, decoders, models, normalizers, pre_tokenizers, trainers

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import export_decoders as ed  # noqa: E402

TEXTS = [
    "Hello, world! How's it going?",
    "I'm sure they'll say we've done it, didn't we? YOU'LL SEE, it's THE END'S END",
    "  leading spaces and   runs of   whitespace\n\n\tend  ",
    "Ünïcödé àccents: café, naïve, Straße, ŁÓDŹ, résumé, Ångström",
    "Decomposed accents: cafe\u0301 and n\u0303 (NFC folds them)",
    "日本語のテキストと中文文本，还有한국어。",
    "Emoji: 😀🎉👍🏽 family: 👨\u200d👩\u200d👧 flags 🇫🇷",
    "Numbers 1234567 and 3.14159, dates 2026-12-04, 10,000,000",
    "code: def f(x):\n    return x**2  # comment\n",
    "\r\nWindows\r\nlines\r\n",
    "Arabic مرحبا بالعالم and Hindi नमस्ते दुनिया and Russian Привет мир",
    "<|im_start|>user\nHi there<|im_end|>\n<|im_start|>assistant\n",
    "before<|endoftext|>after <|begin_of_text|>x<|eot_id|>",
    "a",
    " ",
    "tab\tand\u00a0nbsp and zero\u200bwidth",
    "The quick brown fox jumps over the lazy dog. THE QUICK BROWN FOX!!! ???",
]

LLAMA3_PATTERN = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*"
                  r"|\s*[\r\n]+|\s+(?!\S)|\s+")
QWEN2_PATTERN = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*"
                 r"|\s*[\r\n]+|\s+(?!\S)|\s+")

LLAMA3_TEMPLATE = ("{{ bos_token }}{% for message in messages %}{{ '<|start_header_id|>' + message['role'] + "
                   "'<|end_header_id|>\n\n' + message['content'] | trim + '<|eot_id|>' }}{% endfor %}"
                   "{% if add_generation_prompt %}{{ '<|start_header_id|>assistant<|end_header_id|>\n\n' }}{% endif %}")
CHATML_TEMPLATE = ("{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\n' + message['content'] + "
                   "'<|im_end|>' + '\n' }}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}"
                   "{% endif %}")


def corpus():
    zen = codecs.decode(this.s, "rot13")
    words = ["the", "of", "and", "token", "café", "naïve", "東京", "中文", "世界", "привет", "مرحبا", "नमस्ते",
             "😀", "hello", "world", "1234", "3.14", "def", "return", "    ", "\n", "Straße", "über"]
    rng = np.random.default_rng(0)
    lines = [zen] * 3 + TEXTS * 4
    for _ in range(400):
        lines.append(" ".join(rng.choice(words, size=12)))
    return lines


def byte_level_bpe(pattern, specials, vocab_size, nfc=False, ignore_merges=False):
    tok = tokenizers.Tokenizer(models.BPE(ignore_merges=ignore_merges))
    if nfc:
        tok.normalizer = normalizers.NFC()
    if pattern is None:  # GPT-2: ByteLevel's own regex
        tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    else:
        tok.pre_tokenizer = pre_tokenizers.Sequence([
            pre_tokenizers.Split(Regex(pattern), behavior="isolated", invert=False),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=specials, show_progress=False,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.train_from_iterator(corpus(), trainer)
    return tok


def write_hf(out, name, tok, config):
    d = os.path.join(out, name)
    os.makedirs(d, exist_ok=True)
    tok.save(os.path.join(d, "tokenizer.json"))
    if config:
        with open(os.path.join(d, "tokenizer_config.json"), "w") as f:
            json.dump(config, f, indent=1, ensure_ascii=False)
    return os.path.join(d, "tokenizer.json")


def train_sp(out, name, model_type, vocab_size, **kw):
    d = os.path.join(out, name)
    os.makedirs(d, exist_ok=True)
    text = os.path.join(d, "corpus.txt")
    with open(text, "w") as f:
        f.write("\n".join(line.replace("\n", " ") for line in corpus()))
    spm.SentencePieceTrainer.train(input=text, model_prefix=os.path.join(d, "tokenizer"), model_type=model_type,
                                   vocab_size=vocab_size, character_coverage=1.0, **kw)
    os.remove(text)
    os.remove(os.path.join(d, "tokenizer.vocab"))
    return os.path.join(d, "tokenizer.model")


def llama2_hf(out, sp_model):
    """The tokenizer.json of Llama-2 / TinyLlama on the hub, made from a SentencePiece BPE model: the
    pieces and merges transformers' converter extracts, with the same normalizer and decoder."""
    sp = spm.SentencePieceProcessor(model_file=sp_model)
    vocab = {sp.id_to_piece(i): i for i in range(sp.get_piece_size())}
    # As transformers' SentencePieceExtractor: every split of a piece into two pieces is a merge,
    # ranked by the merged piece's id, then by the parts' ids.
    merges = []
    for piece, rank in vocab.items():
        for k in range(1, len(piece)):
            a, b = piece[:k], piece[k:]
            if a in vocab and b in vocab:
                merges.append((rank, vocab[a], vocab[b], a, b))
    merges = [(a, b) for _, _, _, a, b in sorted(merges)]
    tok = tokenizers.Tokenizer(models.BPE(vocab, merges, unk_token="<unk>", byte_fallback=True, fuse_unk=True))
    tok.normalizer = normalizers.Sequence([normalizers.Prepend("\u2581"), normalizers.Replace(" ", "\u2581")])
    tok.decoder = decoders.Sequence([decoders.Replace("\u2581", " "), decoders.ByteFallback(), decoders.Fuse(),
                                     decoders.Strip(" ", 1, 0)])
    tok.add_special_tokens([tokenizers.AddedToken(t, special=True, normalized=False) for t in ("<unk>", "<s>", "</s>")])
    return write_hf(out, "llama2_hf", tok, {"bos_token": "<s>", "eos_token": "</s>", "unk_token": "<unk>"})


def cases_hf(path):
    tok = tokenizers.Tokenizer.from_file(path)
    cases = []
    for t in TEXTS:
        ids = tok.encode(t, add_special_tokens=False).ids
        cases.append({"text": t, "ids": ids, "decoded": tok.decode(ids, skip_special_tokens=False)})
    return {"vocab_size": tok.get_vocab_size(with_added_tokens=True), "cases": cases}


def cases_sp(path):
    sp = spm.SentencePieceProcessor(model_file=path)
    cases = []
    for t in TEXTS:
        ids = sp.encode(t)
        cases.append({"text": t, "ids": ids, "decoded": sp.decode(ids)})
    return {"vocab_size": sp.get_piece_size(), "cases": cases}


def e2e(out, name, tok_path, cfg, prompt_text, new_tokens=12):
    """A decode-step export of a model with the tokenizer's vocabulary, and transformers' greedy text."""
    tok = tokenizers.Tokenizer.from_file(tok_path)
    ids = tok.encode(prompt_text, add_special_tokens=False).ids
    for scale in (5.0, 8.0, 12.0, 16.0, 24.0):  # the first whose greedy tokens vary (6 distinct of 12)
        model = ed.make_model(cfg, scale)
        with torch.no_grad():
            gen = model.generate(torch.tensor([ids]), max_new_tokens=new_tokens, min_new_tokens=new_tokens,
                                 do_sample=False, eos_token_id=None, pad_token_id=0)
        tokens = gen[0, len(ids):].tolist()
        if len(set(tokens)) >= 6:
            break
    folder = os.path.join(out, name)
    path = os.path.join(folder, "model.onnx")
    in_names, out_names = ed.step_names(cfg.num_hidden_layers)
    dyn = {"input_ids": {1: "sequence"}, "position_ids": {1: "sequence"}}
    for i in range(cfg.num_hidden_layers):
        for kind in ("key", "value"):
            dyn[f"past_{kind}_{i}"] = {2: "past"}
            dyn[f"present_{kind}_{i}"] = {2: "total"}
    past = ed.prompt_cache(model, cfg, ids[:3])
    args = (torch.tensor([ids[3:5]]), torch.tensor([[3, 4]]), *[torch.tensor(p) for p in past])
    ed.export(ed.Step(model), args, path, False, in_names, out_names, dyn)
    info = {"prompt": prompt_text, "prompt_ids": ids, "hf_generate": tokens,
            "text": tok.decode(tokens, skip_special_tokens=False), "vocab_size": cfg.vocab_size}
    with open(os.path.join(folder, "e2e.json"), "w") as f:
        json.dump(info, f, indent=1, ensure_ascii=False)
    return info


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    expected, report = {}, [f"tokenizers {tokenizers.__version__}, sentencepiece {spm.__version__}, "
                            f"transformers {transformers.__version__}, torch {torch.__version__}"]

    def add(name, fn, cases_fn):
        try:
            path = fn()
            expected[name] = {"file": os.path.relpath(path, out), **cases_fn(path)}
            report.append(f"{name}: ok, vocab {expected[name]['vocab_size']}")
        except Exception as e:  # noqa: BLE001 - every failure is reported, none hidden
            import traceback
            traceback.print_exc()
            report.append(f"{name}: FAILED {type(e).__name__}: {str(e).splitlines()[0][:200]}")

    add("gpt2", lambda: write_hf(out, "gpt2", byte_level_bpe(None, ["<|endoftext|>"], 420),
                                 {"bos_token": "<|endoftext|>", "eos_token": "<|endoftext|>"}), cases_hf)
    l3_specials = ["<|begin_of_text|>", "<|end_of_text|>", "<|start_header_id|>", "<|end_header_id|>", "<|eot_id|>"]
    add("llama3", lambda: write_hf(out, "llama3", byte_level_bpe(LLAMA3_PATTERN, l3_specials, 480, ignore_merges=True),
                                   {"bos_token": "<|begin_of_text|>", "eos_token": "<|eot_id|>",
                                    "chat_template": LLAMA3_TEMPLATE}), cases_hf)
    add("qwen2", lambda: write_hf(out, "qwen2", byte_level_bpe(QWEN2_PATTERN, ["<|endoftext|>", "<|im_start|>",
                                                                             "<|im_end|>"], 460, nfc=True),
                                  {"bos_token": None, "eos_token": "<|im_end|>", "pad_token": "<|endoftext|>",
                                   "chat_template": CHATML_TEMPLATE}), cases_hf)
    add("sp_bpe", lambda: train_sp(out, "sp_bpe", "bpe", 700, byte_fallback=True, split_digits=True,
                                   allow_whitespace_only_pieces=True, remove_extra_whitespaces=False,
                                   normalization_rule_name="identity"), cases_sp)
    add("sp_unigram", lambda: train_sp(out, "sp_unigram", "unigram", 300), cases_sp)
    if "sp_bpe" in expected:
        add("llama2_hf", lambda: llama2_hf(out, os.path.join(out, "sp_bpe", "tokenizer.model")), cases_hf)
    with open(os.path.join(out, "expected.json"), "w") as f:
        json.dump(expected, f, indent=1, ensure_ascii=False)

    for name, tok_name, make_cfg, prompt in (
            ("llama3_step", "llama3", lambda v: transformers.LlamaConfig(
                vocab_size=v, hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
                num_key_value_heads=2, max_position_embeddings=128, tie_word_embeddings=False),
             "The café in 東京 said: hello world"),
            ("qwen2_step", "qwen2", lambda v: transformers.Qwen2Config(
                vocab_size=v, hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4,
                num_key_value_heads=2, max_position_embeddings=128, tie_word_embeddings=True),
             "Привет, 世界! Numbers 42 and emoji 😀")):
        try:
            if tok_name not in expected:
                raise RuntimeError(f"no {tok_name} tokenizer")
            info = e2e(out, name, os.path.join(out, expected[tok_name]["file"]),
                       make_cfg(expected[tok_name]["vocab_size"]), prompt)
            report.append(f"{name}: ok, {len(info['prompt_ids'])} prompt ids -> {info['hf_generate']} "
                          f"{info['text']!r}")
        except Exception as e:  # noqa: BLE001
            import traceback
            traceback.print_exc()
            report.append(f"{name}: FAILED {type(e).__name__}: {str(e).splitlines()[0][:200]}")
    print("\n".join(report))
    with open(os.path.join(out, "report.txt"), "w") as f:
        f.write("\n".join(report) + "\n")


if __name__ == "__main__":
    main()
