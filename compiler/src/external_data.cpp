#include "external_data.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <onnx/onnx_pb.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>

#include "vkc/compiler/onnx_importer.h"

namespace vkc::compiler::detail {

namespace fs = std::filesystem;

/// A read-only private mapping of a whole file (none for an empty file).
class MappedFile {
 public:
  MappedFile(const fs::path& path, std::string_view what) {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0)
      throw ImportError(
          fmt::format("{}: cannot open external data file '{}': {}", what, path.string(), std::strerror(errno)));
    struct stat st {};
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
      ::close(fd);
      throw ImportError(fmt::format("{}: external data '{}' is not a regular file", what, path.string()));
    }
    size_ = static_cast<uint64_t>(st.st_size);
    if (size_ > 0) {
      void* p = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
      int err = errno;
      if (p == MAP_FAILED) {
        ::close(fd);
        throw ImportError(fmt::format("{}: cannot map '{}': {}", what, path.string(), std::strerror(err)));
      }
      data_ = static_cast<const uint8_t*>(p);
      fd_ = fd;  // kept for reads that should not fault the mapping in (TensorData::read_file)
    } else {
      ::close(fd);
    }
  }
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  ~MappedFile() {
    if (data_) ::munmap(const_cast<uint8_t*>(data_), size_);
    if (fd_ >= 0) ::close(fd_);
  }

  const uint8_t* data() const { return data_; }
  int fd() const { return fd_; }
  uint64_t size() const { return size_; }

 private:
  const uint8_t* data_ = nullptr;
  uint64_t size_ = 0;
  int fd_ = -1;
};

namespace {

std::optional<uint64_t> parse_u64(const std::string& s) {
  uint64_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || s.empty()) return std::nullopt;
  return v;
}

}  // namespace

ExternalData::ExternalData(const fs::path& model_dir) {
  if (model_dir.empty()) return;
  std::error_code ec;
  dir_ = fs::weakly_canonical(fs::absolute(model_dir), ec);
  if (ec) throw ImportError(fmt::format("cannot resolve model directory '{}': {}", model_dir.string(), ec.message()));
}

fs::path ExternalData::resolve(const std::string& location, std::string_view what) const {
  if (dir_.empty())
    throw ImportError(
        fmt::format("{}: external data '{}' cannot be resolved: the model was given as bytes without a base directory",
                    what, location));
  if (location.empty()) throw ImportError(fmt::format("{}: external data has no location", what));
  if (location.find('\0') != std::string::npos)
    throw ImportError(fmt::format("{}: external data location contains a NUL character", what));
  fs::path rel(location);
  if (rel.is_absolute() || rel.has_root_name() || rel.has_root_directory())
    throw ImportError(
        fmt::format("{}: external data location '{}' is an absolute path; it must be relative to the model directory",
                    what, location));
  // weakly_canonical resolves '..' and every symlink of the existing prefix, so the prefix
  // test below also catches links that point out of the model directory.
  std::error_code ec;
  fs::path file = fs::weakly_canonical(dir_ / rel, ec);
  if (ec)
    throw ImportError(fmt::format("{}: cannot resolve external data location '{}': {}", what, location, ec.message()));
  fs::path inside = file.lexically_relative(dir_);
  if (inside.empty() || *inside.begin() == "..")
    throw ImportError(fmt::format("{}: external data location '{}' escapes the model directory", what, location));
  return file;
}

std::shared_ptr<const MappedFile> ExternalData::map(const fs::path& file, std::string_view what) {
  auto it = files_.find(file);
  if (it != files_.end()) return it->second;
  std::error_code ec;
  if (!fs::exists(file, ec))
    throw ImportError(fmt::format("{}: external data file '{}' does not exist", what, file.string()));
  auto mapped = std::make_shared<const MappedFile>(file, what);
  files_.emplace(file, mapped);
  return mapped;
}

ir::TensorData ExternalData::load(const onnx::TensorProto& t, uint64_t nbytes, size_t element_size,
                                  std::string_view what) {
  std::string location;
  std::optional<uint64_t> offset, length;
  for (const auto& entry : t.external_data()) {
    if (entry.key() == "location") {
      location = entry.value();
    } else if (entry.key() == "offset" || entry.key() == "length") {
      auto v = parse_u64(entry.value());
      if (!v)
        throw ImportError(
            fmt::format("{}: external data {} '{}' is not a non-negative integer", what, entry.key(), entry.value()));
      (entry.key() == "offset" ? offset : length) = v;
    }
  }
  const bool in_place = model_file_ && location == model_location_;
  auto file = in_place ? model_file_ : map(resolve(location, what), what);
  uint64_t begin = offset.value_or(0);
  uint64_t count = length.value_or(nbytes);
  if (count != nbytes && in_place)
    throw ImportError(fmt::format("{}: raw_data has {} bytes but its type and shape need {}", what, count, nbytes));
  if (count != nbytes)
    throw ImportError(
        fmt::format("{}: external data length {} does not match its type and shape ({} bytes)", what, count, nbytes));
  if (begin > file->size() || count > file->size() - begin)
    throw ImportError(fmt::format("{}: external data offset {} + length {} lies beyond the end of '{}' ({} bytes)",
                                  what, begin, count, location, file->size()));
  const uint8_t* bytes = file->data() + begin;
  const ir::TensorData view = ir::TensorData::file_view(file, bytes, count, file->fd(), begin);
  // Kernels read elements in place: data at an offset that is no multiple of the element size is
  // copied, read from the file (pread: the mapping's pages are not touched, so they do not weigh on
  // the process's memory beside the copy; a model's in-place raw_data mostly lies so). From
  // kStreamedCopyBytes up the copy is made a range at a time by the readers that stream (hashing,
  // writing) and whole only for a reader of all of it (data()).
  constexpr uint64_t kStreamedCopyBytes = uint64_t{16} << 20;
  if (element_size > 1 && reinterpret_cast<uintptr_t>(bytes) % element_size != 0) {
    if (count >= kStreamedCopyBytes)
      return ir::TensorData::derived(count, 1, [view](uint64_t first, uint64_t n, uint8_t* out) {
        view.read_file(first, {out, static_cast<size_t>(n)});
      });
    std::vector<uint8_t> copy(count);
    view.read_file(0, copy);
    return ir::TensorData::owned(std::move(copy));
  }
  return view;
}

std::span<const uint8_t> ExternalData::adopt_model_file(const fs::path& file, const std::string& location) {
  std::error_code ec;
  const fs::path real = fs::canonical(file, ec);
  model_file_ = std::make_shared<const MappedFile>(ec ? file : real, "the model");
  model_location_ = location;
  return {model_file_->data(), static_cast<size_t>(model_file_->size())};
}

std::vector<std::shared_ptr<const void>> ExternalData::mappings() const {
  std::vector<std::shared_ptr<const void>> out;
  if (model_file_) out.push_back(model_file_);
  for (const auto& [path, file] : files_) out.push_back(file);
  return out;
}

}  // namespace vkc::compiler::detail
