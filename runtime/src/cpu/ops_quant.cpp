// ExecuTorch Vulkan's quantized operators on the CPU (kernels/quantized.h).
#include "op_context.h"
#include "vkc/kernels/q8ta.h"
#include "vkc/kernels/quantized.h"

namespace vkc::runtime::cpu {
namespace {

// aten._weight_int8pack_mm.default(self, mat2, scales)
void int8pack_mm(const OpContext& c) { c.set_output(kernels::int8pack_mm(c.tensor(0), c.tensor(1), c.tensor(2))); }

// et_vk.linear_q4gsw.default(self, weights, weight_scales, group_size, bias?)
void linear_q4gsw(const OpContext& c) {
  c.set_output(kernels::linear_q4gsw(c.tensor(0), c.tensor(1), c.tensor(2), c.int_arg(3), c.opt_tensor(4)));
}

// torchao.choose_qparams_affine.default(input, mapping_type, block_size, target_dtype, quant_min?, quant_max?,
//                                       eps?, scale_dtype?, zero_point_dtype?) -> (scale, zero_point)
void choose_qparams(const OpContext& c) {
  const HostTensor& x = c.tensor(0);
  if (c.string_arg(1) != "ASYMMETRIC") c.fail("only ASYMMETRIC mapping is supported");
  const auto block = c.int_list(2);
  for (size_t i = 0; i + 1 < block.size(); ++i)
    if (block[i] != 1) c.fail("only per-row blocks [1, ..., K] are supported");
  if (block.empty() || block.back() != x.shape.back()) c.fail("only per-row blocks [1, ..., K] are supported");
  std::vector<int64_t> rows_shape(x.shape.begin(), x.shape.end() - 1);
  auto [scale, zp] = kernels::choose_qparams_per_row(x, static_cast<int64_t>(c.opt_scalar(4).value_or(-128)),
                                                     static_cast<int64_t>(c.opt_scalar(5).value_or(127)),
                                                     c.is_null(6) ? 1.1920929e-07 : c.float_arg(6), rows_shape,
                                                     rows_shape);
  c.set_outputs({std::move(scale), std::move(zp)});
}

// et_vk.linear_dq8ca_q4gsw.default(input, input_scale, input_zero_point, weights, weight_sums, weight_scales,
//                                  group_size, bias?)
void linear_dq8ca_q4gsw(const OpContext& c) {
  c.set_output(kernels::linear_dq8ca_q4gsw(c.tensor(0), c.tensor(1), c.tensor(2), c.tensor(3), c.tensor(5),
                                           c.int_arg(6), c.opt_tensor(7)));
}

// et_vk.embedding_q4gsw.default(weight, weight_scales, group_size, indices, is_linear_weight)
void embedding_q4gsw(const OpContext& c) {
  if (!c.bool_arg(4)) c.fail("only linear-weight packing (is_linear_weight=True) is supported");
  c.set_output(kernels::embedding_q4gsw(c.tensor(0), c.tensor(1), c.int_arg(2), c.tensor(3)));
}

// ---- static int8 (q8ta)

kernels::QParams qparams(const OpContext& c, size_t scale, size_t zero_point) {
  return {c.q8_scale(scale), c.q8_zero_point(zero_point)};
}

// quantized_decomposed.quantize_per_tensor.default(input, scale, zero_point, quant_min, quant_max, dtype)
void quantize_per_tensor(const OpContext& c) {
  c.set_output(kernels::quantize_per_tensor(c.tensor(0), qparams(c, 1, 2), c.int_arg(3), c.int_arg(4)));
}

// quantized_decomposed.dequantize_per_tensor.default(input, scale, zero_point, quant_min, quant_max, dtype, *,
//                                                    out_dtype?)
void dequantize_per_tensor(const OpContext& c) {
  c.set_output(kernels::dequantize_per_tensor(c.tensor(0), qparams(c, 1, 2)));
}

// et_vk.q8ta_conv2d[_dw|_pw].default(x, input_scale, input_zero_point, weights, weight_sums, weight_scales,
//   output_scale, output_zero_point, bias?, kernel_size, stride, padding, dilation, groups, activation)
void q8ta_conv2d(const OpContext& c) {
  kernels::Q8taConv conv;
  conv.kind = c.op() == "et_vk.q8ta_conv2d_dw.default"   ? kernels::Q8taConvKind::Depthwise
              : c.op() == "et_vk.q8ta_conv2d_pw.default" ? kernels::Q8taConvKind::Pointwise
                                                         : kernels::Q8taConvKind::General;
  conv.kernel = c.int_list(9);
  conv.stride = c.int_list(10);
  conv.padding = c.int_list(11);
  conv.dilation = c.int_list(12);
  conv.groups = c.int_arg(13);
  conv.relu = c.relu_activation(14);
  const serializer::VkTensor* out = c.output_spec();
  if (!out || out->dims.size() != 4) c.fail("the output must be a rank-4 tensor");
  c.set_output(kernels::q8ta_conv2d(c.tensor(0), qparams(c, 1, 2), c.tensor(3), c.tensor(5), c.opt_tensor(8),
                                    qparams(c, 6, 7), conv, out->dims[1]));
}

// et_vk.q8ta_linear[_gemv].default(x, input_scale, input_zero_point, weights, weight_sums, weight_scales,
//   output_scale, output_zero_point, bias?, activation)
void q8ta_linear(const OpContext& c) {
  const serializer::VkTensor* out = c.output_spec();
  if (!out || out->dims.empty()) c.fail("the output needs a rank");
  c.set_output(kernels::q8ta_linear(c.tensor(0), qparams(c, 1, 2), c.tensor(3), c.tensor(5), c.opt_tensor(8),
                                    qparams(c, 6, 7), c.relu_activation(9), out->dims.back()));
}

// et_vk.q8ta_add.default(input_a, input_b, input_a_scale, input_a_zero_point, input_b_scale,
//   input_b_zero_point, output_scale, output_zero_point, alpha)
void q8ta_add(const OpContext& c) {
  c.set_output(kernels::q8ta_add(c.tensor(0), qparams(c, 2, 3), c.tensor(1), qparams(c, 4, 5), qparams(c, 6, 7),
                                 c.float_arg(8)));
}

// et_vk.q8ta_relu.default(input, input_scale, input_zero_point, output_scale, output_zero_point)
void q8ta_relu(const OpContext& c) {
  c.set_output(kernels::q8ta_relu(c.tensor(0), qparams(c, 1, 2), qparams(c, 3, 4)));
}

}  // namespace

void add_quant_ops(OpTable& t) {
  t["quantized_decomposed.quantize_per_tensor.default"] = quantize_per_tensor;
  t["quantized_decomposed.dequantize_per_tensor.default"] = dequantize_per_tensor;
  for (const char* op : {"et_vk.q8ta_conv2d.default", "et_vk.q8ta_conv2d_dw.default", "et_vk.q8ta_conv2d_pw.default"})
    t[op] = q8ta_conv2d;
  t["et_vk.q8ta_linear.default"] = q8ta_linear;
  t["et_vk.q8ta_linear_gemv.default"] = q8ta_linear;
  t["et_vk.q8ta_add.default"] = q8ta_add;
  t["et_vk.q8ta_relu.default"] = q8ta_relu;
  t["aten._weight_int8pack_mm.default"] = int8pack_mm;
  t["et_vk.linear_q4gsw.default"] = linear_q4gsw;
  t["torchao.choose_qparams_affine.default"] = choose_qparams;
  t["et_vk.linear_dq8ca_q4gsw.default"] = linear_dq8ca_q4gsw;
  t["et_vk.embedding_q4gsw.default"] = embedding_q4gsw;
}

}  // namespace vkc::runtime::cpu
