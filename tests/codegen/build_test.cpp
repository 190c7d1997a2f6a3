// build_library on small spec directories: cache hits, deterministic output, errors that
// name the template line, and reflection checked against the declarations.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "vkc/codegen/library_builder.h"
#include "vkc/codegen/shader_library.h"

namespace vkc::codegen {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

void write(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary) << text;
}
std::string read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

const char* kSpec = R"(
scale:
  parameter_names_with_default_values: {DTYPE: f32, STORAGE: buffer, FACTOR: "2.0"}
  generate_variant_forall:
    DTYPE: [f32, f16]
    FACTOR: [{VALUE: "2.0", SUFFIX: x2}, {VALUE: "3.0", SUFFIX: x3}]
  shader_variants:
    - {NAME: scale, OPS: [test.scale]}
  bindings:
    - {name: out, type: buffer, access: write}
    - {name: in, type: buffer}
  push_constants:
    - {name: n, type: int}
)";

const char* kTemplate = R"(#version 450
#include "common.glslh"
layout(local_size_x = LOCAL_SIZE_X) in;
layout(set = 0, binding = 0) buffer Out { T o[]; };
layout(set = 0, binding = 1) readonly buffer In { T x[]; };
layout(push_constant) uniform P { int n; } p;
void main() {
  const int i = int(gl_GlobalInvocationID.x);
  if (i < p.n) o[i] = T(float(x[i]) * FACTOR);
}
)";

const char* kCommon = R"(
#if defined(DTYPE_f16)
#extension GL_EXT_shader_16bit_storage : require
#define T float16_t
#else
#define T float
#endif
)";

class BuildTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("vkc_codegen_test_" + std::to_string(::getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    write(dir_ / "specs/scale.yaml", kSpec);
    write(dir_ / "specs/scale.glsl", kTemplate);
    write(dir_ / "specs/include/common.glslh", kCommon);
  }
  void TearDown() override { fs::remove_all(dir_); }

  BuildOptions options(const std::string& tag, unsigned jobs = 2) {
    BuildOptions o;
    o.specs_dir = dir_ / "specs";
    o.bundle_out = dir_ / tag / "lib.vksl";
    o.header_out = dir_ / tag / "registry.h";
    o.cache_dir = dir_ / tag / "cache";
    o.jobs = jobs;
    return o;
  }
  fs::path dir_;
};

TEST_F(BuildTest, SecondBuildHitsTheCacheAndRewritesNothing) {
  const BuildStats first = build_library(options("a"));
  EXPECT_EQ(first.variants, 4u);
  EXPECT_EQ(first.compiled, 4u);
  EXPECT_EQ(first.cached, 0u);
  EXPECT_TRUE(first.bundle_written);
  const auto mtime = fs::last_write_time(dir_ / "a/lib.vksl");
  const BuildStats second = build_library(options("a"));
  EXPECT_EQ(second.compiled, 0u);
  EXPECT_EQ(second.cached, 4u);
  EXPECT_FALSE(second.bundle_written);
  EXPECT_FALSE(second.header_written);
  EXPECT_EQ(fs::last_write_time(dir_ / "a/lib.vksl"), mtime);

  // Changing the template recompiles every variant; changing one value only its variants.
  write(dir_ / "specs/scale.yaml", std::string(kSpec).replace(std::string(kSpec).find("\"3.0\""), 5, "\"4.0\""));
  const BuildStats third = build_library(options("a"));
  EXPECT_EQ(third.compiled, 2u);
  EXPECT_EQ(third.cached, 2u);
  EXPECT_TRUE(third.bundle_written);
}

TEST_F(BuildTest, OutputIsDeterministic) {
  build_library(options("a", 1));
  build_library(options("b", 2));
  EXPECT_EQ(read(dir_ / "a/lib.vksl"), read(dir_ / "b/lib.vksl"));
  EXPECT_EQ(read(dir_ / "a/registry.h"), read(dir_ / "b/registry.h"));
  const ShaderLibrary lib = ShaderLibrary::load(dir_ / "a/lib.vksl");
  ASSERT_EQ(lib.variants().size(), 4u);
  EXPECT_EQ(lib.variants()[0].name, "scale_f16_x2");
  EXPECT_TRUE(lib.variants()[0].validated);
  EXPECT_TRUE(lib.variants()[0].optimized);
  EXPECT_THAT(lib.variants()[0].capabilities, ::testing::Contains("StorageBuffer16BitAccess"));
  EXPECT_THAT(read(dir_ / "a/registry.h"), HasSubstr("  scale_f32_x3,\n"));
}

TEST_F(BuildTest, CompileErrorNamesTheTemplateLine) {
  write(dir_ / "specs/scale.glsl", std::string(kTemplate).replace(std::string(kTemplate).find("FACTOR"), 6, "BOGUS"));
  try {
    build_library(options("a"));
    FAIL() << "no error";
  } catch (const BuildError& e) {
    EXPECT_THAT(e.what(), HasSubstr("4 of 4 shader variants failed"));
    EXPECT_THAT(e.what(), HasSubstr("scale.glsl:9: error: 'BOGUS' : undeclared identifier"));
  }
}

TEST_F(BuildTest, ReflectionMustMatchTheDeclarations) {
  std::string spec = kSpec;
  spec.insert(spec.find("  push_constants:"), "    - {name: extra, type: image}\n");
  write(dir_ / "specs/scale.yaml", spec);
  try {
    build_library(options("a"));
    FAIL() << "no error";
  } catch (const BuildError& e) {
    EXPECT_THAT(e.what(), HasSubstr("scale.yaml:8: variant scale_f16_x2: binding 2 'extra' (storage_image) is "
                                    "declared but not in the module"));
  }
  spec = kSpec;
  spec.replace(spec.find("type: int"), 9, "type: ivec2");
  write(dir_ / "specs/scale.yaml", spec);
  try {
    build_library(options("a"));
    FAIL() << "no error";
  } catch (const BuildError& e) {
    EXPECT_THAT(e.what(), HasSubstr("push constants are 4 bytes in the module, 8 as declared"));
  }
}

// local_size_variants: a copy of the variant per entry, NAME_suffix, with that workgroup size
// injected as LOCAL_SIZE_X; each variant's workgroup memory is read back from its module
// (arrays, a struct, an array sized by the workgroup) as the validation layer counts it.
TEST_F(BuildTest, LocalSizeVariantsAndTheirSharedMemory) {
  std::string spec = kSpec;
  spec.replace(spec.find("OPS: [test.scale]}"), 18, "OPS: [test.scale], local_size_variants: {w128: [128, 1, 1]}}");
  write(dir_ / "specs/scale.yaml", spec);
  write(dir_ / "specs/scale.glsl", R"(#version 450
#include "common.glslh"
layout(local_size_x = LOCAL_SIZE_X) in;
layout(set = 0, binding = 0) buffer Out { T o[]; };
layout(set = 0, binding = 1) readonly buffer In { T x[]; };
layout(push_constant) uniform P { int n; } p;
struct S { ivec2 a; float b[2]; };
shared vec4 per_invocation[LOCAL_SIZE_X];
shared float three[3];
shared S s;
void main() {
  const uint t = gl_LocalInvocationID.x;
  per_invocation[t] = vec4(float(x[t]));
  if (t < 3) three[t] = float(t);
  if (t == 0) s = S(ivec2(1), float[2](2.0, 3.0));
  barrier();
  const int i = int(gl_GlobalInvocationID.x);
  if (i < p.n) o[i] = T(per_invocation[(t + 1) % LOCAL_SIZE_X].x * FACTOR + three[t % 3] + s.b[t % 2] + float(s.a.x));
}
)");
  build_library(options("a"));
  const ShaderLibrary lib = ShaderLibrary::load(dir_ / "a" / "lib.vksl");
  ASSERT_EQ(lib.variants().size(), 8u);  // 4 (dtype x factor) at 64 invocations, 4 at 128
  for (const std::string dtype : {"f32", "f16"})
    for (const std::string factor : {"x2", "x3"})
      for (const uint32_t width : {64u, 128u}) {
        const std::string name = "scale" + std::string(width == 128 ? "_w128" : "") + "_" + dtype + "_" + factor;
        const auto it = std::find_if(lib.variants().begin(), lib.variants().end(),
                                     [&](const LibraryVariant& v) { return v.name == name; });
        ASSERT_NE(it, lib.variants().end()) << name;
        EXPECT_EQ(it->local_size[0], width) << name;
        EXPECT_EQ(it->shared_bytes, 16 * width + 3 * 4 + (8 + 2 * 4)) << name;
      }
}

TEST_F(BuildTest, BadSpecIsOneLineWithFileAndLine) {
  write(dir_ / "specs/scale.yaml", std::string(kSpec) + "  stray: 1\n");
  try {
    build_library(options("a"));
    FAIL() << "no error";
  } catch (const SpecError& e) {
    EXPECT_THAT(e.what(), HasSubstr("scale.yaml:14: unknown key 'stray'"));
    EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos);
  }
}

}  // namespace
}  // namespace vkc::codegen
