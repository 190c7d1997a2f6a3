#!/usr/bin/env bash
# compile_bench.sh - wall time and peak RSS of a whole `vkc compile` process, side by side with onnxruntime's
# offline graph optimization (ort_optimize.js: optimizedModelFilePath, level all) of the same model.
#
#   bench/compile_bench.sh [--models DIR] [--repeat N] [--vkc PATH] [--keep-going]
#
#   --models DIR   dev models as fetched by get-dev-models.sh (DIR or DIR/dev holds manifest.tsv). Default:
#                  ${VKC_MODELS_DIR:-$HOME/.cache/vkc-models}, fetched there if missing with the repo's
#                  tests/models/get-dev-models.sh (or VKC_GET_DEV_MODELS=/path/to/script, same interface).
#   --repeat N     timed runs per model and tool, after one untimed warm-up run (default 5). Medians are shown.
#   --vkc PATH     the vkc binary (default: $VKC, else build/compiler/vkc in this repo, else vkc on PATH).
#   --keep-going   after a failed compile, go on with the other models (the exit status is still 1).
#
# onnxruntime-node 1.30.0 is installed on first use under ${XDG_CACHE_HOME:-$HOME/.cache}/vkc-bench (npm, with
# its CUDA-fetching postinstall skipped). Needs bash >= 5, node, npm, awk; GNU time (/usr/bin/time) or python3;
# python3 with numpy and onnx (python3-onnx) to write the mobilenet_v2 model once.
# See bench/README.md for what is measured and how to read the table.
set -euo pipefail

# Benchmark models: id | vkc compile args | ort_optimize.js args (same fixed shapes for both).
# mobilenet_v2 is not fetched: bench/make_mobilenet_v2.py writes it (torchvision's layout, 14 MB of seeded
# random weights, as the TorchScript exporter writes it) into the onnxruntime-node cache folder, once.
BENCH_MODELS=(
  "mobilenet_v2|--input-shape input=1x3x224x224|"
  "ocr_det_ppocrv4|--input-shape x=1x3x640x640|--dim p2o.DynamicDimension.0=1 --dim p2o.DynamicDimension.1=640 --dim p2o.DynamicDimension.2=640"
  "oww_alexa||"
  "oww_timer||"
)
ORT_VERSION=1.30.0

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(dirname "$HERE")

die() { echo "compile_bench: $*" >&2; exit 2; }

MODELS_ARG="" REPEAT=5 VKC_BIN=${VKC:-} KEEP_GOING=0
while [ $# -gt 0 ]; do
  case "$1" in
    --models) MODELS_ARG=${2:?--models needs a directory}; shift 2 ;;
    --repeat) REPEAT=${2:?--repeat needs a number}; shift 2 ;;
    --vkc) VKC_BIN=${2:?--vkc needs a path}; shift 2 ;;
    --keep-going) KEEP_GOING=1; shift ;;
    -h|--help) sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "${BASH_SOURCE[0]}"; exit 0 ;;
    *) die "unknown argument '$1' (see --help)" ;;
  esac
done
[[ "$REPEAT" =~ ^[1-9][0-9]*$ ]] || die "--repeat wants a positive integer, got '$REPEAT'"
[ "${BASH_VERSINFO[0]}" -ge 5 ] || die "needs bash >= 5 (for EPOCHREALTIME)"
for tool in node npm awk; do command -v "$tool" >/dev/null || die "missing tool: $tool"; done

# --- vkc ---------------------------------------------------------------------------------------------------------
if [ -z "$VKC_BIN" ]; then
  if [ -x "$REPO/build/compiler/vkc" ]; then VKC_BIN=$REPO/build/compiler/vkc
  else VKC_BIN=$(command -v vkc) || die "no vkc binary: build it, or pass --vkc PATH"; fi
fi
[ -x "$VKC_BIN" ] || die "vkc binary '$VKC_BIN' is not executable"

# --- onnxruntime-node, outside the repo --------------------------------------------------------------------------
ORT_PREFIX=${XDG_CACHE_HOME:-$HOME/.cache}/vkc-bench
if [ ! -f "$ORT_PREFIX/node_modules/onnxruntime-node/package.json" ]; then
  echo "installing onnxruntime-node@$ORT_VERSION under $ORT_PREFIX" >&2
  mkdir -p "$ORT_PREFIX"
  # the package's postinstall fetches CUDA binaries from a host that is not the npm registry; the CPU EP is bundled
  ONNXRUNTIME_NODE_INSTALL=skip npm install --prefix "$ORT_PREFIX" --no-save --no-audit --no-fund --loglevel=error \
    "onnxruntime-node@$ORT_VERSION" >&2 || die "npm install onnxruntime-node failed"
fi
export NODE_PATH=$ORT_PREFIX/node_modules

# --- models ------------------------------------------------------------------------------------------------------
find_manifest() { # DIR -> directory holding manifest.tsv
  if [ -f "$1/dev/manifest.tsv" ]; then echo "$1/dev"; elif [ -f "$1/manifest.tsv" ]; then echo "$1"; else return 1; fi
}
if [ -n "$MODELS_ARG" ]; then
  MODEL_DIR=$(find_manifest "$MODELS_ARG") || die "no manifest.tsv in $MODELS_ARG or $MODELS_ARG/dev"
else
  MODELS_HOME=${VKC_MODELS_DIR:-$HOME/.cache/vkc-models}
  if ! MODEL_DIR=$(find_manifest "$MODELS_HOME"); then
    GET=${VKC_GET_DEV_MODELS:-$REPO/tests/models/get-dev-models.sh}
    [ -f "$GET" ] || die "no models in $MODELS_HOME and no $GET; pass --models DIR or set VKC_GET_DEV_MODELS"
    echo "fetching dev models into $MODELS_HOME" >&2
    bash "$GET" "$MODELS_HOME" >&2 || die "get-dev-models.sh failed (exit $?)"
    MODEL_DIR=$(find_manifest "$MODELS_HOME") || die "get-dev-models.sh left no manifest in $MODELS_HOME"
  fi
fi
model_path() { # id -> absolute path of the model file
  if [ "$1" = mobilenet_v2 ]; then
    local made=$ORT_PREFIX/mobilenet_v2.onnx
    [ -f "$made" ] || python3 "$HERE/make_mobilenet_v2.py" "$made" >&2 || return 1
    echo "$made"
    return
  fi
  local rel
  rel=$(awk -F'\t' -v id="$1" 'NR > 1 && $1 == id { print $5; exit }' "$MODEL_DIR/manifest.tsv")
  [ -n "$rel" ] && [ -f "$MODEL_DIR/$rel" ] || return 1
  echo "$MODEL_DIR/$rel"
}

# --- measurement -------------------------------------------------------------------------------------------------
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

# measure OUTFILE ERRFILE CMD... : runs CMD (stdout to OUTFILE, stderr to ERRFILE) and prints "WALL_S RSS_KIB".
# Wall time comes from bash's microsecond EPOCHREALTIME around the GNU time wrapper (its own %e has only 10 ms
# resolution); peak RSS is GNU time's %M. Without GNU time a python3 wrapper times the child with perf_counter and
# reads ru_maxrss of RUSAGE_CHILDREN. Returns the command's exit status.
if [ -x /usr/bin/time ] && /usr/bin/time -f '%M' -o /dev/null true 2>/dev/null; then
  measure() {
    local out=$1 err=$2 t0 t1 rc=0; shift 2
    t0=$EPOCHREALTIME
    /usr/bin/time -f '%M' -o "$WORK/rusage" "$@" >"$out" 2>"$err" || rc=$?
    t1=$EPOCHREALTIME
    awk -v a="$t0" -v b="$t1" -v r="$(tail -n 1 "$WORK/rusage")" 'BEGIN { printf "%.6f %d\n", b - a, r }'
    return "$rc"
  }
  TIMER="GNU time (RSS) + EPOCHREALTIME (wall)"
else
  command -v python3 >/dev/null || die "needs GNU time (/usr/bin/time) or python3"
  measure() {
    local out=$1 err=$2 rc=0; shift 2
    python3 -c 'import resource, subprocess, sys, time
t0 = time.perf_counter()
with open(sys.argv[1], "wb") as o, open(sys.argv[2], "wb") as e:
    rc = subprocess.call(sys.argv[4:], stdout=o, stderr=e)
wall = time.perf_counter() - t0
with open(sys.argv[3], "w") as f:
    f.write("%.6f %d\n" % (wall, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss))
sys.exit(rc)' "$out" "$err" "$WORK/rusage" "$@" || rc=$?
    cat "$WORK/rusage"
    return "$rc"
  }
  TIMER="python3 perf_counter (wall) + getrusage(RUSAGE_CHILDREN) (RSS)"
fi

median() { sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
maxval() { sort -g | tail -n 1; }

# bench_tool NAME CMD... : warm-up + REPEAT timed runs; sets RES_WALL (median s), RES_RSS (max KiB), RES_ERR
# (first stderr line on failure) and leaves stdout of the last run in $WORK/NAME.out. Returns 1 on failure.
bench_tool() {
  local name=$1 i m; shift
  : >"$WORK/$name.wall"; : >"$WORK/$name.rss"
  for ((i = 0; i <= REPEAT; i++)); do
    if ! m=$(measure "$WORK/$name.out" "$WORK/$name.err" "$@"); then
      RES_ERR=$(grep -m 1 . "$WORK/$name.err" || echo "exit status non-zero, no stderr")
      RES_ERR=${RES_ERR//|//}
      [ "${#RES_ERR}" -le 150 ] || RES_ERR="${RES_ERR:0:147}..."
      { echo "--- $name failed: $*"; cat "$WORK/$name.err"; } >&2
      return 1
    fi
    [ "$i" -eq 0 ] && continue # warm-up (page cache, dynamic loader)
    echo "${m% *}" >>"$WORK/$name.wall"; echo "${m#* }" >>"$WORK/$name.rss"
  done
  RES_WALL=$(median <"$WORK/$name.wall")
  RES_RSS=$(maxval <"$WORK/$name.rss")
}

# --- run ---------------------------------------------------------------------------------------------------------
cpu=$(awk -F': *' '/^model name/ { print $2; exit }' /proc/cpuinfo 2>/dev/null || true)
echo "machine: $(uname -m), nproc $(nproc), ${cpu:-unknown CPU}, $(awk '/MemTotal/ { printf "%.1f GiB RAM", $2 / 1048576 }' /proc/meminfo 2>/dev/null)"
echo "vkc: $VKC_BIN ($("$VKC_BIN" --version 2>/dev/null | head -n 1 || echo 'version unknown'))"
echo "ort: onnxruntime-node $ORT_VERSION, CPU EP, 1 thread, graphOptimizationLevel all, optimizedModelFilePath"
echo "runs: 1 warm-up + $REPEAT timed per model and tool; wall = median, RSS = max; timer: $TIMER"
for ((i = 0; i < 5; i++)); do measure /dev/null /dev/null true | awk '{ print $1 }'; done >"$WORK/true.wall"
echo "harness overhead (median wall of measuring /bin/true, included in every figure): $(median <"$WORK/true.wall" | awk '{ printf "%.1f ms", $1 * 1000 }')"
echo "date: $(date -u '+%Y-%m-%d %H:%M UTC')"
echo

ROWS=() FAILED=0
for entry in "${BENCH_MODELS[@]}"; do
  IFS='|' read -r id vkc_args ort_args <<<"$entry"
  read -ra vkc_argv <<<"$vkc_args"
  read -ra ort_argv <<<"$ort_args"
  if ! model=$(model_path "$id"); then
    ROWS+=("$id|FAILED: model not found in $MODEL_DIR/manifest.tsv"); FAILED=1
  else
    echo "benchmarking $id ..." >&2
    if ! bench_tool vkc "$VKC_BIN" compile "$model" -o "$WORK/out.pte" "${vkc_argv[@]}"; then
      ROWS+=("$id|FAILED: $RES_ERR"); FAILED=1
    else
      vw=$RES_WALL vr=$RES_RSS
      if ! bench_tool ort node "$HERE/ort_optimize.js" "$model" "$WORK/out.onnx" "${ort_argv[@]}"; then
        ROWS+=("$id|ORT FAILED: $RES_ERR"); FAILED=1
      else
        os=$(awk -F= '/^session_create_s=/ { print $2 }' "$WORK/ort.out")
        ROWS+=("$(awk -v id="$id" -v vw="$vw" -v vr="$vr" -v ow="$RES_WALL" -v or="$RES_RSS" -v os="$os" 'BEGIN {
          printf "%s|%.3f|%.1f|%.3f|%.1f|%.1fx|%.1fx|%.3f", id, vw, vr / 1024, ow, or / 1024, ow / vw, or / vr, os }')")
      fi
    fi
  fi
  if [ "$FAILED" -eq 1 ] && [ "$KEEP_GOING" -eq 0 ]; then
    echo "(stopped at the first failure; --keep-going runs the other models)" >&2
    break
  fi
done

fmt='%-18s %11s %12s %11s %12s %8s %9s %14s\n'
# shellcheck disable=SC2059 # fmt is a fixed format string
printf "$fmt" model "vkc wall s" "vkc RSS MiB" "ORT wall s" "ORT RSS MiB" speedup "RSS ratio" "ORT session s"
for row in "${ROWS[@]}"; do
  IFS='|' read -r -a f <<<"$row"
  if [ "${#f[@]}" -eq 2 ]; then
    printf '%-18s %s\n' "${f[0]}" "${f[1]}"
  else
    # shellcheck disable=SC2059
    printf "$fmt" "${f[@]}"
  fi
done
echo "speedup = ORT wall / vkc wall; RSS ratio = ORT peak RSS / vkc peak RSS (both whole processes);"
echo "ORT session s = time inside node for InferenceSession.create (optimize + save), for reference."
exit "$FAILED"
