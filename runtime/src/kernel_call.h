// KernelCalls: operators outside every delegate (what `vkc compile --fallback cpu` writes as
// ExecuTorch portable-kernel calls, `aten::<op>.out`), run with the cpu backend's kernels.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "vkc/kernels/host_tensor.h"
#include "vkc/serializer/program.h"

namespace vkc::runtime::detail {

/// The runtime operator whose cpu kernel runs plan operator `op` ({"aten::relu", "out"} ->
/// "aten.relu.default"). Throws RuntimeError when there is none.
std::string kernel_call_operator(const serializer::Operator& op);

/// Runs `call` (schema arguments in order, then the out tensor(s)) with the kernel of
/// runtime operator `op`. `value(id)` gives plan value `id`; outputs are written through it.
void run_kernel_call(const serializer::ExecutionPlan& plan, const serializer::KernelCall& call, const std::string& op,
                     const std::function<kernels::HostTensor&(int32_t)>& value);

}  // namespace vkc::runtime::detail
