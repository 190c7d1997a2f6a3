// Reads a shader library bundle (.vksl) and finds the variant for an operator, for the
// serializer (to embed the SPIR-V a model uses) and for tools. Names are the IR's:
// dtype "f32"/"f16"/"i32" (ir::dtype_name), storage "buffer"/"texture3d"
// (ir::storage_name), layout "width_packed"/... (ir::layout_name).
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "vkc/codegen/spec.h"

namespace vkc::codegen {

struct LibraryBinding {
  uint32_t binding = 0;
  DescriptorType type = DescriptorType::StorageBuffer;
  std::string name, access;
};

struct LibraryPushConstant {
  std::string name, type;
  uint32_t offset = 0;
};

struct LibraryVariant {
  std::string name, template_name;
  std::vector<std::string> ops;
  std::string dtype, storage, in_storage;
  std::vector<std::string> layouts;
  std::string vk_version;
  Coopmat coopmat = Coopmat::None;
  std::span<const uint32_t> spirv;  // into the bundle's bytes, which the library keeps alive
  std::vector<LibraryBinding> bindings;
  std::vector<LibraryPushConstant> push_constants;
  uint32_t push_constant_bytes = 0;
  uint32_t shared_bytes = 0;  // workgroup memory the module declares (0: none or not recorded)
  std::array<uint32_t, 3> local_size{0, 0, 0};
  std::vector<std::string> capabilities, extensions;
  bool optimized = false, validated = false;
  std::string note, source_hash;
  std::vector<std::string> params;  // "NAME=VALUE"

  bool implements(std::string_view op) const;
};

class ShaderLibrary {
 public:
  /// Throws std::runtime_error naming the file when it is missing, not a bundle, or corrupt.
  static ShaderLibrary load(const std::filesystem::path& bundle);
  /// Copies `bytes` once; the variants' SPIR-V points into that copy.
  static ShaderLibrary from_bytes(std::span<const uint8_t> bytes, const std::string& what = "bundle");
  /// For trusted bytes that outlive the library (the bundle linked into the binary, verified
  /// when it was built): nothing is copied or verified again, and only the SPIR-V of the
  /// variants used is ever read.
  static ShaderLibrary from_static_bytes(std::span<const uint8_t> bytes, const std::string& what = "bundle");

  const std::vector<LibraryVariant>& variants() const { return variants_; }
  const std::string& library_hash() const { return library_hash_; }
  const std::string& generator() const { return generator_; }
  /// Variant by exact name (binary search; variants are sorted by name); null if absent.
  const LibraryVariant* by_name(std::string_view name) const;

  struct Query {
    std::string_view op = {};          // runtime operator, e.g. "aten.add.Tensor"
    std::string_view dtype = {};       // "f32", "f16", ...
    std::string_view storage = {};     // output storage
    std::string_view layout = {};      // output layout; empty: any
    std::string_view in_storage = {};  // input storage when it differs (transitions); empty: same as storage
    bool allow_coopmat_nv = false;   // the device has VK_NV_cooperative_matrix
    bool allow_coopmat_khr = false;  // the device has VK_KHR_cooperative_matrix
  };
  /// Every variant that implements the query, best first: KHR coopmat, NV coopmat
  /// (when allowed), then the rest, each group in name order.
  std::vector<const LibraryVariant*> find_all(const Query& q) const;
  /// The best of find_all(); null when nothing matches.
  const LibraryVariant* find(const Query& q) const;

 private:
  static ShaderLibrary parse(std::span<const uint8_t> bytes, const std::string& what, bool trusted);

  std::shared_ptr<const std::vector<uint8_t>> owned_;  // the bytes, unless they are static
  std::vector<LibraryVariant> variants_;
  std::string library_hash_, generator_;
};

}  // namespace vkc::codegen
