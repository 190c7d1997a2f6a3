#!/bin/bash
# Builds the coopmat_exp.comp variants into OUT_DIR, named as
# coopmat_check's --spv option reads them: s_<TM>x<TN>_k<BK>_i<INV>_kn0_<tag>.spv.
#   GLSLANG=/path/to/glslang (14 or later; Debian's lacks GL_KHR_cooperative_matrix)
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
OUTDIR=${1:?usage: build.sh OUT_DIR}
GLSLANG=${GLSLANG:-/root/.cache/vkc-bench/executorch/glslang-build/StandAlone/glslang}
mkdir -p "$OUTDIR"
# variant SOURCE TAG TM TN BK INV -DNAME=V...: builds s_<TM>x<TN>_k<BK>_i<INV>_kn0_<TAG>.spv from
# SOURCE with the tile's defines and the rest, and names it.
variant() {
  local src=$1 tag=$2 tm=$3 tn=$4 bk=$5 inv=$6
  shift 6
  local out=$OUTDIR/s_${tm}x${tn}_k${bk}_i${inv}_kn0_${tag}.spv log
  if ! log=$("$GLSLANG" --target-env vulkan1.3 -V -DTM=$tm -DTN=$tn -DBK=$bk -DINV=$inv "$@" "$HERE/$src" -o "$out" 2>&1); then
    echo "$log" >&2
    exit 1
  fi
  # SPIRV_VAL: a spirv-val that knows SPV_KHR_cooperative_matrix (SPIRV-Tools 2023.3 or later).
  [ -z "${SPIRV_VAL:-}" ] || "$SPIRV_VAL" --target-env vulkan1.3 "$out"
  basename "$out"
}
# variants SOURCE NAME...: one variant per line of stdin (# comments and blank lines skipped):
# TAG TM TN SG_M SG_N BK INV, then one value per NAME, passed as -DNAME=value.
variants() {
  local src=$1
  shift
  local names=("$@") tag tm tn sgm sgn bk inv rest i
  while read -r tag tm tn sgm sgn bk inv rest; do
    case $tag in ''|\#*) continue ;; esac
    local values=() defines=(-DSG_M=$sgm -DSG_N=$sgn)
    read -r -a values <<<"$rest"
    [ ${#values[@]} -eq ${#names[@]} ] || { echo "build.sh: $tag: ${#names[@]} values after INV expected" >&2; exit 1; }
    for i in "${!names[@]}"; do defines+=("-D${names[$i]}=${values[$i]}"); done
    variant "$src" "$tag" "$tm" "$tn" "$bk" "$inv" "${defines[@]}"
  done
}
# name  TM TN SG_M SG_N BK INV STAGES RSETS FRAG_DB GROUP_M
variants coopmat_exp.comp STAGES RSETS FRAG_DB GROUP_M <<'LIST'
# control: linear_coopmat's schedule (1 stage, K 48, next step in registers)
base     128 256 64 64 48 256 1 1 0 0
# fragments for k+16 read from shared memory before k's multiplies
fdb      128 256 64 64 48 256 1 1 1 0
# two register sets: global loads get two steps to land before the stash
r2       128 256 64 64 48 256 1 2 0 0
r2       128 256 64 64 32 256 1 2 0 0
# two shared stages of K 16 (36 KiB), one barrier per step, two register sets
st2r2    128 256 64 64 16 256 2 2 0 0
# 4 subgroups of 64x64, two stages of K 32 (40 KiB): room for 2 workgroups per SM
st2r2    128 128 64 64 32 128 2 2 0 0
# tiles in groups of 16 tile rows (L2 reuse)
g16      128 256 64 64 48 256 1 1 0 16
# K 32, two register sets, fragment double-buffering, groups of 16 rows
r2fdbg16 128 256 64 64 32 256 1 2 1 16
LIST

# coopmat_peak.comp: the multiply-add ceiling (SMEM 0) and with shared-memory fragment loads (SMEM 1).
# name  TM TN SG_M SG_N BK INV SMEM
variants coopmat_peak.comp SMEM <<'LIST'
peakreg  128 256 64 64 48 256 0
peakreg  128 128 64 64 48 128 0
peakreg  128 128 64 32 48 256 0
peaksmem 128 256 64 64 48 256 1
peaksmem 128 128 64 64 48 128 1
peaksmem 128 128 64 32 48 256 1
LIST

# coopmat_bdirect.comp: B's fragments read straight from the buffer (A staged), K step BK.
for bk in 32 64 128; do
  out=$OUTDIR/s_128x256_k${bk}_i256_kn0_bdirect.spv  # its tile is fixed in the source
  "$GLSLANG" --target-env vulkan1.3 -V -DBK=$bk "$HERE/coopmat_bdirect.comp" -o "$out" >/dev/null || exit 1
  basename "$out"
done

# The staging of coopmat_exp.comp without the products (NO_MMA), and its global loads alone
# (LOADS_ONLY: no shared stores, no barriers): what the tile's operand traffic costs by itself.
# name  TM TN SG_M SG_N BK INV RSETS NO_MMA LOADS_ONLY
variants coopmat_exp.comp RSETS NO_MMA LOADS_ONLY <<'LIST'
stage    128 256 64 64 48 256 1 1 0
loads    128 256 64 64 48 256 1 1 1
loads    128 256 64 64 32 256 2 1 1
loads    128 128 64 32 64 256 1 1 1
loads    128 128 64 32 32 256 2 1 1
LIST

# Tenth session: copies straight into the free stage (DIRECT, a two-stage ring), and fp16
# accumulators (ACC16: half the accumulator registers, so 64x128 or 128x64 blocks per subgroup;
# coopmat_check's tolerance for names with acc16 allows for the fp16 running sum).
# name  TM TN SG_M SG_N BK INV STAGES DIRECT ACC16
variants coopmat_exp.comp STAGES DIRECT ACC16 <<'LIST'
direct       128 256 64 64  16 256 2 1 0
direct       128 128 64 32  32 256 2 1 0
direct       128 128 64 64  32 128 2 1 0
acc16        128 256 64 64  48 256 1 0 1
acc16        128 256 64 128 32 128 1 0 1
acc16        128 256 64 128 48 128 1 0 1
directacc16  128 256 64 128 16 128 2 1 1
directacc16  128 256 64 64  16 256 2 1 1
acc16        256 256 128 64 32 256 1 0 1
acc16        256 256 128 64 16 256 1 0 1
directacc16  256 256 128 64 16 256 2 1 1
LIST
