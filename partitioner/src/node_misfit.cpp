#include <fmt/format.h>

#include "steps.h"
#include "vkc/ir/op_registry.h"

namespace vkc::partitioner {

std::optional<std::string> node_misfit(const ir::Node& n, const DeviceLimits& limits) {
  const ir::OpDef* def = ir::find_op(n.op_type());
  if (!def) return fmt::format("'{}' is not a registered runtime operator", n.op_type());
  // dtype of the primary input (a Tensor[] argument: all of them)
  const size_t primary = def->schema.has_tensor_list() ? n.num_inputs() : std::min<size_t>(1, n.num_inputs());
  for (size_t i = 0; i < primary; ++i) {
    const ir::Value* v = n.input(i);
    if (v && !def->dtypes.contains(v->dtype()))
      return fmt::format("dtype {} of '{}' is not supported by {} ({})", ir::dtype_name(v->dtype()), v->name(),
                         n.op_type(), def->dtypes.str());
  }
  std::vector<const ir::Value*> tensors;
  for (size_t i = 0; i < n.inputs().size(); ++i) {
    const ir::Value* v = n.input(i);
    if (v && !(v->is_constant() && def->prepacks(i))) tensors.push_back(v);
  }
  for (const ir::Value* v : n.outputs()) tensors.push_back(v);
  for (const ir::Value* v : tensors) {
    if (!v->type().known() || !v->shape().is_static())
      return fmt::format("tensor '{}' has no static shape", v->name());
    if (v->shape().rank() > 4 && !def->supports_highdim)
      return fmt::format("tensor '{}' has rank {} > 4", v->name(), v->shape().rank());
  }
  // Packed int8 activations are buffers whatever the op's float representation.
  for (const ir::Value* v : tensors)
    if (ir::is_packed_int8_value(v))
      if (auto why = rep_misfit(v->type(), {ir::Storage::Buffer, ir::Layout::WidthPacked}, limits))
        return fmt::format("{} {} as buffer: {}", v->name(), v->type().str(), *why);
  std::erase_if(tensors, [](const ir::Value* v) { return ir::is_packed_int8_value(v); });
  // Some representation the op allows must hold every tensor it touches.
  std::string first_reason;
  for (ir::Storage s : {ir::Storage::Texture3D, ir::Storage::Buffer, ir::Storage::Texture2D})
    for (ir::Layout l : {ir::Layout::ChannelsPacked, ir::Layout::WidthPacked, ir::Layout::HeightPacked}) {
      const ir::TensorRep rep{s, l};
      if (!def->reps(n).contains(rep)) continue;
      std::string misfit;
      for (const ir::Value* v : tensors)
        if (auto why = rep_misfit(v->type(), rep, limits); why && misfit.empty())
          misfit = fmt::format("{} {} as {}: {}", v->name(), v->type().str(), ir::storage_name(rep.storage), *why);
      if (misfit.empty()) return std::nullopt;
      if (first_reason.empty()) first_reason = misfit;
    }
  if (first_reason.empty()) return fmt::format("{} has no GPU representation for this call", n.op_type());
  return first_reason;
}

}  // namespace vkc::partitioner
