// Builds a one-delegate Program around a hand-written VkGraph, for backend tests that need
// exact control of the serialized arguments.
#pragma once

#include <cstring>
#include <span>
#include <string>
#include <vector>

#include "vkc/serializer/program.h"
#include "vkc/serializer/pte_reader.h"
#include "vkc/serializer/sha256.h"
#include "vkc/serializer/vk_payload.h"

namespace vkc::test {

using namespace vkc::serializer;

class VkProgramBuilder {
 public:
  int tensor(std::vector<uint32_t> dims, VkDataType dtype = VkDataType::Float32, int mem_obj = -1) {
    VkTensor t;
    t.dtype = dtype;
    t.dims = std::move(dims);
    t.mem_obj_id = mem_obj;
    return push(t);
  }
  int constant(std::vector<uint32_t> dims, const std::vector<float>& v) {
    std::vector<uint8_t> bytes(v.size() * 4);
    std::memcpy(bytes.data(), v.data(), bytes.size());
    return constant_bytes(std::move(dims), VkDataType::Float32, std::move(bytes));
  }
  int constant_bytes(std::vector<uint32_t> dims, VkDataType dtype, std::vector<uint8_t> bytes) {
    const std::string key = sha256_hex(bytes);
    program_.named_data.push_back({key, ir::TensorData::owned(bytes)});
    g_.constants.push_back({UINT64_MAX, bytes.size(), key});
    VkTensor t;
    t.dtype = dtype;
    t.dims = std::move(dims);
    t.constant_id = static_cast<int32_t>(g_.constants.size() - 1);
    return push(t);
  }
  int value(VkValue v) { return push(std::move(v)); }
  void call(const std::string& name, std::vector<int32_t> args) {
    g_.chain.push_back({static_cast<uint32_t>(g_.chain.size()), name, std::move(args)});
  }
  /// Graph inputs/outputs with their plan tensors (the plan dtype may differ from the GPU dtype).
  void input(int id, ScalarType plan_type = ScalarType::Float) { inputs_.push_back({id, plan_type}); }
  void output(int id, ScalarType plan_type = ScalarType::Float) { outputs_.push_back({id, plan_type}); }

  /// Embeds `spirv` in the payload as the code of shader variant `name` (VkGraph.shaders).
  void embed_shader(const std::string& name, std::span<const uint32_t> spirv) {
    while (shader_bytes_.size() % 16) shader_bytes_.push_back(0);
    g_.shaders.push_back({shader_bytes_.size(), spirv.size() * 4, name});
    const auto* p = reinterpret_cast<const uint8_t*>(spirv.data());
    shader_bytes_.insert(shader_bytes_.end(), p, p + spirv.size() * 4);
  }

  PteFile build() {
    ExecutionPlan plan;
    plan.name = "forward";
    DelegateCall dc;
    for (auto* list : {&inputs_, &outputs_}) {
      for (const auto& [id, type] : *list) {
        const auto& t = std::get<VkTensor>(g_.values[id]);
        EtTensor et;
        et.scalar_type = type;
        for (uint32_t d : t.dims) et.sizes.push_back(static_cast<int32_t>(d));
        plan.values.push_back(et);
        const int32_t pv = static_cast<int32_t>(plan.values.size() - 1);
        dc.args.push_back(pv);
        (list == &inputs_ ? plan.inputs : plan.outputs).push_back(pv);
        (list == &inputs_ ? g_.input_ids : g_.output_ids).push_back(static_cast<uint32_t>(id));
      }
    }
    plan.instructions.push_back(dc);
    plan.delegates.push_back({"VulkanBackend", ir::TensorData::owned(write_vk_payload(g_, shader_bytes_)), {}});
    PteFile f;
    f.program = program_;
    f.program.plans.push_back(std::move(plan));
    return f;
  }

 private:
  std::vector<uint8_t> shader_bytes_;
  int push(VkValue v) {
    g_.values.push_back(std::move(v));
    return static_cast<int>(g_.values.size() - 1);
  }
  VkGraph g_;
  Program program_;
  std::vector<std::pair<int, ScalarType>> inputs_, outputs_;
};

}  // namespace vkc::test
