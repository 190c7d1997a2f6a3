#!/usr/bin/env bash
# What one dispatch costs on a GPU, where a decode step's dependent chain of kernels waits on each
# in turn: chains of operators that each read the one before (bench/gpu/make_chain.py) run by `vkc
# run --backend vulkan --repeat R` with VKC_VULKAN_PROFILE=run (the whole run's GPU time from
# timestamps), printed per dispatch:
#   - unary: Sin/Cos on [1, 64] (nothing to compute: the floor a dependent dispatch costs);
#   - linear: one-row linears of a decode step's shapes (K x N: 2048 x 2048 and 2048 x 5632, the 1.1B
#     Llama's) in fp16 and int4 (int4-weight-only-fp16), with the effective GB/s of their weights;
#     then the same with HOT_SETS (2) weight matrices cycled along the chain ("L2"), which stay in
#     the GPU's L2 cache between runs: what a dispatch costs when its weights need not come from
#     memory (GB/s counted as if they did; HOT_SETS=0 leaves them out).
#   bench/gpu/dispatch_cost.sh BIN_DIR [VKC_B]    BIN_DIR holds vkc and lib/*.so (ldd's list);
#                                                 VKC_B: a second build, run on the same programs
# COUNT (32) operators a chain; REPEAT (200) runs; ENV_B="VAR=value ..." runs the B column with them.
# The machine needs a Vulkan loader: unpack Debian's libvulkan1 and glvnd first (bench/README.md).
set -euo pipefail
BIN=${1:?usage: dispatch_cost.sh BIN_DIR [VKC_B]}
VKC_B=${2:-}
HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=carried_env.sh
source "$HERE/carried_env.sh"
carried_bench "$BIN" vkc-dispatch
COUNT=${COUNT:-32}
REPEAT=${REPEAT:-200}

# gpu_us BINARY ENV PTE -> "dispatches gpu_us_per_run"
gpu_us() {
  # shellcheck disable=SC2086
  env VKC_VULKAN_PROFILE=run ${2} "$1" run "$3" --backend vulkan --random 1 --repeat "$REPEAT" 2>&1 >/dev/null |
    sed -n 's/^vulkan run profile: \([0-9]*\) dispatch(es), [0-9]* barrier(s), [0-9]* chained; \([0-9.]*\) ms GPU time.*/\1 \2/p' |
    awk '{ printf "%d %.2f\n", $1, $2 * 1000 }'
}
row() {  # NAME PTE WEIGHT_BYTES
  local n a b line
  read -r n a < <(gpu_us "$VKC" "" "$2")
  line=$(printf "%-26s %3d dispatches  A %8.1f us/run %6.2f us/dispatch" "$1" "$n" "$a" "$(awk "BEGIN { print $a / $n }")")
  [ "$3" -gt 0 ] && line+=$(printf " %6.0f GB/s" "$(awk "BEGIN { print $3 / ($a * 1000) }")")
  if [ -n "$VKC_B" ] || [ -n "${ENV_B:-}" ]; then
    read -r _ b < <(gpu_us "${VKC_B:-$VKC}" "${ENV_B:-}" "$2")
    line+=$(printf "  | B %8.1f us/run %6.2f us/dispatch  B/A %.3f" "$b" "$(awk "BEGIN { print $b / $n }")" "$(awk "BEGIN { print $b / $a }")")
  fi
  echo "$line"
}

python3 "$HERE/make_chain.py" "$WORK/unary.onnx" unary "$COUNT" 64
"$VKC" compile "$WORK/unary.onnx" -o "$WORK/unary.pte" 2>/dev/null
row "unary [1,64] fp32" "$WORK/unary.pte" 0
for sets in "$COUNT" "${HOT_SETS:-2}"; do
  [ "$sets" = 0 ] && continue
  where=""
  [ "$sets" != "$COUNT" ] && where=" L2"
  for shape in "2048 2048" "2048 5632"; do
    read -r k n <<< "$shape"
    python3 "$HERE/make_chain.py" "$WORK/linear.onnx" linear "$COUNT" "$k" "$n" "$sets"
    for recipe in fp16 int4; do
      case $recipe in
        fp16) args=(--force-fp16); bytes=$((COUNT * k * n * 2)) ;;
        int4) args=(--quantize int4-weight-only-fp16); bytes=$((COUNT * k * n / 2)) ;;
      esac
      "$VKC" compile "$WORK/linear.onnx" "${args[@]}" -o "$WORK/linear_$recipe.pte" 2>/dev/null
      row "linear ${k}x${n} $recipe$where" "$WORK/linear_$recipe.pte" "$bytes"
    done
  done
done
