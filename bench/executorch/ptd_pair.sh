#!/usr/bin/env bash
# ExecuTorch's runtime on vkc's separated weights: each export folder (model.onnx + test_data_set_0)
# is compiled twice, as one .pte and as a .pte with its constants in a .ptd (--external-weights);
# et_runner runs the single file, then the pair (--data, as Module(pte, ptd) loads it), on the same
# inputs. The pair must load and give output 0 byte for byte as the single file does; vkc run reads
# the pair too (the .ptd beside the .pte) and must match its own single-file output.
#
#   bench/executorch/ptd_pair.sh [--runner PATH] [--vkc PATH] [--work DIR] [EXPORT_DIR ...]
#
# Default folders: tests/models/ort_fused (BERT, ViT, UNet-block exports) and tests/models/encoders.
# A folder's optional compile_args file adds its words to both compiles (a decode step with its cache
# in the program: --max-seq-len 256; the 1.1B Llama shape of bench/llm_shapes, bench/README.md).
# Prints one line per model (sizes of the .pte alone, of the pair's .pte and .ptd; ET and vkc
# verdicts) and exits 1 if any pair fails to load or differs.
set -euo pipefail
# shellcheck source=bench/executorch/runners.sh
. "$(dirname "$0")/runners.sh"
runners_defaults
dirs=()
while [ $# -gt 0 ]; do
  if runners_option "$1" "${2:-}"; then shift 2; continue; fi
  dirs+=("$1"); shift
done
[ ${#dirs[@]} -gt 0 ] || dirs=("$root/tests/models/ort_fused" "$root/tests/models/encoders")
runners_ready ptd_pair
export_folders "${dirs[@]}"
printf '%-34s %10s %10s %10s  %-10s %s\n' model single pair.pte pair.ptd ET vkc
status=0
for d in "${folders[@]}"; do
  name=$(basename "$d") w=$work/$name
  mkdir -p "$w"
  inputs=("$d"/test_data_set_0/input_*.pb)
  args=()
  # shellcheck disable=SC2207
  [ -f "$d/compile_args" ] && args=($(cat "$d/compile_args"))
  # Symbolic dims take the data set's sizes, as the export tests compile them.
  if ! "$vkc" compile "$d/model.onnx" -o "$w/single.pte" "${args[@]}" >"$w/compile.log" 2>&1; then
    printf '%-34s %s\n' "$name" "skipped: $(tail -1 "$w/compile.log" | cut -c1-80)"
    continue
  fi
  "$vkc" compile "$d/model.onnx" -o "$w/pair.pte" --external-weights "${args[@]}" >>"$w/compile.log" 2>&1
  et=ok vk=ok
  "$runner" "$w/single.pte" --input "${inputs[@]}" --dump-output0 "$w/et_single.bin" >"$w/et_single.log" 2>&1 || et="single-fails"
  if [ "$et" = ok ]; then
    if ! "$runner" "$w/pair.pte" --data "$w/pair.ptd" --input "${inputs[@]}" --dump-output0 "$w/et_pair.bin" \
      >"$w/et_pair.log" 2>&1; then et=FAILED status=1
    elif ! cmp -s "$w/et_single.bin" "$w/et_pair.bin"; then et=DIFFERS status=1; fi
  fi
  "$vkc" run "$w/single.pte" --input "${inputs[@]}" --save "$w/vkc_single" >/dev/null 2>&1 || vk="single-fails"
  if [ "$vk" = ok ]; then
    if ! "$vkc" run "$w/pair.pte" --input "${inputs[@]}" --save "$w/vkc_pair" >/dev/null 2>"$w/vkc_pair.log"; then
      vk=FAILED status=1
    elif ! cmp -s "$w/vkc_single/output_0.pb" "$w/vkc_pair/output_0.pb"; then vk=DIFFERS status=1; fi
  fi
  printf '%-34s %10s %10s %10s  %-10s %s\n' "$name" "$(stat -c %s "$w/single.pte")" "$(stat -c %s "$w/pair.pte")" \
    "$(stat -c %s "$w/pair.ptd")" "$et" "$vk"
done
exit $status
