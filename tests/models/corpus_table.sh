#!/usr/bin/env bash
# Prints the corpus table of docs/conformance.md for the committed real-exporter models
# (tests/models/encoders/, made by export_encoders.py): per model and form, whether it compiles,
# whether every node is delegated, whether attention became et_vk.sdpa, and whether each backend
# computes onnxruntime's outputs of that file (max abs error; fp16 conversions at rtol/atol 1e-2).
#   usage: tests/models/corpus_table.sh [VKC_BINARY [DIR]]   (from the source root; default build/compiler/vkc,
#          tests/models/encoders; tests/models/recurrent has the same layout, made by export_recurrent.py)
# The vulkan column needs a Vulkan device (lavapipe in CI); without one it says why it did not run.
set -euo pipefail
VKC=${1:-build/compiler/vkc}
dir=${2:-tests/models/encoders}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
py=(env PYENV_VERSION=system python3)
# form -> what wrote the file
exporter() {
  case $1 in
    dynamo) echo "torch.onnx dynamo (torch 2.11)" ;;
    legacy) echo "torch.onnx TorchScript (opset 17)" ;;
    ortopt) echo "onnxruntime offline optimization (basic)" ;;
    ortfusion) echo "onnxruntime.transformers optimizer" ;;
    fp16) echo "onnxruntime.transformers float16 (of dynamo)" ;;
    *) echo "$1" ;;
  esac
}
result() {  # PTE DATA BACKEND TOL -> "pass (max abs E)" or "FAIL (...)"
  "$VKC" run "$1" --expect "$2" --backend "$3" --rtol "$4" --atol "$4" --json 2>"$tmp/run.err" |
    "${py[@]}" -c '
import json, sys
j = json.load(sys.stdin)
err = max(o.get("max_abs_err", 0) for o in j["outputs"])
print(("pass" if j["pass"] else "FAIL") + f" ({err:.2g})")' 2>/dev/null ||
    echo "did not run: $(grep -m1 'error' "$tmp/run.err" | cut -c1-80)"
}
echo "| model | exporter / form | compiles | fully delegated | attention | cpu vs onnxruntime (max abs) | lavapipe vs onnxruntime (max abs) |"
echo "|---|---|---|---|---|---|---|"
for d in "$dir"/*/; do
  name=$(basename "$d")
  form=${name##*_}
  model=${name%_*}
  tol=1e-3
  [[ $form == fp16 ]] && tol=1e-2
  pte=$tmp/$name.pte
  if ! "$VKC" compile "$d/model.onnx" -o "$pte" --no-progress -v >"$tmp/out" 2>"$tmp/err"; then
    echo "| $model | $(exporter "$form") | no: $(grep -m1 'error' "$tmp/err" | cut -c1-120) | | | | |"
    continue
  fi
  ratio=$(sed -n 's/^delegated \([0-9]*\) of \([0-9]*\) nodes.*/\1 of \2/p' "$tmp/err")
  families=$("$VKC" inspect "$pte" --json 2>/dev/null)
  attn=-
  if grep -q '"sdpa"' <<<"$families"; then attn=sdpa; elif grep -q '"softmax"' <<<"$families"; then attn="softmax + bmm"; fi
  cpu=$(result "$pte" "$d/test_data_set_0" cpu "$tol")
  vk=$(result "$pte" "$d/test_data_set_0" vulkan "$tol")
  echo "| $model | $(exporter "$form") | yes | ${ratio:-yes} | $attn | $cpu | $vk |"
done
