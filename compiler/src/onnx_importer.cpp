// Entry points: parse the ModelProto, then check -> fix input shapes -> infer shapes -> build.
#include "vkc/compiler/onnx_importer.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <onnx/onnx_pb.h>

#include <cerrno>
#include <climits>
#include <cstring>
#include <thread>

#include "dim_solver.h"
#include "external_data.h"
#include "onnx_graph_builder.h"
#include "onnx_model_checks.h"
#include "onnx_raw_data_in_place.h"
#include "onnx_input_values.h"
#include "onnx_shape_inference.h"
#include "onnx_tensor.h"

namespace vkc::compiler {

namespace fs = std::filesystem;
namespace pbio = google::protobuf::io;
using namespace detail;

namespace {

/// A serialized protobuf message is at most 2 GB; bigger weights must be external data.
constexpr uint64_t kMaxProtoBytes = INT_MAX;

void parse(pbio::ZeroCopyInputStream& stream, onnx::ModelProto& model) {
  pbio::CodedInputStream coded(&stream);
  coded.SetTotalBytesLimit(static_cast<int>(kMaxProtoBytes));  // the default (64 MB in old releases) is too small
  if (!model.ParseFromCodedStream(&coded) || !coded.ConsumedEntireMessage())
    throw ImportError("not a valid ONNX model (protobuf parse failed)");
}

std::shared_ptr<onnx::ModelProto> parse_file(const fs::path& path, ExternalData& external) {
  std::error_code ec;
  if (!fs::exists(path, ec)) throw ImportError("no such file");
  if (!fs::is_regular_file(path, ec)) throw ImportError("not a regular file");
  const uint64_t size = fs::file_size(path, ec);
  if (!ec && size > kMaxProtoBytes)
    throw ImportError(fmt::format(
        "the file has {} bytes, more than a protobuf message can hold (2 GB); store the weights as external data",
        size));
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw ImportError(fmt::format("cannot open: {}", std::strerror(errno)));
  // From a mapping of the file, the large initializers' raw_data left in place (read from the
  // mapping as the model's own external data, not copied into the message): mobilenet_v2's 14 MB
  // import took 8 ms less.
  try {
    const std::span<const uint8_t> bytes = external.adopt_model_file(path, path.filename().string());
    if (auto model = parse_with_raw_data_in_place(bytes, path.filename().string())) {
      ::close(fd);
      return model;
    }
  } catch (const ImportError&) {
    // (the ordinary parse below reports what is wrong)
  }
  auto model = std::make_shared<onnx::ModelProto>();
  pbio::FileInputStream stream(fd, 1 << 20);
  stream.SetCloseOnDelete(true);
  parse(stream, *model);
  return model;
}


std::shared_ptr<onnx::ModelProto> parse_bytes(std::span<const uint8_t> bytes) {
  if (bytes.size() > kMaxProtoBytes)
    throw ImportError(fmt::format("{} bytes is more than a protobuf message can hold (2 GB)", bytes.size()));
  pbio::ArrayInputStream stream(bytes.data(), static_cast<int>(bytes.size()));
  auto model = std::make_shared<onnx::ModelProto>();
  parse(stream, *model);
  return model;
}

std::unique_ptr<ir::Graph> import_model(std::shared_ptr<onnx::ModelProto> model, const fs::path& model_dir,
                                        ExternalData& external, const ImportOptions& options) {
  if (!model->has_graph()) throw ImportError("the model has no graph");
  sort_nodes(*model->mutable_graph());  // some converters leave nodes out of order
  adopt_onnxruntime_onnx_domain_ops(*model);
  const onnx::GraphProto& proto = model->graph();
  if (proto.output_size() == 0) throw ImportError(fmt::format("graph '{}' has no outputs", proto.name()));

  auto graph = std::make_unique<ir::Graph>();
  if (!proto.name().empty()) graph->name = proto.name();
  graph->opsets = listed_opsets(*model);
  const std::vector<std::string> node_names = unique_node_names(proto);
  check_supported_nodes(proto, node_names, graph->opsets);
  std::map<std::string, int64_t> dims = options.dims;
  if (options.kv_cache_len > 0) fix_kv_cache_dims(*model, options.kv_cache_len, dims);
  const InputSymbols symbols = input_symbols(*model);
  std::map<std::string, int64_t> given = dims;  // and what --input-shape fixes
  for (const auto& [where, sym] : symbols)
    if (auto it = options.input_shapes.find(where.first); it != options.input_shapes.end() && where.second < static_cast<int>(it->second.size()))
      given.emplace(sym, it->second[where.second]);
  apply_input_shapes(*model, options.input_shapes, dims, options.unmatched_dims);
  detail::bind_input_values(*model, options.input_values);  // in the shapes just fixed

  // Initializers are read (and external data resolved, confined and mapped) before the ONNX
  // checker runs, so that vkc's own, more precise errors about external data come first.
  TensorReader reader(model, external);
  std::vector<ir::TensorAttr> initializers = read_initializers(proto, reader);
  run_onnx_checker(*model, model_dir);

  inline_external_shape_data(*model->mutable_graph(), initializers);
  const auto onnx_opset = graph->opsets.find(std::string(ir::kOnnxDomain));
  check_structure(proto, node_names, onnx_opset == graph->opsets.end() ? 1 : onnx_opset->second);
  infer_shapes(*model, node_names);
  // Symbols the graph fixes (onnxruntime-genai's kv_cache_dim): solved, then inferred again.
  if (const auto solved = solve_symbolic_dims(*model, symbols, given); !solved.empty()) {
    apply_input_shapes(*model, {}, solved);
    infer_shapes(*model, node_names);
  }

  build_graph(proto, node_names, std::move(initializers), reader, *graph);
  graph->keepalive.push_back(model);
  for (auto& mapping : external.mappings()) graph->keepalive.push_back(std::move(mapping));
  return graph;
}

/// Runs `body`, prefixing the ImportErrors it throws with `source` (the model file).
template <typename Body>
std::unique_ptr<ir::Graph> with_source(const std::string& source, Body body) {
  try {
    return body();
  } catch (const ImportError& e) {
    throw ImportError(source + ": " + e.what());
  }
}

}  // namespace

std::unique_ptr<ir::Graph> import_onnx_file(const fs::path& model, const ImportOptions& options) {
  std::jthread schemas(warm_schema_registry);  // beside the parse; the checker waits for it if need be
  return with_source(model.string(), [&] {
    const fs::path dir = fs::absolute(model).parent_path();
    ExternalData external(dir);
    return import_model(parse_file(model, external), dir, external, options);
  });
}

std::unique_ptr<ir::Graph> import_onnx_bytes(std::span<const uint8_t> bytes, const fs::path& base_dir,
                                             const ImportOptions& options) {
  std::jthread schemas(warm_schema_registry);
  return with_source("<model bytes>", [&] {
    ExternalData external(base_dir);
    return import_model(parse_bytes(bytes), base_dir, external, options);
  });
}

}  // namespace vkc::compiler
