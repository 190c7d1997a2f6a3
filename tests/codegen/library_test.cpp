// The shader library the build produced from shader-specs/: every variant is valid SPIR-V
// for its target, its reflection matches its declarations, the generated registry header
// agrees with the bundle, every registry operator has variants, and the lookup API works.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <map>
#include <set>

#include "vkc/codegen/compile.h"
#include "vkc/codegen/reflect.h"
#include "vkc/codegen/shader_library.h"
#include "vkc/ir/op_registry.h"
#include "vkc/shaders/registry_generated.h"

namespace vkc::codegen {
namespace {

const ShaderLibrary& library() {
  static const ShaderLibrary lib = ShaderLibrary::load(VKC_SHADER_BUNDLE);
  return lib;
}

TEST(Library, EveryVariantValidatesAndMatchesItsDeclarations) {
  ASSERT_GT(library().variants().size(), 100u);
  for (const LibraryVariant& v : library().variants()) {
    SCOPED_TRACE(v.name);
    ASSERT_GE(v.spirv.size(), 5u);
    EXPECT_EQ(v.spirv[0], 0x07230203u);
    const int minor = v.vk_version[2] - '0';
    Reflection r;
    scan_capabilities(v.spirv, r);
    EXPECT_EQ(r.spirv_version, minor == 3 ? 0x00010600u : 0x00010300u);
    if (v.coopmat == Coopmat::KHR) {
      // SPIRV-Tools 2023.1 cannot validate SPV_KHR_cooperative_matrix: the bundle says so.
      EXPECT_FALSE(v.validated);
      EXPECT_THAT(v.note, ::testing::HasSubstr("not validated"));
      EXPECT_THAT(r.capabilities, ::testing::Contains("CooperativeMatrixKHR"));
      continue;
    }
    EXPECT_TRUE(v.validated);
    EXPECT_EQ(validate_spirv(v.spirv, minor), "");
    r = reflect(v.spirv);
    EXPECT_EQ(r.local_size, v.local_size);
    EXPECT_EQ(r.local_size_id, minor == 3);  // SPIR-V 1.6 uses LocalSizeId
    EXPECT_EQ(r.push_constant_bytes, v.push_constant_bytes);
    ASSERT_EQ(r.bindings.size(), v.bindings.size());
    for (size_t i = 0; i < r.bindings.size(); ++i) {
      EXPECT_EQ(r.bindings[i].binding, v.bindings[i].binding);
      EXPECT_EQ(r.bindings[i].type, v.bindings[i].type);
    }
    if (v.coopmat == Coopmat::NV) {
      EXPECT_THAT(r.capabilities, ::testing::Contains("CooperativeMatrixNV"));
    }
  }
}

TEST(Library, GeneratedRegistryMatchesTheBundle) {
  const auto& vs = library().variants();
  ASSERT_EQ(shaders::kShaderCount, vs.size());
  EXPECT_EQ(shaders::kLibraryHash, library().library_hash());
  for (size_t i = 0; i < vs.size(); ++i) {
    const shaders::ShaderInfo& info = shaders::kShaders[i];
    EXPECT_EQ(info.name, vs[i].name);
    EXPECT_EQ(info.push_constant_bytes, vs[i].push_constant_bytes);
    EXPECT_EQ(info.binding_count, vs[i].bindings.size());
    for (size_t b = 0; b < info.binding_count; ++b)
      EXPECT_EQ(static_cast<int>(shaders::kBindings[info.first_binding + b]), static_cast<int>(vs[i].bindings[b].type));
  }
  static_assert(shaders::shader_info(shaders::ShaderId::relu_f16_texture3d).name == "relu_f16_texture3d");
  static_assert(shaders::shader_info(shaders::ShaderId::matmul_coopmat_f16_khr).coopmat == shaders::Coopmat::KHR);
}

// The runtime operators the shader specs cover have a variant for each float dtype the IR
// registry accepts, in at least one representation. Registry operators without shaders yet
// are printed (not failed), so a new registry entry shows up here.
TEST(Library, CoversTheRuntimeOperators) {
  const std::set<std::string> kCovered = {
      "aten.convolution.default", "et_vk.conv_with_clamp.default", "aten.linear.default", "aten.addmm.default",
      "aten.mm.default", "aten.bmm.default", "aten.add.Tensor", "aten.sub.Tensor", "aten.mul.Tensor",
      "aten.div.Tensor", "aten.relu.default", "aten.sigmoid.default", "aten.hardswish.default",
      "aten.clamp.default", "aten.hardsigmoid.default", "aten.leaky_relu.default", "aten.gelu.default",
      "aten.tanh.default", "aten.abs.default", "aten.neg.default", "aten.sqrt.default", "aten.rsqrt.default",
      "aten.exp.default", "aten.log10.default", "aten.sin.default", "aten.cos.default", "aten.round.default",
      "aten.minimum.default", "aten.pow.Tensor_Tensor", "aten.pow.Tensor_Scalar",
      "aten._native_batch_norm_legit_no_training.default", "aten.upsample_nearest2d.vec",
      "aten.upsample_bilinear2d.vec", "aten.max_pool2d_with_indices.default", "aten.avg_pool2d.default",
      "aten.mean.dim", "aten.sum.dim_IntList", "aten.amax.default", "aten.amin.default", "aten._softmax.default",
      "aten._log_softmax.default", "aten.view_copy.default", "aten.cat.default", "aten.permute_copy.default",
      "aten.slice_copy.Tensor", "aten.split_with_sizes_copy.default", "aten.select_copy.int",
      "aten.expand_copy.default", "aten.constant_pad_nd.default", "aten.clone.default", "et_vk.prepack.default"};
  std::vector<std::string> missing, not_yet;
  for (const ir::OpDef& op : ir::all_ops()) {
    for (const ir::DType dt : {ir::DType::Float32, ir::DType::Float16}) {
      if (!op.dtypes.contains(dt)) continue;
      bool found = false;
      for (const char* storage : {"buffer", "texture3d"})
        for (const char* in_storage : {"", "buffer"}) {  // prepack reads a staging buffer
          const ShaderLibrary::Query q{
              .op = op.name(), .dtype = ir::dtype_name(dt), .storage = storage, .in_storage = in_storage};
          found = found || library().find(q) != nullptr;
        }
      if (found) continue;
      (kCovered.count(op.name()) ? missing : not_yet).push_back(op.name() + " " + std::string(ir::dtype_name(dt)));
    }
  }
  EXPECT_THAT(missing, ::testing::IsEmpty());
  if (!not_yet.empty()) {
    std::string list;
    for (const auto& s : not_yet) list += " " + s;
    std::printf("registry operators without shader variants yet:%s\n", list.c_str());
  }
}

TEST(Library, FindPrefersCoopmatOnlyWhenTheDeviceAllowsIt) {
  ShaderLibrary::Query q{.op = "aten.mm.default", .dtype = "f16", .storage = "buffer", .layout = "width_packed"};
  ASSERT_NE(library().find(q), nullptr);
  EXPECT_EQ(library().find(q)->name, "matmul_f16_buffer");
  EXPECT_EQ(library().find_all(q).size(), 1u);
  q.allow_coopmat_nv = true;
  EXPECT_EQ(library().find(q)->name, "matmul_coopmat_f16_nv");
  q.allow_coopmat_khr = true;
  EXPECT_EQ(library().find(q)->name, "matmul_coopmat_f16_khr");
  EXPECT_EQ(library().find_all(q).size(), 3u);  // khr, nv, matmul

  const LibraryVariant* relu = library().find(
      {.op = "aten.relu.default", .dtype = "f32", .storage = "texture3d", .layout = "channels_packed"});
  ASSERT_NE(relu, nullptr);
  EXPECT_EQ(relu->name, "relu_f32_texture3d");
  EXPECT_EQ(relu->bindings[0].type, DescriptorType::StorageImage);
  EXPECT_EQ(library().by_name("relu_f32_texture3d"), relu);

  const LibraryVariant* stage = library().find({.op = "et_vk.prepack.default",
                                                  .dtype = "f16",
                                                  .storage = "texture3d",
                                                  .layout = "channels_packed",
                                                  .in_storage = "buffer"});
  ASSERT_NE(stage, nullptr);
  EXPECT_EQ(stage->name, "copy_f16_buffer_texture3d");
  EXPECT_EQ(library().find(
                {.op = "aten.convolution.default", .dtype = "f32", .storage = "texture3d", .layout = "width_packed"}), nullptr);
}

// The cooperative-matrix tiles (matmul_coopmat.glsl): a subgroup of 32 per SG_M x SG_N block,
// whole 16x16 fragments, K steps of whole fragment pairs, and the shared stages within 48 KiB.
TEST(Library, CoopmatTilesMatchTheirWorkgroups) {
  int checked = 0;
  for (const LibraryVariant& v : library().variants()) {
    if (v.template_name != "matmul_coopmat") continue;
    SCOPED_TRACE(v.name);
    std::map<std::string, int> p;
    for (const std::string& kv : v.params)
      if (const auto eq = kv.find('='); eq != std::string::npos && std::isdigit(static_cast<unsigned char>(kv[eq + 1])))
        p[kv.substr(0, eq)] = std::stoi(kv.substr(eq + 1));
    const int tm = p["TILE_M"], tn = p["TILE_N"], sm = p["SG_M"], sn = p["SG_N"], ks = p["K_STEP"];
    ASSERT_TRUE(tm > 0 && tn > 0 && sm > 0 && sn > 0 && ks > 0);
    EXPECT_EQ(tm % sm, 0);
    EXPECT_EQ(tn % sn, 0);
    EXPECT_EQ(sm % 16, 0);
    EXPECT_EQ(sn % 16, 0);
    EXPECT_EQ(ks % 16, 0);
    EXPECT_EQ(static_cast<uint32_t>((tm / sm) * (tn / sn) * 32), v.local_size[0]);
    EXPECT_LE((tm + tn) * (ks / 8 + 1) * 16, 48 * 1024);  // one stage (two only when they fit)
    ++checked;
  }
  EXPECT_GE(checked, 8);
}

TEST(Library, CorruptBundleIsOneError) {
  std::vector<uint8_t> bytes(64, 0);
  try {
    ShaderLibrary::from_bytes(bytes, "x.vksl");
    FAIL();
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "x.vksl: not a valid vkc shader library (VKSL) bundle");
  }
}

// Indexing a trusted bundle in place (what vkc does with the bundle linked into it) reads
// the same modules as the verified copy, at their places in the caller's bytes.
TEST(Library, InPlaceIndexMatchesTheVerifiedCopy) {
  std::FILE* f = std::fopen(VKC_SHADER_BUNDLE, "rb");
  ASSERT_TRUE(f);
  std::vector<uint8_t> bytes;
  for (int c; (c = std::fgetc(f)) != EOF;) bytes.push_back(static_cast<uint8_t>(c));
  std::fclose(f);
  const ShaderLibrary in_place = ShaderLibrary::from_static_bytes(bytes, "bundle");
  ASSERT_EQ(in_place.variants().size(), library().variants().size());
  for (size_t i = 0; i < in_place.variants().size(); ++i) {
    const LibraryVariant& a = in_place.variants()[i];
    const LibraryVariant& b = library().variants()[i];
    SCOPED_TRACE(a.name);
    EXPECT_EQ(a.name, b.name);
    ASSERT_EQ(a.spirv.size(), b.spirv.size());
    EXPECT_TRUE(std::equal(a.spirv.begin(), a.spirv.end(), b.spirv.begin()));
    const auto* p = reinterpret_cast<const uint8_t*>(a.spirv.data());
    EXPECT_TRUE(p >= bytes.data() && p + a.spirv.size_bytes() <= bytes.data() + bytes.size());
  }
}

}  // namespace
}  // namespace vkc::codegen
