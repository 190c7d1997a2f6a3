// fuzz_executor: the executor on the cpu backend, fed programs from mutated .pte bytes: open a
// session, make zero inputs of the declared specs (when their size is sane) and run once.
#include <cstdint>
#include <span>
#include <vector>

#include "vkc/kernels/host_tensor.h"
#include "vkc/vkc.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // The fuzzer's memory: no tensor a program computes may take more than 1 GiB here (a program
  // that declares huge tensors raises the executor's own limit, never this one).
  const vkc::kernels::AllocationLimit cap(uint64_t{1} << 30);
  vkc::RunOptions ro;
  ro.backend = "cpu";
  vkc::Session s = vkc::Session::open(std::span<const uint8_t>(data, size), ro);
  if (!s.ok()) return 0;
  std::vector<vkc::Tensor> inputs;
  int64_t total = 0;
  for (const auto& spec : s.inputs()) {
    const int64_t n = spec.numel();
    if (n < 0 || n > (1 << 20) || (total += n) > (1 << 22)) return 0;
    inputs.push_back(vkc::Tensor::zeros(spec.dtype, spec.shape));
  }
  (void)s.run(inputs);
  return 0;
}
