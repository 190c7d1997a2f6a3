#!/usr/bin/env bash
# Prefill with a bounded dynamic sequence against the static decode-step program, side by side in
# one run: the same architecture compiled (a) from its decode-step export under --max-seq-len (the
# prompt goes in one token a call) and (b) from its export with a symbolic sequence under
# --max-seq-len --dim sequence=1..S (the prompt goes in calls of up to S tokens; decode steps are
# one token in the same program and cache). Prints prefill and decode tokens/s from
# `vkc run --generate` on the Vulkan backend and, where BIN_DIR has et_runner, from ExecuTorch's
# runtime on the same .pte files, and the (b)/(a) prefill ratio.
#   bench/gpu/prefill.sh BIN_DIR [SHAPES_DIR]
# BIN_DIR: vkc, optionally et_runner (bench/executorch/build.sh), and lib/ (the libraries ldd lists).
# The 1.1B Llama shape runs too, fp16, random weights: its export with a symbolic sequence is
# bench/llm_shapes/tinyllama_1.1b_seq.onnx.xz (graph only), or SHAPES_DIR's (the output of
# `bench/export_llm_shapes.py --sequence DIR tinyllama_1.1b`); SHAPES=0 skips it.
# VKC_B=PATH: a second vkc build runs the same programs after the first (rows "vkc B").
# Lavapipe works (slowly); on an NVIDIA machine unpack Debian's libvulkan1 and glvnd first (bench/README.md).
# PyTorch eager's prefill of the same prompt: bench/gpu/decode.sh's torch rows, in the same device call.
set -euo pipefail
BIN=${1:?usage: prefill.sh BIN_DIR [SHAPES_DIR]}
SHAPES=${2:-${SHAPES:-}}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=carried_env.sh
source "$(dirname "$0")/carried_env.sh"
carried_bench "$BIN" prefill-bench
ET="$BIN/et_runner"
N=${N:-32}

prompt_of() { python3 -c "import sys; n=int(sys.argv[1]); print(','.join(str((7 * i + 3) % 250 + 1) for i in range(n)))" "$1"; }

# RUNS (2): vkc runs each program this many times and reports the run with the fastest prefill
# (on the H200 the first run after a compile ran 3x slower, its clocks still at idle).
RUNS=${RUNS:-2}

printf "%-28s %-8s %14s %14s  %s\n" program runtime "prefill tok/s" "decode tok/s" "first tokens"
declare -A PREFILL
vkc_best() {  # VKC PTE PROMPT -> "prefill decode first-tokens" of the fastest prefill of RUNS runs
  local runs=() i
  for ((i = 0; i < RUNS; ++i)); do runs+=("$("$1" run "$2" --backend vulkan --generate "$N" --prompt-ids "$3" --json)"); done
  python3 -c 'import json, sys
d = max((json.loads(a) for a in sys.argv[1:]), key=lambda d: d["prefill_tokens_per_s"])
print("%.1f %.1f %s" % (d["prefill_tokens_per_s"], d["decode_tokens_per_s"], ",".join(map(str, d["tokens"][:5]))))' "${runs[@]}"
}
run_one() {  # NAME PTE PROMPT
  local name=$1 pte=$2 prompt=$3
  read -r p d t < <(vkc_best "$VKC" "$pte" "$prompt")
  printf "%-28s %-8s %14s %14s  %s\n" "$name" vkc "$p" "$d" "$t"
  PREFILL["$name vkc"]=$p
  if [ -n "${VKC_B:-}" ]; then
    read -r p d t < <(vkc_best "$VKC_B" "$pte" "$prompt")
    printf "%-28s %-8s %14s %14s  %s\n" "$name" "vkc B" "$p" "$d" "$t"
  fi
  if [ -x "$ET" ]; then
    local out
    out=$("$ET" "$pte" --generate "$N" --prompt-ids "$prompt" 2>/dev/null || true)
    p=$(echo "$out" | sed -n 's/^prefill: .*(\([0-9.]*\) tokens\/s); decode.*/\1/p')
    d=$(echo "$out" | sed -n 's/.*decode: .*(\([0-9.]*\) tokens\/s)$/\1/p')
    t=$(echo "$out" | sed -n 's/^tokens: //p' | tr ' ' ',' | cut -d, -f1-5)
    printf "%-28s %-8s %14s %14s  %s\n" "$name" ET "${p:--}" "${d:--}" "${t:-failed}"
    PREFILL["$name ET"]=${p:-0}
  fi
}
ratio() {  # DYN STATIC RUNTIME
  local a=${PREFILL["$1 $3"]:-0} b=${PREFILL["$2 $3"]:-0}
  python3 -c "import sys; a, b = float(sys.argv[1]), float(sys.argv[2]); print('prefill %s: %s / %s = %s' % (sys.argv[3], sys.argv[4], sys.argv[5], '%.2fx' % (a / b) if b > 0 else '-'))" "$a" "$b" "$3" "$1" "$2"
}

# The tiny Llama of the tests (fp32): a 64-token prompt. TINY=0 skips it (a device call that does
# not carry tests/models/decoders, to stay under its size limit).
TINY=${TINY:-1}
if [ "$TINY" != 0 ]; then
  D=$ROOT/tests/models/decoders/llama
  "$VKC" compile "$D/llama_step_dynamo/model.onnx" --max-seq-len 128 -o "$WORK/tiny_step.pte" >/dev/null 2>&1
  "$VKC" compile "$D/llama_dyn_dynamo/model.onnx" --max-seq-len 128 --dim sequence=1..64 -o "$WORK/tiny_dyn.pte" >/dev/null 2>&1
  P=$(prompt_of 64)
  run_one tiny_step "$WORK/tiny_step.pte" "$P"
  run_one tiny_dyn_1..64 "$WORK/tiny_dyn.pte" "$P"
fi

if [ "$SHAPES" != 0 ]; then
  # The 1.1B Llama shape (TinyLlama), fp16, random weights: a 128-token prompt.
  mkdir -p "$WORK/tl" "$WORK/shapes/tinyllama_1.1b_seq"
  xz -dc "$ROOT/bench/llm_shapes/tinyllama_1.1b.onnx.xz" > "$WORK/tl/model.onnx"
  python3 "$ROOT/bench/fill_external_data.py" "$WORK/tl/model.onnx"
  if [ -z "$SHAPES" ]; then
    SHAPES=$WORK/shapes
    xz -dc "$ROOT/bench/llm_shapes/tinyllama_1.1b_seq.onnx.xz" > "$SHAPES/tinyllama_1.1b_seq/model.onnx"
  fi
  python3 "$ROOT/bench/fill_external_data.py" "$SHAPES/tinyllama_1.1b_seq/model.onnx"
  "$VKC" compile "$WORK/tl/model.onnx" --max-seq-len 2048 --force-fp16 -o "$WORK/tl_step.pte" >/dev/null 2>&1
  "$VKC" compile "$SHAPES/tinyllama_1.1b_seq/model.onnx" --max-seq-len 2048 --force-fp16 --dim sequence=1..128 \
    -o "$WORK/tl_dyn.pte" 2>&1 | grep -v "^wrote" || true
  P=$(prompt_of 128)
  run_one 1.1b_fp16_step "$WORK/tl_step.pte" "$P"
  run_one 1.1b_fp16_dyn_1..128 "$WORK/tl_dyn.pte" "$P"
fi
echo
if [ "$TINY" != 0 ]; then
  ratio tiny_dyn_1..64 tiny_step vkc
  [ -x "$ET" ] && ratio tiny_dyn_1..64 tiny_step ET
fi
if [ "$SHAPES" != 0 ]; then
  ratio 1.1b_fp16_dyn_1..128 1.1b_fp16_step vkc
  [ -x "$ET" ] && ratio 1.1b_fp16_dyn_1..128 1.1b_fp16_step ET
fi
