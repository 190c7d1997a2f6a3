// load_specs() and build_library(): the thread pool, the cache, the checks, the outputs.
#include "vkc/codegen/library_builder.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <thread>

#include "built_variant.h"
#include "module_cache.h"
#include "sha256.h"
#include "vkc/codegen/coopmat_rewrite.h"
#include "vkc/codegen/reflect.h"

namespace vkc::codegen {
namespace fs = std::filesystem;
namespace {

std::string read_text(const fs::path& p, const std::string& what) {
  std::ifstream in(p, std::ios::binary);
  if (!in) throw SpecError(p.string() + ":0: cannot read " + what);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::vector<fs::path> files_with(const fs::path& dir, std::initializer_list<std::string_view> exts) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (e.is_regular_file() && std::find(exts.begin(), exts.end(), e.path().extension().string()) != exts.end())
      out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

std::string where(const Variant& v) {
  return v.spec->file.string() + ":" + std::to_string(v.line) + ": variant " + v.name + ": ";
}

// Compiles (or loads from the cache) one non-derived variant and checks it.
// Returns "" or the error line.
std::string build_one(const Variant& v, const SpecSet& set, const std::string& includes_digest,
                      const BuildOptions& opt, const ShaderCompiler& compiler, BuiltVariant& out, bool& from_cache) {
  out.variant = &v;
  std::string source;
  try {
    source = assemble_source(v, set.templates.at(v.spec->name));
  } catch (const std::exception& e) {
    return e.what();
  }
  out.hash = Sha256()
                 .field(kCodegenVersion)
                 .field(toolchain_version())
                 .field(v.vk_version())
                 .field(v.optimize ? "O" : "O0")
                 .field(includes_digest)
                 .field(source)
                 .hex();
  from_cache = false;
  if (!opt.cache_dir.empty()) {
    if (auto m = cache_load(opt.cache_dir, out.hash)) {
      out.spirv = std::move(m->spirv);
      out.optimized = m->optimized;
      out.note = std::move(m->note);
      out.validated = true;
      from_cache = true;
    }
  }
  if (!from_cache) {
    try {
      CompiledModule m = compiler.compile(v, source, v.spec->template_path.string());
      out.spirv = std::move(m.spirv);
      out.optimized = m.optimized;
      out.note = std::move(m.note);
    } catch (const std::exception& e) {
      return std::string(e.what()) + " (variant " + v.name + ")";
    }
    if (const std::string err = validate_spirv(out.spirv, v.vk_minor); !err.empty())
      return where(v) + "spirv-val (Vulkan " + v.vk_version() + "): " + err;
    out.validated = true;
    if (!opt.cache_dir.empty()) cache_store(opt.cache_dir, out.hash, {out.spirv, out.optimized, out.note});
  }
  try {
    out.reflection = reflect(out.spirv);
  } catch (const std::exception& e) {
    return where(v) + "reflection failed: " + e.what();
  }
  const auto mismatches = check_reflection(v, out.reflection);
  if (!mismatches.empty()) return where(v) + mismatches.front();
  if (v.coopmat == Coopmat::None &&
      std::count(out.reflection.capabilities.begin(), out.reflection.capabilities.end(), "CooperativeMatrixNV"))
    return where(v) + "the module uses CooperativeMatrixNV but the spec does not set COOPMAT: nv";
  return {};
}

}  // namespace

SpecSet load_specs(const fs::path& dir) {
  if (!fs::is_directory(dir)) throw SpecError(dir.string() + ":0: not a directory of shader specs");
  SpecSet set;
  for (const fs::path& f : files_with(dir, {".yaml", ".yml"})) {
    auto spec = std::make_unique<ShaderSpec>(parse_spec_file(f));
    if (!fs::exists(spec->template_path))
      throw SpecError(f.string() + ":1: no template " + spec->template_path.filename().string() + " beside the spec");
    if (set.templates.count(spec->name)) throw SpecError(f.string() + ":1: a second spec named '" + spec->name + "'");
    set.templates[spec->name] = read_text(spec->template_path, "the template");
    for (Variant& v : expand_variants(*spec)) set.variants.push_back(std::move(v));
    set.specs.push_back(std::move(spec));
  }
  std::sort(set.variants.begin(), set.variants.end(), [](const Variant& a, const Variant& b) { return a.name < b.name; });
  for (size_t i = 1; i < set.variants.size(); ++i)
    if (set.variants[i].name == set.variants[i - 1].name)
      throw SpecError(set.variants[i].spec->file.string() + ":" + std::to_string(set.variants[i].line) +
                      ": variant name '" + set.variants[i].name + "' is also produced by " +
                      set.variants[i - 1].spec->file.string());
  if (fs::is_directory(dir / "include"))
    for (const fs::path& f : files_with(dir / "include", {".glslh", ".glsl", ".h"}))
      set.includes[f.filename().string()] = read_text(f, "the include file");
  return set;
}

BuildStats build_library(const BuildOptions& opt) {
  const auto start = std::chrono::steady_clock::now();
  const SpecSet set = load_specs(opt.specs_dir);
  BuildStats stats;
  stats.specs = set.specs.size();
  stats.variants = set.variants.size();

  if (!opt.glsl_out.empty()) {
    std::string manifest;
    for (const Variant& v : set.variants) {
      if (v.coopmat == Coopmat::KHR) continue;
      write_if_changed(opt.glsl_out / (v.name + ".comp"), assemble_source(v, set.templates.at(v.spec->name)));
      manifest += v.name + " vulkan" + v.vk_version() + (v.optimize ? " -O" : " -O0") + "\n";
    }
    write_if_changed(opt.glsl_out / "manifest.txt", manifest);
  }

  Sha256 inc;
  for (const auto& [name, text] : set.includes) inc.field(name).field(text);
  const std::string includes_digest = inc.hex();

  const size_t n = set.variants.size();
  std::vector<BuiltVariant> built(n);
  std::vector<std::string> errors(n);
  std::vector<char> cached(n, 0);
  std::atomic<size_t> next{0};
  auto worker = [&] {
    ShaderCompiler compiler(&set.includes);
    for (size_t i; (i = next++) < n;) {
      if (set.variants[i].coopmat == Coopmat::KHR) continue;  // derived below
      bool hit = false;
      errors[i] = build_one(set.variants[i], set, includes_digest, opt, compiler, built[i], hit);
      cached[i] = hit;
      if (opt.log && errors[i].empty()) opt.log((hit ? "cached   " : "compiled ") + set.variants[i].name);
    }
  };
  const unsigned jobs = std::max(1u, std::min<unsigned>(opt.jobs ? opt.jobs : std::thread::hardware_concurrency(),
                                                        static_cast<unsigned>(std::max<size_t>(n, 1))));
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < jobs; ++t) pool.emplace_back(worker);
  worker();
  for (auto& t : pool) t.join();

  for (size_t i = 0; i < n; ++i) {
    const Variant& v = set.variants[i];
    if (v.coopmat != Coopmat::KHR) continue;
    auto src = std::find_if(set.variants.begin(), set.variants.end(), [&](const Variant& x) { return x.name == v.derived_from; });
    const BuiltVariant& nv = built[static_cast<size_t>(src - set.variants.begin())];
    if (!errors[static_cast<size_t>(src - set.variants.begin())].empty()) continue;
    BuiltVariant& k = built[i];
    k.variant = &v;
    try {
      k.spirv = rewrite_coopmat_nv_to_khr(nv.spirv);
    } catch (const std::exception& e) {
      errors[i] = where(v) + e.what();
      continue;
    }
    k.hash = Sha256().field(nv.hash).field("nv-to-khr").hex();
    k.optimized = nv.optimized;
    k.reflection = nv.reflection;  // resources are untouched by the rewrite
    scan_capabilities(k.spirv, k.reflection);
    k.validated = false;
    k.note = "rewritten from " + nv.variant->name +
             "; not validated: SPIRV-Tools 2023.1 does not know SPV_KHR_cooperative_matrix";
    ++stats.rewritten;
  }

  std::vector<std::string> failures;
  for (const auto& e : errors)
    if (!e.empty()) failures.push_back(e);
  if (!failures.empty()) {
    std::string msg = std::to_string(failures.size()) + " of " + std::to_string(n) + " shader variants failed";
    for (const auto& f : failures) msg += "\n" + f;
    throw BuildError(msg);
  }
  for (size_t i = 0; i < n; ++i) {
    if (set.variants[i].coopmat != Coopmat::KHR) (cached[i] ? stats.cached : stats.compiled)++;
    if (!built[i].optimized && set.variants[i].optimize) ++stats.optimizer_fallbacks;
    if (!built[i].validated) ++stats.unvalidated;
    if (!built[i].note.empty()) stats.notes.push_back(set.variants[i].name + ": " + built[i].note);
  }

  Sha256 lib;
  for (const auto& b : built) lib.field(b.variant->name).field(b.hash);
  stats.library_hash = lib.hex();
  const std::string generator = std::string(kCodegenVersion) + " (" + toolchain_version() + ")";
  if (!opt.bundle_out.empty()) {
    const auto bytes = encode_bundle(built, generator, stats.library_hash);
    stats.bundle_written = write_if_changed(opt.bundle_out, std::string(bytes.begin(), bytes.end()));
  }
  if (!opt.header_out.empty()) stats.header_written = write_if_changed(opt.header_out, registry_header(built, stats.library_hash));
  stats.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return stats;
}

std::string summary(const BuildStats& s) {
  char secs[32];
  std::snprintf(secs, sizeof secs, "%.2f", s.seconds);
  std::string out = std::to_string(s.variants) + " shader variants from " + std::to_string(s.specs) + " specs: " +
                    std::to_string(s.compiled) + " compiled, " + std::to_string(s.cached) + " cached, " +
                    std::to_string(s.rewritten) + " rewritten NV->KHR";
  if (s.optimizer_fallbacks) out += ", " + std::to_string(s.optimizer_fallbacks) + " unoptimized (spirv-opt failed)";
  if (s.unvalidated) out += ", " + std::to_string(s.unvalidated) + " not validated";
  return out + " in " + secs + " s";
}

}  // namespace vkc::codegen
