// ShaderSpec -> concrete Variants: the cartesian product of generate_variant_forall,
// per-variant overrides, resolved bindings, std430 push-constant offsets.
#include <algorithm>
#include <set>

#include "vkc/codegen/spec.h"

namespace vkc::codegen {
namespace {

const std::set<std::string, std::less<>> kDTypes = {"f32", "f16", "i32", "i8", "u8", "bool"};
const std::set<std::string, std::less<>> kStorages = {"buffer", "texture3d", "texture2d"};
const std::set<std::string, std::less<>> kLayouts = {"width_packed", "height_packed", "channels_packed"};

bool is_identifier(std::string_view s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  return std::all_of(s.begin(), s.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
}

std::string value_of(const ParamList& params, std::string_view name) {
  for (const auto& [k, v] : params)
    if (k == name) return v;
  return {};
}

void set_value(ParamList& params, const std::string& name, const std::string& value) {
  for (auto& [k, v] : params)
    if (k == name) {
      v = value;
      return;
    }
  params.emplace_back(name, value);
}

struct Expander {
  const ShaderSpec& spec;
  std::vector<Variant> out;

  [[noreturn]] void fail(int line, const std::string& msg) const {
    throw SpecError(spec.file.string() + ":" + std::to_string(line) + ": " + msg);
  }

  void expand(const VariantDecl& d) {
    std::vector<ForallAxis> axes;
    for (const ForallAxis& a : d.forall ? *d.forall : spec.forall) {
      const bool overridden = std::any_of(d.overrides.begin(), d.overrides.end(),
                                          [&](const auto& o) { return o.first == a.param; });
      if (!overridden) axes.push_back(a);
    }
    std::vector<size_t> idx(axes.size(), 0);
    while (true) {
      ParamList params = spec.defaults;
      for (const auto& [k, v] : d.overrides) set_value(params, k, v);
      std::string name = d.name;
      for (size_t i = 0; i < axes.size(); ++i) {
        const ForallValue& fv = axes[i].values[idx[i]];
        set_value(params, axes[i].param, fv.value);
        if (!fv.suffix.empty()) name += "_" + fv.suffix;
      }
      add(d, name, std::move(params));
      size_t i = axes.size();
      while (i > 0 && ++idx[i - 1] == axes[i - 1].values.size()) idx[--i] = 0;
      if (i == 0) break;
    }
  }

  void add(const VariantDecl& d, const std::string& name, ParamList params) {
    if (!is_identifier(name)) fail(d.line, "variant name '" + name + "' is not a C identifier");
    Variant v;
    v.name = name;
    v.spec = &spec;
    v.line = d.line;
    v.ops = d.ops;
    v.local_size = d.local_size ? *d.local_size : spec.local_size;
    if (value_of(params, "VK_VERSION").empty()) params.emplace_back("VK_VERSION", "1.1");
    const std::string vk = value_of(params, "VK_VERSION");
    if (vk != "1.0" && vk != "1.1" && vk != "1.2" && vk != "1.3")
      fail(d.line, name + ": VK_VERSION '" + vk + "' (expected 1.0, 1.1, 1.2 or 1.3)");
    v.vk_minor = vk[2] - '0';
    const std::string opt = value_of(params, "OPTIMIZE");
    if (!opt.empty() && opt != "true" && opt != "false") fail(d.line, name + ": OPTIMIZE must be true or false");
    v.optimize = opt != "false";
    v.dtype = value_of(params, "DTYPE");
    if (!v.dtype.empty() && !kDTypes.count(v.dtype)) fail(d.line, name + ": unknown DTYPE '" + v.dtype + "'");
    v.storage = value_of(params, "STORAGE");
    if (v.storage.empty()) v.storage = value_of(params, "OUT_STORAGE");
    v.in_storage = value_of(params, "IN_STORAGE");
    if (v.in_storage.empty()) v.in_storage = v.storage;
    for (const std::string& s : {v.storage, v.in_storage})
      if (!s.empty() && !kStorages.count(s)) fail(d.line, name + ": unknown storage '" + s + "'");
    const std::string cm = value_of(params, "COOPMAT");
    if (cm == "nv") v.coopmat = Coopmat::NV;
    else if (!cm.empty() && cm != "none") fail(d.line, name + ": COOPMAT must be nv or none (KHR is derived)");

    if (d.layouts) v.layouts = *d.layouts;
    else if (auto it = spec.layouts.find(v.storage); it != spec.layouts.end()) v.layouts = it->second;
    else if (auto all = spec.layouts.find("*"); all != spec.layouts.end()) v.layouts = all->second;
    else if (v.storage == "buffer") v.layouts = {"width_packed"};
    else v.layouts = {"width_packed", "height_packed", "channels_packed"};
    for (const auto& l : v.layouts)
      if (!kLayouts.count(l)) fail(d.line, name + ": unknown layout '" + l + "'");

    std::vector<BindingDecl> bindings = spec.bindings;
    bindings.insert(bindings.end(), d.extra_bindings.begin(), d.extra_bindings.end());
    for (size_t i = 0; i < bindings.size(); ++i) {
      const BindingDecl& b = bindings[i];
      Binding r{static_cast<uint32_t>(i), DescriptorType::StorageBuffer, b.name, b.access};
      if (b.type == "tensor") {
        const std::string st = value_of(params, b.storage_param);
        if (st.empty()) fail(d.line, name + ": binding '" + b.name + "' takes its storage from " + b.storage_param +
                                         ", which is not a parameter");
        if (!kStorages.count(st)) fail(d.line, name + ": binding '" + b.name + "': unknown storage '" + st + "'");
        r.type = st == "buffer" ? DescriptorType::StorageBuffer : DescriptorType::StorageImage;
      } else if (b.type == "image") {
        r.type = DescriptorType::StorageImage;
      } else if (b.type == "sampler") {
        r.type = DescriptorType::SampledImage;
      } else if (b.type == "uniform") {
        r.type = DescriptorType::UniformBuffer;
      }
      v.bindings.push_back(r);
    }
    uint32_t offset = 0;
    for (const PushConstantDecl& p : spec.push_constants) {
      const auto [size, align] = *glsl_type_size_align(p.type);
      offset = (offset + align - 1) / align * align;
      v.push_constants.push_back({p.name, p.type, offset, size});
      offset += size;
    }
    v.push_constant_bytes = offset;
    v.params = std::move(params);
    out.push_back(std::move(v));
    if (spec.khr_from_nv) {
      if (out.back().coopmat != Coopmat::NV) fail(d.line, name + ": khr_from_nv needs COOPMAT: nv");
      Variant k = out.back();
      std::string base = name.size() > 3 && name.ends_with("_nv") ? name.substr(0, name.size() - 3) : name;
      k.name = base + "_khr";
      k.coopmat = Coopmat::KHR;
      k.khr_name.clear();
      k.derived_from = name;
      out.back().khr_name = k.name;
      out.push_back(std::move(k));
    }
    // Chained dispatches (spec `chain`): a twin `<name>_chain` with the counters' binding last, the
    // push constant `ivec4 chain` last, VKC_CHAIN_BINDING defined, and no operators (the runtime
    // takes it in place of its original where it chains, vkc_chain.glslh).
    bool chained = spec.chain;
    for (const auto& [k, want] : spec.chain_when) chained = chained && value_of(out.back().params, k) == want;
    if (chained) {
      Variant c = out.back();
      c.name = name + "_chain";
      c.ops.clear();
      c.khr_name.clear();
      c.params.emplace_back("VKC_CHAIN_BINDING", std::to_string(c.bindings.size()));
      bool by_default = spec.chain_by_default;
      for (const auto& [k, want] : spec.chain_by_default_when) by_default = by_default && value_of(c.params, k) == want;
      if (by_default) c.params.emplace_back("VKC_CHAIN_BY_DEFAULT", "1");
      c.bindings.push_back(Binding{static_cast<uint32_t>(c.bindings.size()), DescriptorType::StorageBuffer, "chain",
                                   "read_write"});
      const uint32_t at = (c.push_constant_bytes + 15) / 16 * 16;
      c.push_constants.push_back({"chain", "ivec4", at, 16});
      c.push_constant_bytes = at + 16;
      out.push_back(std::move(c));
    }
  }
};

}  // namespace

std::string_view descriptor_type_name(DescriptorType t) {
  switch (t) {
    case DescriptorType::StorageBuffer: return "storage_buffer";
    case DescriptorType::StorageImage: return "storage_image";
    case DescriptorType::SampledImage: return "sampled_image";
    case DescriptorType::UniformBuffer: return "uniform_buffer";
  }
  return "?";
}

bool is_control_param(std::string_view name) { return name == "VK_VERSION" || name == "OPTIMIZE"; }

std::optional<std::pair<uint32_t, uint32_t>> glsl_type_size_align(std::string_view type) {
  static const std::pair<std::string_view, std::pair<uint32_t, uint32_t>> kTypes[] = {
      {"int", {4, 4}},    {"uint", {4, 4}},    {"float", {4, 4}},   {"ivec2", {8, 8}},  {"uvec2", {8, 8}},
      {"vec2", {8, 8}},   {"ivec3", {12, 16}}, {"uvec3", {12, 16}}, {"vec3", {12, 16}}, {"ivec4", {16, 16}},
      {"uvec4", {16, 16}}, {"vec4", {16, 16}}};
  for (const auto& [n, sa] : kTypes)
    if (n == type) return sa;
  return std::nullopt;
}

const std::string* Variant::param(std::string_view name) const {
  for (const auto& [k, v] : params)
    if (k == name) return &v;
  return nullptr;
}

std::vector<Variant> expand_variants(const ShaderSpec& spec) {
  Expander e{spec, {}};
  if (spec.variants.empty()) {
    VariantDecl d;
    d.name = spec.name;
    d.line = 1;
    e.expand(d);
  }
  for (const VariantDecl& d : spec.variants) {
    e.expand(d);
    // Its copies with other workgroup sizes (local_size_variants), NAME_suffix.
    for (const auto& [suffix, size] : d.local_size_variants) {
      VariantDecl copy = d;
      copy.name += "_" + suffix;
      copy.local_size = size;
      copy.local_size_variants.clear();
      e.expand(copy);
    }
  }
  std::sort(e.out.begin(), e.out.end(), [](const Variant& a, const Variant& b) { return a.name < b.name; });
  for (size_t i = 1; i < e.out.size(); ++i)
    if (e.out[i].name == e.out[i - 1].name) e.fail(1, "two variants are named '" + e.out[i].name + "'");
  return e.out;
}

}  // namespace vkc::codegen
