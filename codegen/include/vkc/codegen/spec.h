// Shader specs: one YAML file per GLSL template (see docs/shader-specs.md).
// parse_spec() reads and checks one file; expand_variants() turns it into the
// concrete variants the library holds.
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace vkc::codegen {

/// A spec or template problem; what() is one line, "FILE:LINE: message".
class SpecError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Ordered NAME -> VALUE pairs (declaration order is kept: it decides names).
using ParamList = std::vector<std::pair<std::string, std::string>>;

struct ForallValue {
  std::string value;
  std::string suffix;  // appended to the variant name as "_<suffix>"
};

/// One axis of generate_variant_forall: a parameter and the values it takes.
struct ForallAxis {
  std::string param;
  std::vector<ForallValue> values;
};

/// One entry of `bindings:`; its position is its binding number (set 0).
struct BindingDecl {
  std::string name;
  std::string type;           // tensor | buffer | image | sampler | uniform
  std::string storage_param;  // for type tensor: the parameter naming the storage (default STORAGE)
  std::string access;         // read | write | read_write
};

/// One entry of shader_variants.
struct VariantDecl {
  std::string name;
  int line = 0;
  std::vector<std::string> ops;              // OPS: runtime operators implemented
  ParamList overrides;                       // UPPERCASE keys
  std::optional<std::vector<ForallAxis>> forall;  // replaces the spec's iteration
  std::optional<std::vector<std::string>> layouts;
  std::optional<std::array<uint32_t, 3>> local_size;  // replaces the spec's
  std::vector<BindingDecl> extra_bindings;     // after the spec's (numbered on from them)
  // local_size_variants: copies of this variant with another workgroup size, named NAME_suffix
  // (before the forall suffixes), in order.
  std::vector<std::pair<std::string, std::array<uint32_t, 3>>> local_size_variants;
};

enum class DescriptorType : uint8_t { StorageBuffer, StorageImage, SampledImage, UniformBuffer };
std::string_view descriptor_type_name(DescriptorType t);


struct PushConstantDecl {
  std::string name;
  std::string type;  // int, uint, float, ivec2..4, uvec2..4, vec2..4
};

struct ShaderSpec {
  std::string name;                       // the top-level key; names the template <name>.glsl
  std::filesystem::path file;             // the YAML file
  std::filesystem::path template_path;    // the GLSL template
  ParamList defaults;                     // parameter_names_with_default_values
  std::vector<ForallAxis> forall;         // generate_variant_forall
  std::vector<VariantDecl> variants;      // shader_variants (empty: one variant named after the spec)
  std::vector<BindingDecl> bindings;
  std::vector<PushConstantDecl> push_constants;
  std::array<uint32_t, 3> local_size{64, 1, 1};
  /// Layouts handled, per storage value ("*" for any storage).
  std::map<std::string, std::vector<std::string>> layouts;
  bool khr_from_nv = false;               // also emit a KHR cooperative-matrix variant per variant
  /// `chain: true` (every variant) or `chain: {PARAM: value, ...}` (the variants with those values):
  /// each such variant gets a twin `<name>_chain` whose last binding is `chain` (the runtime's
  /// counters of chained dispatches, docs/runtime.md "Chained dispatches"; its number injected as
  /// VKC_CHAIN_BINDING) and whose last push constant is `ivec4 chain`.
  bool chain = false;
  ParamList chain_when;
  /// `chain_by_default: true` (every twin) or `{PARAM: value, ...}` (the twins of the variants with
  /// those values): they run chained where VKC_VULKAN_CHAIN is unset (on the devices the runtime
  /// chains on by default); otherwise only under VKC_VULKAN_CHAIN=1.
  bool chain_by_default = false;
  ParamList chain_by_default_when;
};

/// Parses one spec file. Throws SpecError ("file:line: ...") on any problem:
/// YAML syntax, unknown or duplicate keys, wrong value kinds, undeclared parameters.
ShaderSpec parse_spec_file(const std::filesystem::path& yaml_file);
/// Same, from text (tests); `file` is only used in messages and to find the template.
ShaderSpec parse_spec(std::string_view yaml_text, const std::filesystem::path& file);

enum class Coopmat : uint8_t { None, NV, KHR };

struct Binding {
  uint32_t binding = 0;
  DescriptorType type = DescriptorType::StorageBuffer;
  std::string name;
  std::string access;
};

struct PushField {
  std::string name;
  std::string type;
  uint32_t offset = 0;
  uint32_t size = 0;
};

/// A concrete shader: a spec with every parameter fixed.
struct Variant {
  std::string name;       // unique C identifier
  const ShaderSpec* spec = nullptr;
  int line = 0;           // of its shader_variants entry (1 when the spec has none)
  ParamList params;       // every parameter, resolved, in declaration order
  std::vector<std::string> ops;
  std::string dtype;      // from DTYPE ("" when the spec has none)
  std::string storage;    // from STORAGE or OUT_STORAGE
  std::string in_storage; // from IN_STORAGE, else storage
  std::vector<std::string> layouts;
  int vk_minor = 1;       // VK_VERSION 1.<minor>
  bool optimize = true;   // OPTIMIZE
  Coopmat coopmat = Coopmat::None;
  std::string khr_name;     // NV: the KHR variant derived from it ("" if none)
  std::string derived_from; // KHR: the NV variant it is rewritten from
  std::vector<Binding> bindings;
  std::vector<PushField> push_constants;
  uint32_t push_constant_bytes = 0;
  std::array<uint32_t, 3> local_size{64, 1, 1};

  const std::string* param(std::string_view name) const;
  std::string vk_version() const { return "1." + std::to_string(vk_minor); }
};

/// Expands a spec into its variants (sorted by name). Throws SpecError for
/// invalid names, unknown storages/dtypes, duplicate names, bad push-constant types.
std::vector<Variant> expand_variants(const ShaderSpec& spec);

/// std430 size and alignment of a push-constant member type; nullopt for unknown types.
std::optional<std::pair<uint32_t, uint32_t>> glsl_type_size_align(std::string_view type);

/// Parameters the generator reads itself and does not #define in the source.
bool is_control_param(std::string_view name);

}  // namespace vkc::codegen
