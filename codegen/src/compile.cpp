// shaderc (libshaderc_combined.a) compile, SPIRV-Tools optimize and validate.
#include <glslang/build_info.h>
#include <shaderc/shaderc.hpp>
#include <spirv-tools/libspirv.hpp>
#include <spirv-tools/optimizer.hpp>

#include <memory>

#include "vkc/codegen/compile.h"

namespace vkc::codegen {
namespace {

bool is_identifier(std::string_view s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  for (char c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  return true;
}

spv_target_env spv_env(int vk_minor) {
  switch (vk_minor) {
    case 0: return SPV_ENV_VULKAN_1_0;
    case 1: return SPV_ENV_VULKAN_1_1;
    case 2: return SPV_ENV_VULKAN_1_2;
    default: return SPV_ENV_VULKAN_1_3;
  }
}

uint32_t shaderc_env(int vk_minor) {
  switch (vk_minor) {
    case 0: return shaderc_env_version_vulkan_1_0;
    case 1: return shaderc_env_version_vulkan_1_1;
    case 2: return shaderc_env_version_vulkan_1_2;
    default: return shaderc_env_version_vulkan_1_3;
  }
}

// Resolves `#include "name"` from the in-memory include map (nothing is read from disk here,
// so every input of a compile is part of its cache key).
class MapIncluder : public shaderc::CompileOptions::IncluderInterface {
 public:
  explicit MapIncluder(const IncludeMap* includes) : includes_(includes) {}
  shaderc_include_result* GetInclude(const char* requested, shaderc_include_type, const char*, size_t) override {
    auto* r = new Result;
    const auto it = includes_ ? includes_->find(requested) : IncludeMap::const_iterator();
    if (includes_ && it != includes_->end()) {
      r->name_text = it->first;
      r->content_text = it->second;
    } else {
      r->content_text = std::string("no include file '") + requested + "' in shader-specs/include";
    }
    r->source_name = r->name_text.data();
    r->source_name_length = r->name_text.size();
    r->content = r->content_text.data();
    r->content_length = r->content_text.size();
    r->user_data = nullptr;
    return r;
  }
  void ReleaseInclude(shaderc_include_result* data) override { delete static_cast<Result*>(data); }

 private:
  struct Result : shaderc_include_result {
    std::string name_text, content_text;
  };
  const IncludeMap* includes_;
};

}  // namespace

std::string assemble_source(const Variant& v, std::string_view text) {
  size_t version_end = std::string_view::npos;
  int version_line = 1;
  for (size_t pos = 0; pos < text.size(); ++version_line) {
    const size_t eol = std::min(text.find('\n', pos), text.size());
    if (text.substr(pos, eol - pos).starts_with("#version")) {
      version_end = eol;
      break;
    }
    pos = eol + 1;
  }
  if (version_end == std::string_view::npos)
    throw CompileError(v.spec->template_path.string() + ":1: the template has no #version line");
  std::string out(text.substr(0, version_end));
  out += "\n// ---- injected by vkc codegen for variant " + v.name + "\n";
  for (const auto& [name, value] : v.params) {
    if (is_control_param(name)) continue;
    out += "#define " + name + " " + value + "\n";
    if (is_identifier(value)) out += "#define " + name + "_" + value + " 1\n";
  }
  const char* axes[] = {"X", "Y", "Z"};
  for (int i = 0; i < 3; ++i) out += "#define LOCAL_SIZE_" + std::string(axes[i]) + " " + std::to_string(v.local_size[i]) + "\n";
  out += "#line " + std::to_string(version_line + 1) + "\n";
  if (version_end < text.size()) out += text.substr(version_end + 1);
  return out;
}

struct ShaderCompiler::Impl {
  const IncludeMap* includes;
  shaderc::Compiler compiler;
};

ShaderCompiler::ShaderCompiler(const IncludeMap* includes) : impl_(new Impl{includes, {}}) {}
ShaderCompiler::~ShaderCompiler() { delete impl_; }

CompiledModule ShaderCompiler::compile(const Variant& v, const std::string& source,
                                       const std::string& source_name) const {
  shaderc::CompileOptions options;
  options.SetTargetEnvironment(shaderc_target_env_vulkan, shaderc_env(v.vk_minor));
  options.SetOptimizationLevel(shaderc_optimization_level_zero);
  options.SetWarningsAsErrors();
  options.SetIncluder(std::make_unique<MapIncluder>(impl_->includes));
  const auto result = impl_->compiler.CompileGlslToSpv(source, shaderc_compute_shader, source_name.c_str(), options);
  if (result.GetCompilationStatus() != shaderc_compilation_status_success) {
    std::string msg = result.GetErrorMessage();
    while (!msg.empty() && msg.back() == '\n') msg.pop_back();
    throw CompileError(msg.empty() ? source_name + ":0: compilation failed" : msg);
  }
  CompiledModule m;
  m.spirv.assign(result.cbegin(), result.cend());
  if (!v.optimize) return m;

  std::string log;
  spvtools::Optimizer opt(spv_env(v.vk_minor));
  opt.SetMessageConsumer([&log](spv_message_level_t, const char*, const spv_position_t&, const char* msg) {
    if (log.empty()) log = msg;
  });
  opt.RegisterPerformancePasses();
  opt.RegisterPass(spvtools::CreateStripDebugInfoPass());  // as glslc -O: names are not needed at runtime
  std::vector<uint32_t> optimized;
  if (opt.Run(m.spirv.data(), m.spirv.size(), &optimized)) {
    m.spirv = std::move(optimized);
    m.optimized = true;
  } else {
    m.note = "spirv-opt failed, kept the unoptimized module: " + (log.empty() ? std::string("no message") : log);
  }
  return m;
}

std::string validate_spirv(std::span<const uint32_t> words, int vk_minor) {
  std::string log;
  spvtools::SpirvTools tools(spv_env(vk_minor));
  tools.SetMessageConsumer([&log](spv_message_level_t level, const char*, const spv_position_t&, const char* msg) {
    if (level <= SPV_MSG_ERROR && log.empty()) log = msg;
  });
  spvtools::ValidatorOptions options;
  if (tools.Validate(words.data(), words.size(), options)) return {};
  return log.empty() ? std::string("invalid module") : log;
}

std::string toolchain_version() {
  return std::string("glslang ") + std::to_string(GLSLANG_VERSION_MAJOR) + "." +
         std::to_string(GLSLANG_VERSION_MINOR) + "." + std::to_string(GLSLANG_VERSION_PATCH) + ", " +
         spvSoftwareVersionString() +
         ", shaderc_combined, passes: performance + strip-debug-info";  // change when compile() changes
}

}  // namespace vkc::codegen
