// fuzz_ptd: .ptd bytes (ExecuTorch's external data file) through the reader, and what it accepts
// written again and read back: the same keys and bytes.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <span>

#include "vkc/serializer/errors.h"
#include "vkc/serializer/ptd.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace vkc::serializer;
  PtdFile f;
  try {
    f = read_ptd_bytes(std::span<const uint8_t>(data, size));
  } catch (const SerializeError&) {
    return 0;
  }
  const std::vector<uint8_t> again = serialize_ptd(f.named_data);
  const PtdFile g = read_ptd_bytes(again);
  if (g.named_data.size() != f.named_data.size()) std::abort();
  for (size_t i = 0; i < g.named_data.size(); ++i)
    if (g.named_data[i].key != f.named_data[i].key || g.named_data[i].data.size() != f.named_data[i].data.size() ||
        (g.named_data[i].data.size() &&
         std::memcmp(g.named_data[i].data.data(), f.named_data[i].data.data(), g.named_data[i].data.size()) != 0))
      std::abort();
  return 0;
}
