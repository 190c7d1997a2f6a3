// Data-movement chains: a value reached from another through Reshape/Transpose/Unsqueeze/Squeeze/
// Flatten/Expand/Tile/Identity nodes whose shape arguments are constants. Exporters spell one
// movement many ways (a transpose of the last two axes as Reshape -> Transpose(0,2,1) -> Reshape; a
// grouped-query head repeat as Unsqueeze -> Expand -> Reshape). Rather than match each spelling, a
// chain is read as the map from each element of its output to the source element it copies, and
// that map is compared with the movement a fusion needs: on every element for small tensors, on
// every position of each axis (the others at varied values) plus random elements for large ones.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "vkc/ir/graph.h"

namespace vkc::passes {

/// The element map of a chain: output shape, source shape, and for an output element (row-major
/// index) the source element it reads.
class ViewMap {
 public:
  ViewMap(std::vector<ir::Node*> chain, std::vector<int64_t> source_shape, std::vector<int64_t> out_shape);
  const std::vector<int64_t>& source_shape() const { return source_; }
  const std::vector<int64_t>& out_shape() const { return out_; }
  int64_t operator()(int64_t out_index) const;
  /// Whether the map equals `want` (output multi-index -> source row-major index) on the checked elements.
  bool equals(const std::function<int64_t(const std::vector<int64_t>&)>& want) const;

 private:
  std::vector<ir::Node*> chain_;  // consumer first
  std::vector<int64_t> source_, out_;
};

/// Walks back from `v` through data-movement nodes (at most `max_steps`), each intermediate value
/// used once. For each value reached with a static shape, calls `accept(source, map)`; returns the
/// first source accepted and, in `chain`, the nodes between (producer first). `v` itself is tried
/// first, with an empty chain.
ir::Value* find_view_source(const ir::Graph& g, ir::Value* v,
                            const std::function<bool(const ir::Value*, const ViewMap&)>& accept,
                            std::vector<ir::Node*>* chain = nullptr, int max_steps = 8);

/// Row-major index of `idx` in `shape`.
int64_t flat_index(const std::vector<int64_t>& idx, const std::vector<int64_t>& shape);

}  // namespace vkc::passes
