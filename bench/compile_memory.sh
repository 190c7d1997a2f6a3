#!/usr/bin/env bash
# Issue 36's compile goals, measured: an LLM shape of bench/llm_shapes (random fp32 external data
# written at bench time, never committed) compiled as a decode step under each kind of recipe, with
# peak RSS and wall time (the output's `sync` included) beside `cp` of the external data file to the
# same disk plus `sync`, page cache warm for both (one warm-up read of the data first).
#
#   bench/compile_memory.sh [--shape NAME] [--dir DIR] [--vkc PATH] [--max-seq-len N]
#
# NAME: tinyllama_1.1b (default), qwen3_0.6b, llama3.2_1b, phi4_mini; or llama3_8b_fp16, an 8B-class
# Llama-3-sized stack (dim 4096, MLP 14336, 32 layers, vocabulary 128256) of fp16 weights written by
# bench/gen_llama_onnx.py --fp16 (16 GiB; a static 8-token graph, no cache). DIR as bench/llm_recipes.sh
# (the same weights are reused). Goals printed per row: peak RSS <= 1 GiB for every recipe; wall <=
# 1.2x the copy for a program of the data's own dtype (the same bytes as the copy) and <= 1.0x for
# fp16 of fp32 data (half of them).
# Needs GNU time, python3 with onnx and numpy (Debian: PYENV_VERSION=system).
set -euo pipefail
cd "$(dirname "$0")/.."
shape=tinyllama_1.1b dir=${TMPDIR:-/tmp}/vkc-llm-bench vkc=${VKC:-build/compiler/vkc} max_seq=2048
while (($#)); do
  case $1 in
    --shape) shape=$2; shift 2 ;;
    --dir) dir=$2; shift 2 ;;
    --vkc) vkc=$2; shift 2 ;;
    --max-seq-len) max_seq=$2; shift 2 ;;
    *) echo "compile_memory: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
[[ -x $vkc ]] || { echo "compile_memory: no vkc at $vkc" >&2; exit 2; }
[[ -x /usr/bin/time ]] || { echo "compile_memory: needs GNU time (/usr/bin/time)" >&2; exit 2; }
m=$dir/$shape/model.onnx
if [[ ! -f $m || ! -f $m.data ]]; then
  mkdir -p "$dir/$shape"
  if [[ $shape == llama3_8b_fp16 ]]; then
    env PYENV_VERSION=system python3 bench/gen_llama_onnx.py --out "$m" --dim 4096 --hidden 14336 --layers 32 \
      --vocab 128256 --matmul --fp16 >&2
  else
    xz -dc "bench/llm_shapes/$shape.onnx.xz" > "$m"
    env PYENV_VERSION=system python3 bench/fill_external_data.py "$m" >&2
  fi
fi
step=(--max-seq-len "$max_seq")
[[ $shape == llama3_8b_fp16 ]] && step=()  # a static graph: no cache to keep
out=$dir/out
mkdir -p "$out"
cat "$m.data" > /dev/null  # warm the page cache
secs() { date +%s.%N; }
sync
t0=$(secs); cp "$m.data" "$out/copy.data"; sync; t1=$(secs)
cp_s=$(echo "$t1 - $t0" | bc -l)
rm -f "$out/copy.data"; sync
data_mib=$(echo "$(stat -c %s "$m.data") / 1048576" | bc -l)
printf '%s: %.0f MiB of external data; cp + sync %.2f s; %s cores\n' "$shape" "$data_mib" "$cp_s" "$(nproc)"
printf '%-34s %8s %8s %10s %10s  %s\n' compile wall_s x_cp peak_MiB out_MiB goals
run() {  # LABEL WALL_GOAL(ratio or -) ARGS...
  local label=$1 goal=$2; shift 2
  rm -f "$out"/p.pte "$out"/p.ptd; sync
  local a b; a=$(secs)
  /usr/bin/time -f '%M' -o "$out/time" "$vkc" compile "$m" -o "$out/p.pte" "${step[@]}" --no-progress "$@" \
    > /dev/null 2> "$out/stderr" || { echo "$label: $(tail -1 "$out/stderr")"; return; }
  sync; b=$(secs)
  local wall rss size ratio verdict
  wall=$(echo "$b - $a" | bc -l); rss=$(echo "$(cat "$out/time") / 1024" | bc -l)
  size=$(echo "$(cat "$out"/p.pt? | wc -c) / 1048576" | bc -l); ratio=$(echo "$wall / $cp_s" | bc -l)
  verdict="rss $(awk -v r="$rss" 'BEGIN { print (r <= 1024) ? "ok" : "OVER 1 GiB" }')"
  [[ $goal != - ]] && verdict+=", wall $(awk -v x="$ratio" -v g="$goal" 'BEGIN { print (x <= g) ? "ok" : "OVER " g "x cp" }')"
  printf '%-34s %8.2f %8.2f %10.0f %10.0f  %s\n' "$label" "$wall" "$ratio" "$rss" "$size" "$verdict"
}
if [[ $shape == llama3_8b_fp16 ]]; then
  run "fp16 (the data's dtype)" 1.2
  run "fp16 --external-weights (.ptd)" 1.2 --external-weights
  run "--quantize 8da4w-embedding" - --quantize 8da4w-embedding
else
  run "fp32" 1.2
  run "fp32 --external-weights (.ptd)" 1.2 --external-weights
  run "--force-fp16" 1.0 --force-fp16
  run "--quantize 8da4w-fp16-embedding" - --quantize 8da4w-fp16-embedding
fi
rm -f "$out"/p.pte "$out"/p.ptd "$out/time" "$out/stderr"
