// assume-unpadded-mask: under --max-seq-len N, a decode step exported with an attention mask beside
// its tokens and positions (as optimum and the onnx-community models write decoders:
// attention_mask [batch, past + sequence], 1 where a position holds a token, 0 at padding) takes
// that mask as all ones, a constant, and the program no longer takes it. The program keeps one
// sequence (batch 1) whose cache holds every position up to the current one, so no position is
// padding: the mask's only effect is then the causal one that the graph computes beside it, which
// folding makes constant and use-kv-cache checks and drops. The mask is the integer or bool graph
// input of shape [1, N] (the past is fixed to N - S, so past + sequence is N; tokens and positions
// are [1, S], S < N); a note names it.
// The mask's length read as a value rather than a shape (Gather(Shape(mask), 1) compared with a
// number: LongRoPE exports pick their rotary tables by Greater(total length, original context)) is
// the total length of the sequence at each call, input_pos + S, not the cache's N: such comparisons
// read it from input_pos (made here when keep-cache-positions has not made it). Not in a program
// whose token count resizes (--dim NAME=1..S): there S is not a constant, and the length stays N.
#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "../constants.h"
#include "vkc/passes/passes.h"

namespace vkc::passes {
namespace {

bool is_comparison(const ir::Node* n) {
  for (const char* op : {"Greater", "Less", "GreaterOrEqual", "LessOrEqual", "Equal"})
    if (n->is_onnx(op)) return true;
  return false;
}

// The values that are `mask`'s length: Gather(Shape(mask), 1) and Shape(mask, start 1, end 2).
std::vector<ir::Value*> lengths_of(const ir::Graph& g, const ir::Value* mask) {
  std::vector<ir::Value*> out;
  for (ir::Node* shape : g.users(mask)) {
    if (!shape->is_onnx("Shape")) continue;
    const int64_t start = shape->attr_int("start", 0), end = shape->attr_int("end", 2);
    if (start == 1 && end == 2) out.push_back(shape->output(0));
    if (start != 0) continue;
    for (ir::Node* gather : g.users(shape->output(0))) {
      auto index = gather->is_onnx("Gather") ? constant_ints(gather->input(1)) : std::nullopt;
      if (index && index->size() == 1 && (*index)[0] == 1 && gather->attr_int("axis", 0) == 0)
        out.push_back(gather->output(0));
    }
  }
  return out;
}

// Comparisons of `mask`'s length read input_pos + `seq` instead; returns how many.
size_t follow_total_length(ir::Graph& g, PassContext& ctx, const ir::Value* mask, int64_t seq) {
  size_t replaced = 0;
  for (ir::Value* length : lengths_of(g, mask))
    for (ir::Node* c : g.users(length)) {
      if (!is_comparison(c) || !length->type().known() || !length->shape().is_static()) continue;
      if (!ctx.kv_input_pos) {
        ctx.kv_input_pos = g.add_value(g.unique_name("input_pos"), {ir::DType::Int64, ir::Shape::of({1})});
        g.inputs.push_back(ctx.kv_input_pos);
      }
      const auto shape = length->shape().sizes();
      ir::Value* pos = add_onnx_node(g, c, "Reshape",
                                     {ctx.kv_input_pos, add_i64_constant(g, g.unique_name("total_shape"),
                                                                        {static_cast<int64_t>(shape.size())}, shape)},
                                     {ir::DType::Int64, length->shape()});
      ir::Value* total = add_onnx_node(g, c, "Add", {pos, add_i64_constant(g, g.unique_name("total_steps"), shape, {seq})},
                                       {ir::DType::Int64, length->shape()});
      if (length->dtype() != ir::DType::Int64)
        total = add_onnx_node(g, c, "Cast", {total}, length->type(), {{"to", int64_t{length->dtype() == ir::DType::Int32 ? 6 : 7}}});
      for (size_t i = 0; i < c->num_inputs(); ++i)
        if (c->input(i) == length) c->set_input(i, total);
      ++replaced;
    }
  return replaced;
}

}  // namespace

void assume_unpadded_mask(ir::Graph& g, PassContext& ctx) {
  if (ctx.max_seq_len <= 0) return;
  const int64_t n = ctx.max_seq_len;
  // The encoder's length: dim 1 of a float [1, L, D] input (an encoder-decoder step's encoder
  // output, which its cross-attention reads).
  std::vector<int64_t> context_lengths;
  for (const ir::Value* in : g.inputs)
    if (in->type().known() && ir::is_float(in->dtype()) && in->shape().is_static() && in->shape().rank() == 3 &&
        in->shape().sizes()[0] == 1)
      context_lengths.push_back(in->shape().sizes()[1]);
  std::vector<ir::Value*> masks;
  for (ir::Value* in : g.inputs) {
    const ir::DType t = in->dtype();
    if (!in->type().known() || !(ir::is_integer(t) || t == ir::DType::Bool) || !in->shape().is_static()) continue;
    const auto sizes = in->shape().sizes();
    if (sizes.size() != 2 || sizes[0] != 1) continue;
    // [1, N]: the self-attention's mask; [1, L]: the encoder's (optimum's encoder_attention_mask),
    // all ones too for one unpadded input.
    const bool encoder_mask = std::find(context_lengths.begin(), context_lengths.end(), sizes[1]) != context_lengths.end();
    if (sizes[1] == n || encoder_mask) masks.push_back(in);
  }
  int64_t seq = 0;  // tokens per call: the [1, S] integer inputs beside the mask
  for (ir::Value* in : g.inputs)
    if (in->type().known() && ir::is_integer(in->dtype()) && in->shape().is_static() && in->shape().rank() == 2 &&
        in->shape().sizes()[1] < n)
      seq = in->shape().sizes()[1];
  for (ir::Value* mask : masks) {
    // (A program whose token count resizes would need S at run time: there the length stays N.)
    if (seq > 0 && !ctx.sizes_resize && mask->shape().sizes()[1] == n)
      if (const size_t k = follow_total_length(g, ctx, mask, seq))
        ctx.notes.push_back(fmt::format("--max-seq-len: {} comparison(s) of the length of '{}' (the total length, e.g. "
                                        "a LongRoPE export's choice of rotary tables) follow input_pos + {}",
                                        k, mask->name(), seq));
    const size_t width = ir::dtype_size(mask->dtype());
    const int64_t len = mask->shape().sizes()[1];
    std::vector<uint8_t> bytes(static_cast<size_t>(len) * width, 0);
    for (int64_t i = 0; i < len; ++i) bytes[static_cast<size_t>(i) * width] = 1;  // 1 in little-endian
    ir::Value* ones = g.add_constant(g.unique_name(mask->name() + "_ones"), mask->type(),
                                     ir::TensorData::owned(std::move(bytes)));
    g.replace_all_uses(mask, ones);
    g.inputs.erase(std::find(g.inputs.begin(), g.inputs.end(), mask));
    ctx.notes.push_back(fmt::format("--max-seq-len: input '{}' {} is taken as an attention mask of all ones (one "
                                    "sequence, no padding); the program does not take it",
                                    mask->name(), mask->type().str()));
  }
}

}  // namespace vkc::passes
