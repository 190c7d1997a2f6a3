#include "vkc/ir/op_families.h"

#include <algorithm>

#include "vkc/ir/op_registry.h"

namespace vkc::ir {
namespace {

struct Row {
  const char* name;
  const char* description;
  const char* counts_as;
  std::vector<std::string> aliases;
};

// One row per family the registry uses. A family missing here still shows (with no
// description); tests/ir/op_families_test.cpp fails on it.
const std::vector<Row>& rows() {
  static const std::vector<Row> kRows = {
      {"convolution", "2-D convolution, with or without a fused clamp", "", {"conv"}},
      {"linear", "fp linear layers (linear, addmm)", "", {}},
      {"quantized-linear", "linear layers with int4/int8 weights (linear_q4gsw, linear_dq8ca_q4gsw, "
                           "_weight_int8pack_mm, q8ta_linear)", "linear", {"qlinear", "q-linear"}},
      {"quantized-conv", "static-int8 convolutions on int8 activations (q8ta_conv2d, _dw, _pw)", "convolution",
       {"qconv", "q-conv"}},
      {"quantized-elementwise", "static-int8 add and relu on int8 activations (q8ta_add, q8ta_relu)", "elementwise",
       {}},
      {"quantization", "activation quantization (choose_qparams_affine, quantize/dequantize_per_tensor)", "", {}},
      {"matmul", "matrix products of two activations (mm, bmm)", "", {}},
      {"elementwise", "elementwise arithmetic, comparisons, logic, casts", "", {}},
      {"activation", "relu, sigmoid, gelu, clamp and friends", "", {}},
      {"normalization", "batch/group/layer norm, RMSNorm", "", {"norm"}},
      {"sdpa", "fused scaled dot-product attention", "", {"attention"}},
      {"kv_cache", "writes into a KV cache kept inside the program (update_cache)", "", {"cache"}},
      {"rope", "rotary position embeddings", "", {}},
      {"resize", "nearest/bilinear upsampling", "", {}},
      {"pooling", "max/avg pooling", "", {"pool"}},
      {"reduction", "mean, sum, amax, amin", "", {"reduce"}},
      {"softmax", "softmax and log-softmax", "", {}},
      {"shape", "views, permutes, slices, concatenation, padding, gathers", "", {}},
      {"embedding", "fp embedding lookups", "", {}},
      {"quantized-embedding", "embedding lookups in 4-bit grouped tables (embedding_q4gsw)", "embedding", {}},
      {"transition", "layout transitions the partitioner inserts (clone)", "", {}},
      {"prepack", "constant staging (et_vk.prepack)", "", {}},
  };
  return kRows;
}

}  // namespace

const std::vector<FamilyInfo>& op_families() {
  static const std::vector<FamilyInfo> kFamilies = [] {
    std::vector<FamilyInfo> out;
    for (const OpDef& d : all_ops()) {
      auto it = std::find_if(out.begin(), out.end(), [&](const FamilyInfo& f) { return f.name == d.family(); });
      if (it == out.end()) {
        FamilyInfo f;
        f.name = d.family();
        for (const Row& r : rows())
          if (f.name == r.name) {
            f.description = r.description;
            f.counts_as = r.counts_as;
            f.aliases = r.aliases;
          }
        out.push_back(std::move(f));
        it = out.end() - 1;
      }
      it->ops.push_back(d.name());
    }
    return out;
  }();
  return kFamilies;
}

const FamilyInfo* find_family(std::string_view name) {
  for (const FamilyInfo& f : op_families())
    if (f.name == name || std::find(f.aliases.begin(), f.aliases.end(), name) != f.aliases.end()) return &f;
  return nullptr;
}

bool family_meets(std::string_view have, std::string_view required) {
  const FamilyInfo* want = find_family(required);
  const std::string_view target = want ? std::string_view(want->name) : required;
  if (have == target) return true;
  const FamilyInfo* h = find_family(have);
  return h && h->counts_as == target;
}

}  // namespace vkc::ir
