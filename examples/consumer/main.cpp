// Uses the vkc library API: compiles an ONNX model in memory, inspects the result and a .pte
// compiled at build time, runs it on the cpu backend, and prints a summary.
//   vkc_consumer [MODEL.onnx [BUILT.pte]]
#include <vkc/vkc.h>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace {

#ifndef VKC_CONSUMER_MODEL
#define VKC_CONSUMER_MODEL "tiny_cnn.onnx"
#endif
#ifndef VKC_CONSUMER_PTE
#define VKC_CONSUMER_PTE ""
#endif

std::vector<uint8_t> read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

int fail(const std::vector<vkc::Diagnostic>& diagnostics) {
  for (const vkc::Diagnostic& d : diagnostics) std::fprintf(stderr, "vkc_consumer: %s\n", d.str().c_str());
  return 1;
}

void print_delegates(const char* what, const vkc::InspectReport& r) {
  for (const vkc::DelegateReport& d : r.delegates)
    std::printf("%s: delegate %zu %s%s, %zu ops, %llu payload bytes\n", what, d.index, d.backend.c_str(),
                d.called ? " (called)" : "", d.ops.size(), static_cast<unsigned long long>(d.payload_bytes));
}

}  // namespace

int main(int argc, char** argv) {
  const std::string model = argc > 1 ? argv[1] : VKC_CONSUMER_MODEL;
  const std::string built = argc > 2 ? argv[2] : VKC_CONSUMER_PTE;
  std::printf("vkc %s\n", std::string(vkc::version()).c_str());

  // Compile from memory to memory, with a progress callback.
  const std::vector<uint8_t> onnx = read_file(model);
  vkc::CompileOptions options;
  options.input_shapes["image"] = {1, 3, 32, 32};
  int phases = 0;
  const vkc::CompileResult result =
      vkc::compile(onnx, /*base_dir=*/{}, options, [&](const vkc::Progress& p) { phases += p.finished; });
  if (!result) return fail(result.diagnostics);
  std::printf("compiled %s in memory: %zu bytes, %zu/%zu nodes delegated into %zu delegate(s), %d phases\n",
              model.c_str(), result.pte.size(), result.partition.delegated, result.partition.nodes.size(),
              result.partition.delegates.size(), phases);

  const vkc::InspectResult in_memory = vkc::inspect(result.pte);
  if (!in_memory) return fail(in_memory.diagnostics);
  print_delegates("in memory", in_memory.report);

  // The .pte vkc_add_model compiled at build time.
  if (!built.empty()) {
    const vkc::InspectResult file = vkc::inspect(built);
    if (!file) return fail(file.diagnostics);
    print_delegates(built.c_str(), file.report);
    const bool same = read_file(built) == result.pte;
    std::printf("%s is %s the in-memory compile\n", built.c_str(),
                same ? "identical to" : "different from (other options?)");
  }

  // Run the in-memory program on the reference kernels with a fixed input.
  vkc::Session session = vkc::Session::open(result.pte);
  if (!session) return fail(session.diagnostics());
  std::vector<vkc::Tensor> inputs;
  for (const vkc::TensorSpec& spec : session.inputs()) {
    std::vector<float> values(static_cast<size_t>(spec.numel()));
    for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i % 17) / 17.0f - 0.5f;
    inputs.push_back(vkc::Tensor::of(spec.dtype, spec.shape, values));
  }
  const vkc::RunResult ran = session.run(inputs);
  if (!ran) return fail(ran.diagnostics);
  for (size_t o = 0; o < ran.outputs.size(); ++o) {
    double sum = 0, weighted = 0;
    for (int64_t i = 0; i < ran.outputs[o].numel(); ++i) {
      sum += ran.outputs[o].get_f(i);
      weighted += static_cast<double>(i + 1) * ran.outputs[o].get_f(i);
    }
    std::printf("output %zu: %lld values, sum %.5f, index-weighted sum %.5f\n", o,
                static_cast<long long>(ran.outputs[o].numel()), sum, weighted);
  }
  return 0;
}
