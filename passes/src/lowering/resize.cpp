// Resize / Upsample -> upsample_nearest2d / upsample_bilinear2d where those are exact, else
// separable index_select / linear steps (resize_separable.cpp); GridSample -> grid_sampler_2d.
//
// PyTorch's nearest is ONNX's (asymmetric, floor); its bilinear is ONNX's linear
// with half_pixel (pytorch_half_pixel when the output is larger than 1), or with
// align_corners.
#include <fmt/format.h>

#include <cmath>

#include "../constants.h"
#include "lowering.h"

namespace vkc::passes::lowering {
namespace {

// The H and W scales (or output sizes) from Resize's inputs or Upsample's.
Result read_target(const ir::Node* n, ir::AttributeMap& attrs, const char* sizes_name, const char* scales_name) {
  const bool upsample = n->op_type() == "Upsample";
  const ir::Value* scales = upsample || n->opset() < 11 ? n->input(1) : n->input(2);
  const ir::Value* sizes = upsample || n->opset() < 11 ? nullptr : n->input(3);
  if (upsample && n->opset() < 9) return std::string("Upsample before opset 9 (scales attribute) is not supported");
  if (sizes) {
    auto v = constant_ints(sizes);
    if (!v || v->size() != 4) return std::string("sizes is not a constant of 4 values");
    attrs[sizes_name] = std::vector<int64_t>{(*v)[2], (*v)[3]};
    return std::nullopt;
  }
  auto v = constant_floats(scales);
  if (!v || v->size() != 4) return std::string("scales is not a constant of 4 values");
  if ((*v)[0] != 1.0f || (*v)[1] != 1.0f) return std::string("only the H and W axes may be scaled");
  attrs[scales_name] = std::vector<double>{(*v)[2], (*v)[3]};
  return std::nullopt;
}

// The runtime's own upsample ops, where they compute exactly what the node asks.
Result lower_resize_direct(ir::Node* n) {
  if (static_rank(n->input(0)) != 4u) return std::string("only rank-4 input is supported");
  const std::string mode = n->attr_string("mode", "nearest");
  const std::string coord = n->attr_string("coordinate_transformation_mode", "half_pixel");
  ir::AttributeMap attrs;
  if (auto why = read_target(n, attrs, "output_size", "scale_factors")) return why;
  const bool old = n->op_type() == "Upsample" || n->opset() < 11;  // coordinates were asymmetric, nearest floor
  if (mode == "nearest") {
    const std::string rounding = n->attr_string("nearest_mode", "round_prefer_floor");
    if (!old && (coord != "asymmetric" || rounding != "floor"))
      return fmt::format("nearest with {} / {} has no runtime equivalent (needs asymmetric / floor)", coord, rounding);
    to_runtime(n, "aten.upsample_nearest2d.vec", {n->input(0)}, std::move(attrs));
    return std::nullopt;
  }
  if (mode == "linear" || mode == "bilinear") {
    if (old) return std::string("linear Upsample before opset 11 (asymmetric) has no runtime equivalent");
    if (coord != "half_pixel" && coord != "pytorch_half_pixel" && coord != "align_corners")
      return fmt::format("linear with {} has no runtime equivalent", coord);
    // With align_corners, ONNX maps coordinates with the unrounded in * scale and aten with the
    // integer output size: they agree only when in * scale is a whole number.
    const auto sf_it = attrs.find("scale_factors");
    const auto* sf = sf_it == attrs.end() ? nullptr : std::get_if<std::vector<double>>(&sf_it->second);
    if (sf && coord == "align_corners" && has_static_shape(n->input(0))) {
      const auto in = n->input(0)->shape().sizes();
      for (size_t i = 0; i < 2; ++i) {
        const double len = static_cast<double>(in[2 + i]) * (*sf)[i];
        if (std::abs(len - std::round(len)) > 1e-6)
          return fmt::format("linear resize to {} (not a whole size) has no runtime equivalent", len);
      }
    }
    // pytorch_half_pixel maps an output of length 1 to coordinate 0; aten to the centre.
    if (coord == "pytorch_half_pixel" && has_static_shape(n->output(0))) {
      const auto out = n->output(0)->shape().sizes();
      if (out[2] == 1 || out[3] == 1) return std::string("pytorch_half_pixel with an output side of 1 differs from aten");
    }
    attrs["align_corners"] = coord == "align_corners";
    to_runtime(n, "aten.upsample_bilinear2d.vec", {n->input(0)}, std::move(attrs));
    return std::nullopt;
  }
  return fmt::format("mode '{}' is not supported", mode);
}

}  // namespace

// GridSample (opset 16 names, and opset 20's linear) -> grid_sampler_2d; bicubic is left.
Result lower_grid_sample(ir::Graph&, ir::Node* n) {
  if (static_rank(n->input(0)) != 4u || static_rank(n->input(1)) != 4u)
    return std::string("only 2-D sampling (rank-4 input and grid) is supported");
  if (!ir::is_float(n->output(0)->dtype())) return std::string("only floating-point inputs are supported");
  const std::string mode = n->attr_string("mode", n->opset() >= 20 ? "linear" : "bilinear");
  const std::string padding = n->attr_string("padding_mode", "zeros");
  int64_t m = 0, pad = 0;
  if (mode == "bilinear" || mode == "linear") m = 0;
  else if (mode == "nearest") m = 1;
  else return fmt::format("mode '{}' is not supported", mode);
  if (padding == "zeros") pad = 0;
  else if (padding == "border") pad = 1;
  else if (padding == "reflection") pad = 2;
  else return fmt::format("padding_mode '{}' is not supported", padding);
  to_runtime(n, "aten.grid_sampler_2d.default", {n->input(0), n->input(1)},
             {{"interpolation_mode", m}, {"padding_mode", pad}, {"align_corners", n->attr_int("align_corners", 0) != 0}});
  return std::nullopt;
}

// The runtime's upsample ops where they are exact; otherwise separable steps
// (resize_separable.cpp); the reasons of both when neither applies.
Result lower_resize(ir::Graph& g, ir::Node* n) {
  const Result direct = lower_resize_direct(n);
  if (!direct) return std::nullopt;
  const Result separable = lower_resize_separable(g, n);
  if (!separable) return std::nullopt;
  return fmt::format("{} (separable: {})", *direct, *separable);
}

}  // namespace vkc::passes::lowering
