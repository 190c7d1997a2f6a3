// The SymInt operators of payloads with bounded dynamic dims (serializer/dynamic_dims.h):
// sym_size.int(x, dim) and the arithmetic add, sub, mul and floordiv on SymInts, as ET-VK's
// SymIntOps register them. Their values follow from the sizes of the run's inputs, so every
// backend evaluates them on the host the same way (the cpu backend as it runs, the vulkan backend
// while it encodes an instance of one size).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "call_args.h"

namespace vkc::runtime {

/// The operator names, as payloads spell them.
const std::vector<std::string>& symint_operators();

/// The value of one SymInt operator call; `dims_of(i)` gives tensor argument i's dims.
int64_t eval_symint_op(const CallArgs& c, const std::string& name,
                       const std::function<std::vector<int64_t>(size_t)>& dims_of);

}  // namespace vkc::runtime
