# Sourced by compare.sh and compare_exports.sh: where the two runners are, and the work folder.
#   runners_defaults          sets root, runner (ET_RUNNER or the build.sh output), vkc (VKC or
#                             the build tree's), repeat=20 and work=""
#   runners_option OPT VALUE  takes --runner, --vkc, --repeat and --work (status 0: shift 2)
#   export_folders DIR...     sets folders: each DIR holding a model.onnx, else its sub-folders that do
#   runners_ready NAME        exits 2 with NAME's message when either runner is missing; makes
#                             $work (a temporary folder removed at exit when none was given)
# shellcheck shell=bash disable=SC2034  # its variables are the sourcing script's
runners_defaults() {
  root=$(cd "$(dirname "${BASH_SOURCE[1]}")/../.." && pwd)
  runner="${ET_RUNNER:-${XDG_CACHE_HOME:-$HOME/.cache}/vkc-bench/executorch/et_runner}"
  vkc="${VKC:-$root/build/compiler/vkc}"
  repeat=20 work=""
}

runners_option() {
  case "$1" in
    --runner) runner=$2 ;;
    --vkc) vkc=$2 ;;
    --repeat) repeat=$2 ;;
    --work) work=$2 ;;
    *) return 1 ;;
  esac
}

runners_ready() {
  [ -x "$runner" ] || { echo "$1: no et_runner at $runner (bench/executorch/build.sh makes it)" >&2; exit 2; }
  [ -x "$vkc" ] || { echo "$1: no vkc at $vkc" >&2; exit 2; }
  if [ -z "$work" ]; then
    work=$(mktemp -d "${TMPDIR:-/tmp}/vkc-et-XXXXXX")
    trap 'rm -rf "$work"' EXIT
  fi
  mkdir -p "$work"
}

export_folders() {
  folders=()
  local d f
  for d in "$@"; do
    if [ -f "$d/model.onnx" ]; then folders+=("${d%/}")
    else for f in "$d"/*/; do [ -f "$f/model.onnx" ] && folders+=("${f%/}"); done
    fi
  done
}
