#!/usr/bin/env bash
# Runs export folders (model.onnx + test_data_set_0/, as tests/models/* hold them) through
# `vkc run` and through the ExecuTorch runtime (et_runner, bench/executorch/build.sh), side by
# side on the same .pte and the set's own inputs, and prints per model both runners' best time, the
# ratio and each runner's largest error against the set's expected output 0.
#
#   bench/executorch/compare_exports.sh [--runner PATH] [--vkc PATH] [--repeat N] [--work DIR]
#                                       [--compile-args "ARGS"] DIR...
#
# DIR: an export folder, or a folder of them (tests/models/encoders). Columns: vkc ms and ET ms are
# the best of N runs (host staging included in both); ratio = vkc / ET (below 1: vkc is faster);
# vkc err / ET err: max abs error of output 0 against the data set. Exit 1 if any run fails.
set -uo pipefail
# shellcheck source=bench/executorch/runners.sh
. "$(dirname "$0")/runners.sh"
runners_defaults
compile_args="" dirs=()
while [ $# -gt 0 ]; do
  if runners_option "$1" "${2:-}"; then shift 2; continue; fi
  case "$1" in
    --compile-args) compile_args=$2; shift ;;
    -h|--help) sed -n 2,12p "$0" >&2; exit 2 ;;
    -*) echo "compare_exports.sh: unknown option '$1'" >&2; exit 2 ;;
    *) dirs+=("$1") ;;
  esac
  shift
done
[ ${#dirs[@]} -gt 0 ] || { echo "compare_exports.sh: no export folder given" >&2; exit 2; }
runners_ready compare_exports.sh

export_folders "${dirs[@]}"
printf '%-32s %9s %9s %7s %10s %10s\n' model "vkc ms" "ET ms" ratio "vkc err" "ET err"
status=0
for f in "${folders[@]}"; do
  name=$(basename "$f") set=$f/test_data_set_0 pte=$work/$(basename "$f").pte
  # shellcheck disable=SC2086 # compile_args is a word list
  if ! "$vkc" compile "$f/model.onnx" $compile_args -o "$pte" >"$work/$name.compile.txt" 2>&1; then
    echo "$name: compile failed: $(tail -1 "$work/$name.compile.txt")"; status=1; continue
  fi
  ins=()
  for i in "$set"/input_*.pb; do ins+=(--input "$i"); done
  "$runner" "$pte" "${ins[@]}" --expect "$set/output_0.pb" --repeat "$repeat" >"$work/$name.et.txt" 2>&1
  "$vkc" run "$pte" --backend vulkan --expect "$set" --repeat "$repeat" >"$work/$name.vkc.txt" 2>&1
  et=$(grep -o 'min [0-9.]* ms' "$work/$name.et.txt" | awk '{print $2}')
  vk=$(grep -o 'best [0-9.]* ms' "$work/$name.vkc.txt" | awk '{print $2}')
  et_err=$(grep -o 'expect 0: max_abs_err=[^ ]*' "$work/$name.et.txt" | cut -d= -f2)
  vk_err=$(grep -o 'max abs err [^,]*' "$work/$name.vkc.txt" | head -1 | awk '{print $4}')
  if [ -z "$et" ] || [ -z "$vk" ]; then
    echo "$name: a run failed (logs in $work)"; status=1; continue
  fi
  printf '%-32s %9s %9s %6.2fx %10s %10s\n' "$name" "$vk" "$et" "$(awk -v a="$vk" -v b="$et" 'BEGIN { print a / b }')" \
    "${vk_err:--}" "${et_err:--}"
done
exit $status
