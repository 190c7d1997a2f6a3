#include "vkc/compiler/op_coverage.h"

#include <fmt/format.h>

#include "vkc/ir/op_registry.h"
#include "vkc/passes/passes.h"
#include "vkc/passes/pipeline.h"

namespace vkc::compiler {
namespace {

std::string reps_text(const ir::OpDef& d) {
  if (d.reps_for) return "depends on the call (see the registry)";
  // q8ta operators: their int8 activations are packed int8 buffers; float tensors (only the
  // quantize/dequantize boundaries have one) as listed after.
  std::string s = !d.packed_int8    ? ""
                   : d.int8_layout ? fmt::format("int8: buffer {}", ir::layout_name(*d.int8_layout))
                                   : std::string("int8: buffer, packed as its int8 neighbour is");
  if (d.packed_int8 && d.dtypes.contains(ir::DType::Int8) && d.name().find("dequantize") == std::string::npos) return s;
  std::string f;
  for (ir::Storage st : {ir::Storage::Texture3D, ir::Storage::Buffer, ir::Storage::Texture2D}) {
    std::string layouts;
    for (ir::Layout l : {ir::Layout::WidthPacked, ir::Layout::HeightPacked, ir::Layout::ChannelsPacked})
      if (d.io_reps.contains({st, l})) layouts += (layouts.empty() ? "" : "/") + std::string(ir::layout_name(l)).substr(0, 1);
    if (!layouts.empty()) f += fmt::format("{}{} {}", f.empty() ? "" : ", ", ir::storage_name(st), layouts);
  }
  return s.empty() ? f : s + "; float: " + f;
}

std::string escape(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c == '|') out += "\\|";
    else out.push_back(c);
  }
  return out;
}

}  // namespace

std::string op_coverage_markdown() {
  std::string s = "### ONNX operators and the runtime operators they become\n\n";
  s += "| ONNX | runtime operator(s) | conditions (otherwise the node is reported with the reason) |\n|---|---|---|\n";
  for (const auto& l : passes::lowering_table())
    s += fmt::format("| {} | {} | {} |\n", l.onnx_op, escape(l.targets), escape(l.conditions));
  s += "\n### Passes (in pipeline order)\n\n| pass | what it does |\n|---|---|\n";
  for (const auto& p : passes::pipeline()) s += fmt::format("| `{}` | {} |\n", p.name, escape(p.summary));
  s += "\n### Runtime operators vkc emits\n\n";
  s += "Representations: storage, then packed layouts (w = width, h = height, c = channels).\n\n";
  s += "| runtime operator | family | dtypes (primary input) | representations | prepacks args | rank > 4 |\n";
  s += "|---|---|---|---|---|---|\n";
  for (const ir::OpDef& d : ir::all_ops()) {
    std::string pre;
    for (size_t i : d.self_prepacked) pre += (pre.empty() ? "" : ", ") + std::to_string(i);
    s += fmt::format("| `{}` | {} | {} | {} | {} | {} |\n", d.name(), d.family(), d.dtypes.str(), reps_text(d),
                     pre.empty() ? "–" : pre, d.supports_highdim ? "yes" : "no");
  }
  return s;
}

}  // namespace vkc::compiler
