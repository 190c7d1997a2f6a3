// Text and JSON renderings of an InspectReport.
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "vkc/serializer/dynamic_dims.h"
#include "vkc/compiler/inspect.h"

namespace vkc::compiler {
namespace {

using nlohmann::ordered_json;

std::string hex(const std::vector<uint8_t>& bytes) {
  std::string s;
  for (uint8_t b : bytes) s += fmt::format("{:02x}", b);
  return s;
}

// Decoded options as key -> value, in spec order; unknown keys as hex bytes.
ordered_json input_shapes_json(const std::vector<PlanInputReport>& inputs) {
  ordered_json out = ordered_json::array();
  for (const PlanInputReport& in : inputs) {
    ordered_json sizes = ordered_json::object();
    for (const auto& [dim, list] : in.sizes) sizes[std::to_string(dim)] = list;
    ordered_json ranges = ordered_json::object();
    for (const auto& [dim, r] : in.ranges) ranges[std::to_string(dim)] = {{"name", r.name}, {"min", r.min}, {"max", r.max}};
    out.push_back({{"shape", in.shape}, {"dynamic", in.dynamic}, {"sizes", sizes}, {"ranges", ranges}});
  }
  return out;
}

ordered_json options_json(const serializer::CompileOptions& o) {
  ordered_json j = ordered_json::object();
  auto flag = [&](const char* key, const std::optional<bool>& v) {
    if (v) j[key] = *v;
  };
  flag("small_texture_limits", o.small_texture_limits);
  flag("skip_memory_planning", o.skip_memory_planning);
  flag("force_fp16", o.force_fp16);
  flag("downcast_64_bit", o.downcast_64_bit);
  flag("require_dynamic_shapes", o.require_dynamic_shapes);
  flag("skip_tag_memory_metadata", o.skip_tag_memory_metadata);
  flag("skip_bool_tensors", o.skip_bool_tensors);
  if (o.texture_limits) j["texture_limits"] = {o.texture_limits->x, o.texture_limits->y, o.texture_limits->z};
  if (o.storage_type_override) j["storage_type_override"] = std::string(serializer::to_string(*o.storage_type_override));
  if (o.memory_layout_override)
    j["memory_layout_override"] = std::string(serializer::to_string(*o.memory_layout_override));
  for (const auto& u : o.unknown) {
    if (u.key == serializer::kDynamicDimsKey) {  // vkc's table of dynamic dims: summarized
      const auto t = serializer::DynamicDims::decode(u.value);
      std::vector<std::string> names;
      for (const auto& y : t.symbols) names.push_back(fmt::format("{} {}..{}", y.name, y.min, y.max));
      j[u.key] = fmt::format("{}; {} tensor dims follow", fmt::join(names, ", "), t.dims.size());
    } else {
      j[u.key] = "0x" + hex(u.value);
    }
  }
  return j;
}

std::string options_text(const serializer::CompileOptions& o) {
  std::string s;
  const ordered_json j = options_json(o);
  for (const auto& [k, v] : j.items()) s += fmt::format("{}{}={}", s.empty() ? "" : " ", k, v.dump());
  return s.empty() ? "(none)" : s;
}

}  // namespace

std::string inspect_json(const InspectReport& r) {
  ordered_json j;
  j["file"] = r.path;
  j["file_size"] = r.file_size;
  j["program_size"] = r.program_size;
  j["segment_base_offset"] = r.segment_base_offset;
  j["segment_data_size"] = r.segment_data_size;
  j["segment_sizes"] = r.segment_sizes;
  j["constant_segment_bytes"] = r.constant_segment_bytes;
  j["named_data"] = {{"entries", r.named_data}, {"bytes", r.named_data_bytes}};
  if (!r.external.empty()) {
    j["external_data"] = ordered_json::array();
    for (const auto& e : r.external)
      j["external_data"].push_back({{"path", e.path}, {"file_size", e.file_size}, {"entries", e.entries}, {"bytes", e.bytes}});
  }
  j["execution_plans"] = ordered_json::array();
  for (const PlanReport& p : r.plans) {
    if (p.constant) {
      j["constant_methods"][p.name] = *p.constant;
      continue;
    }
    j["execution_plans"].push_back({{"name", p.name},
                                    {"values", p.values},
                                    {"inputs", p.inputs},
                                    {"outputs", p.outputs},
                                    {"instructions", p.instructions},
                                    {"delegate_calls", p.delegate_calls},
                                    {"kernel_calls", p.kernel_calls},
                                    {"jumps", p.jumps},
                                    {"moves", p.moves},
                                    {"operators", p.operators},
                                    {"non_const_buffer_sizes", p.non_const_buffer_sizes},
                                    {"input_shapes", input_shapes_json(p.input_shapes)}});
  }
  j["delegates"] = ordered_json::array();
  for (const DelegateReport& d : r.delegates) {
    ordered_json dj = {{"plan", r.plans.at(d.plan).name},
                       {"index", d.index},
                       {"backend", d.backend},
                       {"called", d.called},
                       {"payload_bytes", d.payload_bytes},
                       {"compile_options", options_json(d.options)},
                       {"operators", d.ops},
                       {"families", d.families},
                       {"values", d.values},
                       {"tensors", d.tensors},
                       {"inputs", d.inputs},
                       {"outputs", d.outputs},
                       {"constants", d.constants},
                       {"constant_bytes", d.constant_bytes},
                       {"constants_not_found", d.constants_not_found},
                       {"representations", d.representations},
                       {"memory_objects", d.memory_objects},
                       {"shaders", d.shaders},
                       {"shader_bytes", d.shader_bytes},
                       {"shared_tensors", d.shared_tensors}};
    j["delegates"].push_back(std::move(dj));
  }
  return j.dump(2) + "\n";
}

std::string inspect_text(const InspectReport& r) {
  std::string s = fmt::format("{}: {} bytes (program {} bytes, segments {} bytes in {})\n", r.path, r.file_size,
                              r.program_size, r.segment_data_size, r.segment_sizes.size());
  s += fmt::format("named data: {} entries, {} bytes; constant segment: {} bytes\n", r.named_data, r.named_data_bytes,
                   r.constant_segment_bytes);
  for (const auto& e : r.external)
    s += fmt::format("external data: {} ({} bytes): {} entries, {} bytes\n", e.path, e.file_size, e.entries, e.bytes);
  std::string constants;
  for (const PlanReport& p : r.plans) {
    if (p.constant) {
      constants += fmt::format("{}{} {}", constants.empty() ? "" : ", ", p.name, *p.constant);
      continue;
    }
    s += fmt::format("plan '{}': {} values, {} inputs, {} outputs, {} instructions ({} delegate calls, {} kernel calls{})\n",
                     p.name, p.values, p.inputs, p.outputs, p.instructions, p.delegate_calls, p.kernel_calls,
                     p.jumps ? fmt::format(", {} jumps, {} moves: branches chosen at run time", p.jumps, p.moves) : "");
    for (const std::string& op : p.operators) s += fmt::format("  kernel {}\n", op);
    for (size_t i = 0; i < p.input_shapes.size(); ++i) {
      const PlanInputReport& in = p.input_shapes[i];
      if (!in.dynamic) continue;
      std::string sizes;
      for (const auto& [dim, list] : in.sizes) sizes += fmt::format("; dim {} takes {}", dim, fmt::join(list, ", "));
      for (const auto& [dim, r] : in.ranges) sizes += fmt::format("; dim {} takes {}..{} ({})", dim, r.min, r.max, r.name);
      s += fmt::format("  input {}: [{}] dynamic-bound{}\n", i, fmt::join(in.shape, ","), sizes);
    }
  }
  if (!constants.empty()) s += fmt::format("constant methods: {}\n", constants);
  for (const DelegateReport& d : r.delegates) {
    s += fmt::format("delegate {} of '{}': {}{}, payload {} bytes\n", d.index, r.plans.at(d.plan).name, d.backend,
                     d.called ? " (called)" : " (never called)", d.payload_bytes);
    s += fmt::format("  compile options: {}\n", options_text(d.options));
    s += fmt::format("  values {}, tensors {}, inputs {}, outputs {}, constants {} ({} bytes)\n", d.values, d.tensors,
                     d.inputs, d.outputs, d.constants, d.constant_bytes);
    if (d.constants_not_found)
      s += fmt::format("  {} constants not found: in an external data file (.ptd) not read with the program "
                       "(--data FILE, or FILE.ptd beside it)\n",
                       d.constants_not_found);
    s += fmt::format("  memory objects {} shared by {} tensors\n", d.memory_objects, d.shared_tensors);
    s += fmt::format("  embedded shaders {} ({} bytes of SPIR-V)\n", d.shaders.size(), d.shader_bytes);
    for (const auto& [family, n] : d.families) s += fmt::format("  family {:<14} {}\n", family, n);
    for (const auto& [op, n] : d.ops) s += fmt::format("    {:<44} {}\n", op, n);
    for (const auto& [rep, n] : d.representations) s += fmt::format("  storage {:<30} {}\n", rep, n);
  }
  return s;
}

}  // namespace vkc::compiler
