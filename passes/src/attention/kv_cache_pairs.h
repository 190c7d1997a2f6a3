// The concat-style KV cache of a decode-step graph, as --max-seq-len finds it: for each layer,
// present = Concat(past, new) on axis 2 of rank-4 tensors, past a graph input and present a graph
// output (directly, or through the Identity that keeps an If output's name once the If is resolved);
// a sliding-window layer (Gemma-2/3's local layers) writes Slices of the past and of the present
// besides, which pass everything through when the window is at least the cache.
#pragma once

#include <map>

#include "vkc/ir/graph.h"

namespace vkc::passes {

struct CachePair {
  ir::Value* past = nullptr;
  ir::Value* present = nullptr;  // the Concat's output
  ir::Value* output = nullptr;   // the graph output: the present, or the Slice or Identity of it
  ir::Value* fresh = nullptr;    // the new positions, [1, Hkv, S, D]
};

/// The cache pairs of `g`, by present. Throws PassError for a sliding window shorter than the cache.
std::map<const ir::Value*, CachePair> find_cache_pairs(const ir::Graph& g);

}  // namespace vkc::passes
