#!/usr/bin/env bash
# Runs the same .pte through `vkc run` and through the ExecuTorch runtime (et_runner, made by
# bench/executorch/build.sh), side by side, and prints per model both runners' times, their ratio
# and how far their outputs are apart.
#
#   bench/executorch/compare.sh [--runner PATH] [--vkc PATH] [--backend vulkan|cpu] [--repeat N]
#                               [--models DIR] [--no-dev-models] [--work DIR] [MODEL.onnx[=ARGS]] ...
#
# Models: the bundled CNN exports (examples/, tests/models/quantized/cnn_fp32), the CNN dev
# models (tests/models/get-dev-models.sh, from npm; --no-dev-models leaves them out), every
# *.onnx in --models DIR (static shapes, e.g. bench/executorch/export_vision.py's exports), and
# MODEL.onnx=ARGS given here (ARGS: vkc compile options, comma-separated). Each is compiled once,
# `vkc run --random 1 --save` writes the inputs and vkc's outputs, and et_runner runs the
# same inputs and compares its outputs with vkc's.
#
# Columns: vkc ms and ET ms are the mean of N runs after one warm-up (host staging included in
# both); ratio = vkc / ET (below 1: vkc is faster); max|vkc-ET| over output 0 as a fraction of
# its largest magnitude. Exit 1 if any run fails.
set -euo pipefail
# shellcheck source=bench/executorch/runners.sh
. "$(dirname "$0")/runners.sh"
runners_defaults
backend=vulkan models_dir="" dev=1
extra=()
while [ $# -gt 0 ]; do
  if runners_option "$1" "${2:-}"; then shift 2; continue; fi
  case "$1" in
    --backend) backend=$2; shift ;;
    --models) models_dir=$2; shift ;;
    --no-dev-models) dev=0 ;;
    -h|--help) sed -n 2,18p "$0" >&2; exit 2 ;;
    -*) echo "compare.sh: unknown option '$1'" >&2; exit 2 ;;
    *) extra+=("$1") ;;
  esac
  shift
done
runners_ready compare.sh

# id <TAB> onnx <TAB> compile args (comma-separated)
list=$work/models.tsv
: >"$list"
printf 'tiny_cnn\t%s\t--dim,batch=1\n' "$root/examples/models/tiny_cnn.onnx" >>"$list"
printf 'cnn_fp32\t%s\t\n' "$root/tests/models/quantized/cnn_fp32/model.onnx" >>"$list"
if [ "$dev" = 1 ]; then
  dest=${VKC_MODELS_DIR:-$HOME/.cache/vkc-models}
  if bash "$root/tests/models/get-dev-models.sh" "$dest" >"$work/fetch.log" 2>&1; then
    for m in ocr_cls_mobile_v2 blazeface_front_128 blazeface_back_256 oww_embedding ocr_det_ppocrv4; do
      f=$(awk -F'\t' -v id="$m" -v dir="$dest/dev" '$1 == id { print dir "/" $5 }' "$dest/dev/manifest.tsv")
      args=$(awk -v id="$m" '$1 == id { $1 = ""; sub(/^ +/, ""); gsub(/ +/, ","); print }' \
        "$root/tests/models/dev_models.txt")
      [ -n "$f" ] && printf '%s\t%s\t%s\n' "$m" "$f" "$args" >>"$list"
    done
  else
    echo "compare.sh: dev models not fetched (registry unreachable?): $(tail -1 "$work/fetch.log")" >&2
  fi
fi
if [ -n "$models_dir" ]; then
  for f in "$models_dir"/*.onnx; do [ -e "$f" ] && printf '%s\t%s\t\n' "$(basename "$f" .onnx)" "$f" >>"$list"; done
fi
for e in ${extra[@]+"${extra[@]}"}; do
  f=${e%%=*} args=""
  [ "$f" != "$e" ] && args=${e#*=}
  id=$(basename "$f" .onnx)
  [ "$id" = model ] && id=$(basename "$(dirname "$f")")  # DIR/model.onnx (tests/models/*/NAME/) is NAME
  printf '%s\t%s\t%s\n' "$id" "$f" "$args" >>"$list"
done

printf '%-22s %10s %10s %8s %12s\n' model "vkc ms" "ET ms" ratio "max|vkc-ET|" 
failed=0
while IFS=$'\t' read -r id onnx args; do
  d=$work/$id
  mkdir -p "$d"
  IFS=, read -r -a cargs <<<"$args"
  if ! "$vkc" compile "$onnx" ${cargs[@]+"${cargs[@]}"} -o "$d/model.pte" 2>"$d/compile.err" >/dev/null; then
    printf '%-22s FAILED compile: %s\n' "$id" "$(tail -1 "$d/compile.err")"; failed=1; continue
  fi
  if ! "$vkc" run "$d/model.pte" --backend "$backend" --random 1 --save "$d/data" --repeat $((repeat + 1)) --json \
      >"$d/vkc.json" 2>"$d/vkc.err"; then
    printf '%-22s FAILED vkc run: %s\n' "$id" "$(tail -1 "$d/vkc.err")"; failed=1; continue
  fi
  ins=() outs=()
  for f in "$d"/data/input_*.pb; do ins+=("$f"); done
  for f in "$d"/data/output_*.pb; do outs+=("$f"); done
  if ! "$runner" "$d/model.pte" --input "${ins[@]}" --expect "${outs[@]}" --repeat $((repeat + 1)) \
      >"$d/et.out" 2>"$d/et.err"; then
    printf '%-22s FAILED ExecuTorch: %s\n' "$id" "$(grep -v '^\[' "$d/et.err" | tail -1)"; failed=1; continue
  fi
  python3 - "$d/vkc.json" "$d/et.out" "$id" <<'EOF'
import json, re, sys
v = json.load(open(sys.argv[1]))
et = open(sys.argv[2]).read()
runs = v["run_ms"]["runs"]
# vkc: mean without the first (warm-up) run
vkc_ms = (v["run_ms"]["mean"] * runs - v["run_ms"]["first"]) / max(1, runs - 1)
m = re.search(r"time: first ([\d.]+) ms, mean ([\d.]+) ms/run, min ([\d.]+) ms over (\d+) runs", et)
first, mean, n = float(m.group(1)), float(m.group(2)), int(m.group(4))
et_ms = (mean * n - first) / max(1, n - 1)
e = re.search(r"expect 0: max_abs_err=(\S+) mean_abs_err=\S+ ref_absmax=(\S+)", et)
err = float(e.group(1)) / max(float(e.group(2)), 1e-30) if e else float("nan")
print(f"{sys.argv[3]:<22} {vkc_ms:10.3f} {et_ms:10.3f} {vkc_ms / et_ms:7.2f}x {err:12.2e}")
EOF
done <"$list"
exit $failed
