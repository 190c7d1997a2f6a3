#include "case_runner.h"

#include <fmt/format.h>
#include <onnx/onnx_pb.h>

#include <chrono>
#include <fstream>
#include <iterator>
#include <map>
#include <set>

#include "fold_inputs.h"
#include "tensor_file.h"
#include "vkc/compiler/driver.h"
#include "vkc/runtime/compare.h"
#include "vkc/runtime/executor.h"
#include "vkc/serializer/pte_reader.h"

namespace vkc::conformance {
namespace {

namespace fs = std::filesystem;
using kernels::HostTensor;

// A case that cannot be compiled: the compile error.
struct Unsupported : std::runtime_error {
  using std::runtime_error::runtime_error;
};

std::string read_file(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  if (!f) throw std::runtime_error(fmt::format("cannot open {}", p.string()));
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

// input_0.pb, input_1.pb, ... (or output_*) in index order.
std::vector<onnx::TensorProto> read_protos(const fs::path& dir, const char* prefix) {
  std::vector<onnx::TensorProto> out;
  for (size_t i = 0;; ++i) {
    const fs::path p = dir / fmt::format("{}_{}.pb", prefix, i);
    if (!fs::exists(p)) break;
    const std::string bytes = read_file(p);
    onnx::TensorProto t;
    if (!t.ParseFromString(bytes)) throw std::runtime_error(fmt::format("{} is not a TensorProto", p.string()));
    out.push_back(std::move(t));
  }
  return out;
}

void run(const fs::path& dir, const CaseOptions& opt, CaseResult& r) {
  onnx::ModelProto model;
  if (!model.ParseFromString(read_file(dir / "model.onnx"))) throw std::runtime_error("model.onnx does not parse");
  std::set<std::string> ops;
  for (const auto& n : model.graph().node()) ops.insert(n.op_type());
  r.ops.assign(ops.begin(), ops.end());

  auto check_type = [](const onnx::ValueInfoProto& v) {
    if (!v.type().has_tensor_type() || v.type().tensor_type().elem_type() == onnx::TensorProto_DataType_STRING)
      throw Unsupported(fmt::format("test data: '{}' is not a numeric tensor (sequence, optional, map or string)", v.name()));
  };
  for (const auto& v : model.graph().input()) check_type(v);
  for (const auto& v : model.graph().output()) check_type(v);

  const fs::path data = dir / "test_data_set_0";
  const std::vector<onnx::TensorProto> inputs = read_protos(data, "input"), outputs = read_protos(data, "output");
  std::set<std::string> inits;
  for (const auto& t : model.graph().initializer()) inits.insert(t.name());
  std::vector<std::string> names;  // graph inputs the test feeds, in order
  for (const auto& in : model.graph().input())
    if (!inits.count(in.name())) names.push_back(in.name());
  if (inputs.size() != names.size())
    throw std::runtime_error(fmt::format("{} input files for {} graph inputs", inputs.size(), names.size()));
  std::map<std::string, const onnx::TensorProto*> by_name;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const bool named = !inputs[i].name().empty() && std::count(names.begin(), names.end(), inputs[i].name());
    by_name[named ? inputs[i].name() : names[i]] = &inputs[i];
  }

  r.folded = weight_inputs(model);
  std::map<std::string, onnx::TensorProto> fold;
  for (const std::string& n : r.folded) fold[n] = *by_name.at(n);
  fold_inputs(model, fold);

  compiler::CompileConfig config;
  std::vector<HostTensor> feeds;
  for (const std::string& n : names) {
    if (fold.count(n)) continue;
    feeds.push_back(tools::tensor_from_proto(*by_name.at(n)));
    config.input_shapes[n] = feeds.back().shape;
  }
  const std::string model_bytes = model.SerializeAsString();
  std::vector<uint8_t> pte;
  try {
    compiler::ModelSource src;
    src.bytes = {reinterpret_cast<const uint8_t*>(model_bytes.data()), model_bytes.size()};
    src.in_memory = true;
    compiler::PteSink sink;
    sink.bytes = &pte;
    compiler::compile(src, sink, config);
  } catch (const std::exception& e) {
    throw Unsupported(e.what());
  }
  r.compiled = true;

  auto backend = runtime::make_backend(opt.backend);
  auto exec = runtime::Executor::from_pte(serializer::read_pte_bytes(pte), *backend);
  const std::vector<HostTensor> got = exec.run(feeds);
  if (got.size() != outputs.size())
    throw std::runtime_error(fmt::format("{} outputs, {} expected", got.size(), outputs.size()));
  std::string worst;
  r.status = Status::Pass;
  for (size_t i = 0; i < got.size(); ++i) {
    const HostTensor want = tools::tensor_from_proto(outputs[i]);
    const runtime::Comparison c = runtime::compare(got[i], want, opt.rtol, opt.atol);
    r.max_abs = std::max(r.max_abs, c.max_abs);
    r.max_rel = std::max(r.max_rel, c.max_rel);
    if (!c.pass() && r.status == Status::Pass) {
      r.status = Status::Fail;
      worst = c.shape_matches ? fmt::format("output {}: {} of {} elements differ", i, c.mismatches, want.numel())
                              : fmt::format("output {}: {} vs expected {}", i, runtime::describe(got[i]),
                                            runtime::describe(want));
    }
  }
  r.detail = fmt::format("max abs err {:.3g}, max rel err {:.3g}{}", r.max_abs, r.max_rel,
                         worst.empty() ? "" : "; " + worst);
}

}  // namespace

const char* status_name(Status s) {
  switch (s) {
    case Status::Pass: return "pass";
    case Status::Fail: return "fail";
    case Status::Unsupported: return "unsupported";
  }
  return "?";
}

CaseResult run_case(const fs::path& dir, const CaseOptions& options) {
  CaseResult r;
  r.folder = dir.parent_path().filename().string();
  r.name = dir.filename().string();
  const auto t0 = std::chrono::steady_clock::now();
  try {
    run(dir, options, r);
  } catch (const Unsupported& e) {
    r.status = Status::Unsupported;
    r.detail = e.what();
  } catch (const std::exception& e) {  // test data the harness cannot read counts as unsupported
    r.status = r.compiled ? Status::Fail : Status::Unsupported;
    r.detail = r.compiled ? e.what() : std::string("test data: ") + e.what();
  }
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

}  // namespace vkc::conformance
