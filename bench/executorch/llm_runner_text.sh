#!/usr/bin/env bash
# ExecuTorch's own LLM runner (llama_main, bench/executorch/build_llm_runner.sh) and `vkc run
# --prompt` on vkc programs of the decoders with trained tokenizers (tests/models/tokenizers/*_step:
# a Llama with a Llama-3-style tokenizer, a Qwen2 with a Qwen2-style one), each program compiled
# two ways: a prefill of up to 8 tokens a call (--dim sequence=1..8, enable_dynamic_shape) and a
# one-token step (sequence=1: the runner prefills token by token), and the prefill program again with
# its constants in ExecuTorch's external data file (1..8+ptd: --external-weights; llama_main
# --data_paths, vkc run finds it beside the .pte). Prints one line per run and
# whether its text equals transformers' greedy text (e2e.json). llama_main prints only complete
# UTF-8 characters, so its text is compared with transformers' without the U+FFFD that stand for a
# token's partial bytes; vkc's with all of them.
#
#   bench/executorch/llm_runner_text.sh [--llama-main PATH] [--vkc PATH] [--backend cpu|vulkan] [--work DIR]
# Exit status 1 when a text differs.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
llama_main="${LLAMA_MAIN:-${XDG_CACHE_HOME:-$HOME/.cache}/vkc-bench/executorch/llama_main}"
vkc="${VKC:-$root/build/compiler/vkc}" backend=vulkan work=""
while [ $# -gt 0 ]; do
  case "$1" in
    --llama-main) llama_main=$2; shift ;;
    --vkc) vkc=$2; shift ;;
    --backend) backend=$2; shift ;;
    --work) work=$2; shift ;;
    *) echo "llm_runner_text.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
  shift
done
[ -x "$llama_main" ] || { echo "llm_runner_text.sh: no llama_main at $llama_main (bench/executorch/build_llm_runner.sh)" >&2; exit 2; }
[ -x "$vkc" ] || { echo "llm_runner_text.sh: no vkc at $vkc" >&2; exit 2; }
if [ -z "$work" ]; then work=$(mktemp -d); trap 'rm -rf "$work"' EXIT; fi
dir=$root/tests/models/tokenizers
status=0
for model in llama3 qwen2; do
  e2e=$dir/${model}_step/e2e.json
  prompt=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["prompt"])' "$e2e")
  n=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["hf_generate"]))' "$e2e")
  want=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["text"])' "$e2e")
  want_et=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["text"].replace("\ufffd", ""))' "$e2e")
  for variant in 1..8 1 1..8+ptd; do
    dims=${variant%+ptd} pte=$work/$model-$variant.pte ptd=() data=()
    if [ "$variant" != "$dims" ]; then  # the constants in ExecuTorch's .ptd beside the .pte
      ptd=(--external-weights) data=(--data_paths "${pte%.pte}.ptd")
    fi
    "$vkc" compile "$dir/${model}_step/model.onnx" --max-seq-len 64 --dim "sequence=$dims" -o "$pte" "${ptd[@]}" >/dev/null 2>&1
    got_et=$("$llama_main" --model_path "$pte" "${data[@]}" --tokenizer_path "$dir/$model/tokenizer.json" --prompt "$prompt" \
      --temperature 0 --max_new_tokens "$n" 2>"$work/et.log" | head -1)
    got_et=${got_et#"$prompt"}
    got_vkc=$("$vkc" run "$pte" --backend "$backend" --tokenizer "$dir/$model" --prompt "$prompt" --max-new-tokens "$n" 2>/dev/null)
    et_ok=no vkc_ok=no
    [ "$got_et" = "$want_et" ] && et_ok=yes
    [ "$got_vkc" = "$want" ] && vkc_ok=yes
    [ $et_ok = yes ] && [ $vkc_ok = yes ] || status=1
    printf '%-7s sequence=%-9s llama_main: %-40q = transformers: %-3s  vkc run (%s): %-3s\n' \
      "$model" "$variant" "$got_et" "$et_ok" "$backend" "$vkc_ok"
  done
done
exit $status
