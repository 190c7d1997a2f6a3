#include "vkc/serializer/ptd.h"
#include "vkc/compiler/inspect.h"

#include "vkc/serializer/constant_methods.h"

#include <fmt/format.h>

#include <optional>
#include <set>

#include "vkc/ir/op_registry.h"
#include "vkc/serializer/dynamic_dims.h"
#include "vkc/serializer/build_program.h"
#include "vkc/serializer/errors.h"
#include "vkc/serializer/pte_reader.h"
#include "vkc/serializer/vk_payload.h"

namespace vkc::compiler {
namespace {

// The plan's inputs, and the sizes its shape tests (aten::sym_size.int of an input, compared by
// executorch_prim::eq.Scalar with a number) look for.
void read_input_shapes(const serializer::ExecutionPlan& plan, PlanReport& pr) {
  std::map<int32_t, size_t> input_of;
  for (size_t i = 0; i < plan.inputs.size(); ++i) {
    PlanInputReport in;
    if (const auto* t = std::get_if<serializer::EtTensor>(&plan.values.at(plan.inputs[i]))) {
      in.shape.assign(t->sizes.begin(), t->sizes.end());
      in.dynamic = t->dynamism != serializer::ShapeDynamism::Static;
    }
    pr.input_shapes.push_back(std::move(in));
    input_of[plan.inputs[i]] = i;
  }
  auto int_value = [&](int32_t id) -> std::optional<int64_t> {
    if (id < 0 || static_cast<size_t>(id) >= plan.values.size()) return std::nullopt;
    if (const auto* v = std::get_if<int64_t>(&plan.values[id])) return *v;
    return std::nullopt;
  };
  std::map<int32_t, std::pair<size_t, int64_t>> sizes_read;  // value -> (input, dim)
  for (const serializer::Instruction& ins : plan.instructions) {
    const auto* k = std::get_if<serializer::KernelCall>(&ins);
    if (!k || k->op_index < 0 || static_cast<size_t>(k->op_index) >= plan.operators.size() || k->args.size() != 3) continue;
    const serializer::Operator& op = plan.operators[k->op_index];
    if (op.name == "aten::sym_size" && op.overload == "int") {
      auto in = input_of.find(k->args[0]);
      if (const auto dim = int_value(k->args[1]); in != input_of.end() && dim) sizes_read[k->args[2]] = {in->second, *dim};
    } else if (op.name == "executorch_prim::eq" && op.overload == "Scalar") {
      auto read = sizes_read.find(k->args[0]);
      const auto size = int_value(k->args[1]);
      if (read == sizes_read.end() || !size) continue;
      auto& list = pr.input_shapes[read->second.first].sizes[read->second.second];
      if (std::find(list.begin(), list.end(), *size) == list.end()) list.push_back(*size);
    }
  }
  // Bounded dynamic dims: each delegate's table names the delegate input that holds a dim.
  for (const serializer::Instruction& ins : plan.instructions) {
    const auto* dc = std::get_if<serializer::DelegateCall>(&ins);
    if (!dc || dc->delegate_index < 0 || static_cast<size_t>(dc->delegate_index) >= plan.delegates.size()) continue;
    for (const auto& spec : plan.delegates[dc->delegate_index].compile_specs) {
      if (spec.key != serializer::kDynamicDimsKey) continue;
      for (const auto& y : serializer::DynamicDims::decode(spec.value).symbols)
        if (y.input < dc->args.size())
          if (auto in = input_of.find(dc->args[y.input]); in != input_of.end())
            pr.input_shapes[in->second].ranges[y.dim] = {y.name, y.min, y.max};
    }
  }
}

void decode_vulkan(const serializer::BackendDelegate& bd, const std::map<std::string, uint64_t>& named_sizes,
                   DelegateReport& r) {
  r.options = serializer::CompileOptions::from_specs(bd.compile_specs);
  const serializer::VkPayload payload = serializer::read_vk_payload(bd.processed.bytes());
  const serializer::VkGraph& g = payload.graph;
  r.values = g.values.size();
  r.inputs = g.input_ids.size();
  r.outputs = g.output_ids.size();
  r.constants = g.constants.size();
  for (const serializer::VkBytes& c : g.constants) {
    if (!c.named_key.empty() && !named_sizes.count(c.named_key)) ++r.constants_not_found;  // in a .ptd not given
    r.constant_bytes += c.length;
  }
  for (const serializer::VkBytes& sh : g.shaders) {
    if (sh.offset + sh.length > payload.bytes.size())
      throw serializer::SerializeError(fmt::format("delegate {}: shader '{}' lies outside the bytes section", r.index,
                                                   sh.named_key));
    r.shaders.push_back(sh.named_key);
    r.shader_bytes += sh.length;
  }
  for (const serializer::VkOperatorCall& call : g.chain) {
    ++r.ops[call.name];
    ++r.families[std::string(ir::op_family(call.name))];
  }
  std::set<int32_t> objects;
  for (const serializer::VkValue& v : g.values) {
    const auto* t = std::get_if<serializer::VkTensor>(&v);
    if (!t) continue;
    ++r.tensors;
    if (t->constant_id >= 0) continue;
    ++r.representations[fmt::format("{}/{}", serializer::to_string(t->storage), serializer::to_string(t->layout))];
    if (t->mem_obj_id >= 0) {
      objects.insert(t->mem_obj_id);
      ++r.shared_tensors;
    }
  }
  r.memory_objects = objects.size();
}

InspectReport report_of(const serializer::PteFile& f, std::string path) {
  InspectReport r;
  r.path = std::move(path);
  r.file_size = f.file_size;
  r.program_size = f.program_size;
  r.segment_base_offset = f.segment_base_offset;
  r.segment_data_size = f.segment_data_size;
  for (const auto& s : f.segments) r.segment_sizes.push_back(s.size);
  if (f.constant_segment_index >= 0 && static_cast<size_t>(f.constant_segment_index) < f.segments.size())
    r.constant_segment_bytes = f.segments[f.constant_segment_index].size;
  std::map<std::string, uint64_t> named_sizes;
  for (const auto& nd : f.program.named_data) {
    named_sizes[nd.key] = nd.data.size();
    r.named_data_bytes += nd.data.size();
  }
  r.named_data = f.program.named_data.size();

  for (size_t pi = 0; pi < f.program.plans.size(); ++pi) {
    const serializer::ExecutionPlan& plan = f.program.plans[pi];
    PlanReport pr;
    pr.name = plan.name;
    pr.values = plan.values.size();
    pr.inputs = plan.inputs.size();
    pr.outputs = plan.outputs.size();
    pr.instructions = plan.instructions.size();
    pr.non_const_buffer_sizes = plan.non_const_buffer_sizes;
    if (auto value = serializer::constant_method_value(plan)) pr.constant = serializer::describe(*value);
    for (const auto& op : plan.operators) pr.operators.push_back(op.overload.empty() ? op.name : op.name + "." + op.overload);
    std::set<int32_t> called;
    read_input_shapes(plan, pr);
    for (const serializer::Instruction& ins : plan.instructions) {
      if (const auto* dc = std::get_if<serializer::DelegateCall>(&ins)) {
        ++pr.delegate_calls;
        called.insert(dc->delegate_index);
      } else if (std::holds_alternative<serializer::KernelCall>(ins)) {
        ++pr.kernel_calls;
      } else if (std::holds_alternative<serializer::JumpFalseCall>(ins)) {
        ++pr.jumps;
      } else if (std::holds_alternative<serializer::MoveCall>(ins)) {
        ++pr.moves;
      }
    }
    for (size_t di = 0; di < plan.delegates.size(); ++di) {
      const serializer::BackendDelegate& bd = plan.delegates[di];
      DelegateReport dr;
      dr.plan = pi;
      dr.index = di;
      dr.backend = bd.id;
      dr.called = called.count(static_cast<int32_t>(di)) > 0;
      dr.payload_bytes = bd.processed.size();
      dr.compile_specs = bd.compile_specs;
      if (bd.id == serializer::kVulkanBackendId) {
        try {
          decode_vulkan(bd, named_sizes, dr);
        } catch (const serializer::SerializeError& e) {
          throw serializer::SerializeError(fmt::format("plan '{}' delegate {}: {}", plan.name, di, e.what()));
        }
      }
      r.delegates.push_back(std::move(dr));
    }
    r.plans.push_back(std::move(pr));
  }
  return r;
}

}  // namespace

InspectReport inspect_file(const std::filesystem::path& pte, const std::vector<std::filesystem::path>& data) {
  serializer::PteFile f = serializer::read_pte(pte);
  std::vector<std::filesystem::path> files = data;
  std::error_code ec;
  if (files.empty() && std::filesystem::is_regular_file(serializer::default_ptd_path(pte), ec) &&
      serializer::default_ptd_path(pte) != pte)
    files.push_back(serializer::default_ptd_path(pte));
  std::vector<InspectReport::ExternalData> external;
  for (const auto& file : files) {
    serializer::PtdFile ptd = serializer::read_ptd(file);
    InspectReport::ExternalData e{file.string(), ptd.file_size, ptd.named_data.size(), 0};
    for (const auto& nd : ptd.named_data) e.bytes += nd.data.size();
    serializer::attach_external_data(f, std::move(ptd), file.string());
    external.push_back(std::move(e));
  }
  InspectReport r = report_of(std::move(f), pte.string());
  r.external = std::move(external);
  return r;
}

InspectReport inspect_bytes(std::span<const uint8_t> pte, std::string label) {
  try {
    return report_of(serializer::read_pte_bytes(pte), label);
  } catch (const serializer::SerializeError& e) {
    throw serializer::SerializeError(fmt::format("{}: {}", label, e.what()));
  }
}

}  // namespace vkc::compiler
