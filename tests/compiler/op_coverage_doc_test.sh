#!/usr/bin/env bash
# docs/op-coverage.md's generated section must equal what `vkc ops` prints now.
#   usage: op_coverage_doc_test.sh VKC SOURCE_DIR
set -euo pipefail
VKC=${1:?vkc}
DOC=${2:?source dir}/docs/op-coverage.md
committed=$(awk '/<!-- END GENERATED -->/ { on = 0 } on { print } /<!-- BEGIN GENERATED: vkc ops -->/ { on = 1 }' "$DOC")
if [ "$committed" != "$("$VKC" ops)" ]; then
  diff <(printf '%s\n' "$committed") <("$VKC" ops) | head -20 >&2 || true
  echo "docs/op-coverage.md is stale: run scripts/gen_docs.sh" >&2
  exit 1
fi
echo "docs/op-coverage.md matches vkc ops"
