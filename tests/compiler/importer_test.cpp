// ONNX importer: types, attributes, constants, input shapes, validation errors.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>

#include <onnx/onnx_pb.h>

#include "onnx_test_models.h"
#include "onnx_raw_data_in_place.h"
#include "vkc/compiler/onnx_importer.h"

namespace vkc::compiler {
namespace {

// ImportOptions with only --input-shape set (designated initializers would leave the other
// members to -Wmissing-field-initializers).
ImportOptions with_shapes(std::map<std::string, std::vector<int64_t>> shapes) {
  ImportOptions o;
  o.input_shapes = std::move(shapes);
  return o;
}

namespace fs = std::filesystem;
using test::float_bytes;
using test::kF32;
using test::ModelBuilder;
using test::TempDir;
using ::testing::HasSubstr;

std::vector<uint8_t> bytes_of(const ir::Value* v) {
  return {v->data().data(), v->data().data() + v->data().size()};
}

/// The ImportError message of importing `path`, or "" when it imports.
std::string import_error(const fs::path& path, const ImportOptions& options = {}) {
  try {
    import_onnx_file(path, options);
  } catch (const ImportError& e) {
    return e.what();
  }
  return "";
}

/// X[1,3,8,8] -> Conv(W raw_data, B float_data; stride 2, pad 1) -> Relu -> Y[1,4,4,4].
ModelBuilder conv_relu_model(const std::vector<float>& w, const std::vector<float>& b) {
  ModelBuilder m;
  m.input("X", kF32, {1, 3, 8, 8});
  m.output("Y", kF32, {1, 4, 4, 4});
  m.raw_floats("W", {4, 3, 3, 3}, w);
  auto* bias = m.initializer("B", kF32, {4});
  for (float v : b) bias->add_float_data(v);
  auto* conv = m.node("Conv", {"X", "W", "B"}, {"conv_out"}, "conv1");
  test::attr_ints(conv, "kernel_shape", {3, 3});
  test::attr_ints(conv, "pads", {1, 1, 1, 1});
  test::attr_ints(conv, "strides", {2, 2});
  test::attr_string(conv, "auto_pad", "NOTSET");
  test::attr_int(conv, "group", 1);
  m.node("Relu", {"conv_out"}, {"Y"}, "relu1");
  return m;
}

TEST(OnnxImporter, ConvReluTypesAttributesAndConstants) {
  TempDir dir;
  std::vector<float> w(4 * 3 * 3 * 3);
  std::iota(w.begin(), w.end(), 0.5f);
  const std::vector<float> b = {0.5f, -1.f, 2.f, 0.f};
  auto g = import_onnx_file(conv_relu_model(w, b).save(dir / "conv.onnx"));

  EXPECT_EQ(g->name, "test_graph");
  EXPECT_EQ(g->opsets, (std::map<std::string, int64_t>{{"", 13}}));
  ASSERT_EQ(g->inputs.size(), 1u);
  EXPECT_EQ(g->inputs[0]->name(), "X");
  EXPECT_EQ(g->inputs[0]->type().str(), "f32[1,3,8,8]");

  auto nodes = g->nodes();
  ASSERT_EQ(nodes.size(), 2u);
  const ir::Node* conv = nodes[0];
  EXPECT_EQ(conv->name(), "conv1");
  EXPECT_TRUE(conv->is_onnx("Conv"));
  EXPECT_EQ(conv->opset(), 13);
  EXPECT_EQ(conv->attr_ints("kernel_shape"), (std::vector<int64_t>{3, 3}));
  EXPECT_EQ(conv->attr_ints("pads"), (std::vector<int64_t>{1, 1, 1, 1}));
  EXPECT_EQ(conv->attr_ints("strides"), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(conv->attr_string("auto_pad", ""), "NOTSET");
  EXPECT_EQ(conv->attr_int("group", 0), 1);

  ASSERT_EQ(conv->num_inputs(), 3u);
  EXPECT_EQ(conv->input(0), g->inputs[0]);
  const ir::Value* wv = conv->input(1);
  ASSERT_TRUE(wv->is_constant());
  EXPECT_EQ(wv->type().str(), "f32[4,3,3,3]");
  EXPECT_EQ(bytes_of(wv), float_bytes(w));
  const ir::Value* bv = conv->input(2);
  ASSERT_TRUE(bv->is_constant());
  EXPECT_EQ(bv->type().str(), "f32[4]");
  EXPECT_EQ(bytes_of(bv), float_bytes(b));
  EXPECT_FALSE(g->is_input(wv));

  EXPECT_EQ(conv->output()->type().str(), "f32[1,4,4,4]");  // from shape inference
  const ir::Node* relu = nodes[1];
  EXPECT_TRUE(relu->is_onnx("Relu"));
  EXPECT_EQ(relu->input(0), conv->output());
  ASSERT_EQ(g->outputs.size(), 1u);
  EXPECT_EQ(g->outputs[0], relu->output());
  EXPECT_EQ(g->outputs[0]->type().str(), "f32[1,4,4,4]");
}

TEST(OnnxImporter, AttributeKindsConstantNodesNamesAndOmittedInputs) {
  TempDir dir;
  ModelBuilder m;
  m.input("X", kF32, {2, 3});
  m.output("Y", kF32, {2, 3});
  m.output("Z", kF32, {2, 3});
  auto* max = m.node("Constant", {}, {"max"});
  test::attr_float(max, "value_float", 6.f);
  m.node("Clip", {"X", "", "max"}, {"clipped"});
  test::attr_float(m.node("LeakyRelu", {"clipped"}, {"Y"}), "alpha", 0.1f);
  test::attr_ints(m.node("Constant", {}, {"shape"}), "value_ints", {2, 3});
  auto* fill = m.node("ConstantOfShape", {"shape"}, {"Z"}, "fill");
  auto* value = test::attr_tensor(fill, "value");
  value->set_data_type(kF32);
  value->add_dims(1);
  value->add_float_data(1.5f);
  auto g = import_onnx_file(m.save(dir / "attrs.onnx"));

  auto nodes = g->nodes();  // Constant nodes became constants
  ASSERT_EQ(nodes.size(), 3u);
  const ir::Node* clip = nodes[0];
  EXPECT_EQ(clip->name(), "Clip_0");
  ASSERT_EQ(clip->num_inputs(), 3u);
  EXPECT_EQ(clip->input(1), nullptr);
  const ir::Value* max_v = clip->input(2);
  ASSERT_TRUE(max_v->is_constant());
  EXPECT_EQ(max_v->name(), "max");
  EXPECT_EQ(max_v->type().str(), "f32[]");
  EXPECT_EQ(bytes_of(max_v), float_bytes({6.f}));

  EXPECT_EQ(nodes[1]->name(), "LeakyRelu_0");
  EXPECT_EQ(nodes[1]->attr_float("alpha", 0), 0.1);  // the decimal the exporter wrote

  const ir::Node* fill_node = nodes[2];
  EXPECT_EQ(fill_node->name(), "fill");
  const ir::Value* shape = fill_node->input(0);
  ASSERT_TRUE(shape->is_constant());
  EXPECT_EQ(shape->type().str(), "i64[2]");
  EXPECT_EQ(std::vector<int64_t>(shape->data().as<int64_t>().begin(), shape->data().as<int64_t>().end()),
            (std::vector<int64_t>{2, 3}));
  const auto* t = std::get_if<ir::TensorAttr>(fill_node->attr("value"));
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->type.str(), "f32[1]");
  EXPECT_EQ(std::vector<uint8_t>(t->data.data(), t->data.data() + t->data.size()), float_bytes({1.5f}));
  EXPECT_EQ(fill_node->output()->type().str(), "f32[2,3]");
}

TEST(OnnxImporter, TypedFieldsBecomeLittleEndianBytes) {
  TempDir dir;
  ModelBuilder m;
  m.input("X", kF32, {1});
  m.output("Y", kF32, {1});
  m.node("Relu", {"X"}, {"Y"});
  auto* i8 = m.initializer("i8", onnx::TensorProto_DataType_INT8, {2});
  i8->add_int32_data(-1);
  i8->add_int32_data(2);
  m.initializer("f16", onnx::TensorProto_DataType_FLOAT16, {1})->add_int32_data(0x3c00);
  auto* flags = m.initializer("flags", onnx::TensorProto_DataType_BOOL, {2});
  flags->add_int32_data(0);
  flags->add_int32_data(3);
  m.initializer("i64", onnx::TensorProto_DataType_INT64, {})->add_int64_data(-2);
  m.initializer("u32", onnx::TensorProto_DataType_UINT32, {1})->add_uint64_data(7);
  m.initializer("f64", onnx::TensorProto_DataType_DOUBLE, {1})->add_double_data(0.25);
  auto g = import_onnx_file(m.save(dir / "typed.onnx"));

  EXPECT_EQ(bytes_of(g->find_value("i8")), (std::vector<uint8_t>{0xff, 0x02}));
  EXPECT_EQ(g->find_value("f16")->type().str(), "f16[1]");
  EXPECT_EQ(bytes_of(g->find_value("f16")), (std::vector<uint8_t>{0x00, 0x3c}));
  EXPECT_EQ(bytes_of(g->find_value("flags")), (std::vector<uint8_t>{0, 1}));
  EXPECT_EQ(g->find_value("i64")->data().as<int64_t>()[0], -2);
  EXPECT_EQ(bytes_of(g->find_value("u32")), (std::vector<uint8_t>{7, 0, 0, 0}));
  EXPECT_EQ(g->find_value("f64")->data().as<double>()[0], 0.25);

  m.initializer("short", onnx::TensorProto_DataType_INT64, {2})->add_int64_data(1);
  EXPECT_THAT(import_error(m.save(dir / "short.onnx")),
              HasSubstr("initializer 'short': int64_data holds 1 values but its shape needs 2"));
}

TEST(OnnxImporter, OldIrInitializersListedAsInputsAreConstants) {
  TempDir dir;
  ModelBuilder m(3, 8);
  m.input("X", kF32, {2, 2});
  m.input("W", kF32, {2, 2});
  m.output("Y", kF32, {2, 2});
  m.raw_floats("W", {2, 2}, {1, 2, 3, 4});
  m.node("Add", {"X", "W"}, {"Y"});
  auto g = import_onnx_file(m.save(dir / "old.onnx"));
  ASSERT_EQ(g->inputs.size(), 1u);
  EXPECT_EQ(g->inputs[0]->name(), "X");
  const ir::Value* w = g->nodes()[0]->input(1);
  ASSERT_TRUE(w->is_constant());
  EXPECT_EQ(bytes_of(w), float_bytes({1, 2, 3, 4}));
}

/// X[N,3,4,4] -> Relu -> t -> Flatten -> Y, with mask[N,5] unused. The value_info of t and the
/// output use other symbols, so only shape inference can give them the sizes of X.
ModelBuilder symbolic_batch_model() {
  ModelBuilder m;
  m.input("X", kF32, {"N", 3, 4, 4});
  m.input("mask", kF32, {"N", 5});
  m.output("Y", kF32, {"batch_out", 48});
  m.value_info("t", kF32, {"unk__0", 3, 4, 4});
  m.node("Relu", {"X"}, {"t"});
  test::attr_int(m.node("Flatten", {"t"}, {"Y"}), "axis", 1);
  return m;
}

TEST(OnnxImporter, InputShapesFixSymbolicDimsAndPropagate) {
  TempDir dir;
  fs::path path = symbolic_batch_model().save(dir / "sym.onnx");
  auto dynamic = import_onnx_file(path);
  EXPECT_EQ(dynamic->inputs[0]->type().str(), "f32[N,3,4,4]");
  EXPECT_EQ(dynamic->outputs[0]->type().str(), "f32[batch_out,48]");

  auto fixed = import_onnx_file(path, with_shapes({{"X", {2, 3, 4, 4}}}));
  EXPECT_EQ(fixed->inputs[0]->type().str(), "f32[2,3,4,4]");
  EXPECT_EQ(fixed->inputs[1]->type().str(), "f32[2,5]");  // same symbol N
  EXPECT_EQ(fixed->find_value("t")->type().str(), "f32[2,3,4,4]");
  EXPECT_EQ(fixed->outputs[0]->type().str(), "f32[2,48]");
  EXPECT_TRUE(fixed->outputs[0]->shape().is_static());

  EXPECT_THAT(import_error(path, with_shapes({{"Q", {1}}})),
              HasSubstr("--input-shape 'Q': the graph has no input"));
  EXPECT_THAT(import_error(path, with_shapes({{"X", {2, 3}}})),
              HasSubstr("2 dims given, but the input has rank 4"));
  EXPECT_THAT(import_error(path, with_shapes({{"X", {2, 5, 4, 4}}})), HasSubstr("dim 1 is 3 in the model, not 5"));
}

TEST(OnnxImporter, NewIrVersionsSkipTheCheckerAndNodeOrderIsLenient) {
  TempDir dir;
  ModelBuilder m(10, 20);  // libonnx 1.12's checker rejects IR 10 outright
  m.input("X", kF32, {2});
  m.output("Y", kF32, {2});
  m.node("Relu", {"a"}, {"Y"}, "second");
  m.node("Neg", {"X"}, {"a"}, "first");
  auto g = import_onnx_file(m.save(dir / "ir10.onnx"));
  auto nodes = g->nodes();
  ASSERT_EQ(nodes.size(), 2u);
  EXPECT_EQ(nodes[0]->name(), "first");
  EXPECT_EQ(nodes[1]->name(), "second");
  EXPECT_EQ(nodes[1]->opset(), 20);
  EXPECT_EQ(g->find_value("a")->type().str(), "f32[2]");
}

TEST(OnnxImporter, CheckerErrorsAreOneLine) {
  TempDir dir;
  ModelBuilder m;
  m.input("X", kF32, {2});
  m.output("Y", kF32, {2});
  test::attr_int(m.node("Relu", {"X"}, {"Y"}, "r"), "bogus", 1);
  fs::path path = m.save(dir / "bad.onnx");
  std::string error = import_error(path);
  EXPECT_THAT(error, HasSubstr(path.string() + ": ONNX checker: "));
  EXPECT_THAT(error, HasSubstr("bogus"));
  EXPECT_EQ(error.find('\n'), std::string::npos);
}

TEST(OnnxImporter, RejectsUnsupportedDomainsAndSubgraphs) {
  TempDir dir;
  ModelBuilder m;
  m.import_opset("custom.domain", 1);
  m.input("X", kF32, {2});
  m.output("Y", kF32, {2});
  m.node("MyOp", {"X"}, {"Y"}, "foo", "custom.domain");
  fs::path path = m.save(dir / "custom.onnx");
  EXPECT_EQ(import_error(path),
            path.string() + ": node 'foo' (custom.domain::MyOp): unsupported operator domain 'custom.domain'");

  ModelBuilder s;
  s.input("C", onnx::TensorProto_DataType_BOOL, {});
  s.output("Y", kF32, {2});
  auto* node = s.node("SequenceMap", {"C"}, {"Y"}, "branch");
  auto* body = node->add_attribute();
  body->set_name("body");
  body->set_type(onnx::AttributeProto_AttributeType_GRAPH);
  body->mutable_g()->set_name("body");
  EXPECT_THAT(import_error(s.save(dir / "loop.onnx")),
              HasSubstr("node 'branch' (SequenceMap): subgraph attributes are not supported (only If's branches and Loop's "
                        "and Scan's bodies are)"));
}

TEST(OnnxImporter, AcceptsMicrosoftDomainAndListsKnownOpsets) {
  TempDir dir;
  ModelBuilder m;
  m.import_opset("com.microsoft", 1);
  m.import_opset("ai.onnx.ml", 3);
  m.import_opset("org.example", 2);
  m.input("X", kF32, {2, 4});
  m.output("Y", kF32, {2, 4});
  m.node("Gelu", {"X"}, {"Y"}, "gelu", "com.microsoft");
  auto g = import_onnx_file(m.save(dir / "ms.onnx"));
  EXPECT_EQ(g->opsets, (std::map<std::string, int64_t>{{"", 13}, {"ai.onnx.ml", 3}, {"com.microsoft", 1}}));
  const ir::Node* gelu = g->nodes().at(0);
  EXPECT_TRUE(gelu->is(ir::kMicrosoftDomain, "Gelu"));
  EXPECT_EQ(gelu->opset(), 1);
  EXPECT_EQ(gelu->output()->type().str(), "f32[2,4]");
}

TEST(OnnxImporter, UndefinedValuesNameNodeAndValue) {
  TempDir dir;
  ModelBuilder m(10, 17);
  m.input("X", kF32, {2});
  m.output("Y", kF32, {2});
  m.node("Add", {"X", "ghost"}, {"Y"}, "add");
  EXPECT_THAT(import_error(m.save(dir / "ghost.onnx")),
              HasSubstr("node 'add' (Add): input 'ghost' is not defined by any node, initializer or graph input"));
}

TEST(OnnxImporter, UnreadableFiles) {
  TempDir dir;
  EXPECT_THAT(import_error(dir / "missing.onnx"), HasSubstr("missing.onnx: no such file"));
  test::write_file(dir / "empty.onnx", {});
  EXPECT_THAT(import_error(dir / "empty.onnx"), HasSubstr("the model has no graph"));

  std::vector<float> w(4 * 3 * 3 * 3, 1.f);
  auto bytes = test::read_file(conv_relu_model(w, {1, 2, 3, 4}).save(dir / "full.onnx"));
  test::write_file(dir / "cut.onnx", std::vector<uint8_t>(bytes.begin(), bytes.begin() + bytes.size() / 2));
  EXPECT_EQ(import_error(dir / "cut.onnx"),
            (dir / "cut.onnx").string() + ": not a valid ONNX model (protobuf parse failed)");
}

// A model file's large raw_data is read in place (onnx_raw_data_in_place.h): every initializer
// and Constant has the bytes protobuf's own parse of the same file gives (the reference: import_onnx_bytes),
// including a raw_data given twice in one tensor (the last counts) and a graph field given twice
// (merged), and the large ones at 4-byte aligned offsets are views of the file, not copies.
TEST(OnnxImporter, LargeRawDataIsReadInPlaceWithTheBytesOfProtobufsParse) {
  TempDir dir;
  constexpr int64_t n = 1100;  // 4400 bytes: at least kInPlaceRawDataBytes
  auto values = [](float seed) {
    std::vector<float> v(n);
    for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = seed + 0.25f * static_cast<float>(i % 97);
    return v;
  };
  ModelBuilder m;
  m.input("x", kF32, {n});
  m.output("y", kF32, {n});
  const std::vector<std::string> large = {"a", "bb", "ccc", "dddd", "eeeee"};
  std::string prev = "x";
  for (size_t i = 0; i < large.size(); ++i) {
    m.raw_floats(large[i], {n}, values(static_cast<float>(i)));
    m.node("Add", {prev, large[i]}, {"s" + std::to_string(i)});
    prev = "s" + std::to_string(i);
  }
  m.raw_floats("small", {1}, {3.5f});  // 4 bytes: stays in the message
  auto* typed = m.initializer("typed", kF32, {n});
  for (float v : values(9.f)) typed->add_float_data(v);
  // A Constant node's large value (an attribute tensor) is left in place too.
  auto* value = test::attr_tensor(m.node("Constant", {}, {"konst"}), "value");
  value->set_data_type(kF32);
  value->add_dims(n);
  const std::vector<uint8_t> konst = float_bytes(values(40.f));
  value->set_raw_data(konst.data(), konst.size());
  m.node("Add", {prev, "small"}, {"t0"});
  m.node("Add", {"t0", "typed"}, {"t1"});
  m.node("Add", {"t1", "konst"}, {"t2"});
  m.node("Add", {"t2", "twice"}, {"y"});
  std::vector<uint8_t> file = test::read_file(m.save(dir / "base.onnx"));
  // Appended: the graph field again (protobuf merges it), holding initializer "twice" whose
  // TensorProto bytes carry raw_data twice (the second counts).
  auto tag = [](int field) { return static_cast<uint8_t>(field << 3 | 2); };
  auto with_length = [](std::vector<uint8_t> body) {
    std::vector<uint8_t> out;
    for (uint64_t v = body.size(); ; v >>= 7) {
      out.push_back(static_cast<uint8_t>((v & 0x7f) | (v >= 0x80 ? 0x80 : 0)));
      if (v < 0x80) break;
    }
    out.insert(out.end(), body.begin(), body.end());
    return out;
  };
  onnx::TensorProto first, second;
  first.set_name("twice");
  first.set_data_type(kF32);
  first.add_dims(n);
  const std::vector<uint8_t> a = float_bytes(values(20.f)), b = float_bytes(values(30.f));
  first.set_raw_data(a.data(), a.size());
  second.set_raw_data(b.data(), b.size());
  std::string tensor = first.SerializeAsString() + second.SerializeAsString();
  std::vector<uint8_t> init = with_length(std::vector<uint8_t>(tensor.begin(), tensor.end()));
  init.insert(init.begin(), tag(5));
  std::vector<uint8_t> graph = with_length(init);
  graph.insert(graph.begin(), tag(7));
  file.insert(file.end(), graph.begin(), graph.end());
  test::write_file(dir / "model.onnx", file);

  auto in_place = import_onnx_file(dir / "model.onnx");
  auto reference = import_onnx_bytes(file, dir.path());
  int aligned = 0;
  for (const std::string& name : {"a", "bb", "ccc", "dddd", "eeeee", "konst", "small", "typed", "twice"}) {
    SCOPED_TRACE(name);
    const ir::Value* got = in_place->find_value(name);
    const ir::Value* want = reference->find_value(name);
    ASSERT_TRUE(got && want);
    EXPECT_EQ(got->type().str(), want->type().str());
    EXPECT_EQ(bytes_of(got), bytes_of(want));
    if (name == "small" || name == "typed" || name == "twice") continue;
    // A large raw_data's place in the file (its bytes occur once there).
    const std::vector<uint8_t> raw = bytes_of(want);
    const auto at = std::search(file.begin(), file.end(), raw.begin(), raw.end());
    ASSERT_NE(at, file.end());
    if ((at - file.begin()) % 4 == 0) {
      ++aligned;
      EXPECT_TRUE(got->data().file_backed()) << "an aligned raw_data was copied";
    }
  }
  EXPECT_EQ(bytes_of(in_place->find_value("twice")), b);
  // Which tensors the parse left in the file: the large ones, each pointing at its bytes there.
  auto parsed = detail::parse_with_raw_data_in_place(file, "model.onnx");
  ASSERT_TRUE(parsed);
  std::vector<const onnx::TensorProto*> tensors;
  for (const auto& t : parsed->graph().initializer()) tensors.push_back(&t);
  for (const auto& node : parsed->graph().node())
    for (const auto& attr : node.attribute())
      if (attr.has_t()) tensors.push_back(&attr.t());
  int external = 0;
  for (const onnx::TensorProto* t : tensors) {
    const std::string name = t->name().empty() ? "konst" : t->name();
    SCOPED_TRACE(name);
    const bool large = name != "small" && name != "typed";
    ASSERT_EQ(t->data_location() == onnx::TensorProto_DataLocation_EXTERNAL, large);
    if (!large) continue;
    ++external;
    ASSERT_EQ(t->external_data_size(), 3);
    EXPECT_EQ(t->external_data(0).value(), "model.onnx");
    const size_t offset = std::stoull(t->external_data(1).value()), length = std::stoull(t->external_data(2).value());
    ASSERT_LE(offset + length, file.size());
    EXPECT_EQ(std::vector<uint8_t>(file.begin() + offset, file.begin() + offset + length),
              bytes_of(reference->find_value(name)));
  }
  EXPECT_EQ(external, 7);
  EXPECT_GT(aligned, 0) << "no large raw_data at an aligned offset: the view was not tested";
}

// A large weight (16 MiB and up) left in place at an offset no multiple of its element size is
// copied as it is read (hashing, writing), not whole at import: its value is derived, with the
// bytes protobuf's parse gives.
TEST(OnnxImporter, LargeUnalignedRawDataIsCopiedAsItIsRead) {
  TempDir dir;
  const int64_t n = (int64_t{16} << 20) / 4 + 5;
  std::vector<float> w(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) w[static_cast<size_t>(i)] = static_cast<float>(i % 1013) * 0.5f;
  const std::vector<uint8_t> raw = float_bytes(w);
  for (int pad = 0; pad < 4; ++pad) {
    ModelBuilder m;
    m.model.set_doc_string(std::string(static_cast<size_t>(pad), 'd'));  // (before the graph on the wire)
    m.input("x", kF32, {n});
    m.output("y", kF32, {n});
    m.raw_floats("w", {n}, w);
    m.node("Add", {"x", "w"}, {"y"});
    const fs::path path = m.save(dir / "big.onnx");
    const std::vector<uint8_t> file = test::read_file(path);
    const auto at = std::search(file.begin(), file.end(), raw.begin(), raw.begin() + 64);
    ASSERT_NE(at, file.end());
    if ((at - file.begin()) % 4 == 0) continue;  // aligned: a view (the test above)
    auto g = import_onnx_file(path);
    const ir::Value* v = g->find_value("w");
    ASSERT_TRUE(v);
    EXPECT_TRUE(v->data().is_derived());
    std::vector<uint8_t> got(v->data().size());
    v->data().read(0, got);
    EXPECT_EQ(got, raw);
    return;
  }
  FAIL() << "no padding put the weight at an unaligned offset";
}

TEST(OnnxImporter, ImportsLibonnxTestdataConv) {
  const fs::path path = "/usr/share/libonnx-testdata/data/node/test_conv_with_strides_padding/model.onnx";
  if (!fs::exists(path)) GTEST_SKIP() << "libonnx-testdata is not installed";
  auto g = import_onnx_file(path);
  EXPECT_EQ(g->name, "test_conv_with_strides_padding");
  ASSERT_EQ(g->inputs.size(), 2u);
  EXPECT_EQ(g->inputs[1]->type().str(), "f32[1,1,3,3]");
  auto nodes = g->nodes();
  ASSERT_EQ(nodes.size(), 1u);
  EXPECT_TRUE(nodes[0]->is_onnx("Conv"));
  EXPECT_EQ(nodes[0]->name(), "Conv_0");
  EXPECT_EQ(nodes[0]->opset(), 11);
  EXPECT_EQ(nodes[0]->attr_ints("strides"), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(g->outputs.at(0)->type().str(), "f32[1,1,4,3]");
}

}  // namespace
}  // namespace vkc::compiler

namespace vkc::compiler {
namespace {

// Converters (some fp16 ones) leave nodes out of order; onnxruntime sorts them, and so does vkc.
TEST(OnnxImporter, NodesOutOfOrderAreSortedAndCyclesNamed) {
  TempDir dir;
  ModelBuilder m;
  m.input("X", kF32, {4});
  m.output("Y", kF32, {4});
  m.node("Neg", {"b"}, {"Y"}, "third");
  m.node("Relu", {"a"}, {"b"}, "second");
  m.node("Abs", {"X"}, {"a"}, "first");
  auto g = import_onnx_file(m.save(dir / "unsorted.onnx"));
  std::vector<std::string> order;
  for (const ir::Node* n : g->nodes()) order.push_back(n->op_type());
  EXPECT_EQ(order, (std::vector<std::string>{"Abs", "Relu", "Neg"}));

  ModelBuilder c;
  c.input("X", kF32, {4});
  c.output("Y", kF32, {4});
  c.node("Add", {"X", "q"}, {"p"}, "p");
  c.node("Relu", {"p"}, {"q"}, "q");
  c.node("Neg", {"q"}, {"Y"}, "y");
  EXPECT_THAT(import_error(c.save(dir / "cycle.onnx")), ::testing::HasSubstr("cycle"));
}

}  // namespace
}  // namespace vkc::compiler
