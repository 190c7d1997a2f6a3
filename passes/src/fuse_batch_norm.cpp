// Conv(X, W, B) -> BatchNormalization(scale, bias, mean, var, eps) becomes
// Conv(X, W', B') with W'[o] = W[o] * s[o], B'[o] = (B[o] - mean[o]) * s[o] + bias[o],
// s = scale / sqrt(var + eps). Only when every parameter is a float constant and
// the conv output feeds nothing but the BatchNormalization.
#include <cmath>

#include "constants.h"
#include "vkc/passes/passes.h"

namespace vkc::passes {
namespace {

bool fold_into_conv(ir::Graph& g, ir::Node* bn, ir::Node* conv) {
  auto w = constant_floats(conv->input(1));
  if (!w || !conv->input(1)->shape().is_static() || conv->input(1)->dtype() != ir::DType::Float32) return false;
  const int64_t out_channels = conv->input(1)->shape().sizes()[0];
  std::vector<float> b(out_channels, 0.0f);
  if (conv->input(2)) {
    auto cb = constant_floats(conv->input(2));
    if (!cb || static_cast<int64_t>(cb->size()) != out_channels) return false;
    b = *cb;
  }
  auto scale = constant_floats(bn->input(1));
  auto bias = constant_floats(bn->input(2));
  auto mean = constant_floats(bn->input(3));
  auto var = constant_floats(bn->input(4));
  for (const auto* p : {&scale, &bias, &mean, &var})
    if (!*p || static_cast<int64_t>((*p)->size()) != out_channels) return false;
  const double eps = bn->attr_float("epsilon", 1e-5);

  const size_t per_channel = w->size() / out_channels;
  for (int64_t o = 0; o < out_channels; ++o) {
    const double s = (*scale)[o] / std::sqrt(static_cast<double>((*var)[o]) + eps);
    for (size_t i = 0; i < per_channel; ++i) (*w)[o * per_channel + i] = static_cast<float>((*w)[o * per_channel + i] * s);
    b[o] = static_cast<float>((b[o] - (*mean)[o]) * s + (*bias)[o]);
  }
  conv->set_input(1, add_f32_constant(g, conv->input(1)->name() + "_bn", conv->input(1)->shape().sizes(), *w));
  conv->set_input(2, add_f32_constant(g, conv->name() + "_bias_bn", {out_channels}, b));
  g.replace_all_uses(bn->output(0), conv->output(0));
  g.remove_node(bn);
  return true;
}

}  // namespace

void fuse_batch_norm(ir::Graph& g, PassContext&) {
  for (ir::Node* bn : g.nodes()) {
    if (!bn->is_onnx("BatchNormalization") || bn->outputs().size() != 1) continue;
    ir::Node* conv = bn->input(0) ? bn->input(0)->producer() : nullptr;
    if (!conv || !conv->is_onnx("Conv")) continue;
    if (g.users(conv->output(0)).size() != 1 || g.is_output(conv->output(0))) continue;
    fold_into_conv(g, bn, conv);
  }
}

}  // namespace vkc::passes
