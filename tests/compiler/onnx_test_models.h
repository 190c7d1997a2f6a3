// Helpers for importer tests: build ONNX models with the protobuf API, write them to a temp dir.
#pragma once

#include <onnx/onnx_pb.h>
#include <stdlib.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <variant>
#include <vector>

namespace vkc::test {

namespace fs = std::filesystem;

constexpr int32_t kF32 = onnx::TensorProto_DataType_FLOAT;

/// A fresh directory, removed with its contents when it goes out of scope.
class TempDir {
 public:
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "vkc-importer-XXXXXX").string();
    if (!mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed");
    path_ = tmpl;
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const fs::path& path() const { return path_; }
  fs::path operator/(const std::string& name) const { return path_ / name; }

 private:
  fs::path path_;
};

/// A dimension of a declared tensor type: a size or a symbol.
using DimSpec = std::variant<int64_t, std::string>;

inline std::vector<uint8_t> float_bytes(const std::vector<float>& values) {
  std::vector<uint8_t> out(values.size() * sizeof(float));
  std::memcpy(out.data(), values.data(), out.size());
  return out;
}

inline void write_file(const fs::path& path, const std::vector<uint8_t>& bytes) {
  std::ofstream f(path, std::ios::binary);
  f.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

inline std::vector<uint8_t> read_file(const fs::path& path) {
  std::ifstream f(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

inline void attr_ints(onnx::NodeProto* node, const std::string& name, const std::vector<int64_t>& values) {
  auto* a = node->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto_AttributeType_INTS);
  for (int64_t v : values) a->add_ints(v);
}

inline void attr_int(onnx::NodeProto* node, const std::string& name, int64_t value) {
  auto* a = node->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto_AttributeType_INT);
  a->set_i(value);
}

inline void attr_float(onnx::NodeProto* node, const std::string& name, float value) {
  auto* a = node->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto_AttributeType_FLOAT);
  a->set_f(value);
}

inline void attr_floats(onnx::NodeProto* node, const std::string& name, const std::vector<float>& values) {
  auto* a = node->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto_AttributeType_FLOATS);
  for (float v : values) a->add_floats(v);
}

inline void attr_string(onnx::NodeProto* node, const std::string& name, const std::string& value) {
  auto* a = node->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto_AttributeType_STRING);
  a->set_s(value);
}

/// The tensor of a TENSOR attribute `name` added to `node`.
inline onnx::TensorProto* attr_tensor(onnx::NodeProto* node, const std::string& name) {
  auto* a = node->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto_AttributeType_TENSOR);
  return a->mutable_t();
}

/// A ModelProto with one default-domain opset import and a named graph.
struct ModelBuilder {
  explicit ModelBuilder(int64_t ir_version = 8, int64_t opset = 13) {
    model.set_ir_version(ir_version);
    model.set_producer_name("vkc-importer-test");
    import_opset("", opset);
    graph()->set_name("test_graph");
  }

  onnx::GraphProto* graph() { return model.mutable_graph(); }

  /// The serialized model.
  std::vector<uint8_t> bytes() const {
    std::string s;
    EXPECT_TRUE(model.SerializeToString(&s));
    return {s.begin(), s.end()};
  }

  void import_opset(const std::string& domain, int64_t version) {
    auto* op = model.add_opset_import();
    op->set_domain(domain);
    op->set_version(version);
  }

  static void set_type(onnx::ValueInfoProto* info, const std::string& name, int32_t elem_type,
                       const std::vector<DimSpec>& dims) {
    info->set_name(name);
    auto* tensor = info->mutable_type()->mutable_tensor_type();
    tensor->set_elem_type(elem_type);
    auto* shape = tensor->mutable_shape();
    for (const auto& d : dims) {
      if (auto* v = std::get_if<int64_t>(&d))
        shape->add_dim()->set_dim_value(*v);
      else
        shape->add_dim()->set_dim_param(std::get<std::string>(d));
    }
  }
  void input(const std::string& name, int32_t elem_type, const std::vector<DimSpec>& dims) {
    set_type(graph()->add_input(), name, elem_type, dims);
  }
  void output(const std::string& name, int32_t elem_type, const std::vector<DimSpec>& dims) {
    set_type(graph()->add_output(), name, elem_type, dims);
  }
  void value_info(const std::string& name, int32_t elem_type, const std::vector<DimSpec>& dims) {
    set_type(graph()->add_value_info(), name, elem_type, dims);
  }

  onnx::NodeProto* node(const std::string& op, const std::vector<std::string>& inputs,
                        const std::vector<std::string>& outputs, const std::string& name = "",
                        const std::string& domain = "") {
    auto* n = graph()->add_node();
    n->set_op_type(op);
    n->set_name(name);
    n->set_domain(domain);
    for (const auto& i : inputs) n->add_input(i);
    for (const auto& o : outputs) n->add_output(o);
    return n;
  }

  /// An initializer with name, type and dims but no data yet.
  onnx::TensorProto* initializer(const std::string& name, int32_t elem_type, const std::vector<int64_t>& dims) {
    auto* t = graph()->add_initializer();
    t->set_name(name);
    t->set_data_type(elem_type);
    for (int64_t d : dims) t->add_dims(d);
    return t;
  }
  onnx::TensorProto* raw_floats(const std::string& name, const std::vector<int64_t>& dims,
                                const std::vector<float>& values) {
    auto* t = initializer(name, kF32, dims);
    auto bytes = float_bytes(values);
    t->set_raw_data(bytes.data(), bytes.size());
    return t;
  }
  /// An initializer whose data lies in `location` at [offset, offset + length).
  onnx::TensorProto* external(const std::string& name, int32_t elem_type, const std::vector<int64_t>& dims,
                              const std::string& location, uint64_t offset, uint64_t length) {
    auto* t = initializer(name, elem_type, dims);
    t->set_data_location(onnx::TensorProto_DataLocation_EXTERNAL);
    for (const auto& [key, value] : {std::pair<std::string, std::string>{"location", location},
                                     {"offset", std::to_string(offset)},
                                     {"length", std::to_string(length)}}) {
      auto* e = t->add_external_data();
      e->set_key(key);
      e->set_value(value);
    }
    return t;
  }

  fs::path save(const fs::path& path) const {
    std::string bytes;
    if (!model.SerializeToString(&bytes)) throw std::runtime_error("SerializeToString failed");
    std::ofstream(path, std::ios::binary) << bytes;
    return path;
  }

  onnx::ModelProto model;
};

}  // namespace vkc::test
