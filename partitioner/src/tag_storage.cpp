// Storage/layout tagging. Each node takes the representation of its primary input
// when its operator allows it, otherwise its preferred one; tensors it reads in
// another representation get an aten.clone transition in front of it.
#include <map>

#include "steps.h"
#include "vkc/ir/op_registry.h"

namespace vkc::partitioner {
namespace {

constexpr std::string_view kTransitionOp = "aten.clone.default";

bool fits(const ir::Node& n, const ir::OpDef& def, ir::TensorRep rep, const DeviceLimits& limits) {
  for (size_t i = 0; i < n.inputs().size(); ++i) {
    const ir::Value* v = n.input(i);
    if (v && !(v->is_constant() && def.prepacks(i)) && !is_packed_int8_value(v) && rep_misfit(v->type(), rep, limits))
      return false;
  }
  for (const ir::Value* v : n.outputs())
    if (!is_packed_int8_value(v) && rep_misfit(v->type(), rep, limits)) return false;
  return true;
}

// The packed int8 layout a q8ta operator's int8 tensors take: its own, else its first int8
// input's, else (quantize_per_tensor) the one its first consumer with a fixed layout needs.
ir::Layout int8_layout(const ir::Graph& g, const ir::Node& n, const ir::OpDef& def, const Delegate& d) {
  if (def.int8_layout) return *def.int8_layout;
  for (const ir::Value* v : n.inputs())
    if (v && is_packed_int8_value(v))
      if (auto it = d.placement.find(v); it != d.placement.end()) return it->second.rep.layout;
  for (const ir::Value* out : n.outputs())
    for (const ir::Node* u : g.users(out))
      if (const ir::OpDef* ud = ir::find_op(u->op_type()); ud && ud->int8_layout) return *ud->int8_layout;
  return ir::Layout::PackedInt8_4W4C;
}

ir::TensorRep choose(const ir::Node& n, const ir::OpDef& def, const Delegate& d, const DeviceLimits& limits,
                     bool size_independent) {
  // The primary input's representation, when allowed, avoids a transition.
  for (size_t i = 0; i < n.inputs().size(); ++i) {
    const ir::Value* v = n.input(i);
    if (!v || v->is_constant()) continue;
    auto it = d.placement.find(v);
    if (it != d.placement.end() && def.reps(n).contains(it->second.rep) && fits(n, def, it->second.rep, limits))
      return it->second.rep;
    break;
  }
  // Otherwise as the runtime would pick: width-packed for rank < 3 or a single channel, else
  // channels-packed. Where sizes must not count (a dim that resizes may be the channels, and
  // ExecuTorch's runtime computed wrong values with channels packed along a resizing sequence dim),
  // width-packed.
  const auto& shape = n.output(0)->shape();
  const bool width_first = size_independent || shape.rank() < 3 || shape.dims[shape.rank() - 3].value == 1;
  const ir::Layout order[3] = {width_first ? ir::Layout::WidthPacked : ir::Layout::ChannelsPacked,
                               width_first ? ir::Layout::ChannelsPacked : ir::Layout::WidthPacked,
                               ir::Layout::HeightPacked};
  for (ir::Storage s : {ir::Storage::Texture3D, ir::Storage::Buffer, ir::Storage::Texture2D})
    for (ir::Layout l : order)
      if (def.reps(n).contains({s, l}) && fits(n, def, {s, l}, limits)) return {s, l};
  throw std::logic_error("node '" + n.name() + "' has no representation; node_misfit should have rejected it");
}

}  // namespace

void tag_storage(ir::Graph& g, Delegate& d, const DeviceLimits& limits, bool size_independent_layouts) {
  std::map<std::pair<const ir::Value*, uint16_t>, ir::Value*> transitions;
  std::vector<ir::Node*> nodes;
  for (ir::Node* n : d.nodes) {
    if (n->op_type() == ir::kPrepackOp) {  // its output takes the representation its consumer asks for
      nodes.push_back(n);
      continue;
    }
    const ir::OpDef& def = *ir::find_op(n->op_type());
    const ir::TensorRep float_rep = choose(*n, def, d, limits, size_independent_layouts);
    const ir::TensorRep int8_rep{ir::Storage::Buffer, def.packed_int8 ? int8_layout(g, *n, def, d) : ir::Layout{}};
    // Inputs that feed SymInt arguments are read from their staging buffers, in any representation.
    const size_t symints_from = n->inputs().size() - def.schema.num_symint_inputs(n->inputs().size());
    for (size_t i = 0; i < n->inputs().size(); ++i) {
      ir::Value* v = n->input(i);
      if (!v || (v->is_constant() && def.prepacks(i))) continue;
      if (i >= symints_from) {
        d.placement.try_emplace(v, TensorPlacement{float_rep});
        continue;
      }
      const ir::TensorRep rep = is_packed_int8_value(v) ? int8_rep : float_rep;
      auto [it, fresh] = d.placement.try_emplace(v, TensorPlacement{rep});
      if (fresh || it->second.rep == rep) continue;
      const auto key = std::make_pair(static_cast<const ir::Value*>(v),
                                      static_cast<uint16_t>(static_cast<unsigned>(rep.storage) * 16 +
                                                            static_cast<unsigned>(rep.layout)));
      auto& converted = transitions[key];
      if (!converted) {
        ir::Node* t = g.add_node(ir::kVulkanDomain, kTransitionOp, {v}, {v->type()}, g.unique_name(v->name() + "_to_" +
                                 std::string(ir::layout_name(rep.layout))), n);
        nodes.push_back(t);
        converted = t->output(0);
        d.placement[converted] = TensorPlacement{rep};
      }
      n->set_input(i, converted);
    }
    for (const ir::Value* out : n->outputs())
      d.placement[out] = TensorPlacement{is_packed_int8_value(out) ? int8_rep : float_rep};
    nodes.push_back(n);
  }
  d.nodes = std::move(nodes);
}

}  // namespace vkc::partitioner
