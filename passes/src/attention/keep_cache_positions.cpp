// keep-cache-positions: under --max-seq-len N, a decode step exported without position ids
// computes its positions from the cache length: [past, past + S) from the size of a past input
// (transformers' cache_position: Range(past, past + S), or Range(0, S) + past as TorchScript
// traces it), which the importer's fixed past (N - S) would fold to constants. In the program the
// cache's length is input_pos, so that value becomes input_pos + [0, S) (a new int64 [1] input,
// which use-kv-cache keeps as the program's second input) before folding; the positions, and what
// the graph computes from them (RoPE tables, learned position embeddings, the causal mask), follow
// it at run time. use-kv-cache then checks the mask computed from input_pos at every position it
// may take. Positions computed from the cache length in another way (OPT slices a cumulative sum
// of the mask at the past length) are refused. Graphs with a position-ids input are left alone.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "../constants.h"
#include "../folding/evaluate.h"
#include "vkc/passes/passes.h"

namespace vkc::passes {
namespace {

// Whether `v` is computed from the size of one of `pasts` (a Shape or Size of it in its cone).
bool reads_past_size(const ir::Value* v, const std::set<const ir::Value*>& pasts) {
  std::vector<const ir::Value*> todo = {v};
  std::set<const ir::Value*> seen;
  while (!todo.empty() && seen.size() < 256) {
    const ir::Value* x = todo.back();
    todo.pop_back();
    if (!x || !seen.insert(x).second) continue;
    const ir::Node* n = x->producer();
    if (!n) continue;
    if ((n->is_onnx("Shape") || n->is_onnx("Size")) && pasts.count(n->input(0))) return true;
    for (const ir::Value* in : n->inputs()) todo.push_back(in);
  }
  return false;
}

// What else reads a past input's size once the Ranges are replaced must be shape arithmetic or a
// mask (comparisons; use-kv-cache checks it): an integer computed from it that becomes a position
// (indices into a float table, or converted to float for RoPE angles) would be folded to the fixed
// past, as OPT's cumsum of the mask sliced at the past length is. Returns that node, or "".
std::string past_size_reaches_data(const ir::Graph& g, const std::set<const ir::Value*>& pasts) {
  std::set<const ir::Value*> derived;
  std::vector<const ir::Value*> todo;
  for (const ir::Node* n : g.nodes())
    if ((n->is_onnx("Shape") || n->is_onnx("Size")) && pasts.count(n->input(0))) todo.push_back(n->output(0));
  while (!todo.empty()) {
    const ir::Value* v = todo.back();
    todo.pop_back();
    if (!derived.insert(v).second) continue;
    for (const ir::Node* u : g.users(v)) {
      // (Before folding some dtypes are still unknown: those count as integers here.)
      const bool integer = v->dtype() != ir::DType::Bool && !ir::is_float(v->dtype());
      const bool lookup = u->is_onnx("Gather") && u->input(1) == v && ir::is_float(u->input(0)->dtype()) &&
                          !derived.count(u->input(0));
      const bool to_float = u->is_onnx("Cast") && ir::is_float(u->output(0)->dtype());
      if (integer && (lookup || to_float)) return fmt::format("node '{}' ({}) makes it a position", u->name(), u->op_type());
      // A size that only shapes data (a Reshape's or an Expand's target, a fill's shape) does not
      // make that data depend on the past's length.
      const bool shapes_only = u->input(0) != v && (u->is_onnx("Reshape") || u->is_onnx("Expand") || u->is_onnx("Tile") ||
                                                    u->is_onnx("Unsqueeze") || u->is_onnx("Squeeze"));
      if (shapes_only || u->is_onnx("ConstantOfShape")) continue;
      for (const ir::Value* o : u->outputs())
        if (o) todo.push_back(o);
    }
  }
  return {};
}

}  // namespace

void keep_cache_positions(ir::Graph& g, PassContext& ctx) {
  if (ctx.max_seq_len <= 0) return;
  // The past caches, before folding has made every shape static: rank-4 float inputs that a
  // Concat extends (directly or through a Slice); use-kv-cache checks them properly later.
  std::set<const ir::Value*> pasts;
  for (const ir::Value* in : g.inputs) {
    if (!in->type().known() || in->shape().rank() != 4 || !in->shape().is_static() || !ir::is_float(in->dtype())) continue;
    for (const ir::Node* u : g.users(in)) {
      const ir::Node* c = u->is_onnx("Slice") && !g.users(u->output(0)).empty() ? g.users(u->output(0)).front() : u;
      if (c->is_onnx("Concat") && c->num_inputs() == 2) pasts.insert(in);
    }
  }
  if (pasts.empty()) return;  // use-kv-cache says why
  // A position-ids input beside the tokens: nothing to do.
  size_t int_inputs = 0;
  for (const ir::Value* in : g.inputs)
    if (!pasts.count(in) && ir::is_integer(in->dtype()) && in->shape().rank() == 2) ++int_inputs;
  if (int_inputs != 1) return;
  const int64_t past = (*pasts.begin())->shape().sizes()[2];
  // The positions: an integer vector computed from a past input's size whose value is
  // [past, past + S): a Range(past, past + S) (dynamo) or Range(0, S) + past (TorchScript), possibly
  // with unit dims ([S, 1]: T5's query positions for its relative position buckets).
  // Evaluated with every input bound to zeros: ONNX inference left some shapes to be computed
  // (a Shape of the token embedding), and what is sought depends on sizes, not on data.
  // The caches are left out: their sizes are static (Shape reads no data), and zeros for each of
  // them would cost a cache's memory.
  std::map<const ir::Value*, kernels::HostTensor> zeros;
  for (const ir::Value* in : g.inputs)
    if (!pasts.count(in) && in->type().known() && in->shape().is_static() && in->shape().numel() <= (1 << 20))
      zeros.emplace(in, kernels::HostTensor::zeros(in->dtype(), in->shape().sizes()));
  std::vector<ir::Node*> found;
  for (ir::Node* n : g.nodes()) {
    if (!(n->is_onnx("Range") || n->is_onnx("Add")) || n->outputs().size() != 1 || !ir::is_integer(n->output(0)->dtype()))
      continue;
    if (!reads_past_size(n->output(0), pasts)) continue;
    const auto value = folding::evaluate(n->output(0), zeros);
    // A vector, or one with unit dims around it (T5 adds the past to an unsqueezed Range(0, S)).
    if (!value || value->shape.empty() || value->numel() < 1 ||
        std::count_if(value->shape.begin(), value->shape.end(), [](int64_t d) { return d != 1; }) > 1)
      continue;
    bool steps = true;
    for (int64_t i = 0; i < value->numel() && steps; ++i) steps = value->get_i(i) == past + i;
    if (steps) found.push_back(n);
  }
  for (ir::Node* r : found) {
    const std::vector<int64_t> shape = folding::evaluate(r->output(0), zeros)->shape;
    int64_t count = 1;
    for (int64_t d : shape) count *= d;
    if (!ctx.kv_input_pos) {
      ctx.kv_input_pos = g.add_value(g.unique_name("input_pos"), {ir::DType::Int64, ir::Shape::of({1})});
      g.inputs.push_back(ctx.kv_input_pos);
    }
    std::vector<int64_t> steps(count);
    for (int64_t i = 0; i < count; ++i) steps[i] = i;
    ir::Value* pos = add_onnx_node(g, r, "Add", {ctx.kv_input_pos, add_i64_constant(g, g.unique_name("cache_steps"), shape, steps)},
                                   {ir::DType::Int64, ir::Shape::of(shape)});
    if (r->output(0)->dtype() != ir::DType::Int64)
      pos = add_onnx_node(g, r, "Cast", {pos}, {r->output(0)->dtype(), ir::Shape::of(shape)},
                          {{"to", static_cast<int64_t>(r->output(0)->dtype() == ir::DType::Int32 ? 6 : 7)}});
    g.replace_all_uses(r->output(0), pos);
  }
  if (found.empty()) return;  // (input_pos may exist already: assume-unpadded-mask's total length)
  if (std::string why = past_size_reaches_data(g, pasts); !why.empty())
    throw PassError("--max-seq-len: the graph computes positions from the cache length other than as [past, past + "
                    "S) (" + why + "), which one program cannot follow: export with position_ids");
  ctx.notes.push_back("--max-seq-len: the graph computes its positions from the cache length; they follow input_pos");
}

}  // namespace vkc::passes
