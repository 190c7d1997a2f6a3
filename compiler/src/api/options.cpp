#include "vkc/api/options.h"

#include <fmt/format.h>

#include <utility>

#include "vkc/serializer/errors.h"

namespace vkc {
namespace {

void set_error(std::string* error, std::string message) {
  if (error) *error = std::move(message);
}

}  // namespace

std::optional<serializer::CompileOptions> CompileOptions::payload_options(std::string* error) const {
  serializer::CompileOptions s;
  try {
    s = serializer::CompileOptions::from_specs(other_specs);
  } catch (const serializer::SerializeError& e) {
    set_error(error, fmt::format("other_specs: {}", e.what()));
    return std::nullopt;
  }
  const char* modelled = s.small_texture_limits   ? "small_texture_limits"
                         : s.skip_memory_planning ? "skip_memory_planning"
                         : s.force_fp16           ? "force_fp16"
                         : s.texture_limits       ? "texture_limits_x/_y/_z"
                                                  : nullptr;
  if (modelled) {
    set_error(error, fmt::format("other_specs: '{}' has its own CompileOptions field", modelled));
    return std::nullopt;
  }
  s.small_texture_limits = small_texture_limits;
  s.texture_limits = texture_limits;
  s.skip_memory_planning = skip_memory_planning;
  s.force_fp16 = force_fp16;
  return s;
}

std::optional<std::vector<CompileSpec>> CompileOptions::to_compile_specs(std::string* error) const {
  const auto payload = payload_options(error);
  if (!payload) return std::nullopt;
  return payload->to_specs();
}

CompileOptions CompileOptions::from_payload_options(const serializer::CompileOptions& payload) {
  CompileOptions o;
  serializer::CompileOptions rest = payload;
  o.small_texture_limits = std::exchange(rest.small_texture_limits, std::nullopt);
  o.texture_limits = std::exchange(rest.texture_limits, std::nullopt);
  o.skip_memory_planning = std::exchange(rest.skip_memory_planning, std::nullopt);
  o.force_fp16 = std::exchange(rest.force_fp16, std::nullopt);
  o.other_specs = rest.to_specs();
  return o;
}

std::optional<CompileOptions> CompileOptions::from_compile_specs(std::span<const CompileSpec> specs,
                                                                 std::string* error) {
  try {
    return from_payload_options(serializer::CompileOptions::from_specs(specs));
  } catch (const serializer::SerializeError& e) {
    set_error(error, e.what());
    return std::nullopt;
  }
}

}  // namespace vkc
