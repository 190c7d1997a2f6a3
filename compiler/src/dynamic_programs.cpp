#include "dynamic_programs.h"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <map>
#include <optional>
#include <cstring>
#include <set>
#include <span>
#include <tuple>

#include "vkc/compiler/driver.h"
#include "vkc/serializer/dynamic_dims.h"
#include "vkc/serializer/vk_payload.h"

namespace vkc::compiler::detail {
namespace {

using serializer::VkGraph;
using serializer::VkTensor;

// Where an integer of a program lies, for the fit and for the rewrite of the first probe.
struct Loc {
  enum Kind { Fixed, PlanTensorDim, VkTensorDim, VkInt, VkListItem, ConstKey, ConstDim } kind = Fixed;
  size_t plan = 0;
  int delegate = -1;
  int32_t value = -1;
  int32_t sub = -1;  // the dim or list item
};

// The text of a value that must not change with the dims (its kind is compared apart).
std::string text_of(double x) { return fmt::format("{:a}", x); }
std::string text_of(bool b) { return b ? "true" : "false"; }
std::string text_of(int64_t i) { return std::to_string(i); }
std::string text_of(const std::string& s) { return s; }
std::string text_of(const serializer::VkSymInt& s) { return fmt::format("symint {}", s.value); }
template <typename List>
  requires requires(const List& l) { l.items; }
std::string text_of(const List& l) {
  return fmt::format("{}", fmt::join(l.items, ","));
}
std::string text_of(const auto&) { return ""; }  // null, and tensors (walked apart)

// One element of a program's walk: an integer that may follow the dims, or a piece of structure
// (`fixed`) that must not change with them.
struct Item {
  Loc loc;
  int64_t v = 0;
  std::string fixed;
};

struct Walk {
  std::vector<Item> items;
  std::vector<std::vector<VkGraph>> graphs;  // [plan][delegate]

  void fixed(const Loc& l, std::string s) { items.push_back({{Loc::Fixed, l.plan, l.delegate, l.value, l.sub}, 0, std::move(s)}); }
  void num(const Loc& l, int64_t v) { items.push_back({l, v, {}}); }

  void graph(const VkGraph& g, size_t p, int d) {
    const Loc here{Loc::Fixed, p, d};
    fixed(here, fmt::format("{} operator calls, {} values, in [{}] out [{}] (v{} overrides {} {} shaders {} constants {})",
                            g.chain.size(), g.values.size(), fmt::join(g.input_ids, ","), fmt::join(g.output_ids, ","),
                            g.version,
                            static_cast<int>(g.storage_type_override), static_cast<int>(g.memory_layout_override),
                            g.shaders.size(), g.constants.size()));
    for (const auto& s : g.shaders) fixed(here, "shader " + s.named_key);
    for (const auto& c : g.chain) fixed(here, fmt::format("node {} {}({})", c.node_id, c.name, fmt::join(c.args, ",")));
    for (size_t id = 0; id < g.values.size(); ++id) {
      const auto& v = g.values[id];
      const Loc at{Loc::Fixed, p, d, static_cast<int32_t>(id)};
      fixed(at, fmt::format("kind {}", v.index()));
      if (const auto* t = std::get_if<VkTensor>(&v)) {
        fixed(at, fmt::format("tensor {} rank {} const {} {} {} {}", static_cast<int>(t->dtype), t->dims.size(),
                              t->constant_id, static_cast<int>(t->storage), static_cast<int>(t->layout),
                              static_cast<int>(t->staging)));
        if (t->constant_id >= 0) {
          // A constant may change with the dims as a prefix of the largest one (checked by the merge).
          const auto& c = g.constants.at(t->constant_id);
          items.push_back({{Loc::ConstKey, p, d, static_cast<int32_t>(id)}, 0, c.offset == UINT64_MAX ? c.named_key : "bytes"});
          for (size_t k = 0; k < t->dims.size(); ++k)
            num({Loc::ConstDim, p, d, static_cast<int32_t>(id), static_cast<int32_t>(k)}, t->dims[k]);
          continue;
        }
        for (size_t k = 0; k < t->dims.size(); ++k)
          num({Loc::VkTensorDim, p, d, static_cast<int32_t>(id), static_cast<int32_t>(k)}, t->dims[k]);
      } else if (const auto* i = std::get_if<int64_t>(&v)) {
        num({Loc::VkInt, p, d, static_cast<int32_t>(id)}, *i);
      } else if (const auto* l = std::get_if<serializer::VkIntList>(&v)) {
        fixed(at, fmt::format("int list of {}", l->items.size()));
        for (size_t k = 0; k < l->items.size(); ++k)
          num({Loc::VkListItem, p, d, static_cast<int32_t>(id), static_cast<int32_t>(k)}, l->items[k]);
      } else {
        fixed(at, std::visit([](const auto& x) { return text_of(x); }, v));
      }
    }
  }

  void program(const serializer::Program& prog) {
    for (size_t p = 0; p < prog.plans.size(); ++p) {
      const auto& plan = prog.plans[p];
      const Loc here{Loc::Fixed, p};
      fixed(here, fmt::format("plan {} in [{}] out [{}] values {}", plan.name, fmt::join(plan.inputs, ","),
                              fmt::join(plan.outputs, ","), plan.values.size()));
      for (const auto& op : plan.operators) fixed(here, op.name + "." + op.overload);
      for (const auto& ins : plan.instructions)
        std::visit([&](const auto& i) { fixed(here, describe_instruction(i)); }, ins);
      for (size_t id = 0; id < plan.values.size(); ++id) {
        const auto& v = plan.values[id];
        const Loc at{Loc::Fixed, p, -1, static_cast<int32_t>(id)};
        fixed(at, fmt::format("kind {}", v.index()));
        if (const auto* t = std::get_if<serializer::EtTensor>(&v)) {
          fixed(at, fmt::format("tensor {} rank {} order {} buffer {}", static_cast<int>(t->scalar_type), t->sizes.size(),
                                fmt::join(t->dim_order, ","), t->data_buffer_idx));
          for (size_t k = 0; k < t->sizes.size(); ++k)
            num({Loc::PlanTensorDim, p, -1, static_cast<int32_t>(id), static_cast<int32_t>(k)}, t->sizes[k]);
        } else {
          fixed(at, std::visit([](const auto& x) { return text_of(x); }, v));
        }
      }
      graphs.emplace_back();
      for (size_t d = 0; d < plan.delegates.size(); ++d) {
        const auto& del = plan.delegates[d];
        fixed(here, "delegate " + del.id);
        for (const auto& s : del.compile_specs) fixed(here, fmt::format("spec {} {}", s.key, fmt::join(s.value, ",")));
        graphs.back().push_back(serializer::read_vk_payload(del.processed.bytes()).graph);
        graph(graphs.back().back(), p, static_cast<int>(d));
      }
    }
  }

  static std::string describe_instruction(const serializer::KernelCall& k) {
    return fmt::format("kernel {}({})", k.op_index, fmt::join(k.args, ","));
  }
  static std::string describe_instruction(const serializer::DelegateCall& c) {
    return fmt::format("delegate {}({})", c.delegate_index, fmt::join(c.args, ","));
  }
  static std::string describe_instruction(const serializer::MoveCall& m) { return fmt::format("move {} {}", m.from, m.to); }
  static std::string describe_instruction(const serializer::JumpFalseCall& j) {
    return fmt::format("jump {} {}", j.cond, j.destination);
  }
  static std::string describe_instruction(const serializer::FreeCall& f) { return fmt::format("free {}", f.value); }
};

// value = offset + sum(coeffs[k] * dim k)
struct Affine {
  int64_t offset = 0;
  std::vector<int64_t> coeffs;
  bool constant() const { return std::all_of(coeffs.begin(), coeffs.end(), [](int64_t c) { return c == 0; }); }
  bool unit(size_t k) const {
    if (offset != 0) return false;
    for (size_t j = 0; j < coeffs.size(); ++j)
      if (coeffs[j] != (j == k ? 1 : 0)) return false;
    return true;
  }
  int64_t at(const std::vector<int64_t>& s) const {
    int64_t v = offset;
    for (size_t k = 0; k < s.size(); ++k) v += coeffs[k] * s[k];
    return v;
  }
  auto operator<=>(const Affine&) const = default;
};

// Whether a probe sets some dim to 1 (passes treat size-1 dims as the views they are).
bool ones(const DimSizes& sizes) {
  return std::any_of(sizes.begin(), sizes.end(), [](const auto& kv) { return kv.second == 1; });
}

std::vector<int64_t> values_of(const DimSizes& sizes, const std::vector<DimRange>& ranges) {
  std::vector<int64_t> s;
  for (const auto& r : ranges) s.push_back(sizes.at(r.name));
  return s;
}

// Where a VkGraph value is used, for messages: "node 12 (aten.view_copy.default)".
std::string user_of(const VkGraph& g, int32_t v) {
  for (const auto& c : g.chain)
    for (int32_t a : c.args) {
      bool uses = a == v;
      if (a >= 0 && static_cast<size_t>(a) < g.values.size())
        if (const auto* l = std::get_if<serializer::VkValueList>(&g.values[a]))
          uses = uses || std::find(l->items.begin(), l->items.end(), v) != l->items.end();
      if (uses) return fmt::format(" (node {}, {})", c.node_id, c.name);
    }
  return "";
}

std::string where(const Loc& l, const Walk& w) {
  if (l.delegate < 0) return fmt::format("plan value {}", l.value);
  if (l.value < 0) return fmt::format("delegate {}", l.delegate);
  return fmt::format("delegate {} value {}{}", l.delegate, l.value,
                     user_of(w.graphs.at(l.plan).at(l.delegate), l.value));
}

// The SymInts of one delegate's chain head: the dims read from the inputs, and each affine
// expression of them built from mul and add.
class SymIntBuilder {
 public:
  SymIntBuilder(VkGraph& g, std::vector<int64_t> max) : g_(g), max_(std::move(max)) {
    for (const auto& c : g.chain) next_node_ = std::max(next_node_, c.node_id + 1);
  }

  void set_source(size_t k, int32_t input_value, uint32_t dim) { sources_[k] = {input_value, dim}; }

  int32_t expr(const Affine& a) {
    if (auto it = made_.find(a); it != made_.end()) return it->second;
    int32_t acc = -1;
    for (size_t k = 0; k < a.coeffs.size(); ++k) {
      if (a.coeffs[k] == 0) continue;
      Affine term;
      term.coeffs.assign(a.coeffs.size(), 0);
      term.coeffs[k] = a.coeffs[k];
      int32_t t = symbol(k);
      if (a.coeffs[k] != 1) t = op("mul", t, constant(a.coeffs[k]), term);
      if (acc < 0) {
        acc = t;
      } else {
        Affine sum;
        sum.coeffs.assign(a.coeffs.size(), 0);
        for (size_t j = 0; j <= k; ++j) sum.coeffs[j] = a.coeffs[j];
        acc = op("add", acc, t, sum);
      }
    }
    if (a.offset != 0) acc = op("add", acc, constant(a.offset), a);
    made_[a] = acc;
    return acc;
  }

  int32_t add_value(serializer::VkValue v) {
    g_.values.push_back(std::move(v));
    return static_cast<int32_t>(g_.values.size() - 1);
  }

  std::vector<serializer::VkOperatorCall> head;
  uint32_t next_node() { return next_node_++; }

 private:
  int32_t symbol(size_t k) {
    Affine a;
    a.coeffs.assign(max_.size(), 0);
    a.coeffs[k] = 1;
    if (auto it = made_.find(a); it != made_.end()) return it->second;
    const auto [input, dim] = sources_.at(k);
    const int32_t dim_value = add_value(int64_t{dim});
    const int32_t out = add_value(serializer::VkSymInt{static_cast<int32_t>(max_[k])});
    head.push_back({next_node_++, "sym_size.int", {input, dim_value, out}});
    return made_[a] = out;
  }
  int32_t constant(int64_t c) { return add_value(serializer::VkSymInt{static_cast<int32_t>(c)}); }
  int32_t op(const char* name, int32_t a, int32_t b, const Affine& result) {
    const int32_t out = add_value(serializer::VkSymInt{static_cast<int32_t>(result.at(max_))});
    head.push_back({next_node_++, name, {a, b, out}});
    return out;
  }

  VkGraph& g_;
  std::vector<int64_t> max_;
  std::map<size_t, std::pair<int32_t, uint32_t>> sources_;
  std::map<Affine, int32_t> made_;
  uint32_t next_node_ = 0;
};

// Every reference to value `from` in the chain (arguments and value-list items) now names `to`.
void redirect(VkGraph& g, int32_t from, int32_t to) {
  for (auto& c : g.chain)
    for (int32_t& a : c.args) {
      if (a == from) a = to;
      else if (a >= 0 && static_cast<size_t>(a) < g.values.size())
        if (auto* l = std::get_if<serializer::VkValueList>(&g.values[a]))
          for (int32_t& x : l->items)
            if (x == from) x = to;
    }
}

// Program named data by key.
const ir::TensorData* named(const serializer::Program& prog, const std::string& key) {
  for (const auto& nd : prog.named_data)
    if (nd.key == key) return &nd.data;
  return nullptr;
}

const VkTensor& tensor_at(const Walk& w, const Loc& l) {
  return std::get<VkTensor>(w.graphs.at(l.plan).at(l.delegate).values.at(l.value));
}

// Whether `small` (dims `sd`) is `big` (dims `bd`, the same rank) cut to the first sd[k] of each dim.
bool is_prefix(std::span<const uint8_t> big, const std::vector<uint32_t>& bd, std::span<const uint8_t> small,
               const std::vector<uint32_t>& sd) {
  if (bd.size() != sd.size()) return false;
  uint64_t bn = 1, sn = 1;
  for (size_t k = 0; k < bd.size(); ++k) {
    if (sd[k] > bd[k]) return false;
    bn *= bd[k], sn *= sd[k];
  }
  if (bn == 0 || big.size() % bn != 0) return false;
  const uint64_t elem = big.size() / bn;
  if (small.size() != sn * elem) return false;
  if (sn == 0) return true;
  // Rows of the last dim at a time.
  const size_t rank = bd.size();
  const uint64_t row = (rank ? sd[rank - 1] : 1) * elem;
  std::vector<uint64_t> index(rank, 0);
  for (uint64_t at = 0; at < sn * elem; at += row) {
    uint64_t off = 0;
    for (size_t k = 0; k < rank; ++k) off = off * bd[k] + index[k];
    if (std::memcmp(big.data() + off * elem, small.data() + at, row) != 0) return false;
    for (size_t k = rank - 1; k-- > 0;) {  // next row: the dims before the last, odometer-style
      if (++index[k] < sd[k]) break;
      index[k] = 0;
    }
  }
  return true;
}

}  // namespace

std::vector<DimSizes> probe_sizes(const std::vector<DimRange>& ranges) {
  DimSizes top;
  for (const auto& r : ranges) top[r.name] = r.max;
  std::vector<DimSizes> probes{top};
  for (const auto& r : ranges) {
    DimSizes p = top;
    p[r.name] = r.max - 1;
    probes.push_back(p);
  }
  DimSizes bottom;
  bool repeats = true;
  for (const auto& r : ranges) {
    bottom[r.name] = r.min;
    repeats = repeats && r.min == r.max - 1;
  }
  if (!(repeats && ranges.size() == 1)) probes.push_back(bottom);
  return probes;
}

serializer::Program merge_probes(const std::function<serializer::Program(const DimSizes&)>& build,
                                 const std::vector<DimRange>& ranges, std::vector<std::string>& notes) {
  const std::vector<DimSizes> probes = probe_sizes(ranges);
  const size_t n = ranges.size();
  serializer::Program base = build(probes[0]);
  Walk first;
  first.program(base);
  std::vector<std::vector<int64_t>> xs(first.items.size());  // per item, its value at each probe
  for (size_t i = 0; i < first.items.size(); ++i) xs[i].push_back(first.items[i].v);
  std::set<std::tuple<size_t, int, int32_t>> sliced;  // constants that are prefixes of the largest
  for (size_t p = 1; p < probes.size(); ++p) {
    Walk w;
    const serializer::Program probe = build(probes[p]);
    w.program(probe);
    const std::string at = describe(probes[p]);
    for (size_t i = 0; i < std::min(w.items.size(), first.items.size()); ++i) {
      const Item& a = first.items[i];
      const Item& b = w.items[i];
      const bool same = a.loc.kind == b.loc.kind && (a.fixed == b.fixed || a.loc.kind == Loc::ConstKey);
      if (!same && w.items.size() != first.items.size())
        throw CompileError(fmt::format("--dim range: at {} the program has another structure than at {}, first in "
                                       "{}: '{}' against '{}' ({}compile for a list of sizes instead)",
                                       at, describe(probes[0]), where(a.loc, first), b.fixed, a.fixed,
                                       ones(probes[p]) ? "a size of 1 often compiles differently: try a MIN of 2, or "
                                                       : ""));
    }
    if (w.items.size() != first.items.size())
      throw CompileError(fmt::format("--dim range: the program compiled at {} differs from the one at {} in its "
                                     "structure ({} against {} elements); compile for a list of sizes instead",
                                     at, describe(probes[0]), w.items.size(), first.items.size()));
    for (size_t i = 0; i < w.items.size(); ++i) {
      const Item& a = first.items[i];
      const Item& b = w.items[i];
      if (a.loc.kind == Loc::ConstKey && b.loc.kind == Loc::ConstKey && a.fixed != b.fixed) {
        const ir::TensorData* big = named(base, a.fixed);
        const ir::TensorData* small = named(probe, b.fixed);
        if (!big || !small || !is_prefix(big->bytes(), tensor_at(first, a.loc).dims, small->bytes(), tensor_at(w, b.loc).dims))
          throw CompileError(fmt::format("--dim range: {} is a constant that changes with the dims other than as a "
                                         "prefix of its largest form (compile for a list of sizes instead)",
                                         where(a.loc, first)));
        sliced.insert({a.loc.plan, a.loc.delegate, a.loc.value});
        xs[i].push_back(0);
        continue;
      }
      if (a.loc.kind != b.loc.kind || a.fixed != b.fixed)
        throw CompileError(fmt::format("--dim range: at {} the program differs from the one at {} in {}: '{}' "
                                       "against '{}' ({}compile for a list of sizes instead)",
                                       at, describe(probes[0]), where(a.loc, first), b.fixed, a.fixed,
                                       ones(probes[p]) ? "a size of 1 often compiles differently: try a MIN of 2, or "
                                                       : ""));
      xs[i].push_back(b.v);
    }
  }
  // The fit: probe 1 + k lowers dim k by one; the remaining probes check it.
  std::vector<std::vector<int64_t>> at(probes.size());
  for (size_t p = 0; p < probes.size(); ++p) at[p] = values_of(probes[p], ranges);
  std::vector<std::optional<Affine>> fits(first.items.size());
  size_t dynamic = 0;
  for (size_t i = 0; i < first.items.size(); ++i) {
    const Item& it = first.items[i];
    if (it.loc.kind == Loc::Fixed || it.loc.kind == Loc::ConstKey) continue;
    Affine a;
    a.coeffs.resize(n);
    for (size_t k = 0; k < n; ++k) a.coeffs[k] = xs[i][0] - xs[i][1 + k];
    a.offset = xs[i][0] - a.at(at[0]) + a.offset;
    for (size_t p = 0; p < probes.size(); ++p)
      if (a.at(at[p]) != xs[i][p]) {
        std::string seen;
        for (size_t q = 0; q < probes.size(); ++q)
          seen += fmt::format("{}{} at {}", q ? ", " : "", xs[i][q], describe(probes[q]));
        throw CompileError(fmt::format("--dim range: {} is {}: not an affine function of the dims, which one "
                                       "program that resizes needs (compile for a list of sizes instead)",
                                       where(it.loc, first), seen));
      }
    if (!a.constant()) fits[i] = a, ++dynamic;
  }
  // The rewrite of the first program.
  for (size_t p = 0; p < base.plans.size(); ++p) {
    auto& plan = base.plans[p];
    std::set<int32_t> dyn_values;
    for (size_t i = 0; i < first.items.size(); ++i)
      if (fits[i] && first.items[i].loc.kind == Loc::PlanTensorDim && first.items[i].loc.plan == p)
        dyn_values.insert(first.items[i].loc.value);
    for (int32_t v : dyn_values) std::get<serializer::EtTensor>(plan.values[v]).dynamism = serializer::ShapeDynamism::DynamicBound;
    for (const auto& ins : plan.instructions) {
      const auto* k = std::get_if<serializer::KernelCall>(&ins);
      if (!k) continue;
      for (int32_t a : k->args)
        if (dyn_values.count(a))
          throw CompileError(fmt::format(
              "--dim range: operator {} runs outside the Vulkan delegates on a tensor whose size follows the dims; "
              "one program that resizes needs every such node delegated",
              plan.operators.at(k->op_index).name));
    }
    for (size_t d = 0; d < plan.delegates.size(); ++d) {
      VkGraph g = first.graphs[p][d];
      serializer::DynamicDims table;
      std::vector<std::pair<int32_t, Affine>> ints;                 // Int values
      std::map<int32_t, std::map<int32_t, Affine>> list_items;      // IntList value -> item -> fit
      std::map<int32_t, std::map<int32_t, Affine>> const_dims;      // sliced constant -> dim -> fit
      for (const auto& [sp, sd, sv] : sliced)
        if (sp == p && sd == static_cast<int>(d)) const_dims[sv];
      for (size_t i = 0; i < first.items.size(); ++i) {
        const Loc& l = first.items[i].loc;
        if (!fits[i] || l.plan != p || l.delegate != static_cast<int>(d)) continue;
        const Affine& a = *fits[i];
        if (l.kind == Loc::VkTensorDim)
          table.dims.push_back({static_cast<uint32_t>(l.value), static_cast<uint32_t>(l.sub), a.offset, a.coeffs});
        else if (l.kind == Loc::VkInt)
          ints.emplace_back(l.value, a);
        else if (l.kind == Loc::VkListItem)
          list_items[l.value][l.sub] = a;
        else if (l.kind == Loc::ConstDim && const_dims.count(l.value))
          const_dims[l.value][l.sub] = a;
      }
      if (table.dims.empty() && ints.empty() && list_items.empty() && const_dims.empty()) continue;
      // Each dim is read from a delegate input that holds it as it is.
      SymIntBuilder syms(g, at[0]);
      std::vector<bool> needed(n, false);
      auto note_needed = [&](const Affine& a) {
        for (size_t k = 0; k < n; ++k) needed[k] = needed[k] || a.coeffs[k] != 0;
      };
      for (const auto& dd : table.dims) note_needed({dd.offset, dd.coeffs});
      for (size_t k = 0; k < n; ++k) {
        serializer::DynamicSymbol y{ranges[k].name, 0, 0, ranges[k].min, ranges[k].max};
        bool found = false;
        for (size_t i = 0; i < g.input_ids.size() && !found; ++i)
          for (const auto& dd : table.dims)
            if (dd.value == g.input_ids[i] && Affine{dd.offset, dd.coeffs}.unit(k)) {
              y.input = static_cast<uint32_t>(i), y.dim = dd.dim, found = true;
              syms.set_source(k, static_cast<int32_t>(g.input_ids[i]), dd.dim);
              break;
            }
        if (!found && needed[k])
          throw CompileError(fmt::format("--dim range: delegate {} has no input whose dim is '{}' as it is; one "
                                         "program that resizes needs one",
                                         d, ranges[k].name));
        table.symbols.push_back(y);
      }
      // A constant that grows with the dims is staged whole (et_vk.prepack at its largest size) and
      // cut to the run's size by slice_copy calls whose ends are SymInts.
      std::vector<std::vector<serializer::VkOperatorCall>> before(g.chain.size()), after(g.chain.size());
      std::set<int32_t> kept_whole;
      auto slices = [&](int32_t whole, const std::map<int32_t, Affine>& fit,
                        std::vector<serializer::VkOperatorCall>& calls) {
        int32_t cur = whole;
        std::map<int32_t, Affine> sliced_dims;
        for (const auto& [k, a] : fit) {
          VkTensor t = std::get<VkTensor>(g.values[whole]);
          t.constant_id = -1, t.mem_obj_id = -1;
          const int32_t out = syms.add_value(t);
          sliced_dims[k] = a;
          for (const auto& [j, aj] : sliced_dims)
            table.dims.push_back({static_cast<uint32_t>(out), static_cast<uint32_t>(j), aj.offset, aj.coeffs});
          calls.push_back({syms.next_node(), "aten.slice_copy.Tensor",
                           {cur, syms.add_value(int64_t{k}), syms.add_value(int64_t{0}), syms.expr(a),
                            syms.add_value(int64_t{1}), out}});
          cur = out;
        }
        return cur;
      };
      for (const auto& [c, fit] : const_dims) {
        for (size_t ci = 0; ci < g.chain.size(); ++ci) {
          auto& call = g.chain[ci];
          for (size_t ai = 0; ai + 1 < call.args.size(); ++ai) {
            if (call.args[ai] != c) continue;
            if (call.name == "et_vk.prepack.default" && ai == 0) {
              const int32_t whole = call.args.back();
              kept_whole.insert(whole);
              const int32_t cut = slices(whole, fit, after[ci]);
              for (size_t cj = 0; cj < g.chain.size(); ++cj)
                if (cj != ci)
                  for (int32_t& x : g.chain[cj].args)
                    if (x == whole) x = cut;
            } else {
              // Staged in the storage and layout of the call's output (as the runtime
              // materializes a constant operand for the operator).
              VkTensor t = std::get<VkTensor>(g.values[c]);
              t.constant_id = -1, t.mem_obj_id = -1;
              if (const auto* o = std::get_if<VkTensor>(&g.values[call.args.back()]))
                t.storage = o->storage, t.layout = o->layout;
              const int32_t whole = syms.add_value(t);
              before[ci].push_back({syms.next_node(), "et_vk.prepack.default", {c, whole}});
              call.args[ai] = slices(whole, fit, before[ci]);
            }
          }
        }
      }
      std::erase_if(table.dims, [&](const serializer::DynamicDim& dd) {
        return kept_whole.count(static_cast<int32_t>(dd.value)) > 0;
      });
      for (const auto& [v, a] : ints) redirect(g, v, syms.expr(a));
      for (const auto& [v, items] : list_items) {
        const auto old = std::get<serializer::VkIntList>(g.values[v]).items;
        serializer::VkValueList list;
        for (size_t k = 0; k < old.size(); ++k) {
          auto it = items.find(static_cast<int32_t>(k));
          list.items.push_back(it == items.end() ? syms.add_value(old[k]) : syms.expr(it->second));
        }
        g.values[v] = std::move(list);
      }
      std::vector<serializer::VkOperatorCall> chain = syms.head;
      for (size_t ci = 0; ci < g.chain.size(); ++ci) {
        chain.insert(chain.end(), before[ci].begin(), before[ci].end());
        chain.push_back(std::move(g.chain[ci]));
        chain.insert(chain.end(), after[ci].begin(), after[ci].end());
      }
      g.chain = std::move(chain);
      auto& del = plan.delegates[d];
      const auto bytes_section = serializer::read_vk_payload(del.processed.bytes()).bytes;
      del.processed = ir::TensorData::owned(serializer::write_vk_payload(g, bytes_section));
      serializer::CompileOptions o = serializer::CompileOptions::from_specs(del.compile_specs);
      o.require_dynamic_shapes = true;
      del.compile_specs = o.to_specs();
      del.compile_specs.push_back({serializer::kDynamicDimsKey, table.encode()});
    }
  }
  std::string listed;
  for (const auto& r : ranges) listed += fmt::format("{}{} in {}..{}", listed.empty() ? "" : ", ", r.name, r.min, r.max);
  notes.push_back(fmt::format("compiled for {}: one program that resizes as it runs ({} integers follow the dims; "
                              "checked at {} sizes)",
                              listed, dynamic, probes.size()));
  return base;
}

}  // namespace vkc::compiler::detail
