// Decoders in the form onnxruntime-genai's model builder writes them (the `*-onnx` LLMs people
// download): input_ids, attention_mask [batch, total_sequence_length], past_key_values.i.key/value;
// seqlens_k and total_sequence_length computed from the mask; (Skip)SimplifiedLayerNormalization
// (the plain one in the ONNX domain, where onnxruntime registers it); com.microsoft
// GroupQueryAttention with the rotary inside; MatMulNBits for int4. tests/models/decoders/llama/
// llama_gqa_{fp32,packed,int4,rotemb} (rotemb: RoPE by RotaryEmbedding nodes at a position_ids
// input, GroupQueryAttention not rotating), made by export_gqa.py on the GPU machine from the tiny Llama's weights,
// node for node as the builder writes them (the builder's package is not installed there); their
// outputs are onnxruntime's, from its own GroupQueryAttention kernel, and its loop over the fp32
// graph generates transformers' tokens.
// - Decode steps (1 token at a past of 8, 3 at 5) with the mask bound to ones match onnxruntime, as
//   do the fp32 graph's steps with local_window_size, softcap and rotary_interleaved set.
// - Under --max-seq-len the programs generate transformers' tokens (int4: onnxruntime's).
// - Rotary tables chosen by the total length (LongRoPE) are chosen at the cache length, with a note.
// - What GroupQueryAttention computes that vkc does not is refused with the reason.
// Each on the cpu backend and, where a Vulkan device exists (lavapipe in CI), on the vulkan backend.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include "decoder_test_util.h"

namespace vkc::test {
namespace {

namespace fs = std::filesystem;
const fs::path kLlama = corpus("decoders") / "llama";

fs::path form_dir(const std::string& form) { return kLlama / ("llama_gqa_" + form); }

// Where a form's attention mask sits among its inputs (input_ids, [position_ids,] attention_mask,
// past key/values): the rotemb form takes position ids.
size_t mask_index(const std::string& form) { return form == "rotemb" ? 2 : 1; }

// The data set's sizes fixed and the mask (input `mask`) bound to ones: the mask feeds seqlens_k
// through an integer sum, which folds once bound (a program that keeps its cache takes no mask).
CompileOptions step_options(const std::vector<Tensor>& inputs, size_t mask = 1) {
  const int64_t s = inputs.at(0).shape.at(1), past = inputs.at(mask + 1).shape.at(2);
  CompileOptions o;
  o.dims = {{"batch_size", 1}, {"sequence_length", s}, {"past_sequence_length", past}, {"total_sequence_length", past + s}};
  std::string ones = "1";
  for (int64_t i = 1; i < past + s; ++i) ones += ",1";
  o.input_values["attention_mask"] = ones;
  return o;
}

std::vector<Tensor> without_mask(std::vector<Tensor> inputs, size_t mask) {
  inputs.erase(inputs.begin() + static_cast<std::ptrdiff_t>(mask));
  return inputs;
}

// `r` (data set `set`'s program) runs `ops` and reproduces onnxruntime's outputs.
void expect_matches(const CompileResult& r, const fs::path& set, const std::vector<Tensor>& inputs,
                    const std::vector<std::string>& ops, size_t mask = 1) {
  ASSERT_TRUE(r.ok) << set.string() << ": " << diags(r.diagnostics);
  const auto ran = ops_of(r);
  for (const std::string& op : ops) EXPECT_TRUE(ran.count(op)) << set.string() << ": no " << op;
  const auto want = read_set(set, "output");
  for (const std::string& b : backends())
    expect_close(run_pte(r.pte, without_mask(inputs, mask), b), want, set.string() + " on " + b, 1e-3, 1e-4);
}

// The fp32 graph with `attr` of every GroupQueryAttention set to `value`.
onnx::ModelProto with_attention_attr(const std::string& attr, double value) {
  onnx::ModelProto m = read_model(form_dir("fp32") / "model.onnx");
  for (auto& n : *m.mutable_graph()->mutable_node()) {
    if (n.op_type() != "GroupQueryAttention") continue;
    onnx::AttributeProto* a = nullptr;
    for (auto& x : *n.mutable_attribute())
      if (x.name() == attr) a = &x;
    if (!a) a = n.add_attribute(), a->set_name(attr);
    if (attr == "softcap") {
      a->set_type(onnx::AttributeProto::FLOAT);
      a->set_f(static_cast<float>(value));
    } else {
      a->set_type(onnx::AttributeProto::INT);
      a->set_i(static_cast<int64_t>(value));
    }
  }
  return m;
}

TEST(GenaiDecoders, GroupQueryAttentionStepsMatchOnnxruntime) {
  for (const std::string form : {"fp32", "packed", "int4", "rotemb"})
    for (const char* set : {"test_data_set_1", "test_data_set_2"}) {  // 1 token at a past of 8, 3 at 5
      const fs::path dir = form_dir(form) / set;
      SCOPED_TRACE(dir.string());
      const auto inputs = read_set(dir, "input");
      expect_matches(compile(form_dir(form) / "model.onnx", step_options(inputs, mask_index(form))), dir, inputs,
                     {"vk.et_vk.sdpa.default", "vk.et_vk.apply_rotary_emb_hf.default"}, mask_index(form));
    }
}

TEST(GenaiDecoders, WindowSoftcapAndInterleavedRotaryMatchOnnxruntime) {
  // Soft-capped scores (tanh inside the softmax) stay unfused; pairwise rotary is the Meta-style op.
  const std::vector<std::tuple<const char*, const char*, double, std::vector<std::string>>> variants = {
      {"window", "local_window_size", 3, {"vk.et_vk.sdpa.default"}},
      {"softcap", "softcap", 1.5, {"vk.aten.tanh.default", "vk.aten._softmax.default"}},
      {"interleaved", "rotary_interleaved", 1, {"vk.et_vk.sdpa.default", "vk.et_vk.apply_rotary_emb.default"}}};
  for (const auto& [name, attr, value, ops] : variants)
    for (const char* set : {"test_data_set_1", "test_data_set_2"}) {
      const fs::path dir = form_dir("fp32") / "variants" / name / set;
      SCOPED_TRACE(dir.string());
      const auto inputs = read_set(dir, "input");
      expect_matches(compile_model(with_attention_attr(attr, value), step_options(inputs)), dir, inputs, ops);
    }
}

TEST(GenaiDecoders, UnderMaxSeqLenTheyGenerateTheirTokens) {
  std::ifstream f(kLlama / "greedy.json");
  const nlohmann::json j = nlohmann::json::parse(f);
  for (const std::string form : {"fp32", "packed", "int4", "rotemb"}) {
    SCOPED_TRACE(form);
    const CompileResult r = compile(form_dir(form) / "model.onnx", prefill_and_decode("sequence_length"));
    ASSERT_TRUE(r.ok) << diags(r.diagnostics);
    EXPECT_TRUE(ops_of(r).count("vk.sdpa_with_kv_cache.default"));
    EXPECT_NE(diags(r.diagnostics).find("2 GroupQueryAttention node(s) take their positions as past + [0, S)"),
              std::string::npos)
        << diags(r.diagnostics);
    // The int4 graph's tokens are those of onnxruntime's loop over it (4-bit weights change them).
    const std::string key = form == "int4" ? "onnxruntime_llama_gqa_int4" : "hf_generate";
    expect_generates(r.pte, ints(j.at("prompt")), ints(j.at(key)));
  }
}

// The KV-cache program's logits for `token` at position 8 once the 8-token prompt went in (in
// chunks of up to 3 tokens): what data set 1 of the export asks of its explicit-cache step.
std::vector<Tensor> logits_after_prompt(const std::vector<uint8_t>& pte, const std::string& backend,
                                        const std::vector<int64_t>& prompt, int64_t token) {
  RunOptions ro;
  ro.backend = backend;
  Session s = Session::open(std::span<const uint8_t>(pte), ro);
  EXPECT_TRUE(s.ok()) << diags(s.diagnostics());
  if (!s.ok()) return {};
  auto call = [&](std::vector<int64_t> tokens, int64_t pos) {
    const int64_t n = static_cast<int64_t>(tokens.size());
    RunResult r = s.run({Tensor::of<int64_t>(ir::DType::Int64, {1, n}, tokens), Tensor::of<int64_t>(ir::DType::Int64, {1}, {pos})});
    EXPECT_TRUE(r.ok) << diags(r.diagnostics);
    return r.outputs;
  };
  for (size_t i = 0; i < prompt.size(); i += 3)
    call(std::vector<int64_t>(prompt.begin() + i, prompt.begin() + std::min(prompt.size(), i + 3)), static_cast<int64_t>(i));
  auto out = call({token}, static_cast<int64_t>(prompt.size()));
  out.resize(std::min<size_t>(out.size(), 1));
  return out;
}

TEST(GenaiDecoders, WindowedAndSoftcappedCachesAreKeptAsStateAndMatchOnnxruntime) {
  // A local window shorter than --max-seq-len (sdpa_with_kv_cache has none) and soft-capped scores
  // (left unfused): the caches are kept by update_cache and attention reads all 32 rows with a mask
  // computed from input_pos. After the prompt, the logits at position 8 are onnxruntime's for the
  // same graph with explicit caches (its GroupQueryAttention kernel, window and softcap applied).
  std::ifstream f(kLlama / "greedy.json");
  const std::vector<int64_t> prompt = ints(nlohmann::json::parse(f).at("prompt"));
  const std::vector<std::tuple<const char*, const char*, double, const char*>> variants = {
      {"window", "local_window_size", 3, "vk.et_vk.sdpa.default"}, {"softcap", "softcap", 1.5, "vk.aten.tanh.default"}};
  for (const auto& [name, attr, value, op] : variants) {
    SCOPED_TRACE(name);
    const CompileResult r = compile_model(with_attention_attr(attr, value), prefill_and_decode("sequence_length"));
    ASSERT_TRUE(r.ok) << diags(r.diagnostics);
    const auto ran = ops_of(r);
    EXPECT_TRUE(ran.count("vk.update_cache.default"));
    EXPECT_TRUE(ran.count(op));
    EXPECT_FALSE(ran.count("vk.sdpa_with_kv_cache.default"));
    EXPECT_NE(diags(r.diagnostics).find("4 of 4 caches are kept by update_cache"), std::string::npos) << diags(r.diagnostics);
    const fs::path set = form_dir("fp32") / "variants" / name / "test_data_set_1";
    const auto inputs = read_set(set, "input");
    ASSERT_EQ(inputs.at(0).numel(), 1);
    auto want = read_set(set, "output");
    want.resize(1);
    for (const std::string& b : backends())
      expect_close(logits_after_prompt(r.pte, b, prompt, inputs.at(0).get_i(0)), want, std::string(name) + " on " + b);
  }
}

// LongRoPE exports (Phi-3.5 by the builder) pick their rotary tables with If(total length > the
// original context): the fp32 graph so edited, its long tables a different pair. Under --max-seq-len
// the choice is made at N (a note says so); at N within the original context it is the short
// tables, the ones the graph was exported with, and generation is exact.
onnx::ModelProto with_tables_chosen_by_length(int64_t original) {
  onnx::ModelProto m = read_model(form_dir("fp32") / "model.onnx");
  auto* g = m.mutable_graph();
  for (const char* name : {"cos_cache", "sin_cache"})
    for (int i = 0; i < g->initializer_size(); ++i)
      if (g->initializer(i).name() == name) {
        onnx::TensorProto* copy = g->add_initializer();
        *copy = g->initializer(i);
        copy->set_name(std::string(name) + "_long");
        std::string raw = copy->raw_data();
        for (size_t k = 0; k + 4 <= raw.size(); k += 4) {  // other tables: halved
          float v;
          std::memcpy(&v, raw.data() + k, 4);
          v *= 0.5f;
          std::memcpy(raw.data() + k, &v, 4);
        }
        copy->set_raw_data(raw);
        break;
      }
  onnx::TensorProto* limit = g->add_initializer();
  limit->set_name("original_context");
  limit->set_data_type(onnx::TensorProto::INT64);
  limit->add_int64_data(original);
  auto branch = [](const std::string& cos, const std::string& sin, const std::string& tag) {
    onnx::GraphProto b;
    b.set_name(tag);
    for (const auto& [in, out] : {std::pair{cos, tag + "_cos"}, std::pair{sin, tag + "_sin"}}) {
      onnx::NodeProto* id = b.add_node();
      id->set_op_type("Identity");
      id->add_input(in);
      id->add_output(out);
      onnx::ValueInfoProto* o = b.add_output();
      o->set_name(out);
      o->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
    }
    return b;
  };
  onnx::NodeProto* greater = g->add_node();
  greater->set_op_type("Greater");
  greater->add_input("total_len64");
  greater->add_input("original_context");
  greater->add_output("long_context");
  onnx::NodeProto* choose = g->add_node();
  choose->set_op_type("If");
  choose->add_input("long_context");
  choose->add_output("chosen_cos");
  choose->add_output("chosen_sin");
  for (const auto& [attr, b] : {std::pair{"then_branch", branch("cos_cache_long", "sin_cache_long", "long")},
                                std::pair{"else_branch", branch("cos_cache", "sin_cache", "short")}}) {
    onnx::AttributeProto* a = choose->add_attribute();
    a->set_name(attr);
    a->set_type(onnx::AttributeProto::GRAPH);
    *a->mutable_g() = b;
  }
  for (auto& n : *g->mutable_node())
    if (n.op_type() == "GroupQueryAttention") n.set_input(7, "chosen_cos"), n.set_input(8, "chosen_sin");
  return m;
}

TEST(GenaiDecoders, TablesChosenByTheTotalLengthAreChosenAtTheCacheLength) {
  const CompileResult r = compile_model(with_tables_chosen_by_length(64), prefill_and_decode("sequence_length"));
  ASSERT_TRUE(r.ok) << diags(r.diagnostics);
  EXPECT_NE(diags(r.diagnostics).find("the rotary tables are computed in the graph"), std::string::npos)
      << diags(r.diagnostics);
  expect_family_tokens(r.pte, kLlama);  // N = 32 <= 64: the short tables, transformers' tokens
}

TEST(GenaiDecoders, WhatIsNotComputedIsRefusedWithTheReason) {
  const auto inputs = read_set(form_dir("fp32") / "test_data_set_1", "input");
  const CompileResult smooth = compile_model(with_attention_attr("smooth_softmax", 1), step_options(inputs));
  EXPECT_FALSE(smooth.ok);
  EXPECT_NE(diags(smooth.diagnostics).find("smooth_softmax is not supported"), std::string::npos)
      << diags(smooth.diagnostics);
  CompileOptions batch2 = step_options(inputs);
  batch2.dims["batch_size"] = 2;
  batch2.input_values.clear();
  const CompileResult two = compile(form_dir("fp32") / "model.onnx", batch2);
  EXPECT_FALSE(two.ok);
  EXPECT_NE(diags(two.diagnostics).find("a batch of 2 sequences is not supported"), std::string::npos)
      << diags(two.diagnostics);
}

}  // namespace
}  // namespace vkc::test
