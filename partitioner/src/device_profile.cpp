#include "vkc/partitioner/device_profile.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <fstream>
#include <set>
#include <sstream>

#include "builtin_profiles.h"

namespace vkc::partitioner {
namespace {

const std::set<std::string>& known_keys() {
  static const std::set<std::string> k = {"name", "description", "texture_limits", "max_storage_buffer_range",
                                          "fp16", "int8", "int16", "int8_dot_product", "subgroup_size",
                                          "cooperative_matrix", "cooperative_matrix_shapes"};
  return k;
}

[[noreturn]] void fail(const std::string& source, const YAML::Node& at, const std::string& what) {
  throw ProfileError(fmt::format("{}:{}: {}", source, at.Mark().line + 1, what));
}

template <typename T>
T get(const std::string& source, const YAML::Node& root, const char* key) {
  const YAML::Node v = root[key];
  if (!v) fail(source, root, fmt::format("missing key '{}'", key));
  try {
    return v.as<T>();
  } catch (const YAML::Exception&) {
    fail(source, v, fmt::format("'{}' has the wrong type", key));
  }
}

}  // namespace

DeviceProfile parse_device_profile(std::string_view yaml, const std::string& source) {
  YAML::Node root;
  try {
    root = YAML::Load(std::string(yaml));
  } catch (const YAML::Exception& e) {
    throw ProfileError(fmt::format("{}:{}: {}", source, e.mark.line + 1, e.msg));
  }
  if (!root.IsMap()) throw ProfileError(source + ": a device profile is a mapping of keys");
  for (const auto& kv : root) {
    const std::string key = kv.first.as<std::string>();
    if (!known_keys().count(key)) fail(source, kv.first, fmt::format("unknown key '{}'", key));
  }
  DeviceProfile p;
  p.name = get<std::string>(source, root, "name");
  p.description = root["description"] ? root["description"].as<std::string>() : "";
  const auto tex = get<std::vector<uint32_t>>(source, root, "texture_limits");
  if (tex.size() != 3 || tex[0] == 0 || tex[1] == 0 || tex[2] == 0)
    fail(source, root["texture_limits"], "texture_limits must be three positive integers [x, y, z]");
  p.limits.texture = {tex[0], tex[1], tex[2]};
  p.limits.max_buffer_bytes = get<uint64_t>(source, root, "max_storage_buffer_range");
  p.limits.name = p.name;
  p.fp16 = get<bool>(source, root, "fp16");
  p.int8 = get<bool>(source, root, "int8");
  p.int16 = get<bool>(source, root, "int16");
  p.int8_dot_product = get<bool>(source, root, "int8_dot_product");
  p.subgroup_size = get<uint32_t>(source, root, "subgroup_size");
  const auto coopmat = get<std::string>(source, root, "cooperative_matrix");
  if (coopmat == "none") p.cooperative_matrix = CoopMat::None;
  else if (coopmat == "nv") p.cooperative_matrix = CoopMat::Nv;
  else if (coopmat == "khr") p.cooperative_matrix = CoopMat::Khr;
  else fail(source, root["cooperative_matrix"], "cooperative_matrix must be none, nv or khr");
  if (const YAML::Node shapes = root["cooperative_matrix_shapes"]) {
    for (const YAML::Node& s : shapes) {
      CoopMatShape c{get<uint32_t>(source, s, "m"), get<uint32_t>(source, s, "n"), get<uint32_t>(source, s, "k"),
                     get<std::string>(source, s, "a"), get<std::string>(source, s, "c")};
      p.cooperative_matrix_shapes.push_back(c);
    }
  }
  if (p.cooperative_matrix != CoopMat::None && p.cooperative_matrix_shapes.empty())
    fail(source, root, "cooperative_matrix is set but cooperative_matrix_shapes is empty");
  return p;
}

DeviceProfile load_device_profile(const std::filesystem::path& file) {
  std::ifstream in(file);
  if (!in) throw ProfileError(fmt::format("{}: cannot read the device profile", file.string()));
  std::stringstream text;
  text << in.rdbuf();
  return parse_device_profile(text.str(), file.string());
}

DeviceProfile builtin_device_profile(std::string_view name) {
  for (const auto& [n, text] : detail::builtin_profiles())
    if (n == name) return parse_device_profile(text, "profiles/" + std::string(n) + ".yaml");
  throw ProfileError(fmt::format("no built-in device profile '{}' (have: {})", name,
                                 fmt::join(builtin_device_profile_names(), ", ")));
}

std::vector<std::string> builtin_device_profile_names() {
  std::vector<std::string> names;
  for (const auto& [n, text] : detail::builtin_profiles()) names.emplace_back(n);
  return names;
}

}  // namespace vkc::partitioner
