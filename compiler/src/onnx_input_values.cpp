#include "onnx_input_values.h"

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <limits>
#include <optional>
#include <vector>

#include <onnx/onnx_pb.h>

#include "vkc/compiler/onnx_importer.h"

namespace vkc::compiler::detail {
namespace {

using onnx::TensorProto;

std::vector<std::string> split(const std::string& text) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    const size_t comma = text.find(',', start);
    out.push_back(text.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (comma == std::string::npos) return out;
    start = comma + 1;
  }
}

// One value of an integer type within [lo, hi]; nullopt when the text is not one.
std::optional<int64_t> parse_int(const std::string& s, int64_t lo, int64_t hi) {
  int64_t v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || ptr != s.data() + s.size() || v < lo || v > hi) return std::nullopt;
  return v;
}

std::optional<double> parse_float(const std::string& s) {
  double v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || ptr != s.data() + s.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

// The integer range of an integer element type (bool as 0..1); nullopt for other types.
std::optional<std::pair<int64_t, int64_t>> int_range(int elem) {
  switch (elem) {
    case TensorProto::INT8: return std::pair<int64_t, int64_t>{INT8_MIN, INT8_MAX};
    case TensorProto::UINT8: return std::pair<int64_t, int64_t>{0, UINT8_MAX};
    case TensorProto::INT16: return std::pair<int64_t, int64_t>{INT16_MIN, INT16_MAX};
    case TensorProto::UINT16: return std::pair<int64_t, int64_t>{0, UINT16_MAX};
    case TensorProto::INT32: return std::pair<int64_t, int64_t>{INT32_MIN, INT32_MAX};
    case TensorProto::UINT32: return std::pair<int64_t, int64_t>{0, UINT32_MAX};
    case TensorProto::INT64: return std::pair<int64_t, int64_t>{INT64_MIN, INT64_MAX};
    case TensorProto::BOOL: return std::pair<int64_t, int64_t>{0, 1};
    default: return std::nullopt;
  }
}

void bind(onnx::GraphProto& graph, int index, const std::string& text) {
  const onnx::ValueInfoProto input = graph.input(index);
  const std::string where = fmt::format("--input-value '{}={}'", input.name(), text);
  if (!input.type().has_tensor_type()) throw ImportError(where + ": the input is not a tensor");
  const auto& tt = input.type().tensor_type();
  const int elem = tt.elem_type();
  const std::vector<std::string> items = split(text);
  std::vector<int64_t> dims;
  bool static_shape = tt.has_shape();
  if (tt.has_shape())
    for (const auto& d : tt.shape().dim()) {
      static_shape = static_shape && d.has_dim_value();
      dims.push_back(d.dim_value());
    }
  if (static_shape) {
    int64_t count = 1;
    for (int64_t d : dims) count *= d;
    if (count != static_cast<int64_t>(items.size()))
      throw ImportError(fmt::format("{}: {} value(s) given, but the input has shape [{}] ({} elements)", where,
                                    items.size(), fmt::join(dims, ","), count));
  } else {
    if (tt.has_shape() && tt.shape().dim_size() > 1)
      throw ImportError(fmt::format("{}: the input has rank {} with symbolic dims; fix them with --input-shape",
                                    where, tt.shape().dim_size()));
    dims.clear();
    if (!tt.has_shape() ? items.size() != 1 : tt.shape().dim_size() == 1) dims.push_back(static_cast<int64_t>(items.size()));
  }
  TensorProto t;
  t.set_name(input.name());
  t.set_data_type(elem);
  for (int64_t d : dims) t.add_dims(d);
  for (const std::string& raw : items) {
    std::string s = raw;
    if (elem == TensorProto::BOOL && (s == "true" || s == "false")) s = s == "true" ? "1" : "0";
    if (auto range = int_range(elem)) {
      const auto v = parse_int(s, range->first, range->second);
      if (!v) throw ImportError(fmt::format("{}: '{}' is not a value of the input's type", where, raw));
      if (elem == TensorProto::INT64) t.add_int64_data(*v);
      else if (elem == TensorProto::UINT32) t.add_uint64_data(static_cast<uint64_t>(*v));
      else t.add_int32_data(static_cast<int32_t>(*v));
    } else if (elem == TensorProto::FLOAT || elem == TensorProto::DOUBLE) {
      const auto v = parse_float(s);
      if (!v) throw ImportError(fmt::format("{}: '{}' is not a finite number", where, raw));
      if (elem == TensorProto::FLOAT) t.add_float_data(static_cast<float>(*v));
      else t.add_double_data(*v);
    } else {
      throw ImportError(fmt::format("{}: inputs of element type {} cannot be bound", where, elem));
    }
  }
  *graph.add_initializer() = std::move(t);
  graph.mutable_input()->DeleteSubrange(index, 1);
}

}  // namespace

void bind_input_values(onnx::ModelProto& model, const std::map<std::string, std::string>& values) {
  onnx::GraphProto& graph = *model.mutable_graph();
  for (const auto& [name, text] : values) {
    int index = -1;
    for (int i = 0; i < graph.input_size(); ++i)
      if (graph.input(i).name() == name) index = i;
    for (const auto& init : graph.initializer())
      if (init.name() == name) index = -1;
    if (index < 0) {
      std::string names;
      for (const auto& in : graph.input()) {
        bool is_init = false;
        for (const auto& init : graph.initializer()) is_init = is_init || init.name() == in.name();
        if (!is_init) names += (names.empty() ? "" : ", ") + in.name();
      }
      throw ImportError(fmt::format("--input-value: the model has no input '{}' (inputs: {})", name, names));
    }
    bind(graph, index, text);
  }
}

}  // namespace vkc::compiler::detail
