// quantize-weights: turns aten.linear with a constant weight (and, with "-embedding",
// aten.embedding) into ET-VK's quantized operators under the --quantize recipe:
//   8da4w             -> torchao.choose_qparams_affine + et_vk.linear_dq8ca_q4gsw
//   int4-weight-only  -> et_vk.linear_q4gsw
//   int8-weight-only  -> aten._weight_int8pack_mm (+ aten.add.Tensor for a bias)
//   -embedding        -> et_vk.embedding_q4gsw
// Layers are quantized in parallel (the numeric work only: the graph is rewritten serially in
// graph order afterwards, so output is deterministic). Each worker reads its weight in place. The
// packed int4 weights are kept up to a budget (QuantConfig::kept_packed_bytes); beyond it a layer
// keeps only its scales, sums and error figures, and its packed weight is a derived constant
// (quant::packed_int4_rows), quantized again a block of rows at a time when the program is hashed
// and written, so a large model's quantized compile does not hold its packed weights either.
#include <fmt/format.h>
#include <fnmatch.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <thread>
#include <type_traits>

#include "quant/int_quant.h"
#include "quant/matmul_nbits.h"
#include "vkc/ir/half.h"
#include "vkc/ir/op_registry.h"
#include "vkc/passes/passes.h"

namespace vkc::passes {
namespace {

enum class JobKind { Q4Linear, DQ8Q4Linear, Q8Linear, Q4Embedding };

struct Job {
  ir::Node* node = nullptr;
  ir::Value* weight = nullptr;  // the constant; [cols, rows] when transposed
  bool transposed = false;
  JobKind kind = JobKind::Q4Linear;
  int64_t rows = 0, cols = 0, group = 0;
  size_t report = 0;  // index into PassContext::quant_report
  /// K rounded up to the group size (int4 linears, as torchao pads them): the weight quantized
  /// with zero columns after K and the activation padded with zeros to match.
  int64_t padded_cols = 0;
  /// An int4 result kept as bytes; the others' packed weights are derived constants.
  bool keep_packed = true;
};

struct Output {
  quant::Int4Grouped q4;
  quant::Int8PerChannel q8;
};

std::optional<std::string> excluded_by(const QuantConfig& c, const ir::Node& n, const ir::Value& w) {
  for (const std::string& glob : c.exclude)
    if (::fnmatch(glob.c_str(), n.name().c_str(), 0) == 0 || ::fnmatch(glob.c_str(), w.name().c_str(), 0) == 0)
      return fmt::format("excluded by --quantize-exclude '{}'", glob);
  return std::nullopt;
}

// A constant f32 or f16 matrix (f16 weights are widened exactly as they are quantized).
bool is_float_matrix(const ir::Value* w) {
  return w && w->is_constant() && (w->dtype() == ir::DType::Float32 || w->dtype() == ir::DType::Float16) &&
         w->shape().is_static() &&
         w->shape().rank() == 2;
}

// A linear's weight: the constant itself, or the [K, N] constant a permute (1, 0) presents as
// [N, K] (MatMul's form, see lowering/linear.cpp); `transposed` says which.
ir::Value* weight_constant(ir::Value* w, bool& transposed) {
  transposed = false;
  const ir::Node* p = w ? w->producer() : nullptr;
  if (p && p->is(ir::kVulkanDomain, "aten.permute_copy.default") && is_float_matrix(p->input(0)) &&
      p->attr_ints("dims") == std::vector<int64_t>{1, 0}) {
    transposed = true;
    return p->input(0);
  }
  return w;
}

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Whether f32 matrix `a` [R, C] holds what `b` does ([R, C], or [C, R] read transposed when
// `b_transposed`), judged on 4096 spread elements: it only picks the embedding's group size (each
// table is still quantized from its own values, and the program stores one copy only when the
// packed bytes are identical), so a sample suffices, and it keeps both tables out of memory.
void drop_around(const ir::Value* v, const uint8_t* at) {
  if (!v->data().file_backed()) return;
  constexpr uintptr_t kAround = uintptr_t{2} << 20;
  const auto base = reinterpret_cast<uintptr_t>(v->data().data()), end = base + v->data().size();
  const uintptr_t around = reinterpret_cast<uintptr_t>(at) / kAround * kAround;  // folios follow file offsets
  const uintptr_t from = std::max(base, around - std::min(around, kAround)), to = std::min(end, around + 2 * kAround);
  quant::release_pages(reinterpret_cast<const void*>(from), to - from, true);
}

bool same_matrix(const ir::Value* a, const ir::Value* b, bool b_transposed) {
  const auto as = a->shape().sizes(), bs = b->shape().sizes();
  const int64_t rows = as[0], cols = as[1];
  if (a->dtype() != b->dtype()) return false;
  if (b_transposed ? (bs[0] != cols || bs[1] != rows) : bs != as) return false;
  if (a == b && !b_transposed) return true;
  const size_t e = ir::dtype_size(a->dtype());
  // A derived table is sampled through read() (never computed whole), the others in place.
  const uint8_t* x = a->data().is_derived() ? nullptr : a->data().data();
  const uint8_t* y = b->data().is_derived() ? nullptr : b->data().data();
  uint8_t mine_copy[8], other_copy[8];
  const auto element = [&](const ir::Value* v, const uint8_t* base, int64_t at, uint8_t* copy) -> const uint8_t* {
    if (base) return base + static_cast<size_t>(at) * e;
    v->data().read(static_cast<uint64_t>(at) * e, {copy, e});
    return copy;
  };
  uint64_t state = 0x9E3779B97F4A7C15ull;
  bool same = true;
  for (int s = 0; s < 4096 && same; ++s) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    const int64_t i = static_cast<int64_t>((state >> 33) % static_cast<uint64_t>(rows));
    const int64_t k = static_cast<int64_t>((state >> 13) % static_cast<uint64_t>(cols));
    const uint8_t* mine = element(a, x, i * cols + k, mine_copy);
    const uint8_t* other = element(b, y, b_transposed ? k * rows + i : i * cols + k, other_copy);
    same = std::memcmp(mine, other, e) == 0;
    // A fault maps the pages around what it reads (a 2 MiB folio on recent kernels): let them go
    // at once, or 4096 samples would map both tables whole.
    if (x) drop_around(a, mine);
    if (y) drop_around(b, other);
  }
  return same;
}

// Why a linear stays in floating point under the recipe; nullopt when it is quantized.
std::optional<std::string> linear_misfit(const QuantRecipe& r, const ir::Node& n, int64_t N, int64_t K,
                                         int64_t min_elements) {
  const ir::Value* x = n.input(0);
  if (!x || !x->shape().is_static()) return std::string("input shape is not static");
  const auto xs = x->shape().sizes();
  if (N * K < min_elements)
    return fmt::format("{} weight elements < {} (tiny layers stay fp; see --quantize-min-elements)", N * K, min_elements);
  if (r.scheme == QuantScheme::Int8WeightOnly) {
    if (K % 4 != 0) return fmt::format("K={} is not a multiple of 4", K);
    if (xs.size() != 2 && xs.size() != 3) return fmt::format("input rank {} (the int8 linear takes 2 or 3)", xs.size());
    return std::nullopt;
  }
  // K that is not a multiple of the group size is padded with zero columns (padded_k), as torchao does.
  if (N % 4 != 0) return fmt::format("N={} is not a multiple of 4", N);
  if (r.scheme == QuantScheme::Int8DynAct4Weight) {
    for (size_t d = 0; d + 2 < xs.size(); ++d)
      if (xs[d] != 1) return fmt::format("input {} is not a matrix (per-row activation qparams)", x->shape().str());
    if (xs.size() < 2) return fmt::format("input {} is not a matrix (per-row activation qparams)", x->shape().str());
  }
  return std::nullopt;
}

constexpr size_t kStreamedWeightBytes = size_t{64} << 20;

// Quantized bytes are kept in memory up to `budget`: every layer's scales and sums, then packed
// int4 weights, the smallest layers first; the layers beyond become derived constants, quantized again (a block of rows at a time) when hashed and
// written: a model of any size compiles in bounded memory, and one whose packed weights fit (up
// to about 1B parameters at the default) as fast as when all are kept.
void keep_packed_within_budget(std::vector<Job>& jobs, int64_t budget) {
  std::vector<std::pair<int64_t, size_t>> sizes;  // (packed bytes, job)
  int64_t kept = 0;  // what every layer keeps anyway: its scales and sums (f32 while quantizing)
  for (size_t i = 0; i < jobs.size(); ++i) {
    const Job& j = jobs[i];
    if (j.kind == JobKind::Q8Linear) continue;
    const int64_t k = std::max(j.cols, j.padded_cols);
    sizes.emplace_back(j.rows * ((k + 7) / 8 * 8 / 2), i);
    kept += j.rows * (k / std::max<int64_t>(j.group, 1)) * 8;
  }
  std::stable_sort(sizes.begin(), sizes.end());
  for (const auto& [bytes, i] : sizes) {
    jobs[i].keep_packed = kept + bytes <= budget;
    if (jobs[i].keep_packed) kept += bytes;
  }
}

void run_jobs(const std::vector<Job>& jobs, std::vector<Output>& out) {
  // Largest first, so the last worker does not start the biggest layer alone.
  std::vector<size_t> order(jobs.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return jobs[a].rows * jobs[a].cols > jobs[b].rows * jobs[b].cols; });
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i; (i = next.fetch_add(1)) < order.size();) {
      const Job& j = jobs[order[i]];
      const bool half = j.weight->dtype() == ir::DType::Float16;
      const ir::TensorData& data = j.weight->data();
      // A derived weight (the importer's copy of a large weight at an unaligned offset of the
      // model file) is read a row at a time, never computed whole; a transposed one (a MatMul's
      // [K, N]) is read whole into this job's own buffer, let go of when the job ends (data()
      // would keep it for the rest of the compile).
      const size_t bytes = static_cast<size_t>(j.rows * j.cols) * ir::dtype_size(j.weight->dtype());
      const bool derived = data.is_derived() && !j.transposed;
      std::vector<uint8_t> whole;
      if (data.is_derived() && j.transposed) {
        whole.resize(bytes);
        data.read(0, whole);
      }
      const uint8_t* w = derived ? nullptr : !whole.empty() ? whole.data() : data.data();
      // A large weight in the model's mapped file is read and let go of as the quantizer goes;
      // a smaller one is mapped in one call first (fewer faults).
      const bool stream = data.file_backed() && bytes >= kStreamedWeightBytes;
      if (!stream && !derived) quant::populate_pages(w, bytes);
      quant::RowReader rows = derived ? quant::RowReader(data, half, j.rows, j.cols)
                              : half  ? quant::RowReader(reinterpret_cast<const uint16_t*>(w), j.rows, j.cols, j.transposed, stream)
                                      : quant::RowReader(reinterpret_cast<const float*>(w), j.rows, j.cols, j.transposed, stream);
      if (j.kind == JobKind::Q8Linear) {
        out[order[i]].q8 = quant::quantize_int8_per_channel(rows, j.rows, j.cols);
      } else if (j.padded_cols > j.cols) {  // zero columns up to the group size (a copy of this layer)
        std::vector<float> padded(static_cast<size_t>(j.rows * j.padded_cols), 0.f);
        for (int64_t n = 0; n < j.rows; ++n)
          std::memcpy(&padded[static_cast<size_t>(n * j.padded_cols)], rows.row(n), static_cast<size_t>(j.cols) * sizeof(float));
        out[order[i]].q4 = quant::quantize_int4_grouped(quant::RowReader(padded.data(), j.rows, j.padded_cols, false),
                                                        j.rows, j.padded_cols, j.group, j.keep_packed);
      } else {
        out[order[i]].q4 = quant::quantize_int4_grouped(rows, j.rows, j.cols, j.group, j.keep_packed);
      }
      if (!derived && whole.empty()) quant::release_pages(w, bytes, data.file_backed());
    }
  };
  const size_t threads = std::min<size_t>({std::max(1u, std::thread::hardware_concurrency()), 8, jobs.size()});
  std::vector<std::jthread> pool;
  for (size_t t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
}

template <typename T>
ir::Value* add_constant(ir::Graph& g, const std::string& name, ir::DType dtype, std::vector<int64_t> shape,
                        std::vector<T> values) {
  std::vector<uint8_t> bytes;
  if constexpr (std::is_same_v<T, uint8_t>) {
    bytes = std::move(values);
  } else {
    bytes.resize(values.size() * sizeof(T));
    std::memcpy(bytes.data(), values.data(), bytes.size());
  }
  return g.add_constant(g.unique_name(name), ir::TensorType{dtype, ir::Shape::of(shape)},
                        ir::TensorData::owned(std::move(bytes)));
}

class Rewriter {
 public:
  Rewriter(ir::Graph& g, bool fp16) : g_(g), force_fp16_(fp16) {}

  void apply(const Job& j, Output& o, QuantLayerReport& rep) {
    ir::Node* n = j.node;
    const std::string base = j.weight->name();
    const int64_t N = j.rows, K = j.cols;
    if (j.kind == JobKind::Q8Linear) {
      rep.sqnr_db = quant::sqnr_db(o.q8.signal, o.q8.noise);
      rep.bytes_after = o.q8.q.size() + o.q8.scales.size() * scale_bytes(activation_dtype(n));
      std::vector<uint8_t> q(o.q8.q.size());
      std::memcpy(q.data(), o.q8.q.data(), q.size());
      ir::Value* w = add_constant(g_, base + "_q8", ir::DType::Int8, {N, K}, std::move(q));
      ir::Value* s = scale_constant(base + "_scales", activation_dtype(n), {N}, o.q8.scales);
      ir::Value* bias = n->input(2);
      if (!bias) return morph(n, "aten._weight_int8pack_mm.default", {n->input(0), w, s}, {});
      ir::Node* mm = g_.add_node(ir::kVulkanDomain, "aten._weight_int8pack_mm.default", {n->input(0), w, s},
                                 {n->output(0)->type()}, g_.unique_name(n->name() + "_q8mm"), n);
      return morph(n, "aten.add.Tensor", {mm->output(0), bias}, {});
    }
    quant::Int4Grouped& q = o.q4;
    const int64_t padded = std::max(K, j.padded_cols), groups = padded / j.group;
    rep.sqnr_db = quant::sqnr_db(q.signal, q.noise);
    const int64_t packed_cols = (padded + 7) / 8 * 8 / 2;
    ir::Value* w = g_.add_constant(
        g_.unique_name(base + "_q4"), ir::TensorType{ir::DType::UInt8, ir::Shape::of({N, packed_cols})},
        j.keep_packed ? ir::TensorData::owned(std::move(q.packed))
                      : quant::packed_int4_rows(j.weight->data(), j.weight->dtype() == ir::DType::Float16, j.transposed, N, K, padded, j.group));
    if (j.kind == JobKind::Q4Embedding) {
      rep.bytes_after = w->data().size() + q.scales.size() * scale_bytes(j.weight->dtype());
      ir::Value* s = scale_constant(base + "_scales", j.weight->dtype(), {N, groups}, q.scales);
      return morph(n, "et_vk.embedding_q4gsw.default", {w, s, n->input(1)},
                   {{"group_size", j.group}, {"is_linear_weight", true}});
    }
    // Linear ops read scales (and sums) as [G, N], N padded to 4 (scales) and 8 (sums).
    auto scales = quant::transpose_padded_bytes<float>(q.scales, N, groups, 4);
    q.scales = {};
    const int64_t n4 = static_cast<int64_t>(scales.size() / sizeof(float)) / groups;
    rep.bytes_after = w->data().size() + static_cast<size_t>(groups * n4) * scale_bytes(activation_dtype(n));
    ir::Value* s = scale_constant(base + "_scales", activation_dtype(n), {groups, n4},
                                  {reinterpret_cast<const float*>(scales.data()), scales.size() / sizeof(float)});
    const ir::AttributeMap gs = {{"group_size", j.group}};
    if (j.padded_cols > K) n->set_input(0, padded_activation(n->input(0), j.padded_cols, n));
    if (j.kind == JobKind::Q4Linear) return morph(n, "et_vk.linear_q4gsw.default", {n->input(0), w, s, n->input(2)}, gs);
    auto sums = quant::transpose_padded_bytes<int32_t>(q.group_sums, N, groups, 8);
    q.group_sums = {};
    rep.bytes_after += sums.size();
    const int64_t n8 = static_cast<int64_t>(sums.size() / sizeof(int32_t)) / groups;
    ir::Value* ws = add_constant(g_, base + "_sums", ir::DType::Int32, {groups, n8}, std::move(sums));
    auto [xs, xz] = activation_qparams(n);
    morph(n, "et_vk.linear_dq8ca_q4gsw.default", {n->input(0), xs, xz, w, ws, s, n->input(2)}, gs);
  }

 private:
  static void morph(ir::Node* n, std::string_view op, std::vector<ir::Value*> inputs, ir::AttributeMap attrs) {
    if (!ir::find_op(op)) throw std::logic_error(fmt::format("quantize-weights: '{}' is not registered", op));
    n->morph(ir::kVulkanDomain, op, std::move(inputs), std::move(attrs));
  }

  // x with zeros after its last dim's K up to `cols` (one pad per activation and width): the
  // padded weight columns then meet zeros, and the asymmetric activation range, which includes 0
  // already, is unchanged.
  ir::Value* padded_activation(ir::Value* x, int64_t cols, const ir::Node* at) {
    auto& pad = pads_[{x, cols}];
    if (pad) return pad;
    auto shape = x->shape().sizes();
    const int64_t extra = cols - shape.back();
    shape.back() = cols;
    ir::Node* p = g_.add_node(ir::kVulkanDomain, "aten.constant_pad_nd.default", {x}, {{x->dtype(), ir::Shape::of(shape)}},
                              g_.unique_name(x->name() + "_padded_k"), at);
    p->attrs() = {{"pad", std::vector<int64_t>{0, extra}}, {"value", 0.0}};
    return pad = p->output(0);
  }

  // Scales are in the dtype of the values they scale: fp16 for an fp16 model, as --force-fp16
  // makes f32 ones at serialization.
  static ir::DType activation_dtype(const ir::Node* n) {
    return n->input(0)->dtype() == ir::DType::Float16 ? ir::DType::Float16 : ir::DType::Float32;
  }
  size_t scale_bytes(ir::DType dt) const { return force_fp16_ || dt == ir::DType::Float16 ? 2 : 4; }
  ir::Value* scale_constant(const std::string& name, ir::DType dt, std::vector<int64_t> shape, std::span<const float> v) {
    if (dt != ir::DType::Float16) return add_constant(g_, name, ir::DType::Float32, std::move(shape), std::vector<float>(v.begin(), v.end()));
    std::vector<uint16_t> h(v.size());
    ir::floats_to_halves_saturated(v.data(), h.data(), v.size());
    return add_constant(g_, name, ir::DType::Float16, std::move(shape), std::move(h));
  }

  // One choose_qparams_affine per activation: linears reading the same input (q, k, v) share it.
  std::pair<ir::Value*, ir::Value*> activation_qparams(ir::Node* n) {
    ir::Value* x = n->input(0);
    if (auto it = qparams_.find(x); it != qparams_.end()) return it->second;
    auto xs = x->shape().sizes();
    std::vector<int64_t> block(xs.size(), 1);
    block.back() = xs.back();
    xs.pop_back();
    ir::Node* c = g_.add_node(ir::kVulkanDomain, "torchao.choose_qparams_affine.default", {x},
                              {{activation_dtype(n), ir::Shape::of(xs)}, {ir::DType::Int8, ir::Shape::of(xs)}},
                              g_.unique_name(x->name() + "_qparams"), n);
    c->attrs() = {{"mapping_type", std::string("ASYMMETRIC")},
                  {"block_size", block},
                  {"quant_min", int64_t{-128}},
                  {"quant_max", int64_t{127}},
                  {"eps", static_cast<double>(std::numeric_limits<float>::epsilon())}};
    return qparams_[x] = {c->output(0), c->output(1)};
  }

  ir::Graph& g_;
  bool force_fp16_;
  std::map<ir::Value*, std::pair<ir::Value*, ir::Value*>> qparams_;
  std::map<std::pair<ir::Value*, int64_t>, ir::Value*> pads_;
};

}  // namespace

void quantize_weights(ir::Graph& g, PassContext& ctx) {
  // Pre-quantized layers, with or without a recipe; the fp32 constants they leave stay fp32.
  const std::set<const ir::Value*> imported = quant::lower_matmul_nbits(g, ctx.not_lowered, ctx.quant_report);
  const QuantRecipe& r = ctx.quant.recipe;
  if (!r.enabled()) return;
  std::vector<Job> jobs;
  // Tables a linear also reads (tied input/output embeddings): the embedding is quantized with the
  // linear's group size, so both pack to the same bytes, which the program then stores once.
  // Exporters may store the tied output projection as its own (transposed) copy: compared by value.
  std::vector<std::pair<const ir::Value*, bool>> linear_weights;  // (weight, stored [K, N])
  if (r.scheme != QuantScheme::None && r.scheme != QuantScheme::Int8WeightOnly)
    for (ir::Node* n : g.nodes())
      if (n->is(ir::kVulkanDomain, "aten.linear.default")) {
        bool t = false;
        const ir::Value* w = weight_constant(n->input(1), t);
        if (is_float_matrix(w)) linear_weights.emplace_back(w, t);
      }
  for (ir::Node* n : g.nodes()) {
    const bool linear = n->is(ir::kVulkanDomain, "aten.linear.default") && r.scheme != QuantScheme::None;
    const bool embedding = n->is(ir::kVulkanDomain, "aten.embedding.default") && r.embedding;
    if (!linear && !embedding) continue;
    bool transposed = false;
    ir::Value* w = linear ? weight_constant(n->input(1), transposed) : n->input(0);
    if (imported.count(w)) continue;
    QuantLayerReport rep;
    rep.node = n->name();
    rep.weight = w ? w->name() : "";
    rep.kind = linear ? "linear" : "embedding";
    std::optional<std::string> why;
    if (!is_float_matrix(w)) {
      why = "weight is not a constant fp32 or fp16 matrix";
    } else {
      rep.rows = w->shape().sizes()[transposed ? 1 : 0];
      rep.cols = w->shape().sizes()[transposed ? 0 : 1];
      rep.bytes_before = rep.bytes_after = w->data().size();
      why = excluded_by(ctx.quant, *n, *w);
    }
    Job j{n, w, transposed, JobKind::Q4Embedding, rep.rows, rep.cols, r.embedding_group_size, ctx.quant_report.size()};
    if (!why && linear) {
      why = linear_misfit(r, *n, rep.rows, rep.cols, ctx.quant.min_elements);
      j.group = r.group_size;
      j.kind = r.scheme == QuantScheme::Int8WeightOnly      ? JobKind::Q8Linear
               : r.scheme == QuantScheme::Int4WeightOnly    ? JobKind::Q4Linear
                                                            : JobKind::DQ8Q4Linear;
      // The dynamic-activation linear takes width-packed textures only: a layer whose input or output
      // row is wider than a texture (an LLM's lm_head over a 128K vocabulary) keeps its int4 weights
      // with fp activations (linear_q4gsw, any storage).
      if (j.kind == JobKind::DQ8Q4Linear &&
          (ceil_div(rep.rows, 4) > ctx.max_texture_width || ceil_div(rep.cols, 4) > ctx.max_texture_width))
        j.kind = JobKind::Q4Linear;
      if (j.kind != JobKind::Q8Linear && rep.cols % j.group != 0) {
        j.padded_cols = ceil_div(rep.cols, j.group) * j.group;
        rep.padded_cols = j.padded_cols;
      }
    } else if (!why) {
      for (const auto& [lw, t] : linear_weights)
        if (rep.cols % r.group_size == 0 && same_matrix(w, lw, t)) j.group = r.group_size;
      if (rep.cols % 32 != 0) why = fmt::format("embedding dim {} is not a multiple of 32", rep.cols);
      else if (rep.cols % j.group != 0) why = fmt::format("embedding dim {} is not a multiple of {}", rep.cols, j.group);
    }
    if (why) {
      rep.reason = *why;
    } else {
      rep.quantized = true;
      rep.bits = j.kind == JobKind::Q8Linear ? 8 : 4;
      rep.group_size = j.kind == JobKind::Q8Linear ? 0 : j.group;
      jobs.push_back(j);
    }
    ctx.quant_report.push_back(std::move(rep));
  }
  keep_packed_within_budget(jobs, ctx.quant.kept_packed_bytes);
  std::vector<Output> out(jobs.size());
  run_jobs(jobs, out);
  Rewriter rw(g, ctx.force_fp16);
  for (size_t i = 0; i < jobs.size(); ++i) {
    QuantLayerReport& rep = ctx.quant_report[jobs[i].report];
    rw.apply(jobs[i], out[i], rep);
    rep.op = jobs[i].kind == JobKind::Q8Linear ? "aten._weight_int8pack_mm.default" : jobs[i].node->op_type();
    out[i] = Output{};  // the int8 weights, scales and sums now live in the graph's constants
  }
}

}  // namespace vkc::passes
