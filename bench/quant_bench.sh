#!/usr/bin/env bash
# Wall time and peak RSS of `vkc compile --quantize RECIPE` on a generated Llama-style model of
# ~1.1 B parameters with external data (bench/gen_llama_onnx.py; generated here, never committed).
# Aim (issue 5): <= 15 s and <= 1 GB peak RSS on a 2-core machine.
#
#   bench/quant_bench.sh                      # 8da4w on the 1.1 B model (4.5 GB of fp32 data, generated once)
#   bench/quant_bench.sh --recipe 8da4w-embedding --recipe int4-weight-only
#   bench/quant_bench.sh --small              # a 0.1 B model, for a quick check
#   bench/quant_bench.sh --dir DIR --vkc PATH --repeat N --matmul --attention
#   bench/quant_bench.sh --matmul --attention --gates --recipe 8da4w-fp16-embedding   # ET-VK CI's gates
#
# The model is cached in DIR (default ${TMPDIR:-/tmp}/vkc-quant-bench) and reused while its
# parameters are the same. Runs are warm-cache (the generator just wrote the data, or a previous run
# read it); the first run's figure includes whatever the page cache lacked.
# Needs python3 with onnx and numpy (Debian: python3-onnx; PYENV_VERSION=system), GNU time.
set -euo pipefail
cd "$(dirname "$0")/.."

dir=${TMPDIR:-/tmp}/vkc-quant-bench
vkc=${VKC:-}
recipes=()
repeat=1
gates=0  # --gates: also run ET-VK CI's artifact gates on each .pte (vkc inspect --require-...)
gen_args=(--dim 2048 --hidden 8192 --layers 15 --vocab 32000 --seq 8)
while (($#)); do
  case $1 in
    --dir) dir=$2; shift 2 ;;
    --vkc) vkc=$2; shift 2 ;;
    --recipe) recipes+=("$2"); shift 2 ;;
    --repeat) repeat=$2; shift 2 ;;
    --small) gen_args=(--dim 1024 --hidden 2816 --layers 8 --vocab 16000 --seq 8); shift ;;
    --matmul) gen_args+=(--matmul); shift ;;
    --attention) gen_args+=(--attention); shift ;;
    --gates) gates=1; shift ;;
    -h|--help) sed -n '2,15p' "$0"; exit 0 ;;
    *) echo "quant_bench: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
((${#recipes[@]})) || recipes=(8da4w)
if [[ -z $vkc ]]; then
  for c in build/compiler/vkc build-q/compiler/vkc; do [[ -x $c ]] && { vkc=$c; break; }; done
fi
[[ -x ${vkc:-} ]] || { echo "quant_bench: no vkc binary (build it, or pass --vkc PATH)" >&2; exit 2; }
[[ -x /usr/bin/time ]] || { echo "quant_bench: needs GNU time (/usr/bin/time)" >&2; exit 2; }
py=(env PYENV_VERSION=system python3)
"${py[@]}" -c 'import onnx, numpy' 2>/dev/null || { echo "quant_bench: needs python3 onnx + numpy" >&2; exit 2; }

mkdir -p "$dir"
model=$dir/llama.onnx
stamp="${gen_args[*]}"
if [[ ! -f $model || ! -f $model.data || "$(cat "$dir/params" 2>/dev/null)" != "$stamp" ]]; then
  echo "generating $model (${gen_args[*]}) ..."
  start=$(date +%s.%N)
  "${py[@]}" bench/gen_llama_onnx.py --out "$model" "${gen_args[@]}"
  echo "$stamp" > "$dir/params"
  echo "generated in $(echo "$(date +%s.%N) - $start" | bc) s"
fi
echo "model: $model ($(du -h "$model.data" | cut -f1) external data); vkc: $vkc; $(nproc) cores"
printf '%-24s %8s %10s %10s %8s  %s\n' recipe wall_s peak_MiB pte_MiB layers sqnr_min_dB
for recipe in "${recipes[@]}"; do
  for ((i = 0; i < repeat; i++)); do
    out=$dir/out-$recipe.pte
    /usr/bin/time -f '%e %M' -o "$dir/time" "$vkc" compile "$model" -o "$out" --quantize "$recipe" \
      --quant-report "$dir/report-$recipe.json" --no-progress > "$dir/stdout" || { cat "$dir/stdout"; exit 1; }
    read -r wall rss < "$dir/time"
    summary=$("${py[@]}" -c 'import json,sys; s=json.load(open(sys.argv[1]))["summary"]; print(s["quantized"], s["min_sqnr_db"])' \
      "$dir/report-$recipe.json")
    printf '%-24s %8.2f %10.0f %10.1f %8s  %s\n' "$recipe" "$wall" "$(echo "$rss / 1024" | bc -l)" \
      "$(echo "$(stat -c %s "$out") / 1048576" | bc -l)" ${summary}
    if ((gates)); then
      "$vkc" inspect "$out" --require-called-delegate VulkanBackend --require-family quantized-linear,sdpa,embedding \
        --max-size 770MiB > /dev/null && echo "  gates: VulkanBackend called; quantized-linear, sdpa, embedding; <= 770 MiB: pass"
    fi
    rm -f "$out"
  done
done
