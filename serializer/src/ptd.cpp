#include "vkc/serializer/ptd.h"
#include "vkc/serializer/sha256.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <cstring>
#include <set>

#include "file_writer.h"
#include "flatbuffer_util.h"
#include "le_bytes.h"
#include "mapped_file.h"
#include "vkc/schema/flat_tensor_generated.h"
#include "vkc/serializer/errors.h"
#include "vkc/serializer/io_names.h"

namespace vkc::serializer {
namespace {

namespace ft = vkc_flat_tensor;
using detail::align_up;
using detail::get_le;
using detail::Piece;
using detail::put_le;

constexpr uint64_t kSegmentAlignment = 128;  // ExecuTorch's default (FlatTensorConfig)
constexpr uint64_t kHeaderLength = 40;       // FH01, its length, four u64
constexpr uint64_t kPaddedHeader = 48;       // the header padded to the flatbuffer's 16-byte alignment
constexpr uint32_t kVersion = 0;

struct PtdBytes {
  std::vector<uint8_t> head;
  std::vector<Piece> pieces;
  std::vector<std::string> placeholders;
};

PtdBytes assemble(const std::vector<NamedData>& named) {
  flatbuffers::FlatBufferBuilder fbb;
  std::vector<flatbuffers::Offset<ft::DataSegment>> segments;
  std::vector<flatbuffers::Offset<ft::NamedData>> entries;
  std::vector<Piece> pieces;
  std::vector<std::string> placeholders;
  std::set<std::string> keys;
  uint64_t size = 0;
  for (const NamedData& n : named) {
    if (!keys.insert(n.key).second) throw SerializeError(fmt::format("external data key '{}' is given twice", n.key));
    const uint64_t offset = align_up(size, kSegmentAlignment);
    if (offset > size) pieces.push_back(Piece::zeros(offset - size));
    Piece piece = Piece::of(n.data);
    if (n.deferred) {  // hashed as it is written
      piece.hash_slot = static_cast<int32_t>(placeholders.size());
      placeholders.push_back(n.key);
    }
    pieces.push_back(piece);
    entries.push_back(ft::CreateNamedData(fbb, fbb.CreateString(n.key), uint32_t(segments.size())));
    segments.push_back(ft::CreateDataSegment(fbb, offset, n.data.size()));
    size = offset + n.data.size();
  }
  const auto root = ft::CreateFlatTensor(fbb, kVersion, fbb.CreateVector(segments), fbb.CreateVector(entries));
  fbb.Finish(root, ft::FlatTensorIdentifier());
  const std::span<const uint8_t> fb(fbb.GetBufferPointer(), fbb.GetSize());
  if (fb.size() >= FLATBUFFERS_MAX_BUFFER_SIZE) throw SerializeError("the external data's index exceeds 2 GiB");

  // The header goes in after the root offset and identifier; the root offset grows by its padded size.
  const uint64_t segment_base = align_up(kPaddedHeader + fb.size(), kSegmentAlignment);
  std::vector<uint8_t> head;
  head.reserve(segment_base);
  put_le<uint32_t>(head, get_le<uint32_t>(fb.data()) + uint32_t(kPaddedHeader));
  head.insert(head.end(), fb.begin() + 4, fb.begin() + 8);
  head.insert(head.end(), {'F', 'H', '0', '1'});
  put_le<uint32_t>(head, uint32_t(kHeaderLength));
  put_le<uint64_t>(head, kPaddedHeader);  // flatbuffer_offset
  put_le<uint64_t>(head, fb.size());       // flatbuffer_size
  put_le<uint64_t>(head, segment_base);
  put_le<uint64_t>(head, size);
  head.resize(8 + kPaddedHeader, 0);
  head.insert(head.end(), fb.begin() + 8, fb.end());
  head.resize(segment_base, 0);
  return {std::move(head), std::move(pieces), std::move(placeholders)};
}

ResolvedKeys resolved_keys(const std::vector<std::string>& placeholders, const std::vector<std::string>& digests) {
  ResolvedKeys r;
  for (size_t i = 0; i < placeholders.size(); ++i) r[placeholders[i]] = digests.at(i);
  return r;
}

[[noreturn]] void corrupt(const std::string& what) { throw SerializeError("corrupt .ptd: " + what); }

std::vector<std::string> fixed_keys(const std::vector<NamedData>& named) {
  std::vector<std::string> keys;
  for (const NamedData& n : named)
    if (!n.deferred) keys.push_back(n.key);
  return keys;
}

// `named` with its deferred keys hashed first (KeysCollide's way out).
std::vector<NamedData> with_hashed_keys(const std::vector<NamedData>& named, const ResolvedKeys& keys) {
  std::vector<NamedData> out;
  std::set<std::string> seen;
  for (const NamedData& n : named) {
    const auto it = n.deferred ? keys.find(n.key) : keys.end();
    const std::string& key = it == keys.end() ? n.key : it->second;
    if (seen.insert(key).second) out.push_back({key, n.data});  // equal constants: one entry
  }
  return out;
}


}  // namespace


ResolvedKeys hash_deferred_keys(const std::vector<NamedData>& named) {
  ResolvedKeys keys;
  for (const NamedData& n : named)
    if (n.deferred) keys[n.key] = sha256_hex_of(n.data);
  return keys;
}

ResolvedKeys write_ptd(const std::vector<NamedData>& named, const std::filesystem::path& out) {
  const PtdBytes bytes = assemble(named);
  try {
    return resolved_keys(bytes.placeholders, detail::write_pieces(out, bytes.head, bytes.pieces, bytes.placeholders,
                                                                  detail::new_keys_only(fixed_keys(named))));
  } catch (const detail::KeysCollide&) {
    const ResolvedKeys keys = hash_deferred_keys(named);
    write_ptd(with_hashed_keys(named, keys), out);
    return keys;
  }
}

std::vector<uint8_t> serialize_ptd(const std::vector<NamedData>& named, ResolvedKeys* resolved) {
  PtdBytes bytes = assemble(named);
  std::vector<std::string> digests;
  try {
    std::vector<uint8_t> out = detail::concat_pieces(std::move(bytes.head), bytes.pieces, bytes.placeholders, &digests,
                                                     detail::new_keys_only(fixed_keys(named)));
    if (resolved) *resolved = resolved_keys(bytes.placeholders, digests);
    return out;
  } catch (const detail::KeysCollide&) {
    const ResolvedKeys keys = hash_deferred_keys(named);
    if (resolved) *resolved = keys;
    return serialize_ptd(with_hashed_keys(named, keys));
  }
}


void resolve_deferred_keys(Program& program, const ResolvedKeys& resolved) {
  if (resolved.empty()) return;
  std::vector<std::string> placeholders, digests;
  for (const auto& [p, d] : resolved) placeholders.push_back(p), digests.push_back(d);
  for (NamedData& n : program.named_data)
    if (auto it = resolved.find(n.key); n.deferred && it != resolved.end()) n.key = it->second, n.deferred = false;
  for (ExecutionPlan& plan : program.plans)
    for (BackendDelegate& d : plan.delegates) {
      std::vector<uint8_t> bytes(d.processed.size());
      d.processed.read(0, bytes);
      detail::replace_placeholders(bytes, placeholders, digests);
      d.processed = ir::TensorData::owned(std::move(bytes));
    }
}

PtdFile read_ptd_bytes(std::span<const uint8_t> bytes, std::shared_ptr<const void> keepalive) {
  if (reinterpret_cast<uintptr_t>(bytes.data()) % alignof(std::max_align_t) != 0) {  // aligned flatbuffer reads
    auto copy = std::make_shared<std::vector<std::max_align_t>>(
        (bytes.size() + sizeof(std::max_align_t) - 1) / sizeof(std::max_align_t));
    std::memcpy(copy->data(), bytes.data(), bytes.size());
    return read_ptd_bytes({reinterpret_cast<const uint8_t*>(copy->data()), bytes.size()}, copy);
  }
  if (bytes.size() < 8 + kHeaderLength || std::memcmp(bytes.data() + 4, "FT01", 4) != 0 ||
      std::memcmp(bytes.data() + 8, "FH01", 4) != 0)
    corrupt(fmt::format("not an ExecuTorch external data file (no FT01 / FH01 header in its first {} bytes)",
                        8 + kHeaderLength));
  if (get_le<uint32_t>(bytes.data() + 12) < kHeaderLength)
    corrupt(fmt::format("header length {} < {}", get_le<uint32_t>(bytes.data() + 12), kHeaderLength));
  const uint64_t fb_offset = get_le<uint64_t>(bytes.data() + 16), fb_size = get_le<uint64_t>(bytes.data() + 24);
  const uint64_t base = get_le<uint64_t>(bytes.data() + 32), data_size = get_le<uint64_t>(bytes.data() + 40);
  const uint64_t n = bytes.size();
  if (fb_offset > n || fb_size > n - fb_offset) corrupt(fmt::format("index [{}, +{}] exceeds file size {}", fb_offset, fb_size, n));
  if (base > n || data_size > n - base) corrupt(fmt::format("data [{}, +{}] exceeds file size {}", base, data_size, n));
  try {
    detail::verify_flatbuffer(bytes.first(fb_offset + fb_size), ft::FlatTensorIdentifier(),
                              [](flatbuffers::Verifier& v) { return ft::VerifyFlatTensorBuffer(v); }, "index");
  } catch (const SerializeError& e) {
    corrupt(e.what());
  }
  const ft::FlatTensor& root = *ft::GetFlatTensor(bytes.data());
  if (root.version() != kVersion) corrupt(fmt::format("version {} is not {}", root.version(), kVersion));
  if (!root.segments() || !root.named_data()) corrupt("its segments or named data are missing");
  PtdFile out;
  out.file_size = n;
  std::set<std::string> keys;
  for (const ft::NamedData* e : *root.named_data()) {
    const std::string key = detail::to_string(e->key());
    if (!keys.insert(key).second) corrupt(fmt::format("key '{}' appears twice", key));
    if (e->segment_index() >= root.segments()->size())
      corrupt(fmt::format("key '{}' refers to segment {} of {}", key, e->segment_index(), root.segments()->size()));
    const ft::DataSegment* s = root.segments()->Get(e->segment_index());
    if (s->offset() > data_size || s->size() > data_size - s->offset())
      corrupt(fmt::format("key '{}': segment [{}, +{}] exceeds the data ({} bytes)", key, s->offset(), s->size(), data_size));
    out.named_data.push_back({key, ir::TensorData::view(keepalive, bytes.data() + base + s->offset(), s->size())});
  }
  return out;
}

PtdFile read_ptd(const std::filesystem::path& path) {
  try {
    const detail::MappedFile file = detail::map_file(path);
    return read_ptd_bytes(file.bytes, file.keepalive);
  } catch (const SerializeError& e) {
    throw SerializeError(fmt::format("{}: {}", path.string(), e.what()));
  }
}

std::vector<NamedData> take_external_data(Program& program) {
  std::vector<NamedData> external, kept;
  for (NamedData& n : program.named_data) (is_io_names_key(n.key) ? kept : external).push_back(std::move(n));
  program.named_data = std::move(kept);
  return external;
}

void attach_external_data(PteFile& pte, PtdFile ptd, const std::string& name) {
  std::set<std::string> keys;
  for (const NamedData& n : pte.program.named_data) keys.insert(n.key);
  for (const NamedData& n : ptd.named_data)  // all checked before any is added
    if (keys.count(n.key))
      throw SerializeError(fmt::format("{}: key '{}' is in the program too (ExecuTorch's runtime refuses a key in both)",
                                       name, n.key));
  for (NamedData& n : ptd.named_data) pte.program.named_data.push_back(std::move(n));
}

std::filesystem::path default_ptd_path(const std::filesystem::path& pte) {
  std::filesystem::path p = pte;
  return p.replace_extension(".ptd");
}

PteFile read_program(const std::filesystem::path& pte, const std::vector<std::filesystem::path>& data) {
  PteFile program = read_pte(pte);
  std::vector<std::filesystem::path> files = data;
  std::error_code ec;
  if (files.empty() && pte.extension() != ".ptd" && std::filesystem::is_regular_file(default_ptd_path(pte), ec))
    files.push_back(default_ptd_path(pte));
  for (const auto& f : files) attach_external_data(program, read_ptd(f), f.string());
  return program;
}

}  // namespace vkc::serializer
