#include "shaders_command.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "vkc/codegen/library_builder.h"
#include "vkc/codegen/shader_library.h"

namespace vkc::tools {
namespace {

std::string join(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : ",") + s;
  return out;
}

const char* coopmat_name(codegen::Coopmat c) {
  return c == codegen::Coopmat::NV ? "nv" : c == codegen::Coopmat::KHR ? "khr" : "";
}

struct Row {
  std::string name, templ, ops, dtype, storage, vk, coopmat;
  size_t bindings = 0, push_bytes = 0, spirv_bytes = 0, shared_bytes = 0;
};

void print_rows(const std::vector<Row>& rows, bool json, bool with_sizes) {
  if (json) {
    nlohmann::ordered_json j = nlohmann::ordered_json::array();
    for (const Row& r : rows) {
      nlohmann::ordered_json o = {{"name", r.name}, {"template", r.templ},   {"ops", r.ops},
                                  {"dtype", r.dtype}, {"storage", r.storage}, {"vk_version", r.vk},
                                  {"coopmat", r.coopmat}, {"bindings", r.bindings}, {"push_constant_bytes", r.push_bytes}};
      if (with_sizes) {
        o["spirv_bytes"] = r.spirv_bytes;
        o["shared_bytes"] = r.shared_bytes;
      }
      j.push_back(o);
    }
    fmt::print("{}\n", j.dump(2));
    return;
  }
  fmt::print("{:<34} {:<15} {:<4} {:<20} {:<4} {:<4} {:>4} {:>5}{}  {}\n", "variant", "template", "type", "storage", "vk",
             "cm", "bind", "push", with_sizes ? "  spirv shared" : "", "ops");
  for (const Row& r : rows)
    fmt::print("{:<34} {:<15} {:<4} {:<20} {:<4} {:<4} {:>4} {:>5}{}  {}\n", r.name, r.templ, r.dtype, r.storage, r.vk,
               r.coopmat, r.bindings, r.push_bytes,
               with_sizes ? fmt::format(" {:>6} {:>6}", r.spirv_bytes, r.shared_bytes) : "", r.ops);
  fmt::print("{} variants\n", rows.size());
}

std::string storage_of(const std::string& in, const std::string& out) { return in == out ? out : in + "->" + out; }

int run_list(const ShadersArgs& a) {
  std::vector<Row> rows;
  if (!a.bundle.empty()) {
    const auto lib = codegen::ShaderLibrary::load(a.bundle);
    for (const auto& v : lib.variants())
      rows.push_back({v.name, v.template_name, join(v.ops), v.dtype, storage_of(v.in_storage, v.storage), v.vk_version,
                      coopmat_name(v.coopmat), v.bindings.size(), v.push_constant_bytes, v.spirv.size() * 4,
                      v.shared_bytes});
  } else {
    const auto set = codegen::load_specs(a.specs);
    for (const auto& v : set.variants)
      rows.push_back({v.name, v.spec->name, join(v.ops), v.dtype, storage_of(v.in_storage, v.storage), v.vk_version(),
                      coopmat_name(v.coopmat), v.bindings.size(), v.push_constant_bytes, 0});
  }
  print_rows(rows, a.json, !a.bundle.empty());
  return 0;
}

int run_build(const ShadersArgs& a) {
  codegen::BuildOptions opt;
  opt.specs_dir = a.specs;
  opt.bundle_out = a.bundle;
  opt.header_out = a.header;
  opt.cache_dir = a.cache;
  opt.glsl_out = a.glsl_out;
  opt.jobs = a.jobs;
  if (a.verbose) opt.log = [](const std::string& line) { fmt::print(stderr, "{}\n", line); };
  const auto stats = codegen::build_library(opt);
  fmt::print("{}\n", codegen::summary(stats));
  if (a.verbose)
    for (const auto& n : stats.notes) fmt::print("  note: {}\n", n);
  return 0;
}

}  // namespace

CLI::App* add_shaders_command(CLI::App& app, ShadersArgs& a) {
  CLI::App* shaders = app.add_subcommand("shaders", "build or list the shader library (shader-specs/ -> SPIR-V)");
  shaders->require_subcommand(1);
  a.build = shaders->add_subcommand("build", "compile every variant, validate, reflect, write bundle/header");
  a.build->add_option("--specs", a.specs, "directory of YAML specs and GLSL templates (default: shader-specs)");
  a.build->add_option("--bundle", a.bundle, "write the FlatBuffers shader library (.vksl)");
  a.build->add_option("--header", a.header, "write the generated C++ registry header");
  a.build->add_option("--cache", a.cache, "content-hash cache directory (unchanged variants are not recompiled)");
  a.build->add_option("--glsl-out", a.glsl_out, "also write each variant's GLSL (<name>.comp) and a manifest");
  a.build->add_option("-j,--jobs", a.jobs, "worker threads (default: one per hardware thread)");
  a.build->add_flag("-v,--verbose", a.verbose, "one line per variant, and the notes");
  a.list = shaders->add_subcommand("list", "list the variants of the specs, or of a built bundle");
  a.list->add_option("--specs", a.specs, "directory of YAML specs (default: shader-specs)");
  a.list->add_option("--bundle", a.bundle, "list a built .vksl bundle instead (adds SPIR-V sizes)");
  a.list->add_flag("--json", a.json, "print JSON");
  return shaders;
}

int run_shaders_command(const ShadersArgs& a) { return a.list->parsed() ? run_list(a) : run_build(a); }

}  // namespace vkc::tools
