// `vkc shaders build|list`: the shader library generator (codegen/) from the command line.
#pragma once

#include <string>

namespace CLI {
class App;
}

namespace vkc::tools {

struct ShadersArgs {
  std::string specs = "shader-specs";
  std::string bundle, header, cache, glsl_out;
  unsigned jobs = 0;
  bool verbose = false, json = false;
  CLI::App* build = nullptr;
  CLI::App* list = nullptr;
};

/// Adds the `shaders` subcommand (with `build` and `list`) to `app`; returns it.
CLI::App* add_shaders_command(CLI::App& app, ShadersArgs& args);
/// Runs whichever of build / list was parsed. Throws on errors (the caller prints them).
int run_shaders_command(const ShadersArgs& args);

}  // namespace vkc::tools
