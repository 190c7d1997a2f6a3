#!/usr/bin/env bash
# Builds ExecuTorch's own LLM runner, llama_main (examples/models/llama/main.cpp over
# extension/llm/runner), with the Vulkan backend, against the runtime bench/executorch/build.sh
# built: the program people deploy ExecuTorch LLMs with, run on what vkc writes (docs/llm.md).
#
#   bench/executorch/build_llm_runner.sh --mirrors DIR [--out DIR] [--jobs N]
#   bench/executorch/build_llm_runner.sh --tokenizers-mirror DIR [--out DIR] [--jobs N]
#
# --mirrors  build.sh's folder of bare mirrors; meta-pytorch+tokenizers is taken from it.
# --tokenizers-mirror  a bare git repository of meta-pytorch/tokenizers (ExecuTorch's submodule
#            extension/llm/tokenizers); its sources are taken from it. Its third-party libraries
#            come from Debian instead of its submodules: libre2-dev, libsentencepiece-dev,
#            libpcre2-dev, nlohmann-json3-dev, and libgflags-dev for llama_main's flags. Two
#            adaptations, made here in the build tree: sentencepiece.cpp's absl::StrReplaceAll (from
#            SentencePiece's bundled abseil, which Debian does not ship) comes from a small header
#            written below, and the flat_tensor flatbuffer header is generated with the flatc of
#            ExecuTorch's build. The sources are compiled here (a generated Makefile) rather than by
#            reconfiguring the runtime's CMake tree with EXECUTORCH_BUILD_EXTENSION_LLM(_RUNNER)=ON:
#            the tokenizers CMakeLists add_subdirectory()s its submodules (abseil-cpp, re2,
#            sentencepiece, pcre2, json), which no mirror holds.
# --out      where build.sh built the runtime (default ${XDG_CACHE_HOME:-$HOME/.cache}/vkc-bench/executorch)
#
# Prints the binary's path last: OUT/llama_main. Run it as
#   llama_main --model_path m.pte --tokenizer_path tokenizer.json --prompt "..." --temperature 0 \
#              --max_new_tokens N
# Takes about 1 min on 2 cores.
set -euo pipefail
out="${XDG_CACHE_HOME:-$HOME/.cache}/vkc-bench/executorch" mirror="" jobs=$(nproc)
usage() { sed -n 2,26p "$0" >&2; exit 2; }
while [ $# -gt 0 ]; do
  case "$1" in
    --tokenizers-mirror) mirror=$2; shift ;;
    --mirrors) mirror=$2/meta-pytorch+tokenizers/repo
      [ -d "$mirror/.git" ] && mirror=$mirror/.git
      shift ;;
    --out) out=$2; shift ;;
    --jobs) jobs=$2; shift ;;
    -h|--help) usage ;;
    *) echo "build_llm_runner.sh: unknown argument '$1'" >&2; usage ;;
  esac
  shift
done
[ -n "$mirror" ] || { echo "build_llm_runner.sh: give --mirrors DIR or --tokenizers-mirror DIR" >&2; usage; }
git --git-dir="$mirror" rev-parse -q --verify HEAD >/dev/null 2>&1 ||
  { echo "build_llm_runner.sh: no git repository of meta-pytorch/tokenizers at $mirror (fetch github:meta-pytorch/tokenizers)" >&2; exit 2; }
tree=$out/src/executorch b=$out/build
[ -f "$b/libexecutorch.a" ] && [ -f "$b/backends/vulkan/libvulkan_backend.a" ] ||
  { echo "build_llm_runner.sh: no ExecuTorch runtime in $out (run bench/executorch/build.sh first)" >&2; exit 2; }
for h in re2/re2.h sentencepiece_processor.h pcre2.h nlohmann/json.hpp gflags/gflags.h; do
  echo "#include <$h>" | g++ -x c++ -E - -o /dev/null -DPCRE2_CODE_UNIT_WIDTH=8 2>/dev/null ||
    { echo "build_llm_runner.sh: <$h> is missing (apt install libre2-dev libsentencepiece-dev libpcre2-dev nlohmann-json3-dev libgflags-dev)" >&2; exit 2; }
done
flatc=$(find "$b/third-party/flatc_ep" -name flatc -type f -perm -u+x | head -1)
[ -n "$flatc" ] || { echo "build_llm_runner.sh: no flatc in $b" >&2; exit 2; }

w=$out/llm
rm -rf "$w" && mkdir -p "$w/tokenizers" "$w/gen/executorch/extension/flat_tensor/serialize" \
  "$w/gen/third_party/absl/strings" "$w/obj"
git --git-dir="$mirror" archive HEAD src include third-party/llama.cpp-unicode 2>/dev/null | tar x -C "$w/tokenizers"
[ -f "$w/tokenizers/src/hf_tokenizer.cpp" ] || { echo "build_llm_runner.sh: $mirror holds no tokenizers sources" >&2; exit 2; }
cat >"$w/gen/third_party/absl/strings/str_replace.h" <<'HDR'
// absl::StrReplaceAll for tokenizers' sentencepiece.cpp (SentencePiece's bundled abseil is not in Debian).
#pragma once
#include <string>
#include <string_view>
#include <utility>
#include <vector>
namespace absl {
inline std::string StrReplaceAll(std::string_view s, const std::vector<std::pair<std::string_view, std::string_view>>& subs) {
  std::string out;
  for (size_t i = 0; i < s.size();) {
    bool hit = false;
    for (const auto& [from, to] : subs)
      if (!from.empty() && s.substr(i, from.size()) == from) { out += to; i += from.size(); hit = true; break; }
    if (!hit) out += s[i++];
  }
  return out;
}
}  // namespace absl
HDR
"$flatc" --cpp --cpp-std c++11 --gen-mutable --scoped-enums -o "$w/gen/executorch/extension/flat_tensor/serialize" \
  "$tree/extension/flat_tensor/serialize/flat_tensor.fbs" "$tree/extension/flat_tensor/serialize/scalar_type.fbs"

t=$w/tokenizers
sources=(
  $t/src/{bpe_tokenizer_base,hf_tokenizer,llama2c_tokenizer,normalizer,pre_tokenizer,re2_regex,regex,regex_lookahead,pcre2_regex,std_regex,sentencepiece,tekken,tiktoken,token_decoder}.cpp
  $t/third-party/llama.cpp-unicode/src/*.cpp
  $tree/extension/llm/runner/{text_llm_runner,text_prefiller,text_decoder_runner,llm_runner_helper,multimodal_runner,multimodal_prefiller}.cpp
  $tree/extension/llm/sampler/sampler.cpp
  $tree/extension/module/module.cpp
  $tree/extension/named_data_map/merged_data_map.cpp
  $tree/extension/memory_allocator/cpu_caching_malloc_allocator.cpp
  $tree/extension/tensor/{tensor_ptr,tensor_ptr_maker}.cpp
  $tree/extension/flat_tensor/flat_tensor_data_map.cpp
  $tree/extension/flat_tensor/serialize/flat_tensor_header.cpp
  $tree/examples/models/llama/runner/runner.cpp
  $tree/examples/models/llama/tokenizer/llama_tiktoken.cpp
  $tree/examples/models/llama/main.cpp
  # The runtime's log.cpp again, with logging on: build.sh's Release runtime has ET_LOG_ENABLED=0,
  # which would make the runner's errors (a missing get_max_seq_len, a failed load) silent. This
  # object comes before the archives, so libexecutorch_core.a's copy is not linked.
  $tree/runtime/platform/log.cpp
)
flags=(-std=c++17 -O2 -fexceptions -include functional -include cstdint -DC10_USING_CUSTOM_GENERATED_MACROS -DET_MIN_LOG_LEVEL=Info
  -DFLATBUFFERS_MAX_ALIGNMENT=1024 -DPCRE2_CODE_UNIT_WIDTH=8 -DSUPPORT_REGEX_LOOKAHEAD
  -I"$out/src" -I"$tree/runtime/core/portable_type/c10" -I"$b/include" -I"$b/schema/include"
  -I"$b/third-party/flatc_ep/include" -I"$w/gen" -I"$t/include" -I"$t/third-party/llama.cpp-unicode/include")
# One object per source (a Makefile: -j N, stops at the first error, which it prints).
{
  printf 'CXXFLAGS :='; printf ' %q' "${flags[@]}"; printf '\n'
  objs=""
  i=0
  for src in "${sources[@]}"; do
    i=$((i + 1))
    printf '%s/obj/%d.o: %s\n\tg++ $(CXXFLAGS) -c $< -o $@\n' "$w" "$i" "$src"
    objs="$objs $w/obj/$i.o"
  done
  printf 'all:%s\n' "$objs"
} >"$w/Makefile"
make -s -f "$w/Makefile" -j "$jobs" all >"$w/make.log" 2>&1 ||
  { grep -m 20 -B2 -A6 'error' "$w/make.log" >&2; echo "build_llm_runner.sh: a compile failed ($w/make.log)" >&2; exit 1; }
g++ -o "$w/llama_main.part" "$w"/obj/*.o \
  -Wl,--whole-archive "$b/backends/vulkan/libvulkan_backend.a" "$b/libexecutorch.a" -Wl,--no-whole-archive \
  "$b/extension/data_loader/libextension_data_loader.a" "$b/libexecutorch_core.a" \
  -lre2 -lsentencepiece -lpcre2-8 -lgflags -ldl -lpthread
mv "$w/llama_main.part" "$out/llama_main"
echo "$out/llama_main"
