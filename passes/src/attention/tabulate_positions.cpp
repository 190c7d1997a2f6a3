// tabulate-positions: under --max-seq-len N, what a decode step computes from input_pos alone is a
// function of one integer that takes N - S + 1 values (S tokens a call, input_pos in [0, N - S]):
// the rotary tables (Cast, a MatMul by the inverse frequencies, Concat, Cos and Sin: eight
// dependent dispatches a step, each a few microseconds on a GPU however small), learned position
// embeddings, onnxruntime's cos/sin caches gathered by position. Each such float value becomes one
// embedding lookup into a constant table of its values at every position input_pos may take,
// evaluated here with the folders (the CPU reference kernels: the values the graph's own math gives,
// not a re-derivation of RoPE). Nothing is assumed of how the value depends on the position, so any
// exporter's form is covered as long as every node between input_pos and the value has a folder.
//
// Tabulated: the float values whose cone reads input_pos and constants only (ONNX nodes with a
// folder) and that something else reads (float masks of windowed attention too); integer and bool
// values (the positions themselves, which the cache operators read, bool masks) stay computed.
// Equal tables (one mask computed again in every layer) are one table read once. Tables are kept
// within max(8 MiB, 1/64 of the graph's constants) in all; a value whose table does not fit stays
// computed (a note says so), as does every value of a program whose token count resizes (--dim:
// S is not one number).
#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <set>

#include "../constants.h"
#include "../folding/evaluate.h"
#include "../folding/folders.h"
#include "vkc/passes/passes.h"

namespace vkc::passes {
namespace {

constexpr uint64_t kMinBudget = 8ull << 20;

// The values computed from `input_pos` and constants only, by ONNX nodes the folders can evaluate.
std::set<const ir::Value*> position_functions(const ir::Graph& g, const ir::Value* input_pos) {
  std::set<const ir::Value*> derived = {input_pos};
  for (const ir::Node* n : g.nodes()) {
    if (n->domain() != ir::kOnnxDomain || !folding::find_folder(n->op_type())) continue;
    bool reads_position = false, only = true;
    for (const ir::Value* in : n->inputs()) {
      if (!in || in->is_constant()) continue;
      if (derived.count(in)) reads_position = true;
      else only = false;
    }
    if (!reads_position || !only) continue;
    for (const ir::Value* o : n->outputs())
      if (o) derived.insert(o);
  }
  return derived;
}

}  // namespace

void tabulate_positions(ir::Graph& g, PassContext& ctx) {
  ir::Value* input_pos = ctx.kv_input_pos;
  if (ctx.max_seq_len <= 0 || ctx.sizes_resize || !input_pos || ctx.kv_step_tokens <= 0) return;
  const int64_t positions = ctx.max_seq_len - ctx.kv_step_tokens + 1;
  if (positions < 1) return;
  const std::set<const ir::Value*> derived = position_functions(g, input_pos);

  // The frontier: float values of static shape that a node outside the set (or the graph's
  // outputs) reads.
  std::vector<ir::Value*> frontier;
  for (ir::Node* n : g.nodes())
    for (ir::Value* o : n->outputs()) {
      if (!o || !derived.count(o)) continue;
      if (!o->type().known() || !o->shape().is_static() || o->shape().numel() < 1) continue;
      if (o->dtype() != ir::DType::Float32 && o->dtype() != ir::DType::Float16) continue;
      bool read_outside = g.is_output(o);
      for (const ir::Node* u : g.users(o))
        for (const ir::Value* uo : u->outputs()) read_outside = read_outside || !uo || !derived.count(uo);
      if (read_outside) frontier.push_back(o);
    }
  if (frontier.empty()) return;

  uint64_t constant_bytes = 0;
  for (const ir::Value* v : g.values())
    if (v->is_constant()) constant_bytes += v->data().size();
  uint64_t budget = std::max(kMinBudget, constant_bytes / 64), used = 0;
  std::vector<ir::Value*> chosen;
  std::vector<std::string> left;
  for (ir::Value* v : frontier) {
    const uint64_t bytes = static_cast<uint64_t>(positions) * v->shape().numel() * ir::dtype_size(v->dtype());
    if (used + bytes > budget) {
      left.push_back(fmt::format("'{}' ({} KiB)", v->name(), bytes >> 10));
      continue;
    }
    used += bytes;
    chosen.push_back(v);
  }
  if (!left.empty())
    ctx.notes.push_back(fmt::format("--max-seq-len: computed from input_pos at every call, their tables over {} "
                                    "positions past the {} KiB kept for such tables: {}",
                                    positions, budget >> 10, fmt::join(left, ", ")));
  if (chosen.empty()) return;

  // Every table row: the chosen values evaluated at one position.
  std::vector<std::vector<uint8_t>> tables(chosen.size());
  std::vector<uint64_t> row_bytes(chosen.size());
  for (size_t i = 0; i < chosen.size(); ++i) {
    row_bytes[i] = chosen[i]->shape().numel() * ir::dtype_size(chosen[i]->dtype());
    tables[i].resize(row_bytes[i] * positions);
  }
  std::vector<const ir::Value*> targets(chosen.begin(), chosen.end());
  std::vector<bool> ok(chosen.size(), true);
  for (int64_t p = 0; p < positions; ++p) {
    const auto rows = folding::evaluate(targets, {{input_pos, kernels::HostTensor::of<int64_t>(ir::DType::Int64, {1}, {p})}});
    for (size_t i = 0; i < chosen.size(); ++i) {
      if (!ok[i]) continue;
      const auto& r = rows[i];
      if (!r || r->dtype != chosen[i]->dtype() || r->data.size() != row_bytes[i]) {
        ok[i] = false;
        continue;
      }
      std::memcpy(tables[i].data() + p * row_bytes[i], r->data.data(), row_bytes[i]);
    }
  }

  // Equal tables (the same mask computed once per layer) become one table read once.
  size_t made = 0;
  uint64_t made_bytes = 0;
  std::vector<std::pair<size_t, ir::Value*>> rows_made;  // (chosen index, its row)
  for (size_t i = 0; i < chosen.size(); ++i) {
    if (!ok[i]) continue;
    ir::Value* v = chosen[i];
    const ir::Node* at = v->producer();
    const int64_t width = v->shape().numel();
    ir::Value* row = nullptr;
    for (const auto& [j, r] : rows_made)
      if (chosen[j]->dtype() == v->dtype() && tables[j] == tables[i]) row = r;
    if (!row) {
      made_bytes += tables[i].size();
      ir::Value* table = g.add_constant(g.unique_name(v->name() + "_by_position"),
                                        {v->dtype(), ir::Shape::of({positions, width})},
                                        ir::TensorData::owned(tables[i]));
      row = add_onnx_node(g, at, "Gather", {table, input_pos}, {v->dtype(), ir::Shape::of({1, width})},
                          {{"axis", int64_t{0}}});
      rows_made.emplace_back(i, row);
    }
    if (v->shape().sizes() != std::vector<int64_t>{1, width})
      row = add_onnx_node(g, at, "Reshape", {row, add_i64_constant(g, g.unique_name(v->name() + "_shape"),
                                                                   {static_cast<int64_t>(v->shape().rank())},
                                                                   v->shape().sizes())},
                          v->type());
    g.replace_all_uses(v, row);
    ++made;
  }
  if (made == 0) return;
  g.topo_sort();
  eliminate_dead_code(g, ctx);
  ctx.notes.push_back(fmt::format("--max-seq-len: {} value(s) computed from input_pos alone (rotary tables, position "
                                  "embeddings, masks) are read from {} table(s) of their values at its {} positions "
                                  "({} KiB)",
                                  made, rows_made.size(), positions, made_bytes >> 10));
}

}  // namespace vkc::passes
