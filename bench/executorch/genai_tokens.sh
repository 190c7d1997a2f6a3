#!/usr/bin/env bash
# Compiles onnxruntime-genai builder outputs (tests/models/decoders/genai/*: model.onnx +
# model.onnx.data) into KV-cache programs and generates greedily with `vkc run` (cpu and vulkan)
# and with the ExecuTorch runtime (et_runner, bench/executorch/build.sh), and prints per program
# its cache form and whether the tokens agree.
#
#   bench/executorch/genai_tokens.sh [--runner PATH] [--vkc PATH] [--work DIR] [--max-seq-len N]
#                                    [--generate N] [--prompt-ids IDS] [--resizing "NAME..."]
#                                    [--quantize RECIPE] [DIR...]
#
# DIR: a builder output folder, or a folder of them (default tests/models/decoders/genai). Each is
# compiled with `--max-seq-len N --dim sequence_length=1` (a decode-step program that takes the
# prompt a token a call); the folders named by --resizing (default llama_fp32 mistral_fp32
# gemma2_fp32 gemma3_fp32) also with `--dim sequence_length=1..4` (one program that resizes; the
# prompt in calls of up to 4 tokens). Columns: form = update_cache (every cache kept as state by
# update_cache: windowed, soft-capped or unfused attention), sdpa_with_kv_cache, or both (counts);
# vulkan, ET: "=" where `vkc run --backend vulkan` / et_runner give the tokens of
# `vkc run --backend cpu`, else the first step that differs; ort: the same against onnxruntime's
# tokens in DIR/../greedy.json where it has them. --quantize compiles every linear and embedding
# with RECIPE (`--quantize RECIPE --quantize-min-elements 0`: a test export's small layers too);
# the ort column is then left out (quantized weights change the tokens; cpu is the reference).
# A folder that does not compile is listed with
# vkc's error and does not change the exit status; exit 1 if any run fails or any tokens differ.
set -uo pipefail
# shellcheck source=bench/executorch/runners.sh
. "$(dirname "$0")/runners.sh"
runners_defaults
max_seq=64 gen=16 prompt=17,200,45,3,99,128,250,7 resizing="llama_fp32 mistral_fp32 gemma2_fp32 gemma3_fp32"
quantize=()
dirs=()
while [ $# -gt 0 ]; do
  if runners_option "$1" "${2:-}"; then shift 2; continue; fi
  case "$1" in
    --max-seq-len) max_seq=$2; shift ;;
    --generate) gen=$2; shift ;;
    --prompt-ids) prompt=$2; shift ;;
    --resizing) resizing=$2; shift ;;
    --quantize) quantize=(--quantize "$2" --quantize-min-elements 0); shift ;;
    -h|--help) sed -n 2,20p "$0" >&2; exit 2 ;;
    -*) echo "genai_tokens.sh: unknown option '$1'" >&2; exit 2 ;;
    *) dirs+=("$1") ;;
  esac
  shift
done
[ ${#dirs[@]} -gt 0 ] || dirs=("$root/tests/models/decoders/genai")
runners_ready genai_tokens.sh

export_folders "${dirs[@]}"

# tokens_of FILE: the "tokens: ..." line of a vkc run / et_runner output, without its label
tokens_of() { sed -n 's/^tokens: *//p' "$1" | head -1; }
# same A B: "=" when equal, "-" when B is missing, else "step K" (the first that differs)
same() {
  [ -n "$2" ] || { echo "-"; return; }
  awk -v a="$1" -v b="$2" 'BEGIN { n = split(a, x, " "); m = split(b, y, " ");
    for (i = 1; i <= (n > m ? n : m); i++) if (x[i] != y[i]) { print "step " i; exit }
    print "=" }'
}
# ort_tokens FOLDER: onnxruntime's greedy tokens for FOLDER from greedy.json beside it, if any
ort_tokens() {
  local json
  json=$(dirname "$1")/greedy.json
  [ -f "$json" ] || return 0
  python3 - "$json" "$(basename "$1")" "$prompt" "$gen" <<'EOF'
import json, sys
d, name, prompt, n = json.load(open(sys.argv[1])), sys.argv[2], sys.argv[3], int(sys.argv[4])
for fam in d.values():
    t = fam.get("onnxruntime", {}).get(name) if isinstance(fam, dict) else None
    if t and ",".join(map(str, fam.get("prompt", []))) == prompt and len(t) >= n:
        print(" ".join(map(str, t[:n])))
EOF
}

printf '%-26s %-6s %-24s %-8s %-8s %-8s\n' model seq form vulkan ET ort
status=0
for f in "${folders[@]}"; do
  name=$(basename "$f")
  seqs=1
  case " $resizing " in *" $name "*) seqs="1 1..4" ;; esac
  ort=""
  [ ${#quantize[@]} -gt 0 ] || ort=$(ort_tokens "$f")
  for s in $seqs; do
    tag=$name.${s/../-}
    pte=$work/$tag.pte
    if ! "$vkc" compile "$f/model.onnx" --max-seq-len "$max_seq" --dim "sequence_length=$s" "${quantize[@]}" -o "$pte" \
        >"$work/$tag.compile.txt" 2>&1; then
      printf '%-26s %-6s not compiled: %s\n' "$name" "$s" "$(grep -v '^vkc: note' "$work/$tag.compile.txt" | tail -1)"
      continue
    fi
    ops=$("$vkc" inspect "$pte")
    uc=$(awk '$1 == "update_cache.default" { print $2 }' <<<"$ops")
    kv=$(awk '$1 == "sdpa_with_kv_cache.default" { print $2 }' <<<"$ops")
    if [ -n "$uc" ] && [ -n "$kv" ]; then form="both (${uc} uc, ${kv} sdpa_kv)"
    elif [ -n "$uc" ]; then form="update_cache ($uc)"
    elif [ -n "$kv" ]; then form="sdpa_with_kv_cache ($kv)"
    else form="none"
    fi
    for b in cpu vulkan; do
      "$vkc" run "$pte" --backend "$b" --generate "$gen" --prompt-ids "$prompt" >"$work/$tag.$b.txt" 2>&1
    done
    "$runner" "$pte" --generate "$gen" --prompt-ids "$prompt" >"$work/$tag.et.txt" 2>&1
    cpu=$(tokens_of "$work/$tag.cpu.txt") vk=$(tokens_of "$work/$tag.vulkan.txt") et=$(tokens_of "$work/$tag.et.txt")
    if [ -z "$cpu" ]; then
      printf '%-26s %-6s %-24s vkc cpu failed: %s\n' "$name" "$s" "$form" "$(tail -1 "$work/$tag.cpu.txt")"
      status=1; continue
    fi
    r_vk=$(same "$cpu" "$vk") r_et=$(same "$cpu" "$et") r_ort=$(same "$cpu" "$ort")
    [ -n "$vk" ] || r_vk=failed
    [ -n "$et" ] || r_et=failed
    [ "$r_vk" = "=" ] && [ "$r_et" = "=" ] || status=1
    printf '%-26s %-6s %-24s %-8s %-8s %-8s\n' "$name" "$s" "$form" "$r_vk" "$r_et" "$r_ort"
    [ "$r_et" = failed ] && echo "  et_runner: $(grep -v '^I ' "$work/$tag.et.txt" | tail -2 | tr '\n' ' ')"
  done
done
exit $status
