#!/usr/bin/env bash
# ExecuTorch's Vulkan LLM CI cells, compiled by vkc from dynamo exports of the same architectures
# (bench/llm_shapes/*.onnx.xz, made by bench/export_llm_shapes.py; random weights written here at bench
# time by bench/fill_external_data.py, never committed), as decode-step programs with the KV cache inside
# (--max-seq-len). Each cell: wall time, peak RSS, .pte size, and the artifact gates ET-VK's CI applies
# (VulkanBackend called; quantized-linear, sdpa and embedding families; Llama-3.2-1B embedding recipes
# <= 770 MiB). Then the 1.1B Llama-shaped compile beside onnxruntime's offline optimization of the same
# file, and the tiny exports' greedy tokens per recipe against fp32's.
#
#   bench/llm_recipes.sh [--dir DIR] [--vkc PATH] [--max-seq-len N] [--skip-cells] [--skip-ort] [--skip-tiny]
#
# Disk: the fp32 weights take 4.1 (TinyLlama) + 5.6 (Llama-3.2-1B) + 2.8 (Qwen3-0.6B) + 14.3 GiB (Phi-4-mini)
# under DIR (default ${TMPDIR:-/tmp}/vkc-llm-bench), written once. Needs GNU time, python3 with onnx and
# numpy (Debian: PYENV_VERSION=system), and for --ort node + npm (onnxruntime-node as compile_bench.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${TMPDIR:-/tmp}/vkc-llm-bench
vkc=${VKC:-build/compiler/vkc}
max_seq=2048
cells=1 ort=1 tiny=1
while (($#)); do
  case $1 in
    --dir) dir=$2; shift 2 ;;
    --vkc) vkc=$2; shift 2 ;;
    --max-seq-len) max_seq=$2; shift 2 ;;
    --skip-cells) cells=0; shift ;;
    --skip-ort) ort=0; shift ;;
    --skip-tiny) tiny=0; shift ;;
    -h|--help) sed -n '2,16p' "$0"; exit 0 ;;
    *) echo "llm_recipes: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
[[ -x $vkc ]] || { echo "llm_recipes: no vkc at $vkc (build it, or pass --vkc)" >&2; exit 2; }
[[ -x /usr/bin/time ]] || { echo "llm_recipes: needs GNU time (/usr/bin/time)" >&2; exit 2; }
py=(env PYENV_VERSION=system python3)
mkdir -p "$dir"

# The model of one shape, its weights written on first use.
model() {
  local name=$1 m=$dir/$1/model.onnx
  if [[ ! -f $m || ! -f $m.data ]]; then
    mkdir -p "$dir/$name"
    xz -dc "bench/llm_shapes/$name.onnx.xz" > "$m"
    "${py[@]}" bench/fill_external_data.py "$m" >&2
  fi
  echo "$m"
}

failed=0
if ((cells)); then
  echo "== ET-VK CI's LLM cells (decode step, --max-seq-len $max_seq), $(nproc) cores"
  printf '%-14s %-22s %7s %9s %9s  %s\n' model recipe wall_s peak_MiB pte_MiB gates
  while read -r name recipe limit; do
    m=$(model "$name")
    out=$dir/$name-$recipe.pte
    /usr/bin/time -f '%e %M' -o "$dir/time" "$vkc" compile "$m" -o "$out" --max-seq-len "$max_seq" \
      --quantize "$recipe" --no-progress > "$dir/stdout" 2> "$dir/stderr" || { cat "$dir/stderr"; failed=1; continue; }
    read -r wall rss < "$dir/time"
    gate_args=(--require-called-delegate VulkanBackend --require-family quantized-linear,sdpa,embedding)
    [[ $limit != - ]] && gate_args+=(--max-size "$limit")
    if gate=$("$vkc" inspect "$out" "${gate_args[@]}" 2>&1 > /dev/null); then gate="pass${limit/#-/}"; else gate="FAIL: $gate"; failed=1; fi
    printf '%-14s %-22s %7.2f %9.0f %9.1f  %s\n' "$name" "$recipe" "$wall" "$(echo "$rss / 1024" | bc -l)" \
      "$(echo "$(stat -c %s "$out") / 1048576" | bc -l)" "$gate"
    rm -f "$out"
  done <<'EOF'
qwen3_0.6b     8da4w-fp16-embedding  -
llama3.2_1b    8da4w                 -
llama3.2_1b    8da4w-fp16            -
llama3.2_1b    8da4w-embedding       770MiB
llama3.2_1b    8da4w-fp16-embedding  770MiB
llama3.2_1b    int4-weight-only      -
phi4_mini      8da4w-embedding       -
EOF
fi

if ((ort)); then
  echo "== 1.1B Llama-shaped dynamo export (TinyLlama shape, fp32 external data): vkc vs onnxruntime offline"
  m=$(model tinyllama_1.1b)
  ORT_VERSION=1.30.0
  ORT_PREFIX=${XDG_CACHE_HOME:-$HOME/.cache}/vkc-bench
  if [[ ! -f $ORT_PREFIX/node_modules/onnxruntime-node/package.json ]]; then
    ONNXRUNTIME_NODE_INSTALL=skip npm install --prefix "$ORT_PREFIX" --no-save --no-audit --no-fund --loglevel=error \
      "onnxruntime-node@$ORT_VERSION" >&2
  fi
  export NODE_PATH=$ORT_PREFIX/node_modules
  # Best of two runs each, alternating: the 4 GiB of weights come from the page cache for both tools
  # (the cells above may have pushed them out; a cold first read would favour whoever runs second),
  # and each run starts after `sync`, so that neither pays for the other's dirty pages (onnxruntime
  # writes 4 GiB) being written back.
  vwall=1e9 owall=1e9
  for _ in 1 2; do
    sync
    /usr/bin/time -f '%e %M' -o "$dir/time" "$vkc" compile "$m" -o "$dir/tl.pte" --max-seq-len "$max_seq" \
      --quantize 8da4w-fp16-embedding --no-progress > /dev/null
    read -r w vrss < "$dir/time"
    vwall=$(awk -v a="$w" -v b="$vwall" 'BEGIN { print (a < b) ? a : b }')
    sync
    /usr/bin/time -f '%e %M' -o "$dir/time" node bench/ort_optimize.js "$m" "$dir/tl-ort.onnx" --dim past=$((max_seq - 1)) > /dev/null
    read -r w orss < "$dir/time"
    owall=$(awk -v a="$w" -v b="$owall" 'BEGIN { print (a < b) ? a : b }')
  done
  printf 'vkc compile --max-seq-len %s --quantize 8da4w-fp16-embedding: %.2f s, %.0f MiB peak\n' "$max_seq" "$vwall" "$(echo "$vrss / 1024" | bc -l)"
  printf 'onnxruntime offline optimization (level all):             %.2f s, %.0f MiB peak\n' "$owall" "$(echo "$orss / 1024" | bc -l)"
  printf 'ratio: vkc %.1fx faster, %.1fx less memory\n' "$(echo "$owall / $vwall" | bc -l)" "$(echo "$orss / $vrss" | bc -l)"
  rm -f "$dir/tl.pte" "$dir/tl-ort.onnx" "$dir/tl-ort.onnx.data"
fi

if ((tiny)); then
  echo "== tiny exports (tests/models/decoders, dynamo step): greedy tokens per recipe vs fp32 (groups of 32, every linear)"
  printf '%-7s %-22s %s\n' model recipe "leading tokens equal to fp32's (of 16)"
  for fam in llama qwen3 phi3 gemma; do
    m=tests/models/decoders/$fam/${fam}_step_dynamo/model.onnx
    prompt=$("${py[@]}" -c "import json;print(','.join(map(str,json.load(open('tests/models/decoders/$fam/greedy.json'))['prompt'])))")
    "$vkc" compile "$m" -o "$dir/tiny.pte" --max-seq-len 64 --no-progress > /dev/null
    want=$("$vkc" run "$dir/tiny.pte" --generate 16 --prompt-ids "$prompt" 2> /dev/null)
    for recipe in 8da4w 8da4w-fp16 8da4w-embedding 8da4w-fp16-embedding int4-weight-only; do
      case $recipe in int4-weight-only*) base=int4-weight-only ;; *) base=${recipe%%-*} ;; esac
      rest=${recipe#"$base"}  # BASE:32[-fp16][-embedding]
      "$vkc" compile "$m" -o "$dir/tiny.pte" --max-seq-len 64 --quantize "$base:32$rest" --quantize-min-elements 0 \
        --no-progress > /dev/null 2>&1
      got=$("$vkc" run "$dir/tiny.pte" --generate 16 --prompt-ids "$prompt" 2> /dev/null)
      "${py[@]}" - "$fam" "$recipe" "$want" "$got" <<'PY'
import sys
fam, recipe, want, got = sys.argv[1:5]
w, g = want.split()[1:], got.split()[1:]
n = next((i for i, (a, b) in enumerate(zip(w, g)) if a != b), min(len(w), len(g)))
print(f"{fam:<7} {recipe:<22} {n}")
PY
    done
  done
  rm -f "$dir/tiny.pte"
fi
exit $failed
