// Static-int8 (q8ta) operators on the GPU: quantize_per_tensor / dequantize_per_tensor at the float
// boundaries (q8ta_quantize.glsl, q8ta_dequantize.glsl), convolutions (q8ta_conv2d.glsl), linears
// (q8ta_linear.glsl), add and relu (q8ta_add.glsl, q8ta_relu.glsl). Their int8 activations are 4 int8
// per i32 word along channels (rank 4) or the last dim (GpuTensor::int8x4), whatever packed-int8 layout
// the program names; constant int8 weights are read as words as they are. Convolutions and linears
// take the _dot variants (OpSDot) where the device has integer dot products.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstdlib>
#include <cstring>
#include <string_view>

#include "vk_encoder.h"

namespace vkc::runtime::vk {
namespace {

void require_int8_activation(Encoder& e, const GpuTensor& t, const char* what) {
  if (!t.int8x4)
    e.fail(fmt::format("{} must be an int8 activation (packed int8 buffer), not {} {}", what, t.dtype_name(),
                       t.storage()));
}

Resource buf(VkBuffer b) { return {b, VK_NULL_HANDLE}; }

float scale_arg(const Encoder& e, size_t i) { return static_cast<float>(e.q8_scale(i)); }
int32_t zero_point_arg(const Encoder& e, size_t i) { return static_cast<int32_t>(e.q8_zero_point(i)); }

// Invocations for a texture tensor's texels taken 4 along x at a time (CPU devices).
int64_t texel_quads(const GpuTensor& t) {
  ivec4 s = t.sizes;
  s[t.packed_dim] = (s[t.packed_dim] + 3) / 4;
  return int64_t{(s[0] + 3) / 4} * s[1] * s[2] * s[3];
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
  p.i("qmin", static_cast<int32_t>(qmin)).i("qmax", static_cast<int32_t>(qmax));
  p.i("in_packed_dim", in.packed_dim).i("out_packed_dim", out.packed_dim);
  // On CPU devices, a texture packing the int8 dim: 4 texels along x per invocation.
  const bool x4 = e.cpu_device() && in.texture && out.packed_dim == in.packed_dim;
  p.i("texels_per_item", x4 ? 4 : 1);
  e.dispatch(v, {out.resource(), in.resource()}, p, x4 ? texel_quads(in) : out.items());
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
  // On CPU devices, a texture packing the int8 dim: 4 texels along x per invocation.
  const bool x4 = e.cpu_device() && out.texture && out.packed_dim == in.packed_dim;
  p.i("out_packed_dim", out.packed_dim).i("in_packed_dim", in.packed_dim).i("texels_per_item", x4 ? 4 : 1);
  e.dispatch(v, {out.resource(), in.resource()}, p, x4 ? texel_quads(out) : out.items());
}

// The per-channel weight sums (i32), scales and bias (f32) of a q8ta convolution or linear (>= n values).
struct ChannelConstants {
  VkBuffer sums, scales, bias;
  bool has_bias = false;
};
ChannelConstants channel_constants(Encoder& e, int64_t n) {
  ChannelConstants c;
  for (size_t i : {size_t{4}, size_t{5}}) {
    const auto& dims = e.vk_tensor(e.id(i)).dims;
    if (!e.is_constant(i) || dims.size() != 1 || dims[0] < n) e.fail(fmt::format("argument {} needs {} values", i, n));
  }
  c.sums = e.raw(4, ir::DType::Int32, e.vk_tensor(e.id(4)).dims[0]);
  c.scales = e.raw(5, ir::DType::Float32, e.vk_tensor(e.id(5)).dims[0]);
  c.has_bias = !e.is_null(8);
  c.bias = e.filled(1, 0, ir::DType::Float32);
  if (c.has_bias) {
    const auto& dims = e.vk_tensor(e.id(8)).dims;
    if (!e.is_constant(8) || dims.size() != 1 || dims[0] < n) e.fail(fmt::format("bias needs {} values", n));
    c.bias = e.raw(8, ir::DType::Float32, dims[0]);
  }
  return c;
}

// The dims of the int8 weight constant (argument 3), checked to be rows of whole 32-bit words.
std::vector<int64_t> weight_dims(Encoder& e) {
  if (!e.is_constant(3)) e.fail("the weights must be a constant");
  const auto& d = e.vk_tensor(e.id(3)).dims;
  std::vector<int64_t> dims(d.begin(), d.end());
  if (dims.empty() || dims.back() % 4 != 0) e.fail("the weights' last dim must be a multiple of 4 (whole words)");
  return dims;
}

// The int8 weight constant (argument 3) as 32-bit words, with its dims.
std::pair<VkBuffer, std::vector<int64_t>> weight_words(Encoder& e) {
  std::vector<int64_t> dims = weight_dims(e);
  int64_t n = 1;
  for (int64_t x : dims) n *= x;
  return {e.raw(3, ir::DType::Int8, n), dims};
}

// [OC, w_stride] int8 rows of (tap, input channel) (taps x cg bytes used) as 16-byte words of 4 output
// channels: for channel block b, tap t and input channels 4 ic4 .. + 3 (zero past cg), the 4 channels'
// words side by side at word index (b * taps + t) * ceil(cg / 4) + ic4; rows past OC are zero.
// WPACK oc4 (q8ta_conv2d.yaml).
std::vector<uint8_t> pack_q8_oc4(const kernels::HostTensor& w, int64_t taps, int64_t cg) {
  const int64_t oc = w.shape.at(0), stride = w.shape.at(1), cg4 = (cg + 3) / 4, blocks = (oc + 3) / 4;
  std::vector<uint8_t> out(static_cast<size_t>(blocks * taps * cg4 * 16), 0);
  const uint8_t* src = w.data.data();
  for (int64_t r = 0; r < oc; ++r)
    for (int64_t t = 0; t < taps; ++t)
      for (int64_t c = 0; c < cg; ++c)
        out[static_cast<size_t>((((r / 4) * taps + t) * cg4 + c / 4) * 16 + (r % 4) * 4 + c % 4)] =
            src[r * stride + t * cg + c];
  return out;
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
  if (in.packed_dim != 2 || out.packed_dim != 2) e.fail("int8 activations of convolutions must be packed along channels");
  const std::vector<int64_t> wd = weight_dims(e);
  int64_t w_stride = wd.back();
  if (dw) {
    if (G != C || OC != C || OC % 4 != 0 || wd.size() != 3 || wd[0] != KH || wd[1] != KW || wd[2] < OC)
      e.fail("depthwise weights must be [KH, KW, >= OC] with groups = channels, a multiple of 4");
  } else {
    if (wd.size() != 2 || wd[0] != OC || w_stride < KH * KW * (C / G))
      e.fail(fmt::format("weights must be [{}, >= {}]", OC, KH * KW * (C / G)));
    if (G > 1 && ((C / G) % 4 != 0 || (OC / G) % 4 != 0)) e.fail("grouped convolutions need 4 | channels per group");
  }
  const ChannelConstants cc = channel_constants(e, OC);
  // On GPUs, few output words over a long sum: a workgroup per word splits it (q8ta_conv2d.yaml).
  const int64_t pairs = KH * KW * ((C / G + 3) / 4);
  const bool split = !dw && !e.cpu_device() && out.items() < 32768 && pairs >= 32;
  // On CPU devices (or with VKC_VULKAN_Q8TA_C8=1), ungrouped: 8 output channels per invocation.
  const char* c8_env = std::getenv("VKC_VULKAN_Q8TA_C8");
  const bool c8 = !dw && !split && G == 1 && (c8_env ? std::string_view(c8_env) == "1" : e.cpu_device());
  const int64_t ocb = c8 ? 2 : 1;
  // General and pointwise weights are prepacked 4 output channels per 16-byte word (one load per
  // tap and 4 input channels); depthwise ones are read as the program has them.
  const int64_t taps = KH * KW, cg = C / G;
  int64_t numel = 1;
  for (int64_t x : wd) numel *= x;
  const VkBuffer w = !dw ? e.packed(3, ir::DType::Int8, fmt::format("q8ta_oc4_{}x{}", taps, cg),
                                    [taps, cg](const kernels::HostTensor& t) { return pack_q8_oc4(t, taps, cg); })
                         : e.raw(3, ir::DType::Int8, numel);
  const auto& v = dw ? e.variant(out, {}, "q8ta_conv2d")
                     : e.variant(out, {}, std::string(e.integer_dot_product() ? "q8ta_conv2d_dot" : "q8ta_conv2d") +
                                              (split ? "_splitk" : c8 ? "_w4c8" : "_w4"));
  Push p(v);
  p.iv("out_sizes", out.sizes).iv("in_sizes", in.sizes);
  p.iv("kernel", {int32_t(KW), int32_t(KH), 0, 0}).iv("stride", {int32_t(stride[1]), int32_t(stride[0]), 0, 0});
  p.iv("padding", {int32_t(padding[1]), int32_t(padding[0]), 0, 0});
  p.iv("dilation", {int32_t(dilation[1]), int32_t(dilation[0]), 0, 0});
  p.i("groups", int32_t(G)).i("w_stride", int32_t(w_stride)).i("depthwise", dw ? 1 : 0).i("relu", e.relu_activation(14));
  p.i("has_bias", cc.has_bias).i("in_zp", zero_point_arg(e, 2)).i("out_zp", zero_point_arg(e, 7));
  p.f("in_scale", scale_arg(e, 1)).f("out_scale", scale_arg(e, 6)).i("position_major", e.cpu_device() ? 1 : 0);
  const int64_t tiles = (out.dims[3] + 3) / 4 * out.dims[2] * ((OC + 4 * ocb - 1) / (4 * ocb));  // 4 positions x 4 or 8 channels
  e.dispatch(v, {out.resource(), in.resource(), buf(w), buf(cc.sums), buf(cc.scales), buf(cc.bias)}, p,
             split ? out.items() * v.local_size[0] : tiles);
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
  if (in.packed_dim != 0 || out.packed_dim != 0 || K % 4 != 0)
    e.fail("int8 activations of linears must be packed along a last dim of a multiple of 4");
  const auto [w, wd] = weight_words(e);
  if (wd.size() != 2 || wd[0] != N || wd[1] < K) e.fail(fmt::format("weights must be [{}, >= {}]", N, K));
  const ChannelConstants cc = channel_constants(e, N);
  const bool split = !e.cpu_device() && out.items() < 32768 && K / 4 >= 64;
  const auto& v = e.variant(out, {}, std::string(e.integer_dot_product() ? "q8ta_linear_dot" : "q8ta_linear") +
                                         (split ? "_splitk" : ""));
  Push p(v);
  p.iv("out_sizes", out.sizes).i("k", int32_t(K)).i("w_stride", int32_t(wd[1])).i("relu", e.relu_activation(9));
  p.i("has_bias", cc.has_bias).i("in_zp", zero_point_arg(e, 2)).i("out_zp", zero_point_arg(e, 7));
  p.f("in_scale", scale_arg(e, 1)).f("out_scale", scale_arg(e, 6));
  e.dispatch(v, {out.resource(), in.resource(), buf(w), buf(cc.sums), buf(cc.scales), buf(cc.bias)}, p,
             split ? out.items() * v.local_size[0] : out.items());
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
  p.i("words", static_cast<int32_t>(out.items())).i("a_zp", zero_point_arg(e, 3)).f("a_scale", scale_arg(e, 2));
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
  p.i("words", static_cast<int32_t>(out.items())).i("in_zp", zero_point_arg(e, 2)).f("in_scale", scale_arg(e, 1));
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
