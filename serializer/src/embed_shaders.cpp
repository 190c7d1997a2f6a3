#include "vkc/serializer/embed_shaders.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <set>

#include "vkc/ir/storage.h"

namespace vkc::serializer {
namespace {

// The dtype the GPU holds a tensor in, as the shader library names it.
std::string gpu_dtype_name(ir::DType t, const DtypeRules& r) {
  if (t == ir::DType::Int64 && r.downcast_64_bit) t = ir::DType::Int32;
  if (t == ir::DType::Float64 && r.downcast_64_bit) t = ir::DType::Float32;
  if ((t == ir::DType::Float32 || t == ir::DType::Float64) && r.force_fp16) t = ir::DType::Float16;
  return std::string(ir::dtype_name(t));
}

}  // namespace

ShaderSelection select_shaders(const partitioner::Delegate& d, const DtypeRules& rules, const ShaderEmbedding& e) {
  ShaderSelection s;
  if (!e.library) return s;
  std::set<std::string> seen, missing;
  for (const ir::Node* n : d.nodes) {
    const ir::Value* out = n->output(0);
    auto placed = d.placement.find(out);
    if (placed == d.placement.end()) continue;
    const std::string dtype = gpu_dtype_name(out->dtype(), rules);
    const std::string storage(ir::storage_name(placed->second.rep.storage));
    const std::string layout(ir::layout_name(placed->second.rep.layout));
    std::string in_storage;
    if (const ir::Value* in = n->input(0); in && d.placement.count(in)) {
      const std::string s_in(ir::storage_name(d.placement.at(in).rep.storage));
      if (s_in != storage) in_storage = s_in;
    }
    const codegen::LibraryVariant* v = e.library->find(
        {n->op_type(), dtype, storage, layout, in_storage, e.allow_coopmat_nv, e.allow_coopmat_khr});
    if (!v) {
      const std::string what = fmt::format("{} ({}, {}/{})", n->op_type(), dtype, storage, layout);
      if (missing.insert(what).second) s.missing.push_back(what);
      continue;
    }
    if (seen.insert(v->name).second) s.variants.push_back(v);
  }
  return s;
}

std::vector<uint8_t> embed_shaders(VkGraph& g, const ShaderSelection& s) {
  std::vector<uint8_t> bytes;
  g.shaders.clear();
  for (const codegen::LibraryVariant* v : s.variants) {
    const size_t offset = (bytes.size() + 15) / 16 * 16;
    const size_t length = v->spirv.size() * sizeof(uint32_t);
    bytes.resize(offset + length, 0);
    std::memcpy(bytes.data() + offset, v->spirv.data(), length);
    g.shaders.push_back({offset, length, v->name});
  }
  bytes.resize((bytes.size() + 15) / 16 * 16, 0);
  return bytes;
}

}  // namespace vkc::serializer
