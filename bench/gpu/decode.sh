#!/usr/bin/env bash
# Decode speed of the 1.1B Llama shape (bench/llm_shapes/tinyllama_1.1b, random weights) on an
# NVIDIA GPU, side by side in one run (issue 35's goals):
#   - vkc's fp16, 8da4w-fp16-embedding and int4-weight-only-fp16 programs (`vkc run --backend
#     vulkan --generate`), each with the matrix-vector linears (default) and without them
#     (VKC_VULKAN_GEMV=0: the split-K kernels), prefill of a 128-token prompt as a token a call;
#   - per step: dispatches and barriers, GPU time of the whole step beside the host's wall time
#     (VKC_VULKAN_PROFILE=run), the effective GB/s of the weight reads, the barriers times the
#     device's dependent-dispatch floor (a chain of trivial dispatches timed first), the 3 slowest kernels by
#     share (VKC_VULKAN_PROFILE=1, a barrier after each dispatch), all over the same prompt as the
#     tokens/s figures (mean over its steps: contexts 1 to PROMPT_LEN + 32);
#   - PyTorch (same GPU, fp16): transformers generate() eager, and a decode step with a static
#     cache captured in a CUDA graph; the bandwidth bound (the weights' bytes at the device-copy
#     rate measured here).
#   bench/gpu/decode.sh BIN_DIR     BIN_DIR holds vkc, optionally et_runner (bench/executorch/build.sh:
#                                   ExecuTorch's runtime on the same programs), and lib/*.so (ldd's list)
#   - prefill of the same prompt in one call (the 1.1B shape's export with a symbolic sequence,
#     fp16, `--dim sequence=1..PROMPT_LEN`), beside PyTorch eager's; last, the issue's goals
#     checked from the rows (met / NOT met).
# MODEL=FILE.onnx compiles another decode-step export instead (the PyTorch rows keep the 1.1B
# shape; SEQ_MODEL=FILE.onnx its export with a symbolic sequence, for the prefill row); N (128)
# tokens are generated after a PROMPT_LEN (128) token prompt; TORCH=0 skips PyTorch, PREFILL=0 the
# prefill row; TOP (3) kernels are listed per profile; PROGRAMS picks among fp16 8da4w int4
# fp16-base; SPLITK=0 skips the rows without the matrix-vector linears; HOST_LOOP=0 the rows of the
# steps through the host (the vkc rows decode as a loop on the GPU, runtime/generate.h; these with
# VKC_VULKAN_DECODE_LOOP=0).
# The machine needs a Vulkan loader: unpack Debian's libvulkan1 and glvnd first (bench/README.md).
set -euo pipefail
BIN=${1:?usage: decode.sh BIN_DIR}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=carried_env.sh
source "$(dirname "$0")/carried_env.sh"
carried_bench "$BIN" vkc-decode tl
N=${N:-128}
PROMPT_LEN=${PROMPT_LEN:-128}
PROMPT=$(python3 -c 'import sys; print(",".join(str((i * 37 + 11) % 250) for i in range(int(sys.argv[1]))))' "$PROMPT_LEN")
results=$WORK/results.txt
: > "$results"

MODEL=${MODEL:-$WORK/tl/model.onnx}
if [ "$MODEL" = "$WORK/tl/model.onnx" ] && [ ! -f "$WORK/tl/model.onnx.data" ]; then
  xz -dc "$ROOT/bench/llm_shapes/tinyllama_1.1b.onnx.xz" > "$WORK/tl/model.onnx"
  python3 "$ROOT/bench/fill_external_data.py" "$WORK/tl/model.onnx" >&2
fi
# fp16-base: the fp16 program as the compiler made it before fold-data-movement, run below with
# the split-K linears only (the round's starting point, in the same run).
declare -A RECIPE=([fp16]="--force-fp16" [8da4w]="--quantize 8da4w-fp16-embedding" [int4]="--quantize int4-weight-only-fp16"
                   [fp16-base]="--force-fp16 --skip-pass fold-data-movement")
PROGRAMS=${PROGRAMS:-fp16 8da4w int4 fp16-base}
for p in $PROGRAMS; do
  # shellcheck disable=SC2086
  "$VKC" compile "$MODEL" --max-seq-len 2048 ${RECIPE[$p]} -o "$WORK/$p.pte" >&2
done

# The floor under each barrier-separated dispatch on this device: chains of 100 and 400 trivial
# Sin/Cos dispatches, each reading the one before (make_chain.py, as dispatch_cost.sh), timed as the steps are
# (VKC_VULKAN_PROFILE=run); the slope is one dependent dispatch's least cost, and a step's barriers
# times it the part of the step no kernel can win back (printed per program below).
chain_ms() {
  python3 "$(dirname "$0")/make_chain.py" "$WORK/chain$1.onnx" unary "$1" 64
  "$VKC" compile "$WORK/chain$1.onnx" -o "$WORK/chain$1.pte" > /dev/null 2>&1
  VKC_VULKAN_PROFILE=run "$VKC" run "$WORK/chain$1.pte" --backend vulkan --random 1 --repeat 300 2>&1 > /dev/null |
    sed -n 's/.*chained; \([0-9.]*\) ms GPU time.*/\1/p' | tail -1
}
FLOOR_US=$(python3 -c 'import sys; print("%.2f" % ((float(sys.argv[2]) - float(sys.argv[1])) / 300 * 1e3))' \
  "$(chain_ms 100 || true)" "$(chain_ms 400 || true)" 2>/dev/null || echo 0)
echo "dependent dispatch floor ${FLOOR_US} us (chains of 100 and 400 Sin/Cos dispatches, a barrier between each)" |
  tee -a "$results"

# Bytes a decode step reads from its constants: the program's constant bytes less the embedding
# table's rows it does not read (one row a token), approximated by the whole program size.
weights_gb() { python3 -c 'import os,sys; print(os.path.getsize(sys.argv[1]) / 1e9)' "$1"; }

for p in $PROGRAMS; do
  for gemv in 1 0; do
    [ "$p" = fp16-base ] && [ $gemv = 1 ] && continue
    [ "${SPLITK:-1}" = 0 ] && [ $gemv = 0 ] && [ "$p" != fp16-base ] && continue
    name="vkc $p$([ $gemv = 0 ] && echo ' split-K' || true)"
    VKC_VULKAN_GEMV=$gemv "$VKC" run "$WORK/$p.pte" --backend vulkan --generate "$N" --prompt-ids "$PROMPT" --json \
      > "$WORK/$p-$gemv.json"
    # (the same prompt as the tok/s run: the step's figures at the contexts its tokens see)
    # (steps through the host, VKC_VULKAN_DECODE_LOOP=0, one profile line a step program; then the
    # decode loop's own line: its GPU time a step beside the host's wall time a step)
    VKC_VULKAN_GEMV=$gemv VKC_VULKAN_DECODE_LOOP=0 VKC_VULKAN_PROFILE=run "$VKC" run "$WORK/$p.pte" --backend vulkan \
      --generate 32 --prompt-ids "$PROMPT" > /dev/null 2> "$WORK/$p-$gemv.run"
    VKC_VULKAN_GEMV=$gemv VKC_VULKAN_PROFILE=run "$VKC" run "$WORK/$p.pte" --backend vulkan --generate 32 \
      --prompt-ids "$PROMPT" > /dev/null 2>> "$WORK/$p-$gemv.run"
    python3 - "$WORK/$p-$gemv.json" "$WORK/$p-$gemv.run" "$name" "$(weights_gb "$WORK/$p.pte")" "$FLOOR_US" <<'PY' | tee -a "$results"
import json, re, sys
d = json.load(open(sys.argv[1]))
text = open(sys.argv[2]).read()
loop = re.search(r"vulkan decode loop profile: (\d+) step\(s\) in batches of (\d+) \((\d+) dispatches, ([\d.]+) barriers, ([\d.]+) chained a step\); ([\d.]+) ms GPU time, ([\d.]+) ms host wall", text)
text = text[:text.find("vulkan decode loop profile")] if loop else text
runs = [l for l in text.splitlines() if l.startswith("vulkan run profile:")]
# The decode-step instance runs most: take the line with the most runs.
best = max(runs, key=lambda l: int(re.search(r"mean of (\d+)", l).group(1))) if runs else ""
m = re.search(r"(\d+) dispatch\(es\), (\d+) barrier\(s\), \d+ chained; ([\d.]+) ms GPU time, ([\d.]+) ms host wall \(submit to fence\), ([\d.]+) ms execute", best)
gb = float(sys.argv[4])
line = f"{sys.argv[3]:<22} prefill {d['prefill_tokens_per_s']:8.1f} tok/s  decode {d['decode_tokens_per_s']:7.1f} tok/s"
if m:
    gpu_ms = float(m.group(3))
    line += (f"  | step: {m.group(1)} dispatches, {m.group(2)} barriers, GPU {gpu_ms:.2f} ms, submit-to-fence"
             f" {float(m.group(4)):.2f} ms, execute {float(m.group(5)):.2f} ms, {gb / gpu_ms * 1e3:.0f} GB/s of {gb:.2f} GB")
    floor_ms = int(m.group(2)) * float(sys.argv[5]) / 1e3
    if floor_ms > 0:
        line += f", barriers x floor {floor_ms:.2f} ms ({100 * floor_ms / gpu_ms:.0f}%)"
if loop:
    line += (f"  | loop: GPU {float(loop.group(6)):.3f} ms, wall {float(loop.group(7)):.3f} ms a step,"
             f" {float(loop.group(4)):.0f} barriers and {float(loop.group(5)):.0f} chained dispatches a step")
print(line + f"  tokens {d['tokens'][:4]}")
PY
    # The same steps with a round trip through the host each (the decode loop off: VKC_VULKAN_DECODE_LOOP=0).
    if [ "${HOST_LOOP:-1}" = 1 ] && [ $gemv = 1 ]; then
      VKC_VULKAN_DECODE_LOOP=0 "$VKC" run "$WORK/$p.pte" --backend vulkan --generate "$N" --prompt-ids "$PROMPT" --json |
        python3 -c 'import json, sys; d = json.load(sys.stdin); print("%-22s decode %7.1f tok/s  tokens %s" % (sys.argv[1], d["decode_tokens_per_s"], d["tokens"][:4]))' \
          "vkc $p host loop" | tee -a "$results"
    fi
  done
  # ExecuTorch's runtime on the same program, where BIN_DIR has et_runner (bench/executorch/build.sh).
  if [ -x "$BIN/et_runner" ] && [ "$p" != fp16-base ]; then
    out=$("$BIN/et_runner" "$WORK/$p.pte" --generate "$N" --prompt-ids "$PROMPT" 2>/dev/null || true)
    d=$(echo "$out" | sed -n 's/.*decode: .*(\([0-9.]*\) tokens\/s)$/\1/p')
    t=$(echo "$out" | sed -n 's/^tokens: //p' | tr ' ' ',' | cut -d, -f1-4)
    printf "%-22s decode %7s tok/s  tokens [%s]\n" "ExecuTorch $p" "${d:--}" "${t:-failed}" | tee -a "$results"
  fi
  [ "$p" = fp16-base ] && continue
  VKC_VULKAN_PROFILE=1 "$VKC" run "$WORK/$p.pte" --backend vulkan --generate 8 --prompt-ids "$PROMPT" > /dev/null \
    2> "$WORK/$p.prof"
  python3 "$(dirname "$0")/profile_top.py" "$WORK/$p.prof" "$p" "${TOP:-3}" | tee -a "$results"
done

# Prefill of the same prompt in one call (the issue's prefill goal, against PyTorch eager's below):
# the 1.1B shape's export with a symbolic sequence (bench/llm_shapes/tinyllama_1.1b_seq.onnx.xz,
# fp16), compiled with --dim sequence=1..PROMPT_LEN and run RUNS (2) times, the fastest prefill
# kept (the first run after a compile can find the GPU at idle clocks: the H200's ran 3x slower).
# With MODEL set, SEQ_MODEL names its export with a symbolic sequence; PREFILL=0 skips the row.
SEQ_MODEL=${SEQ_MODEL:-}
if [ -z "$SEQ_MODEL" ] && [ "$MODEL" = "$WORK/tl/model.onnx" ]; then
  SEQ_MODEL=$WORK/tl_seq/model.onnx
  if [ "${PREFILL:-1}" = 1 ] && [ ! -f "$WORK/tl_seq/model.onnx.data" ]; then
    mkdir -p "$WORK/tl_seq"
    xz -dc "$ROOT/bench/llm_shapes/tinyllama_1.1b_seq.onnx.xz" > "$SEQ_MODEL"
    python3 "$ROOT/bench/fill_external_data.py" "$SEQ_MODEL" >&2
  fi
fi
if [ "${PREFILL:-1}" = 1 ] && [ -n "$SEQ_MODEL" ]; then
  "$VKC" compile "$SEQ_MODEL" --max-seq-len 2048 --force-fp16 --dim "sequence=1..$PROMPT_LEN" -o "$WORK/fp16-seq.pte" >&2
  for r in $(seq "${RUNS:-2}"); do
    "$VKC" run "$WORK/fp16-seq.pte" --backend vulkan --generate "$N" --prompt-ids "$PROMPT" --json > "$WORK/fp16-seq-$r.json"
  done
  python3 - "vkc fp16 1..$PROMPT_LEN" "$WORK"/fp16-seq-*.json <<'PY' | tee -a "$results"
import json, sys
d = max((json.load(open(f)) for f in sys.argv[2:]), key=lambda d: d["prefill_tokens_per_s"])
print(f"{sys.argv[1]:<22} prefill {d['prefill_tokens_per_s']:8.1f} tok/s  decode {d['decode_tokens_per_s']:7.1f} tok/s"
      f"  (the fastest prefill of {len(sys.argv) - 2} runs; the prompt in one call)  tokens {d['tokens'][:4]}")
PY
fi

if [ "${TORCH:-1}" = 1 ]; then
echo "== PyTorch, same GPU, fp16 (transformers generate eager; static cache + CUDA graph decode step)"
python3 - "$N" <<'PY' | tee -a "$results"
import sys, time, torch, transformers
n = int(sys.argv[1])
cfg = transformers.LlamaConfig(vocab_size=32000, hidden_size=2048, intermediate_size=5632, num_hidden_layers=22,
                               num_attention_heads=32, num_key_value_heads=4, max_position_embeddings=2048)
torch.manual_seed(0)
m = transformers.AutoModelForCausalLM.from_config(cfg, torch_dtype=torch.float16).cuda().eval()
weight_bytes = sum(p.numel() * p.element_size() for p in m.parameters()) - m.model.embed_tokens.weight.numel() * 2
prompt = torch.tensor([[(i * 37 + 11) % 250 for i in range(128)]], device="cuda")
# Bandwidth bound: the weights a step reads at the rate of a large device copy.
a = torch.empty(1 << 30, dtype=torch.uint8, device="cuda"); b = torch.empty_like(a)
for _ in range(3): b.copy_(a)
torch.cuda.synchronize(); t = time.perf_counter()
for _ in range(10): b.copy_(a)
torch.cuda.synchronize(); bw = 2 * 10 * a.numel() / (time.perf_counter() - t)
del a, b
print(f"{'bandwidth bound':<22} decode {bw / weight_bytes:7.1f} tok/s  ({weight_bytes / 1e9:.2f} GB of weights a step at {bw / 1e12:.2f} TB/s)")
with torch.no_grad():
    def gen(k):
        torch.cuda.synchronize(); t = time.perf_counter()
        m.generate(prompt, max_new_tokens=k, min_new_tokens=k, do_sample=False, pad_token_id=0)
        torch.cuda.synchronize(); return time.perf_counter() - t
    gen(4)
    t1 = min(gen(1) for _ in range(3)); tn = min(gen(n) for _ in range(2))
    print(f"{'torch eager':<22} prefill {prompt.shape[1] / t1:8.1f} tok/s  decode {(n - 1) / (tn - t1):7.1f} tok/s")
    try:
        from transformers import StaticCache
        try:
            cache = StaticCache(config=cfg, max_cache_len=prompt.shape[1] + n + 8)
        except TypeError:
            cache = StaticCache(config=cfg, max_batch_size=1, max_cache_len=prompt.shape[1] + n + 8, device="cuda",
                                dtype=torch.float16)
        L = prompt.shape[1]
        out = m(input_ids=prompt, past_key_values=cache, cache_position=torch.arange(L, device="cuda"), use_cache=True)
        tok = out.logits[:, -1:].argmax(-1)
        pos = torch.tensor([L], device="cuda")
        step = lambda: m(input_ids=tok, past_key_values=cache, cache_position=pos, use_cache=True).logits
        s = torch.cuda.Stream(); s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            for _ in range(3): step()
        torch.cuda.current_stream().wait_stream(s)
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            logits = step()
        torch.cuda.synchronize(); t = time.perf_counter()
        for _ in range(n - 1):
            g.replay()
            tok.copy_(logits[:, -1:].argmax(-1))
            pos.add_(1)
        torch.cuda.synchronize(); dt = time.perf_counter() - t
        print(f"{'torch CUDA graph':<22} decode {(n - 1) / dt:7.1f} tok/s  (static cache, one decode step replayed)")
    except Exception as e:  # the anchor is reported, never silently left out
        print(f"{'torch CUDA graph':<22} failed: {type(e).__name__}: {str(e).splitlines()[0][:200]}")
PY
fi
echo "== summary"
cat "$results"
# The issue's goals, from the rows above ("-" where a row is missing).
python3 - "$results" <<'PY'
import re, sys
rows = {}
for line in open(sys.argv[1]):
    m = re.match(r"(.{22}) (?:prefill +([\d.]+) tok/s +)?decode +([\d.]+) tok/s", line)
    if m:
        rows[m.group(1).strip()] = (float(m.group(2)) if m.group(2) else None, float(m.group(3)))
def decode(name): return rows[name][1] if name in rows else None
def prefill(name): return rows[name][0] if name in rows else None
def verdict(ok): return "-" if ok is None else "met" if ok else "NOT met"
fp16, graph, bound = decode("vkc fp16"), decode("torch CUDA graph"), decode("bandwidth bound")
print("== goals (issue 35)")
if fp16 is not None:
    extra = "".join([f", {fp16 / graph:.2f}x PyTorch's CUDA graph" if graph else "",
                     f", {100 * fp16 / bound:.1f}% of the bandwidth bound" if bound else ""])
    print(f"fp16 decode >= 400 tok/s: {fp16:.1f}{extra}: {verdict(fp16 >= 400)}")
for p in ("int4", "8da4w"):
    q = decode(f"vkc {p}")
    if q is not None and fp16:
        print(f"{p} decode >= 1.6x fp16: {q:.1f} = {q / fp16:.3f}x: {verdict(q / fp16 >= 1.6)}")
seq = next((prefill(k) for k in rows if k.startswith("vkc fp16 1..")), None)
eager = prefill("torch eager")
if seq is not None and eager is not None:
    print(f"prefill >= PyTorch eager's: {seq:.1f} against {eager:.1f} tok/s ({seq / eager:.2f}x): {verdict(seq >= eager)}")
PY
