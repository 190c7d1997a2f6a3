#!/usr/bin/env bash
# Compiles the third-party dev models (fetched at test time, never committed) and
# prints, per model, how many of its nodes were delegated. Every model must compile fully
# (MUST_COMPILE lists them all; a model added later may start outside it with its reason).
#   usage: dev_models_test.sh VKC_BINARY SOURCE_DIR
set -euo pipefail
VKC=${1:?vkc binary}
SRC=${2:?source dir}
FETCH="$SRC/../shared/models/get-dev-models.sh"
DEST=${VKC_MODELS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/vkc-models}

# id  vkc arguments, one model a line
MODELS=$(grep -v '^#' "$SRC/tests/models/dev_models.txt")
MUST_COMPILE="ocr_det_ppocrv4 ocr_rec_ppocrv4 ocr_cls_mobile_v2 blazeface_front_128 blazeface_back_256 oww_melspectrogram
  oww_embedding oww_hey_jarvis oww_alexa oww_timer"

if [ ! -f "$DEST/dev/manifest.tsv" ]; then
  [ -x "$FETCH" ] || { echo "dev models: $FETCH not found (shared/ must sit beside the repository)" >&2; exit 1; }
  SKIP_APT=1 "$FETCH" "$DEST" >/dev/null
fi

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
    result="not compiled: $(grep '^vkc: error' "$tmp/err" | cut -c1-150)"
    case " $MUST_COMPILE " in *" $id "*) failures=$((failures + 1)) ;; esac
  fi
  ratio=$(sed -n 's/^delegated \([0-9]*\) of \([0-9]*\) nodes.*/\1\/\2/p' "$tmp/err")
  printf '%-22s %10s  %s\n' "$id" "${ratio:--}" "$result"
done <<<"$MODELS"
[ "$failures" -eq 0 ] || { echo "dev models: $failures model(s) that must compile did not" >&2; exit 1; }
