#!/usr/bin/env bash
# Compiles the encoder-decoder exports of tests/models/encoder_decoder (made by
# export_encoder_decoder.py: Whisper- and T5-shaped encoders and decoder steps) into one program each
# (`vkc compile STEP --encoder ENCODER --max-seq-len N`) and generates greedily from the fixed encoder
# input with `vkc run` (cpu, vulkan) and with ExecuTorch's runtime (et_runner, bench/executorch/build.sh),
# printing per program the tokens and whether each runner gives transformers' (greedy.json); then
# T5 programs over a range of encoder lengths (the torch.onnx step and optimum's merged decoder) on
# texts of several lengths.
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

# Programs over a range of encoder lengths (`--dim ...=4..24`): T5's torch.onnx step and optimum's
# merged decoder (t5_optimum), each run on every encoder input its greedy.json lists (texts of 10,
# 6 and 13 tokens; optimum's encoder also takes an attention mask of ones).
t5="$corpus/t5" opt="$corpus/t5_optimum"
if [ -f "$opt/decoder_model_merged.onnx" ]; then
  "$vkc" compile "$t5/t5_decoder_legacy/model.onnx" --encoder "$t5/t5_encoder_legacy/model.onnx" --max-seq-len "$max_seq" \
    --dim sequence=1 --dim encoder_sequence=4..24 -o "$work/t5_range.pte" > "$work/t5_range.log" 2>&1 || {
    printf "%-24s compile failed: %s\n" t5_range "$(tail -1 "$work/t5_range.log")"; status=1; }
  "$vkc" compile "$opt/decoder_model_merged.onnx" --encoder "$opt/encoder_model.onnx" --max-seq-len "$max_seq" \
    --dim batch_size=1 --dim decoder_sequence_length=1 --dim encoder_sequence_length=4..24 -o "$work/t5_optimum.pte" \
    > "$work/t5_optimum.log" 2>&1 || {
    printf "%-24s compile failed: %s\n" t5_optimum "$(tail -1 "$work/t5_optimum.log")"; status=1; }
  while read -r name inputs want; do
    pte="$work/${name%%:*}.pte"
    [ -f "$pte" ] || continue
    read -r -a files <<< "${inputs//:/ }"
    n=$(echo "$want" | tr ',' '\n' | wc -l)
    row=()
    for b in cpu vulkan; do
      got=$("$vkc" run "$pte" --backend "$b" --generate "$n" --prompt-ids 0 --input "${files[@]}" 2>/dev/null |
            sed -n 's/^tokens: //p' | tr ' ' ',')
      [ "$got" = "$want" ] && row+=("=") || { row+=("${got:-failed}"); status=1; }
    done
    got=$("$runner" "$pte" --generate "$n" --prompt-ids 0 --input "${files[@]}" 2>/dev/null |
          sed -n 's/^tokens: //p' | tr ' ' ',')
    [ "$got" = "$want" ] && row+=("=") || { row+=("${got:-failed}"); status=1; }
    printf "%-24s %-8s %-8s %-8s %s\n" "$name" "${row[0]}" "${row[1]}" "${row[2]}" "$want"
  done < <(python3 - "$corpus" <<'PY'
import json, sys
c = sys.argv[1]
g = json.load(open(f"{c}/t5/greedy.json"))
files = [f"{c}/t5/t5_encoder_legacy/test_data_set_0/input_0.pb"] + [
    f"{c}/t5/other_inputs/input_ids_{k}.pb" for k in range(len(g["other_inputs"]))]
wants = [g["greedy_full_sequence"]] + [o["greedy_full_sequence"] for o in g["other_inputs"]]
for k, (f, w) in enumerate(zip(files, wants)):
    print(f"t5_range:{k}", f, ",".join(map(str, w)))
o = json.load(open(f"{c}/t5_optimum/greedy.json"))
for k, e in enumerate(o["inputs"]):
    d = f"{c}/t5_optimum/test_data_set_{k}"
    print(f"t5_optimum:{k}", f"{d}/input_0.pb:{d}/input_1.pb", ",".join(map(str, e["greedy_full_sequence"])))
PY
)
fi
exit $status
