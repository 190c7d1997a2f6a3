#!/usr/bin/env bash
# Regenerates the generated sections of the docs from the built vkc:
#   docs/op-coverage.md, between the "BEGIN GENERATED: vkc ops" and "END GENERATED" markers.
#   usage: scripts/gen_docs.sh [VKC]    (default: ${VKC_BUILD_DIR:-build}/compiler/vkc)
# tests/compiler/op_coverage_doc_test.sh fails when the committed section is stale.
set -euo pipefail
cd "$(dirname "$0")/.."
VKC=${1:-${VKC_BUILD_DIR:-build}/compiler/vkc}
doc=docs/op-coverage.md
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
"$VKC" ops > "$tmp"
awk -v gen="$tmp" '
  /<!-- BEGIN GENERATED: vkc ops -->/ { print; while ((getline line < gen) > 0) print line; skip = 1; next }
  /<!-- END GENERATED -->/ { skip = 0 }
  !skip { print }
' "$doc" > "$doc.new"
mv "$doc.new" "$doc"
