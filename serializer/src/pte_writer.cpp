// .pte layout (see docs: ExecuTorch formats §1.2):
//   [ET12 flatbuffer with the 32-byte eh00 header spliced in at byte 8]
//   [zeros up to segment_base_offset = align_up(program_size, 128)]
//   [segment 0: constants][pad][delegate payloads...][pad][named data...]
// Every segment starts 128-aligned relative to segment_base_offset.
#include "vkc/serializer/pte_writer.h"

#include <fmt/format.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <climits>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <map>
#include <span>
#include <thread>
#include <utility>

#include "le_bytes.h"
#include "program_checks.h"
#include "program_codec.h"
#include "vkc/serializer/errors.h"

namespace vkc::serializer {
namespace {

using detail::align_up;
using detail::put_le;

constexpr uint64_t kSegmentAlignment = 128;
constexpr uint64_t kConstantAlignment = 16;
constexpr uint64_t kExtendedHeaderSize = 32;

/// A run of output bytes: `size` bytes at `data`, or `size` zeros if null.
struct Piece {
  const uint8_t* data;
  uint64_t size;
};

/// The whole file: `head` (program + padding) then the segment pieces, which
/// point into the Program's TensorData.
struct PteBytes {
  std::vector<uint8_t> head;
  std::vector<Piece> segment_pieces;
};

class SegmentPlanner {
 public:
  detail::SegmentPlan plan;
  std::vector<Piece> pieces;
  uint64_t data_size = 0;

  uint32_t add(const std::vector<Piece>& segment) {
    const uint64_t offset = align_up(data_size, kSegmentAlignment);
    if (offset > data_size) pieces.push_back({nullptr, offset - data_size});
    uint64_t size = 0;
    for (const Piece& p : segment) size += p.size;
    pieces.insert(pieces.end(), segment.begin(), segment.end());
    plan.segments.push_back({offset, size});
    data_size = offset + size;
    return uint32_t(plan.segments.size() - 1);
  }
};

bool same_bytes(const ir::TensorData& a, const ir::TensorData& b) {
  return a.size() == b.size() && (a.size() == 0 || std::memcmp(a.data(), b.data(), a.size()) == 0);
}

SegmentPlanner plan_segments(const Program& program) {
  SegmentPlanner planner;
  // Segment 0: constants, each 16-aligned; offsets[0] is the reserved slot.
  std::vector<Piece> constants;
  planner.plan.constant_offsets.push_back(0);
  uint64_t offset = 0;
  for (size_t i = 0; i < program.constants.size(); ++i) {
    const ir::TensorData& c = program.constants[i];
    planner.plan.constant_offsets.push_back(offset);
    constants.push_back({c.data(), c.size()});
    const uint64_t padded = align_up(c.size(), kConstantAlignment);
    if (i + 1 < program.constants.size() && padded > c.size()) constants.push_back({nullptr, padded - c.size()});
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
      if (same == payloads.end())
        same = payloads.insert(payloads.end(),
                               std::pair(&d.processed, planner.add({{d.processed.data(), d.processed.size()}})));
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
    planner.plan.named_data.emplace_back(named.key, planner.add({{named.data.data(), named.data.size()}}));
  }
  return planner;
}

PteBytes assemble(const Program& program) {
  for (const ExecutionPlan& plan : program.plans)
    detail::check_plan(plan, program.constants.size(), "invalid Program: ");
  SegmentPlanner planner = plan_segments(program);
  std::vector<uint8_t> fb = detail::encode_program(program, planner.plan);
  if (planner.data_size == 0) return {std::move(fb), {}};  // no segment bytes: no extended header

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
  return {std::move(head), std::move(planner.pieces)};
}

[[noreturn]] void io_error(const std::string& what, const std::filesystem::path& path) {
  throw SerializeError(fmt::format("cannot {} '{}': {}", what, path.string(), std::strerror(errno)));
}

/// A temporary file beside the destination, removed unless committed.
class TempFile {
 public:
  explicit TempFile(const std::filesystem::path& out) : out_(out) {
    std::string pattern = out.string() + ".tmp-XXXXXX";
    fd_ = ::mkstemp(pattern.data());
    if (fd_ < 0) io_error("create a temporary file for", out);
    path_ = pattern;
    ::fchmod(fd_, 0644);
  }
  ~TempFile() {
    if (fd_ >= 0) ::close(fd_);
    if (!path_.empty()) ::unlink(path_.c_str());
  }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;

  /// Sets the file's size; what is never written reads as zeros (a hole).
  void resize(uint64_t size) {
    if (::ftruncate(fd_, static_cast<off_t>(size)) != 0) io_error("write", path_);
  }

  /// Writes the buffers `iov` back to back from `offset`; safe from several threads at once
  /// (disjoint ranges). Consumes `iov`.
  void write_at(std::span<iovec> iov, uint64_t offset) const {
    while (!iov.empty()) {
      const int count = static_cast<int>(std::min<size_t>(iov.size(), IOV_MAX));
      const ssize_t n = ::pwritev(fd_, iov.data(), count, static_cast<off_t>(offset));
      if (n < 0 && errno == EINTR) continue;
      if (n == 0) errno = EIO;
      if (n <= 0) io_error("write", path_);
      offset += uint64_t(n);
      for (size_t left = size_t(n); left > 0;) {  // drop what was written
        const size_t step = std::min(left, iov.front().iov_len);
        iov.front().iov_base = static_cast<uint8_t*>(iov.front().iov_base) + step;
        iov.front().iov_len -= step;
        left -= step;
        if (iov.front().iov_len == 0) iov = iov.subspan(1);
      }
      while (!iov.empty() && iov.front().iov_len == 0) iov = iov.subspan(1);
    }
  }

  void commit() {
    const int fd = std::exchange(fd_, -1);
    if (::close(fd) != 0) io_error("write", path_);
    // Renaming over an existing file makes ext4 (auto_da_alloc) start writing the new one back at
    // once: 40-80 ms for a 14 MB program. The old file goes first; every byte of the new one is
    // already written, so only a failing rename (same folder) could now leave no output.
    if (::unlink(out_.c_str()) != 0 && errno != ENOENT) io_error("replace", out_);
    if (::rename(path_.c_str(), out_.c_str()) != 0) io_error("rename a temporary file to", out_);
    path_.clear();
  }

 private:
  std::filesystem::path out_, path_;
  int fd_ = -1;
};

}  // namespace

void write_pte(const Program& program, const std::filesystem::path& out) {
  const PteBytes bytes = assemble(program);  // fails before any file exists
  TempFile file(out);
  // Where each piece goes. Padding comes from a block of zeros; a longer run of zeros (none is
  // longer than a segment's alignment today) is left as a hole of the sized file.
  static constexpr uint8_t kZeros[4096] = {};
  struct Span {
    const uint8_t* data;
    uint64_t size, offset;
  };
  std::vector<Span> spans = {{bytes.head.data(), bytes.head.size(), 0}};
  uint64_t total = bytes.head.size();
  for (const Piece& piece : bytes.segment_pieces) {
    if (piece.size && (piece.data || piece.size <= sizeof kZeros))
      spans.push_back({piece.data ? piece.data : kZeros, piece.size, total});
    total += piece.size;
  }
  file.resize(total);
  // The span bytes within [from, to), contiguous runs gathered into one pwritev each.
  auto write_range = [&](uint64_t from, uint64_t to) {
    std::vector<iovec> run;
    uint64_t run_offset = from, run_end = from;
    for (const Span& s : spans) {
      const uint64_t b = std::max(from, s.offset), e = std::min(to, s.offset + s.size);
      if (b >= e) continue;
      if (b != run_end) {  // a hole: write what was gathered
        file.write_at(run, run_offset);
        run.clear();
        run_offset = b;
      }
      run.push_back({const_cast<uint8_t*>(s.data + (b - s.offset)), size_t(e - b)});
      run_end = e;
    }
    file.write_at(run, run_offset);
  };
  // Megabytes of weights go through the page cache faster from two writers: the second takes
  // the bytes past the middle.
  const uint64_t kParallelBytes = uint64_t{64} << 20;
  if (total < kParallelBytes || std::thread::hardware_concurrency() < 2) {
    write_range(0, total);
    file.commit();
    return;
  }
  const uint64_t middle = total / 2;
  std::exception_ptr second_error;
  std::thread second([&] {
    try {
      write_range(middle, total);
    } catch (...) {
      second_error = std::current_exception();
    }
  });
  std::exception_ptr first_error;
  try {
    write_range(0, middle);
  } catch (...) {
    first_error = std::current_exception();
  }
  second.join();
  if (first_error) std::rethrow_exception(first_error);
  if (second_error) std::rethrow_exception(second_error);
  file.commit();
}

std::vector<uint8_t> serialize_pte(const Program& program) {
  PteBytes bytes = assemble(program);
  std::vector<uint8_t> out = std::move(bytes.head);
  for (const Piece& piece : bytes.segment_pieces) {
    if (piece.data)
      out.insert(out.end(), piece.data, piece.data + piece.size);
    else
      out.resize(out.size() + piece.size, 0);
  }
  return out;
}

}  // namespace vkc::serializer
