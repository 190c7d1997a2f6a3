// vkc-shaders: the build-time host tool that turns shader-specs/ into the shader library
// (bundle + registry header). Same work as `vkc shaders build`, without the compiler's
// dependencies, so the build can run it before the rest of vkc is linked.
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <string_view>

#include "vkc/codegen/library_builder.h"

namespace {

[[noreturn]] void usage(const char* why) {
  std::fprintf(stderr,
               "vkc-shaders: error: %s\n"
               "usage: vkc-shaders --specs DIR [--bundle FILE] [--header FILE] [--cache DIR] [--glsl-out DIR]"
               " [-j N] [-v]\n",
               why);
  std::exit(2);
}

}  // namespace

int main(int argc, char** argv) {
  vkc::codegen::BuildOptions opt;
  bool verbose = false;
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    auto value = [&]() -> const char* {
      if (i + 1 >= argc) usage(("missing value after " + std::string(a)).c_str());
      return argv[++i];
    };
    if (a == "--specs") opt.specs_dir = value();
    else if (a == "--bundle") opt.bundle_out = value();
    else if (a == "--header") opt.header_out = value();
    else if (a == "--cache") opt.cache_dir = value();
    else if (a == "--glsl-out") opt.glsl_out = value();
    else if (a == "-j") opt.jobs = static_cast<unsigned>(std::atoi(value()));
    else if (a == "-v") verbose = true;
    else usage(("unknown argument " + std::string(a)).c_str());
  }
  if (opt.specs_dir.empty()) usage("--specs is required");
  if (verbose) opt.log = [](const std::string& line) { std::fprintf(stderr, "%s\n", line.c_str()); };
  try {
    const auto stats = vkc::codegen::build_library(opt);
    std::printf("vkc-shaders: %s\n", vkc::codegen::summary(stats).c_str());
    for (const auto& n : stats.notes)
      if (verbose) std::printf("  note: %s\n", n.c_str());
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "vkc-shaders: error: %s\n", e.what());
    return 1;
  }
}
