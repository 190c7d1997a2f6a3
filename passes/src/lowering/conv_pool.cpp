// Conv, MaxPool, AveragePool, GlobalAveragePool.
#include <fmt/format.h>

#include "lowering.h"

namespace vkc::passes::lowering {
namespace {

struct Window {
  std::vector<int64_t> kernel, strides, dilations, padding;
  std::vector<int64_t> begin, end;  // set when the padding is asymmetric (padding is then empty)
};

// Reads kernel/strides/dilations/pads of a 1-D or 2-D window op; `kernel` defaults to the
// weight's spatial dims.
Result read_window(const ir::Node* n, std::vector<int64_t> kernel, Window& w) {
  const size_t spatial = kernel.size();
  if (spatial != 1 && spatial != 2) return fmt::format("{}-D windows are not supported", spatial);
  w.kernel = n->attr_ints("kernel_shape", kernel);
  w.strides = n->attr_ints("strides", std::vector<int64_t>(spatial, 1));
  w.dilations = n->attr_ints("dilations", std::vector<int64_t>(spatial, 1));
  if (w.kernel.size() != spatial || w.strides.size() != spatial || w.dilations.size() != spatial)
    return fmt::format("kernel_shape/strides/dilations must have {} values", spatial);
  std::string why;
  auto pad = symmetric_padding(n, n->input(0), w.kernel, w.strides, w.dilations, why, &w.begin, &w.end);
  if (!pad) return why;
  w.padding = *pad;
  w.begin.clear();
  w.end.clear();
  return std::nullopt;
}

}  // namespace

// Asymmetric padding (TF "SAME" exports): the extra part goes into an explicit
// constant_pad_nd in front; the symmetric part stays in the convolution.
ir::Value* pad_asymmetric(ir::Graph& g, ir::Node* n, Window& w, const std::vector<int64_t>& begin,
                          const std::vector<int64_t>& end) {
  ir::Value* x = n->input(0);
  const size_t spatial = begin.size();
  std::vector<int64_t> torch_pad;  // last dim first: (begin, end) pairs
  auto shape = x->shape().sizes();
  w.padding.assign(spatial, 0);
  for (size_t i = spatial; i-- > 0;) {
    const int64_t common = std::min(begin[i], end[i]);
    w.padding[i] = common;
    torch_pad.insert(torch_pad.end(), {begin[i] - common, end[i] - common});
    shape[shape.size() - spatial + i] += begin[i] + end[i] - 2 * common;
  }
  ir::Node* pad = g.add_node(ir::kVulkanDomain, "aten.constant_pad_nd.default", {x}, {{x->dtype(), ir::Shape::of(shape)}},
                             g.unique_name(n->name() + "_pad"), n);
  pad->attrs() = {{"pad", torch_pad}, {"value", 0.0}};
  return pad->output(0);
}

// 2-D (rank 4) and 1-D (rank 3) convolution; the runtime tells them apart by rank.
Result lower_conv(ir::Graph& g, ir::Node* n) {
  ir::Value* weight = n->input(1);
  const auto rank = static_rank(n->input(0));
  if ((rank != 4u && rank != 3u) || static_rank(weight) != rank)
    return std::string("only 1-D and 2-D convolution (rank-3/4 input and weight) are supported");
  if (!weight->is_constant()) return std::string("weight is not a constant");
  const int64_t batch = n->input(0)->shape().dims[0].value.value_or(-1);
  if (batch != 1 && (batch < 1 || !has_static_shape(n->input(0)) || !has_static_shape(n->output(0)) || batch > 64))
    return std::string("batch above 1 needs static shapes (and at most 64)");
  if (n->input(2) && !n->input(2)->is_constant()) return std::string("bias is not a constant");
  const auto wshape = weight->shape().sizes();
  Window w;
  ir::Value* x = n->input(0);
  if (auto why = read_window(n, std::vector<int64_t>(wshape.begin() + 2, wshape.end()), w)) {
    if (w.begin.empty() || !has_static_shape(x)) return why;
    x = pad_asymmetric(g, n, w, w.begin, w.end);
  }
  const ir::AttributeMap attrs = {{"stride", w.strides},
                                  {"padding", w.padding},
                                  {"dilation", w.dilations},
                                  {"transposed", false},
                                  {"output_padding", std::vector<int64_t>(w.kernel.size(), 0)},
                                  {"groups", n->attr_int("group", 1)}};
  if (batch == 1) {
    to_runtime(n, "aten.convolution.default", {x, weight, n->input(2)}, attrs);
    return std::nullopt;
  }
  // The runtime's convolution takes batch 1: one per image (slice_copy), then cat along dim 0.
  std::vector<int64_t> in_one = x->shape().sizes(), out_one = n->output(0)->shape().sizes();
  in_one[0] = out_one[0] = 1;
  std::vector<ir::Value*> parts;
  for (int64_t b = 0; b < batch; ++b) {
    ir::Node* s = g.add_node(ir::kVulkanDomain, "aten.slice_copy.Tensor", {x}, {{x->dtype(), ir::Shape::of(in_one)}},
                             g.unique_name(n->name() + "_image"), n);
    s->attrs() = {{"dim", int64_t{0}}, {"start", b}, {"end", b + 1}, {"step", int64_t{1}}};
    ir::Node* c = g.add_node(ir::kVulkanDomain, "aten.convolution.default", {s->output(0), weight, n->input(2)},
                             {{n->output(0)->dtype(), ir::Shape::of(out_one)}}, g.unique_name(n->name() + "_conv"), n);
    c->attrs() = attrs;
    parts.push_back(c->output(0));
  }
  to_runtime(n, "aten.cat.default", parts, {{"dim", int64_t{0}}});
  return std::nullopt;
}

Result lower_conv_transpose(ir::Graph&, ir::Node* n) {
  ir::Value* weight = n->input(1);
  if (static_rank(n->input(0)) != 4u || static_rank(weight) != 4u)
    return std::string("only 2-D transposed convolution is supported");
  if (!weight->is_constant()) return std::string("weight is not a constant");
  if (n->input(2) && !n->input(2)->is_constant()) return std::string("bias is not a constant");
  if (n->input(0)->shape().dims[0].value != 1) return std::string("batch size must be 1 (the runtime's conv2d)");
  if (n->has_attr("output_shape")) return std::string("output_shape is not supported; give pads instead");
  const std::string auto_pad = n->attr_string("auto_pad", "NOTSET");
  if (auto_pad != "NOTSET" && auto_pad != "VALID") return "auto_pad " + auto_pad + " is not supported";
  const auto wshape = weight->shape().sizes();
  Window w;
  if (auto why = read_window(n, {wshape[2], wshape[3]}, w)) return why;
  to_runtime(n, "aten.convolution.default", {n->input(0), weight, n->input(2)},
             {{"stride", w.strides},
              {"padding", w.padding},
              {"dilation", w.dilations},
              {"transposed", true},
              {"output_padding", n->attr_ints("output_padding", {0, 0})},
              {"groups", n->attr_int("group", 1)}});
  return std::nullopt;
}

// A 1-D pool [N, C, L] as the 2-D one of height 1: view to [N, C, 1, L], a 2-D pool node (kernel,
// strides, pads, dilations lifted with a leading 1 / 0) lowered by `lower`, view back.
Result lift_1d_pool(ir::Graph& g, ir::Node* n, Result (*lower)(ir::Graph&, ir::Node*)) {
  ir::Value* x = n->input(0);
  if (!has_static_shape(x) || !has_static_shape(n->output(0))) return std::string("1-D pooling needs static shapes");
  const std::string auto_pad = n->attr_string("auto_pad", "NOTSET");
  if (auto_pad != "NOTSET" && auto_pad != "VALID") return "1-D pooling with auto_pad " + auto_pad + " is not supported";
  auto dims = x->shape().sizes();
  auto out = n->output(0)->shape().sizes();
  dims.insert(dims.begin() + 2, 1);
  out.insert(out.begin() + 2, 1);
  ir::Node* v = g.add_node(ir::kVulkanDomain, "aten.view_copy.default", {x}, {{x->dtype(), ir::Shape::of(dims)}},
                           g.unique_name(n->name() + "_2d"), n);
  v->attrs() = {{"size", dims}};
  ir::Node* p = g.add_node(ir::kOnnxDomain, n->op_type(), {v->output(0)}, {{x->dtype(), ir::Shape::of(out)}},
                           g.unique_name(n->name() + "_pool2d"), n);
  p->set_opset(n->opset());
  p->attrs() = n->attrs();
  auto lift = [&](const char* k, int64_t lead, size_t count) {
    if (!n->has_attr(k)) return;
    auto v1 = n->attr_ints(k);
    std::vector<int64_t> v2;
    for (size_t half = 0; half < v1.size() / count; ++half) {  // pads: (begin..., end...)
      v2.push_back(lead);
      for (size_t i = 0; i < count; ++i) v2.push_back(v1[half * count + i]);
    }
    p->set_attr(k, v2);
  };
  lift("kernel_shape", 1, 1);
  lift("strides", 1, 1);
  lift("dilations", 1, 1);
  lift("pads", 0, 1);
  if (auto why = lower(g, p)) {
    g.remove_node(p);
    return why;
  }
  to_runtime(n, "aten.view_copy.default", {p->output(0)}, {{"size", n->output(0)->shape().sizes()}});
  g.set_outputs(n, {n->output(0)});
  return std::nullopt;
}

Result lower_max_pool(ir::Graph& g, ir::Node* n) {
  if (static_rank(n->input(0)) == 3u && n->outputs().size() == 1) return lift_1d_pool(g, n, lower_max_pool);
  if (static_rank(n->input(0)) != 4u) return std::string("only 1-D and 2-D max pooling (rank-3/4 input) are supported");
  if (n->attr_int("storage_order", 0) != 0) return std::string("storage_order=1 is not supported");
  Window w;
  if (auto why = read_window(n, n->attr_ints("kernel_shape"), w)) return why;
  const bool indices_used = n->outputs().size() > 1;
  if (indices_used) return std::string("the Indices output is not supported");
  to_runtime(n, "aten.max_pool2d_with_indices.default", {n->input(0)},
             {{"kernel_size", w.kernel},
              {"stride", w.strides},
              {"padding", w.padding},
              {"dilation", w.dilations},
              {"ceil_mode", n->attr_int("ceil_mode", 0) != 0}});
  // The runtime operator also produces indices; nothing reads them.
  ir::TensorType idx = n->output(0)->type();
  idx.dtype = ir::DType::Int64;
  g.add_node_output(n, idx);
  return std::nullopt;
}

Result lower_average_pool(ir::Graph& g, ir::Node* n) {
  if (static_rank(n->input(0)) == 3u) return lift_1d_pool(g, n, lower_average_pool);
  if (static_rank(n->input(0)) != 4u) return std::string("only 1-D and 2-D average pooling (rank-3/4 input) are supported");
  if (n->attr_ints("dilations", {1, 1}) != std::vector<int64_t>{1, 1})
    return std::string("dilated average pooling is not supported");
  Window w;
  if (auto why = read_window(n, n->attr_ints("kernel_shape"), w)) return why;
  to_runtime(n, "aten.avg_pool2d.default", {n->input(0)},
             {{"kernel_size", w.kernel},
              {"stride", w.strides},
              {"padding", w.padding},
              {"ceil_mode", n->attr_int("ceil_mode", 0) != 0},
              // ONNX excludes padding from the average unless told otherwise; torch includes it by default.
              {"count_include_pad", n->attr_int("count_include_pad", 0) != 0}});
  return std::nullopt;
}

Result lower_global_average_pool(ir::Graph&, ir::Node* n) {
  if (static_rank(n->input(0)) != 4u) return std::string("only rank-4 input is supported");
  const bool max = n->op_type() == "GlobalMaxPool";
  to_runtime(n, max ? "aten.amax.default" : "aten.mean.dim", {n->input(0)},
             {{"dim", std::vector<int64_t>{-1, -2}}, {"keepdim", true}});
  return std::nullopt;
}

}  // namespace vkc::passes::lowering
