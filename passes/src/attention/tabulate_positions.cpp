// tabulate-positions: under --max-seq-len N, what a decode step computes from input_pos alone is a
// function of one integer that takes N - S + 1 values (S tokens a call, input_pos in [0, N - S]):
// the rotary tables (Cast, a MatMul by the inverse frequencies, Concat, Cos and Sin: eight
// dependent dispatches a step, each a few microseconds on a GPU however small), learned position
// embeddings, onnxruntime's cos/sin caches gathered by position. Each such float value becomes one
// embedding lookup into a constant table of its values, evaluated here with the folders (the CPU
// reference kernels: the values the graph's own math gives, not a re-derivation of RoPE). Nothing
// is assumed of how the value depends on the position, so any exporter's form is covered as long
// as every node between input_pos and the value has a folder.
//
// Tabulated: the float values whose cone reads input_pos and constants only (ONNX nodes with a
// folder) and that something else reads (float masks of windowed attention too); integer and bool
// values (the positions themselves, which the cache operators read, bool masks) stay computed.
// One token a call: a table row per input_pos. S tokens a call, or a token count that resizes
// (--dim NAME=1..S): a row per position, read at input_pos + [0, S), for values whose axis 1 is
// the tokens' (taken before the views after them, which stay views of the lookup), and only where
// at every input_pos the value's rows are the previous input_pos's moved by one (checked at each:
// the value is then a function of the position alone); otherwise, for a fixed S, a row of all S
// per input_pos, and where the count resizes the value stays computed. Equal tables (one mask
// computed again in every layer) are one table read once. Tables are kept within max(8 MiB, 1/64
// of the graph's constants) in all; a value whose table does not fit stays computed (a note says so).
#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <map>
#include <set>

#include "../constants.h"
#include "../folding/evaluate.h"
#include "../folding/folders.h"
#include "vkc/passes/passes.h"

namespace vkc::passes {
namespace {

constexpr uint64_t kMinBudget = 8ull << 20;

// The values computed from `input_pos` and constants only, by ONNX nodes the folders can evaluate;
// what such nodes compute from constants alone (left by passes after folding) counts as constant,
// up to kMaxConstantLike elements, and goes into `constant`.
constexpr int64_t kMaxConstantLike = int64_t{1} << 24;
std::set<const ir::Value*> position_functions(const ir::Graph& g, const ir::Value* input_pos,
                                              std::set<const ir::Value*>& constant) {
  std::set<const ir::Value*> derived = {input_pos};
  for (const ir::Node* n : g.nodes()) {
    if (n->domain() != ir::kOnnxDomain || !folding::find_folder(n->op_type())) continue;
    bool reads_position = false, only = true;
    for (const ir::Value* in : n->inputs()) {
      if (!in || in->is_constant() || constant.count(in)) continue;
      if (derived.count(in)) reads_position = true;
      else only = false;
    }
    if (!only) continue;
    for (const ir::Value* o : n->outputs()) {
      if (!o) continue;
      if (reads_position) derived.insert(o);
      else if (o->type().known() && o->shape().is_static() && o->shape().numel() <= kMaxConstantLike) constant.insert(o);
    }
  }
  return derived;
}

bool is_view(const ir::Node* n) {
  for (const char* op : {"Unsqueeze", "Squeeze", "Reshape", "Flatten", "Identity"})
    if (n->is_onnx(op)) return true;
  return false;
}

// A table to make: value v read `width` elements a row.
struct Table {
  ir::Value* v = nullptr;
  bool by_position = false;  // a row per position, read at input_pos + [0, S); else a row per input_pos
  int64_t rows = 0, width = 0;
  std::vector<uint8_t> bytes;
  std::vector<uint8_t> last;  // (by position) the value at the previous input_pos
  bool ok = true;
  uint64_t row_bytes() const { return static_cast<uint64_t>(width) * ir::dtype_size(v->dtype()); }
};

// Fills the tables: each value evaluated at every input_pos p in [0, starts), S tokens a call.
// `known`: the constant-like values the tables read, computed once.
void fill(const std::vector<Table*>& tables, const ir::Value* input_pos, int64_t starts, int64_t s,
          std::map<const ir::Value*, kernels::HostTensor> known) {
  std::vector<const ir::Value*> targets;
  for (const Table* t : tables) targets.push_back(t->v);
  for (int64_t p = 0; p < starts; ++p) {
    known[input_pos] = kernels::HostTensor::of<int64_t>(ir::DType::Int64, {1}, {p});
    const auto values = folding::evaluate(targets, known);
    for (size_t i = 0; i < tables.size(); ++i) {
      Table& t = *tables[i];
      const auto& r = values[i];
      const uint64_t row = t.row_bytes(), all = t.v->shape().numel() * ir::dtype_size(t.v->dtype());
      if (!t.ok || !r || r->dtype != t.v->dtype() || r->data.size() != all) {
        t.ok = false;
        continue;
      }
      const uint8_t* data = r->data.data();
      if (!t.by_position) {
        std::memcpy(t.bytes.data() + p * row, data, row);
        continue;
      }
      // Rows 0 .. S-2 at p are rows 1 .. S-1 at p - 1: row q of the table is the first row at
      // input_pos q, and the last input_pos gives the table's last S rows.
      if (p > 0 && std::memcmp(t.last.data() + row, data, row * (s - 1)) != 0) {
        t.ok = false;
        continue;
      }
      t.last.assign(data, data + all);
      std::memcpy(t.bytes.data() + p * row, data, p == starts - 1 ? all : row);
    }
  }
}

// The rotary embeddings (apply_rotary_emb_hf, start_pos 0) whose cos and sin are views of lookups
// in tables of every position take the tables themselves and input_pos as their SymInt start_pos
// (the op reads rows start_pos + s, as ExecuTorch's own exports call it): no lookup a step.
// Returns how many.
size_t read_tables_at_input_pos(ir::Graph& g,
                                const std::map<const ir::Value*, std::pair<const Table*, ir::Value*>>& lookups,
                                ir::Value* input_pos, int64_t n, int64_t s) {
  // The table (a constant of n rows) a value views, or null.
  const auto table_of = [&](const ir::Value* v, int64_t cols) -> ir::Value* {
    if (!v || v->shape().sizes() != std::vector<int64_t>{s, cols}) return nullptr;
    while (v->producer() && !lookups.count(v) &&
           (is_view(v->producer()) || v->producer()->is(ir::kVulkanDomain, "aten.view_copy.default")))
      v = v->producer()->input(0);
    const auto it = lookups.find(v);
    if (it == lookups.end()) return nullptr;
    const Table& t = *it->second.first;
    return t.rows == n && t.width == cols && (t.by_position || s == 1) ? it->second.second : nullptr;
  };
  size_t rewritten = 0;
  for (ir::Node* r : g.nodes()) {
    if (!r->is(ir::kVulkanDomain, "et_vk.apply_rotary_emb_hf.default") || r->num_inputs() != 4 || !r->input(2) ||
        !r->input(2)->type().known() || r->input(2)->shape().rank() != 2)
      continue;
    const ir::Attribute* start = r->attr("start_pos");
    if (!start || !std::holds_alternative<int64_t>(*start) || std::get<int64_t>(*start) != 0) continue;
    const int64_t cols = r->input(2)->shape().sizes()[1];
    ir::Value* cos = table_of(r->input(2), cols);
    ir::Value* sin = table_of(r->input(3), cols);
    if (!cos || !sin) continue;
    r->set_inputs({r->input(0), r->input(1), cos, sin, input_pos});
    r->attrs().erase("start_pos");
    ++rewritten;
  }
  return rewritten;
}

}  // namespace

void tabulate_positions(ir::Graph& g, PassContext& ctx) {
  ir::Value* input_pos = ctx.kv_input_pos;
  const int64_t n = ctx.max_seq_len, s = ctx.kv_step_tokens;
  if (n <= 0 || !input_pos || s <= 0 || n < s) return;
  const int64_t starts = n - s + 1;  // the values input_pos takes
  std::set<const ir::Value*> constant;
  const std::set<const ir::Value*> derived = position_functions(g, input_pos, constant);

  // The frontier: float values of static shape that a node outside the set (or the graph's
  // outputs) reads.
  std::vector<ir::Value*> frontier;
  for (ir::Node* node : g.nodes())
    for (ir::Value* o : node->outputs()) {
      if (!o || !derived.count(o)) continue;
      if (!o->type().known() || !o->shape().is_static() || o->shape().numel() < 1) continue;
      if (o->dtype() != ir::DType::Float32 && o->dtype() != ir::DType::Float16) continue;
      bool read_outside = g.is_output(o);
      for (const ir::Node* u : g.users(o))
        for (const ir::Value* uo : u->outputs()) read_outside = read_outside || !uo || !derived.count(uo);
      if (read_outside) frontier.push_back(o);
    }
  if (frontier.empty()) return;

  std::vector<Table> tables;
  std::set<const ir::Value*> seen;
  for (ir::Value* v : frontier) {
    Table t;
    if (s > 1 || ctx.sizes_resize) {
      while (v->producer() && is_view(v->producer()) && derived.count(v->producer()->input(0)) &&
             ir::is_float(v->producer()->input(0)->dtype()) && v->producer()->input(0)->shape().is_static())
        v = v->producer()->input(0);
      const auto& d = v->shape().sizes();
      t.by_position = d.size() >= 2 && d[0] == 1 && d[1] == s && (!ctx.sizes_resize || d.size() == 3);
      if (!t.by_position && ctx.sizes_resize) continue;
    }
    if (!seen.insert(v).second) continue;
    t.v = v;
    tables.push_back(std::move(t));
  }

  uint64_t constant_bytes = 0;
  for (const ir::Value* v : g.values())
    if (v->is_constant()) constant_bytes += v->data().size();
  const uint64_t budget = std::max(kMinBudget, constant_bytes / 64);
  uint64_t used = 0;
  std::vector<std::string> left;
  // Sizes a table within the budget (rows per position or per input_pos); false past it.
  const auto take = [&](Table& t, bool by_position) {
    t.by_position = by_position;
    t.rows = by_position ? n : starts;
    t.width = by_position ? t.v->shape().numel() / s : t.v->shape().numel();
    const uint64_t bytes = static_cast<uint64_t>(t.rows) * t.row_bytes();
    if (used + bytes > budget) {
      left.push_back(fmt::format("'{}' ({} KiB)", t.v->name(), bytes >> 10));
      return false;
    }
    used += bytes;
    t.bytes.assign(bytes, 0);
    return true;
  };
  std::vector<Table*> chosen, again;
  for (Table& t : tables)
    if (take(t, t.by_position)) chosen.push_back(&t);
  // The constant-like values the derived nodes read, once.
  std::map<const ir::Value*, kernels::HostTensor> known;
  for (const ir::Node* node : g.nodes()) {
    bool reads_derived = false;
    for (const ir::Value* o : node->outputs()) reads_derived = reads_derived || (o && derived.count(o));
    if (!reads_derived) continue;
    for (const ir::Value* in : node->inputs())
      if (in && constant.count(in) && !known.count(in))
        if (auto v = folding::evaluate(in, {})) known.emplace(in, std::move(*v));
  }
  fill(chosen, input_pos, starts, s, known);
  // Not position by position with a fixed S: a row of all S per input_pos.
  for (Table* t : chosen)
    if (!t->ok && t->by_position && !ctx.sizes_resize) {
      used -= t->bytes.size();
      t->ok = true;
      if (take(*t, false)) again.push_back(t);
      else t->ok = false;
    }
  fill(again, input_pos, starts, s, known);
  if (!left.empty())
    ctx.notes.push_back(fmt::format("--max-seq-len: computed from input_pos at every call, their tables past the {} "
                                    "KiB kept for such tables: {}",
                                    budget >> 10, fmt::join(left, ", ")));

  // The positions input_pos + [0, S) the per-position tables are read at (as use-kv-cache makes
  // position ids: under --dim the same constant's prefix).
  ir::Value* positions = nullptr;
  const auto positions_at = [&](const ir::Node* at) {
    if (positions) return positions;
    ir::Value* col = add_onnx_node(g, at, "Reshape", {input_pos, add_i64_constant(g, g.unique_name("table_pos_shape"), {2}, {1, 1})},
                                   {ir::DType::Int64, ir::Shape::of({1, 1})});
    std::vector<int64_t> steps(s);
    for (int64_t i = 0; i < s; ++i) steps[i] = i;
    positions = add_onnx_node(g, at, "Add", {col, add_i64_constant(g, g.unique_name("table_pos_steps"), {1, s}, steps)},
                              {ir::DType::Int64, ir::Shape::of({1, s})});
    return positions;
  };

  // Equal tables (the same mask computed once per layer) become one table read once.
  size_t made = 0;
  uint64_t made_bytes = 0;
  std::vector<std::pair<const Table*, ir::Value*>> rows_made;  // (table, its lookup)
  std::map<const ir::Value*, std::pair<const Table*, ir::Value*>> lookups;  // lookup -> (table, its constant)
  for (Table* t : chosen) {
    if (!t->ok) continue;
    ir::Value* v = t->v;
    const ir::Node* at = v->producer();
    ir::Value* row = nullptr;
    for (const auto& [other, r] : rows_made)
      if (other->by_position == t->by_position && other->v->dtype() == v->dtype() && other->bytes == t->bytes) row = r;
    const std::vector<int64_t> looked_up = t->by_position ? std::vector<int64_t>{1, s, t->width} : std::vector<int64_t>{1, t->width};
    if (!row) {
      made_bytes += t->bytes.size();
      ir::Value* table = g.add_constant(g.unique_name(v->name() + (t->by_position ? "_per_position" : "_per_input_pos")),
                                        {v->dtype(), ir::Shape::of({t->rows, t->width})},
                                        ir::TensorData::owned(t->bytes));
      row = add_onnx_node(g, at, "Gather", {table, t->by_position ? positions_at(at) : input_pos},
                          {v->dtype(), ir::Shape::of(looked_up)}, {{"axis", int64_t{0}}});
      rows_made.emplace_back(t, row);
      lookups[row] = {t, table};
    }
    if (v->shape().sizes() != looked_up)
      row = add_onnx_node(g, at, "Reshape", {row, add_i64_constant(g, g.unique_name(v->name() + "_shape"),
                                                                   {static_cast<int64_t>(v->shape().rank())},
                                                                   v->shape().sizes())},
                          v->type());
    g.replace_all_uses(v, row);
    ++made;
  }
  if (made == 0) return;
  const size_t rotary = read_tables_at_input_pos(g, lookups, input_pos, n, s);
  g.topo_sort();
  eliminate_dead_code(g, ctx);
  ctx.notes.push_back(fmt::format("--max-seq-len: {} value(s) computed from input_pos alone (rotary tables, position "
                                  "embeddings, masks) are read from {} table(s) of their values ({} KiB){}",
                                  made, rows_made.size(), made_bytes >> 10,
                                  rotary ? fmt::format("; {} rotary embedding(s) read theirs at input_pos", rotary) : ""));
}

}  // namespace vkc::passes
