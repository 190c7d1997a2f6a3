#!/usr/bin/env bash
# Runs the third-party dev models on a vkc runtime backend (BACKEND=cpu, the default, or vulkan)
# and compares them with onnxruntime on the same inputs (opt-in; needs node and
# onnxruntime-node, see docs/conformance.md). REPEAT=N times each run (best of N reported).
#   usage: dev_models_run.sh VKC_BINARY SOURCE_DIR [--doc docs/conformance.md]
# Models come from VKC_MODELS_DIR (default ~/.cache/vkc-models; tests/models/get-dev-models.sh fetches
# what is missing, exit 77 when the npm registry cannot be reached);
# onnxruntime-node from NODE_PATH (default ~/.cache/vkc-bench/node_modules).
set -euo pipefail
VKC=${1:?vkc binary}
SRC=${2:?source dir}
DOC=
[ "${3:-}" = "--doc" ] && DOC=${4:?--doc FILE}
SHARED="$SRC/../shared/models"
DEST=${VKC_MODELS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/vkc-models}
export NODE_PATH=${NODE_PATH:-$HOME/.cache/vkc-bench/node_modules}
RTOL=${RTOL:-1e-3}
ATOL=${ATOL:-1e-4}
BACKEND=${BACKEND:-cpu}
REPEAT=${REPEAT:-1}

# id  vkc arguments, one model a line
MODELS=$(grep -v '^#' "$SRC/tests/models/dev_models.txt")
command -v node >/dev/null || { echo "dev models run: node is not installed" >&2; exit 77; }
node -e "require('onnxruntime-node')" 2>/dev/null || { echo "dev models run: onnxruntime-node not found in NODE_PATH=$NODE_PATH" >&2; exit 77; }
"$SRC/tests/models/get-dev-models.sh" "$DEST" >/dev/null || exit $?

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
table="| model | result | max abs err | max rel err | vkc $BACKEND run, best (ms) | onnxruntime cpu (ms) |
|---|---|---:|---:|---:|---:|"
failures=0
while read -r id args; do
  [ -n "$id" ] || continue
  file=$(awk -F'\t' -v id="$id" '$1 == id { print $5 }' "$DEST/dev/manifest.tsv")
  model="$DEST/dev/$file"
  base=$(basename "$model" .onnx)
  ort_ms=$(ORT_DUMP="$tmp/ort" node "$SHARED/ort-reference.js" "$model" 2>/dev/null | sed -n 's/.*"steady_run_ms":\([0-9.]*\).*/\1/p')
  ort_ms=${ort_ms:+$(printf '%.2f' "$ort_ms")}
  # shellcheck disable=SC2086  # args are words
  if ! "$VKC" compile "$model" $args -o "$tmp/$id.pte" >/dev/null 2>"$tmp/err"; then
    reason=$(sed -n 's/^vkc: error: //p' "$tmp/err")
    reason=${reason#"$model: "}
    reason=${reason:0:110}
    table+=$'\n'"| $id | not compiled: ${reason//|/ } | | | | ${ort_ms:-–} |"
    continue
  fi
  inputs=()
  for f in "$tmp/ort/$base"/input_*.bin; do
    i=${f##*input_}
    inputs+=(--input "${i%.bin}=$f")
  done
  if "$VKC" run "$tmp/$id.pte" --backend "$BACKEND" --repeat "$REPEAT" "${inputs[@]}" --expect "$tmp/ort/$base" --rtol "$RTOL" --atol "$ATOL" >"$tmp/out" 2>"$tmp/err"; then
    result=pass
  else
    result=FAIL
    failures=$((failures + 1))
    grep -q '^vkc: error' "$tmp/err" && result="error: $(sed -n 's/^vkc: error: //p' "$tmp/err" | cut -c1-110)"
  fi
  abs=$(sed -n 's/.*max abs err \([^,]*\),.*/\1/p' "$tmp/out" | sort -g | tail -1)
  rel=$(sed -n 's/.*max rel err \([^,]*\),.*/\1/p' "$tmp/out" | sort -g | tail -1)
  run_ms=$(sed -n 's/.*run first [0-9.]* ms, best \([0-9.]*\) ms.*/\1/p' "$tmp/out")
  table+=$'\n'"| $id | ${result//|/ } | ${abs:-} | ${rel:-} | ${run_ms:-} | ${ort_ms:-–} |"
done <<<"$MODELS"
echo "$table"
if [ -n "$DOC" ]; then
  block=$(printf 'rtol %s, atol %s; inputs are ort-reference.js'"'"'s seeded values; onnxruntime: steady run, 1 thread.\n\n%s\n' "$RTOL" "$ATOL" "$table")
  # the block between <!-- dev-models:begin/end --> (cpu) or <!-- dev-models-vulkan:... -->
  tag=dev-models${BACKEND#cpu}
  tag=${tag/models/models-}; tag=${tag%-}
  awk -v block="$block" -v begin="<!-- $tag:begin -->" -v end="<!-- $tag:end -->" '
    $0 == begin { print; print block; skip = 1; next }
    $0 == end { skip = 0 }
    !skip { print }' "$DOC" >"$tmp/doc" && cat "$tmp/doc" >"$DOC"
fi
[ "$failures" -eq 0 ]
