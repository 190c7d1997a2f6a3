// Static-int8 (q8ta) operators on the GPU: quantize_per_tensor / dequantize_per_tensor at the float
// boundaries (q8ta_quantize.glsl, q8ta_dequantize.glsl), convolutions (q8ta_conv2d.glsl), linears
// (q8ta_linear.glsl), add and relu (q8ta_add.glsl, q8ta_relu.glsl). Their int8 activations are buffers of one
// int per element, contiguous, whatever packed-int8 layout the program names (VulkanDelegate::
// representation); constant int8 weights are widened to ints at load.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "vk_encoder.h"

namespace vkc::runtime::vk {
namespace {

void require_int8_activation(Encoder& e, const GpuTensor& t, const char* what) {
  if (t.texture || t.dtype != ir::DType::Int32)
    e.fail(fmt::format("{} must be an int8 activation (packed int8 buffer), not {} {}", what, t.dtype_name(),
                       t.storage()));
}

Resource buf(VkBuffer b) { return {b, VK_NULL_HANDLE}; }

float scale_arg(Encoder& e, size_t i) {
  const double s = e.float_arg(i);
  if (!(s > 0) || !(s < 3.4e38)) e.fail(fmt::format("scale {} must be positive and finite", s));
  return static_cast<float>(s);
}

int32_t zero_point_arg(Encoder& e, size_t i) {
  const int64_t z = e.int_arg(i);
  if (z < -128 || z > 127) e.fail(fmt::format("zero point {} lies outside int8", z));
  return static_cast<int32_t>(z);
}

bool relu_arg(Encoder& e, size_t i) {
  const std::string a = e.string_arg(i);
  if (a != "none" && a != "relu") e.fail("activation must be \"none\" or \"relu\", not \"" + a + "\"");
  return a == "relu";
}

// quantized_decomposed.quantize_per_tensor(input, scale, zero_point, quant_min, quant_max, dtype)
void quantize(Encoder& e) {
  GpuTensor& out = e.out();
  require_int8_activation(e, out, "the output");
  GpuTensor& in = e.tensor(0);
  if (in.dims != out.dims) e.fail("input and output shapes differ");
  const int64_t qmin = e.int_arg(3), qmax = e.int_arg(4);
  if (qmin < -128 || qmax > 127 || qmin > qmax) e.fail(fmt::format("range [{}, {}] does not lie in int8", qmin, qmax));
  const auto& v = e.variant(in, {}, "q8ta_quantize");
  Push p(v);
  p.iv("sizes", out.sizes).f("scale", scale_arg(e, 1)).i("zero_point", zero_point_arg(e, 2));
  p.i("qmin", static_cast<int32_t>(qmin)).i("qmax", static_cast<int32_t>(qmax)).i("packed_dim", in.packed_dim);
  e.dispatch(v, {out.resource(), in.resource()}, p, out.items());
}

// quantized_decomposed.dequantize_per_tensor(input, scale, zero_point, quant_min, quant_max, dtype, *, out_dtype?)
void dequantize(Encoder& e) {
  GpuTensor& out = e.out();
  GpuTensor& in = e.tensor(0);
  require_int8_activation(e, in, "the input");
  if (in.dims != out.dims) e.fail("input and output shapes differ");
  const auto& v = e.variant(out, {}, "q8ta_dequantize");
  Push p(v);
  p.iv("sizes", out.sizes).f("scale", scale_arg(e, 1)).i("zero_point", zero_point_arg(e, 2));
  p.i("packed_dim", out.packed_dim);
  e.dispatch(v, {out.resource(), in.resource()}, p, out.items());
}

// The per-channel scales and bias (>= n values, f32) of a q8ta convolution or linear.
std::pair<VkBuffer, VkBuffer> channel_constants(Encoder& e, int64_t n, bool& has_bias) {
  const GpuTensor& s = e.constant(5, ir::DType::Float32);
  if (s.dims.size() != 1 || s.dims[0] < n) e.fail(fmt::format("weight_scales need {} values", n));
  has_bias = !e.is_null(8);
  VkBuffer bias = e.filled(1, 0, ir::DType::Float32);
  if (has_bias) {
    const GpuTensor& b = e.constant(8, ir::DType::Float32);
    if (b.dims.size() != 1 || b.dims[0] < n) e.fail(fmt::format("bias needs {} values", n));
    bias = b.buffer.buffer;
  }
  return {s.buffer.buffer, bias};
}

// et_vk.q8ta_conv2d[_dw|_pw](x, input_scale, input_zero_point, weights, weight_sums, weight_scales,
//   output_scale, output_zero_point, bias?, kernel_size, stride, padding, dilation, groups, activation)
void conv2d(Encoder& e) {
  GpuTensor& out = e.out();
  GpuTensor& in = e.tensor(0);
  require_int8_activation(e, out, "the output");
  require_int8_activation(e, in, "the input");
  if (in.dims.size() != 4 || out.dims.size() != 4 || in.dims[0] != 1 || out.dims[0] != 1)
    e.fail("input and output must be [1, C, H, W]");
  const auto kernel = e.int_list(9), stride = e.int_list(10), padding = e.int_list(11), dilation = e.int_list(12);
  for (const auto* l : {&kernel, &stride, &padding, &dilation})
    if (l->size() != 2) e.fail("kernel_size, stride, padding and dilation need 2 values each");
  for (int j = 0; j < 2; ++j)
    if (kernel[j] < 1 || stride[j] < 1 || dilation[j] < 1 || padding[j] < 0 || kernel[j] > 4096 || stride[j] > 4096 ||
        dilation[j] > 4096 || padding[j] > 4096)
      e.fail("kernel, stride, dilation or padding out of range");
  const int64_t C = in.dims[1], OC = out.dims[1], G = e.int_arg(13), KH = kernel[0], KW = kernel[1];
  if (G < 1 || C % G != 0 || OC % G != 0) e.fail(fmt::format("{} -> {} channels in {} groups", C, OC, G));
  for (int j = 0; j < 2; ++j) {
    const int64_t size = in.dims[2 + j], o = out.dims[2 + j];
    if (o != (size + 2 * padding[j] - dilation[j] * (kernel[j] - 1) - 1) / stride[j] + 1)
      e.fail("the output size does not follow from the input and window");
  }
  const bool dw = e.op() == "et_vk.q8ta_conv2d_dw.default";
  const GpuTensor& w = e.constant(3, ir::DType::Int32);
  int64_t w_stride = 0;
  if (dw) {
    if (G != C || OC != C || w.dims.size() != 3 || w.dims[0] != KH || w.dims[1] != KW || w.dims[2] < OC)
      e.fail("depthwise weights must be [KH, KW, >= OC] with groups = channels");
    w_stride = w.dims[2];
  } else {
    if (w.dims.size() != 2 || w.dims[0] != OC || w.dims[1] < KH * KW * (C / G))
      e.fail(fmt::format("weights must be [{}, >= {}]", OC, KH * KW * (C / G)));
    w_stride = w.dims[1];
  }
  bool has_bias = false;
  const auto [scales, bias] = channel_constants(e, OC, has_bias);
  const auto& v = e.variant(out, {}, "q8ta_conv2d");
  Push p(v);
  p.iv("out_sizes", out.sizes).iv("in_sizes", in.sizes);
  p.iv("kernel", {int32_t(KW), int32_t(KH), 0, 0}).iv("stride", {int32_t(stride[1]), int32_t(stride[0]), 0, 0});
  p.iv("padding", {int32_t(padding[1]), int32_t(padding[0]), 0, 0});
  p.iv("dilation", {int32_t(dilation[1]), int32_t(dilation[0]), 0, 0});
  p.i("groups", int32_t(G)).i("w_stride", int32_t(w_stride)).i("depthwise", dw ? 1 : 0).i("relu", relu_arg(e, 14));
  p.i("has_bias", has_bias).i("in_zp", zero_point_arg(e, 2)).i("out_zp", zero_point_arg(e, 7));
  p.f("in_scale", scale_arg(e, 1)).f("out_scale", scale_arg(e, 6));
  e.dispatch(v, {out.resource(), in.resource(), buf(w.buffer.buffer), buf(scales), buf(bias)}, p, out.items());
}

// et_vk.q8ta_linear[_gemv](x, input_scale, input_zero_point, weights, weight_sums, weight_scales,
//   output_scale, output_zero_point, bias?, activation)
void linear(Encoder& e) {
  GpuTensor& out = e.out();
  GpuTensor& in = e.tensor(0);
  require_int8_activation(e, out, "the output");
  require_int8_activation(e, in, "the input");
  if (in.dims.empty() || out.dims.size() != in.dims.size()) e.fail("input and output ranks differ");
  const int64_t K = in.dims.back(), N = out.dims.back();
  const GpuTensor& w = e.constant(3, ir::DType::Int32);
  if (w.dims.size() != 2 || w.dims[0] != N || w.dims[1] < K) e.fail(fmt::format("weights must be [{}, >= {}]", N, K));
  bool has_bias = false;
  const auto [scales, bias] = channel_constants(e, N, has_bias);
  const auto& v = e.variant(out, {}, "q8ta_linear");
  Push p(v);
  p.iv("out_sizes", out.sizes).i("k", int32_t(K)).i("w_stride", int32_t(w.dims[1])).i("relu", relu_arg(e, 9));
  p.i("has_bias", has_bias).i("in_zp", zero_point_arg(e, 2)).i("out_zp", zero_point_arg(e, 7));
  p.f("in_scale", scale_arg(e, 1)).f("out_scale", scale_arg(e, 6));
  e.dispatch(v, {out.resource(), in.resource(), buf(w.buffer.buffer), buf(scales), buf(bias)}, p, out.items());
}

// et_vk.q8ta_add(a, b, a_scale, a_zero_point, b_scale, b_zero_point, output_scale, output_zero_point, alpha)
void add(Encoder& e) {
  GpuTensor& out = e.out();
  GpuTensor& a = e.tensor(0);
  GpuTensor& b = e.tensor(1);
  require_int8_activation(e, out, "the output");
  require_int8_activation(e, a, "input a");
  require_int8_activation(e, b, "input b");
  if (a.dims != out.dims || b.dims != out.dims) e.fail("the inputs and the output must have one shape");
  const auto& v = e.variant(out, {}, "q8ta_add");
  Push p(v);
  p.i("numel", static_cast<int32_t>(out.items())).i("a_zp", zero_point_arg(e, 3)).f("a_scale", scale_arg(e, 2));
  p.i("b_zp", zero_point_arg(e, 5)).f("b_scale", scale_arg(e, 4) * static_cast<float>(e.float_arg(8)));
  p.i("out_zp", zero_point_arg(e, 7)).f("out_scale", scale_arg(e, 6));
  e.dispatch(v, {out.resource(), a.resource(), b.resource()}, p, out.items());
}

// et_vk.q8ta_relu(input, input_scale, input_zero_point, output_scale, output_zero_point)
void relu(Encoder& e) {
  GpuTensor& out = e.out();
  GpuTensor& in = e.tensor(0);
  require_int8_activation(e, out, "the output");
  require_int8_activation(e, in, "the input");
  if (in.dims != out.dims) e.fail("input and output shapes differ");
  const auto& v = e.variant(out, {}, "q8ta_relu");
  Push p(v);
  p.i("numel", static_cast<int32_t>(out.items())).i("in_zp", zero_point_arg(e, 2)).f("in_scale", scale_arg(e, 1));
  p.i("out_zp", zero_point_arg(e, 4)).f("out_scale", scale_arg(e, 3));
  e.dispatch(v, {out.resource(), in.resource()}, p, out.items());
}

}  // namespace

void add_q8ta_ops(std::unordered_map<std::string, OpEncoder>& t) {
  t["quantized_decomposed.quantize_per_tensor.default"] = quantize;
  t["quantized_decomposed.dequantize_per_tensor.default"] = dequantize;
  for (const char* op : {"et_vk.q8ta_conv2d.default", "et_vk.q8ta_conv2d_dw.default", "et_vk.q8ta_conv2d_pw.default"})
    t[op] = conv2d;
  t["et_vk.q8ta_linear.default"] = linear;
  t["et_vk.q8ta_linear_gemv.default"] = linear;
  t["et_vk.q8ta_add.default"] = add;
  t["et_vk.q8ta_relu.default"] = relu;
}

}  // namespace vkc::runtime::vk
