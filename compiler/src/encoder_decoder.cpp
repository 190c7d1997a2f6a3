#include "encoder_decoder.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "vkc/compiler/driver.h"

namespace vkc::compiler::detail {
namespace {

// The encoder output each context input reads: by name when every name is an output's, else in order.
std::vector<ir::Value*> bind_context(const ir::Graph& encoder, const std::vector<ir::Value*>& context) {
  if (context.size() != encoder.outputs.size())
    throw CompileError(fmt::format("--encoder: the decoder step takes {} context input(s) (float inputs beside the "
                                   "tokens and cache), the encoder gives {} output(s)",
                                   context.size(), encoder.outputs.size()));
  std::vector<ir::Value*> bound;
  for (const ir::Value* c : context)
    for (ir::Value* o : encoder.outputs)
      if (o->name() == c->name()) bound.push_back(o);
  if (bound.size() != context.size()) bound = encoder.outputs;
  for (size_t i = 0; i < context.size(); ++i)
    if (bound[i]->type() != context[i]->type())
      throw CompileError(fmt::format("--encoder: the decoder step's input '{}' {} does not match the encoder's output "
                                     "'{}' {}",
                                     context[i]->name(), context[i]->type().str(), bound[i]->name(),
                                     bound[i]->type().str()));
  return bound;
}

}  // namespace

Hoisted hoist_context(ir::Graph& encoder, ir::Graph& decoder) {
  if (decoder.inputs.size() < 2)
    throw CompileError("--encoder: the decoder step has no tokens and input_pos inputs (compile it with --max-seq-len N)");
  const std::vector<ir::Value*> context(decoder.inputs.begin() + 2, decoder.inputs.end());
  const std::vector<ir::Value*> outputs = bind_context(encoder, context);
  Hoisted h;
  for (size_t i = 0; i < context.size(); ++i)
    h.bound += fmt::format("{}'{}' <- '{}'", h.bound.empty() ? "" : ", ", context[i]->name(), outputs[i]->name());

  // The cone: nodes whose inputs are all context values or constants, at least one of them context.
  std::map<const ir::Value*, ir::Value*> in_encoder;  // decoder value -> its encoder copy
  for (size_t i = 0; i < context.size(); ++i) in_encoder[context[i]] = outputs[i];
  std::vector<ir::Node*> cone;
  std::set<const ir::Node*> in_cone;
  for (ir::Node* n : decoder.nodes()) {
    bool reads_context = false, movable = !n->outputs().empty();
    for (const ir::Value* v : n->inputs()) {
      if (!v || v->is_constant()) continue;
      if (in_encoder.count(v)) reads_context = true;
      else movable = false;
    }
    if (!reads_context || !movable) continue;
    // A copy in the encoder: constants shared (their data is reference-counted), outputs new.
    std::vector<ir::Value*> ins;
    for (ir::Value* v : n->inputs()) {
      if (!v) ins.push_back(nullptr);
      else if (v->is_constant()) {
        auto it = in_encoder.find(v);
        if (it == in_encoder.end())
          it = in_encoder.emplace(v, encoder.add_constant(encoder.unique_name(v->name()), v->type(), v->data())).first;
        ins.push_back(it->second);
      } else {
        ins.push_back(in_encoder.at(v));
      }
    }
    std::vector<ir::Value*> outs;
    for (ir::Value* o : n->outputs()) {
      outs.push_back(encoder.add_value(encoder.unique_name(o->name()), o->type()));
      in_encoder[o] = outs.back();
    }
    ir::Node* copy = encoder.add_node_with_outputs(n->domain(), n->op_type(), ins, outs, encoder.unique_name(n->name()));
    copy->attrs() = n->attrs();
    copy->set_opset(n->opset());
    cone.push_back(n);
    in_cone.insert(n);
  }
  h.nodes = cone.size();

  // The values the rest of the decoder reads from the cone (or the context inputs themselves)
  // become the encoder's outputs and the decoder's new context inputs, in decoder order.
  std::vector<ir::Value*> crossing;
  std::set<const ir::Value*> seen;
  auto crosses = [&](ir::Value* v) {
    if (decoder.is_output(v)) return true;
    for (const ir::Node* u : decoder.users(v))
      if (!in_cone.count(u)) return true;
    return false;
  };
  for (ir::Value* c : context)
    if (crosses(c) && seen.insert(c).second) crossing.push_back(c);
  for (ir::Node* n : cone)
    for (ir::Value* o : n->outputs())
      if (crosses(o) && seen.insert(o).second) crossing.push_back(o);

  std::vector<ir::Value*> enc_outputs, dec_inputs(decoder.inputs.begin(), decoder.inputs.begin() + 2);
  for (ir::Value* v : crossing) {
    enc_outputs.push_back(in_encoder.at(v));
    if (std::find(context.begin(), context.end(), v) != context.end()) {
      dec_inputs.push_back(v);
      continue;
    }
    ir::Value* input = decoder.add_value(decoder.unique_name(v->name() + "_in"), v->type());
    decoder.replace_all_uses(v, input);
    dec_inputs.push_back(input);
  }
  for (auto it = cone.rbegin(); it != cone.rend(); ++it) decoder.remove_node(*it);
  decoder.inputs = std::move(dec_inputs);
  decoder.compact();
  encoder.outputs = std::move(enc_outputs);
  // Constants copied into the encoder may point into what keeps the decoder's model alive.
  encoder.keepalive.insert(encoder.keepalive.end(), decoder.keepalive.begin(), decoder.keepalive.end());
  encoder.compact();
  h.context = crossing.size();
  return h;
}

}  // namespace vkc::compiler::detail
