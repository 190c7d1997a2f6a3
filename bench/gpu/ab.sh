#!/usr/bin/env bash
# Two vkc builds side by side on the same programs (a runtime or shader change measured against
# the build before it, in one run): the 1.1B Llama shape's decode-step export (bench/llm_shapes,
# random weights) compiled once by the first build, then decode tokens/s after a PROMPT_LEN-token
# prompt from each build in turn, ROUNDS times (machines are noisy: alternate, compare ratios),
# and each build's slowest kernels in one step (VKC_VULKAN_PROFILE=1, a barrier after each
# dispatch) over the same prompt.
#   bench/gpu/ab.sh BIN_DIR VKC_A VKC_B     BIN_DIR's lib/ (ldd's list) serves both binaries
# PROGRAMS (fp16 int4) picks among fp16 8da4w int4; N (64) tokens; ROUNDS (2); TOP (12) kernels;
# ENV_B="VAR=value ..." runs build B with those variables (the same binary twice: an env switch).
set -euo pipefail
BIN=${1:?usage: ab.sh BIN_DIR VKC_A VKC_B}
A=${2:?usage: ab.sh BIN_DIR VKC_A VKC_B}
B=${3:?usage: ab.sh BIN_DIR VKC_A VKC_B}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=carried_env.sh
source "$(dirname "$0")/carried_env.sh"
carried_bench "$BIN" vkc-ab tl
N=${N:-64}
ROUNDS=${ROUNDS:-2}
PROMPT_LEN=${PROMPT_LEN:-128}
PROMPT=$(python3 -c 'import sys; print(",".join(str((i * 37 + 11) % 250) for i in range(int(sys.argv[1]))))' "$PROMPT_LEN")
if [ ! -f "$WORK/tl/model.onnx.data" ]; then
  xz -dc "$ROOT/bench/llm_shapes/tinyllama_1.1b.onnx.xz" > "$WORK/tl/model.onnx"
  python3 "$ROOT/bench/fill_external_data.py" "$WORK/tl/model.onnx" >&2
fi
declare -A RECIPE=([fp16]="--force-fp16" [8da4w]="--quantize 8da4w-fp16-embedding" [int4]="--quantize int4-weight-only-fp16")
PROGRAMS=${PROGRAMS:-fp16 int4}
for p in $PROGRAMS; do
  # shellcheck disable=SC2086
  "$A" compile "$WORK/tl/model.onnx" --max-seq-len 2048 ${RECIPE[$p]} -o "$WORK/$p.pte" >&2
done
decode() {  # BINARY ENV PROGRAM -> "tokens/s first-tokens"
  # shellcheck disable=SC2086
  env ${2} "$1" run "$WORK/$3.pte" --backend vulkan --generate "$N" --prompt-ids "$PROMPT" --json |
    python3 -c 'import json, sys; d = json.load(sys.stdin); print("%.1f %s" % (d["decode_tokens_per_s"], d["tokens"][:4]))'
}
for p in $PROGRAMS; do
  for r in $(seq "$ROUNDS"); do
    a=$(decode "$A" "" "$p")
    b=$(decode "$B" "${ENV_B:-}" "$p")
    python3 -c 'import sys; a, b = float(sys.argv[2].split()[0]), float(sys.argv[3].split()[0]); print(f"{sys.argv[1]:<6} round {sys.argv[4]}: A {sys.argv[2]}  B {sys.argv[3]}  B/A {b / a:.3f}")' \
      "$p" "$a" "$b" "$r"
  done
done
for p in $PROGRAMS; do
  for side in A B; do
    bin=$A envs=""
    [ $side = B ] && bin=$B envs=${ENV_B:-}
    # shellcheck disable=SC2086
    env VKC_VULKAN_PROFILE=1 $envs "$bin" run "$WORK/$p.pte" --backend vulkan --generate 8 --prompt-ids "$PROMPT" \
      > /dev/null 2> "$WORK/$p.$side.prof"
    python3 "$(dirname "$0")/profile_top.py" "$WORK/$p.$side.prof" "$side $p" "${TOP:-12}" ""
  done
done
