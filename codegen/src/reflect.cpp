// SPIRV-Cross reflection and the declared-vs-reflected check.
#include <spirv_cross.hpp>

#include <algorithm>

#include "vkc/codegen/reflect.h"

namespace vkc::codegen {
namespace {

std::string glsl_type(const spirv_cross::SPIRType& t) {
  std::string base;
  switch (t.basetype) {
    case spirv_cross::SPIRType::Int: base = "int"; break;
    case spirv_cross::SPIRType::UInt: base = "uint"; break;
    case spirv_cross::SPIRType::Float: base = "float"; break;
    default: return "other";
  }
  if (t.columns != 1 || !t.array.empty()) return "other";
  if (t.vecsize == 1) return base;
  const std::string prefix = base == "int" ? "i" : base == "uint" ? "u" : "";
  return prefix + "vec" + std::to_string(t.vecsize);
}

// Bytes of a Workgroup variable's type as the validation layer counts them against
// maxComputeSharedMemorySize: elements times their size, arrays multiplied out, struct members
// summed (no padding).
uint64_t shared_type_bytes(const spirv_cross::Compiler& c, const spirv_cross::SPIRType& t) {
  uint64_t bytes = 0;
  if (t.basetype == spirv_cross::SPIRType::Struct) {
    for (const auto member : t.member_types) bytes += shared_type_bytes(c, c.get_type(member));
  } else {
    const uint64_t width = t.basetype == spirv_cross::SPIRType::Boolean ? 32 : t.width;
    bytes = width / 8 * t.vecsize * t.columns;
  }
  for (size_t i = 0; i < t.array.size(); ++i)
    bytes *= t.array_size_literal[i] ? t.array[i] : c.get_constant(t.array[i]).scalar();
  return bytes;
}

std::string words_to_string(std::span<const uint32_t> w) {
  std::string s;
  for (uint32_t word : w)
    for (int i = 0; i < 4; ++i) {
      const char c = static_cast<char>((word >> (8 * i)) & 0xff);
      if (c == 0) return s;
      s += c;
    }
  return s;
}

// SPIRV-Cross 2021 (Debian bookworm) cannot parse cooperative-matrix opcodes. Resources,
// push constants and execution modes do not depend on function bodies, so reflection runs
// on a copy without the matrix types (and what is built on them) and with every function
// body reduced to OpLabel; OpReturn.
std::vector<uint32_t> without_coopmat(std::span<const uint32_t> m) {
  std::vector<uint32_t> out(m.begin(), m.begin() + 5);
  std::vector<bool> bad(m[3] + 1, false);
  bool in_function = false, label_seen = false;
  for (size_t i = 5; i < m.size();) {
    const uint32_t op = m[i] & 0xffff, count = m[i] >> 16;
    if (count == 0 || i + count > m.size()) break;
    const auto inst = m.subspan(i, count);
    i += count;
    if (op == 5358 || op == 4456) {  // OpTypeCooperativeMatrixNV / KHR
      bad[inst[1]] = true;
      continue;
    }
    if (op == 54) in_function = true, label_seen = false;  // OpFunction
    if (in_function) {
      if (op == 54 || op == 55) out.insert(out.end(), inst.begin(), inst.end());
      if (op == 248 && !label_seen) {  // first OpLabel, then OpReturn
        out.insert(out.end(), inst.begin(), inst.end());
        out.push_back((1u << 16) | 253);
        label_seen = true;
      }
      if (op == 56) out.insert(out.end(), inst.begin(), inst.end()), in_function = false;
      continue;
    }
    bool uses_bad = false;
    for (size_t k = 1; k < inst.size(); ++k) uses_bad = uses_bad || (inst[k] < bad.size() && bad[inst[k]]);
    const bool defines = (op >= 19 && op <= 39) || (op >= 41 && op <= 52) || op == 59;  // types, constants, variables
    if (uses_bad && defines) {
      bad[op >= 19 && op <= 39 ? inst[1] : inst[2]] = true;
      continue;
    }
    if (uses_bad && (op == 5 || op == 71 || op == 72)) continue;  // names, decorations of removed ids
    out.insert(out.end(), inst.begin(), inst.end());
  }
  return out;
}

}  // namespace

std::string capability_name(uint32_t c) {
  static const std::pair<uint32_t, const char*> kNames[] = {
      {1, "Shader"},
      {9, "Float16"},
      {10, "Float64"},
      {11, "Int64"},
      {22, "Int16"},
      {39, "Int8"},
      {49, "StorageImageExtendedFormats"},
      {55, "StorageImageReadWithoutFormat"},
      {56, "StorageImageWriteWithoutFormat"},
      {61, "GroupNonUniform"},
      {62, "GroupNonUniformVote"},
      {63, "GroupNonUniformArithmetic"},
      {64, "GroupNonUniformBallot"},
      {65, "GroupNonUniformShuffle"},
      {66, "GroupNonUniformShuffleRelative"},
      {67, "GroupNonUniformClustered"},
      {68, "GroupNonUniformQuad"},
      {4433, "StorageBuffer16BitAccess"},
      {4434, "UniformAndStorageBuffer16BitAccess"},
      {4435, "StoragePushConstant16"},
      {4448, "StorageBuffer8BitAccess"},
      {4449, "UniformAndStorageBuffer8BitAccess"},
      {4450, "StoragePushConstant8"},
      {5345, "VulkanMemoryModel"},
      {5346, "VulkanMemoryModelDeviceScope"},
      {5357, "CooperativeMatrixNV"},
      {6022, "CooperativeMatrixKHR"},
  };
  for (const auto& [n, name] : kNames)
    if (n == c) return name;
  return "Capability" + std::to_string(c);
}

void scan_capabilities(std::span<const uint32_t> spirv, Reflection& out) {
  out.capabilities.clear();
  out.extensions.clear();
  if (spirv.size() < 5) return;
  out.spirv_version = spirv[1];
  for (size_t i = 5; i < spirv.size();) {
    const uint32_t op = spirv[i] & 0xffff, count = spirv[i] >> 16;
    if (count == 0 || i + count > spirv.size()) break;
    if (op == 17 && count >= 2) out.capabilities.push_back(capability_name(spirv[i + 1]));
    if (op == 10) out.extensions.push_back(words_to_string(spirv.subspan(i + 1, count - 1)));
    if (op == 54) break;  // OpFunction: the preamble is over
    i += count;
  }
}

Reflection reflect(std::span<const uint32_t> spirv) {
  Reflection r;
  scan_capabilities(spirv, r);
  const bool coopmat = std::count(r.capabilities.begin(), r.capabilities.end(), "CooperativeMatrixNV") ||
                       std::count(r.capabilities.begin(), r.capabilities.end(), "CooperativeMatrixKHR");
  const std::vector<uint32_t> stripped = coopmat ? without_coopmat(spirv) : std::vector<uint32_t>();
  spirv_cross::Compiler c(coopmat ? stripped.data() : spirv.data(), coopmat ? stripped.size() : spirv.size());
  const spirv_cross::ShaderResources res = c.get_shader_resources();
  auto add = [&](const auto& list, DescriptorType type) {
    for (const auto& x : list)
      r.bindings.push_back({c.get_decoration(x.id, spv::DecorationDescriptorSet),
                            c.get_decoration(x.id, spv::DecorationBinding), type});
  };
  add(res.storage_buffers, DescriptorType::StorageBuffer);
  add(res.storage_images, DescriptorType::StorageImage);
  add(res.sampled_images, DescriptorType::SampledImage);
  add(res.uniform_buffers, DescriptorType::UniformBuffer);
  std::sort(r.bindings.begin(), r.bindings.end(), [](const auto& a, const auto& b) {
    return std::tie(a.set, a.binding, a.type) < std::tie(b.set, b.binding, b.type);
  });
  // Variables aliasing one descriptor (a buffer read both as scalars and as vectors) are one
  // binding; the same binding under two types is kept twice, for the checks to refuse.
  r.bindings.erase(std::unique(r.bindings.begin(), r.bindings.end(),
                               [](const auto& a, const auto& b) {
                                 return std::tie(a.set, a.binding, a.type) == std::tie(b.set, b.binding, b.type);
                               }),
                   r.bindings.end());
  for (const auto& pc : res.push_constant_buffers) {
    const spirv_cross::SPIRType& t = c.get_type(pc.base_type_id);
    r.push_constant_bytes = static_cast<uint32_t>(c.get_declared_struct_size(t));
    for (const auto member : t.member_types) r.push_constant_types.push_back(glsl_type(c.get_type(member)));
  }
  // Workgroup (shared) memory: every OpVariable of storage class Workgroup.
  const std::span<const uint32_t> words = coopmat ? std::span<const uint32_t>(stripped) : spirv;
  for (size_t i = 5; i < words.size();) {
    const uint32_t op = words[i] & 0xffff, count = words[i] >> 16;
    if (count == 0 || i + count > words.size()) break;
    if (op == 59 && count >= 4 && words[i + 3] == 4)  // OpVariable, StorageClass Workgroup
      r.shared_bytes += static_cast<uint32_t>(shared_type_bytes(c, c.get_type_from_variable(words[i + 2])));
    if (op == 54) break;  // OpFunction: global variables come before
    i += count;
  }
  const auto& modes = c.get_execution_mode_bitset();
  if (modes.get(spv::ExecutionModeLocalSizeId)) {
    // SPIR-V 1.6 (Vulkan 1.3): the sizes are ids of constants.
    r.local_size_id = true;
    for (uint32_t i = 0; i < 3; ++i) {
      const uint32_t id = c.get_execution_mode_argument(spv::ExecutionModeLocalSizeId, i);
      r.local_size[i] = id ? c.get_constant(id).scalar() : 0;
    }
  } else {
    for (uint32_t i = 0; i < 3; ++i) r.local_size[i] = c.get_execution_mode_argument(spv::ExecutionModeLocalSize, i);
  }
  return r;
}

std::vector<std::string> check_reflection(const Variant& v, const Reflection& r) {
  std::vector<std::string> errors;
  for (const Binding& b : v.bindings) {
    auto it = std::find_if(r.bindings.begin(), r.bindings.end(),
                           [&](const ReflectedBinding& x) { return x.set == 0 && x.binding == b.binding; });
    if (it == r.bindings.end()) {
      errors.push_back("binding " + std::to_string(b.binding) + " '" + b.name + "' (" +
                       std::string(descriptor_type_name(b.type)) + ") is declared but not in the module");
    } else if (it->type != b.type) {
      errors.push_back("binding " + std::to_string(b.binding) + " '" + b.name + "' is declared " +
                       std::string(descriptor_type_name(b.type)) + " but the module has " +
                       std::string(descriptor_type_name(it->type)));
    }
  }
  for (const ReflectedBinding& x : r.bindings)
    if (x.set != 0 || x.binding >= v.bindings.size())
      errors.push_back("the module has set " + std::to_string(x.set) + " binding " + std::to_string(x.binding) +
                       " (" + std::string(descriptor_type_name(x.type)) + "), which the spec does not declare");
  if (r.push_constant_bytes != v.push_constant_bytes)
    errors.push_back("push constants are " + std::to_string(r.push_constant_bytes) + " bytes in the module, " +
                     std::to_string(v.push_constant_bytes) + " as declared");
  else if (!r.push_constant_types.empty()) {
    for (size_t i = 0; i < v.push_constants.size() && i < r.push_constant_types.size(); ++i)
      if (r.push_constant_types[i] != v.push_constants[i].type)
        errors.push_back("push constant " + std::to_string(i) + " '" + v.push_constants[i].name + "' is " +
                         r.push_constant_types[i] + " in the module, " + v.push_constants[i].type + " as declared");
    if (r.push_constant_types.size() != v.push_constants.size())
      errors.push_back("the module has " + std::to_string(r.push_constant_types.size()) +
                       " push-constant members, the spec declares " + std::to_string(v.push_constants.size()));
  }
  if (r.local_size != v.local_size)
    errors.push_back("workgroup size is " + std::to_string(r.local_size[0]) + "x" + std::to_string(r.local_size[1]) +
                     "x" + std::to_string(r.local_size[2]) + " in the module, " + std::to_string(v.local_size[0]) +
                     "x" + std::to_string(v.local_size[1]) + "x" + std::to_string(v.local_size[2]) +
                     " as declared");
  return errors;
}

}  // namespace vkc::codegen
