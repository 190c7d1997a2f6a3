// Resize / Upsample as separable per-axis steps with constant tables, for what the runtime's
// upsample ops cannot express: cubic (cubic_coeff_a, exclude_outside), linear with any
// coordinate mode or size, nearest with any coordinate mode and rounding. Static shapes,
// constant scales or sizes, no antialias, no tf_crop_and_resize. For each resized axis:
//   nearest:        index_select along the axis with each output position's source index;
//   linear / cubic: linear(x, W), W [out, in] each output position's interpolation weights,
//                   with the axis moved last (permute_copy) when it is not.
// Coordinates, neighbours and weights follow the ONNX Resize definition: the source coordinate
// of output position x by coordinate_transformation_mode; the 2 (nearest, linear) or 4 (cubic)
// nearest input positions, preferring the left ones; values past the edges repeat the edge
// (or get weight 0, renormalized, with exclude_outside).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <variant>

#include "../constants.h"
#include "lowering.h"

namespace vkc::passes::lowering {
namespace {

struct Axis {
  std::string mode, coord, rounding;
  double cubic_a = -0.75;
  bool exclude_outside = false;
};

// The input coordinate of output position x along an axis of `in` -> `out` at `scale`.
std::optional<double> source_coordinate(const std::string& coord, double x, int64_t in, int64_t out, double scale) {
  const double out_f = scale * static_cast<double>(in);  // the unrounded output length
  if (coord == "half_pixel") return (x + 0.5) / scale - 0.5;
  if (coord == "pytorch_half_pixel") return out > 1 ? (x + 0.5) / scale - 0.5 : 0.0;
  if (coord == "align_corners") return out_f == 1.0 ? 0.0 : x * static_cast<double>(in - 1) / (out_f - 1.0);
  if (coord == "asymmetric") return x / scale;
  if (coord == "tf_half_pixel_for_nn") return (x + 0.5) / scale;
  if (coord == "half_pixel_symmetric") {
    const double offset = static_cast<double>(in) / 2.0 * (1.0 - static_cast<double>(out) / out_f);
    return offset + (x + 0.5) / scale - 0.5;
  }
  return std::nullopt;
}

double cubic(double a, double d) {  // the cubic convolution kernel at distance |d| < 2
  d = std::abs(d);
  if (d <= 1) return ((a + 2) * d - (a + 3)) * d * d + 1;
  return ((a * d - 5 * a) * d + 8 * a) * d - 4 * a;
}

// Weights [out, in] of one axis (row-major), or the reason there are none.
std::variant<std::vector<double>, std::string> axis_weights(const Axis& ax, int64_t in, int64_t out, double scale) {
  // The [out, in] interpolation matrix becomes a constant: sizes from a corrupt or hostile model
  // (found by fuzzing) must not size it past what any real resize needs.
  constexpr int64_t kMaxWeights = int64_t{1} << 26;
  int64_t count = 0;
  if (in <= 0 || out <= 0 || __builtin_mul_overflow(in, out, &count) || count > kMaxWeights)
    return fmt::format("an axis resized from {} to {} needs a {}x{} interpolation matrix (at most {} weights)", in,
                       out, out, in, kMaxWeights);
  std::vector<double> w(static_cast<size_t>(count), 0.0);
  for (int64_t x = 0; x < out; ++x) {
    const auto src = source_coordinate(ax.coord, static_cast<double>(x), in, out, scale);
    if (!src) return fmt::format("coordinate_transformation_mode '{}' is not supported", ax.coord);
    // The left neighbour `base` and ratio in (0, 1]: an integral coordinate counts as ratio 1.
    const double fl = std::floor(*src);
    const bool integral = fl == *src;
    const auto base = static_cast<int64_t>(integral ? fl - 1 : fl);
    const double ratio = integral ? 1.0 : *src - fl;
    std::vector<std::pair<int64_t, double>> taps;
    if (ax.mode == "nearest") {
      bool right = true;  // ratio 1: the coordinate itself
      if (!integral) {
        if (ax.rounding == "round_prefer_floor") right = ratio > 0.5;
        else if (ax.rounding == "round_prefer_ceil") right = ratio >= 0.5;
        else if (ax.rounding == "floor") right = false;
        else if (ax.rounding == "ceil") right = true;
        else return fmt::format("nearest_mode '{}' is not supported", ax.rounding);
      }
      taps = {{right ? base + 1 : base, 1.0}};
    } else if (ax.mode == "linear") {
      taps = {{base, 1.0 - ratio}, {base + 1, ratio}};
    } else {
      taps = {{base - 1, cubic(ax.cubic_a, ratio + 1)}, {base, cubic(ax.cubic_a, ratio)},
              {base + 1, cubic(ax.cubic_a, 1 - ratio)}, {base + 2, cubic(ax.cubic_a, 2 - ratio)}};
    }
    if (ax.exclude_outside) {
      double sum = 0;
      for (auto& [p, c] : taps) {
        if (p < 0 || p >= in) c = 0;
        sum += c;
      }
      if (sum != 0)
        for (auto& tap : taps) tap.second /= sum;
    }
    for (const auto& [p, c] : taps)  // past the edges: the edge value
      w[static_cast<size_t>(x * in + std::clamp<int64_t>(p, 0, in - 1))] += c;
  }
  return w;
}

}  // namespace

Result lower_resize_separable(ir::Graph& g, ir::Node* n) {
  ir::Value* x = n->input(0);
  const ir::Value* y = n->output(0);
  if (!has_static_shape(x) || !has_static_shape(y)) return std::string("input and output shapes must be static");
  if (!ir::is_float(x->dtype())) return std::string("only floating-point inputs are supported");
  const bool old = n->op_type() == "Upsample" || n->opset() < 11;
  Axis ax;
  ax.mode = n->attr_string("mode", "nearest");
  if (ax.mode == "bilinear") ax.mode = "linear";
  if (ax.mode == "bicubic") ax.mode = "cubic";
  ax.coord = old ? "asymmetric" : n->attr_string("coordinate_transformation_mode", "half_pixel");
  ax.rounding = n->attr_string("nearest_mode", "round_prefer_floor");
  ax.cubic_a = n->attr_float("cubic_coeff_a", -0.75);
  ax.exclude_outside = n->attr_int("exclude_outside", 0) != 0;
  if (ax.mode != "nearest" && ax.mode != "linear" && ax.mode != "cubic")
    return fmt::format("mode '{}' is not supported", ax.mode);
  if (old && ax.mode == "nearest") return std::string("nearest Upsample before opset 11 is lowered directly");
  if (n->attr_int("antialias", 0) != 0) return std::string("antialias is not supported");
  if (n->has_attr("axes")) return std::string("the axes attribute is not supported");
  if (ax.coord == "tf_crop_and_resize") return std::string("tf_crop_and_resize is not supported");
  const auto in = x->shape().sizes(), out = y->shape().sizes();
  const size_t r = in.size();
  if (out.size() != r || r == 0 || r > 4) return std::string("only ranks 1 to 4 are supported");
  const ir::Value* scales_in = old ? n->input(1) : (n->num_inputs() > 2 ? n->input(2) : nullptr);
  const ir::Value* sizes_in = old || n->num_inputs() <= 3 ? nullptr : n->input(3);
  std::vector<double> scale(r);
  if (sizes_in) {
    for (size_t d = 0; d < r; ++d) scale[d] = static_cast<double>(out[d]) / static_cast<double>(in[d]);
  } else {
    auto s = scales_in ? constant_floats(scales_in) : std::nullopt;
    if (!s || s->size() != r) return std::string("scales is not a constant with one value per dim");
    for (size_t d = 0; d < r; ++d) scale[d] = (*s)[d];
  }
  std::vector<size_t> axes;
  for (size_t d = 0; d < r; ++d)
    if (in[d] != out[d] || scale[d] != 1.0) axes.push_back(d);
  if (axes.empty()) {
    to_runtime(n, "aten.clone.default", {x}, {});
    return std::nullopt;
  }
  for (size_t d : axes)
    if (in[d] == 0 || out[d] == 0 || scale[d] <= 0) return std::string("empty dims cannot be resized");
  // One pending step at a time, so the last can become n itself.
  struct Step {
    std::string op;
    std::vector<ir::Value*> ins;
    ir::AttributeMap attrs;
    std::vector<int64_t> shape;
  };
  std::vector<Step> steps;
  std::vector<int64_t> shape = in;
  auto i64 = [&](const std::vector<int64_t>& v) {
    return add_i64_constant(g, n->name() + "_source", {static_cast<int64_t>(v.size())}, v);
  };
  for (size_t d : axes) {
    auto w = axis_weights(ax, in[d], out[d], scale[d]);
    if (auto* why = std::get_if<std::string>(&w)) return *why;
    const auto& weights = std::get<std::vector<double>>(w);
    if (ax.mode == "nearest") {
      std::vector<int64_t> source(static_cast<size_t>(out[d]));
      for (int64_t o = 0; o < out[d]; ++o)
        for (int64_t i = 0; i < in[d]; ++i)
          if (weights[static_cast<size_t>(o * in[d] + i)] != 0) source[static_cast<size_t>(o)] = i;
      shape[d] = out[d];
      steps.push_back({"aten.index_select.default", {nullptr, i64(source)}, {{"dim", static_cast<int64_t>(d)}}, shape});
      continue;
    }
    std::vector<float> wf(weights.begin(), weights.end());
    ir::Value* wt = add_f32_constant(g, g.unique_name(n->name() + "_weights"), {out[d], in[d]}, wf);
    std::vector<int64_t> perm(r);
    for (size_t k = 0; k < r; ++k) perm[k] = static_cast<int64_t>(k);
    std::swap(perm[d], perm[r - 1]);
    const bool move = d != r - 1;
    std::vector<int64_t> moved = shape;
    std::swap(moved[d], moved[r - 1]);
    if (move) steps.push_back({"aten.permute_copy.default", {nullptr}, {{"dims", perm}}, moved});
    moved[r - 1] = out[d];
    steps.push_back({"aten.linear.default", {nullptr, wt, nullptr}, {}, moved});
    shape[d] = out[d];
    if (move) steps.push_back({"aten.permute_copy.default", {nullptr}, {{"dims", perm}}, shape});
  }
  ir::Value* cur = x;
  for (size_t k = 0; k < steps.size(); ++k) {
    Step& s = steps[k];
    s.ins[0] = cur;
    if (k + 1 == steps.size()) {
      to_runtime(n, s.op, std::move(s.ins), std::move(s.attrs));
      break;
    }
    ir::Node* m = g.add_node(ir::kVulkanDomain, s.op, std::move(s.ins), {{x->dtype(), ir::Shape::of(s.shape)}},
                             g.unique_name(n->name() + "_resize"), n);
    m->attrs() = std::move(s.attrs);
    cur = m->output(0);
  }
  return std::nullopt;
}

}  // namespace vkc::passes::lowering
