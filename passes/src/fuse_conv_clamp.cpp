// convolution -> relu | clamp becomes et_vk.conv_with_clamp with the clamp bounds.
#include <limits>

#include "vkc/passes/passes.h"

namespace vkc::passes {
namespace {
constexpr std::string_view kConv = "aten.convolution.default";
constexpr std::string_view kConvClamp = "et_vk.conv_with_clamp.default";
constexpr double kOpen = std::numeric_limits<double>::max();

ir::Attribute bound(const ir::Attribute* a, double open) {
  if (!a || std::holds_alternative<std::monostate>(*a)) return open;
  return *a;
}
}  // namespace

void fuse_conv_clamp(ir::Graph& g, PassContext&) {
  for (ir::Node* act : g.nodes()) {
    const bool relu = act->is(ir::kVulkanDomain, "aten.relu.default");
    const bool clamp = act->is(ir::kVulkanDomain, "aten.clamp.default");
    if (!relu && !clamp) continue;
    ir::Node* conv = act->input(0)->producer();
    if (!conv || !conv->is(ir::kVulkanDomain, kConv)) continue;
    if (g.users(conv->output(0)).size() != 1 || g.is_output(conv->output(0))) continue;
    // The runtime reads both bounds as numbers (None throws), so an open side is +-DBL_MAX.
    ir::AttributeMap attrs = conv->attrs();
    attrs["output_min"] = relu ? 0.0 : bound(act->attr("min"), -kOpen);
    attrs["output_max"] = relu ? kOpen : bound(act->attr("max"), kOpen);
    conv->morph(ir::kVulkanDomain, kConvClamp, conv->inputs(), std::move(attrs));
    g.replace_all_uses(act->output(0), conv->output(0));
    g.remove_node(act);
  }
}

}  // namespace vkc::passes
