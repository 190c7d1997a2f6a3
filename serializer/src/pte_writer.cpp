// .pte layout (see docs: ExecuTorch formats §1.2):
//   [ET12 flatbuffer with the 32-byte eh00 header spliced in at byte 8]
//   [zeros up to segment_base_offset = align_up(program_size, 128)]
//   [segment 0: constants][pad][delegate payloads...][pad][named data...]
// Every segment starts 128-aligned relative to segment_base_offset.
#include "vkc/serializer/pte_writer.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <utility>

#include "file_writer.h"
#include "le_bytes.h"
#include "program_checks.h"
#include "program_codec.h"
#include "vkc/serializer/errors.h"
#include "vkc/serializer/ptd.h"

namespace vkc::serializer {
namespace {

using detail::align_up;
using detail::put_le;

constexpr uint64_t kSegmentAlignment = 128;
constexpr uint64_t kConstantAlignment = 16;
constexpr uint64_t kExtendedHeaderSize = 32;

using detail::Piece;

/// The whole file: `head` (program + padding) then the segment pieces, which
/// point into the Program's TensorData; the deferred keys the writer resolves (Piece).
struct PteBytes {
  std::vector<uint8_t> head;
  std::vector<Piece> segment_pieces;
  std::vector<std::string> placeholders;
};

class SegmentPlanner {
 public:
  detail::SegmentPlan plan;
  std::vector<Piece> pieces;
  uint64_t data_size = 0;

  uint32_t add(const std::vector<Piece>& segment) {
    const uint64_t offset = align_up(data_size, kSegmentAlignment);
    if (offset > data_size) pieces.push_back(Piece::zeros(offset - data_size));
    uint64_t size = 0;
    for (const Piece& p : segment) size += p.size;
    pieces.insert(pieces.end(), segment.begin(), segment.end());
    plan.segments.push_back({offset, size});
    data_size = offset + size;
    return uint32_t(plan.segments.size() - 1);
  }
};

bool same_bytes(const ir::TensorData& a, const ir::TensorData& b) {
  return a.size() == b.size() && ir::equal_bytes(a, b);
}

SegmentPlanner plan_segments(const Program& program, std::vector<std::string>& placeholders) {
  SegmentPlanner planner;
  // Segment 0: constants, each 16-aligned; offsets[0] is the reserved slot.
  std::vector<Piece> constants;
  planner.plan.constant_offsets.push_back(0);
  uint64_t offset = 0;
  for (size_t i = 0; i < program.constants.size(); ++i) {
    const ir::TensorData& c = program.constants[i];
    planner.plan.constant_offsets.push_back(offset);
    constants.push_back(Piece::of(c));
    const uint64_t padded = align_up(c.size(), kConstantAlignment);
    if (i + 1 < program.constants.size() && padded > c.size()) constants.push_back(Piece::zeros(padded - c.size()));
    offset += padded;
  }
  planner.add(constants);
  // Delegate payloads, one segment per distinct byte string.
  std::vector<std::pair<const ir::TensorData*, uint32_t>> payloads;
  for (const ExecutionPlan& plan : program.plans) {
    auto& segments = planner.plan.delegate_segments.emplace_back();
    for (const BackendDelegate& d : plan.delegates) {
      auto same = std::find_if(payloads.begin(), payloads.end(),
                               [&](const auto& p) { return same_bytes(*p.first, d.processed); });
      if (same == payloads.end()) {
        Piece payload = Piece::of(d.processed);
        payload.holds_keys = true;  // its constants' named keys
        same = payloads.insert(payloads.end(), std::pair(&d.processed, planner.add({payload})));
      }
      segments.push_back(same->second);
    }
  }
  // Named data, one segment per distinct key.
  std::map<std::string, const ir::TensorData*> seen;
  for (const NamedData& named : program.named_data) {
    auto [it, inserted] = seen.emplace(named.key, &named.data);
    if (!inserted) {
      if (!same_bytes(*it->second, named.data))
        throw SerializeError(fmt::format("invalid Program: named data key '{}' is given twice with different bytes",
                                         named.key));
      continue;
    }
    Piece piece = Piece::of(named.data);
    if (named.deferred) {  // hashed as it is written
      piece.hash_slot = static_cast<int32_t>(placeholders.size());
      placeholders.push_back(named.key);
    }
    planner.plan.named_data.emplace_back(named.key, planner.add({piece}));
  }
  return planner;
}

PteBytes assemble(const Program& program) {
  for (const ExecutionPlan& plan : program.plans)
    detail::check_plan(plan, program.constants.size(), "invalid Program: ");
  std::vector<std::string> placeholders;
  SegmentPlanner planner = plan_segments(program, placeholders);
  std::vector<uint8_t> fb = detail::encode_program(program, planner.plan);
  if (planner.data_size == 0) return {std::move(fb), {}, {}};  // no segment bytes: no extended header

  // Splice the eh00 header in after the root offset and identifier; the root
  // offset grows by the header size. 32 is a multiple of every force_align
  // in the schema, so the flatbuffer's internal alignment is preserved.
  const uint64_t program_size = kExtendedHeaderSize + fb.size();
  const uint64_t segment_base = align_up(program_size, kSegmentAlignment);
  std::vector<uint8_t> head;
  head.reserve(segment_base);
  put_le<uint32_t>(head, detail::get_le<uint32_t>(fb.data()) + kExtendedHeaderSize);
  head.insert(head.end(), fb.begin() + 4, fb.begin() + 8);
  head.insert(head.end(), {'e', 'h', '0', '0'});
  put_le<uint32_t>(head, kExtendedHeaderSize);
  put_le<uint64_t>(head, program_size);
  put_le<uint64_t>(head, segment_base);
  put_le<uint64_t>(head, planner.data_size);
  head.insert(head.end(), fb.begin() + 8, fb.end());
  head.resize(segment_base, 0);
  return {std::move(head), std::move(planner.pieces), std::move(placeholders)};
}

// Keys hashed as written must be new (KeysCollide otherwise): distinct, and none a key already named.
detail::AcceptDigests accept_for(const Program& program) {
  std::vector<std::string> fixed;
  for (const NamedData& n : program.named_data)
    if (!n.deferred) fixed.push_back(n.key);
  return detail::new_keys_only(std::move(fixed));
}

// The program with its deferred keys hashed first (equal constants then one entry).
Program with_hashed_keys(const Program& program) {
  Program copy = program;
  resolve_deferred_keys(copy, hash_deferred_keys(program.named_data));
  return copy;
}

}  // namespace

void write_pte(const Program& program, const std::filesystem::path& out) {
  const PteBytes bytes = assemble(program);  // fails before any file exists
  try {
    detail::write_pieces(out, bytes.head, bytes.segment_pieces, bytes.placeholders, accept_for(program));
  } catch (const detail::KeysCollide&) {
    write_pte(with_hashed_keys(program), out);
  }
}

std::vector<uint8_t> serialize_pte(const Program& program) {
  PteBytes bytes = assemble(program);
  try {
    return detail::concat_pieces(std::move(bytes.head), bytes.segment_pieces, bytes.placeholders, nullptr,
                                 accept_for(program));
  } catch (const detail::KeysCollide&) {
    return serialize_pte(with_hashed_keys(program));
  }
}

}  // namespace vkc::serializer
