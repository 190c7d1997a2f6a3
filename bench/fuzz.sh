#!/usr/bin/env bash
# Runs every libFuzzer target (tests/fuzz) long, and prints executions and findings per target.
#
#   bench/fuzz.sh [SECONDS] [--build DIR] [--targets onnx,pte,...] [--jobs N]
#
# SECONDS per target (default 600). The fuzz build (clang, -DVKC_FUZZ=ON: ASan + UBSan) is made in
# DIR (default build-fuzz) when missing. Each target starts from tests/fuzz/corpus/<target>/ and
# keeps what it grows in DIR/fuzz-corpus/<target>/ (reused by the next run); a crash, leak, timeout
# or sanitizer report is saved under DIR/fuzz-artifacts/<target>/ (reproduce: DIR/tests/fuzz/fuzz_<target>
# FILE). Every finding becomes a regression test (tests/fuzz/regressions/<target>/, run by ctest -L fuzz).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=600 build=build-fuzz targets="onnx,pte,ptd,vk_payload,shader_spec,device_profile,tensor_file,executor,tokenizer" jobs=1
while (($#)); do
  case $1 in
    --build) build=$2; shift 2 ;;
    --targets) targets=$2; shift 2 ;;
    --jobs) jobs=$2; shift 2 ;;
    -h|--help) sed -n '2,11p' "$0"; exit 0 ;;
    [0-9]*) seconds=$1; shift ;;
    *) echo "fuzz: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
command -v clang++ >/dev/null || { echo "fuzz: needs clang (scripts/setup.sh installs it)" >&2; exit 2; }
if [[ ! -f $build/CMakeCache.txt ]]; then
  CC=clang CXX=clang++ cmake -G Ninja -S . -B "$build" -DVKC_FUZZ=ON -DVKC_BUILD_TESTS=OFF \
    -DVKC_SHADER_CACHE="$PWD/build/shader-specs/cache" >&2
fi
IFS=, read -ra list <<< "$targets"
ninja -C "$build" "${list[@]/#/fuzz_}" >&2
printf '%-16s %8s %12s %10s %9s  %s\n' target seconds execs execs/s corpus findings
status=0
for t in "${list[@]}"; do
  corpus=$build/fuzz-corpus/$t artifacts=$build/fuzz-artifacts/$t
  mkdir -p "$corpus" "$artifacts"
  log=$build/fuzz-$t.log
  set +e
  "$build/tests/fuzz/fuzz_$t" -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=20 -max_len=1048576 \
    -print_final_stats=1 -artifact_prefix="$artifacts/" -jobs="$jobs" -workers="$jobs" \
    "$corpus" "tests/fuzz/corpus/$t" > "$log" 2>&1
  rc=$?
  set -e
  execs=$(grep -ho 'stat::number_of_executed_units: *[0-9]*' "$log" "$build"/fuzz-"$t"*.log 2>/dev/null | awk '{s += $2} END {print s + 0}')
  found=$(find "$artifacts" -type f | wc -l)
  ((found)) && status=1
  printf '%-16s %8s %12s %10.0f %9s  %s\n' "$t" "$seconds" "$execs" "$(echo "$execs / $seconds" | bc -l)" \
    "$(ls "$corpus" | wc -l)" "$( ((found)) && echo "$found in $artifacts (exit $rc)" || echo none)"
done
exit $status
