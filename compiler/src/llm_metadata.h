// The metadata ExecuTorch's LLM runner reads from a program (extension/llm/runner: constant
// methods get_max_seq_len, get_max_context_len, use_kv_cache, enable_dynamic_shape,
// get_vocab_size, get_bos_id, get_eos_ids), for a KV-cache program (--max-seq-len) whose forward
// has the runner's signature: tokens [1, S] and input_pos [1] (Long) in, logits out.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "vkc/serializer/constant_methods.h"

namespace vkc::compiler {

struct LlmTokenIds {
  std::optional<int64_t> bos;
  std::vector<int64_t> eos;
  std::string source;  // where they came from, for the note ("--eos", "generation_config.json beside the model")
};

/// The methods for `program`'s forward (the cache `max_seq_len` positions long), or empty with
/// `misfit` saying why ExecuTorch's runner cannot call its forward.
std::vector<serializer::ConstantMethod> llm_metadata(const serializer::Program& program, int64_t max_seq_len,
                                                     const LlmTokenIds& ids, std::string& misfit);

}  // namespace vkc::compiler
