#include "fold_inputs.h"

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <set>

namespace vkc::conformance {
namespace {

// Per op type, the input positions that hold weights or attribute-like parameters.
const std::map<std::string, std::vector<int>>& parameter_slots() {
  static const std::map<std::string, std::vector<int>> kSlots = {
      {"Conv", {1, 2}},
      {"ConvTranspose", {1, 2}},
      {"Gemm", {1, 2}},
      {"BatchNormalization", {1, 2, 3, 4}},
      {"LayerNormalization", {1, 2}},
      {"InstanceNormalization", {1, 2}},
      {"PRelu", {1}},
      {"Clip", {1, 2}},
      {"Pad", {1, 2, 3}},
      {"Reshape", {1}},
      {"Resize", {1, 2, 3}},
      {"Upsample", {1}},
      {"Slice", {1, 2, 3, 4}},
      {"Split", {1}},
      {"Squeeze", {1}},
      {"Unsqueeze", {1}},
      {"ReduceMean", {1}},
      {"ReduceSum", {1}},
      {"ReduceMax", {1}},
      {"ReduceMin", {1}},
      {"Expand", {1}},
      {"Tile", {1}},
      {"Dropout", {1, 2}},
      {"LSTM", {1, 2, 3, 4, 7}},  // W, R, B, sequence_lens, P
      {"GRU", {1, 2, 3, 4}},
      {"RNN", {1, 2, 3, 4}},
  };
  return kSlots;
}

}  // namespace

std::vector<std::string> weight_inputs(const onnx::ModelProto& model) {
  const auto& g = model.graph();
  std::set<std::string> inits;
  for (const auto& t : g.initializer()) inits.insert(t.name());
  std::set<std::string> graph_inputs;
  for (const auto& in : g.input())
    if (!inits.count(in.name())) graph_inputs.insert(in.name());
  std::set<std::string> found;
  for (const auto& node : g.node()) {
    auto it = parameter_slots().find(node.op_type());
    if (it == parameter_slots().end() || !node.domain().empty()) continue;
    for (int slot : it->second)
      if (slot < node.input_size() && graph_inputs.count(node.input(slot))) found.insert(node.input(slot));
  }
  std::vector<std::string> out;
  for (const auto& in : g.input())  // graph input order
    if (found.count(in.name())) out.push_back(in.name());
  return out;
}

void fold_inputs(onnx::ModelProto& model, const std::map<std::string, onnx::TensorProto>& values) {
  auto* g = model.mutable_graph();
  for (const auto& [name, value] : values) {
    onnx::TensorProto* t = g->add_initializer();
    *t = value;
    t->set_name(name);
    if (model.ir_version() < 4) continue;  // before IR 4 every initializer is also a graph input
    auto* inputs = g->mutable_input();
    inputs->erase(std::remove_if(inputs->begin(), inputs->end(), [&](const auto& i) { return i.name() == name; }),
                  inputs->end());
  }
}

}  // namespace vkc::conformance
