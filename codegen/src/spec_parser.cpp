// YAML spec -> ShaderSpec. Every error names the file and line of the node at fault.
#include <algorithm>
#include <yaml-cpp/yaml.h>

#include <fstream>
#include <optional>
#include <set>
#include <sstream>

#include "vkc/codegen/spec.h"

namespace vkc::codegen {
namespace {

class Reader {
 public:
  explicit Reader(std::filesystem::path file) : file_(std::move(file)) {}

  [[noreturn]] void fail(const YAML::Node& at, const std::string& msg) const {
    const int line = at.Mark().line >= 0 ? at.Mark().line + 1 : 0;
    throw SpecError(file_.string() + ":" + std::to_string(line) + ": " + msg);
  }
  [[noreturn]] void fail_line(int line, const std::string& msg) const {
    throw SpecError(file_.string() + ":" + std::to_string(line) + ": " + msg);
  }

  /// The entries of a map, rejecting duplicates; `allowed` (if non-empty) rejects unknown keys.
  std::vector<std::pair<YAML::Node, YAML::Node>> entries(const YAML::Node& map, std::string_view what,
                                                         const std::set<std::string>& allowed = {}) const {
    if (!map.IsMap()) fail(map, std::string(what) + " must be a map");
    std::vector<std::pair<YAML::Node, YAML::Node>> out;
    std::set<std::string> seen;
    for (auto it = map.begin(); it != map.end(); ++it) {
      if (!it->first.IsScalar()) fail(it->first, std::string(what) + ": keys must be scalars");
      const std::string key = it->first.Scalar();
      if (!seen.insert(key).second) fail(it->first, "duplicate key '" + key + "' in " + std::string(what));
      if (!allowed.empty() && !allowed.count(key)) {
        std::string list;
        for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
        fail(it->first, "unknown key '" + key + "' in " + std::string(what) + " (expected one of: " + list + ")");
      }
      out.emplace_back(it->first, it->second);
    }
    return out;
  }

  std::string scalar(const YAML::Node& n, std::string_view what) const {
    if (!n.IsScalar()) fail(n, std::string(what) + " must be a scalar");
    return n.Scalar();
  }
  int64_t integer(const YAML::Node& n, std::string_view what) const {
    const std::string s = scalar(n, what);
    try {
      size_t used = 0;
      const int64_t v = std::stoll(s, &used, 0);
      if (used == s.size()) return v;
    } catch (const std::exception&) {
    }
    fail(n, std::string(what) + " must be an integer, got '" + s + "'");
  }
  bool boolean(const YAML::Node& n, std::string_view what) const {
    const std::string s = scalar(n, what);
    if (s == "true" || s == "True") return true;
    if (s == "false" || s == "False") return false;
    fail(n, std::string(what) + " must be true or false, got '" + s + "'");
  }
  std::vector<std::string> string_list(const YAML::Node& n, std::string_view what) const {
    if (!n.IsSequence()) fail(n, std::string(what) + " must be a list");
    std::vector<std::string> out;
    for (const auto& item : n) out.push_back(scalar(item, what));
    return out;
  }

  std::vector<ForallAxis> forall(const YAML::Node& n, const ParamList& defaults) const {
    std::vector<ForallAxis> axes;
    for (const auto& [key, values] : entries(n, "generate_variant_forall")) {
      ForallAxis axis{key.Scalar(), {}};
      require_param(key, axis.param, defaults);
      if (!values.IsSequence() || values.size() == 0) fail(values, "values of " + axis.param + " must be a non-empty list");
      for (const auto& v : values) {
        if (v.IsScalar()) {
          axis.values.push_back({v.Scalar(), v.Scalar()});
          continue;
        }
        const auto kv = entries(v, axis.param + " value", {"VALUE", "RANGE", "SUFFIX"});
        std::optional<YAML::Node> value, range, suffix;
        for (const auto& [k, x] : kv) (k.Scalar() == "VALUE" ? value : k.Scalar() == "RANGE" ? range : suffix).emplace(x);
        if (value.has_value() == range.has_value()) fail(v, axis.param + " value needs exactly one of VALUE or RANGE");
        const std::string sfx = suffix ? scalar(*suffix, "SUFFIX") : "";
        if (value) {
          const std::string s = scalar(*value, "VALUE");
          axis.values.push_back({s, suffix ? sfx : s});
          continue;
        }
        if (!range->IsSequence() || range->size() != 2) fail(*range, "RANGE must be [first, last]");
        const int64_t lo = integer((*range)[0], "RANGE"), hi = integer((*range)[1], "RANGE");
        if (hi < lo || hi - lo > 64) fail(*range, "RANGE must be [first, last] with first <= last and at most 65 values");
        for (int64_t i = lo; i <= hi; ++i) axis.values.push_back({std::to_string(i), sfx + std::to_string(i)});
      }
      axes.push_back(std::move(axis));
    }
    return axes;
  }

  void require_param(const YAML::Node& at, const std::string& name, const ParamList& defaults) const {
    for (const auto& [k, v] : defaults)
      if (k == name) return;
    fail(at, "'" + name + "' is not declared in parameter_names_with_default_values");
  }

  std::array<uint32_t, 3> local_size(const YAML::Node& value) const {
    if (!value.IsSequence() || value.size() != 3) fail(value, "local_size must be [x, y, z]");
    std::array<uint32_t, 3> out{};
    for (size_t i = 0; i < 3; ++i) {
      const int64_t v = integer(value[i], "local_size");
      if (v < 1 || v > 1024) fail(value[i], "local_size values must be in 1..1024");
      out[i] = static_cast<uint32_t>(v);
    }
    return out;
  }

  VariantDecl variant(const YAML::Node& n, const ParamList& defaults) const {
    VariantDecl d;
    d.line = n.Mark().line + 1;
    for (const auto& [key, value] : entries(n, "shader_variants entry")) {
      const std::string k = key.Scalar();
      if (k == "NAME") {
        d.name = scalar(value, "NAME");
      } else if (k == "OPS") {
        d.ops = string_list(value, "OPS");
      } else if (k == "generate_variant_forall") {
        d.forall = forall(value, defaults);
      } else if (k == "layouts") {
        d.layouts = string_list(value, "layouts");
      } else if (k == "local_size") {
        d.local_size = local_size(value);
      } else if (k == "local_size_variants") {
        for (const auto& [suffix, size] : entries(value, "local_size_variants"))
          d.local_size_variants.emplace_back(scalar(suffix, "local_size_variants suffix"), local_size(size));
      } else if (k == "extra_bindings") {
        if (!value.IsSequence()) fail(value, "extra_bindings must be a list");
        for (const auto& b : value) d.extra_bindings.push_back(binding(b));
      } else if (!k.empty() && std::isupper(static_cast<unsigned char>(k[0]))) {
        require_param(key, k, defaults);
        d.overrides.emplace_back(k, scalar(value, k));
      } else {
        fail(key, "unknown key '" + k + "' in shader_variants entry (NAME, OPS, generate_variant_forall, layouts, "
                  "local_size, local_size_variants, extra_bindings or a declared UPPERCASE parameter)");
      }
    }
    if (d.name.empty()) fail(n, "shader_variants entry without NAME");
    return d;
  }

  BindingDecl binding(const YAML::Node& n) const {
    BindingDecl b;
    b.storage_param = "STORAGE";
    b.access = "read";
    for (const auto& [key, value] : entries(n, "bindings entry", {"name", "type", "access", "storage"})) {
      const std::string k = key.Scalar(), v = scalar(value, k);
      if (k == "name") b.name = v;
      if (k == "type") b.type = v;
      if (k == "access") b.access = v;
      if (k == "storage") b.storage_param = v;
      if (k == "type" && v != "tensor" && v != "buffer" && v != "image" && v != "sampler" && v != "uniform")
        fail(value, "binding type '" + v + "' (expected tensor, buffer, image, sampler or uniform)");
      if (k == "access" && v != "read" && v != "write" && v != "read_write")
        fail(value, "binding access '" + v + "' (expected read, write or read_write)");
    }
    if (b.name.empty() || b.type.empty()) fail(n, "a binding needs name and type");
    return b;
  }

  ShaderSpec spec(const YAML::Node& root) const {
    const auto top = entries(root, "spec file");
    if (top.size() != 1) fail(root, "a spec file holds exactly one top-level key (the template name)");
    ShaderSpec s;
    s.name = top[0].first.Scalar();
    s.file = file_;
    s.template_path = file_.parent_path() / (s.name + ".glsl");
    const YAML::Node body = top[0].second;
    const auto keys = entries(body, s.name, {"parameter_names_with_default_values", "generate_variant_forall",
                                             "shader_variants", "bindings", "push_constants", "local_size",
                                             "layouts", "khr_from_nv", "chain", "chain_by_default"});
    // Parameters first: the other sections refer to them.
    for (const auto& [key, value] : keys) {
      if (key.Scalar() != "parameter_names_with_default_values") continue;
      for (const auto& [k, v] : entries(value, "parameter_names_with_default_values"))
        s.defaults.emplace_back(k.Scalar(), scalar(v, k.Scalar()));
    }
    for (const auto& [key, value] : keys) {
      const std::string k = key.Scalar();
      if (k == "generate_variant_forall") s.forall = forall(value, s.defaults);
      if (k == "shader_variants") {
        if (!value.IsSequence()) fail(value, "shader_variants must be a list");
        for (const auto& v : value) s.variants.push_back(variant(v, s.defaults));
      }
      if (k == "bindings") {
        if (!value.IsSequence()) fail(value, "bindings must be a list");
        for (const auto& b : value) s.bindings.push_back(binding(b));
      }
      if (k == "push_constants") {
        if (!value.IsSequence()) fail(value, "push_constants must be a list");
        for (const auto& p : value) {
          PushConstantDecl d;
          for (const auto& [pk, pv] : entries(p, "push_constants entry", {"name", "type"}))
            (pk.Scalar() == "name" ? d.name : d.type) = scalar(pv, pk.Scalar());
          if (d.name.empty() || d.type.empty()) fail(p, "a push constant needs name and type");
          if (!glsl_type_size_align(d.type)) fail(p, "push constant type '" + d.type + "' is not supported");
          s.push_constants.push_back(d);
        }
      }
      if (k == "local_size") s.local_size = local_size(value);
      if (k == "layouts") {
        if (value.IsSequence()) {
          s.layouts["*"] = string_list(value, "layouts");
        } else {
          for (const auto& [lk, lv] : entries(value, "layouts")) s.layouts[lk.Scalar()] = string_list(lv, "layouts");
        }
      }
      if (k == "khr_from_nv") s.khr_from_nv = boolean(value, "khr_from_nv");
      // `chain` and `chain_by_default`: true / false, or a map of parameter values (the variants with them)
      if (k == "chain" || k == "chain_by_default") {
        bool& on = k == "chain" ? s.chain : s.chain_by_default;
        ParamList& when = k == "chain" ? s.chain_when : s.chain_by_default_when;
        if (value.IsMap()) {
          on = true;
          for (const auto& [ck, cv] : entries(value, k)) {
            const std::string param = ck.Scalar();  // (a lambda may not capture a structured binding in clang 14)
            if (std::none_of(s.defaults.begin(), s.defaults.end(), [&](const auto& d) { return d.first == param; }))
              fail(ck, k + ": '" + param + "' is not declared in parameter_names_with_default_values");
            when.emplace_back(param, scalar(cv, param));
          }
        } else {
          on = boolean(value, k);
        }
      }
    }
    return s;
  }

 private:
  std::filesystem::path file_;
};

}  // namespace

ShaderSpec parse_spec(std::string_view yaml_text, const std::filesystem::path& file) {
  YAML::Node root;
  try {
    root = YAML::Load(std::string(yaml_text));
  } catch (const YAML::ParserException& e) {
    throw SpecError(file.string() + ":" + std::to_string(e.mark.line + 1) + ": YAML: " + e.msg);
  }
  Reader r(file);
  ShaderSpec s = r.spec(root);
  // Expanding once here reports variant-level errors (names, storages, types) at parse time.
  (void)expand_variants(s);
  return s;
}

ShaderSpec parse_spec_file(const std::filesystem::path& yaml_file) {
  std::ifstream in(yaml_file, std::ios::binary);
  if (!in) throw SpecError(yaml_file.string() + ":0: cannot read the spec file");
  std::ostringstream text;
  text << in.rdbuf();
  return parse_spec(text.str(), yaml_file);
}

}  // namespace vkc::codegen
