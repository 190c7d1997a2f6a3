// Binary, unary and activation operators.
#include <fmt/format.h>

#include "op_context.h"
#include "vkc/kernels/activation.h"
#include "vkc/kernels/elementwise.h"

namespace vkc::runtime::cpu {
namespace {

using kernels::Activation;
using kernels::BinaryOp;
using kernels::UnaryOp;

HostTensor scalar_like(const HostTensor& t, double v) {
  HostTensor s = HostTensor::zeros(t.dtype, {});
  s.set_f(0, v);
  return s;
}

// self op (alpha * other); alpha is argument 2 for add/sub.
template <BinaryOp Op, bool HasAlpha>
void binary(const OpContext& c) {
  const HostTensor& a = c.tensor(0);
  const HostTensor& b = c.tensor(1);
  if constexpr (HasAlpha) {
    const double alpha = c.scalar_arg(2);
    if (alpha != 1.0) {
      c.set_output(kernels::binary(Op, a, kernels::binary(BinaryOp::Mul, b, scalar_like(b, alpha))));
      return;
    }
  }
  c.set_output(kernels::binary(Op, a, b));
}

template <UnaryOp Op>
void unary(const OpContext& c) {
  c.set_output(kernels::unary(Op, c.tensor(0)));
}

template <Activation Op>
void activation(const OpContext& c) {
  c.set_output(kernels::activation(Op, c.tensor(0)));
}

void clamp(const OpContext& c) { c.set_output(kernels::clamp(c.tensor(0), c.opt_scalar(1), c.opt_scalar(2))); }
void leaky_relu(const OpContext& c) { c.set_output(kernels::leaky_relu(c.tensor(0), c.scalar_arg(1))); }
void pow_scalar(const OpContext& c) { c.set_output(kernels::pow_scalar(c.tensor(0), c.scalar_arg(1))); }

void gelu(const OpContext& c) {
  const std::string approximate = c.string_arg(1);
  if (approximate == "none") c.set_output(kernels::activation(Activation::Gelu, c.tensor(0)));
  else if (approximate == "tanh") c.set_output(kernels::activation(Activation::GeluTanh, c.tensor(0)));
  else c.fail(fmt::format("approximate='{}' is not 'none' or 'tanh'", approximate));
}

}  // namespace

void add_elementwise_ops(OpTable& t) {
  t["aten.add.Tensor"] = binary<BinaryOp::Add, true>;
  t["aten.sub.Tensor"] = binary<BinaryOp::Sub, true>;
  t["aten.mul.Tensor"] = binary<BinaryOp::Mul, false>;
  t["aten.div.Tensor"] = binary<BinaryOp::Div, false>;
  t["aten.minimum.default"] = binary<BinaryOp::Min, false>;
  t["aten.pow.Tensor_Tensor"] = binary<BinaryOp::Pow, false>;
  t["aten.pow.Tensor_Scalar"] = pow_scalar;
  t["aten.relu.default"] = unary<UnaryOp::Relu>;
  t["aten.sigmoid.default"] = unary<UnaryOp::Sigmoid>;
  t["aten.tanh.default"] = unary<UnaryOp::Tanh>;
  t["aten.abs.default"] = unary<UnaryOp::Abs>;
  t["aten.neg.default"] = unary<UnaryOp::Neg>;
  t["aten.sqrt.default"] = unary<UnaryOp::Sqrt>;
  t["aten.exp.default"] = unary<UnaryOp::Exp>;
  t["aten.sin.default"] = unary<UnaryOp::Sin>;
  t["aten.cos.default"] = unary<UnaryOp::Cos>;
  t["aten.round.default"] = unary<UnaryOp::Round>;
  t["aten.rsqrt.default"] = activation<Activation::Rsqrt>;
  t["aten.log10.default"] = activation<Activation::Log10>;
  t["aten.hardswish.default"] = activation<Activation::HardSwish>;
  t["aten.hardsigmoid.default"] = activation<Activation::HardSigmoid>;
  t["aten.clamp.default"] = clamp;
  t["aten.leaky_relu.default"] = leaky_relu;
  t["aten.gelu.default"] = gelu;
}

}  // namespace vkc::runtime::cpu
