#include "vkc/serializer/pte_reader.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "flatbuffer_util.h"
#include "le_bytes.h"
#include "mapped_file.h"
#include "program_checks.h"
#include "program_codec.h"

namespace vkc::serializer {
namespace {

namespace fb = executorch_flatbuffer;
using detail::get_le;

constexpr std::string_view kCorrupt = "corrupt .pte: ";

[[noreturn]] void fail(const std::string& what) { throw SerializeError(fmt::format("{}{}", kCorrupt, what)); }

/// Fills program_size, segment_base_offset and segment_data_size from the
/// eh00 header at byte 8, or treats the whole file as the program without one.
void read_extended_header(std::span<const uint8_t> bytes, PteFile& pte) {
  if (bytes.size() < 8) fail(fmt::format("file is {} bytes, too small to hold a program", bytes.size()));
  if (bytes.size() < 16 || std::memcmp(bytes.data() + 8, "eh00", 4) != 0) {
    pte.program_size = bytes.size();
    return;
  }
  const uint32_t length = get_le<uint32_t>(bytes.data() + 12);
  if (length < 24) fail(fmt::format("extended header length {} < 24", length));
  const bool has_data_size = length >= 32;
  if (bytes.size() < 8 + (has_data_size ? 32u : 24u)) fail("file ends inside the extended header");
  pte.program_size = get_le<uint64_t>(bytes.data() + 16);
  pte.segment_base_offset = get_le<uint64_t>(bytes.data() + 24);
  pte.segment_data_size = has_data_size ? get_le<uint64_t>(bytes.data() + 32) : 0;
  if (pte.program_size > bytes.size())
    fail(fmt::format("program size {} exceeds file size {}", pte.program_size, bytes.size()));
  if (pte.segment_base_offset != 0 && pte.segment_base_offset < pte.program_size)
    fail(fmt::format("segment base offset {} lies inside the program (size {})", pte.segment_base_offset,
                     pte.program_size));
  if (pte.segment_base_offset > bytes.size() || pte.segment_data_size > bytes.size() - pte.segment_base_offset)
    fail(fmt::format("segment data [offset {}, size {}] exceeds file size {}", pte.segment_base_offset,
                     pte.segment_data_size, bytes.size()));
}

/// Reads segments and range-checks each against the file.
void read_segments(const fb::Program& root, PteFile& pte) {
  if (!root.segments()) return;
  for (const fb::DataSegment* s : *root.segments()) {
    const uint64_t start = pte.segment_base_offset + s->offset();
    if (start < s->offset() || start > pte.file_size || s->size() > pte.file_size - start)
      fail(fmt::format("segment {} [offset {}, size {}] exceeds file size {}", pte.segments.size(),
                       s->offset() + pte.segment_base_offset, s->size(), pte.file_size));
    pte.segments.push_back({s->offset(), s->size()});
  }
}

class ProgramReader {
 public:
  ProgramReader(std::span<const uint8_t> bytes, std::shared_ptr<const void> keepalive, PteFile& pte)
      : bytes_(bytes), keepalive_(std::move(keepalive)), pte_(pte) {}

  ir::TensorData segment(uint64_t index, const std::string& user) const {
    if (index >= pte_.segments.size())
      fail(fmt::format("{} refers to segment {} of {}", user, index, pte_.segments.size()));
    const SegmentInfo& s = pte_.segments[index];
    return view(pte_.segment_base_offset + s.offset, s.size);
  }

  ir::TensorData view(uint64_t offset, uint64_t size) const {
    return ir::TensorData::view(keepalive_, bytes_.data() + offset, size);
  }

  void read(const fb::Program& root) {
    read_constant_offsets(root);
    for (uint32_t p = 0; root.execution_plan() && p < root.execution_plan()->size(); ++p) {
      auto delegate_data = [&](const fb::BackendDelegateDataReference& ref, size_t d) {
        return delegate_bytes(root, ref, fmt::format("plan {} delegate {}", p, d));
      };
      pte_.program.plans.push_back(detail::decode_plan(*root.execution_plan()->Get(p), delegate_data));
    }
    if (root.named_data())
      for (const fb::NamedData* n : *root.named_data()) {
        std::string key = detail::to_string(n->key());
        ir::TensorData data = segment(n->segment_index(), fmt::format("named data '{}'", key));
        pte_.program.named_data.push_back({std::move(key), std::move(data)});
      }
    read_constants();
  }

 private:
  ir::TensorData delegate_bytes(const fb::Program& root, const fb::BackendDelegateDataReference& ref,
                                const std::string& user) const {
    if (ref.location() == fb::DataLocation::SEGMENT) return segment(ref.index(), user);
    if (ref.location() != fb::DataLocation::INLINE)
      fail(fmt::format("{} has unknown data location {}", user, int(ref.location())));
    const auto* inline_data = root.backend_delegate_data();
    const size_t count = inline_data ? inline_data->size() : 0;
    if (ref.index() >= count) fail(fmt::format("{} refers to inline data {} of {}", user, ref.index(), count));
    const auto* data = inline_data->Get(ref.index())->data();
    if (!data) return {};
    return view(data->data() - bytes_.data(), data->size());
  }

  void read_constant_offsets(const fb::Program& root) {
    const fb::SubsegmentOffsets* cs = root.constant_segment();
    if (!cs) fail("constant_segment is missing");
    if (!cs->offsets() || cs->offsets()->size() == 0) fail("constant_segment has no offsets");
    if (cs->segment_index() >= pte_.segments.size())
      fail(fmt::format("constant_segment refers to segment {} of {}", cs->segment_index(), pte_.segments.size()));
    pte_.constant_segment_index = int(cs->segment_index());
    pte_.constant_offsets = detail::to_vector<uint64_t>(cs->offsets());
    const uint64_t size = pte_.segments[cs->segment_index()].size;
    for (size_t k = 1; k < pte_.constant_offsets.size(); ++k) {
      const uint64_t offset = pte_.constant_offsets[k];
      if (offset > size || (k > 1 && offset < pte_.constant_offsets[k - 1]))
        fail(fmt::format("constant {} offset {} is out of order or past the constant segment size {}", k, offset,
                         size));
    }
  }

  // Constant k spans [offsets[k], offsets[k+1]) (the last one to the segment
  // end), padding included; trim it to the bytes its tensors read.
  void read_constants() {
    const size_t count = pte_.constant_offsets.size() - 1;
    std::vector<uint64_t> needed(count + 1, 0);
    std::vector<bool> sized(count + 1, false);
    for (const ExecutionPlan& plan : pte_.program.plans) {
      detail::check_plan(plan, count, std::string(kCorrupt));
      for (const EtValue& v : plan.values) {
        const auto* t = std::get_if<EtTensor>(&v);
        if (!t || t->data_buffer_idx == 0) continue;
        if (std::optional<uint64_t> n = detail::tensor_nbytes(*t)) {
          needed[t->data_buffer_idx] = std::max(needed[t->data_buffer_idx], *n);
          sized[t->data_buffer_idx] = true;
        }
      }
    }
    const SegmentInfo& segment = pte_.segments[pte_.constant_segment_index];
    for (size_t k = 1; k <= count; ++k) {
      const uint64_t begin = pte_.constant_offsets[k];
      const uint64_t end = k < count ? pte_.constant_offsets[k + 1] : segment.size;
      if (sized[k] && needed[k] > end - begin)
        fail(fmt::format("constant {} needs {} bytes but holds {}", k, needed[k], end - begin));
      const uint64_t size = sized[k] ? needed[k] : end - begin;
      pte_.program.constants.push_back(view(pte_.segment_base_offset + segment.offset + begin, size));
    }
  }

  std::span<const uint8_t> bytes_;
  std::shared_ptr<const void> keepalive_;
  PteFile& pte_;
};

}  // namespace

PteFile read_pte_bytes(std::span<const uint8_t> bytes, std::shared_ptr<const void> keepalive) {
  // Flatbuffer reads are aligned only if the buffer itself is; copy if not.
  if (reinterpret_cast<uintptr_t>(bytes.data()) % alignof(std::max_align_t) != 0) {
    auto copy = std::make_shared<std::vector<std::max_align_t>>(
        (bytes.size() + sizeof(std::max_align_t) - 1) / sizeof(std::max_align_t));
    std::memcpy(copy->data(), bytes.data(), bytes.size());
    return read_pte_bytes({reinterpret_cast<const uint8_t*>(copy->data()), bytes.size()}, copy);
  }
  PteFile pte;
  pte.file_size = bytes.size();
  read_extended_header(bytes, pte);
  try {
    detail::verify_flatbuffer(bytes.first(pte.program_size), fb::ProgramIdentifier(),
                              [](flatbuffers::Verifier& v) { return fb::VerifyProgramBuffer(v); }, "program");
  } catch (const SerializeError& e) {
    fail(e.what());
  }
  const fb::Program& root = *fb::GetProgram(bytes.data());
  read_segments(root, pte);
  try {
    ProgramReader(bytes, std::move(keepalive), pte).read(root);
  } catch (const SerializeError& e) {
    const std::string message = e.what();
    if (message.starts_with(kCorrupt)) throw;
    fail(message);
  }
  return pte;
}

PteFile read_pte(const std::filesystem::path& path) {
  try {
    const detail::MappedFile file = detail::map_file(path);
    if (file.bytes.empty()) fail("file is empty");
    return read_pte_bytes(file.bytes, file.keepalive);
  } catch (const SerializeError& e) {
    throw SerializeError(fmt::format("{}: {}", path.string(), e.what()));
  }
}

}  // namespace vkc::serializer
