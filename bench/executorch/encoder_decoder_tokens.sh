#!/usr/bin/env bash
# Compiles the encoder-decoder exports of tests/models/encoder_decoder (made by
# export_encoder_decoder.py: Whisper- and T5-shaped encoders and decoder steps) into one program each
# (`vkc compile STEP --encoder ENCODER --max-seq-len N`) and generates greedily from the fixed encoder
# input with `vkc run` (cpu, vulkan) and with ExecuTorch's runtime (et_runner, bench/executorch/build.sh),
# printing per program the tokens and whether each runner gives transformers' (greedy.json).
#
#   bench/executorch/encoder_decoder_tokens.sh [--runner PATH] [--vkc PATH] [--work DIR] [--max-seq-len N]
#
# Exit 1 if any run fails or any tokens differ; 2 when a runner is missing.
set -uo pipefail
# shellcheck source=bench/executorch/runners.sh
. "$(dirname "$0")/runners.sh"
runners_defaults
max_seq=32
while [ $# -gt 0 ]; do
  if runners_option "$1" "${2:-}"; then shift 2; continue; fi
  case "$1" in
    --max-seq-len) max_seq=$2; shift ;;
    -h|--help) sed -n 2,10p "$0" >&2; exit 2 ;;
    *) echo "encoder_decoder_tokens.sh: unknown option '$1'" >&2; exit 2 ;;
  esac
  shift
done
runners_ready encoder_decoder_tokens.sh
corpus="$root/tests/models/encoder_decoder"
status=0
printf "%-24s %-8s %-8s %-8s %s\n" program cpu vulkan ET tokens
for step in "$corpus"/*/*_decoder_*/; do
  step=${step%/}
  name=$(basename "$step")
  family=$(dirname "$step")
  encoder="$family/${name/_decoder_/_encoder_}"
  [ -f "$encoder/model.onnx" ] || continue
  read -r want start dims < <(python3 - "$family/greedy.json" <<'PY'
import json, sys
g = json.load(open(sys.argv[1]))
dims = "--dim encoder_sequence=10" if g["encoder_input"] == "input_ids" else ""
print(",".join(map(str, g["greedy_full_sequence"])), ",".join(map(str, g["decoder_start_ids"])), dims)
PY
)
  n=$(echo "$want" | tr ',' '\n' | wc -l)
  pte="$work/$name.pte"
  # shellcheck disable=SC2086  # dims: zero or two words
  if ! "$vkc" compile "$step/model.onnx" --encoder "$encoder/model.onnx" --max-seq-len "$max_seq" --dim sequence=1 \
      $dims -o "$pte" > "$work/$name.log" 2>&1; then
    printf "%-24s compile failed: %s\n" "$name" "$(tail -1 "$work/$name.log")"; status=1; continue
  fi
  input="$encoder/test_data_set_0/input_0.pb"
  row=()
  for b in cpu vulkan; do
    got=$("$vkc" run "$pte" --backend "$b" --generate "$n" --prompt-ids "$start" --input "$input" 2>/dev/null |
          sed -n 's/^tokens: //p' | tr ' ' ',')
    [ "$got" = "$want" ] && row+=("=") || { row+=("${got:-failed}"); status=1; }
  done
  got=$("$runner" "$pte" --generate "$n" --prompt-ids "$start" --input "$input" 2>/dev/null |
        sed -n 's/^tokens: //p' | tr ' ' ',')
  [ "$got" = "$want" ] && row+=("=") || { row+=("${got:-failed}"); status=1; }
  printf "%-24s %-8s %-8s %-8s %s\n" "$name" "${row[0]}" "${row[1]}" "${row[2]}" "$want"
done
exit $status
