#!/usr/bin/env bash
# Runs the third-party dev models on a vkc runtime backend (BACKEND=cpu, the default, or vulkan)
# and compares them with onnxruntime on the same inputs (opt-in; needs node and
# onnxruntime-node, see docs/conformance.md). REPEAT=N times each run (best of N reported).
#   usage: dev_models_run.sh VKC_BINARY SOURCE_DIR [--doc docs/conformance.md]
# Models come from VKC_MODELS_DIR (default ~/.cache/vkc-models; tests/models/get-dev-models.sh fetches
# what is missing, exit 77 when the npm registry cannot be reached). The references come from
# tests/conformance/ort-reference.js, with onnxruntime-node from NODE_PATH; without NODE_PATH,
# onnxruntime-node@1.30.0 is installed on first use under ~/.cache/vkc-bench (as bench/compile_bench.sh
# does; exit 77 when that fails).
set -euo pipefail
VKC=${1:?vkc binary}
SRC=${2:?source dir}
DOC=
[ "${3:-}" = "--doc" ] && DOC=${4:?--doc FILE}
ORT_REFERENCE="$SRC/tests/conformance/ort-reference.js"
ORT_VERSION=1.30.0
DEST=${VKC_MODELS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/vkc-models}
RTOL=${RTOL:-1e-3}
ATOL=${ATOL:-1e-4}
BACKEND=${BACKEND:-cpu}
REPEAT=${REPEAT:-1}

# id  vkc arguments, one model a line
MODELS=$(grep -v '^#' "$SRC/tests/models/dev_models.txt")
command -v node >/dev/null || { echo "dev models run: node is not installed" >&2; exit 77; }
if [ -z "${NODE_PATH:-}" ]; then
  # the cache bench/compile_bench.sh installs into; never inside the source tree
  ORT_PREFIX=${XDG_CACHE_HOME:-$HOME/.cache}/vkc-bench
  export NODE_PATH=$ORT_PREFIX/node_modules
  if ! node -e "require('onnxruntime-node')" 2>/dev/null && command -v npm >/dev/null; then
    echo "dev models run: installing onnxruntime-node@$ORT_VERSION under $ORT_PREFIX" >&2
    mkdir -p "$ORT_PREFIX"
    # its postinstall would fetch CUDA libraries from outside the npm registry; the CPU EP is in the package
    ONNXRUNTIME_NODE_INSTALL=skip npm install --prefix "$ORT_PREFIX" --no-save --no-audit --no-fund --loglevel=error \
      --fetch-retries=1 --fetch-timeout=60000 "onnxruntime-node@$ORT_VERSION" </dev/null >&2 || true
  fi
fi
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
  # the shapes vkc compiles with (--input-shape NAME=DxD...) are the shapes onnxruntime gets
  # and the values it binds (--input-value NAME=V) are the values onnxruntime is fed
  shapes=() values=() prev=
  # shellcheck disable=SC2086  # args are words
  for a in $args; do
    [ "$prev" = --input-shape ] && shapes+=("$a")
    [ "$prev" = --input-value ] && values+=("$a")
    case $a in --input-shape=*) shapes+=("${a#--input-shape=}") ;; --input-value=*) values+=("${a#--input-value=}") ;; esac
    prev=$a
  done
  ort_json=$(ORT_DUMP="$tmp/ort" ORT_INPUT_SHAPES="${shapes[*]}" ORT_INPUT_VALUES="${values[*]}" node "$ORT_REFERENCE" "$model" 2>&1 || true)
  ort_ms=$(sed -n 's/.*"steady_run_ms":\([0-9.]*\).*/\1/p' <<<"$ort_json")
  ort_ms=${ort_ms:+$(printf '%.2f' "$ort_ms")}
  if ! grep -q '"ok":true' <<<"$ort_json"; then
    reason=$(sed -n 's/.*"error":"\(.*\)".*/\1/p' <<<"$ort_json" | head -1)
    reason=${reason:-$(tail -1 <<<"$ort_json")}
    reason=${reason:0:110}
    table+=$'\n'"| $id | no onnxruntime reference: ${reason//|/ } | | | | – |"
    failures=$((failures + 1))
    continue
  fi
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
