#include <fmt/format.h>

#include <map>
#include <set>
#include <unordered_map>

#include "emit_part.h"
#include "vkc/ir/op_registry.h"
#include "vkc/serializer/build_program.h"
#include "vkc/serializer/io_names.h"
#include "vkc/serializer/embed_shaders.h"
#include "vkc/serializer/errors.h"
#include "vkc/serializer/vk_payload.h"

namespace vkc::serializer {

std::optional<Operator> portable_kernel(const std::string& op) {
  static const std::map<std::string, std::string, std::less<>> kOverloads = {
      {"aten.sum.dim_IntList", "IntList_out"}, {"aten.mean.dim", "out"},    {"aten.add.Tensor", "out"},
      {"aten.sub.Tensor", "out"},              {"aten.mul.Tensor", "out"},  {"aten.div.Tensor", "out"}};
  if (!op.starts_with("aten.")) return std::nullopt;
  const size_t dot = op.rfind('.');
  const std::string name = "aten::" + op.substr(5, dot - 5);
  const std::string overload = op.substr(dot + 1);
  if (auto it = kOverloads.find(op); it != kOverloads.end()) return Operator{name, it->second};
  return Operator{name, overload == "default" ? "out" : overload + "_out"};
}

namespace {

using detail::PlanBuilder;
using detail::PartContext;

// One KernelCall: every schema argument in order (defaults filled), then the out tensor(s).
KernelCall kernel_call(const ir::Node& n, PlanBuilder& pb, int32_t op_index) {
  const ir::OpSchema& s = ir::find_op(n.op_type())->schema;
  KernelCall call{op_index, {}};
  size_t next = 0;
  const size_t list_len = n.num_inputs() - s.num_tensor_args();
  for (const ir::ArgSpec& a : s.args) {
    if (a.kind == ir::ArgKind::Tensor) {
      const ir::Value* v = n.input(next++);
      call.args.push_back(v ? pb.tensor(v) : pb.scalar(std::monostate{}, ir::ArgKind::None));
    } else if (a.kind == ir::ArgKind::TensorList) {
      std::vector<int32_t> ids;
      for (size_t i = 0; i < list_len; ++i) ids.push_back(pb.tensor(n.input(next++)));
      call.args.push_back(pb.tensor_list(ids));
    } else if (const ir::Attribute* set = n.attr(a.name)) {
      call.args.push_back(pb.scalar(*set, a.kind));
    } else {
      call.args.push_back(pb.scalar(a.default_value.value_or(std::monostate{}), a.kind));
    }
  }
  if (s.list_output) {
    std::vector<int32_t> ids;
    for (const ir::Value* o : n.outputs()) ids.push_back(pb.tensor(o));
    call.args.push_back(pb.tensor_list(ids));
  } else {
    for (const ir::Value* o : n.outputs()) call.args.push_back(pb.tensor(o));
  }
  return call;
}

// One instruction to emit: a delegate (all its nodes at once) or one node left out.
struct Step {
  int delegate = -1;
  const ir::Node* node = nullptr;
};

// Steps in an order where each runs after the steps producing its inputs (the partition
// keeps contracted delegates acyclic); ties go to the step whose first node comes first.
std::vector<Step> step_order(const ir::Graph& g, const partitioner::Partition& p,
                             const std::unordered_map<const ir::Node*, size_t>& delegate_of) {
  std::vector<Step> steps;
  std::unordered_map<const ir::Node*, size_t> step_of;
  std::vector<bool> seen(p.delegates.size(), false);
  for (const ir::Node* n : g.nodes()) {
    auto it = delegate_of.find(n);
    if (it == delegate_of.end()) {
      step_of[n] = steps.size();
      steps.push_back({-1, n});
    } else {
      if (!seen[it->second]) {
        seen[it->second] = true;
        steps.push_back({static_cast<int>(it->second), nullptr});
      }
      step_of[n] = steps.size() - 1;
      for (size_t s = 0; s < steps.size(); ++s)
        if (steps[s].delegate == static_cast<int>(it->second)) step_of[n] = s;
    }
  }
  std::vector<std::set<size_t>> succ(steps.size());
  std::vector<size_t> indeg(steps.size(), 0);
  for (const ir::Node* n : g.nodes())
    for (const ir::Value* v : n->inputs()) {
      if (!v || !v->producer() || !step_of.count(v->producer())) continue;
      const size_t from = step_of.at(v->producer()), to = step_of.at(n);
      if (from != to && succ[from].insert(to).second) ++indeg[to];
    }
  std::set<size_t> ready;
  for (size_t s = 0; s < steps.size(); ++s)
    if (indeg[s] == 0) ready.insert(s);
  std::vector<Step> order;
  while (!ready.empty()) {
    const size_t s = *ready.begin();
    ready.erase(ready.begin());
    order.push_back(steps[s]);
    for (size_t t : succ[s])
      if (--indeg[t] == 0) ready.insert(t);
  }
  if (order.size() != steps.size()) throw SerializeError("the partition's delegates depend on each other in a cycle");
  return order;
}

}  // namespace

namespace detail {

std::vector<int32_t> emit_part(PartContext& cx, const ir::Graph& g, const partitioner::Partition& p) {
  std::unordered_map<const ir::Node*, size_t> delegate_of;
  for (size_t i = 0; i < p.delegates.size(); ++i)
    for (const ir::Node* n : p.delegates[i].nodes) delegate_of[n] = i;
  if (p.num_rejected() > 0 && !cx.cpu_fallback)
    throw SerializeError(fmt::format("{} node(s) are outside every delegate and CPU fallback is off",
                                     p.num_rejected()));
  ExecutionPlan& plan = cx.pb.plan();
  for (const Step& step : step_order(g, p, delegate_of)) {
    if (step.delegate >= 0) {
      const partitioner::Delegate& d = p.delegates[step.delegate];
      VkGraph vk = build_vk_graph(d, cx.rules, cx.program.named_data, cx.defer_keys_from);
      std::vector<uint8_t> shader_bytes;
      if (cx.shaders) {
        const ShaderSelection sel = select_shaders(d, cx.rules, *cx.shaders);
        for (const auto* v : sel.variants) cx.shaders->embedded.insert(v->name);
        cx.shaders->missing.insert(sel.missing.begin(), sel.missing.end());
        shader_bytes = embed_shaders(vk, sel);
      }
      plan.delegates.push_back({kVulkanBackendId, ir::TensorData::owned(write_vk_payload(vk, shader_bytes)), cx.specs});
      DelegateCall call{static_cast<int32_t>(plan.delegates.size() - 1), {}};
      for (const ir::Value* v : d.inputs) call.args.push_back(cx.pb.tensor(v));
      for (const ir::Value* v : d.outputs) call.args.push_back(cx.pb.tensor(v));
      plan.instructions.emplace_back(std::move(call));
      continue;
    }
    const ir::Node* n = step.node;
    auto kernel = n->domain() == ir::kVulkanDomain ? portable_kernel(n->op_type()) : std::nullopt;
    if (!kernel)
      throw SerializeError(fmt::format("node '{}' ({}) is outside every delegate and has no portable CPU kernel",
                                       n->name(), n->qualified_op()));
    auto [op_it, fresh] = cx.operator_index.try_emplace({kernel->name, kernel->overload},
                                                        static_cast<int32_t>(plan.operators.size()));
    if (fresh) plan.operators.push_back(*kernel);
    plan.instructions.emplace_back(kernel_call(*n, cx.pb, op_it->second));
  }
  std::vector<int32_t> outputs;
  for (const ir::Value* v : g.outputs) {
    if (v->is_constant())
      throw SerializeError(fmt::format("graph output '{}' is a constant; not supported yet", v->name()));
    outputs.push_back(cx.pb.tensor(v));
  }
  return outputs;
}

void finish_program(PartContext& cx, const ir::Graph& g) {
  ExecutionPlan& plan = cx.pb.plan();
  plan.name = "forward";
  plan.non_const_buffer_sizes = {0, static_cast<int64_t>(cx.pb.arena())};
  IoNames names;
  for (const ir::Value* v : g.inputs) names.inputs.push_back(v->name());
  for (const ir::Value* v : g.outputs) names.outputs.push_back(v->name());
  cx.program.named_data.push_back({kIoNamesKey, ir::TensorData::owned(encode_io_names(names))});
  cx.program.plans.push_back(std::move(plan));
}

}  // namespace detail

using detail::emit_part;
using detail::finish_program;

Program build_program(const ir::Graph& g, const partitioner::Partition& p, const CompileOptions& options,
                      bool cpu_fallback, ShaderEmbedding* shaders, uint64_t defer_keys_from) {
  Program program;
  PartContext cx(program, options, cpu_fallback, shaders);
  if (p.delegates.size() == 1) cx.defer_keys_from = defer_keys_from;
  for (const ir::Value* v : g.inputs) cx.pb.plan().inputs.push_back(cx.pb.tensor(v));
  cx.pb.plan().outputs = emit_part(cx, g, p);
  finish_program(cx, g);
  return program;
}

}  // namespace vkc::serializer
