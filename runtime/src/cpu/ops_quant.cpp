// ExecuTorch Vulkan's quantized operators on the CPU (kernels/quantized.h).
#include "op_context.h"
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

}  // namespace

void add_quant_ops(OpTable& t) {
  t["aten._weight_int8pack_mm.default"] = int8pack_mm;
  t["et_vk.linear_q4gsw.default"] = linear_q4gsw;
  t["torchao.choose_qparams_affine.default"] = choose_qparams;
  t["et_vk.linear_dq8ca_q4gsw.default"] = linear_dq8ca_q4gsw;
  t["et_vk.embedding_q4gsw.default"] = embedding_q4gsw;
}

}  // namespace vkc::runtime::cpu
