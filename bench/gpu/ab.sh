#!/usr/bin/env bash
# Vkc builds side by side on the same programs (a runtime or shader change measured against the
# build before it, in one run): the 1.1B Llama shape's decode-step export (bench/llm_shapes, random
# weights) compiled once by the first build, then decode tokens/s after a PROMPT_LEN-token prompt
# from each build in turn, ROUNDS times (machines are noisy: alternate, compare ratios to the
# first), and each build's slowest kernels in one step (VKC_VULKAN_PROFILE=1, a barrier after each
# dispatch) over the same prompt. SHAPE (tinyllama_1.1b) picks another of bench/llm_shapes
# (llama3.2_1b, qwen3_0.6b, phi4_mini: where the weights' bytes weigh more than at 1.1B).
#   bench/gpu/ab.sh BIN_DIR BUILD_A BUILD_B [BUILD ...]
# BIN_DIR's lib/ (ldd's list) serves every binary. A BUILD is a vkc binary, optionally followed by
# environment settings it runs with, joined by '+': `.vkcbin/vkc+VKC_VULKAN_ATTN_PARTS=8` (the same
# binary twice, one side an env switch). PROGRAMS (fp16 int4) picks among fp16 8da4w int4; N (64)
# tokens; ROUNDS (2); TOP (12) kernels (0: no profiles); ENV_B="VAR=value ..." adds settings to the second build;
# COMPILE_WITH (the first build's binary) compiles the programs every build runs.
set -euo pipefail
BIN=${1:?usage: ab.sh BIN_DIR BUILD_A BUILD_B [BUILD ...]}
shift
[ $# -ge 2 ] || { echo "usage: ab.sh BIN_DIR BUILD_A BUILD_B [BUILD ...]" >&2; exit 2; }
BUILDS=("$@")
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=carried_env.sh
source "$(dirname "$0")/carried_env.sh"
SHAPE=${SHAPE:-tinyllama_1.1b}
[ -f "$ROOT/bench/llm_shapes/$SHAPE.onnx.xz" ] || { echo "ab.sh: no bench/llm_shapes/$SHAPE.onnx.xz" >&2; exit 2; }
carried_bench "$BIN" "vkc-ab/$SHAPE" tl
N=${N:-64}
ROUNDS=${ROUNDS:-2}
PROMPT_LEN=${PROMPT_LEN:-128}
PROMPT=$(python3 -c 'import sys; print(",".join(str((i * 37 + 11) % 250) for i in range(int(sys.argv[1]))))' "$PROMPT_LEN")
LABELS=(A B C D E F G H I J K L)
[ ${#BUILDS[@]} -le ${#LABELS[@]} ] || { echo "ab.sh: at most ${#LABELS[@]} builds" >&2; exit 2; }
binary() { echo "${1%%+*}"; }
settings() {  # BUILD INDEX -> its environment settings, space-separated
  local s=""
  [[ $1 == *+* ]] && s=${1#*+} && s=${s//+/ }
  [ "$2" = 1 ] && s+=" ${ENV_B:-}"
  echo "$s"
}
for i in "${!BUILDS[@]}"; do
  echo "${LABELS[$i]} = $(binary "${BUILDS[$i]}") $(settings "${BUILDS[$i]}" "$i")"
done
if [ ! -f "$WORK/tl/model.onnx.data" ]; then
  xz -dc "$ROOT/bench/llm_shapes/$SHAPE.onnx.xz" > "$WORK/tl/model.onnx"
  python3 "$ROOT/bench/fill_external_data.py" "$WORK/tl/model.onnx" >&2
fi
declare -A RECIPE=([fp16]="--force-fp16" [8da4w]="--quantize 8da4w-fp16-embedding" [int4]="--quantize int4-weight-only-fp16")
PROGRAMS=${PROGRAMS:-fp16 int4}
A=${COMPILE_WITH:-$(binary "${BUILDS[0]}")}
echo "programs compiled by $A"
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
    line=$(printf "%-6s round %s:" "$p" "$r")
    a=""
    for i in "${!BUILDS[@]}"; do
      got=$(decode "$(binary "${BUILDS[$i]}")" "$(settings "${BUILDS[$i]}" "$i")" "$p")
      line+="  ${LABELS[$i]} $got"
      if [ -z "$a" ]; then a=${got%% *}; else line+=$(awk -v a="$a" -v b="${got%% *}" -v l="${LABELS[$i]}" 'BEGIN { printf " (%s/A %.3f)", l, b / a }'); fi
    done
    echo "$line"
  done
done
[ "${TOP:-12}" = 0 ] && exit 0  # (no profiles)
for p in $PROGRAMS; do
  for i in "${!BUILDS[@]}"; do
    # shellcheck disable=SC2046
    env VKC_VULKAN_PROFILE=1 $(settings "${BUILDS[$i]}" "$i") "$(binary "${BUILDS[$i]}")" run "$WORK/$p.pte" --backend vulkan \
      --generate 8 --prompt-ids "$PROMPT" > /dev/null 2> "$WORK/$p.${LABELS[$i]}.prof"
    python3 "$(dirname "$0")/profile_top.py" "$WORK/$p.${LABELS[$i]}.prof" "${LABELS[$i]} $p" "${TOP:-12}" ""
  done
done
