// Uses vkc::runtime alone (no ONNX, no compiler): loads a .pte, runs it on the cpu backend with
// the same fixed input as vkc_consumer, and prints its outputs' sums.
//   vkc_runner BUILT.pte
#include <vkc/runtime/executor.h>

#include <cstdio>
#include <exception>
#include <vector>

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: vkc_runner FILE.pte\n");
    return 2;
  }
  try {
    auto backend = vkc::runtime::make_backend("cpu");
    auto exec = vkc::runtime::Executor::load(argv[1], *backend);
    std::vector<vkc::kernels::HostTensor> inputs;
    for (const vkc::runtime::TensorSpec& spec : exec.inputs()) {
      std::vector<float> values(static_cast<size_t>(spec.numel()));
      for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i % 17) / 17.0f - 0.5f;
      inputs.push_back(vkc::kernels::HostTensor::of(spec.dtype, spec.shape, values));
    }
    const auto outputs = exec.run(inputs);
    for (size_t o = 0; o < outputs.size(); ++o) {
      double sum = 0, weighted = 0;
      for (int64_t i = 0; i < outputs[o].numel(); ++i) {
        sum += outputs[o].get_f(i);
        weighted += static_cast<double>(i + 1) * outputs[o].get_f(i);
      }
      std::printf("output %zu: %lld values, sum %.5f, index-weighted sum %.5f\n", o,
                  static_cast<long long>(outputs[o].numel()), sum, weighted);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "vkc_runner: %s\n", e.what());
    return 1;
  }
  return 0;
}
