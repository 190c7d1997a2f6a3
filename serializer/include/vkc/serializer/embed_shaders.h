// Per-model embedded SPIR-V: the shader-library variants a delegate's operators use,
// stored in the payload's bytes section and listed in VkGraph.shaders (ExecuTorch's
// runtime ignores them; vkc's Vulkan runtime and `vkc inspect` read them).
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "vkc/codegen/shader_library.h"
#include "vkc/partitioner/partition.h"
#include "vkc/serializer/build_program.h"
#include "vkc/serializer/vk_graph.h"

namespace vkc::serializer {

struct ShaderEmbedding {
  const codegen::ShaderLibrary* library = nullptr;  // null: embed nothing
  bool allow_coopmat_nv = false, allow_coopmat_khr = false;
  // Filled by build_program: the variants embedded (names, over all delegates) and the
  // operators no variant implements.
  std::set<std::string> embedded;
  std::set<std::string> missing;
};

struct ShaderSelection {
  std::vector<const codegen::LibraryVariant*> variants;  // distinct, in first-use order
  std::vector<std::string> missing;                      // "op (dtype, storage/layout)" with no variant
};

/// The variants the delegate's operators need, looked up by operator, GPU dtype and the
/// output's storage and layout.
ShaderSelection select_shaders(const partitioner::Delegate& d, const DtypeRules& rules, const ShaderEmbedding& e);
/// Lists `s.variants` in g.shaders (named by variant) and returns the bytes section holding
/// their SPIR-V, each 16-aligned.
std::vector<uint8_t> embed_shaders(VkGraph& g, const ShaderSelection& s);

}  // namespace vkc::serializer
