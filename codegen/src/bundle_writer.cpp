// BuiltVariants -> the FlatBuffers bundle (schema/shader_library.fbs) and feature bits.
#include <flatbuffers/flatbuffers.h>

#include <algorithm>

#include "built_variant.h"
#include "vkc/schema/shader_library_generated.h"

namespace vkc::codegen {
namespace sl = vkc::shaderlib;

uint32_t feature_bits(const std::vector<std::string>& caps) {
  static const std::pair<const char*, uint32_t> kBits[] = {
      {"Float16", 1u << 0},           {"Int8", 1u << 1},
      {"Int16", 1u << 2},             {"Int64", 1u << 3},
      {"Float64", 1u << 4},           {"StorageBuffer16BitAccess", 1u << 5},
      {"StorageBuffer8BitAccess", 1u << 6}, {"GroupNonUniform", 1u << 7},
      {"CooperativeMatrixNV", 1u << 8}, {"CooperativeMatrixKHR", 1u << 9},
      {"VulkanMemoryModel", 1u << 10},
  };
  uint32_t bits = 0;
  for (const auto& c : caps)
    for (const auto& [name, bit] : kBits)
      if (c == name) bits |= bit;
  return bits;
}

std::vector<uint8_t> encode_bundle(const std::vector<BuiltVariant>& variants, const std::string& generator,
                                   const std::string& library_hash) {
  flatbuffers::FlatBufferBuilder fbb(1 << 20);
  auto strings = [&](const std::vector<std::string>& v) { return fbb.CreateVectorOfStrings(v); };
  // Every module's words first: FlatBuffers fills the buffer back to front, so they end up
  // together at its end and the metadata (names, ops, bindings) at its front. A reader that
  // indexes the library in place (ShaderLibrary::from_static_bytes) then touches only the
  // metadata's pages, not the 2+ MB of SPIR-V.
  std::vector<flatbuffers::Offset<flatbuffers::Vector<uint32_t>>> modules;
  for (const BuiltVariant& b : variants) {
    fbb.ForceVectorAlignment(b.spirv.size(), sizeof(uint32_t), 16);  // 16-byte aligned for zero-copy use
    modules.push_back(fbb.CreateVector(b.spirv));
  }
  std::vector<flatbuffers::Offset<sl::Variant>> out;
  for (size_t i = 0; i < variants.size(); ++i) {
    const BuiltVariant& b = variants[i];
    const Variant& v = *b.variant;
    std::vector<flatbuffers::Offset<sl::Binding>> bindings;
    for (const Binding& x : v.bindings)
      bindings.push_back(sl::CreateBinding(fbb, x.binding, static_cast<sl::DescriptorType>(x.type),
                                           fbb.CreateString(x.name), fbb.CreateString(x.access)));
    std::vector<flatbuffers::Offset<sl::PushConstant>> pcs;
    for (const PushField& p : v.push_constants)
      pcs.push_back(sl::CreatePushConstant(fbb, fbb.CreateString(p.name), fbb.CreateString(p.type), p.offset));
    std::vector<std::string> params;
    for (const auto& [k, val] : v.params) params.push_back(k + "=" + val);
    const auto name = fbb.CreateString(v.name);
    const auto tmpl = fbb.CreateString(v.spec->name);
    const auto ops = strings(v.ops);
    const auto dtype = fbb.CreateString(v.dtype);
    const auto storage = fbb.CreateString(v.storage);
    const auto in_storage = fbb.CreateString(v.in_storage);
    const auto layouts = strings(v.layouts);
    const auto vk = fbb.CreateString(v.vk_version());
    const auto spirv = modules[i];
    const auto bind = fbb.CreateVector(bindings);
    const auto pc = fbb.CreateVector(pcs);
    const auto local = fbb.CreateVector(std::vector<uint32_t>(v.local_size.begin(), v.local_size.end()));
    const auto caps = strings(b.reflection.capabilities);
    const auto exts = strings(b.reflection.extensions);
    const auto note = fbb.CreateString(b.note);
    const auto hash = fbb.CreateString(b.hash);
    const auto prm = strings(params);
    out.push_back(sl::CreateVariant(fbb, name, tmpl, ops, dtype, storage, in_storage, layouts, vk,
                                    static_cast<sl::Coopmat>(v.coopmat), spirv, bind, pc, v.push_constant_bytes,
                                    local, caps, exts, b.optimized, b.validated, note, hash, prm,
                                    static_cast<uint32_t>(b.spirv.size()), b.reflection.shared_bytes));
  }
  const auto vec = fbb.CreateVector(out);
  const auto gen = fbb.CreateString(generator);
  const auto lh = fbb.CreateString(library_hash);
  fbb.Finish(sl::CreateShaderLibrary(fbb, 1, gen, lh, vec), sl::ShaderLibraryIdentifier());
  return {fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize()};
}

}  // namespace vkc::codegen
