#include "vk_encoder.h"

#include <fmt/format.h>

#include "vkc/runtime/backend.h"

namespace vkc::runtime::vk {

using serializer::VkValue;

const char* GpuTensor::layout() const {
  if (!texture) return "width_packed";
  return packed_dim == 0 ? "width_packed" : packed_dim == 1 ? "height_packed" : "channels_packed";
}

int64_t GpuTensor::items(ivec4 s) const {
  if (!texture) return int64_t{s[0]} * s[1] * s[2] * s[3];
  ivec4 e = s;
  e[packed_dim] = (e[packed_dim] + 3) / 4;
  return int64_t{e[0]} * e[1] * e[2] * e[3];
}

ivec4 whcn(const std::vector<int64_t>& dims) {
  ivec4 s{1, 1, 1, 1};
  const size_t r = dims.size();
  for (size_t d = 0; d < r && d < 4; ++d) s[d] = static_cast<int32_t>(dims[r - 1 - d]);
  return s;
}

int whcn_dim(int64_t d, size_t rank) {
  const int64_t r = static_cast<int64_t>(rank);
  if (d < 0) d += r;
  return static_cast<int>(r - 1 - d);
}

std::string Encoder::where() const {
  if (call_->node_id == kStagingNode) return call_->name;  // "input 0", "output 1"
  return fmt::format("node {} ({})", call_->node_id, call_->name);
}

void Encoder::fail(const std::string& what) const { throw RuntimeError(fmt::format("{}: {}", where(), what)); }

namespace {
const char* kind_name(const VkValue& v) {
  static const char* names[] = {"Null", "Int", "Double", "Bool", "Tensor", "IntList", "DoubleList",
                                "BoolList", "ValueList", "String", "SymInt"};
  return names[v.index()];
}
}  // namespace

int32_t Encoder::id(size_t i) const {
  if (i >= call_->args.size()) fail(fmt::format("argument {} is missing ({} args)", i, call_->args.size()));
  const int32_t v = call_->args[i];
  if (v < 0 || static_cast<size_t>(v) >= graph_->values.size())
    fail(fmt::format("argument {} refers to value {}, out of range", i, v));
  return v;
}

const VkValue& Encoder::value(size_t i) const { return graph_->values[id(i)]; }

const serializer::VkTensor& Encoder::vk_tensor(int32_t v) const {
  const auto* t = v >= 0 && static_cast<size_t>(v) < graph_->values.size()
                      ? std::get_if<serializer::VkTensor>(&graph_->values[v])
                      : nullptr;
  if (!t) fail(fmt::format("value {} is not a Tensor", v));
  return *t;
}

bool Encoder::is_null(size_t i) const { return std::holds_alternative<serializer::VkNull>(value(i)); }

bool Encoder::is_constant(size_t i) const {
  const auto* t = std::get_if<serializer::VkTensor>(&value(i));
  return t && t->constant_id >= 0;
}

int64_t Encoder::int_arg(size_t i) const {
  if (const auto* v = std::get_if<int64_t>(&value(i))) return *v;
  if (const auto* v = std::get_if<serializer::VkSymInt>(&value(i))) return v->value;
  fail(fmt::format("argument {} is {}, expected an Int or SymInt", i, kind_name(value(i))));
}

double Encoder::scalar(size_t i) const {
  if (const auto* v = std::get_if<double>(&value(i))) return *v;
  if (const auto* v = std::get_if<int64_t>(&value(i))) return static_cast<double>(*v);
  fail(fmt::format("argument {} is {}, expected an Int or Double scalar", i, kind_name(value(i))));
}

std::optional<double> Encoder::opt_scalar(size_t i) const {
  if (is_null(i)) return std::nullopt;
  return scalar(i);
}

std::optional<int64_t> Encoder::opt_int(size_t i) const {
  if (is_null(i)) return std::nullopt;
  return int_arg(i);
}

bool Encoder::bool_arg(size_t i) const {
  if (const auto* v = std::get_if<bool>(&value(i))) return *v;
  fail(fmt::format("argument {} is {}, expected a Bool", i, kind_name(value(i))));
}

std::string Encoder::string_arg(size_t i) const {
  if (const auto* v = std::get_if<std::string>(&value(i))) return *v;
  fail(fmt::format("argument {} is {}, expected a String", i, kind_name(value(i))));
}

std::vector<int64_t> Encoder::int_list(size_t i) const {
  const VkValue& v = value(i);
  if (const auto* l = std::get_if<serializer::VkIntList>(&v)) return l->items;
  if (const auto* l = std::get_if<serializer::VkValueList>(&v)) {
    std::vector<int64_t> out;
    for (int32_t item : l->items) {
      const VkValue& x = graph_->values.at(item);
      if (const auto* n = std::get_if<int64_t>(&x)) out.push_back(*n);
      else if (const auto* s = std::get_if<serializer::VkSymInt>(&x)) out.push_back(s->value);
      else fail(fmt::format("argument {}: list item {} is {}, expected Int or SymInt", i, item, kind_name(x)));
    }
    return out;
  }
  fail(fmt::format("argument {} is {}, expected an IntList", i, kind_name(v)));
}

std::optional<std::vector<int64_t>> Encoder::opt_int_list(size_t i) const {
  if (is_null(i)) return std::nullopt;
  return int_list(i);
}

std::optional<std::vector<double>> Encoder::opt_double_list(size_t i) const {
  if (is_null(i)) return std::nullopt;
  if (const auto* l = std::get_if<serializer::VkDoubleList>(&value(i))) return l->items;
  fail(fmt::format("argument {} is {}, expected a DoubleList", i, kind_name(value(i))));
}

std::vector<int32_t> Encoder::value_list(size_t i) const {
  if (const auto* l = std::get_if<serializer::VkValueList>(&value(i))) return l->items;
  fail(fmt::format("argument {} is {}, expected a ValueList", i, kind_name(value(i))));
}

void Encoder::require_rep(const GpuTensor& t, const GpuTensor& ref, const char* what, bool same_layout) const {
  if (t.texture != ref.texture || (same_layout && t.texture && t.packed_dim != ref.packed_dim))
    fail(fmt::format("{} is {} {} but the output is {} {}; no kernel mixes them", what, t.storage(), t.layout(),
                     ref.storage(), ref.layout()));
  if (t.dtype != ref.dtype)
    fail(fmt::format("{} is {} but the output is {}", what, t.dtype_name(), ref.dtype_name()));
}

void encode_copy(Encoder& e, GpuTensor& out, GpuTensor& in, const CopyRegion& r) {
  if (in.dtype != out.dtype) e.fail(fmt::format("copy from {} to {} is not supported", in.dtype_name(), out.dtype_name()));
  const auto& v = e.variant(out, in.storage(), "copy", "aten.clone.default");
  Push p(v);
  const bool whole = r.region == ivec4{0, 0, 0, 0};
  p.iv("out_sizes", out.sizes).iv("in_sizes", in.sizes).iv("region", whole ? out.sizes : r.region);
  p.iv("out_offset", r.out_offset).iv("in_offset", r.in_offset).iv("in_step", r.in_step).iv("perm", r.perm);
  p.iv("packed_dims", {out.packed_dim, in.packed_dim, 0, 0}).f("fill", r.fill);
  e.dispatch(v, {out.resource(), in.resource()}, p, out.items());
}

}  // namespace vkc::runtime::vk
