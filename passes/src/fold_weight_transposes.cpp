// fold-weight-transposes: a linear's MatMul-form weight arrives as permute_copy(W [K, N], (1, 0))
// (lowering/linear.cpp) so that quantize-weights can read it transposed in place. Whatever still
// reads such a permute (the linears that stay fp32 or fp16) gets the transposed constant here;
// permutes nothing reads are left to eliminate-dead-code. The weights are transposed in tiles (each
// tile's rows and columns stay in cache) on every core, largest first. A source read from the
// model's mapped file is let go of once transposed (its pages dropped from memory; read again from
// the file if anything still needs them), so a float compile does not hold the model twice.
#include <algorithm>
#include <atomic>
#include <cstring>
#include <thread>

#include "quant/int_quant.h"
#include "vkc/passes/passes.h"

namespace vkc::passes {
namespace {

struct Transpose {
  ir::Node* permute;
  const ir::Value* source;
  std::vector<uint8_t> out;
};

// dst [cols, rows] = src [rows, cols]^T, elements of type T, in square tiles.
template <typename T>
void transpose_tiled(const T* src, T* dst, int64_t rows, int64_t cols) {
  constexpr int64_t kTile = 64;
  for (int64_t r0 = 0; r0 < rows; r0 += kTile)
    for (int64_t c0 = 0; c0 < cols; c0 += kTile) {
      const int64_t r1 = std::min(rows, r0 + kTile), c1 = std::min(cols, c0 + kTile);
      for (int64_t c = c0; c < c1; ++c)
        for (int64_t r = r0; r < r1; ++r) dst[c * rows + r] = src[r * cols + c];
    }
}

void run(Transpose& t) {
  const ir::Value* w = t.source;
  const int64_t k = w->shape().sizes()[0], cols = w->shape().sizes()[1];
  const uint8_t* src = w->data().bytes().data();
  t.out.resize(w->data().size());
  if (ir::dtype_size(w->dtype()) == 4)
    transpose_tiled(reinterpret_cast<const uint32_t*>(src), reinterpret_cast<uint32_t*>(t.out.data()), k, cols);
  else
    transpose_tiled(reinterpret_cast<const uint16_t*>(src), reinterpret_cast<uint16_t*>(t.out.data()), k, cols);
  if (w->data().file_backed()) quant::release_pages(src, w->data().size(), true);
}

}  // namespace

void fold_weight_transposes(ir::Graph& g, PassContext&) {
  std::vector<Transpose> jobs;
  for (ir::Node* n : g.nodes()) {
    if (!n->is(ir::kVulkanDomain, "aten.permute_copy.default") || n->attr_ints("dims") != std::vector<int64_t>{1, 0})
      continue;
    const ir::Value* w = n->input(0);
    const bool fp = w->dtype() == ir::DType::Float32 || w->dtype() == ir::DType::Float16;
    if (!w->is_constant() || !fp || w->shape().rank() != 2 || !w->shape().is_static() || g.users(n->output(0)).empty())
      continue;
    jobs.push_back({n, w, {}});
  }
  // Largest first, so that the last worker does not start the biggest weight alone.
  std::vector<size_t> order(jobs.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return jobs[a].source->data().size() > jobs[b].source->data().size(); });
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i; (i = next.fetch_add(1)) < order.size();) run(jobs[order[i]]);
  };
  const size_t threads = std::min<size_t>({std::max(1u, std::thread::hardware_concurrency()), 8, jobs.size()});
  {
    std::vector<std::jthread> pool;
    for (size_t t = 1; t < threads; ++t) pool.emplace_back(work);
    work();
  }
  for (Transpose& t : jobs) {  // graph edits in node order: the same names as one at a time
    ir::Value* c = g.add_constant(g.unique_name(t.permute->name()), t.permute->output(0)->type(),
                                  ir::TensorData::owned(std::move(t.out)));
    g.replace_all_uses(t.permute->output(0), c);
    g.remove_node(t.permute);
  }
}

}  // namespace vkc::passes
