#!/usr/bin/env bash
# Compiles the third-party dev models (fetched at test time by get-dev-models.sh, never committed)
# and prints, per model, how many of its nodes were delegated. Every model must compile fully
# (MUST_COMPILE lists them all; a model added later may start outside it with its reason).
#   usage: dev_models_test.sh VKC_BINARY SOURCE_DIR [BUILD_DIR]
# Models go to $VKC_MODELS_DIR, else BUILD_DIR/dev-models, else ~/.cache/vkc-models.
# Exits 77 (a skip for ctest) when they are not there yet and the npm registry cannot be reached.
set -euo pipefail
VKC=${1:?vkc binary}
SRC=${2:?source dir}
BUILD=${3:-}
FETCH="$SRC/tests/models/get-dev-models.sh"
if [ -n "$BUILD" ]; then
  DEST=${VKC_MODELS_DIR:-$BUILD/dev-models}
else
  DEST=${VKC_MODELS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/vkc-models}
fi

# id  vkc arguments, one model a line
MODELS=$(grep -v '^#' "$SRC/tests/models/dev_models.txt")
MUST_COMPILE="ocr_det_ppocrv4 ocr_rec_ppocrv4 ocr_cls_mobile_v2 blazeface_front_128 blazeface_back_256 oww_melspectrogram
  oww_embedding oww_hey_jarvis oww_alexa oww_timer"

# checks what is there and fetches only what is missing (no network when all is in place)
"$FETCH" "$DEST" >/dev/null || exit $?

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0
printf '%-22s %10s  %s\n' model delegated result
while read -r id args; do
  [ -n "$id" ] || continue
  file=$(awk -F'\t' -v id="$id" '$1 == id { print $5 }' "$DEST/dev/manifest.tsv")
  [ -n "$file" ] || { echo "dev models: $id missing from the manifest" >&2; exit 1; }
  # shellcheck disable=SC2086  # args are words
  if "$VKC" compile "$DEST/dev/$file" $args -v -o "$tmp/$id.pte" >"$tmp/out" 2>"$tmp/err"; then
    result="compiled, $(stat -c %s "$tmp/$id.pte") bytes"
  else
    # vkc's error line, or (a crash, a sanitizer report) the last line it wrote
    why=$(grep '^vkc: error' "$tmp/err" || tail -n 1 "$tmp/err" || true)
    result="not compiled: ${why:0:150}"
    case " $MUST_COMPILE " in *" $id "*) failures=$((failures + 1)) ;; esac
  fi
  ratio=$(sed -n 's/^delegated \([0-9]*\) of \([0-9]*\) nodes.*/\1\/\2/p' "$tmp/err")
  printf '%-22s %10s  %s\n' "$id" "${ratio:--}" "$result"
done <<<"$MODELS"
[ "$failures" -eq 0 ] || { echo "dev models: $failures model(s) that must compile did not" >&2; exit 1; }
