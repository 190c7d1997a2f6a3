#include "dim_solver.h"

#include <fmt/format.h>
#include <onnx/onnx_pb.h>

#include <cstring>
#include <functional>
#include <optional>
#include <set>
#include <vector>

#include "vkc/compiler/onnx_importer.h"

namespace vkc::compiler::detail {

namespace {

// One dim as the solver sees it: a size, a symbol, or nothing known.
struct Term {
  std::optional<int64_t> value;
  std::string symbol;
  bool known() const { return value || !symbol.empty(); }
};
using Dims = std::vector<Term>;

// Where a size came from, for messages.
struct Binding {
  int64_t value = 0;
  std::string why;
};

bool plain_symbol(const std::string& s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  for (char c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '.') return false;
  return true;
}

class Unifier {
 public:
  explicit Unifier(const std::map<std::string, int64_t>& given) {
    for (const auto& [sym, v] : given) bound_[sym] = {v, fmt::format("the size given for '{}' ({})", sym, v)};
  }

  // Requires `a` and `b` equal at node `node` (`what` names the two dims, `why_b` says how the
  // node fixes b). Two sizes that differ are left to later checks unless one is a symbol's.
  void equal(const Term& a, const Term& b, const onnx::NodeProto& node, const std::string& what) {
    if (!a.known() || !b.known()) return;
    if (a.value && b.value) return;
    if (!a.symbol.empty() && !b.symbol.empty()) {
      const std::string ra = find(a.symbol), rb = find(b.symbol);
      if (ra == rb) return;
      auto ia = bound_.find(ra), ib = bound_.find(rb);
      if (ia != bound_.end() && ib != bound_.end() && ia->second.value != ib->second.value)
        fail(node, what, ib->second.value, ia->second);
      parent_[rb] = ra;
      if (ia == bound_.end() && ib != bound_.end()) bound_[ra] = ib->second;
      return;
    }
    const Term& sym = a.symbol.empty() ? b : a;
    const int64_t v = a.symbol.empty() ? *a.value : *b.value;
    const std::string root = find(sym.symbol);
    auto it = bound_.find(root);
    if (it == bound_.end()) {
      bound_[root] = {v, fmt::format("node '{}' ({}) fixes {} to {}", node.name(), node.op_type(), what, v)};
      return;
    }
    if (it->second.value != v) fail(node, what, v, it->second);
  }

  std::optional<int64_t> value_of(const std::string& sym) {
    auto it = bound_.find(find(sym));
    return it == bound_.end() ? std::nullopt : std::optional<int64_t>(it->second.value);
  }

 private:
  std::string find(const std::string& s) {
    std::string r = s;
    for (auto it = parent_.find(r); it != parent_.end(); it = parent_.find(r)) r = it->second;
    return r;
  }
  [[noreturn]] static void fail(const onnx::NodeProto& node, const std::string& what, int64_t needs, const Binding& b) {
    throw ImportError(fmt::format("node '{}' ({}) needs {} to be {}, but {}", node.name(), node.op_type(), what, needs,
                                  b.why));
  }
  std::map<std::string, std::string> parent_;
  std::map<std::string, Binding> bound_;
};

// The shapes inference gave, with the graph inputs' dims as the file named them.
class Shapes {
 public:
  Shapes(const onnx::ModelProto& model, const InputSymbols& symbols) {
    const auto& g = model.graph();
    auto add = [&](const onnx::ValueInfoProto& info, bool is_input) {
      if (!info.type().has_tensor_type() || !info.type().tensor_type().has_shape()) return;
      Dims dims;
      int axis = 0;
      for (const auto& d : info.type().tensor_type().shape().dim()) {
        Term t;
        auto sym = is_input ? symbols.find({info.name(), axis}) : symbols.end();
        if (sym != symbols.end()) t.symbol = sym->second;
        else if (d.has_dim_value()) t.value = d.dim_value();
        else if (d.has_dim_param()) t.symbol = d.dim_param();
        dims.push_back(t);
        ++axis;
      }
      known_[info.name()] = std::move(dims);
    };
    auto keep_ints = [&](const onnx::TensorProto& t, const std::string& name) {  // shape-like constants
      if (t.dims_size() > 1 || t.data_type() != onnx::TensorProto::INT64) return;
      std::vector<int64_t> v(t.int64_data().begin(), t.int64_data().end());
      if (v.empty() && t.has_raw_data() && t.raw_data().size() % 8 == 0 && t.raw_data().size() <= 64) {
        v.resize(t.raw_data().size() / 8);
        std::memcpy(v.data(), t.raw_data().data(), t.raw_data().size());
      }
      if (!v.empty() && v.size() <= 8) ints_[name] = std::move(v);
    };
    for (const auto& t : g.initializer()) keep_ints(t, t.name());
    for (const auto& n : g.node())
      if (n.op_type() == "Constant" && n.output_size() == 1)
        for (const auto& a : n.attribute())
          if (a.name() == "value" && a.has_t()) keep_ints(a.t(), n.output(0));
    for (const auto& t : g.initializer()) {
      Dims dims;
      for (int64_t d : t.dims()) dims.push_back(Term{d, {}});
      known_[t.name()] = std::move(dims);
    }
    for (const auto& v : g.value_info()) add(v, false);
    for (const auto& v : g.output()) add(v, false);
    for (const auto& v : g.input()) add(v, true);
    for (const auto& n : g.node())
      for (const auto& o : n.output()) producer_[o] = &n;
  }

  // `name`'s dims, as inference gave them; null when it gave none.
  const Dims* of(const std::string& name) const {
    auto it = known_.find(name);
    return it == known_.end() ? nullptr : &it->second;
  }

  // The size of `name`'s last dim: from inference, else from its producer for the operators
  // whose outputs feed attention's query where inference stops at a contrib operator before them
  // (MatMul by a weight, onnxruntime's MatMulNBits, a Reshape to a constant shape, a Split of the
  // last axis, a bias Add, a Cast).
  std::optional<int64_t> last_dim(const std::string& name, int depth = 0) const {
    if (const Dims* d = of(name); d && !d->empty() && d->back().value) return d->back().value;
    auto p = producer_.find(name);
    if (p == producer_.end() || depth > 8) return std::nullopt;
    const onnx::NodeProto& n = *p->second;
    const std::string& op = n.op_type();
    if (op == "MatMulNBits") {
      for (const auto& attr : n.attribute())
        if (attr.name() == "N") return attr.i();
    } else if (op == "MatMul" && n.input_size() == 2) {
      if (const Dims* b = of(n.input(1)); b && b->size() >= 2 && b->back().value) return b->back().value;
    } else if (op == "Reshape" && n.input_size() == 2) {  // to a constant shape: its last entry, if a size
      if (auto t = ints_.find(n.input(1)); t != ints_.end() && t->second.back() > 0) return t->second.back();
    } else if (op == "Split" && n.input_size() > 0) {  // along the last axis: this output's part
      int64_t axis = 0;
      std::vector<int64_t> parts;
      for (const auto& a : n.attribute()) {
        if (a.name() == "axis") axis = a.i();
        if (a.name() == "split") parts.assign(a.ints().begin(), a.ints().end());
      }
      if (auto t = n.input_size() > 1 ? ints_.find(n.input(1)) : ints_.end(); t != ints_.end()) parts = t->second;
      const Dims* in = of(n.input(0));
      const bool last = axis == -1 || (in && axis == static_cast<int64_t>(in->size()) - 1);
      if (!last) return in || axis > 0 ? last_dim(n.input(0), depth + 1) : std::nullopt;
      for (int k = 0; k < n.output_size() && k < static_cast<int>(parts.size()); ++k)
        if (n.output(k) == name) return parts[k];
    } else if ((op == "Cast" || op == "Identity") && n.input_size() > 0) {
      return last_dim(n.input(0), depth + 1);
    } else if ((op == "Add" || op == "Sub" || op == "Mul" || op == "Div") && n.input_size() == 2) {
      for (int i = 0; i < 2; ++i)  // the operand that is not a broadcast [.., 1]
        if (auto d = last_dim(n.input(i), depth + 1); d && *d != 1) return d;
    }
    return std::nullopt;
  }

 private:
  std::map<std::string, Dims> known_;
  std::map<std::string, std::vector<int64_t>> ints_;  // small int64 constants (Reshape targets)
  std::map<std::string, const onnx::NodeProto*> producer_;
};

int64_t int_attr(const onnx::NodeProto& n, const std::string& name, int64_t fallback) {
  for (const auto& a : n.attribute())
    if (a.name() == name) return a.i();
  return fallback;
}

std::string dim_name(const std::string& value, size_t axis) { return fmt::format("dim {} of '{}'", axis, value); }

// The constraints of one node: pairs of dims it requires equal.
void constrain(const onnx::NodeProto& n, Shapes& shapes, Unifier& u) {
  auto input = [&](int i) -> const Dims* {
    return i < n.input_size() && !n.input(i).empty() ? shapes.of(n.input(i)) : nullptr;
  };
  const std::string& op = n.op_type();
  const bool contrib = n.domain() == "com.microsoft";
  if (op == "Concat" && (n.domain().empty() || n.domain() == "ai.onnx")) {
    const int64_t raw_axis = int_attr(n, "axis", 0);
    const Dims* first = nullptr;
    for (int i = 0; i < n.input_size(); ++i) {
      const Dims* d = input(i);
      if (!d) continue;
      if (!first) {
        first = d;
        continue;
      }
      if (d->size() != first->size()) return;
      const int64_t axis = raw_axis < 0 ? raw_axis + static_cast<int64_t>(d->size()) : raw_axis;
      for (size_t k = 0; k < d->size(); ++k)
        if (static_cast<int64_t>(k) != axis)
          u.equal((*d)[k], (*first)[k], n, fmt::format("{} (equal to {})", dim_name(n.input(i), k), dim_name(n.input(0), k)));
    }
  } else if (op == "MatMul" && (n.domain().empty() || n.domain() == "ai.onnx")) {
    const Dims *a = input(0), *b = input(1);
    if (a && b && a->size() >= 2 && b->size() >= 2)
      u.equal(a->back(), (*b)[b->size() - 2], n,
              fmt::format("{} (the inner dim, equal to {})", dim_name(n.input(1), b->size() - 2), dim_name(n.input(0), a->size() - 1)));
  } else if (contrib && (op == "GroupQueryAttention" || op == "MultiHeadAttention")) {
    // Caches [B, H_kv, P, D] beside a query [B, S, H * D] (GQA's packed form: [B, S, (H + 2 H_kv) * D]).
    const bool gqa = op == "GroupQueryAttention";
    const int64_t heads = int_attr(n, "num_heads", 0);
    const int64_t kv_heads = gqa ? int_attr(n, "kv_num_heads", 0) : heads;
    const Dims* q = input(0);
    const bool packed = gqa && (n.input_size() < 2 || n.input(1).empty());
    const int64_t q_heads = packed ? heads + 2 * kv_heads : heads;
    const std::optional<int64_t> width = n.input_size() > 0 ? shapes.last_dim(n.input(0)) : std::nullopt;
    std::optional<int64_t> head_size;
    if (width && q_heads > 0 && *width % q_heads == 0) head_size = *width / q_heads;
    const int past0 = gqa ? 3 : 6;
    for (int k = 0; k < 2; ++k) {
      const Dims* past = input(past0 + k);
      if (!past || past->size() != 4) continue;
      const std::string& name = n.input(past0 + k);
      if (q && q->size() == 3) u.equal((*past)[0], (*q)[0], n, dim_name(name, 0) + " (the batch)");
      if (kv_heads > 0)
        u.equal((*past)[1], Term{kv_heads, {}}, n, fmt::format("{} (the {} heads)", dim_name(name, 1), gqa ? "KV" : "attention"));
      if (head_size && (gqa || k == 0))
        u.equal((*past)[3], Term{*head_size, {}}, n,
                fmt::format("{} (the head size: the query's width {} over {} heads)", dim_name(name, 3), *width,
                            q_heads));
    }
  }
}

}  // namespace

InputSymbols input_symbols(const onnx::ModelProto& model) {
  InputSymbols out;
  for (const auto& in : model.graph().input()) {
    if (!in.type().has_tensor_type() || !in.type().tensor_type().has_shape()) continue;
    int axis = 0;
    for (const auto& d : in.type().tensor_type().shape().dim()) {
      if (d.has_dim_param() && plain_symbol(d.dim_param())) out[{in.name(), axis}] = d.dim_param();
      ++axis;
    }
  }
  return out;
}

std::map<std::string, int64_t> solve_symbolic_dims(const onnx::ModelProto& model, const InputSymbols& symbols,
                                                   const std::map<std::string, int64_t>& given) {
  Shapes shapes(model, symbols);
  Unifier u(given);
  for (const auto& n : model.graph().node()) constrain(n, shapes, u);
  std::map<std::string, int64_t> solved;
  std::set<std::string> names;
  for (const auto& [where, sym] : symbols) names.insert(sym);
  for (const std::string& sym : names)
    if (!given.count(sym))
      if (auto v = u.value_of(sym)) solved[sym] = *v;
  return solved;
}

}  // namespace vkc::compiler::detail
