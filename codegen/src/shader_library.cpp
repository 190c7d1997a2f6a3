#include "vkc/codegen/shader_library.h"

#include <flatbuffers/flatbuffers.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <stdexcept>

#include "vkc/schema/shader_library_generated.h"

namespace vkc::codegen {
namespace sl = vkc::shaderlib;
namespace {

std::string str(const flatbuffers::String* s) { return s ? s->str() : std::string(); }
std::vector<std::string> strs(const flatbuffers::Vector<flatbuffers::Offset<flatbuffers::String>>* v) {
  std::vector<std::string> out;
  if (v)
    for (const auto* s : *v) out.push_back(s->str());
  return out;
}

}  // namespace

bool LibraryVariant::implements(std::string_view op) const {
  return std::find(ops.begin(), ops.end(), op) != ops.end();
}

ShaderLibrary ShaderLibrary::load(const std::filesystem::path& bundle) {
  std::ifstream in(bundle, std::ios::binary);
  if (!in) throw std::runtime_error(bundle.string() + ": cannot read the shader library");
  auto bytes = std::make_shared<const std::vector<uint8_t>>((std::istreambuf_iterator<char>(in)),
                                                            std::istreambuf_iterator<char>());
  ShaderLibrary lib = parse(*bytes, bundle.string(), false);
  lib.owned_ = std::move(bytes);
  return lib;
}

ShaderLibrary ShaderLibrary::from_bytes(std::span<const uint8_t> bytes, const std::string& what) {
  auto copy = std::make_shared<const std::vector<uint8_t>>(bytes.begin(), bytes.end());
  ShaderLibrary lib = parse(*copy, what, false);
  lib.owned_ = std::move(copy);
  return lib;
}

ShaderLibrary ShaderLibrary::from_static_bytes(std::span<const uint8_t> bytes, const std::string& what) {
  return parse(bytes, what, true);
}

ShaderLibrary ShaderLibrary::parse(std::span<const uint8_t> bytes, const std::string& what, bool trusted) {
  // A trusted bundle (the one linked into the binary, verified when it was built) is not verified
  // again: the verifier reads every module's length word, which maps all of its pages.
  if (bytes.size() < 8 || !sl::ShaderLibraryBufferHasIdentifier(bytes.data()))
    throw std::runtime_error(what + ": not a valid vkc shader library (VKSL) bundle");
  if (!trusted) {
    flatbuffers::Verifier verifier(bytes.data(), bytes.size());
    if (!sl::VerifyShaderLibraryBuffer(verifier))
      throw std::runtime_error(what + ": not a valid vkc shader library (VKSL) bundle");
  }
  const sl::ShaderLibrary* root = sl::GetShaderLibrary(bytes.data());
  ShaderLibrary lib;
  lib.library_hash_ = str(root->library_hash());
  lib.generator_ = str(root->generator());
  if (root->variants())
    for (const sl::Variant* v : *root->variants()) {
      LibraryVariant x;
      x.name = str(v->name());
      x.template_name = str(v->template_());
      x.ops = strs(v->ops());
      x.dtype = str(v->dtype());
      x.storage = str(v->storage());
      x.in_storage = str(v->in_storage());
      x.layouts = strs(v->layouts());
      x.vk_version = str(v->vk_version());
      x.coopmat = static_cast<Coopmat>(v->coopmat());
      if (v->spirv()) {
        // The writer aligns each SPIR-V vector to 16 bytes of the buffer; a buffer that is not
        // itself 4-byte aligned cannot be read in place.
        if (reinterpret_cast<uintptr_t>(v->spirv()->data()) % alignof(uint32_t) != 0)
          throw std::runtime_error(what + ": shader library bytes are not 4-byte aligned");
        const uint32_t words = trusted && v->spirv_words() ? v->spirv_words() : v->spirv()->size();
        if (v->spirv_words() && v->spirv_words() != words)
          throw std::runtime_error(what + ": variant " + x.name + ": spirv_words does not match its module");
        x.spirv = {v->spirv()->data(), words};
      }
      if (v->bindings())
        for (const sl::Binding* b : *v->bindings())
          x.bindings.push_back({b->binding(), static_cast<DescriptorType>(b->type()), str(b->name()), str(b->access())});
      if (v->push_constants())
        for (const sl::PushConstant* p : *v->push_constants())
          x.push_constants.push_back({str(p->name()), str(p->type()), p->offset()});
      x.push_constant_bytes = v->push_constant_bytes();
      x.shared_bytes = v->shared_bytes();
      if (v->local_size() && v->local_size()->size() == 3)
        for (uint32_t i = 0; i < 3; ++i) x.local_size[i] = v->local_size()->Get(i);
      x.capabilities = strs(v->capabilities());
      x.extensions = strs(v->extensions());
      x.optimized = v->optimized();
      x.validated = v->validated();
      x.note = str(v->note());
      x.source_hash = str(v->source_hash());
      x.params = strs(v->params());
      lib.variants_.push_back(std::move(x));
    }
  if (!std::is_sorted(lib.variants_.begin(), lib.variants_.end(),
                      [](const auto& a, const auto& b) { return a.name < b.name; }))
    throw std::runtime_error(what + ": shader library variants are not sorted by name");
  return lib;
}

const LibraryVariant* ShaderLibrary::by_name(std::string_view name) const {
  auto it = std::lower_bound(variants_.begin(), variants_.end(), name,
                             [](const LibraryVariant& v, std::string_view n) { return v.name < n; });
  return it != variants_.end() && it->name == name ? &*it : nullptr;
}

std::vector<const LibraryVariant*> ShaderLibrary::find_all(const Query& q) const {
  std::vector<const LibraryVariant*> out;
  for (const LibraryVariant& v : variants_) {
    if (!v.implements(q.op) || v.dtype != q.dtype || v.storage != q.storage) continue;
    if (v.in_storage != (q.in_storage.empty() ? q.storage : q.in_storage)) continue;
    if (!q.layout.empty() && std::find(v.layouts.begin(), v.layouts.end(), q.layout) == v.layouts.end()) continue;
    if ((v.coopmat == Coopmat::NV && !q.allow_coopmat_nv) || (v.coopmat == Coopmat::KHR && !q.allow_coopmat_khr))
      continue;
    out.push_back(&v);
  }
  auto rank = [](const LibraryVariant* v) { return v->coopmat == Coopmat::KHR ? 0 : v->coopmat == Coopmat::NV ? 1 : 2; };
  std::stable_sort(out.begin(), out.end(), [&](const auto* a, const auto* b) { return rank(a) < rank(b); });
  return out;
}

const LibraryVariant* ShaderLibrary::find(const Query& q) const {
  const auto all = find_all(q);
  return all.empty() ? nullptr : all.front();
}

}  // namespace vkc::codegen
