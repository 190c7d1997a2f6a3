#include "file_writer.h"

#include <fmt/format.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <thread>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "vkc/serializer/byte_progress.h"
#include "vkc/serializer/errors.h"
#include "vkc/serializer/sha256.h"

namespace vkc::serializer::detail {
namespace {

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

  int fd() const { return fd_; }

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

namespace {

// Derived and file-backed tensors go to the file this many bytes at a time.
constexpr uint64_t kChunk = uint64_t{2} << 20;

// A file this large is written behind: each window of kWindow bytes is handed to the disk once
// written (asynchronous writeback), and the window before it waited for and dropped from the page
// cache. The model's weights, read while the program is written, then stay in the page cache
// instead of being pushed out by the output's dirty pages, and little is left for the final sync.
constexpr uint64_t kWriteBehindBytes = uint64_t{1} << 30;
constexpr uint64_t kWindow = uint64_t{64} << 20;

// Below this many bytes of in-memory hashed pieces a second thread is not worth starting.
constexpr uint64_t kHashAsideBytes = uint64_t{1} << 20;

class WriteBehind {
 public:
  WriteBehind(int fd, bool on) : fd_(fd), on_(on) {}
  /// [offset, offset + n) was written (calls in increasing offsets).
  void wrote(uint64_t offset, uint64_t n) {
    if (!on_ || n == 0) return;
    if (offset != end_) flush();
    if (start_ == end_) start_ = end_ = offset;
    end_ = offset + n;
    if (end_ - start_ >= kWindow) flush();
  }
  ~WriteBehind() { flush(); }

 private:
  void flush() {
    if (start_ == end_) return;
    ::sync_file_range(fd_, static_cast<off_t>(start_), static_cast<off_t>(end_ - start_), SYNC_FILE_RANGE_WRITE);
    if (prev_end_ > prev_start_) {
      ::sync_file_range(fd_, static_cast<off_t>(prev_start_), static_cast<off_t>(prev_end_ - prev_start_),
                        SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE | SYNC_FILE_RANGE_WAIT_AFTER);
      ::posix_fadvise(fd_, static_cast<off_t>(prev_start_), static_cast<off_t>(prev_end_ - prev_start_), POSIX_FADV_DONTNEED);
    }
    prev_start_ = start_, prev_end_ = end_;
    start_ = end_;
  }

  int fd_;
  bool on_;
  uint64_t start_ = 0, end_ = 0, prev_start_ = 0, prev_end_ = 0;
};

bool streamed(const ir::TensorData& t) { return t.is_derived() || t.file_backed(); }

}  // namespace

std::vector<std::string> write_pieces(const std::filesystem::path& out, std::span<const uint8_t> head,
                                      const std::vector<Piece>& pieces, const std::vector<std::string>& placeholders,
                                      const AcceptDigests& accept) {
  TempFile file(out);
  // Where each piece goes. Padding comes from a block of zeros; a longer run of zeros (none is
  // longer than a segment's alignment today) is left as a hole of the sized file.
  static constexpr uint8_t kZeros[4096] = {};
  struct Span {
    const uint8_t* data;             // bytes in memory, or
    const ir::TensorData* tensor;    // a tensor written a chunk at a time
    uint64_t size, offset;
    int32_t hash_slot;
  };
  std::vector<Span> spans = {{head.data(), nullptr, head.size(), 0, -1}};
  uint64_t total = head.size();
  for (const Piece& piece : pieces) {
    if (piece.hash_slot >= 0 && size_t(piece.hash_slot) >= placeholders.size())
      throw SerializeError("a hashed piece has no placeholder");
    if (piece.tensor && streamed(*piece.tensor))
      spans.push_back({nullptr, piece.tensor, piece.size, total, piece.hash_slot});
    else if (piece.tensor && piece.size)
      spans.push_back({piece.tensor->data(), nullptr, piece.size, total, piece.hash_slot});
    else if (piece.size && piece.size <= sizeof kZeros)
      spans.push_back({kZeros, nullptr, piece.size, total, -1});
    total += piece.size;
  }
  // A span's bytes where they can be read whole: in memory, or a file view's mapping.
  const auto direct = [](const Span& s) -> const uint8_t* {
    return s.data ? s.data : s.tensor && !s.tensor->is_derived() ? s.tensor->data() : nullptr;
  };
  std::vector<Sha256Stream> hashes(placeholders.size());
  std::vector<char> aside(placeholders.size(), 0);  // slots hashed beside the write (below), not in it
  file.resize(total);
  uint64_t written = 0;
  for (const Span& s : spans) written += s.size;
  ByteCounter progress(written);
  // The span bytes within [from, to): contiguous runs of bytes in memory gathered into one pwritev
  // each; a streamed tensor read (computed, for a derived one) into `buffer` a chunk at a time, the
  // file pages of a file-backed one let go of once written.
  auto write_range = [&](uint64_t from, uint64_t to) {
    std::vector<iovec> run;
    std::vector<uint8_t> buffer;
    uint64_t run_offset = from, run_end = from;
    WriteBehind behind(file.fd(), total >= kWriteBehindBytes);
    auto flush_run = [&] {
      file.write_at(run, run_offset);
      behind.wrote(run_offset, run_end - run_offset);
      if (!run.empty()) progress.add(run_end - run_offset);
      run.clear();
    };
    for (const Span& s : spans) {
      const uint64_t b = std::max(from, s.offset), e = std::min(to, s.offset + s.size);
      if (b >= e) continue;
      // (A hashed span lies wholly in one range: its bytes are hashed in order.)
      if (s.hash_slot >= 0 && s.data && !aside[s.hash_slot])
        hashes[s.hash_slot].update({s.data + (b - s.offset), size_t(e - b)});
      if (s.tensor) {
        flush_run();
        for (uint64_t at = b; at < e; at += kChunk) {
          const uint64_t n = std::min(kChunk, e - at);
          iovec one{};
          if (s.tensor->is_derived()) {
            buffer.resize(std::max<uint64_t>(buffer.size(), n));
            s.tensor->read(at - s.offset, {buffer.data(), n});
            one = {buffer.data(), size_t(n)};
          } else {
            one = {const_cast<uint8_t*>(s.tensor->data() + (at - s.offset)), size_t(n)};
          }
          if (s.hash_slot >= 0 && !aside[s.hash_slot])
            hashes[s.hash_slot].update({static_cast<const uint8_t*>(one.iov_base), one.iov_len});
          file.write_at({&one, 1}, at);
          behind.wrote(at, n);
          progress.add(n);
          s.tensor->release(at - s.offset, n);
        }
        run_offset = run_end = e;
        continue;
      }
      if (b != run_end) {  // a hole: write what was gathered
        flush_run();
        run_offset = run_end = b;
      }
      run.push_back({const_cast<uint8_t*>(s.data + (b - s.offset)), size_t(e - b)});
      run_end = e;
    }
    flush_run();
  };
  // Once all is written: the digests replace their placeholders in the head and in the pieces
  // that name keys (a delegate's payload), which are written again.
  const auto finish = [&] {
    std::vector<std::string> digests;
    for (Sha256Stream& h : hashes) digests.push_back(h.hex());
    if (accept && !accept(digests)) throw KeysCollide();  // the temporary file goes with `file`
    if (!placeholders.empty()) {
      std::vector<uint8_t> patched(head.begin(), head.end());
      replace_placeholders(patched, placeholders, digests);
      iovec one{patched.data(), patched.size()};
      file.write_at({&one, 1}, 0);
      uint64_t at = head.size();
      for (const Piece& piece : pieces) {
        if (piece.holds_keys && piece.tensor && piece.size) {
          std::vector<uint8_t> bytes(piece.size);
          piece.tensor->read(0, bytes);
          replace_placeholders(bytes, placeholders, digests);
          iovec again{bytes.data(), bytes.size()};
          file.write_at({&again, 1}, at);
        }
        at += piece.size;
      }
    }
    file.commit();
    return digests;
  };
  // Megabytes of weights go through the page cache faster from two writers: the second takes
  // the bytes past the middle (past the piece there when pieces are hashed).
  const uint64_t kParallelBytes = uint64_t{64} << 20;
  if (total < kParallelBytes || std::thread::hardware_concurrency() < 2) {
    // One writer; with a second core, the slots whose bytes are all in memory or in a mapped
    // file (a small model's weights) are hashed beside it: half of their bytes on a second thread
    // while the file is written, the other half after (the hashing took twice the write's time
    // for mobilenet_v2). Only computed (derived) tensors are hashed as they are written.
    std::vector<uint64_t> slot_bytes(placeholders.size(), 0);
    std::vector<char> streamed_slot(placeholders.size(), 0);
    uint64_t in_memory = 0;
    for (const Span& s : spans) {
      if (s.hash_slot < 0) continue;
      if (!direct(s)) {
        streamed_slot[s.hash_slot] = 1;
        continue;
      }
      slot_bytes[s.hash_slot] += s.size;
      in_memory += s.size;
    }
    if (in_memory < kHashAsideBytes || std::thread::hardware_concurrency() < 2) {
      write_range(0, total);
      return finish();
    }
    // aside: 0 hashed in the write (a slot with a streamed tensor), 1 on this thread after the
    // write, 2 on the second thread; slots in order of their first span, the first half of the
    // bytes to the second thread.
    for (size_t k = 0; k < aside.size(); ++k) aside[k] = !streamed_slot[k] && slot_bytes[k] > 0;
    std::vector<char> placed(aside.size(), 0);
    uint64_t seen = 0;
    for (const Span& s : spans) {
      if (s.hash_slot < 0 || !aside[s.hash_slot] || placed[s.hash_slot]) continue;
      placed[s.hash_slot] = 1;
      if (seen < in_memory / 2) aside[s.hash_slot] = 2;
      seen += slot_bytes[s.hash_slot];
    }
    const auto hash_aside = [&](char which) {
      for (const Span& s : spans)
        if (s.hash_slot >= 0 && direct(s) && aside[s.hash_slot] == which)
          hashes[s.hash_slot].update({direct(s), size_t(s.size)});
    };
    std::thread second([&] { hash_aside(2); });
    std::exception_ptr error;
    try {
      write_range(0, total);
    } catch (...) {
      error = std::current_exception();
    }
    hash_aside(1);
    second.join();
    if (error) std::rethrow_exception(error);
    return finish();
  }
  uint64_t middle = total / 2;
  if (!placeholders.empty())
    for (const Span& s : spans)
      if (s.offset < middle && middle < s.offset + s.size) middle = s.offset + s.size;
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
  return finish();
}

AcceptDigests new_keys_only(std::vector<std::string> fixed) {
  return [fixed = std::move(fixed)](const std::vector<std::string>& digests) {
    std::unordered_map<std::string_view, int> seen;
    for (const std::string& k : fixed) seen.emplace(k, 0);
    for (const std::string& d : digests)
      if (!seen.emplace(d, 1).second) return false;
    return true;
  };
}

void replace_placeholders(std::span<uint8_t> bytes, const std::vector<std::string>& placeholders,
                          const std::vector<std::string>& digests) {
  if (placeholders.empty()) return;
  // Every placeholder starts with the same prefix (build_vk_graph's), the length of a digest.
  const std::string& first = placeholders.front();
  const size_t len = first.size(), prefix = std::min<size_t>(len, 13);
  std::unordered_map<std::string_view, size_t> slot;
  for (size_t i = 0; i < placeholders.size(); ++i) slot.emplace(placeholders[i], i);
  const std::string_view text(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  for (size_t at = text.find(std::string_view(first).substr(0, prefix)); at != std::string_view::npos && at + len <= text.size();
       at = text.find(std::string_view(first).substr(0, prefix), at + 1)) {
    const auto it = slot.find(text.substr(at, len));
    if (it == slot.end()) continue;
    std::memcpy(bytes.data() + at, digests[it->second].data(), len);
  }
}

std::vector<uint8_t> concat_pieces(std::vector<uint8_t> head, const std::vector<Piece>& pieces,
                                   const std::vector<std::string>& placeholders, std::vector<std::string>* digests,
                                   const AcceptDigests& accept) {
  std::vector<Sha256Stream> hashes(placeholders.size());
  std::vector<std::pair<size_t, size_t>> keyed = {{0, head.size()}};  // byte ranges that may name keys
  for (const Piece& piece : pieces) {
    const size_t at = head.size();
    head.resize(at + piece.size, 0);
    if (piece.tensor) piece.tensor->read(0, {head.data() + at, size_t(piece.size)});
    if (piece.hash_slot >= 0) {
      if (size_t(piece.hash_slot) >= placeholders.size()) throw SerializeError("a hashed piece has no placeholder");
      hashes[piece.hash_slot].update({head.data() + at, size_t(piece.size)});
    }
    if (piece.holds_keys) keyed.emplace_back(at, piece.size);
  }
  std::vector<std::string> hex;
  for (Sha256Stream& h : hashes) hex.push_back(h.hex());
  if (accept && !accept(hex)) throw KeysCollide();
  if (!placeholders.empty())
    for (const auto& [at, n] : keyed) replace_placeholders({head.data() + at, n}, placeholders, hex);
  if (digests) *digests = std::move(hex);
  return head;
}


}  // namespace vkc::serializer::detail
