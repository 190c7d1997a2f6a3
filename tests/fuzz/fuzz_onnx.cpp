// fuzz_onnx: ONNX model bytes through the importer and the whole pass pipeline to .pte bytes
// (vkc::compile). Any input must end in a result or diagnostics: no crash, no sanitizer report.
#include <cstdint>
#include <filesystem>
#include <span>

#include "vkc/vkc.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  vkc::CompileOptions o;
  // External data is resolved under a folder that does not exist: nothing is read from disk.
  (void)vkc::compile(std::span<const uint8_t>(data, size), "/nonexistent-vkc-fuzz", o);
  return 0;
}
