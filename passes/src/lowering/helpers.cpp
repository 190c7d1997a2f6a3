#include <fmt/format.h>

#include "lowering.h"
#include "vkc/ir/op_registry.h"

namespace vkc::passes::lowering {

void to_runtime(ir::Node* n, std::string_view op, std::vector<ir::Value*> inputs, ir::AttributeMap attrs) {
  const ir::OpDef* def = ir::find_op(op);
  if (!def) throw std::logic_error(fmt::format("lowering produced unregistered operator '{}'", op));
  n->morph(ir::kVulkanDomain, op, std::move(inputs), std::move(attrs));
}

std::optional<size_t> static_rank(const ir::Value* v) {
  if (!v || !v->type().known()) return std::nullopt;
  return v->shape().rank();
}

std::optional<std::vector<int64_t>> symmetric_padding(const ir::Node* n, const ir::Value* input,
                                                      const std::vector<int64_t>& kernel,
                                                      const std::vector<int64_t>& strides,
                                                      const std::vector<int64_t>& dilations, std::string& why,
                                                      std::vector<int64_t>* begin_out,
                                                      std::vector<int64_t>* end_out) {
  const size_t spatial = kernel.size();
  const std::string auto_pad = n->attr_string("auto_pad", "NOTSET");
  std::vector<int64_t> begin(spatial, 0), end(spatial, 0);
  if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
    if (!input->shape().is_static()) {
      why = "auto_pad " + auto_pad + " needs a static input shape";
      return std::nullopt;
    }
    auto sizes = input->shape().sizes();
    for (size_t i = 0; i < spatial; ++i) {
      const int64_t in = sizes[sizes.size() - spatial + i];
      const int64_t out = (in + strides[i] - 1) / strides[i];
      const int64_t total = std::max<int64_t>(0, (out - 1) * strides[i] + (kernel[i] - 1) * dilations[i] + 1 - in);
      begin[i] = auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
      end[i] = total - begin[i];
    }
  } else if (auto_pad == "NOTSET") {
    auto pads = n->attr_ints("pads", std::vector<int64_t>(2 * spatial, 0));
    if (pads.size() != 2 * spatial) {
      why = fmt::format("pads has {} values, expected {}", pads.size(), 2 * spatial);
      return std::nullopt;
    }
    for (size_t i = 0; i < spatial; ++i) {
      begin[i] = pads[i];
      end[i] = pads[spatial + i];
    }
  } else if (auto_pad != "VALID") {
    why = "unknown auto_pad " + auto_pad;
    return std::nullopt;
  }
  if (begin != end) {
    if (begin_out) *begin_out = begin;
    if (end_out) *end_out = end;
    why = fmt::format("asymmetric padding [{}] / [{}]", fmt::join(begin, ","), fmt::join(end, ","));
    return std::nullopt;
  }
  return begin;
}

ir::Value* emit(ir::Graph& g, const ir::Node* n, const char* op, std::vector<ir::Value*> ins, ir::AttributeMap attrs) {
  ir::Node* m = g.add_node(ir::kVulkanDomain, op, std::move(ins), {n->output(0)->type()},
                           g.unique_name(n->name() + "_" + op), n);
  m->attrs() = std::move(attrs);
  return m->output(0);
}

}  // namespace vkc::passes::lowering
