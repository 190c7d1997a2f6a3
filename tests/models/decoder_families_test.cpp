// Real exporter output from more decoder families, and decode steps in the form Hugging Face
// optimum (and the onnx-community models made with it) writes them: tests/models/decoders/, made by
// export_decoders.py (GPT-2, Falcon, OPT, Qwen2, Mistral, StableLM, GPT-NeoX, Granite, OLMo-2, Phi)
// and export_mask_steps.py (`<family>_mask_<exporter>`: input_ids, attention_mask
// [1, past_sequence_length + sequence_length], position_ids and past key/values, all symbolic).
// - With the mask as an input (its dims fixed): every output equals onnxruntime's at two past lengths.
// - Under --max-seq-len with a range of sequence lengths (1..3): the mask is taken as all ones, the program
//   takes tokens and input_pos, and greedy generation equals transformers' generate().
// - Gemma-2/3's sliding-window layers keep their cache while the window holds it.
// - Steps without position ids (Llama, GPT-2; TorchScript's and dynamo's exports) follow input_pos;
//   OPT's form is refused.
// - An fp16 export's attention fuses and its KV-cache program generates transformers' tokens.
// - Full-sequence graphs of GPT-2 (learned positions, fused qkv Split) and Falcon (multi-query
//   attention that MatMul broadcasts over the heads) fuse attention and match onnxruntime.
// Each on the cpu backend and, where a Vulkan device exists (lavapipe in CI), on the vulkan backend.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>

#include "decoder_test_util.h"

namespace vkc::test {
namespace {

namespace fs = std::filesystem;
const fs::path kDir = corpus("decoders");

// family/export: the optimum-form exports committed (legacy, plus GPT-2's dynamo one, whose mask
// length is a symbol of its own).
const std::vector<std::string> kMaskExports = {
    "llama/llama_mask_legacy",     "gpt2/gpt2_mask_legacy",       "gpt2/gpt2_mask_dynamo",
    "falcon/falcon_mask_legacy",   "opt/opt_mask_legacy",         "qwen2/qwen2_mask_legacy",
    "mistral/mistral_mask_legacy", "stablelm/stablelm_mask_legacy", "gpt_neox/gpt_neox_mask_legacy",
    "granite/granite_mask_legacy", "olmo2/olmo2_mask_legacy",     "phi/phi_mask_legacy"};

TEST(DecoderFamilies, MaskFormStepsMatchOnnxruntimeWithTheMaskAsAnInput) {
  for (const std::string& name : kMaskExports) {
    const fs::path dir = kDir / name;
    SCOPED_TRACE(dir.string());
    for (const char* set : {"test_data_set_1", "test_data_set_2"}) {  // 3 tokens at a past of 5, 1 at 8
      const auto inputs = read_set(dir / set, "input");
      const int64_t s = inputs.at(0).shape.at(1), past = inputs.at(3).shape.at(2);
      CompileOptions o;
      o.dims = {{"sequence_length", s}, {"past_sequence_length", past}};
      o.input_shapes["attention_mask"] = {1, past + s};  // the dynamo export names its length apart
      const CompileResult r = expect_set_compiles_and_matches(dir, set, inputs, o);
      EXPECT_TRUE(ops_of(r).count("vk.et_vk.sdpa.default"));
    }
  }
}

TEST(DecoderFamilies, MaskFormStepsUnderMaxSeqLenGenerateTransformersGreedyTokens) {
  for (const std::string& name : kMaskExports) {
    const fs::path dir = kDir / name;
    SCOPED_TRACE(dir.string());
    const CompileResult r = compile(dir / "model.onnx", prefill_and_decode("sequence_length"));
    ASSERT_TRUE(r.ok) << diags(r.diagnostics);
    EXPECT_TRUE(ops_of(r).count("vk.sdpa_with_kv_cache.default"));
    EXPECT_NE(diags(r.diagnostics).find("'attention_mask' i64[1,32] is taken as an attention mask of all ones"),
              std::string::npos)
        << diags(r.diagnostics);
    expect_family_tokens(r.pte, dir.parent_path());  // tokens and input_pos in: the mask and the caches are inside
  }
}

// Without a size for the tokens' symbolic length, --max-seq-len says which two programs it can make.
TEST(DecoderFamilies, ASymbolicTokenCountAsksForDecodeStepsOrARange) {
  CompileOptions o;
  o.max_seq_len = 32;
  const CompileResult r = compile(kDir / "gpt2/gpt2_mask_legacy/model.onnx", o);
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.error().find("give --dim sequence_length=1 for decode steps, or --dim sequence_length=1..S"),
            std::string::npos)
      << r.error();
}

// optimum writes every dim 0 as a symbolic batch_size: the same Llama export with its inputs' and
// outputs' batch made symbolic compiles under --max-seq-len with nothing more (one sequence: the
// batch is 1) and generates the same tokens.
TEST(DecoderFamilies, ASymbolicBatchIsOneUnderMaxSeqLen) {
  const fs::path dir = kDir / "llama/llama_mask_legacy";
  onnx::ModelProto m = read_model(dir / "model.onnx");
  auto batch = [](onnx::ValueInfoProto& v) {
    v.mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(0)->set_dim_param("batch_size");
  };
  ASSERT_EQ(m.graph().input(0).type().tensor_type().shape().dim(0).dim_value(), 1);
  for (auto& v : *m.mutable_graph()->mutable_input()) batch(v);
  for (auto& v : *m.mutable_graph()->mutable_output()) batch(v);
  const CompileResult r = compile_model(m, prefill_and_decode("sequence_length"));
  ASSERT_TRUE(r.ok) << diags(r.diagnostics);
  expect_family_tokens(r.pte, dir.parent_path());
}

// optimum's merged decoder (decoder_model_merged.onnx): If(use_cache_branch) over the step that
// extends the caches and the first step, which reads none. Made here from the Llama optimum-form
// step as the then-branch and, as the else-branch, zeros of each output's type standing for the
// first step (which reads no cache): under --max-seq-len the branch input is bound to the cache
// branch and the program generates the step's tokens.
TEST(DecoderFamilies, AMergedDecoderTakesTheBranchThatReadsTheCaches) {
  const fs::path dir = kDir / "llama/llama_mask_legacy";
  const onnx::ModelProto src = read_model(dir / "model.onnx");
  onnx::ModelProto m = src;
  onnx::GraphProto* g = m.mutable_graph();
  onnx::GraphProto with_past;
  with_past.set_name("with_past");
  *with_past.mutable_node() = src.graph().node();
  *with_past.mutable_initializer() = src.graph().initializer();
  *with_past.mutable_output() = src.graph().output();
  onnx::GraphProto first;
  first.set_name("first_step");
  for (const auto& o : src.graph().output()) {
    onnx::NodeProto* c = first.add_node();
    c->set_op_type("Constant");
    c->add_output(o.name() + "_first");
    onnx::AttributeProto* a = c->add_attribute();
    a->set_name("value");
    a->set_type(onnx::AttributeProto::TENSOR);
    onnx::TensorProto* t = a->mutable_t();
    t->set_data_type(onnx::TensorProto::FLOAT);
    int64_t n = 1;
    for (const auto& d : o.type().tensor_type().shape().dim()) {
      const int64_t size = d.has_dim_value() ? d.dim_value() : 1;
      t->add_dims(size);
      n *= size;
    }
    for (int64_t i = 0; i < n; ++i) t->add_float_data(0.0f);
    onnx::ValueInfoProto* out = first.add_output();
    out->set_name(o.name() + "_first");
    out->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  }
  g->clear_node();
  g->clear_initializer();
  onnx::ValueInfoProto* branch = g->add_input();
  branch->set_name("use_cache_branch");
  branch->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::BOOL);
  branch->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_value(1);
  onnx::NodeProto* iff = g->add_node();
  iff->set_op_type("If");
  iff->set_name("optimum_merged");
  iff->add_input("use_cache_branch");
  for (const auto& o : src.graph().output()) iff->add_output(o.name());
  for (auto [name, body] : {std::pair{"then_branch", &with_past}, std::pair{"else_branch", &first}}) {
    onnx::AttributeProto* a = iff->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::GRAPH);
    *a->mutable_g() = *body;
  }
  const CompileResult r = compile_model(m, prefill_and_decode("sequence_length"));
  ASSERT_TRUE(r.ok) << diags(r.diagnostics);
  EXPECT_NE(diags(r.diagnostics).find("input 'use_cache_branch' is true: the branch that extends the KV cache"),
            std::string::npos)
      << diags(r.diagnostics);
  expect_family_tokens(r.pte, dir.parent_path());
}

// Gemma-2 and Gemma-3 (window 64): their local layers slice the past and the present to the
// window. Under --max-seq-len 32 the slices keep everything and the program keeps the cache;
// at 80 the cache would outgrow the window, which is refused with the reason.
TEST(DecoderFamilies, SlidingWindowLayersKeepTheirCacheWhenTheWindowHoldsIt) {
  for (const char* fam : {"gemma2", "gemma3"}) {
    const fs::path model = kDir / fam / (std::string(fam) + "_step_legacy") / "model.onnx";
    SCOPED_TRACE(model.string());
    CompileOptions o;
    o.max_seq_len = 32;
    const CompileResult r = compile(model, o);
    ASSERT_TRUE(r.ok) << diags(r.diagnostics);
    EXPECT_TRUE(ops_of(r).count("vk.sdpa_with_kv_cache.default"));
    expect_family_tokens(r.pte, kDir / fam);
    o.max_seq_len = 80;
    const CompileResult longer = compile(model, o);
    EXPECT_FALSE(longer.ok);
    EXPECT_NE(longer.error().find("keeps the last 63 of its 64 positions (a sliding window"), std::string::npos)
        << longer.error();
  }
}

// Decode steps without position ids (export_step_variants.py, as older optimum exports): Llama and
// GPT-2 compute their positions as [past, past + S) from the cache length, which under
// --max-seq-len follows input_pos (their causal mask, computed from it too, is checked at every
// position); OPT computes them from a cumulative sum of the mask, which is refused.
TEST(DecoderFamilies, StepsWithoutPositionIdsFollowInputPos) {
  // TorchScript writes the positions as Range(0, S) + past, the dynamo exporter as Range(past, past + S)
  // (and names the mask's length apart).
  for (const char* name : {"llama/llama_nopos_legacy", "gpt2/gpt2_nopos_legacy", "llama/llama_nopos_dynamo",
                           "gpt2/gpt2_nopos_dynamo"}) {
    const fs::path dir = kDir / name;
    SCOPED_TRACE(dir.string());
    // Without --max-seq-len the past is fixed and every output equals onnxruntime's.
    const auto inputs = read_set(dir / "test_data_set_1", "input");
    CompileOptions fixed;
    const int64_t s = inputs.at(0).shape.at(1), past = inputs.at(2).shape.at(2);
    fixed.dims = {{"sequence_length", s}, {"past_sequence_length", past}};
    fixed.input_shapes["attention_mask"] = {1, past + s};
    expect_set_compiles_and_matches(dir, "test_data_set_1", inputs, fixed);
    const CompileResult r = compile(dir / "model.onnx", prefill_and_decode("sequence_length"));
    ASSERT_TRUE(r.ok) << diags(r.diagnostics);
    EXPECT_NE(diags(r.diagnostics).find("computes its positions from the cache length; they follow input_pos"),
              std::string::npos)
        << diags(r.diagnostics);
    expect_family_tokens(r.pte, dir.parent_path());
  }
  CompileOptions o;
  o.max_seq_len = 32;
  o.dims = {{"sequence_length", 1}};
  const CompileResult opt = compile(kDir / "opt/opt_nopos_legacy/model.onnx", o);
  EXPECT_FALSE(opt.ok);
  EXPECT_NE(opt.error().find("export with position_ids"), std::string::npos) << opt.error();
}

// A Llama exported from the model in fp16 (export_step_variants.py): TorchScript raises the fp16
// scores and values to fp32 beside its fp32 mask; attention fuses in fp16 and the program matches
// onnxruntime's fp16 outputs, and with the cache inside generates transformers' tokens.
TEST(DecoderFamilies, Fp16StepsFuseAttentionAndGenerate) {
  const fs::path dir = kDir / "llama/llama_step16_legacy";
  const auto inputs = read_set(dir / "test_data_set_0", "input");
  CompileOptions fixed;
  fixed.dims = {{"past", inputs.at(2).shape.at(2)}};
  const CompileResult step = expect_set_compiles_and_matches(dir, "test_data_set_0", inputs, fixed, 1e-2, 2e-3);
  EXPECT_TRUE(ops_of(step).count("vk.et_vk.sdpa.default"));
  EXPECT_FALSE(ops_of(step).count("vk.aten.softmax.default"));
  CompileOptions o;
  o.max_seq_len = 32;
  const CompileResult r = compile(dir / "model.onnx", o);
  ASSERT_TRUE(r.ok) << diags(r.diagnostics);
  expect_family_tokens(r.pte, dir.parent_path());
}

TEST(DecoderFamilies, FullSequenceGraphsFuseAttentionAndMatchOnnxruntime) {
  for (const char* name : {"gpt2/gpt2_seq_dynamo", "falcon/falcon_seq_dynamo"}) {
    const fs::path dir = kDir / name;
    SCOPED_TRACE(dir.string());
    const auto inputs = read_set(dir / "test_data_set_0", "input");
    CompileOptions o;
    o.dims["sequence"] = inputs.at(0).shape.at(1);
    const auto ops = ops_of(expect_set_compiles_and_matches(dir, "test_data_set_0", inputs, o));
    EXPECT_TRUE(ops.count("vk.et_vk.sdpa.default"));
    EXPECT_FALSE(ops.count("vk.aten.softmax.default")) << "an attention was left unfused";
  }
}

}  // namespace
}  // namespace vkc::test
