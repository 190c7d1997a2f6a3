#include "llm_metadata.h"

#include <fmt/format.h>

namespace vkc::compiler {
namespace {

using serializer::EtTensor;
using serializer::ScalarType;

const EtTensor* tensor_at(const serializer::ExecutionPlan& plan, int32_t index) {
  if (index < 0 || static_cast<size_t>(index) >= plan.values.size()) return nullptr;
  return std::get_if<EtTensor>(&plan.values[static_cast<size_t>(index)]);
}

}  // namespace

std::vector<serializer::ConstantMethod> llm_metadata(const serializer::Program& program, int64_t max_seq_len,
                                                     const LlmTokenIds& ids, std::string& misfit) {
  const serializer::ExecutionPlan* forward = nullptr;
  for (const auto& p : program.plans)
    if (p.name == "forward") forward = &p;
  if (!forward) {
    misfit = "the program has no forward method";
    return {};
  }
  if (forward->inputs.size() != 2 || forward->outputs.size() != 1) {
    misfit = fmt::format("its forward has {} inputs and {} outputs; the runner calls tokens and input_pos in, "
                         "logits out",
                         forward->inputs.size(), forward->outputs.size());
    return {};
  }
  const EtTensor* tokens = tensor_at(*forward, forward->inputs[0]);
  const EtTensor* pos = tensor_at(*forward, forward->inputs[1]);
  const EtTensor* logits = tensor_at(*forward, forward->outputs[0]);
  if (!tokens || !pos || !logits || tokens->sizes.size() != 2 || tokens->sizes[0] != 1 ||
      pos->sizes != std::vector<int32_t>{1} || logits->sizes.size() < 2) {
    misfit = "its forward does not take tokens [1, S] then input_pos [1] and return logits [1, S, V]";
    return {};
  }
  if (tokens->scalar_type != ScalarType::Long || pos->scalar_type != ScalarType::Long) {
    misfit = "its tokens and input_pos inputs are not int64 (the runner passes Long tensors)";
    return {};
  }
  const int64_t s = tokens->sizes[1];
  const bool dynamic = tokens->dynamism != serializer::ShapeDynamism::Static && s > 1;
  if (s > 1 && !dynamic) {
    misfit = fmt::format("its forward takes exactly {} tokens a call; the runner feeds 1 (compile with "
                         "--dim NAME=1..{} for prompts in one call, or a one-token step)",
                         s, s);
    return {};
  }
  std::vector<serializer::ConstantMethod> m = {
      {"get_max_seq_len", s},
      {"get_max_context_len", max_seq_len},
      {"use_kv_cache", true},
      {"enable_dynamic_shape", dynamic},
      {"get_vocab_size", static_cast<int64_t>(logits->sizes.back())},
  };
  if (ids.bos) m.push_back({"get_bos_id", *ids.bos});
  if (!ids.eos.empty()) m.push_back({"get_eos_ids", ids.eos});
  return m;
}

}  // namespace vkc::compiler
